/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit parsing and formatting: every unit, exact fractions, overflow,
 * garbage, and formatted values that read back as the same value.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "base/units.h"

typedef int (*parse_fn)(const char *, uint64_t *, struct pc_error *);

struct good {
	const char *text;
	uint64_t value;
};

struct bad {
	const char *text;
	const char *why;
};

static void
check_good(parse_fn parse, const struct good *g, size_t n)
{
	struct pc_error why;
	uint64_t v;
	size_t i;

	for (i = 0; i < n; i++) {
		v = 0xdeadbeef;
		if (parse(g[i].text, &v, &why) != 0)
			fail_msg("'%s' rejected: %s", g[i].text, why.msg);
		if (v != g[i].value)
			fail_msg("'%s' gave %llu, expected %llu", g[i].text,
				 (unsigned long long)v,
				 (unsigned long long)g[i].value);
	}
}

static void
check_bad(parse_fn parse, const struct bad *b, size_t n)
{
	struct pc_error why;
	uint64_t v;
	size_t i;

	for (i = 0; i < n; i++) {
		why.msg[0] = '\0';
		if (parse(b[i].text, &v, &why) != -1)
			fail_msg("'%s' accepted as %llu", b[i].text,
				 (unsigned long long)v);
		assert_true(why.msg[0] != '\0');
		if (strcmp(why.msg, b[i].why) != 0)
			fail_msg("'%s': got \"%s\", expected \"%s\"", b[i].text,
				 why.msg, b[i].why);
	}
}

static void
test_rate_units(void **state)
{
	static const struct good g[] = {
		{ "1bps", 1 },
		{ "0bps", 0 },
		{ "1Kbps", 1000 },
		{ "1Mbps", 1000000 },
		{ "1Gbps", 1000000000 },
		{ "1Tbps", 1000000000000ULL },
		{ "1000Mbps", 1000000000 },
		{ "2.5Gbps", 2500000000ULL },
		{ "0.001Kbps", 1 },
		{ "1.50Gbps", 1500000000 },
		{ "400Gbps", 400000000000ULL },
		{ "1 Gbps", 1000000000 },
		{ "18446744073709551615bps", UINT64_MAX },
		{ "18446744.073709551615Tbps", UINT64_MAX },
	};

	(void)state;
	check_good(pc_parse_rate, g, sizeof(g) / sizeof(g[0]));
}

static void
test_size_units(void **state)
{
	static const struct good g[] = {
		{ "1B", 1 },
		{ "1522B", 1522 },
		{ "1KB", 1000 },
		{ "1MB", 1000000 },
		{ "1GB", 1000000000 },
		{ "1TB", 1000000000000ULL },
		{ "1KiB", 1024 },
		{ "1MiB", 1048576 },
		{ "1GiB", 1073741824 },
		{ "1TiB", 1099511627776ULL },
		{ "7.5GB", 7500000000ULL },
		{ "1.5KiB", 1536 },
		{ "0.5KiB", 512 },
		{ "1.522KB", 1522 },
		{ "0.0009765625MiB", 1024 },
		{ "16KiB", 16384 },
	};

	(void)state;
	check_good(pc_parse_size, g, sizeof(g) / sizeof(g[0]));
}

static void
test_duration_units(void **state)
{
	static const struct good g[] = {
		{ "1ns", 1 },
		{ "1us", 1000 },
		{ "1ms", 1000000 },
		{ "1s", 1000000000 },
		{ "1m", 60000000000ULL },
		{ "1h", 3600000000000ULL },
		{ "60s", 60000000000ULL },
		{ "1.5s", 1500000000 },
		{ "0.5m", 30000000000ULL },
		{ "0.25h", 900000000000ULL },
		{ "50ms", 50000000 },
		{ "0.000000001s", 1 },
		/* 2.5e-12 h is 9 ns: 13 decimals, still whole */
		{ "0.0000000000025h", 9 },
	};

	(void)state;
	check_good(pc_parse_duration, g, sizeof(g) / sizeof(g[0]));
}

static void
test_fractions_must_be_whole(void **state)
{
	static const struct bad rates[] = {
		{ "0.5bps", "not a whole number of bits per second" },
		{ "1.0001Kbps", "not a whole number of bits per second" },
	};
	static const struct bad sizes[] = {
		{ "0.5B", "not a whole number of bytes" },
		{ "7.0000000001GB", "not a whole number of bytes" },
		{ "1.1KiB", "not a whole number of bytes" },
	};
	static const struct bad durations[] = {
		{ "1.5ns", "not a whole number of nanoseconds" },
		{ "0.0000000001s", "not a whole number of nanoseconds" },
	};

	(void)state;
	check_bad(pc_parse_rate, rates, sizeof(rates) / sizeof(rates[0]));
	check_bad(pc_parse_size, sizes, sizeof(sizes) / sizeof(sizes[0]));
	check_bad(pc_parse_duration, durations,
		  sizeof(durations) / sizeof(durations[0]));
}

static void
test_overflow(void **state)
{
	static const struct bad rates[] = {
		{ "18446744073709551616bps", "value out of range" },
		{ "18446745Tbps", "value out of range" },
		{ "20000000000Gbps", "value out of range" },
		{ "99999999999999999999999999bps", "value out of range" },
		{ "18446744.073709551616Tbps", "value out of range" },
	};
	static const struct bad sizes[] = {
		{ "16777216TiB", "value out of range" },
	};
	static const struct bad durations[] = {
		{ "5124096h", "value out of range" },
		{ "1.00000000000000000001s", "too many decimal places" },
	};

	(void)state;
	check_bad(pc_parse_rate, rates, sizeof(rates) / sizeof(rates[0]));
	check_bad(pc_parse_size, sizes, sizeof(sizes) / sizeof(sizes[0]));
	check_bad(pc_parse_duration, durations,
		  sizeof(durations) / sizeof(durations[0]));
}

static void
test_garbage(void **state)
{
	static const struct bad rates[] = {
		{ "", "empty value" },
		{ "Gbps", "expected a number followed by a unit" },
		{ "fast", "expected a number followed by a unit" },
		{ "-1Gbps", "must not be negative" },
		{ "+1Gbps", "expected a number followed by a unit" },
		{ ".5Gbps", "expected a number followed by a unit" },
		{ "1.Gbps", "expected a digit after '.'" },
		{ "1Gb", "unknown unit 'Gb' (use bps, Kbps, Mbps, Gbps or Tbps)" },
		{ "1gbps", "unknown unit 'gbps' (use bps, Kbps, Mbps, Gbps or Tbps)" },
		{ "1GB", "unknown unit 'GB' (use bps, Kbps, Mbps, Gbps or Tbps)" },
		{ "1Gbps ", "unknown unit 'Gbps ' (use bps, Kbps, Mbps, Gbps or Tbps)" },
		{ "1Gbps2", "unknown unit 'Gbps2' (use bps, Kbps, Mbps, Gbps or Tbps)" },
		{ "1e9bps", "unknown unit 'e9bps' (use bps, Kbps, Mbps, Gbps or Tbps)" },
		{ "1,5Gbps", "unknown unit ',5Gbps' (use bps, Kbps, Mbps, Gbps or Tbps)" },
	};
	static const struct bad sizes[] = {
		{ "1kb", "unknown unit 'kb' (use B, KB, MB, GB, TB, KiB, MiB, GiB or TiB)" },
		{ "1s", "unknown unit 's' (use B, KB, MB, GB, TB, KiB, MiB, GiB or TiB)" },
	};
	static const struct bad durations[] = {
		{ "1sec", "unknown unit 'sec' (use ns, us, ms, s, m or h)" },
		{ "1M", "unknown unit 'M' (use ns, us, ms, s, m or h)" },
	};
	struct pc_error why;
	uint64_t v;

	(void)state;
	check_bad(pc_parse_rate, rates, sizeof(rates) / sizeof(rates[0]));
	check_bad(pc_parse_size, sizes, sizeof(sizes) / sizeof(sizes[0]));
	check_bad(pc_parse_duration, durations,
		  sizeof(durations) / sizeof(durations[0]));
	assert_int_equal(pc_parse_rate(NULL, &v, &why), -1);
	assert_string_equal(why.msg, "empty value");
}

static void
test_missing_unit(void **state)
{
	static const struct bad b[] = {
		{ "1000", "missing unit" },
		{ "0", "missing unit" },
		{ "2.5", "missing unit" },
		{ "60 ", "missing unit" },
	};

	(void)state;
	check_bad(pc_parse_rate, b, sizeof(b) / sizeof(b[0]));
	check_bad(pc_parse_size, b, sizeof(b) / sizeof(b[0]));
	check_bad(pc_parse_duration, b, sizeof(b) / sizeof(b[0]));
}

static void
test_format(void **state)
{
	char buf[64];

	(void)state;
	pc_format_rate(buf, sizeof(buf), 1000000000);
	assert_string_equal(buf, "1Gbps");
	pc_format_rate(buf, sizeof(buf), 2500000000ULL);
	assert_string_equal(buf, "2.5Gbps");
	pc_format_rate(buf, sizeof(buf), 10001);
	assert_string_equal(buf, "10001bps");
	pc_format_rate(buf, sizeof(buf), 0);
	assert_string_equal(buf, "0bps");
	pc_format_size(buf, sizeof(buf), 7500000000ULL);
	assert_string_equal(buf, "7.5GB");
	pc_format_size(buf, sizeof(buf), 1073741824);
	assert_string_equal(buf, "1GiB");
	pc_format_size(buf, sizeof(buf), 1522);
	assert_string_equal(buf, "1522B");
	pc_format_size(buf, sizeof(buf), 0);
	assert_string_equal(buf, "0B");
	pc_format_duration(buf, sizeof(buf), 60 * PC_NS_PER_SEC);
	assert_string_equal(buf, "60s");
	pc_format_duration(buf, sizeof(buf), 50000000);
	assert_string_equal(buf, "50ms");
	pc_format_duration(buf, sizeof(buf), 1500000000);
	assert_string_equal(buf, "1.5s");
	pc_format_duration(buf, sizeof(buf), 0);
	assert_string_equal(buf, "0s");
}

static void
test_format_truncates(void **state)
{
	char buf[4];

	(void)state;
	memset(buf, 'x', sizeof(buf));
	pc_format_rate(buf, sizeof(buf), 1000000000);
	assert_string_equal(buf, "1Gb");
	pc_format_size(buf, 1, 1522);
	assert_string_equal(buf, "");
}

/* xorshift: a fixed sequence, so a failure always reproduces */
static uint64_t
next(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static void
round_trip(uint64_t v)
{
	char buf[64];
	struct pc_error why;
	uint64_t back;

	pc_format_rate(buf, sizeof(buf), v);
	if (pc_parse_rate(buf, &back, &why) != 0 || back != v)
		fail_msg("rate %llu -> '%s' did not read back",
			 (unsigned long long)v, buf);
	pc_format_size(buf, sizeof(buf), v);
	if (pc_parse_size(buf, &back, &why) != 0 || back != v)
		fail_msg("size %llu -> '%s' did not read back",
			 (unsigned long long)v, buf);
	pc_format_duration(buf, sizeof(buf), v);
	if (pc_parse_duration(buf, &back, &why) != 0 || back != v)
		fail_msg("duration %llu -> '%s' did not read back",
			 (unsigned long long)v, buf);
}

static void
test_round_trip(void **state)
{
	static const uint64_t edges[] = {
		0, 1, 9, 10, 999, 1000, 1001, 1023, 1024, 1025, 1500, 1522,
		1536, 1000000, 1048576, 7500000000ULL, 1099511627776ULL,
		60000000000ULL, 3600000000000ULL, UINT64_MAX, UINT64_MAX - 1,
		UINT64_MAX / 1000 * 1000,
	};
	uint64_t s = 0x9e3779b97f4a7c15ULL, v;
	unsigned i, shift;

	(void)state;
	for (i = 0; i < sizeof(edges) / sizeof(edges[0]); i++)
		round_trip(edges[i]);
	for (i = 0; i < 200000; i++) {
		v = next(&s);
		/* all magnitudes, and values that are round in some unit */
		shift = (unsigned)(v % 64);
		v = next(&s) >> shift;
		round_trip(v);
		round_trip(v % 1000 * 1000000);
		round_trip(v % 100 * 100000000000ULL);
		round_trip(v % 4096 << 20);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rate_units),
		cmocka_unit_test(test_size_units),
		cmocka_unit_test(test_duration_units),
		cmocka_unit_test(test_fractions_must_be_whole),
		cmocka_unit_test(test_overflow),
		cmocka_unit_test(test_garbage),
		cmocka_unit_test(test_missing_unit),
		cmocka_unit_test(test_format),
		cmocka_unit_test(test_format_truncates),
		cmocka_unit_test(test_round_trip),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
