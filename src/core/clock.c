/* SPDX-License-Identifier: BSD-3-Clause */
#include <inttypes.h>
#include <stdio.h>
#include <time.h>

#include "podcap/clock.h"
#include "podcap/units.h"

static uint64_t
read_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * PC_NS_PER_SEC + (uint64_t)ts.tv_nsec;
}

uint64_t
pc_mono_ns(void)
{
	return read_ns(CLOCK_MONOTONIC);
}

uint64_t
pc_now_ns(void)
{
	return read_ns(CLOCK_REALTIME);
}

void
pc_utc_format(uint64_t ns, char *buf, size_t len)
{
	time_t secs = (time_t)(ns / PC_NS_PER_SEC);
	uint64_t frac = ns % PC_NS_PER_SEC;
	struct tm tm;
	char base[32];
	char f[16];

	gmtime_r(&secs, &tm);
	strftime(base, sizeof(base), "%Y-%m-%dT%H:%M:%S", &tm);
	if (frac == 0) {
		snprintf(buf, len, "%sZ", base);
		return;
	}
	snprintf(f, sizeof(f), "%09" PRIu64, frac);
	for (int i = 8; i > 0 && f[i] == '0'; i--)
		f[i] = '\0';
	snprintf(buf, len, "%s.%sZ", base, f);
}
