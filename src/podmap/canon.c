/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The canonical form of a loaded pod map and its digest: what is enforced
 * and nothing else, in base units and a fixed order, so that two maps
 * declaring the same thing have the same bytes. docs/config.md documents
 * it byte for byte: a verifier recomputes the digest from it, so any change
 * here is a change of wire format and of CANONICAL_VERSION.
 */

#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "config.h"

#include "config_impl.h"

#define CANONICAL_VERSION	"podcap-podmap-v1"

/* Where canonical lines go: a buffer, a hash, or both. */
struct sink {
	char *buf;
	size_t len;
	size_t pos;
	crypto_generichash_state *hash;
};

static void emit(struct sink *s, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void
emit(struct sink *s, const char *fmt, ...)
{
	char line[PC_DEVARGS_LEN + 64];
	va_list ap;
	int n;
	size_t k;

	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	k = (size_t)n < sizeof(line) ? (size_t)n : sizeof(line) - 1;
	if (s->hash != NULL)
		crypto_generichash_update(s->hash, (const unsigned char *)line, k);
	if (s->buf != NULL && s->pos < s->len) {
		size_t room = s->len - s->pos;

		memcpy(s->buf + s->pos, line, k < room ? k : room);
	}
	s->pos += k;
}

static int
cmp_uplink_ptr(const void *a, const void *b)
{
	const struct pc_uplink *const *x = a, *const *y = b;

	return strcmp((*x)->name, (*y)->name);
}

static int
cmp_pod_ptr(const void *a, const void *b)
{
	const struct pc_pod *const *x = a, *const *y = b;

	return strcmp((*x)->id, (*y)->id);
}

static int
cmp_prefix_ptr(const void *a, const void *b)
{
	const struct pc_prefix *const *x = a, *const *y = b;

	return cfg_cmp_prefix(*x, *y);
}

static const char *
mode_name(enum pc_mode m)
{
	return m == PC_MODE_POLICE ? "police" : "shape";
}

static void
emit_pod(struct sink *s, const struct pc_config *cfg, const struct pc_pod *p)
{
	const struct pc_prefix *pfx[PC_MAX_PREFIXES];
	char text[64];
	unsigned i;

	emit(s, "pod %s\n", p->id);
	emit(s, "gpus %u\n", p->gpus);
	emit(s, "uplink %s\n", cfg->uplinks[p->uplink].name);
	emit(s, "cap_bps %" PRIu64 "\n", p->limits.cap_bps);
	emit(s, "burst_bytes %" PRIu64 "\n", p->limits.burst_bytes);
	emit(s, "mode %s\n", mode_name(p->limits.mode));
	emit(s, "queue_delay_ns %" PRIu64 "\n", p->limits.queue_delay_ns);
	/* only when not the default, so that maps without the key keep their digests */
	if (p->limits.promise == PC_PROMISE_WINDOW)
		emit(s, "promise window\n");
	for (i = 0; i < p->nprefixes; i++)
		pfx[i] = &p->prefixes[i];
	qsort(pfx, p->nprefixes, sizeof(pfx[0]), cmp_prefix_ptr);
	for (i = 0; i < p->nprefixes; i++) {
		cfg_format_prefix(pfx[i], text, sizeof(text));
		emit(s, "prefix %s\n", text);
	}
}

/* A PCI address in its full form, so that 3b:00.0 and 0000:3B:00.0 agree. */
static void
emit_port(struct sink *s, const char *key, const char *devargs)
{
	char dev[PC_DEVARGS_LEN];
	size_t n = cfg_port_device(devargs, dev, sizeof(dev));

	emit(s, "%s %s%s\n", key, dev, devargs + n);
}

/* The auditor keys, as verifier key lines in byte order: only when set, so older digests stand. */
static bool
emit_auditor_keys(struct sink *s, const struct pc_config *cfg)
{
	char line[PC_MAX_AUDITOR_KEYS][256], tmp[256];
	unsigned i, j, n = cfg->nauditor_keys;

	if (n > PC_MAX_AUDITOR_KEYS)
		return false;
	for (i = 0; i < n; i++) {
		if (pc_verifier_key_format(&cfg->auditor_keys[i], line[i], sizeof(line[i])) != 0)
			return false;
		for (j = i; j > 0 && strcmp(line[j - 1], line[j]) > 0; j--) {
			memcpy(tmp, line[j], sizeof(tmp));
			memcpy(line[j], line[j - 1], sizeof(tmp));
			memcpy(line[j - 1], tmp, sizeof(tmp));
		}
	}
	for (i = 0; i < n; i++)
		emit(s, "auditor_key %s\n", line[i]);
	return true;
}

/* Returns false for a configuration the loader could not have produced. */
static bool
emit_canonical(struct sink *s, const struct pc_config *cfg)
{
	const struct pc_uplink *up[PC_MAX_UPLINKS];
	const struct pc_pod **pod;
	unsigned i;

	if (cfg->nuplinks > PC_MAX_UPLINKS || cfg->npods > PC_MAX_PODS)
		return false;
	for (i = 0; i < cfg->npods; i++)
		if (cfg->pods[i].uplink >= cfg->nuplinks ||
		    cfg->pods[i].nprefixes > PC_MAX_PREFIXES)
			return false;
	/* 128 KiB of pointers at PC_MAX_PODS: too much for a thread's stack */
	pod = calloc(cfg->npods ? cfg->npods : 1, sizeof(*pod));
	if (pod == NULL)
		return false;
	for (i = 0; i < cfg->nuplinks; i++)
		up[i] = &cfg->uplinks[i];
	for (i = 0; i < cfg->npods; i++)
		pod[i] = &cfg->pods[i];
	qsort(up, cfg->nuplinks, sizeof(up[0]), cmp_uplink_ptr);
	qsort(pod, cfg->npods, sizeof(pod[0]), cmp_pod_ptr);

	emit(s, "%s\n", CANONICAL_VERSION);
	emit(s, "appliance %s\n", cfg->appliance_id);
	/* only when set: maps with the podcap/<id> origin keep their digests */
	if (cfg->origin[0] != '\0')
		emit(s, "origin %s\n", cfg->origin);
	/* only a tap says so: every shaper's pod map keeps the digest it had */
	if (cfg->role != PC_ROLE_SHAPER)
		emit(s, "role %s\n", cfg->role == PC_ROLE_POD_TAP ? "pod-tap" : "fabric-tap");
	emit(s, "window_ns %" PRIu64 "\n", cfg->window_ns);
	emit(s, "max_frame %" PRIu32 "\n", cfg->max_frame);
	if (!emit_auditor_keys(s, cfg)) {
		free(pod);
		return false;
	}
	for (i = 0; i < cfg->nuplinks; i++) {
		emit(s, "uplink %s\n", up[i]->name);
		emit_port(s, "pod_port", up[i]->pod_port);
		emit_port(s, "fabric_port", up[i]->fabric_port);
		/* only when set: the maps of one worker per uplink keep their digests */
		if (up[i]->workers > 1)
			emit(s, "workers %u\n", up[i]->workers);
	}
	for (i = 0; i < cfg->npods; i++)
		emit_pod(s, cfg, pod[i]);
	free(pod);
	return true;
}

size_t
pc_config_canonical(const struct pc_config *cfg, char *buf, size_t len)
{
	struct sink s = { buf, len, 0, NULL };

	if (!emit_canonical(&s, cfg))
		s.pos = 0;
	if (buf != NULL && len > 0)
		buf[s.pos < len ? s.pos : len - 1] = '\0';
	return s.pos;
}

void
pc_config_digest(const struct pc_config *cfg, uint8_t digest[PC_DIGEST_LEN])
{
	crypto_generichash_state st;
	struct sink s = { NULL, 0, 0, &st };

	/* BLAKE2b needs no sodium_init(): the portable code is the default */
	crypto_generichash_init(&st, NULL, 0, PC_DIGEST_LEN);
	/* nothing is hashed for a configuration the loader cannot produce */
	(void)emit_canonical(&s, cfg);
	crypto_generichash_final(&st, digest, PC_DIGEST_LEN);
}
