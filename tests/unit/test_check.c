/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The table of the verifier's checks (src/verify/check.h): every row is
 * named after its file, every section of a check's saved state has its
 * place in the state file, and a report prints the part of a check that
 * its layout does not name, once, where the layout says PCV_OTHERS: so a
 * new check is its file and its row, and neither its state nor its report
 * is dropped for want of a line elsewhere.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "verify/verify.h"

#include "verify/check.h"
#include "verify/verify_impl.h"
#include "testlog.h"

static void
test_rows_are_their_files(void **state)
{
	(void)state;
	for (int id = 0; id < PCV_CHECK_COUNT; id++) {
		const struct pcv_check *c = pcv_checks[id];
		char path[512];

		assert_non_null(c);
		assert_non_null(c->name);
		snprintf(path, sizeof(path), "%s/src/verify/%s.c", PC_SOURCE_ROOT, c->name);
		if (access(path, R_OK) != 0)
			fail_msg("check %d is named %s, and there is no %s", id, c->name, path);
		for (int other = 0; other < id; other++)
			assert_string_not_equal(pcv_checks[other]->name, c->name);
	}
}

static void
test_state_places_every_section(void **state)
{
	char why[256] = "";

	(void)state;
	if (pcv_state_order_check(why, sizeof(why)) != 0)
		fail_msg("%s", why);
}

/* What every check but `skip` prints in report `which`, in table order. */
static char *
parts(const struct pc_verify *v, enum pcv_report which, int skip)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	for (int id = 0; id < PCV_CHECK_COUNT; id++)
		if (id != skip && pcv_checks[id]->report[which] != NULL)
			pcv_checks[id]->report[which](v, v->state[id], f);
	fclose(f);
	return buf;
}

static char *
laid_out(const struct pc_verify *v, enum pcv_report which, const struct pcv_part *layout, size_t n)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	pcv_report_parts(v, f, which, layout, n);
	fclose(f);
	return buf;
}

static uint64_t
steady(uint64_t w)
{
	return 1000 + w;
}

/* Named where the layout names it, and every other check in its place, once. */
static void
test_unnamed_parts_print_at_others(void **state)
{
	struct pct_log lg = { .windows = 30, .up = steady, .down = steady };
	struct pc_verify *v = pct_verify(&lg, 0);
	static const struct pcv_part layout[] = { PCV_PART(PCV_BUILD), PCV_PART(PCV_OTHERS) };

	(void)state;
	for (int which = 0; which < PCV_REPORT_COUNT; which++) {
		char *got = laid_out(v, (enum pcv_report)which, layout, PCV_PARTS(layout));
		char *others = parts(v, (enum pcv_report)which, PCV_BUILD);
		char *build = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&build, &len);

		if (pcv_checks[PCV_BUILD]->report[which] != NULL)
			pcv_checks[PCV_BUILD]->report[which](v, v->state[PCV_BUILD], f);
		fclose(f);
		assert_true(strlen(others) > 0);
		assert_int_equal(strlen(got), strlen(build) + strlen(others));
		assert_memory_equal(got, build, strlen(build));
		assert_string_equal(got + strlen(build), others);
		free(got);
		free(others);
		free(build);
	}
	pc_verify_free(v);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rows_are_their_files),
		cmocka_unit_test(test_state_places_every_section),
		cmocka_unit_test(test_unnamed_parts_print_at_others),
	};

	return cmocka_run_group_tests(tests, pct_setup, pct_teardown);
}
