/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Indicators over a pod's windows: figures that may point at training
 * across pods or at weights leaving, none of them proof (docs/report.md).
 * Pure functions of a series, so that each can be tested on a synthetic one.
 */
#ifndef PODCAP_INDICATORS_H
#define PODCAP_INDICATORS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Below this the series is steady and no period is looked for. */
#define PC_PERIODIC_MIN_CV 0.1
/* The autocorrelation a peak must reach to flag the series periodic. */
#define PC_PERIODIC_MIN_R 0.5
/* How far the autocorrelation must have dipped below the peak before it. */
#define PC_PERIODIC_MIN_DIP 0.3
#define PC_PERIODIC_MAX_LAG 360 /* windows: 6 hours of 60-s windows */
#define PC_PERIODIC_MIN_LEN 24  /* fewer windows: too few to tell a period from chance */

struct pc_periodicity {
	size_t n;        /* windows looked at */
	double mean, cv; /* of the series; cv the standard deviation over the mean */
	size_t lag;      /* the strongest repeating lag in windows, 0 when none */
	double r;        /* the autocorrelation at that lag, in [-1, 1] */
	bool periodic;   /* lag > 0, r >= PC_PERIODIC_MIN_R, and the series is not steady */
};

/*
 * The strongest period of x[0..n): the lag from 2 to min(n / 3,
 * PC_PERIODIC_MAX_LAG) at which the autocorrelation of the series (mean
 * removed, normalised by its variance) has a local peak that rose at least
 * PC_PERIODIC_MIN_DIP above its lowest value at a shorter lag. A slow trend
 * or a steady rate has no such peak; a train of bursts every L windows peaks
 * at L. Lag 1 is not a period: neighbouring windows of any smooth load agree;
 * and a period must repeat at least three times in the series.
 */
void pc_periodicity(const double *x, size_t n, struct pc_periodicity *out);

/* min(a, b) / max(a, b): 1 when the two directions carry as much, 0 when one carries none. */
double pc_symmetry(double a, double b);

#endif /* PODCAP_INDICATORS_H */
