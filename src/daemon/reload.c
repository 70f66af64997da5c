/* SPDX-License-Identifier: BSD-3-Clause */
#include <stdint.h>
#include <string.h>

#include "podmap/config.h"
#include "base/clock.h"
#include "base/hex.h"
#include "http/tls.h"

#include "dataplane.h"
#include "declared.h"
#include "log.h"
#include "podmap.h"
#include "reload.h"

/* What the rows of the pod map's keys say is fixed for a run (podmap/fields.c). */
const char *
pc_reload_incompatible(const struct pc_config *a, const struct pc_config *b, char *why, size_t n)
{
	return pc_config_fixed_change(a, b, why, n);
}

/*
 * The pending table is freed before the next is built: a table's prefix
 * tables take over 128 MiB, and room for two (in force and next) is what
 * the pod map's dpdk.memory must allow, not three.
 */
void
pc_reload_prepare(const char *path, const struct pc_table *cur,
		  const uint16_t (*ports)[PC_DIR_COUNT], unsigned generation,
		  struct pc_table **pending, struct pc_tls **tls)
{
	struct pc_config cfg;
	struct pc_tls *t_tls;
	*tls = NULL;
	if (pc_podmap_load(path, &cfg, &t_tls) != 0) {
		PC_LOG(ERR, "reload of %s failed: the pod map in force stays\n", path);
		pc_declared_count_refusal(PC_RELOAD_INVALID_MAP);
		return;
	}
	char fixed[128];
	const char *why = pc_reload_incompatible(&cur->cfg, &cfg, fixed, sizeof(fixed));
	if (why != NULL) {
		PC_LOG(ERR, "reload of %s refused: %s; restart podcapd for that\n", path, why);
		pc_declared_count_refusal(PC_RELOAD_INCOMPATIBLE);
		pc_tls_put(t_tls);
		pc_config_free(&cfg);
		return;
	}
	struct pc_declared decl;
	struct pc_error err;
	enum pc_decl_refusal refusal;
	if (pc_declared_load(path, &cfg, pc_now_ns(), &decl, &refusal, &err) != 0) {
		PC_LOG(ERR, "reload of %s refused: %s; the pod map in force stays\n", path,
		       err.msg);
		pc_declared_count_refusal(refusal);
		pc_tls_put(t_tls);
		pc_config_free(&cfg);
		return;
	}
	pc_table_free(*pending);
	*pending = NULL;
	struct pc_table *t = pc_table_create(&cfg, ports, pc_dp.nworkers, pc_dp.hz, generation);
	pc_config_free(&cfg);
	if (t != NULL && pc_table_link_prev(t, (struct pc_table *)(uintptr_t)cur) != 0) {
		pc_table_free(t);
		t = NULL;
	}
	if (t == NULL) {
		PC_LOG(ERR, "reload of %s failed: the pod map in force stays\n", path);
		pc_declared_count_refusal(PC_RELOAD_TABLE);
		pc_tls_put(t_tls);
		return;
	}
	t->decl = decl;
	char hex[2 * PC_DIGEST_LEN + 1];
	pc_hex(t->digest, sizeof(t->digest), hex);
	PC_LOG(NOTICE, "reloaded %s: %u pods, digest %s, in force from the next window\n",
	       path, t->cfg.npods, hex);
	*pending = t;
	*tls = t_tls;
}
