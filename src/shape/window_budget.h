/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The window promise of one pod and direction: at most cap x W bytes in
 * every interval of length W (the pod map's window), on top of the token
 * bucket's envelope (docs/bucket.md, "The two promises").
 *
 * Time is cut into slots of g = ceil(W / k) ticks (k = PC_WB_K); a ring of
 * k + 1 slots holds what passed in the current slot and the k before it.
 * Any interval of W ticks ending in slot s starts in slot s - k or later,
 * so it lies in those k + 1 slots: admitting a frame only while their sum
 * stays within the budget keeps every such interval within it, exactly and
 * with no extra frame. The price is throughput: a steady stream can keep
 * k + 1 slots, not k, within one budget, so it passes cap x k / (k + 1)
 * (k = 63: 98.4 % of the cap), and a budget spent ages out a slot (up to
 * W / k) later than an exact sliding window would free it.
 *
 * Bytes in integers, time in ticks of `hz` as the bucket's; the window in
 * ticks and the slot are rounded up and the budget down, so every rounding
 * is in the direction of a smaller promise. A tick earlier than the newest
 * seen counts in the newest slot (a clock that stalls or steps back frees
 * nothing). Constant time per frame: at most k + 1 slots are cleared when
 * time moves on, none when it stays in the slot. Single writer, no locks,
 * no allocation, no system calls.
 */
#ifndef PODCAP_WINDOW_BUDGET_H
#define PODCAP_WINDOW_BUDGET_H

#include <stdbool.h>
#include <stdint.h>

#include "bucket.h"
#include "podmap/config.h"

#define PC_WB_K    63            /* slots per window */
#define PC_WB_RING (PC_WB_K + 1) /* a power of two: the ring index is a mask */

struct pc_window_budget {
	uint64_t sum;              /* bytes in the ring: the last k + 1 slots */
	uint64_t budget;           /* floor(cap_bps x window_ns / 8e9) bytes */
	uint64_t slot;             /* the newest slot seen, in slots since tick 0 */
	uint64_t next_tick;        /* the first tick of the slot after it */
	uint64_t slot_ticks;       /* g */
	uint64_t delay_ticks;      /* shape mode: queue_delay in whole ticks, rounded down */
	uint64_t ring[PC_WB_RING]; /* bytes passed in slot s at ring[s % PC_WB_RING] */
};

/*
 * The budget of cap_bps over window_ns, in bytes (rounded down): the most
 * any interval of one window may carry. The verifier uses the same figure.
 */
uint64_t pc_wb_budget_bytes(uint64_t cap_bps, uint64_t window_ns);

/*
 * Starts full at `now`: as if the whole budget had passed in the current
 * slot, so nothing passes for the next window (and one slot). What the
 * pod passed before (under the podcapd before a restart, the promise
 * before a reload, or as another pod's address) is unknown here, and a
 * fresh budget at every start would let an operator double the promise by
 * restarting.
 */
void pc_wb_init(struct pc_window_budget *w, const struct pc_limits *lim, uint64_t window_ns,
		uint64_t hz, uint64_t now);
/* New limits (pod-map reload; the window cannot change): keeps what passed, new budget. */
void pc_wb_reconfigure(struct pc_window_budget *w, const struct pc_limits *lim, uint64_t window_ns,
		       uint64_t hz);

/* Moves to the slot of `now`, forgetting the slots that leave the ring. */
static inline void
pc_wb_advance(struct pc_window_budget *w, uint64_t now)
{
	if (now < w->next_tick)
		return;
	uint64_t s = now / w->slot_ticks;
	uint64_t n = s - w->slot > PC_WB_RING ? PC_WB_RING : s - w->slot;

	for (uint64_t i = 1; i <= n; i++) {
		uint64_t *slot = &w->ring[(w->slot + i) % PC_WB_RING];

		w->sum -= *slot;
		*slot = 0;
	}
	w->slot = s;
	w->next_tick = s + 1 > UINT64_MAX / w->slot_ticks ? UINT64_MAX : (s + 1) * w->slot_ticks;
}

/* Whether `bytes` more fit the budget now (after pc_wb_advance). */
static inline bool
pc_wb_fits(const struct pc_window_budget *w, uint64_t bytes)
{
	/* a reload may have left more in the ring than a smaller budget */
	return w->sum <= w->budget && bytes <= w->budget - w->sum;
}

static inline void
pc_wb_count(struct pc_window_budget *w, uint64_t bytes)
{
	w->ring[w->slot % PC_WB_RING] += bytes;
	w->sum += bytes;
}

/*
 * Whether `bytes` (the whole backlog with the new frame) would fit by tick
 * `when` if nothing else passed: the slots that leave the ring by then
 * free what they hold. At most k + 1 slots are read.
 */
static inline bool
pc_wb_fits_by(const struct pc_window_budget *w, uint64_t when, uint64_t bytes)
{
	uint64_t s = when / w->slot_ticks, freed = 0;
	uint64_t n = s <= w->slot ? 0 : s - w->slot > PC_WB_RING ? PC_WB_RING : s - w->slot;

	if (bytes > w->budget)
		return false;
	for (uint64_t i = 1; i <= n; i++)
		freed += w->ring[(w->slot + i) % PC_WB_RING];
	return w->sum - freed <= w->budget - bytes; /* bytes <= budget: no wrap */
}

/*
 * pc_bucket_admit for a pod held to the window promise: the frame passes
 * only when the bucket holds its cost and the window's budget has room;
 * in shape mode it queues only if both will, within queue_delay. The
 * bucket's rules (nothing overtakes the queue, police never queues) hold.
 */
static inline enum pc_verdict
pc_wb_admit(struct pc_window_budget *w, struct pc_bucket *b, uint64_t now, uint64_t bytes)
{
	pc_wb_advance(w, now);
	enum pc_verdict v = pc_bucket_admit_if(b, now, bytes, pc_wb_fits(w, bytes));

	if (v == PC_VERDICT_PASS) {
		pc_wb_count(w, bytes);
	} else if (v == PC_VERDICT_QUEUE) {
		uint64_t when =
		    now > UINT64_MAX - w->delay_ticks ? UINT64_MAX : now + w->delay_ticks;

		if (!pc_wb_fits_by(w, when, b->backlog_bytes)) {
			pc_bucket_unqueue(b, bytes);
			return PC_VERDICT_DROP;
		}
	}
	return v;
}

/*
 * pc_bucket_admit_run for a pod held to the window promise: a run of frames
 * of one arrival time, `bytes` in all, passes at once when every one of them
 * would pass admitted one by one (pc_wb_admit): the budget has room for the
 * sum, and so for every part of it before, and the bucket passes the run.
 * False, with no token taken and nothing counted, when any would not: each
 * must then go through pc_wb_admit(). The decision is the one-by-one one.
 */
static inline bool
pc_wb_admit_run(struct pc_window_budget *w, struct pc_bucket *b, uint64_t now, uint64_t bytes)
{
	pc_wb_advance(w, now);
	if (!pc_wb_fits(w, bytes) || !pc_bucket_admit_run(b, now, bytes))
		return false;
	pc_wb_count(w, bytes);
	return true;
}

/* pc_bucket_release for a pod held to the window promise. */
static inline bool
pc_wb_release(struct pc_window_budget *w, struct pc_bucket *b, uint64_t now, uint64_t bytes)
{
	pc_wb_advance(w, now);
	if (!pc_wb_fits(w, bytes) || !pc_bucket_release(b, now, bytes))
		return false;
	pc_wb_count(w, bytes);
	return true;
}

#endif /* PODCAP_WINDOW_BUDGET_H */
