/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The indicators (docs/report.md) on synthetic series: a train of bursts
 * is periodic and a steady trickle, noise or a slow trend is not; and on
 * signed logs, the windows near the cap, their longest run, the symmetry
 * and the exfiltration bound are the figures the windows make.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <sodium.h>

#include "verify/indicators.h"
#include "verify/verify.h"

#include "verify/series.h"
#include "testlog.h"

#define N 1440 /* a day of 60-s windows */

static double xs[N];

/* A deterministic noise in [0, 1): the tests need no randomness of the machine. */
static double
noise(uint64_t *s)
{
	*s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
	return (double)(*s >> 11) / (double)(1ULL << 53);
}

static void
test_burst_train_is_periodic(void **state)
{
	struct pc_periodicity p;
	uint64_t s = 1;

	(void)state;
	/* a sync every 30 windows that fills two of them, a trickle between */
	for (size_t i = 0; i < N; i++)
		xs[i] = (i % 30 < 2 ? 0.95 : 0.02) + 0.01 * noise(&s);
	pc_periodicity(xs, N, &p);
	assert_true(p.periodic);
	assert_int_equal(p.lag, 30);
	assert_true(p.r > 0.9);
	assert_int_equal(p.n, N);
}

static void
test_jittered_train_is_periodic(void **state)
{
	struct pc_periodicity p;
	uint64_t s = 7;

	(void)state;
	/* bursts every 17 windows, of varying size, on a noisy background */
	for (size_t i = 0; i < N; i++)
		xs[i] = 0.1 * noise(&s) + (i % 17 == 0 ? 0.6 + 0.3 * noise(&s) : 0);
	pc_periodicity(xs, N, &p);
	assert_true(p.periodic);
	assert_int_equal(p.lag, 17);
}

static void
test_steady_trickle_is_not(void **state)
{
	struct pc_periodicity p;
	uint64_t s = 3;

	(void)state;
	for (size_t i = 0; i < N; i++)
		xs[i] = 0.3 + 0.005 * noise(&s);
	pc_periodicity(xs, N, &p);
	assert_false(p.periodic);
	assert_true(p.cv < PC_PERIODIC_MIN_CV);

	/* exactly constant: no variance at all */
	for (size_t i = 0; i < N; i++)
		xs[i] = 0.3;
	pc_periodicity(xs, N, &p);
	assert_false(p.periodic);
	assert_int_equal(p.lag, 0);
}

static void
test_noise_and_trend_are_not(void **state)
{
	struct pc_periodicity p;
	uint64_t s = 11;

	(void)state;
	for (size_t i = 0; i < N; i++)
		xs[i] = noise(&s);
	pc_periodicity(xs, N, &p);
	assert_false(p.periodic);

	/* a slow daily rise and fall: neighbours agree, but nothing repeats within the lags */
	for (size_t i = 0; i < N; i++)
		xs[i] = 0.5 + 0.4 * sin(2 * M_PI * (double)i / N);
	pc_periodicity(xs, N, &p);
	assert_false(p.periodic);
}

static void
test_too_short_says_nothing(void **state)
{
	struct pc_periodicity p;

	(void)state;
	for (size_t i = 0; i < PC_PERIODIC_MIN_LEN - 1; i++)
		xs[i] = i % 3 == 0 ? 1 : 0;
	pc_periodicity(xs, PC_PERIODIC_MIN_LEN - 1, &p);
	assert_false(p.periodic);
	assert_int_equal(p.lag, 0);
	pc_periodicity(xs, 0, &p);
	assert_false(p.periodic);
}

static void
test_symmetry(void **state)
{
	(void)state;
	assert_true(pc_symmetry(5, 5) == 1);
	assert_true(pc_symmetry(0, 5) == 0);
	assert_true(pc_symmetry(0, 0) == 1);
	assert_true(fabs(pc_symmetry(1, 4) - 0.25) < 1e-12);
	assert_true(fabs(pc_symmetry(4, 1) - 0.25) < 1e-12);
}

/* ---- on signed logs ---- */

/* Up: at the cap in windows 10-12 and 20-24 (8 windows, the longest run 5); 1000 bytes else. */
static uint64_t
runs_up(uint64_t w)
{
	return (w >= 10 && w <= 12) || (w >= 20 && w <= 24) ? PCT_CAP_WINDOW : 1000;
}

static uint64_t
runs_down(uint64_t w)
{
	(void)w;
	return 4000;
}

static void
test_near_cap_runs(void **state)
{
	struct pct_log lg = { .windows = 100, .up = runs_up, .down = runs_down };
	struct pcv_pod_ind ind;

	(void)state;
	struct pc_verify *v = pct_verify(&lg, 0);
	assert_int_equal(pc_verify_nfailures(v), 0);
	pcv_indicators(v, 0, &ind);
	assert_string_equal(ind.id, "pod-a");
	assert_int_equal(ind.dir[PC_DIR_UP].records, 100);
	assert_int_equal(ind.dir[PC_DIR_UP].hot, 8);
	assert_int_equal(ind.dir[PC_DIR_UP].longest_run, 5);
	assert_int_equal(ind.dir[PC_DIR_UP].run_start_ns, PCT_T0 + 20 * PCT_WIN);
	assert_int_equal(ind.dir[PC_DIR_UP].run_end_ns, PCT_T0 + 25 * PCT_WIN);
	assert_int_equal(ind.dir[PC_DIR_DOWN].hot, 0);
	assert_int_equal(ind.dir[PC_DIR_DOWN].longest_run, 0);
	/* 8 windows at the cap and 92 of 1000 bytes, against 100 of 4000 */
	double up = 8.0 * PCT_CAP_WINDOW + 92 * 1000, down = 100 * 4000.0;
	assert_true(fabs(ind.symmetry - down / up) < 1e-9);
	pc_verify_free(v);
}

/* A burst train in the up direction of a log: flagged through the verifier as well. */
static uint64_t
train_up(uint64_t w)
{
	return w % 20 == 0 ? PCT_CAP_WINDOW : 10000 + w % 7;
}

static void
test_train_through_the_verifier(void **state)
{
	struct pct_log lg = { .windows = 600, .up = train_up, .down = runs_down };
	struct pcv_pod_ind ind;

	(void)state;
	struct pc_verify *v = pct_verify(&lg, 0);
	pcv_indicators(v, 0, &ind);
	assert_true(ind.dir[PC_DIR_UP].period.periodic);
	assert_int_equal(ind.dir[PC_DIR_UP].period.lag, 20);
	assert_false(ind.dir[PC_DIR_DOWN].period.periodic);

	/* the text report says so, in its own section before the result line */
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	assert_non_null(f);
	pc_verify_print_text(v, f);
	assert_int_equal(fclose(f), 0);
	const char *sec = strstr(text, "\nindicators (not findings; docs/report.md):\n");
	assert_non_null(sec);
	assert_non_null(strstr(sec,
			       "pod-a up: 30 of 600 windows at >= 90% of the cap, longest run 1; "
			       "repeats every 20 windows (r "));
	assert_non_null(strstr(sec, "): PERIODIC\n  pod-a down: 0 of 600 windows"));
	assert_true(sec < strstr(text, "\nverified: "));
	free(text);
	pc_verify_free(v);
}

/* The bound: what the windows passed, plus cap x the time unlogged and a burst per stretch. */
static void
test_exfiltration_bound(void **state)
{
	struct pct_log lg = {
		.windows = 50, .up = runs_up, .down = runs_down, .gap_at = 30, .gap_windows = 10
	};
	struct pcv_pod_ind ind;
	uint64_t passed = 0;

	(void)state;
	struct pc_verify *v = pct_verify(&lg, 140000000000ULL);
	assert_int_equal(pc_verify_nfailures(v), 0);
	for (uint64_t w = 0; w < 50; w++)
		passed += runs_up(w);
	pcv_indicators(v, 0, &ind);
	assert_true(ind.bounded);
	assert_true(ind.passed_up == passed);
	assert_int_equal(ind.unaccounted_ns, 10 * PCT_WIN);
	assert_int_equal(ind.stretches, 1);
	/* 10 windows at the cap, and the bucket full at the gap's start */
	assert_true(ind.unlogged == (unsigned __int128)10 * PCT_CAP_WINDOW + PCT_BURST);
	assert_true(ind.bound == passed + ind.unlogged);
	/* 140 GB at the cap of 1 Gbit/s: 1120 s */
	assert_true(fabs(pcv_transfer_s(140000000000ULL, (double)ind.dir[PC_DIR_UP].cap_bps) -
			 1120) < 1e-9);
	assert_true(pcv_transfer_s(1, 0) < 0);
	pc_verify_free(v);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_burst_train_is_periodic),
		cmocka_unit_test(test_jittered_train_is_periodic),
		cmocka_unit_test(test_steady_trickle_is_not),
		cmocka_unit_test(test_noise_and_trend_are_not),
		cmocka_unit_test(test_too_short_says_nothing),
		cmocka_unit_test(test_symmetry),
		cmocka_unit_test(test_near_cap_runs),
		cmocka_unit_test(test_train_through_the_verifier),
		cmocka_unit_test(test_exfiltration_bound),
	};

	return cmocka_run_group_tests(tests, pct_setup, pct_teardown);
}
