/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The shared budget's take: one 128-bit compare-and-swap on z.
 *
 * z is read as two 64-bit halves without an atomic 128-bit load: a torn
 * read only makes the compare-and-swap fail, which returns the value that
 * is really there, and the take is retried with it. A retry means another
 * worker's take went through: the loop is lock-free, and it runs once per
 * lease, not per frame.
 */
#include <stdbool.h>
#include <stdint.h>

#include "lease.h"

static inline pc_u128
load_z(const struct pc_budget *b)
{
	const volatile uint64_t *half = (const volatile uint64_t *)&b->z;
	return (pc_u128)half[0] | (pc_u128)half[1] << 64;
}

/* The bit-ticks of a budget whose z is `z`, at `now`. */
static inline pc_u128
level_at(const struct pc_budget *b, pc_u128 z, pc_u128 now_bt)
{
	pc_u128 avail = now_bt > z ? now_bt - z : 0;
	return avail < b->depth ? avail : b->depth;
}

uint32_t
pc_lease_bytes(const struct pc_limits *lim, unsigned nworkers, uint32_t max_frame)
{
	if (nworkers == 0)
		return 0;
	uint64_t lease = lim->burst_bytes / 4 / nworkers;
	if (lease > PC_LEASE_MAX_BYTES)
		lease = PC_LEASE_MAX_BYTES;
	if (lease < max_frame)
		lease = max_frame;
	/* the budget's own depth must still hold a frame once the leases are set apart */
	if ((unsigned __int128)lease * nworkers + max_frame > lim->burst_bytes)
		return 0;
	return (uint32_t)lease;
}

int
pc_budget_init(struct pc_budget *b, const struct pc_limits *lim, unsigned nworkers,
	       uint32_t max_frame, uint64_t hz, uint64_t now, struct pc_error *err)
{
	uint32_t lease = pc_lease_bytes(lim, nworkers, max_frame);

	if (lease == 0)
		return pc_error_set(
		    err,
		    "a burst of %llu bytes cannot be shared by %u workers: it must "
		    "hold a lease of at least %u bytes for each, and one frame more",
		    (unsigned long long)lim->burst_bytes, nworkers, max_frame);
	b->hz = hz;
	b->rate_bps = lim->cap_bps;
	b->nworkers = nworkers;
	b->lease_bytes = lease;
	b->lease = (pc_u128)lease * 8u * hz;
	b->depth = (pc_u128)(lim->burst_bytes - (uint64_t)lease * nworkers) * 8u * hz;
	b->z = (pc_u128)now * lim->cap_bps;
	return 0;
}

/* z this large is never below now * rate: the budget holds nothing */
#define HELD (~(pc_u128)0)

void
pc_budget_hold(struct pc_budget *b)
{
	b->z = HELD;
}

void
pc_budget_start(struct pc_budget *b, uint64_t now)
{
	if (load_z(b) == HELD)
		(void)__sync_bool_compare_and_swap(&b->z, HELD, (pc_u128)now * b->rate_bps);
}

pc_u128
pc_budget_level(const struct pc_budget *b, uint64_t now)
{
	return level_at(b, load_z(b), (pc_u128)now * b->rate_bps);
}

/*
 * Tops the lease up with up to one lease of tokens, at least what the frame
 * lacks. The lease left after the frame is then below one lease: that is
 * what bounds the tokens all workers hold between takes (the proof's N x
 * lease).
 */
bool
pc_lease_take(struct pc_lease *l, struct pc_budget *b, uint64_t now, pc_u128 cost)
{
	pc_u128 need = cost - l->tokens;
	pc_u128 now_bt = (pc_u128)now * b->rate_bps;
	pc_u128 floor = now_bt > b->depth ? now_bt - b->depth : 0;
	pc_u128 z = load_z(b);

	if (need > b->lease)
		return false;
	for (;;) {
		pc_u128 level = level_at(b, z, now_bt);
		if (level < need)
			return false;
		pc_u128 grant = level < b->lease ? level : b->lease;
		pc_u128 nz = (z > floor ? z : floor) + grant;
		pc_u128 seen = __sync_val_compare_and_swap(&b->z, z, nz);
		if (seen == z) {
			l->tokens = l->tokens + grant - cost;
			return true;
		}
		z = seen;
	}
}
