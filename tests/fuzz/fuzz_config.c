/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target for the pod-map loader (src/podmap/config.h): any
 * bytes as a pod map. Besides memory errors and undefined behaviour under
 * the sanitizers, it aborts when the loader breaks its contract: a refused
 * map leaves an error message and nothing to free, and is refused just the
 * same without a struct pc_error; an accepted one is fully valid (every pod
 * on a declared uplink, prefixes with their host bits zero, ids found again
 * by name) and has one canonical form and digest, the same on every load.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "podmap/config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static FILE *
devnull(void)
{
	static FILE *f;

	if (f == NULL && (f = fopen("/dev/null", "w")) == NULL)
		abort();
	return f;
}

static void
check_refused(const struct pc_config *cfg, const struct pc_error *err, const char *text,
	      size_t size)
{
	static const struct pc_config zero;
	struct pc_config again;

	if (memcmp(cfg, &zero, sizeof(zero)) != 0)
		abort();
	if (err->msg[0] == '\0' || memchr(err->msg, '\0', sizeof(err->msg)) == NULL ||
	    memchr(err->line_text, '\0', sizeof(err->line_text)) == NULL)
		abort();
	pc_error_print(err, devnull());
	if (pc_config_load_buffer("fuzz.yaml", text, size, &again, NULL) != -1 ||
	    memcmp(&again, &zero, sizeof(zero)) != 0)
		abort();
}

static void
check_prefix(const struct pc_prefix *p)
{
	unsigned bits = p->family == 4 ? 32 : 128, i;

	if ((p->family != 4 && p->family != 6) || p->len > bits)
		abort();
	for (i = p->len; i < 128; i++)
		if (p->addr[i / 8] & (0x80 >> (i % 8)))
			abort();
}

static void
check_accepted(const struct pc_config *cfg, const char *text, size_t size)
{
	uint8_t d1[PC_DIGEST_LEN], d2[PC_DIGEST_LEN];
	struct pc_config again;
	struct pc_error err;
	size_t n, i, k;
	char *canon;

	if (cfg->npods == 0 || cfg->nuplinks == 0 || cfg->npods > PC_MAX_PODS ||
	    cfg->nuplinks > PC_MAX_UPLINKS || cfg->window_ns == 0)
		abort();
	for (i = 0; i < cfg->nuplinks; i++)
		if (pc_config_find_uplink(cfg, cfg->uplinks[i].name) != (int)i)
			abort();
	for (i = 0; i < cfg->npods; i++) {
		const struct pc_pod *p = &cfg->pods[i];

		if (pc_config_find_pod(cfg, p->id) != (int)i || p->uplink >= cfg->nuplinks ||
		    p->nprefixes > PC_MAX_PREFIXES || p->limits.cap_bps == 0)
			abort();
		for (k = 0; k < p->nprefixes; k++)
			check_prefix(&p->prefixes[k]);
	}

	n = pc_config_canonical(cfg, NULL, 0);
	canon = malloc(n + 1);
	if (canon == NULL)
		abort();
	if (pc_config_canonical(cfg, canon, n + 1) != n || strlen(canon) != n)
		abort();
	free(canon);

	pc_config_digest(cfg, d1);
	if (pc_config_load_buffer("again.yaml", text, size, &again, &err) != 0)
		abort();
	pc_config_digest(&again, d2);
	if (memcmp(d1, d2, sizeof(d1)) != 0)
		abort();
	pc_config_free(&again);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pc_config cfg;
	struct pc_error err;

	if (sodium_init() < 0)
		abort();
	if (pc_config_load_buffer("fuzz.yaml", (const char *)data, size, &cfg, &err) != 0) {
		check_refused(&cfg, &err, (const char *)data, size);
		return 0;
	}
	check_accepted(&cfg, (const char *)data, size);
	pc_config_free(&cfg);
	return 0;
}
