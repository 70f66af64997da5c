/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * podcap-verify's taps (--tap URL|DIR --tap-key KEY, repeatable): each
 * tap's log is verified on its own with its key, then reconciled with the
 * shaper's (src/verify/tap.h, docs/reconcile.md). The program's own, not a
 * library's: nothing outside src/cmd/podcap-verify includes it.
 */
#ifndef PODCAP_VERIFY_TAPS_H
#define PODCAP_VERIFY_TAPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "podmap/config.h"
#include "base/keys.h"
#include "verify/tap.h"
#include "verify/verify.h"

#include "tls.h"

/* The tap options (cmd/podcap-verify/options.c sets them). */
struct vf_taps {
	size_t n, nkeys;
	const char *source[PC_RECONCILE_MAX_TAPS];
	const char *key[PC_RECONCILE_MAX_TAPS];
	struct pc_reconcile_policy policy; /* --tap-clock-offset, --tap-line-rate */
};

/* Before the shaper's log is read: exits 2 unless every --tap has its --tap-key. */
void vf_taps_begin(const struct vf_taps *o, const struct pc_config *const *maps, size_t nmaps,
		   bool json);
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
 * After the shaper's report: verifies each tap, its log read with tls as
 * the shaper's, reconciles and reports; the reconciliation's section goes
 * to html too, --html's page, when not NULL. Returns the exit status given
 * the shaper's, rc.
 */
int vf_taps_run(const struct vf_taps *o, int rc, const struct pc_verify_policy *policy,
		const struct vf_tls *tls, FILE *html);

#endif /* PODCAP_VERIFY_TAPS_H */
