/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Window counters.
 *
 * Every worker lcore owns counter banks; each counter has a single writer
 * (that lcore) which stores with relaxed 64-bit atomics, so the control
 * thread can read any counter at any time without tearing and without a
 * lock. Banks are switched at window boundaries (see counters banks in
 * docs/design.md): a frame is counted in exactly one window.
 */
#ifndef PODCAP_COUNTERS_H
#define PODCAP_COUNTERS_H

#include <stdint.h>

#include "classify.h"

/* Why a frame of a known pod was dropped. */
enum pc_pod_drop {
	PC_DROP_OVER_CAP = 0,  /* the cap holds it: police mode, or it would wait longer than queue_delay,
				  or it was still queued at stop or when a reload removed its pod */
	PC_DROP_QUEUE_FULL,    /* shape mode: the shaping queue had no room */
	PC_DROP_TX_FULL,       /* passed the cap, but the outgoing port refused it */
	PC_POD_DROP_COUNT,
};

/*
 * Why a frame that belongs to no pod was dropped (per uplink and
 * direction): the reasons a record carries (log-format.md), and one more
 * that records count as unmapped.
 */
enum pc_link_drop {
	PC_DROP_UNMAPPED = 0,  /* no declared pod matches: fail closed */
	PC_DROP_MALFORMED,     /* runt, truncated or oversized */
	PC_LINK_DROP_COUNT,
	/*
	 * The address of a pod with pods[].vlan, in a frame of another tag
	 * stack or of none: counted apart (spoofed_*), and as unmapped in
	 * records, whose format has the two reasons above (pc_link_ctr_recorded).
	 */
	PC_DROP_SPOOFED = PC_LINK_DROP_COUNT,
};
#define PC_DROP_SPOOFED_NAME "spoofed"

struct pc_pod_ctr {
	uint64_t pass_frames;
	uint64_t pass_bytes;
	uint64_t drop_frames[PC_POD_DROP_COUNT];
	uint64_t drop_bytes[PC_POD_DROP_COUNT];
};

struct pc_link_ctr {
	uint64_t drop_frames[PC_LINK_DROP_COUNT];
	uint64_t drop_bytes[PC_LINK_DROP_COUNT];
	/* dropped as PC_DROP_SPOOFED: 0 in a record, which counts them as unmapped */
	uint64_t spoofed_frames;
	uint64_t spoofed_bytes;
};

/* Single-writer increment: a plain add made visible with a relaxed atomic store. */
static inline void
pc_ctr_add(uint64_t *c, uint64_t v)
{
	__atomic_store_n(c, __atomic_load_n(c, __ATOMIC_RELAXED) + v, __ATOMIC_RELAXED);
}

static inline uint64_t
pc_ctr_read(const uint64_t *c)
{
	return __atomic_load_n(c, __ATOMIC_RELAXED);
}

/* A frame of `bytes` dropped for `why` (enum pc_link_drop, PC_DROP_SPOOFED too), by its one writer. */
static inline void
pc_link_ctr_drop(struct pc_link_ctr *c, unsigned why, uint64_t bytes)
{
	if (why == PC_DROP_SPOOFED) {
		pc_ctr_add(&c->spoofed_frames, 1);
		pc_ctr_add(&c->spoofed_bytes, bytes);
		return;
	}
	pc_ctr_add(&c->drop_frames[why], 1);
	pc_ctr_add(&c->drop_bytes[why], bytes);
}

/* dst += src, reading src with relaxed atomics. */
void pc_pod_ctr_accumulate(struct pc_pod_ctr *dst, const struct pc_pod_ctr *src);
void pc_link_ctr_accumulate(struct pc_link_ctr *dst, const struct pc_link_ctr *src);

/* What a record holds of src: its spoofed frames counted as unmapped. */
void pc_link_ctr_recorded(struct pc_link_ctr *dst, const struct pc_link_ctr *src);

const char *pc_pod_drop_name(enum pc_pod_drop r);   /* "over_cap", "queue_full", "tx_full" */
const char *pc_link_drop_name(enum pc_link_drop r); /* "unmapped", "malformed" */

#endif /* PODCAP_COUNTERS_H */
