/* SPDX-License-Identifier: BSD-3-Clause */
/* A SYNC's fields from a window's polls (src/daemon/sync_record.c): what the verifier is shown. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "daemon/sync_record.h"

static struct pc_clock_reading
reading(int64_t offset)
{
	struct pc_clock_reading r = { .offset = offset,
				      .path_delay = 3 << 16,
				      .steps_removed = 1,
				      .gm_present = true,
				      .ingress_ns = 1,
				      .nports = 1,
				      .port_states = { 9 } }; /* SLAVE */
	memset(r.clock, 0x01, 8);
	memset(r.gm, 0x02, 8);
	pc_clock_bound(&r);
	assert_true(r.bounded);
	return r;
}

/* Three polls: every one bounded is locked; the worst offset is the largest magnitude. */
static void
test_locked(void **state)
{
	struct pc_clock_acc a;
	struct pc_clock_window w;
	struct pc_record_sync s;
	struct pc_clock_reading r1 = reading(5 << 16), r2 = reading(-(9 << 16));

	(void)state;
	pc_clock_acc_init(&a);
	pc_clock_acc_add(&a, 10, PC_CLOCK_OK, &r1);
	pc_clock_acc_add(&a, 20, PC_CLOCK_OK, &r2);
	pc_clock_acc_add(&a, 30, PC_CLOCK_OK, &r1);
	pc_clock_acc_take(&a, 100, &w);
	pc_sync_fill(&s, &w);
	assert_int_equal(s.discipline, PC_SYNC_PTP4L);
	assert_int_equal(s.flags, PC_SYNC_LOCKED | PC_SYNC_GM);
	assert_int_equal(s.polls, 3);
	assert_int_equal(s.readings, 3);
	assert_int_equal(s.bounded, 3);
	assert_true(s.offset == -(9 << 16));
	assert_true(s.bound_ns == 12);
	assert_true(s.path_delay == 3 << 16);
	assert_memory_equal(s.gm, r1.gm, 8);
	assert_int_equal(s.steps_removed, 1);
	assert_int_equal(s.port_state, 9);
}

/* A poll that failed, or a reading without a bound, and the window is not locked. */
static void
test_not_locked(void **state)
{
	struct pc_clock_acc a;
	struct pc_clock_window w;
	struct pc_record_sync s;
	struct pc_clock_reading r = reading(2 << 16);

	(void)state;
	pc_clock_acc_init(&a);
	pc_clock_acc_add(&a, 10, PC_CLOCK_OK, &r);
	pc_clock_acc_add(&a, 20, PC_CLOCK_TIMEOUT, NULL);
	pc_clock_acc_take(&a, 100, &w);
	pc_sync_fill(&s, &w);
	assert_int_equal(s.flags, PC_SYNC_GM);
	assert_int_equal(s.polls, 2);
	assert_int_equal(s.readings, 1);
	assert_int_equal(s.bounded, 1);
	/* nothing read at all: no figures, and the source is the last one read before */
	pc_clock_acc_add(&a, 110, PC_CLOCK_DOWN, NULL);
	pc_clock_acc_take(&a, 200, &w);
	pc_sync_fill(&s, &w);
	assert_int_equal(s.flags, PC_SYNC_GM);
	assert_int_equal(s.readings, 0);
	assert_true(s.offset == 0 && s.bound_ns == 0);
	assert_memory_equal(s.gm, r.gm, 8);
	/* and no poll at all (no ptp4l yet): the source unknown */
	pc_clock_acc_init(&a);
	pc_clock_acc_take(&a, 300, &w);
	pc_sync_fill(&s, &w);
	assert_int_equal(s.flags, 0);
	assert_int_equal(s.polls, 0);
}

/* -2^63 has no magnitude: the record carries one more, which the decoder accepts. */
static void
test_extreme(void **state)
{
	struct pc_clock_window w = { .polls = 1, .results[PC_CLOCK_OK] = 1 };
	struct pc_record_sync s;

	(void)state;
	w.worst_offset = INT64_MIN;
	w.have_latest = true;
	w.latest.path_delay = INT64_MIN;
	pc_sync_fill(&s, &w);
	assert_true(s.offset == INT64_MIN + 1 && s.path_delay == INT64_MIN + 1);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_locked),
		cmocka_unit_test(test_not_locked),
		cmocka_unit_test(test_extreme),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
