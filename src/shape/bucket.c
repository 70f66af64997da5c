/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Token bucket set-up; the per-frame functions are inline in bucket.h.
 */
#include <stdint.h>

#include "bucket.h"
#include "base/units.h"

#define PC_U128_MAX (~(pc_u128)0)

static pc_u128
pc_bucket_depth(const struct pc_limits *lim, uint64_t hz)
{
	return (pc_u128)lim->burst_bytes * 8u * hz;
}

/*
 * queue_delay in whole ticks (rounded down, so a frame never waits longer
 * than declared) times the rate: the bit-ticks the queue may run ahead of
 * the bucket. Saturates rather than wraps for absurd inputs.
 */
static pc_u128
pc_bucket_delay_budget(const struct pc_limits *lim, uint64_t hz)
{
	pc_u128 ticks = (pc_u128)lim->queue_delay_ns * hz / PC_NS_PER_SEC;

	if (lim->cap_bps != 0 && ticks > PC_U128_MAX / lim->cap_bps)
		return PC_U128_MAX;
	return ticks * lim->cap_bps;
}

static void
pc_bucket_set_limits(struct pc_bucket *b, const struct pc_limits *lim)
{
	b->rate_bps = lim->cap_bps;
	b->depth = pc_bucket_depth(lim, b->hz);
	b->delay_budget = pc_bucket_delay_budget(lim, b->hz);
	b->mode = lim->mode;
}

void
pc_bucket_init(struct pc_bucket *b, const struct pc_limits *lim, uint64_t hz,
	       uint64_t now)
{
	b->hz = hz;
	pc_bucket_set_limits(b, lim);
	b->level = 0;
	b->last = now;
	b->backlog_bytes = 0;
	b->backlog_frames = 0;
}

void
pc_bucket_reconfigure(struct pc_bucket *b, const struct pc_limits *lim,
		      uint64_t now)
{
	/* tokens earned so far were earned at the old rate */
	pc_bucket_refill(b, now);
	pc_bucket_set_limits(b, lim);
	if (b->level > b->depth)
		b->level = b->depth;
}

uint64_t
pc_bucket_level_bytes(const struct pc_bucket *b)
{
	return (uint64_t)(b->level / ((pc_u128)8u * b->hz));
}
