/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Token bucket of one pod and direction: rate = cap, depth = burst.
 *
 * Time is an injected tick counter of known frequency `hz` (the TSC in
 * podcapd, nanoseconds in tests). Tokens are kept exactly, in bit-ticks
 * (bits x hz) as unsigned 128-bit integers: a tick adds rate_bps of them and
 * a frame of L bytes costs 8 * L * hz. Nothing is rounded, so the long-run
 * rate is the cap exactly, at 1 Mbit/s as at 400 Gbit/s, with no drift.
 *
 * Guarantee: tokens are only ever taken for frames that pass and the level
 * never exceeds the depth, so over any interval of length T the bytes passed
 * are at most burst + cap x T. (The one exception is a queued frame left
 * costing more than the depth by a reconfigure: see
 * pc_bucket_release_oversized().)
 *
 * A bucket starts empty (and so after every restart of podcapd): a restart
 * never hands a pod a fresh burst, and the envelope holds across restarts.
 *
 * Single writer (the worker lcore that owns the pod); no locks, no system
 * calls, no allocation.
 */
#ifndef PODCAP_BUCKET_H
#define PODCAP_BUCKET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "podmap/config.h"

typedef unsigned __int128 pc_u128;

/*
 * What a frame that passes reads and writes is in the first 64 bytes, one
 * cache line: with thousands of pods the line is a miss per frame.
 */
struct pc_bucket {
	pc_u128 level;         /* bit-ticks available, <= depth */
	pc_u128 depth;         /* burst_bytes * 8 * hz */
	uint64_t rate_bps;
	uint64_t hz;
	uint64_t last;         /* tick of the last refill; ahead of now while a debt is paid */
	uint32_t backlog_frames;
	enum pc_mode mode;
	/* below: read only when the frame cannot pass at once */
	pc_u128 delay_budget;  /* queue_delay in ticks * rate_bps: how far the queue may run ahead */
	uint64_t backlog_bytes;/* bytes waiting in the shaping queue */
};
_Static_assert(offsetof(struct pc_bucket, mode) + sizeof(enum pc_mode) <= 64,
	       "what a passing frame touches must fit one cache line");

enum pc_verdict {
	PC_VERDICT_PASS = 0,   /* send now: tokens taken */
	PC_VERDICT_QUEUE,      /* shape mode: hold it; counted in the backlog */
	PC_VERDICT_DROP,       /* over the cap: police mode, or it would wait longer than queue_delay */
};

/* Starts empty at `now`. */
void pc_bucket_init(struct pc_bucket *b, const struct pc_limits *lim, uint64_t hz, uint64_t now);
/* New limits (pod-map reload): keeps the level, clamped to the new depth. */
void pc_bucket_reconfigure(struct pc_bucket *b, const struct pc_limits *lim, uint64_t now);

static inline void
pc_bucket_refill(struct pc_bucket *b, uint64_t now)
{
	if (now <= b->last)
		return;
	uint64_t elapsed = now - b->last;
	b->last = now;
	pc_u128 room = b->depth - b->level;
	/* elapsed * rate cannot overflow 128 bits, but it can exceed room */
	pc_u128 add = (pc_u128)elapsed * b->rate_bps;
	b->level = add >= room ? b->depth : b->level + add;
}

static inline pc_u128
pc_bucket_cost(const struct pc_bucket *b, uint64_t bytes)
{
	return (pc_u128)bytes * 8u * b->hz;
}

/*
 * Decides the fate of an arriving frame of `bytes` bytes. In shape mode a
 * frame queues behind the backlog; it is refused (DROP) when it would have
 * to wait longer than queue_delay. On QUEUE the caller must either hold the
 * frame and later pass it through pc_bucket_release(), or, if it has no room
 * to hold it, give it back with pc_bucket_unqueue(). pc_bucket_admit_if()
 * with may_pass false treats the frame as one the bucket cannot pay for yet
 * (another limit, window_budget.h, holds it back).
 */
static inline enum pc_verdict
pc_bucket_admit_if(struct pc_bucket *b, uint64_t now, uint64_t bytes, bool may_pass)
{
	pc_bucket_refill(b, now);
	pc_u128 cost = pc_bucket_cost(b, bytes);
	if (may_pass && b->backlog_frames == 0 && b->level >= cost) {
		b->level -= cost;
		return PC_VERDICT_PASS;
	}
	if (b->mode == PC_MODE_POLICE)
		return PC_VERDICT_DROP;
	/* the level never exceeds the depth: queued, it would block the queue for good */
	if (cost > b->depth)
		return PC_VERDICT_DROP;
	pc_u128 need = pc_bucket_cost(b, b->backlog_bytes + bytes);
	/* ticks up to `last` accrue nothing (a debt, or a clock that stepped back) */
	if (b->last > now) {
		pc_u128 idle = (pc_u128)(b->last - now) * b->rate_bps;
		need = idle > ~(pc_u128)0 - need ? ~(pc_u128)0 : need + idle;
	}
	if (need > b->level && need - b->level > b->delay_budget)
		return PC_VERDICT_DROP;
	b->backlog_bytes += bytes;
	b->backlog_frames++;
	return PC_VERDICT_QUEUE;
}

static inline enum pc_verdict
pc_bucket_admit(struct pc_bucket *b, uint64_t now, uint64_t bytes)
{
	return pc_bucket_admit_if(b, now, bytes, true);
}

/*
 * A run of frames of one pod and direction arriving at the same `now`,
 * `bytes` in all: true, with their tokens taken, when every one of them
 * would pass admitted one by one (nothing queued and the level covers the
 * sum); false, with nothing taken, when any would not, and each must then
 * go through pc_bucket_admit(). The decision is the one-by-one decision.
 */
static inline bool
pc_bucket_admit_run(struct pc_bucket *b, uint64_t now, uint64_t bytes)
{
	pc_bucket_refill(b, now);
	pc_u128 cost = pc_bucket_cost(b, bytes);
	if (b->backlog_frames != 0 || b->level < cost)
		return false;
	b->level -= cost;
	return true;
}

static inline void
pc_bucket_unqueue(struct pc_bucket *b, uint64_t bytes)
{
	b->backlog_bytes -= bytes;
	b->backlog_frames--;
}

/*
 * A queued frame can cost more than the depth only if a reconfigure shrank
 * the burst under it. Rather than block the queue for good, it leaves with a
 * full bucket and the rest is owed: `last` moves into the future by the
 * ticks that pay it, during which nothing accrues. The long-run rate stays
 * exact; the burst is exceeded once, by that frame.
 */
static inline bool
pc_bucket_release_oversized(struct pc_bucket *b, pc_u128 cost)
{
	if (b->level < b->depth || b->rate_bps == 0)
		return false;
	pc_u128 owed = cost - b->depth;
	pc_u128 ticks = (owed + b->rate_bps - 1) / b->rate_bps;
	pc_u128 room = (pc_u128)UINT64_MAX - b->last;
	b->last = ticks > room ? UINT64_MAX : b->last + (uint64_t)ticks;
	b->level = 0;
	return true;
}

/*
 * The head of the shaping queue (`bytes` long) may leave when the bucket
 * holds its cost: takes the tokens and returns true, else false.
 */
static inline bool
pc_bucket_release(struct pc_bucket *b, uint64_t now, uint64_t bytes)
{
	pc_bucket_refill(b, now);
	pc_u128 cost = pc_bucket_cost(b, bytes);
	if (b->level >= cost)
		b->level -= cost;
	else if (cost <= b->depth || !pc_bucket_release_oversized(b, cost))
		return false;
	b->backlog_bytes -= bytes;
	b->backlog_frames--;
	return true;
}

/* Whole bytes of tokens in the bucket (for display; divides). */
uint64_t pc_bucket_level_bytes(const struct pc_bucket *b);

#endif /* PODCAP_BUCKET_H */
