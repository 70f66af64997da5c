/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The window promise's limiter (window_budget.h): random arrivals, police
 * and shape, checked against a brute force over every interval of one
 * window; a steady stream at the cap is not held below cap x (1 - 1/k);
 * it starts full; reconfiguration keeps what passed.
 *
 * Time is injected at hz = 1e9, 2.9e9 and 1e9 + 7. Random runs print their
 * seed; PODCAP_TEST_SEED=<n> repeats one.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "shape/bucket.h"
#include "shape/counters.h"
#include "base/units.h"
#include "shape/window_budget.h"

#define HZ_NS      1000000000ULL
#define HZ_TSC     2900000000ULL
#define HZ_ODD     1000000007ULL
#define MIN_FRAME  64u
#define MAX_FRAME  1522u
#define MAX_EVENTS 4096

static const uint64_t all_hz[] = { HZ_NS, HZ_TSC, HZ_ODD };
static uint64_t seed;

static uint64_t
rnd(void)
{
	/* splitmix64: the same sequence everywhere for a seed */
	uint64_t z = (seed += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static uint64_t
rnd_in(uint64_t lo, uint64_t hi)
{
	return lo + rnd() % (hi - lo + 1);
}

static uint64_t
ticks_of_ns(uint64_t ns, uint64_t hz)
{
	return (uint64_t)((pc_u128)ns * hz / PC_NS_PER_SEC);
}

struct pass {
	uint64_t tick, bytes;
};

/*
 * The most bytes any interval of window_ns of real time holds: for each
 * pass, the passes at most that long before it (x with (t - x) / hz <
 * window), summed the slow way.
 */
static uint64_t
brute_max(const struct pass *p, size_t n, uint64_t window_ns, uint64_t hz)
{
	uint64_t most = 0;

	for (size_t i = 0; i < n; i++) {
		uint64_t sum = 0;

		for (size_t j = 0; j <= i; j++)
			if ((pc_u128)(p[i].tick - p[j].tick) * PC_NS_PER_SEC <
			    (pc_u128)window_ns * hz)
				sum += p[j].bytes;
		if (sum > most)
			most = sum;
	}
	return most;
}

/* A limiter as podcapd runs one: a bucket of its own limits, and the window. */
struct sim {
	struct pc_bucket b;
	struct pc_window_budget w;
	uint64_t queue[MAX_EVENTS], qt[MAX_EVENTS];
	size_t qh, qn;
	struct pass passed[MAX_EVENTS];
	size_t npassed;
	uint64_t dropped, late;
};

static void
drain(struct sim *s, uint64_t now, uint64_t delay_ticks, uint64_t step)
{
	while (s->qn > 0 && pc_wb_release(&s->w, &s->b, now, s->queue[s->qh])) {
		/* queued only when it could leave within the delay: it left by then, or one poll after */
		if (now - s->qt[s->qh] > delay_ticks + step)
			s->late++;
		s->passed[s->npassed++] = (struct pass){ now, s->queue[s->qh] };
		s->qh++;
		s->qn--;
	}
}

/*
 * One random run: arrivals in bursts or spread out, a poll every `step`
 * ticks as the worker's loop; the passes then against the brute force.
 */
static void
random_run(enum pc_mode mode, uint64_t hz)
{
	static struct sim s;
	uint64_t run_seed = seed;
	uint64_t window_ns = rnd_in(1, 20) * 100 * 1000 * 1000ULL; /* 0.1 to 2 s */
	uint64_t frames_per_window = rnd_in(2, 60);
	uint64_t cap = frames_per_window * 800 * 8 * PC_NS_PER_SEC / window_ns + rnd_in(0, 999);
	struct pc_limits wl = { .cap_bps = cap,
				.mode = mode,
				.queue_delay_ns = rnd_in(0, window_ns / 2),
				.promise = PC_PROMISE_WINDOW };
	/* a bucket that does not bind: the window alone is under test */
	struct pc_limits bl = { .cap_bps = cap * 50,
				.burst_bytes = 100 * 1000 * 1000,
				.mode = mode,
				.queue_delay_ns = wl.queue_delay_ns };
	uint64_t budget = pc_wb_budget_bytes(cap, window_ns);
	uint64_t step = ticks_of_ns(rnd_in(1, 20) * 1000 * 1000, hz); /* 1 to 20 ms a poll */
	uint64_t delay = ticks_of_ns(wl.queue_delay_ns, hz);
	uint64_t now = rnd() >> rnd_in(1, 40), arrivals = rnd_in(50, 1500);
	bool bursty = rnd() & 1;

	memset(&s, 0, sizeof(s));
	pc_bucket_init(&s.b, &bl, hz, now);
	s.b.level = s.b.depth;
	pc_wb_init(&s.w, &wl, window_ns, hz, now);
	/* as if the window before had passed nothing: the full start is tested on its own */
	memset(s.w.ring, 0, sizeof(s.w.ring));
	s.w.sum = 0;
	for (uint64_t a = 0; a < arrivals;) {
		uint64_t n = bursty ? rnd_in(1, 64) : rnd_in(0, 2);

		for (uint64_t i = 0; i < n && a < arrivals; i++, a++) {
			uint64_t bytes = rnd_in(MIN_FRAME, MAX_FRAME);

			switch (pc_wb_admit(&s.w, &s.b, now, bytes)) {
			case PC_VERDICT_PASS:
				s.passed[s.npassed++] = (struct pass){ now, bytes };
				break;
			case PC_VERDICT_QUEUE:
				s.queue[s.qh + s.qn] = bytes;
				s.qt[s.qh + s.qn] = now;
				s.qn++;
				break;
			case PC_VERDICT_DROP:
				s.dropped++;
				break;
			}
		}
		drain(&s, now, delay, step);
		/* now and then a pause of half a window to a window and a half: polls go on */
		uint64_t until = now +
		    (bursty && rnd_in(0, 9) == 0 ? ticks_of_ns(window_ns, hz) * rnd_in(1, 3) / 2
						 : step);
		for (now += step; now < until && s.qn > 0; now += step)
			drain(&s, now, delay, step);
		now = now < until ? until : now;
	}
	for (int i = 0; i < 1000 && s.qn > 0; i++, now += step)
		drain(&s, now, delay, step);

	uint64_t most = brute_max(s.passed, s.npassed, window_ns, hz);
	if (most > budget || s.late > 0 || s.qn > 0)
		fail_msg("seed %" PRIu64 " mode %d hz %" PRIu64 ": %" PRIu64
			 " bytes in one window, "
			 "budget %" PRIu64 "; %" PRIu64 " frames left late, %zu stuck",
			 run_seed, mode, hz, most, budget, s.late, s.qn);
	/* the promise is not kept by passing nothing: some run of traffic reaches the budget's edge */
	assert_true(s.npassed > 0);
}

static void
test_random_against_brute_force(void **state)
{
	(void)state;
	printf("seed %" PRIu64 "\n", seed);
	for (int i = 0; i < 3000; i++)
		random_run(i % 2 ? PC_MODE_SHAPE : PC_MODE_POLICE, all_hz[i % 3]);
}

/*
 * Frames of `bytes` at exactly `rate_bps`, police, from a limiter that has
 * waited out its full start: the bytes passed and dropped over `windows`.
 */
static void
steady(uint64_t cap, uint64_t rate_bps, uint64_t window_ns, uint64_t hz, uint64_t bytes,
       unsigned windows, uint64_t *passed, uint64_t *dropped, uint64_t *offered)
{
	struct pc_limits wl = { .cap_bps = cap,
				.mode = PC_MODE_POLICE,
				.promise = PC_PROMISE_WINDOW };
	struct pc_limits bl = { .cap_bps = cap * 2,
				.burst_bytes = UINT32_MAX,
				.mode = PC_MODE_POLICE };
	struct pc_window_budget w;
	struct pc_bucket b;
	uint64_t t0 = 12345, wt = ticks_of_ns(window_ns, hz);
	/* warm up two windows (the full start is over), then measure */
	uint64_t from = t0 + 2 * wt, to = from + (uint64_t)windows * wt;

	pc_bucket_init(&b, &bl, hz, t0);
	pc_wb_init(&w, &wl, window_ns, hz, t0);
	*passed = *dropped = *offered = 0;
	for (uint64_t i = 0;; i++) {
		uint64_t t = t0 + (uint64_t)((pc_u128)i * bytes * 8 * hz / rate_bps);

		if (t >= to)
			break;
		enum pc_verdict v = pc_wb_admit(&w, &b, t, bytes);
		if (t < from)
			continue;
		*offered += bytes;
		if (v == PC_VERDICT_PASS)
			*passed += bytes;
		else
			*dropped += bytes;
	}
}

static void
test_steady_stream(void **state)
{
	const uint64_t window_ns = PC_NS_PER_SEC, cap = 200 * 1000 * 1000; /* 25 MB a window */

	(void)state;
	for (size_t h = 0; h < 3; h++) {
		uint64_t passed, dropped, offered, budget = pc_wb_budget_bytes(cap, window_ns);
		uint64_t rate = cap - cap / PC_WB_K;

		/* at cap x (1 - 1/k): never held back */
		steady(cap, rate, window_ns, all_hz[h], 64, 20, &passed, &dropped, &offered);
		printf("hz %" PRIu64 ": at cap x (1 - 1/k) %" PRIu64 " of %" PRIu64
		       " bytes passed\n",
		       all_hz[h], passed, offered);
		assert_int_equal(dropped, 0);
		/* at the cap: passes at least cap x (1 - 1/k) over the run, less one budget at its edge */
		steady(cap, cap, window_ns, all_hz[h], 64, 40, &passed, &dropped, &offered);
		printf("hz %" PRIu64 ": at the cap %" PRIu64 " of %" PRIu64
		       " bytes passed (%.4f)\n",
		       all_hz[h], passed, offered, (double)passed / (double)offered);
		assert_true(passed + budget >= offered - offered / PC_WB_K);
		assert_true(passed <= 40 * budget);
		assert_true(dropped > 0);
	}
}

/* An 8 Mbit/s police pod with a 1 s window from tick t0, and a full bucket that never binds. */
static void
small_pod(struct pc_window_budget *w, struct pc_bucket *b, struct pc_limits *wl, uint64_t hz,
	  uint64_t t0)
{
	const struct pc_limits bl = { .cap_bps = 1000000000,
				      .burst_bytes = UINT32_MAX,
				      .mode = PC_MODE_POLICE };

	*wl = (struct pc_limits){ .cap_bps = 8000000,
				  .mode = PC_MODE_POLICE,
				  .promise = PC_PROMISE_WINDOW };
	pc_bucket_init(b, &bl, hz, 0);
	b->level = b->depth;
	pc_wb_init(w, wl, PC_NS_PER_SEC, hz, t0);
}

/* It starts full: nothing passes for a window (and a slot) after init, then the budget does. */
static void
test_starts_full(void **state)
{
	struct pc_limits wl;

	(void)state;
	for (size_t h = 0; h < 3; h++) {
		uint64_t hz = all_hz[h], t0 = 777, wt = ticks_of_ns(PC_NS_PER_SEC, hz);
		struct pc_window_budget w;
		struct pc_bucket b;
		uint64_t sum = 0;

		small_pod(&w, &b, &wl, hz, t0);
		assert_int_equal(w.budget, 1000000);
		assert_int_equal(pc_wb_admit(&w, &b, t0 + wt - 1, 64), PC_VERDICT_DROP);
		assert_int_equal(
		    pc_wb_admit(&w, &b, (t0 / w.slot_ticks + PC_WB_RING) * w.slot_ticks - 1, 64),
		    PC_VERDICT_DROP);
		uint64_t t = (t0 / w.slot_ticks + PC_WB_RING) * w.slot_ticks;
		while (pc_wb_admit(&w, &b, t, 1000) == PC_VERDICT_PASS)
			sum += 1000;
		assert_int_equal(sum, 1000000);
	}
}

/* A reload keeps what passed: a smaller budget holds back until enough ages out; no wrap. */
static void
test_reconfigure(void **state)
{
	struct pc_limits wl;
	struct pc_window_budget w;
	struct pc_bucket b;
	uint64_t hz = HZ_NS, t;

	(void)state;
	small_pod(&w, &b, &wl, hz, 0);
	t = PC_WB_RING * w.slot_ticks;
	for (int i = 0; i < 800; i++)
		assert_int_equal(pc_wb_admit(&w, &b, t, 1000), PC_VERDICT_PASS);
	wl.cap_bps = 4000000; /* 500000 bytes a window, 800000 passed */
	pc_wb_reconfigure(&w, &wl, PC_NS_PER_SEC, hz);
	assert_int_equal(w.budget, 500000);
	assert_false(pc_wb_fits(&w, 1));
	assert_int_equal(pc_wb_admit(&w, &b, t + 1, 64), PC_VERDICT_DROP);
	/* the slot of those 800 frames ages out k + 1 slots later */
	assert_int_equal(pc_wb_admit(&w, &b, t + PC_WB_RING * w.slot_ticks - 1, 64),
			 PC_VERDICT_DROP);
	assert_int_equal(pc_wb_admit(&w, &b, t + PC_WB_RING * w.slot_ticks, 64), PC_VERDICT_PASS);
}

/* A clock that steps back frees nothing; a jump of 2^63 ticks neither wraps nor overflows. */
static void
test_clock_edges(void **state)
{
	struct pc_limits wl;
	struct pc_window_budget w;
	struct pc_bucket b;
	uint64_t t = UINT64_MAX / 2;

	(void)state;
	small_pod(&w, &b, &wl, HZ_TSC, t);
	assert_int_equal(pc_wb_admit(&w, &b, t - 1000000, 64), PC_VERDICT_DROP);
	assert_int_equal(pc_wb_admit(&w, &b, 0, 64), PC_VERDICT_DROP);
	assert_int_equal(pc_wb_admit(&w, &b, UINT64_MAX, 64), PC_VERDICT_PASS);
	assert_int_equal(w.sum, 64);
	assert_int_equal(w.next_tick, UINT64_MAX);
	assert_int_equal(pc_wb_admit(&w, &b, UINT64_MAX, 64), PC_VERDICT_PASS);
	assert_int_equal(pc_wb_budget_bytes(UINT64_MAX, UINT64_MAX), UINT64_MAX);
}

/* What docs/bucket.md states: bytes a pod and direction, and at PC_MAX_PODS pods. */
static void
assert_same_limiter(const struct pc_window_budget *aw, const struct pc_bucket *ab,
		    const struct pc_window_budget *bw, const struct pc_bucket *bb)
{
	assert_true(ab->level == bb->level);
	assert_int_equal(ab->last, bb->last);
	assert_int_equal(ab->backlog_frames, bb->backlog_frames);
	assert_int_equal(ab->backlog_bytes, bb->backlog_bytes);
	assert_memory_equal(aw, bw, sizeof(*aw));
}

/*
 * pc_wb_admit_run on runs of frames of one arrival time, falling back to one
 * by one when it refuses (as the worker does), against the same frames
 * admitted one by one with pc_wb_admit: the same frames pass and the bucket
 * and the window stay identical, police and shape, with the window binding
 * and the bucket binding by turns and the queue drained now and then. A run
 * it passes is one every frame of which would have passed.
 */
static void
test_admit_run_matches_one_by_one(void **state)
{
	(void)state;
	static const enum pc_mode modes[] = { PC_MODE_POLICE, PC_MODE_SHAPE };
	unsigned whole = 0, split = 0, by_window = 0;

	for (size_t h = 0; h < 3; h++)
		for (size_t m = 0; m < 2; m++) {
			uint64_t hz = all_hz[h], window_ns = 100 * 1000 * 1000; /* 0.1 s */
			struct pc_limits lim = { .cap_bps = 400 * 1000 * 1000,
						 .burst_bytes = 64 * 1024,
						 .mode = modes[m],
						 .queue_delay_ns = 2 * 1000 * 1000,
						 .promise = PC_PROMISE_WINDOW };
			struct pc_window_budget rw, ow;
			struct pc_bucket rb, ob;
			uint64_t t = 1000, fifo[4096];
			unsigned head = 0, tail = 0;

			pc_bucket_init(&rb, &lim, hz, t);
			pc_bucket_init(&ob, &lim, hz, t);
			pc_wb_init(&rw, &lim, window_ns, hz, t);
			/* nothing passed before: the full start has its own test */
			memset(rw.ring, 0, sizeof(rw.ring));
			rw.sum = 0;
			ow = rw;
			for (unsigned r = 0; r < 20000; r++) {
				unsigned n = (unsigned)rnd_in(1, 32);
				uint64_t len[32], bytes = 0;
				bool all_pass = true;

				t += ticks_of_ns(rnd_in(0, 400) * 1000, hz);
				for (unsigned k = 0; k < n; k++)
					bytes += len[k] = rnd_in(MIN_FRAME, MAX_FRAME);
				bool fits = (pc_wb_advance(&ow, t), pc_wb_fits(&ow, bytes));
				bool passed = pc_wb_admit_run(&rw, &rb, t, bytes);
				for (unsigned k = 0; k < n; k++) {
					enum pc_verdict v = pc_wb_admit(&ow, &ob, t, len[k]);
					all_pass = all_pass && v == PC_VERDICT_PASS;
					if (v == PC_VERDICT_QUEUE)
						fifo[tail++ % 4096] = len[k];
					if (!passed)
						assert_int_equal(pc_wb_admit(&rw, &rb, t, len[k]),
								 v);
				}
				assert_true(passed == all_pass);
				whole += passed;
				split += !passed;
				by_window += !passed && !fits;
				while (head != tail && rnd_in(0, 3) != 0) {
					uint64_t l = fifo[head % 4096];
					bool out = pc_wb_release(&ow, &ob, t, l);
					assert_int_equal(pc_wb_release(&rw, &rb, t, l), out);
					if (!out)
						break;
					head++;
				}
				assert_same_limiter(&rw, &rb, &ow, &ob);
			}
		}
	print_message("  %u runs passed whole, %u one by one (%u held by the window)\n", whole,
		      split, by_window);
	/* each way was taken, and the window refused some: else the comparison proved nothing */
	assert_true(whole > 1000 && split > 1000 && by_window > 100);
}

static void
test_memory(void **state)
{
	size_t one = sizeof(struct pc_window_budget);

	(void)state;
	printf("window budget: %zu bytes a pod and direction, %zu bytes for %u pods\n", one,
	       one * PC_DIR_COUNT * PC_MAX_PODS, PC_MAX_PODS);
	assert_int_equal(one, 8 * (6 + PC_WB_RING));
	assert_int_equal(one * PC_DIR_COUNT * PC_MAX_PODS, 18350080);
}

int
main(void)
{
	const char *env = getenv("PODCAP_TEST_SEED");
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_random_against_brute_force),
		cmocka_unit_test(test_steady_stream),
		cmocka_unit_test(test_starts_full),
		cmocka_unit_test(test_reconfigure),
		cmocka_unit_test(test_clock_edges),
		cmocka_unit_test(test_admit_run_matches_one_by_one),
		cmocka_unit_test(test_memory),
	};

	seed = env != NULL ? strtoull(env, NULL, 10) : (uint64_t)time(NULL);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
