/* SPDX-License-Identifier: BSD-3-Clause */
#include <stdint.h>
#include <time.h>

#include <rte_cycles.h>

#include "base/clock.h"
#include "base/units.h"

#include "log.h"
#include "tsc.h"

/*
 * The buckets count TSC ticks, so their rate is only as right as the TSC
 * frequency they are given. DPDK 22.11 rounds its estimate to 10 MHz, which
 * can put a cap 0.25 % above what was declared. Measure it against
 * CLOCK_MONOTONIC_RAW instead, and lean to the safe side: a frequency a
 * little too high makes every cap a little lower, never higher.
 */
#define TSC_CALIBRATION_NS (250 * 1000 * 1000ull)
#define TSC_MARGIN_PPM 20

uint64_t
pc_tsc_hz(void)
{
	struct timespec a, b;
	uint64_t best = 0;

	for (int i = 0; i < 2; i++) {
		clock_gettime(CLOCK_MONOTONIC_RAW, &a);
		uint64_t c0 = rte_rdtsc_precise();
		struct timespec nap = { .tv_sec = 0, .tv_nsec = (long)TSC_CALIBRATION_NS };
		nanosleep(&nap, NULL);
		clock_gettime(CLOCK_MONOTONIC_RAW, &b);
		uint64_t c1 = rte_rdtsc_precise();
		uint64_t ns = (uint64_t)(b.tv_sec - a.tv_sec) * PC_NS_PER_SEC +
			      (uint64_t)b.tv_nsec - (uint64_t)a.tv_nsec;
		uint64_t hz = (uint64_t)((unsigned __int128)(c1 - c0) * PC_NS_PER_SEC / ns);
		if (hz > best)
			best = hz;
	}
	best += best / 1000000 * TSC_MARGIN_PPM;
	PC_LOG(INFO, "TSC: %lu Hz measured (+%u ppm margin), EAL estimate %lu Hz\n",
	       (unsigned long)best, TSC_MARGIN_PPM, (unsigned long)rte_get_tsc_hz());
	return best;
}

/*
 * From a (TSC, monotonic) pair read now: the tightest of a few, so that a
 * preemption between the reads cannot shift it. Taken anew for every
 * boundary, so the TSC and CLOCK_MONOTONIC (which NTP slews) drift apart by
 * what one window allows, not over a whole run.
 */
uint64_t
pc_tsc_at(uint64_t m, uint64_t hz)
{
	uint64_t tsc = 0, mono = 0, span = UINT64_MAX;

	for (int i = 0; i < 4; i++) {
		uint64_t m0 = pc_mono_ns();
		uint64_t t = rte_rdtsc_precise();
		uint64_t m1 = pc_mono_ns();
		if (m1 - m0 < span) {
			span = m1 - m0;
			tsc = t;
			mono = m0 + span / 2;
		}
	}
	if (m <= mono)
		return tsc;
	return tsc + (uint64_t)((unsigned __int128)(m - mono) * hz / PC_NS_PER_SEC);
}
