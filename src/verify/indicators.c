/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The indicators (docs/report.md): per pod, the windows near the cap and
 * the longest run of them, the periodicity of its series, the symmetry of
 * its two directions, and the most bytes that could have left it. Figures
 * to look into, not findings: they never fail a verification.
 */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "indicators.h"
#include "verify.h"

#include "limit.h"
#include "series.h"
#include "totals.h"
#include "verify_impl.h"

static double
autocorr(const double *x, size_t n, double mean, double var, size_t lag)
{
	double s = 0;

	for (size_t i = 0; i + lag < n; i++)
		s += (x[i] - mean) * (x[i + lag] - mean);
	return s / ((double)n * var);
}

void
pc_periodicity(const double *x, size_t n, struct pc_periodicity *out)
{
	double mean = 0, var = 0, low = 1, prev, cur;
	size_t max_lag = n / 3 < PC_PERIODIC_MAX_LAG ? n / 3 : PC_PERIODIC_MAX_LAG;

	memset(out, 0, sizeof(*out));
	out->n = n;
	if (n == 0)
		return;
	for (size_t i = 0; i < n; i++)
		mean += x[i];
	mean /= (double)n;
	for (size_t i = 0; i < n; i++)
		var += (x[i] - mean) * (x[i] - mean);
	var /= (double)n;
	out->mean = mean;
	out->cv = mean > 0 ? sqrt(var) / mean : 0;
	if (n < PC_PERIODIC_MIN_LEN || var <= 0 || max_lag < 3)
		return;
	prev = autocorr(x, n, mean, var, 1);
	low = prev;
	cur = autocorr(x, n, mean, var, 2);
	for (size_t lag = 2; lag <= max_lag; lag++) {
		double next = lag < max_lag ? autocorr(x, n, mean, var, lag + 1) : -2;

		/* a local peak that rose out of a dip: a period, not a trend */
		if (cur >= prev && cur >= next && cur - low >= PC_PERIODIC_MIN_DIP &&
		    cur > out->r) {
			out->lag = lag;
			out->r = cur;
		}
		if (cur < low)
			low = cur;
		prev = cur;
		cur = next;
	}
	out->periodic =
	    out->lag > 0 && out->r >= PC_PERIODIC_MIN_R && out->cv >= PC_PERIODIC_MIN_CV;
}

double
pc_symmetry(double a, double b)
{
	double hi = a > b ? a : b, lo = a > b ? b : a;

	return hi > 0 ? lo / hi : 1;
}

void
pcv_indicators(const struct pc_verify *v, uint32_t pod, struct pcv_pod_ind *ind)
{
	const struct podsum *ps = &v->pods[pod];
	const struct pc_verify_totals *tt = pcv_totals_of(v, pod);
	struct pcv_unaccounted u;
	double *x = malloc(PCV_RECENT * sizeof(*x));

	memset(ind, 0, sizeof(*ind));
	ind->id = ps->id;
	for (int d = 0; d < PC_DIR_COUNT; d++) {
		const struct pcv_track *t = pcv_series_track(v, pod, d);
		struct pcv_dir_ind *di = &ind->dir[d];

		if (t == NULL)
			continue;
		di->records = t->records;
		di->hot = t->hot;
		di->longest_run = t->longest_run;
		di->run_start_ns = t->longest_run_start_ns;
		di->run_end_ns = t->longest_run_end_ns;
		di->window_ns = t->window_ns;
		di->cap_bps = t->max_cap_bps;
		di->burst_bytes = t->max_burst_bytes;
		di->peak_bps = t->peak_bps;
		di->logged_ns = t->logged_ns;
		if (t->logged_ns > 0)
			di->mean_bps = (double)tt[d].bytes * 8e9 / (double)t->logged_ns;
		size_t n = t->nrecent < PCV_RECENT ? (size_t)t->nrecent : PCV_RECENT;
		if (x != NULL) {
			for (size_t i = 0; i < n; i++)
				x[i] = t->recent[(t->nrecent - n + i) % PCV_RECENT];
			pc_periodicity(x, n, &di->period);
		}
	}
	free(x);
	ind->symmetry = pc_symmetry((double)tt[PC_DIR_UP].bytes, (double)tt[PC_DIR_DOWN].bytes);

	/* what left: the passed count of every window, and what the cap allows when none counted */
	const struct pcv_dir_ind *up = &ind->dir[PC_DIR_UP];
	pcv_unaccounted_parts(v, &u);
	ind->passed_up = tt[PC_DIR_UP].bytes;
	ind->unaccounted_ns = u.total_ns;
	ind->stretches = v->found.evsum[PC_VE_GAP].count + v->found.evsum[PC_VE_RESTART].count +
	    v->found.evsum[PC_VE_CLOCK].count;
	ind->bounded = !u.saturated;
	ind->unlogged =
	    (u128)up->cap_bps * u.total_ns / 8 / NS + (u128)ind->stretches * up->burst_bytes;
	ind->bound = ind->passed_up + ind->unlogged;
}

/* Seconds to move `bytes` at `bps`; negative when the rate is 0 (never). */
double
pcv_transfer_s(uint64_t bytes, double bps)
{
	return bps > 0 ? (double)bytes * 8 / bps : -1;
}
