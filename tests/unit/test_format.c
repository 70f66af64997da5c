/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The HTML page's quantities for people (verify/format.c): bytes, rates,
 * durations and shares at every unit boundary, on both sides of each
 * rounding, at 0 and at the largest values, and the table cell that shows
 * one rounded with its every digit in the title.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "verify/print.h"

struct want {
	u128 x;
	const char *text;
};

static void
check(void (*human)(u128, char *, size_t), const struct want *w, size_t n)
{
	char buf[HUMAN_LEN], d[U128_LEN];

	for (size_t i = 0; i < n; i++) {
		memset(buf, 'x', sizeof(buf));
		human(w[i].x, buf, sizeof(buf));
		pcv_format_u128(w[i].x, d, sizeof(d));
		if (strcmp(buf, w[i].text) != 0)
			fail_msg("%s gave \"%s\", expected \"%s\"", d, buf, w[i].text);
	}
}

#define CHECK(fn, table) check(fn, table, sizeof(table) / sizeof(table[0]))

static const u128 u128_max = ~(u128)0;

static void
test_bytes(void **state)
{
	static const struct want w[] = {
		{ 0, "0 B" },
		{ 1, "1 B" },
		{ 999, "999 B" },
		{ 1000, "1 kB" },
		{ 1004, "1 kB" },
		{ 1005, "1.01 kB" }, /* half up */
		{ 1234, "1.23 kB" },
		{ 1250, "1.25 kB" },
		{ 1500, "1.5 kB" },
		{ 9994, "9.99 kB" },
		{ 9995, "10 kB" },
		{ 12345, "12.3 kB" },
		{ 99949, "99.9 kB" },
		{ 99950, "100 kB" },
		{ 999499, "999 kB" },
		{ 999500, "1 MB" }, /* 1000 kB reads as 1 MB */
		{ 1000000, "1 MB" },
		{ 29662500, "29.7 MB" },
		{ 999499999, "999 MB" },
		{ 999500000, "1 GB" },
		{ 37500000000ULL, "37.5 GB" },
		{ 70000000000ULL, "70 GB" },
		{ 999500000000ULL, "1 TB" },
		{ 1000000000000000ULL, "1 PB" },
		{ 999500000000000000ULL, "1 EB" },
		{ UINT64_MAX, "18.4 EB" },
		{ (u128)UINT64_MAX * 1000, "18.4 ZB" },
		{ (u128)1000000000000000ULL * 1000000000000000ULL, "1 QB" },
		/* nothing after Q: the digits grow */
		{ (u128)999500000000000ULL * 1000000000000000000ULL, "1000 QB" },
		{ u128_max, "340282367 QB" },
	};

	(void)state;
	CHECK(pcv_human_bytes, w);
}

static void
test_rates(void **state)
{
	static const struct want w[] = {
		{ 0, "0 bit/s" },
		{ 999, "999 bit/s" },
		{ 1000, "1 kbit/s" },
		{ 2500000, "2.5 Mbit/s" },
		{ 999999999, "1 Gbit/s" },
		{ 1000000000, "1 Gbit/s" },
		{ 10000000000ULL, "10 Gbit/s" },
		{ 400000000000ULL, "400 Gbit/s" },
		{ 1600000000000ULL, "1.6 Tbit/s" },
		{ UINT64_MAX, "18.4 Ebit/s" },
	};

	(void)state;
	CHECK(pcv_human_rate, w);
}

#define US  1000ULL
#define MS  1000000ULL
#define SEC 1000000000ULL
#define MIN (60 * SEC)
#define HR  (60 * MIN)
#define DAY (24 * HR)

static void
test_durations(void **state)
{
	static const struct want w[] = {
		{ 0, "0 s" },
		{ 1, "1 ns" },
		{ 999, "999 ns" },
		{ US, "1 \xc2\xb5s" },
		{ 1500, "1.5 \xc2\xb5s" },
		{ 999499, "999 \xc2\xb5s" },
		{ 999500, "1 ms" },
		{ 10 * MS, "10 ms" },
		{ 999 * MS + 499 * US, "999 ms" },
		{ 999 * MS + 500 * US, "1 s" },
		{ SEC, "1 s" },
		{ 1250 * MS, "1.25 s" },
		{ 59940 * MS, "59.9 s" },
		{ 59950 * MS, "1 min 0 s" }, /* 60.0 s reads as a minute */
		{ MIN, "1 min 0 s" },
		{ 4 * MIN, "4 min 0 s" },
		{ 4 * MIN + 499 * MS, "4 min 0 s" },
		{ 4 * MIN + 500 * MS, "4 min 1 s" },
		{ 560 * SEC, "9 min 20 s" },
		{ 59 * MIN + 59 * SEC + 499 * MS, "59 min 59 s" },
		{ 59 * MIN + 59 * SEC + 500 * MS, "1 h 0 min" },
		{ HR, "1 h 0 min" },
		{ 2 * HR + 5 * MIN, "2 h 5 min" },
		{ 2 * HR + 5 * MIN + 29 * SEC, "2 h 5 min" },
		{ 2 * HR + 5 * MIN + 30 * SEC, "2 h 6 min" },
		{ 23 * HR + 59 * MIN + 29 * SEC, "23 h 59 min" },
		{ 23 * HR + 59 * MIN + 30 * SEC, "1 d 0 h" },
		{ DAY, "1 d 0 h" },
		{ 3 * DAY + 4 * HR + 29 * MIN, "3 d 4 h" },
		{ 3 * DAY + 4 * HR + 30 * MIN, "3 d 5 h" },
		{ UINT64_MAX, "213504 d 0 h" }, /* 213503 d 23 h 34 min */
		{ (u128)UINT64_MAX * 2, "427007 d 23 h" },
	};

	(void)state;
	CHECK(pcv_human_duration, w);
}

static void
test_permille(void **state)
{
	static const struct {
		uint64_t pm;
		const char *text;
	} w[] = {
		{ 0, "0.0 %" },
		{ 5, "0.5 %" },
		{ 937, "93.7 %" },
		{ 999, "99.9 %" },
		{ 1000, "100.0 %" },
		{ 3000, "300.0 %" },
		{ UINT64_MAX - 1, "1844674407370955161.4 %" },
	};
	char buf[HUMAN_LEN];

	(void)state;
	for (size_t i = 0; i < sizeof(w) / sizeof(w[0]); i++) {
		pcv_human_permille(w[i].pm, buf, sizeof(buf));
		assert_string_equal(buf, w[i].text);
	}
}

/* A short buffer gets a cut, terminated string, never an overrun. */
static void
test_short_buffer(void **state)
{
	char buf[8];

	(void)state;
	memset(buf, 'x', sizeof(buf));
	pcv_human_duration(2 * HR + 5 * MIN, buf, 5);
	assert_string_equal(buf, "2 h ");
	assert_int_equal(buf[5], 'x');
	pcv_human_bytes(37500000000ULL, buf, 4);
	assert_string_equal(buf, "37.");
}

static char *
cell(void (*td)(FILE *, const char *, u128), const char *key, u128 x)
{
	char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);

	assert_non_null(f);
	td(f, key, x);
	assert_int_equal(fclose(f), 0);
	return out;
}

static void
test_cells(void **state)
{
	static const struct {
		void (*td)(FILE *, const char *, u128);
		u128 x;
		const char *html;
	} w[] = {
		{ pcv_td_bytes, 37500000000ULL,
		  "<td class=\"n\" data-k=\"k\" title=\"37500000000 B\">37.5 GB</td>" },
		{ pcv_td_rate, 400000000000ULL,
		  "<td class=\"n\" data-k=\"k\" title=\"400000000000 bit/s\">400 Gbit/s</td>" },
		{ pcv_td_duration, 240000000000ULL,
		  "<td class=\"n\" data-k=\"k\" title=\"240000000000 ns\">4 min 0 s</td>" },
		{ pcv_td_bytes, u128_max,
		  "<td class=\"n\" data-k=\"k\" title=\"340282366920938463463374607431768211455 "
		  "B\">340282367 QB</td>" },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(w) / sizeof(w[0]); i++) {
		char *out = cell(w[i].td, "k", w[i].x);

		assert_string_equal(out, w[i].html);
		free(out);
	}

	char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);
	assert_non_null(f);
	pcv_td_permille(f, "peak_permille", 937);
	assert_int_equal(fclose(f), 0);
	assert_string_equal(
	    out, "<td class=\"n\" data-k=\"peak_permille\" title=\"937 \xe2\x80\xb0\">93.7 %</td>");
	free(out);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bytes),        cmocka_unit_test(test_rates),
		cmocka_unit_test(test_durations),    cmocka_unit_test(test_permille),
		cmocka_unit_test(test_short_buffer), cmocka_unit_test(test_cells),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
