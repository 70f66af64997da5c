/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The auditor's declaration a table runs under (log/declaration.h),
 * when its pod map sets appliance.auditor_keys: loaded with the map at
 * start and at each SIGHUP, written as a DECLARE record after the START or
 * RELOAD, and the end of its validity, at which podcapd stops forwarding.
 * Control thread only, but for the refusal counters (relaxed atomics, read
 * by /metrics).
 */
#ifndef PODCAPD_DECLARED_H
#define PODCAPD_DECLARED_H

#include <stdbool.h>
#include <stdint.h>

#include "podmap/config.h"
#include "log/declaration.h"
#include "base/error.h"

struct pc_declared {
	bool on; /* the map names auditor keys */
	struct pc_declaration d;
	uint8_t hash[PC_DIGEST_LEN]; /* of MAP.sig's bytes */
};

/* Reload refusals /metrics counts: the declaration's, and the map's own. */
enum pc_reload_refusal {
	PC_RELOAD_INVALID_MAP = PC_DECL_REFUSALS,
	PC_RELOAD_INCOMPATIBLE,
	PC_RELOAD_TABLE,
	PC_RELOAD_REFUSALS
};

/*
 * The declaration of the map at map_path (map_path.sig), loaded from cfg,
 * if cfg names auditor keys: it must be in force at now_ns and over the
 * window that began before it, and not end within the stop margin. 0 with
 * *out (out->on false without keys), or -1 with err and *why.
 */
int pc_declared_load(const char *map_path, const struct pc_config *cfg, uint64_t now_ns,
		     struct pc_declared *out, enum pc_decl_refusal *why, struct pc_error *err);

/*
 * When forwarding under d must stop (UINT64_MAX when d is off): not-after
 * less the margin, min(1 s, half a window), so that the last window starts,
 * and every frame of it passes, before not-after.
 */
uint64_t pc_declared_stop_ns(const struct pc_declared *d, uint64_t window_ns);

void pc_declared_count_refusal(unsigned reason); /* enum pc_decl_refusal or pc_reload_refusal */
uint64_t pc_declared_refusals(unsigned reason);
const char *pc_declared_refusal_name(unsigned reason);

#endif /* PODCAPD_DECLARED_H */
