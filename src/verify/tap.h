/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Reconciliation of a shaper's log with the logs of taps the verifier owns
 * (docs/reconcile.md): per pod, direction and window, what the shaper says
 * crossed against what a tap saw cross, within the most two honest
 * observers whose clocks differ by up to an offset can disagree.
 *
 *	rc = pc_reconcile_new(&policy, maps, nmaps);
 *	for each record of the shaper's log:   pc_reconcile_shaper(rc, rec, len);
 *	t = pc_reconcile_tap(rc, "URL or DIR");
 *	for each record of that tap's log:     pc_reconcile_tap_record(rc, t, rec, len);
 *	n = pc_reconcile_finish(rc);           the findings that are failures
 *	pc_reconcile_print_text(rc, stdout);
 *
 * The records fed are those of logs that the caller verifies on their own
 * (each with its own key): this only compares them. No DPDK, no I/O.
 */
#ifndef PODCAP_VERIFY_TAP_H
#define PODCAP_VERIFY_TAP_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "podmap/config.h"
#include "base/error.h"

#define PC_RECONCILE_MAX_TAPS          16
#define PC_RECONCILE_DEFAULT_OFFSET_NS 10000000ull     /* 10 ms */
#define PC_RECONCILE_DEFAULT_LINE_BPS  100000000000ull /* 100 Gbit/s */
#define PC_RECONCILE_WHY_LEN           512             /* why a tap was refused, with its NUL */

struct pc_reconcile_policy {
	/*
	 * The most the two boxes' window boundaries can be apart, as seen by a
	 * frame: the clock offset between shaper and tap plus the time from one
	 * observer's count to the other's (--tap-clock-offset).
	 */
	uint64_t offset_ns;
	uint64_t line_bps; /* the link's rate: bounds what crosses near a boundary, both ways */
};

/*
 * The most bytes of one pod and direction that can cross within offset_ns
 * of a boundary, when what crosses is held to rate_bps after burst_bytes
 * (a bucket's cap and burst, or the line's rate and 0; what passed is held
 * by both, and its bound is the smaller):
 * burst + rate x offset (rounded up) + one largest frame (for the
 * rounding of a real bucket), and 0 with no offset. An honest pair of
 * observers disagrees on one boundary by at most this.
 */
uint64_t pc_reconcile_boundary_bytes(uint64_t rate_bps, uint64_t burst_bytes, uint64_t offset_ns,
				     uint32_t max_frame);

struct pc_reconcile;

struct pc_reconcile *pc_reconcile_new(const struct pc_reconcile_policy *p,
				      const struct pc_config *const *maps, size_t nmaps);
void pc_reconcile_free(struct pc_reconcile *rc);
void pc_reconcile_shaper(struct pc_reconcile *rc, const uint8_t *rec, size_t len);
/* A new tap, named by where its log came from; its index, or -1 past PC_RECONCILE_MAX_TAPS. */
int pc_reconcile_tap(struct pc_reconcile *rc, const char *source);
void pc_reconcile_tap_record(struct pc_reconcile *rc, int tap, const uint8_t *rec, size_t len);
/*
 * Refuses tap t: what it logged is forgotten (none of its windows is
 * evidence) and `why` is reported; the reconciliation then fails.
 */
void pc_reconcile_tap_refuse(struct pc_reconcile *rc, int tap, const char *why);
/* The shaper's log failed its own verification: the reconciliation fails with it. */
void pc_reconcile_shaper_failed(struct pc_reconcile *rc);
/*
 * Whether tap t, its records all fed, is a tap of this shaper: a tap's log
 * (OBSERVE records, of one side) whose windows are the shaper's length and
 * declare, in every window both logs hold, the shaper's uplinks and pods,
 * each on the same uplink with the same limits; where both declared maps
 * are known, the shaper's pod map (appliance.role shaper) but for the
 * appliance's own lines, with the tap's role its OBSERVE records name.
 * 0, or -1 with err saying what differs (docs/reconcile.md).
 */
int pc_reconcile_tap_pairs(const struct pc_reconcile *rc, int tap, struct pc_error *err);
/* The declared maps given to pc_reconcile_new, and their number in *n when n is not NULL. */
const struct pc_config *const *pc_reconcile_maps(const struct pc_reconcile *rc, size_t *n);
/* Compares; returns the number of windows or runs of windows that disagree. */
uint64_t pc_reconcile_finish(struct pc_reconcile *rc);
/*
 * The verdict, after pc_reconcile_finish: "reconciled: ..." when nothing
 * disagrees, no tap was refused and the shaper's log verified, else
 * "RECONCILE FAILED: ..." and why; the text report's last line and the
 * JSON's "result".
 */
void pc_reconcile_result_line(const struct pc_reconcile *rc, char *buf, size_t len);
void pc_reconcile_print_text(const struct pc_reconcile *rc, FILE *f);
void pc_reconcile_print_json(const struct pc_reconcile *rc, FILE *f);
/* The HTML page's section of the same figures (docs/report.md). */
void pc_reconcile_print_html(const struct pc_reconcile *rc, FILE *f);

#endif /* PODCAP_VERIFY_TAP_H */
