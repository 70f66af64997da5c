/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * One pod-direction's cap shared by the workers of an uplink that spreads
 * its frames over several RX queues (RSS): a shared budget from which each
 * worker takes small leases with one compare-and-swap, and spends its lease
 * with plain arithmetic of its own.
 *
 * The budget is a token bucket kept as one number, z, in bit-ticks (bits x
 * hz, as in bucket.h): at tick `now` it holds min(depth, now * rate - z).
 * Taking g bit-ticks sets z to max(z, now * rate - depth) + g, only if the
 * bucket held g. z only grows, so the update is one 128-bit compare-and-swap
 * that any number of workers may race on: no lock, no waiting on another
 * worker, and a worker's clock a little behind another's only makes it see
 * fewer tokens.
 *
 * Guarantee (docs/design.md "One cap across workers" has the proof): with N
 * workers and leases of at most `lease` bytes, the budget's depth is the
 * pod's burst less N x lease, and over any interval of length T the bytes
 * all workers together pass are at most burst + cap x T. Tokens in a lease
 * a worker does not spend are never spent by another: set apart in the
 * depth, they cost the pod at most N x lease of its burst, and nothing of
 * its long-run rate while its traffic keeps each queue it uses busy.
 *
 * Police mode only: a shaping queue is one worker's, and its delay bound
 * would need the other workers' backlogs.
 */
#ifndef PODCAP_LEASE_H
#define PODCAP_LEASE_H

#include <stdbool.h>
#include <stdint.h>

#include "bucket.h"
#include "podmap/config.h"
#include "base/error.h"

/* The largest lease a worker takes, in bytes, however deep the burst. */
#define PC_LEASE_MAX_BYTES (256u * 1024u)

/*
 * Shared by the workers. z is the only field written after init; it sits
 * alone in its cache line so that the workers' takes do not disturb the
 * read-only fields next to it.
 */
struct pc_budget {
	pc_u128 z
	    __attribute__((aligned(64))); /* CAS by any worker; may be read torn (see lease.c) */
	pc_u128 depth __attribute__((aligned(64))); /* (burst - nworkers x lease) * 8 * hz */
	pc_u128 lease; /* lease_bytes * 8 * hz: the most one take hands out */
	uint64_t rate_bps;
	uint64_t hz;
	uint32_t lease_bytes;
	unsigned nworkers;
};

/* One worker's share: private to it. */
struct pc_lease {
	pc_u128
	    tokens; /* bit-ticks taken from the budget, not spent yet; < lease after each take */
};

/*
 * The lease size for a pod of `lim` on an uplink of `nworkers` workers that
 * passes frames of up to max_frame bytes: a quarter of the burst split over
 * the workers, at most PC_LEASE_MAX_BYTES, at least max_frame. 0 when the
 * burst cannot hold nworkers leases of max_frame bytes.
 */
uint32_t pc_lease_bytes(const struct pc_limits *lim, unsigned nworkers, uint32_t max_frame);

/*
 * Starts the budget empty at `now` (as a bucket starts: a restart never
 * hands a pod a fresh burst). -1 with err set when pc_lease_bytes() is 0.
 */
int pc_budget_init(struct pc_budget *b, const struct pc_limits *lim, unsigned nworkers,
		   uint32_t max_frame, uint64_t hz, uint64_t now, struct pc_error *err);

/*
 * A budget prepared ahead of the instant it comes in force (a reload's,
 * built while the old table still runs) holds nothing until started; the
 * first pc_budget_start() starts it empty at its `now`, later ones change
 * nothing. Any worker may call it, concurrently.
 */
void pc_budget_hold(struct pc_budget *b);
void pc_budget_start(struct pc_budget *b, uint64_t now);

/* Bit-ticks the budget holds at `now` (for display and tests; one snapshot). */
pc_u128 pc_budget_level(const struct pc_budget *b, uint64_t now);

/* The slow path of pc_lease_admit: tops the lease up from the budget. */
bool pc_lease_take(struct pc_lease *l, struct pc_budget *b, uint64_t now, pc_u128 cost);

/*
 * May a frame of `bytes` bytes pass at `now`? Takes its tokens from the
 * worker's lease, and the lease from the budget when it runs short: a
 * compare-and-swap every lease_bytes bytes or so, none for the frames in
 * between. false: the cap holds it (nothing is taken).
 */
static inline bool
pc_lease_admit(struct pc_lease *l, struct pc_budget *b, uint64_t now, uint64_t bytes)
{
	pc_u128 cost = (pc_u128)bytes * 8u * b->hz;
	if (__builtin_expect(l->tokens >= cost, 1)) {
		l->tokens -= cost;
		return true;
	}
	return pc_lease_take(l, b, now, cost);
}

/*
 * A run of frames of one pod, `bytes` in all: true, with their tokens
 * taken, when the lease alone covers the run (one by one, each would pass
 * from the lease and none would touch the budget); false, with nothing
 * taken, otherwise, and each must then go through pc_lease_admit().
 */
static inline bool
pc_lease_admit_run(struct pc_lease *l, const struct pc_budget *b, uint64_t bytes)
{
	pc_u128 cost = (pc_u128)bytes * 8u * b->hz;
	if (l->tokens < cost)
		return false;
	l->tokens -= cost;
	return true;
}

#endif /* PODCAP_LEASE_H */
