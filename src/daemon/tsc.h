/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The TSC, the buckets' clock and the workers' boundary clock, against
 * CLOCK_MONOTONIC, the windows' clock.
 */
#ifndef PODCAPD_TSC_H
#define PODCAPD_TSC_H

#include <stdint.h>

/*
 * The TSC frequency measured against CLOCK_MONOTONIC_RAW, with a 20 ppm
 * margin upwards (so every cap comes out a little lower, never higher).
 * Takes about half a second; run once at start.
 */
uint64_t pc_tsc_hz(void);
/*
 * The TSC at monotonic time m, for a TSC of frequency hz; now if m has
 * passed. Reads both clocks now: call it anew for every boundary.
 */
uint64_t pc_tsc_at(uint64_t m, uint64_t hz);

#endif /* PODCAPD_TSC_H */
