/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The shared budget and its leases (lease.h): lease sizes, exact single
 * worker arithmetic, the tokens leases can strand, and workers on real
 * threads racing on one budget, every frame they pass checked against the
 * burst + cap x T envelope by brute force over all intervals.
 *
 * The threads read one shared clock that each attempt advances, so a run
 * is a fixed amount of work rather than of wall time: a thread that the
 * scheduler holds back carries a stale time into its next take, as a worker
 * whose TSC read is older than another's does. PODCAP_TEST_SEED=<n>
 * repeats a run's frame sizes.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "shape/lease.h"

#define HZ_NS     1000000000ULL
#define MBPS      1000000ULL
#define MAX_FRAME 1522u
#define MIN_FRAME 64u

struct pass {
	uint64_t t;
	uint32_t bytes;
};

struct passlog {
	struct pass *v;
	size_t n, cap;
};

static uint64_t seed;

static struct pc_limits
limits(uint64_t cap_bps, uint64_t burst)
{
	struct pc_limits lim = { .cap_bps = cap_bps, .burst_bytes = burst, .mode = PC_MODE_POLICE };
	return lim;
}

static int
by_time(const void *a, const void *b)
{
	const struct pass *x = a, *y = b;
	return x->t < y->t ? -1 : x->t > y->t;
}

/*
 * Every interval [t_i, t_j] between two pass times, all passes at those
 * times included: 8 * hz * bytes <= 8 * hz * burst + rate * (t_j - t_i).
 * Returns the number of intervals that break it (0 is the envelope held).
 */
static size_t
envelope_violations(struct pass *v, size_t n, uint64_t rate, uint64_t burst, uint64_t hz)
{
	size_t bad = 0;

	qsort(v, n, sizeof(*v), by_time);
	for (size_t i = 0; i < n; i++) {
		if (i > 0 && v[i - 1].t == v[i].t)
			continue; /* the interval starts with every pass at t_i */
		unsigned __int128 sum = 0;
		for (size_t j = i; j < n; j++) {
			sum += v[j].bytes;
			if (j + 1 < n && v[j + 1].t == v[j].t)
				continue; /* ... and ends with every pass at t_j */
			unsigned __int128 lhs = sum * 8u * hz;
			unsigned __int128 rhs = (unsigned __int128)burst * 8u * hz +
			    (unsigned __int128)rate * (v[j].t - v[i].t);
			if (lhs > rhs)
				bad++;
		}
	}
	return bad;
}

static void
log_pass(struct passlog *l, uint64_t t, uint32_t bytes)
{
	assert_true(l->n < l->cap);
	l->v[l->n].t = t;
	l->v[l->n].bytes = bytes;
	l->n++;
}

/* ---- sizes and set-up ------------------------------------------------ */

static void
test_lease_sizes(void **state)
{
	(void)state;
	struct pc_limits lim = limits(1000 * MBPS, 1000000);
	/* a quarter of the burst over the workers */
	assert_int_equal(pc_lease_bytes(&lim, 2, MAX_FRAME), 125000);
	/* at most PC_LEASE_MAX_BYTES */
	lim.burst_bytes = 100000000;
	assert_int_equal(pc_lease_bytes(&lim, 2, MAX_FRAME), PC_LEASE_MAX_BYTES);
	/* at least one frame */
	lim.burst_bytes = 4 * MAX_FRAME;
	assert_int_equal(pc_lease_bytes(&lim, 2, MAX_FRAME), MAX_FRAME);
	/* two leases of a frame and a frame more do not fit three frames */
	lim.burst_bytes = 3 * MAX_FRAME - 1;
	assert_int_equal(pc_lease_bytes(&lim, 2, MAX_FRAME), 0);
	assert_int_equal(pc_lease_bytes(&lim, 0, MAX_FRAME), 0);
}

static void
test_init_refuses_small_burst(void **state)
{
	(void)state;
	struct pc_limits lim = limits(1000 * MBPS, 4000);
	struct pc_budget b;
	struct pc_error err;

	assert_int_equal(pc_budget_init(&b, &lim, 4, MAX_FRAME, HZ_NS, 0, &err), -1);
	assert_string_equal(err.msg,
			    "a burst of 4000 bytes cannot be shared by 4 workers: it must "
			    "hold a lease of at least 1522 bytes for each, and one frame more");
}

/* ---- one worker, exact ------------------------------------------------ */

/* 8 Mbit/s at hz = 1e9: one byte a microsecond. */
static void
test_exact_single(void **state)
{
	(void)state;
	struct pc_limits lim = limits(8 * MBPS, 100000);
	struct pc_budget b;
	struct pc_lease l = { 0 };

	assert_int_equal(pc_budget_init(&b, &lim, 1, MAX_FRAME, HZ_NS, 1000, NULL), 0);
	assert_int_equal(b.lease_bytes, 25000);
	/* starts empty */
	assert_false(pc_lease_admit(&l, &b, 1000, MIN_FRAME));
	/* 999 bytes have accrued after 999 us, not 1000 */
	assert_false(pc_lease_admit(&l, &b, 1000 + 999000, 1000));
	assert_true(pc_lease_admit(&l, &b, 1000 + 1000000, 1000));
	/* the take handed out what the budget held: the frame's 1000 bytes */
	assert_true(l.tokens == 0);
	assert_true(pc_budget_level(&b, 1000 + 1000000) == 0);

	/* a long idle: the budget holds its depth, the burst less one lease */
	uint64_t t = 10ULL * HZ_NS;
	assert_true(pc_budget_level(&b, t) == (pc_u128)75000 * 8 * HZ_NS);
	unsigned passed = 0;
	while (pc_lease_admit(&l, &b, t, 1000))
		passed++;
	assert_int_equal(passed, 75);
	/* and then exactly the rate: 1500 bytes in 1.5 ms */
	assert_false(pc_lease_admit(&l, &b, t + 1499999, 1500));
	assert_true(pc_lease_admit(&l, &b, t + 1500000, 1500));
}

/*
 * A run passed from the lease at once against the same frames one by one:
 * the same frames pass and lease and budget end identical, with the run
 * falling back to one by one whenever the lease does not cover it.
 */
static void
test_run_matches_one_by_one(void **state)
{
	(void)state;
	struct pc_limits lim = limits(1000 * MBPS, 1000000);
	struct pc_budget brun, bone;
	struct pc_lease lrun = { 0 }, lone = { 0 };
	uint64_t t = 1000, rs = 0x9e3779b97f4a7c15ULL;
	unsigned whole = 0, split = 0;

	assert_int_equal(pc_budget_init(&brun, &lim, 2, MAX_FRAME, HZ_NS, t, NULL), 0);
	assert_int_equal(pc_budget_init(&bone, &lim, 2, MAX_FRAME, HZ_NS, t, NULL), 0);
	for (unsigned r = 0; r < 20000; r++) {
		uint32_t len[32];
		uint64_t bytes = 0;
		rs = rs * 6364136223846793005ULL + 1442695040888963407ULL;
		unsigned n = 1 + (unsigned)(rs >> 59);
		t += (rs >> 20) % 200000;
		for (unsigned k = 0; k < n; k++) {
			rs = rs * 6364136223846793005ULL + 1442695040888963407ULL;
			len[k] = MIN_FRAME + (uint32_t)((rs >> 33) % (MAX_FRAME - MIN_FRAME + 1));
			bytes += len[k];
		}
		bool passed = pc_lease_admit_run(&lrun, &brun, bytes);
		for (unsigned k = 0; k < n; k++) {
			bool one = pc_lease_admit(&lone, &bone, t, len[k]);
			assert_true(!passed || one);
			if (!passed)
				assert_int_equal(pc_lease_admit(&lrun, &brun, t, len[k]), one);
		}
		whole += passed;
		split += !passed;
		assert_true(lrun.tokens == lone.tokens);
		assert_true(pc_budget_level(&brun, t) == pc_budget_level(&bone, t));
	}
	print_message("  %u runs passed from the lease whole, %u one by one\n", whole, split);
	/* both ways were taken, or the comparison proved nothing */
	assert_true(whole > 1000 && split > 1000);
	/* at the edge: a lease of exactly the run's cost passes it, one byte more does not */
	lrun.tokens = (pc_u128)3000 * 8 * HZ_NS;
	assert_false(pc_lease_admit_run(&lrun, &brun, 3001));
	assert_true(pc_lease_admit_run(&lrun, &brun, 3000));
	assert_true(lrun.tokens == 0);
}

/* A reload's budget holds nothing until the first worker that takes its table starts it. */
static void
test_hold_start(void **state)
{
	(void)state;
	struct pc_limits lim = limits(8 * MBPS, 100000);
	struct pc_budget b;
	struct pc_lease l = { 0 };

	assert_int_equal(pc_budget_init(&b, &lim, 2, MAX_FRAME, HZ_NS, 0, NULL), 0);
	pc_budget_hold(&b);
	uint64_t t = 100ULL * HZ_NS;
	assert_true(pc_budget_level(&b, t) == 0);
	assert_false(pc_lease_admit(&l, &b, t, MIN_FRAME));
	pc_budget_start(&b, t);
	/* a second worker's start, later: the first one's instant stands */
	pc_budget_start(&b, t + HZ_NS);
	assert_true(pc_budget_level(&b, t) == 0);
	assert_true(pc_budget_level(&b, t + 1000000) == (pc_u128)1000 * 8 * HZ_NS);
	assert_true(pc_lease_admit(&l, &b, t + 1000000, 1000));
	assert_false(pc_lease_admit(&l, &b, t + 1000000, 1));
}

/* ---- what leases strand ------------------------------------------------ */

/*
 * Two workers keep the part of a lease their last frame left; the budget
 * then refills to its depth and both drain everything at one instant. The
 * sum is the burst at most: this is why the budget's depth is the burst
 * less one lease per worker. A third worker that holds nothing gets only
 * the budget's depth.
 */
static void
test_stranded_leases(void **state)
{
	(void)state;
	struct pc_limits lim = limits(8 * MBPS, 200000);
	struct pc_budget b;
	struct pc_lease w[3];
	uint64_t passed = 0;

	memset(w, 0, sizeof(w));
	assert_int_equal(pc_budget_init(&b, &lim, 3, MAX_FRAME, HZ_NS, 0, NULL), 0);
	uint32_t lease = b.lease_bytes; /* 200000 / 4 / 3 */
	assert_int_equal(lease, 16666);
	uint64_t t = 10ULL * HZ_NS;
	for (unsigned i = 0; i < 2; i++)
		assert_true(pc_lease_admit(&w[i], &b, t, 100));
	assert_true(w[0].tokens == (pc_u128)(lease - 100) * 8 * HZ_NS);
	t += 10ULL * HZ_NS;
	for (unsigned i = 0; i < 3; i++)
		while (pc_lease_admit(&w[i], &b, t, 1))
			passed++;
	assert_int_equal(passed, 2 * (lease - 100) + (200000 - 3 * lease));
	assert_true(passed <= lim.burst_bytes);
}

/* ---- real threads --------------------------------------------------------- */

struct race {
	struct pc_budget b;
	uint64_t clock; /* ns; every attempt advances it */
	uint64_t step;
	unsigned attempts;
};

struct worker {
	struct race *r;
	struct passlog log;
	uint64_t rng;
	uint64_t bytes;
	uint64_t last_t;
	bool monotonic;
	struct pc_lease lease; /* what the worker holds when it stops */
};

static uint32_t
frame_size(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return MIN_FRAME + (uint32_t)(*x % (MAX_FRAME - MIN_FRAME + 1));
}

static void *
worker_run(void *arg)
{
	struct worker *w = arg;

	w->monotonic = true;
	for (unsigned i = 0; i < w->r->attempts; i++) {
		uint64_t now = __atomic_fetch_add(&w->r->clock, w->r->step, __ATOMIC_RELAXED);
		uint32_t len = frame_size(&w->rng);
		if (now < w->last_t)
			w->monotonic = false;
		w->last_t = now;
		if (pc_lease_admit(&w->lease, &w->r->b, now, len)) {
			if (w->log.cap != 0)
				log_pass(&w->log, now, len);
			w->bytes += len;
		}
	}
	return NULL;
}

/*
 * nworkers threads on one budget of `cap` and `burst`. The demand is far
 * above the cap, so the budget binds throughout; the passes must keep to
 * the envelope, and all but what the leases may strand and a margin for
 * threads the scheduler held back must have passed.
 */
static void
race(unsigned nworkers, uint64_t cap, uint64_t burst, unsigned attempts, uint64_t step,
     bool envelope)
{
	struct race *r = calloc(1, sizeof(*r));
	struct worker w[8];
	pthread_t th[8];

	assert_non_null(r);
	assert_true(nworkers <= 8);
	struct pc_limits lim = limits(cap, burst);
	assert_int_equal(pc_budget_init(&r->b, &lim, nworkers, MAX_FRAME, HZ_NS, 0, NULL), 0);
	r->step = step;
	r->attempts = attempts;
	for (unsigned i = 0; i < nworkers; i++) {
		memset(&w[i], 0, sizeof(w[i]));
		w[i].r = r;
		w[i].rng = seed + i * 0x9e3779b97f4a7c15ULL;
		w[i].log.cap = envelope ? attempts : 0;
		w[i].log.v = malloc(sizeof(struct pass) * (envelope ? attempts : 1));
		assert_non_null(w[i].log.v);
	}
	for (unsigned i = 0; i < nworkers; i++)
		assert_int_equal(pthread_create(&th[i], NULL, worker_run, &w[i]), 0);
	for (unsigned i = 0; i < nworkers; i++)
		assert_int_equal(pthread_join(th[i], NULL), 0);

	size_t total = 0;
	uint64_t bytes = 0;
	pc_u128 held = 0;
	for (unsigned i = 0; i < nworkers; i++) {
		assert_true(w[i].monotonic);
		total += w[i].log.n;
		bytes += w[i].bytes;
		held += w[i].lease.tokens;
	}
	/*
	 * Conservation: with the demand above the cap the budget never fills to
	 * its depth, so nothing is clamped away and every token earned is
	 * either passed, held in a lease or still in the budget. A take lost to
	 * a race (two workers handed the same tokens) breaks the equality.
	 */
	pc_u128 earned_bt = (pc_u128)cap * r->clock;
	assert_true((pc_u128)bytes * 8u * HZ_NS + held + pc_budget_level(&r->b, r->clock) ==
		    earned_bt);
	if (!envelope) {
		printf("# %u workers: %" PRIu64 " bytes passed, every token accounted for\n",
		       nworkers, bytes);
		for (unsigned i = 0; i < nworkers; i++)
			free(w[i].log.v);
		free(r);
		return;
	}
	struct pass *all = malloc(sizeof(*all) * (total + 1));
	assert_non_null(all);
	size_t k = 0;
	for (unsigned i = 0; i < nworkers; i++) {
		memcpy(all + k, w[i].log.v, sizeof(*all) * w[i].log.n);
		k += w[i].log.n;
	}
	size_t bad = envelope_violations(all, total, cap, burst, HZ_NS);
	uint64_t earned = (uint64_t)((unsigned __int128)cap * r->clock / (8 * HZ_NS));
	printf("# %u workers: %zu frames, %" PRIu64 " bytes passed of %" PRIu64
	       " earned, lease %u, %zu intervals over the envelope\n",
	       nworkers, total, bytes, earned, r->b.lease_bytes, bad);
	assert_int_equal(bad, 0);
	/* the budget binds: it did not hand out the cap twice, nor starve */
	assert_true(bytes <= earned + burst);
	assert_true(bytes + (uint64_t)nworkers * r->b.lease_bytes >= earned / 2);
	/* a checker that cannot fail proves nothing: one byte too many must show */
	all[total].t = all[total - 1].t;
	all[total].bytes = (uint32_t)burst + 1;
	assert_true(envelope_violations(all, total + 1, cap, burst, HZ_NS) > 0);

	for (unsigned i = 0; i < nworkers; i++)
		free(w[i].log.v);
	free(all);
	free(r);
}

/*
 * 200 Mbit/s, a 256 KiB burst, 500 ns of clock an attempt: 12.5 bytes of
 * tokens an attempt against 793 bytes asked on average. Some 6000 frames
 * pass, few enough for the all-intervals check.
 */
static void
test_race_two(void **state)
{
	(void)state;
	race(2, 200 * MBPS, 262144, 200000, 500, true);
}

static void
test_race_four(void **state)
{
	(void)state;
	race(4, 200 * MBPS, 262144, 100000, 500, true);
}

/* A burst as small as four workers allow: leases of one frame, takes on almost every frame. */
static void
test_race_small_leases(void **state)
{
	(void)state;
	race(4, 50 * MBPS, 5 * MAX_FRAME + 1, 100000, 500, true);
}

/*
 * Takes as often as they can be: leases of one frame and the cap just below
 * the demand, so that most frames need a take and most takes go through,
 * on every thread at once. Too many passes for the all-intervals check;
 * the conservation of tokens is what a lost take would break.
 */
static void
test_race_takes(void **state)
{
	(void)state;
	/* 700 bytes of tokens an attempt against 793 asked; leases of one frame, a depth of 12 */
	race(4, 50 * MBPS, 16 * MAX_FRAME, 500000, 112000, false);
}

int
main(void)
{
	const char *s = getenv("PODCAP_TEST_SEED");
	seed = s != NULL ? strtoull(s, NULL, 10) : (uint64_t)time(NULL);
	if (seed == 0)
		seed = 1;
	printf("# seed %" PRIu64 "\n", seed);

	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lease_sizes),
		cmocka_unit_test(test_init_refuses_small_burst),
		cmocka_unit_test(test_exact_single),
		cmocka_unit_test(test_run_matches_one_by_one),
		cmocka_unit_test(test_hold_start),
		cmocka_unit_test(test_stranded_leases),
		cmocka_unit_test(test_race_two),
		cmocka_unit_test(test_race_four),
		cmocka_unit_test(test_race_small_leases),
		cmocka_unit_test(test_race_takes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
