/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A CLOCK record's own fields after its links (docs/log-format.md,
 * "CLOCK"): the real time from the cursor to window_start_ns, and how far
 * the wall clock stepped against it, as two's complement.
 */
#include "record_impl.h"

static size_t
clock_size(const struct pc_record *r)
{
	(void)r;
	return 2 * 8;
}

static void
clock_put(struct rec_wr *w, const struct pc_record *r)
{
	rec_put_u64(w, r->clock.elapsed_ns);
	rec_put_u64(w, (uint64_t)r->clock.step_ns);
}

static void
clock_get(struct rec_rd *rd, struct pc_record *r)
{
	r->clock.elapsed_ns = rec_get_u64(rd);
	r->clock.step_ns = (int64_t)rec_get_u64(rd);
}

/* -2^63 has no opposite: a step the verifier could not negate is refused. */
static int
clock_check(const struct pc_record *r, struct pc_error *err)
{
	if (r->clock.step_ns == INT64_MIN)
		return pc_error_set(err, "clock step out of range");
	return 0;
}

const struct rec_tail rec_clock_tail = {
	.size = clock_size,
	.put = clock_put,
	.get = clock_get,
	.check = clock_check,
};
