/* SPDX-License-Identifier: BSD-3-Clause */
#include <stdint.h>

#include "base/clock.h"

#include "log.h"
#include "wallclock.h"

void
pc_wallclock_init(struct pc_wallclock *c, uint64_t mono_ns, uint64_t wall_ns)
{
	c->base = (int64_t)(wall_ns - mono_ns);
	c->shift = 0;
	c->skew = 0;
}

uint64_t
pc_wallclock_sequence(const struct pc_wallclock *c, uint64_t m, uint64_t window_ns)
{
	return (uint64_t)((int64_t)m + c->base) / window_ns;
}

uint64_t
pc_wallclock_boundary(const struct pc_wallclock *c, uint64_t seq, uint64_t window_ns)
{
	return (uint64_t)((int64_t)(seq * window_ns) - c->base);
}

uint64_t
pc_wallclock_label(const struct pc_wallclock *c, uint64_t seq, uint64_t window_ns)
{
	return (seq + c->shift) * window_ns;
}

int64_t
pc_wallclock_check(struct pc_wallclock *c, uint64_t seq, uint64_t m, uint64_t window_ns,
		   uint64_t wall_ns)
{
	int64_t wall = (int64_t)wall_ns;
	int64_t label_now = (int64_t)m + c->base + (int64_t)(c->shift * window_ns);
	int64_t drift = wall - label_now;
	int64_t step = drift - c->skew;

	if (step <= PC_CLOCK_STEP_TOLERANCE_NS && step >= -PC_CLOCK_STEP_TOLERANCE_NS)
		return 0;
	uint64_t wall_seq = (uint64_t)wall / window_ns;
	if (wall > 0 && wall_seq > seq + c->shift)
		c->shift = wall_seq - seq;
	c->skew = wall - ((int64_t)m + c->base + (int64_t)(c->shift * window_ns));
	return step;
}

void
pc_wallclock_log(const struct pc_wallclock *c, int64_t step, uint64_t label_ns)
{
	char when[PC_UTC_LEN];

	pc_utc_format(label_ns, when, sizeof(when));
	PC_LOG(WARNING, "the wall clock stepped %s by %.3f s: windows go on from %s "
	       "(labels %.3f s %s the wall clock), recorded in the ledger\n",
	       step < 0 ? "back" : "forward", (double)(step < 0 ? -step : step) / 1e9, when,
	       (double)(c->skew < 0 ? -c->skew : c->skew) / 1e9, c->skew < 0 ? "ahead of" : "behind");
}
