/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Classification of a whole RX burst: the pod of every frame, found with
 * one pass over the headers and bulk prefix lookups, so that the header
 * reads, the lookups' table reads and the shaper and counter lines of a
 * burst overlap instead of stalling one frame at a time.
 */
#ifndef PODCAPD_BURST_H
#define PODCAPD_BURST_H

#include <stdint.h>

#include <rte_mbuf.h>

#include "shape/classify.h"
#include "shape/counters.h"

#include "dataplane.h"
#include "table.h"

/* What pc_burst_classify found for frame i of a burst. */
struct pc_burst_class {
	int32_t pod[PC_BURST];  /* pod index, or -1: dropped for why[i] */
	uint32_t len[PC_BURST]; /* frame length in bytes */
	uint8_t why[PC_BURST];  /* enum pc_link_drop, when pod[i] < 0 */
	uint32_t lldp;          /* bit i: frame i is LLDP (unmapped, for the control thread) */
};
_Static_assert(PC_BURST <= 32, "one bit of pc_burst_class.lldp per frame of a burst");

/*
 * Classifies pkts[0..n) received on uplink u in direction d (n <= PC_BURST),
 * as the frame-at-a-time rule says (worker.c): a frame that is oversized,
 * shorter than an Ethernet header or in several segments is malformed; on an
 * uplink of one pod without prefixes every other frame is that pod's; else
 * the address on the pod side of the frame names the pod, which must belong
 * to u. An LLDP frame (shape/classify.h) is no pod's on either kind of
 * uplink: unmapped, and marked in out->lldp. Reads the frames, writes only
 * *out.
 */
void pc_burst_classify(const struct pc_table *t, unsigned u, enum pc_dir d,
		       struct rte_mbuf *const *pkts, uint16_t n, struct pc_burst_class *out);

/*
 * Starts loading what admitting the classified frames of uplink u will
 * touch: each pod's bucket line (its shaper's, or on an uplink of several
 * workers its budget's and this worker's lease) and its counter line in bank.
 */
void pc_burst_prefetch(const struct pc_table *t, unsigned u, const struct pc_worker *w,
		       enum pc_dir d, const struct pc_burst_class *c, uint16_t n);

#endif /* PODCAPD_BURST_H */
