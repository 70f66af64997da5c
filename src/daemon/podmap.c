/* SPDX-License-Identifier: BSD-3-Clause */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "podmap/config.h"
#include "base/error.h"
#include "base/hex.h"
#include "log/ledger.h"
#include "log/origin.h"
#include "http/tls.h"

#include "podmap.h"

#define EXIT_USAGE 2

int
pc_podmap_load(const char *path, struct pc_config *cfg, struct pc_tls **tls)
{
	struct pc_error err;
	struct pc_tls *t = NULL;

	if (tls != NULL)
		*tls = NULL;
	if (pc_config_load(path, cfg, &err) != 0) {
		pc_error_print(&err, stderr);
		return -1;
	}
	if (cfg->tls.enabled && (t = pc_tls_load(cfg, &err)) == NULL) {
		pc_error_print(&err, stderr);
		pc_config_free(cfg);
		return -1;
	}
	if (tls != NULL)
		*tls = t;
	else
		pc_tls_put(t);
	return 0;
}

/* What a pod map must hold to be run, beyond being valid. */
static int
check_run(const char *path, const struct pc_config *cfg, struct pc_declared *decl)
{
	enum pc_decl_refusal why;
	struct pc_error err;

	if (cfg->signing_key[0] == '\0' || cfg->ledger[0] == '\0') {
		fprintf(stderr,
			"%s: appliance.signing_key and appliance.ledger are required: "
			"a cap that no one can verify is a misconfiguration\n",
			path);
		return -1;
	}
	/* with appliance.auditor_keys: only a map an auditor declared, while it is in force */
	if (pc_declared_load(path, cfg, pc_now_ns(), decl, &why, &err) != 0) {
		pc_error_prefix(&err, "podcapd: refusing to run %s", path);
		pc_error_print(&err, stderr);
		return -1;
	}
	return 0;
}

int
pc_podmap_load_run(const char *path, struct pc_config *cfg, struct pc_declared *decl,
		   struct pc_tls **tls)
{
	if (pc_podmap_load(path, cfg, tls) != 0)
		return -1;
	if (check_run(path, cfg, decl) != 0) {
		if (tls != NULL) {
			pc_tls_put(*tls);
			*tls = NULL;
		}
		pc_config_free(cfg);
		return -1;
	}
	return 0;
}

int
pc_podmap_signer(const struct pc_config *cfg, struct pc_signer *signer)
{
	char origin[PC_ORIGIN_LEN];
	struct pc_error err;

	/* the key is read by the signer process only, and the TPM opened there */
	int rc = pc_signer_spawn_attest(cfg->signing_key, &cfg->attestation, signer, &err);
	if (rc != 0) {
		pc_error_prefix(&err, "podcapd: signing key");
		pc_error_print(&err, stderr);
		/* a key refused is a misconfiguration, like a bad pod map */
		return rc == -2 ? EXIT_USAGE : EXIT_FAILURE;
	}
	/* a checkpoint's origin is its key's name: another log's key signs nothing of this one */
	pc_config_origin(cfg, origin, sizeof(origin));
	if (strcmp(signer->vk.name, origin) != 0) {
		fprintf(stderr,
			"podcapd: signing key: %s is named '%s' but this appliance's log is '%s': "
			"make its key with podcap-keygen --name %s\n",
			cfg->signing_key, signer->vk.name, origin, origin);
		pc_signer_stop(signer);
		return EXIT_USAGE;
	}
	/* what the ledger thread would fail to open at once: no window could be logged */
	if (pc_ledger_check(cfg->ledger, origin, &err) != 0) {
		pc_error_prefix(&err, "podcapd: appliance.ledger");
		pc_error_print(&err, stderr);
		pc_signer_stop(signer);
		return EXIT_USAGE;
	}
	return 0;
}

static void
print_ok(const struct pc_config *cfg, bool canonical)
{
	uint8_t digest[PC_DIGEST_LEN];
	char hex[2 * PC_DIGEST_LEN + 1];

	pc_config_digest(cfg, digest);
	pc_hex(digest, sizeof(digest), hex);
	if (canonical) {
		size_t n = pc_config_canonical(cfg, NULL, 0);
		char *buf = malloc(n + 1);
		if (buf != NULL) {
			pc_config_canonical(cfg, buf, n + 1);
			fwrite(buf, 1, n, stdout);
			free(buf);
		}
	}
	printf("configuration OK\ndigest %s\n", hex);
}

int
pc_podmap_check(const char *path, bool canonical, bool map_only)
{
	struct pc_config cfg;
	struct pc_declared decl;
	struct pc_signer signer;

	if (map_only ? pc_podmap_load(path, &cfg, NULL)
		     : pc_podmap_load_run(path, &cfg, &decl, NULL))
		return EXIT_USAGE;
	int rc = map_only ? 0 : pc_podmap_signer(&cfg, &signer);
	if (rc == 0 && !map_only)
		pc_signer_stop(&signer); /* it wipes the key as it exits */
	if (rc == 0)
		print_ok(&cfg, canonical);
	pc_config_free(&cfg);
	return rc;
}
