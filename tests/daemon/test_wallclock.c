/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The wall clock against the label timeline (src/daemon/wallclock.c), one
 * table of scenarios: at each boundary the control thread compares a wall
 * clock reading with the labels, and each row says what step it must find
 * and how many windows the labels must then be ahead of the sequence.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <inttypes.h>
#include <stdbool.h>

#include <cmocka.h>

#include "daemon/wallclock.h"

#define NS 1000000000ll
#define W ((uint64_t)(60 * NS))              /* the window */
#define E0 28333333ull                        /* the window in progress at start */
#define WALL0 (E0 * W + (uint64_t)(25 * NS))  /* the wall clock at start: 25 s into it */
#define MONO0 ((uint64_t)(5000 * NS))         /* CLOCK_MONOTONIC at start */
#define CHECKS_MAX 4

/*
 * One comparison, at the boundary `boundary` windows after the first, made
 * `late_ns` after it (the control thread was held up), with the wall clock
 * `wall_ns` away from the course it had at start (+: ahead), or reading
 * `wall_at_ns` itself when that is not 0.
 */
struct check {
	uint64_t boundary;      /* 0 ends a scenario */
	uint64_t late_ns;
	int64_t wall_ns;
	uint64_t wall_at_ns;
	int64_t step_ns;        /* expected: the step found, 0 for none */
	uint64_t shift;         /* expected: windows the labels are ahead of the sequence */
};

struct scenario {
	const char *what;
	struct check checks[CHECKS_MAX];
};

/* The label timeline's own course at boundary b: where a wall clock that never stepped reads. */
#define AT(b) ((int64_t)((E0 + (b)) * W))

static const struct scenario scenarios[] = {
	{ "no step", {
		{ .boundary = 1 },
		{ .boundary = 2 },
	} },
	{ "drift within the tolerance, either way, up to exactly 1 s", {
		{ .boundary = 1, .wall_ns = 900000000 },
		{ .boundary = 2, .wall_ns = -900000000 },
		{ .boundary = 3, .wall_ns = NS },
		{ .boundary = 4, .wall_ns = -NS },
	} },
	{ "forward by 1 s and 1 ns: a step, too small to jump a label", {
		{ .boundary = 1, .wall_ns = NS + 1, .step_ns = NS + 1 },
		/* compared with where it was last, not with the start */
		{ .boundary = 2, .wall_ns = NS + 1 },
	} },
	{ "back by 1 s and 1 ns", {
		{ .boundary = 1, .wall_ns = -NS - 1, .step_ns = -NS - 1 },
		{ .boundary = 2, .wall_ns = -NS - 1 },
	} },
	{ "forward by ten windows: the labels jump ten", {
		{ .boundary = 1, .wall_ns = 600 * NS, .step_ns = 600 * NS, .shift = 10 },
		{ .boundary = 2, .wall_ns = 600 * NS, .shift = 10 },
	} },
	{ "forward by ten and a half windows: whole windows only", {
		{ .boundary = 1, .wall_ns = 630 * NS, .step_ns = 630 * NS, .shift = 10 },
		{ .boundary = 2, .wall_ns = 630 * NS, .shift = 10 },
	} },
	{ "back by five windows: labels go on, and catching up is a step forward", {
		{ .boundary = 1, .wall_ns = -300 * NS, .step_ns = -300 * NS },
		{ .boundary = 2, .wall_ns = -300 * NS },
		{ .boundary = 3, .wall_ns = 0, .step_ns = 300 * NS },
		{ .boundary = 4 },
	} },
	{ "forward then back: labels already published stay", {
		{ .boundary = 1, .wall_ns = 600 * NS, .step_ns = 600 * NS, .shift = 10 },
		{ .boundary = 2, .wall_ns = 0, .step_ns = -600 * NS, .shift = 10 },
		{ .boundary = 3, .wall_ns = 0, .shift = 10 },
	} },
	{ "repeated steps forward", {
		{ .boundary = 1, .wall_ns = 120 * NS, .step_ns = 120 * NS, .shift = 2 },
		{ .boundary = 2, .wall_ns = 240 * NS, .step_ns = 120 * NS, .shift = 4 },
		{ .boundary = 3, .wall_ns = 360 * NS, .step_ns = 120 * NS, .shift = 6 },
	} },
	{ "a slow drift is measured from the last step, so it adds up to one", {
		{ .boundary = 1, .wall_ns = 400000000 },
		{ .boundary = 2, .wall_ns = 800000000 },
		{ .boundary = 3, .wall_ns = 1200000000, .step_ns = 1200000000 },
		{ .boundary = 4, .wall_ns = 1600000000 },
	} },
	{ "compared three windows late, no step", {
		{ .boundary = 1, .late_ns = 3 * W + 5 * NS },
	} },
	{ "compared three windows late, forward by ten", {
		{ .boundary = 1, .late_ns = 3 * W + 5 * NS, .wall_ns = 600 * NS, .step_ns = 600 * NS,
		  .shift = 10 },
		{ .boundary = 5, .wall_ns = 600 * NS, .shift = 10 },
	} },
	{ "set back to 1970: a step back, labels go on", {
		{ .boundary = 1, .wall_at_ns = 1, .step_ns = 1 - AT(1) },
		{ .boundary = 2, .wall_at_ns = 1 + W },
	} },
	{ "a reading past 2262 (negative as int64) never jumps the labels", {
		{ .boundary = 1, .wall_at_ns = UINT64_MAX - 5, .step_ns = -6 - AT(1) },
	} },
};

static void
run_scenario(const struct scenario *sc)
{
	struct pc_wallclock clk;
	uint64_t last_label = 0;

	pc_wallclock_init(&clk, MONO0, WALL0);
	for (unsigned i = 0; i < CHECKS_MAX && sc->checks[i].boundary != 0; i++) {
		const struct check *c = &sc->checks[i];
		uint64_t next = E0 + c->boundary;
		uint64_t m = pc_wallclock_boundary(&clk, next, W) + c->late_ns;
		uint64_t wall = c->wall_at_ns != 0 ? c->wall_at_ns
						   : (uint64_t)((int64_t)(m - MONO0 + WALL0) + c->wall_ns);
		/* as the control thread does: the first window still ahead when it runs late */
		uint64_t seq = pc_wallclock_sequence(&clk, m, W);
		if (seq < next)
			seq = next;

		int64_t step = pc_wallclock_check(&clk, seq, m, W, wall);
		uint64_t label = pc_wallclock_label(&clk, seq, W);
		if (step != c->step_ns || clk.shift != c->shift || label <= last_label) {
			print_error("%s, check %u: step %" PRId64 " (want %" PRId64 "), shift %" PRIu64
				    " (want %" PRIu64 "), label %" PRIu64 " after %" PRIu64 "\n",
				    sc->what, i + 1, step, c->step_ns, clk.shift, c->shift, label,
				    last_label);
			fail();
		}
		assert_int_equal(label, (seq + c->shift) * W);
		last_label = label;
	}
}

static void
test_check_table(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(scenarios) / sizeof(scenarios[0]); i++)
		run_scenario(&scenarios[i]);
}

/* Windows are UTC multiples of the window, and the boundaries follow the monotonic clock. */
static void
test_timeline(void **state)
{
	struct pc_wallclock clk;

	(void)state;
	pc_wallclock_init(&clk, MONO0, WALL0);
	assert_int_equal(pc_wallclock_sequence(&clk, MONO0, W), E0);
	assert_int_equal(pc_wallclock_label(&clk, E0, W), E0 * W);
	/* the next window begins 35 s after start: 25 s of this one had passed */
	assert_int_equal(pc_wallclock_boundary(&clk, E0 + 1, W), MONO0 + (uint64_t)(35 * NS));
	assert_int_equal(pc_wallclock_sequence(&clk, MONO0 + (uint64_t)(35 * NS) - 1, W), E0);
	assert_int_equal(pc_wallclock_sequence(&clk, MONO0 + (uint64_t)(35 * NS), W), E0 + 1);
	/* a step of the wall clock moves labels, never boundaries */
	uint64_t before = pc_wallclock_boundary(&clk, E0 + 2, W);
	pc_wallclock_check(&clk, E0 + 1, MONO0 + (uint64_t)(35 * NS), W,
			   (E0 + 1) * W + (uint64_t)(600 * NS));
	assert_int_equal(pc_wallclock_boundary(&clk, E0 + 2, W), before);
	assert_int_equal(pc_wallclock_label(&clk, E0 + 2, W), (E0 + 12) * W);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_check_table),
		cmocka_unit_test(test_timeline),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
