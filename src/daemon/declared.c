/* SPDX-License-Identifier: BSD-3-Clause */
#include <stdint.h>
#include <string.h>

#include "base/clock.h"
#include "log/declaration.h"
#include "base/units.h"

#include "declared.h"

static uint64_t refused[PC_RELOAD_REFUSALS];

static uint64_t
stop_margin_ns(uint64_t window_ns)
{
	return window_ns / 2 < PC_NS_PER_SEC ? window_ns / 2 : PC_NS_PER_SEC;
}

int
pc_declared_load(const char *map_path, const struct pc_config *cfg, uint64_t now_ns,
		 struct pc_declared *out, enum pc_decl_refusal *why, struct pc_error *err)
{
	char path[PC_PATH_LEN], a[PC_UTC_LEN], b[PC_UTC_LEN];
	uint8_t digest[PC_DIGEST_LEN];
	uint64_t window_start = now_ns - now_ns % cfg->window_ns;

	memset(out, 0, sizeof(*out));
	if (cfg->nauditor_keys == 0)
		return 0;
	if (pc_declaration_path(map_path, path, sizeof(path)) != 0) {
		*why = PC_DECL_UNSIGNED;
		return pc_error_set(err, "%s: path too long", map_path);
	}
	pc_config_digest(cfg, digest);
	if (pc_declaration_load(path, cfg->auditor_keys, cfg->nauditor_keys, cfg->appliance_id,
				digest, now_ns, &out->d, out->hash, why, err) != 0)
		return -1;
	/* the window in progress is the first this map may govern: all of it */
	if (window_start < out->d.not_before_ns) {
		pc_utc_format(out->d.not_before_ns, a, sizeof(a));
		pc_utc_format(window_start, b, sizeof(b));
		*why = PC_DECL_NOT_YET_VALID;
		return pc_error_set(err,
				    "%s: not yet valid for the window in progress: valid from "
				    "%s, the window began at %s",
				    path, a, b);
	}
	if (now_ns >=
	    pc_declared_stop_ns(&(struct pc_declared){ .on = true, .d = out->d }, cfg->window_ns)) {
		pc_utc_format(out->d.not_after_ns, a, sizeof(a));
		*why = PC_DECL_EXPIRED;
		return pc_error_set(err, "%s: expires at %s, too soon to forward under it", path,
				    a);
	}
	out->on = true;
	return 0;
}

uint64_t
pc_declared_stop_ns(const struct pc_declared *d, uint64_t window_ns)
{
	if (!d->on)
		return UINT64_MAX;
	return d->d.not_after_ns - stop_margin_ns(window_ns);
}

void
pc_declared_count_refusal(unsigned reason)
{
	if (reason < PC_RELOAD_REFUSALS)
		__atomic_fetch_add(&refused[reason], 1, __ATOMIC_RELAXED);
}

uint64_t
pc_declared_refusals(unsigned reason)
{
	return reason < PC_RELOAD_REFUSALS ? __atomic_load_n(&refused[reason], __ATOMIC_RELAXED)
					   : 0;
}

const char *
pc_declared_refusal_name(unsigned reason)
{
	switch (reason) {
	case PC_RELOAD_INVALID_MAP:
		return "invalid_map";
	case PC_RELOAD_INCOMPATIBLE:
		return "incompatible";
	case PC_RELOAD_TABLE:
		return "table";
	default:
		return pc_declaration_refusal_name((enum pc_decl_refusal)reason);
	}
}
