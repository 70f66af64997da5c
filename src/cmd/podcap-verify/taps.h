/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * podcap-verify's taps (--tap URL|DIR --tap-key KEY, repeatable): each
 * tap's log is verified on its own with its key, then reconciled with the
 * shaper's (src/verify/tap.h, docs/reconcile.md). The program's own, not a
 * library's: nothing outside src/cmd/podcap-verify includes it.
 */
#ifndef PODCAP_VERIFY_TAPS_H
#define PODCAP_VERIFY_TAPS_H

#include <getopt.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "podmap/config.h"
#include "base/keys.h"
#include "verify/tap.h"
#include "verify/verify.h"

struct vf_taps {
	size_t n, nkeys;
	const char *source[PC_RECONCILE_MAX_TAPS];
	const char *key[PC_RECONCILE_MAX_TAPS];
	struct pc_reconcile_policy policy;
	FILE *html; /* --html's page, open: the reconciliation's section goes there */
};

#define VF_TAP_OPTIONS                                                                            \
	{ "tap", required_argument, NULL, 0x100 }, { "tap-key", required_argument, NULL, 0x101 }, \
	    { "tap-clock-offset", required_argument, NULL, 0x102 },                               \
	{                                                                                         \
		"tap-line-rate", required_argument, NULL, 0x103                                   \
	}

/* How podcap-verify reads a log from its source into v (its --url and --ledger readers). */
typedef void (*vf_tap_reader)(struct pc_verify *v, const char *source);

/* Takes one of the options above; false if c is not one. Exits 2 on a bad value. */
bool vf_tap_arg(int c, const char *arg, struct vf_taps *o);
/* Before the shaper's log is read: exits 2 unless every --tap has its --tap-key. */
void vf_taps_begin(struct vf_taps *o, const struct pc_config *const *maps, size_t nmaps, bool json);
/*
 * With taps, --pod-map holds the maps of the shaper and of its taps: the
 * ones of the log a key names (its appliance.origin, or podcap/<id>) are
 * put in out; returns how many. Without taps every map is the shaper's.
 */
size_t vf_taps_maps_for(const struct vf_taps *o, const struct pc_verifier_key *key,
			const struct pc_config *const *maps, size_t n,
			const struct pc_config **out);
/* Every record the shaper's log or a tap's log gives, on its way to v. */
void vf_take_record(struct pc_verify *v, const uint8_t *rec, size_t len, const uint8_t *leaf);
/*
 * After the shaper's report: verifies each tap, reconciles and reports.
 * Returns the exit status given the shaper's, rc.
 */
int vf_taps_run(struct vf_taps *o, int rc, const struct pc_verify_policy *policy,
		vf_tap_reader read_log);

#endif /* PODCAP_VERIFY_TAPS_H */
