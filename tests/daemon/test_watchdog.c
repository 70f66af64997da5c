/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The watchdog's rule (src/daemon/watchdog.c): podcapd pings systemd only
 * when every worker's loop counter moved since the last check and the
 * signer answers. Each scenario is a run of checks of three workers, each
 * check giving the counters read then, whether the signer answered, and
 * whether the rule must ping and which worker it must find stuck.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdbool.h>
#include <stdio.h>

#include <cmocka.h>

#include "daemon/watchdog.h"

#define WORKERS    3
#define CHECKS_MAX 6

struct check {
	uint64_t loops[WORKERS]; /* the counters read at this check; an empty row ends */
	bool signer_ok;
	bool ping; /* expected */
	int stuck; /* expected: the first worker that did not loop, or -1 */
};

struct scenario {
	const char *name;
	uint64_t start[WORKERS]; /* the counters when the watchdog was armed */
	struct check checks[CHECKS_MAX];
};

static const struct scenario scenarios[] = {
	{ "every worker loops and the signer answers: a ping at each check",
	  { 1, 1, 1 },
	  {
	      { { 900, 700, 800 }, true, true, -1 },
	      { { 2000, 1500, 1900 }, true, true, -1 },
	      { { 2001, 1501, 1901 }, true, true, -1 },
	  } },
	{ "the first worker is stuck: no ping",
	  { 1, 1, 1 },
	  {
	      { { 900, 700, 800 }, true, true, -1 },
	      { { 900, 1500, 1900 }, true, false, 0 },
	      { { 900, 2500, 2900 }, true, false, 0 },
	  } },
	{ "a worker in the middle is stuck: no ping",
	  { 1, 1, 1 },
	  {
	      { { 900, 700, 800 }, true, true, -1 },
	      { { 1900, 700, 1800 }, true, false, 1 },
	  } },
	{ "the last worker is stuck: no ping",
	  { 1, 1, 1 },
	  {
	      { { 900, 700, 800 }, true, true, -1 },
	      { { 1900, 1700, 800 }, true, false, 2 },
	  } },
	{ "a worker stuck since it was armed: not even a first ping",
	  { 5, 5, 5 },
	  {
	      { { 900, 5, 800 }, true, false, 1 },
	  } },
	{ "every worker stuck: the first is named",
	  { 1, 1, 1 },
	  {
	      { { 1, 1, 1 }, true, false, 0 },
	  } },
	{ "the signer does not answer: no ping, though every worker loops",
	  { 1, 1, 1 },
	  {
	      { { 900, 700, 800 }, true, true, -1 },
	      { { 1900, 1700, 1800 }, false, false, -1 },
	      { { 2900, 2700, 2800 }, false, false, -1 },
	  } },
	{ "a stuck worker and a silent signer: no ping",
	  { 1, 1, 1 },
	  {
	      { { 1, 700, 800 }, false, false, 0 },
	  } },
	{ "a worker that runs again brings the pings back",
	  { 1, 1, 1 },
	  {
	      { { 900, 700, 800 }, true, true, -1 },
	      { { 1900, 700, 1800 }, true, false, 1 },
	      { { 2900, 700, 2800 }, true, false, 1 },
	      { { 3900, 701, 3800 }, true, true, -1 },
	  } },
	{ "a signer that answers again brings the pings back",
	  { 1, 1, 1 },
	  {
	      { { 900, 700, 800 }, false, false, -1 },
	      { { 1900, 1700, 1800 }, true, true, -1 },
	  } },
	{ "a worker that looped only before the last check is stuck now",
	  { 1, 1, 1 },
	  {
	      { { 900, 700, 1 }, true, false, 2 },
	      { { 1900, 1700, 1 }, true, false, 2 },
	      { { 2900, 1700, 5 }, true, false, 1 },
	  } },
	{ "a counter that wrapped still moved",
	  { UINT64_MAX, 1, 1 },
	  {
	      { { 0, 700, 800 }, true, true, -1 },
	  } },
};

static bool
row_empty(const struct check *c)
{
	for (unsigned i = 0; i < WORKERS; i++)
		if (c->loops[i] != 0)
			return false;
	return true;
}

static void
test_scenarios(void **state)
{
	(void)state;
	for (size_t s = 0; s < sizeof(scenarios) / sizeof(scenarios[0]); s++) {
		const struct scenario *sc = &scenarios[s];
		uint64_t prev[WORKERS];

		for (unsigned i = 0; i < WORKERS; i++)
			prev[i] = sc->start[i];
		for (unsigned k = 0; k < CHECKS_MAX && !row_empty(&sc->checks[k]); k++) {
			const struct check *c = &sc->checks[k];
			int stuck = -2;
			bool ping = pc_watchdog_ok(prev, c->loops, WORKERS, c->signer_ok, &stuck);

			if (ping != c->ping || stuck != c->stuck)
				fail_msg("%s: check %u: ping %d stuck %d, want ping %d stuck %d",
					 sc->name, k + 1, ping, stuck, c->ping, c->stuck);
			for (unsigned i = 0; i < WORKERS; i++)
				assert_int_equal(prev[i], c->loops[i]);
		}
	}
}

/* One worker, as most appliances run: its counter alone decides. */
static void
test_one_worker(void **state)
{
	uint64_t prev[1] = { 10 }, cur[1] = { 10 };

	(void)state;
	assert_false(pc_watchdog_ok(prev, cur, 1, true, NULL));
	cur[0] = 11;
	assert_true(pc_watchdog_ok(prev, cur, 1, true, NULL));
	assert_false(pc_watchdog_ok(prev, cur, 1, true, NULL));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_scenarios),
		cmocka_unit_test(test_one_worker),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
