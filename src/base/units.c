/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Units of the pod map. A value is a decimal number, optionally with a
 * fraction, followed by a unit; it is converted to an exact integer in base
 * units or rejected. No floating point: "2.5Gbps" must be 2500000000 bit/s
 * exactly, on every machine, or two appliances would digest the same pod
 * map differently.
 */

#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "error.h"
#include "units.h"

struct unit {
	const char *name;
	uint64_t mult;		/* base units per unit */
};

struct quantity {
	const struct unit *units;	/* NULL-terminated */
	const char *known;		/* the list, for "unknown unit" */
	const char *not_whole;		/* when a fraction leaves a remainder */
};

static const struct unit rate_units[] = {
	{ "bps", 1 },
	{ "Kbps", 1000ULL },
	{ "Mbps", 1000000ULL },
	{ "Gbps", 1000000000ULL },
	{ "Tbps", 1000000000000ULL },
	{ NULL, 0 },
};

static const struct unit size_units[] = {
	{ "B", 1 },
	{ "KB", 1000ULL },
	{ "MB", 1000000ULL },
	{ "GB", 1000000000ULL },
	{ "TB", 1000000000000ULL },
	{ "KiB", 1ULL << 10 },
	{ "MiB", 1ULL << 20 },
	{ "GiB", 1ULL << 30 },
	{ "TiB", 1ULL << 40 },
	{ NULL, 0 },
};

static const struct unit duration_units[] = {
	{ "ns", 1 },
	{ "us", 1000ULL },
	{ "ms", 1000000ULL },
	{ "s", PC_NS_PER_SEC },
	{ "m", 60 * PC_NS_PER_SEC },
	{ "h", 3600 * PC_NS_PER_SEC },
	{ NULL, 0 },
};

static const struct quantity rate_q = {
	rate_units, "bps, Kbps, Mbps, Gbps or Tbps",
	"not a whole number of bits per second",
};

static const struct quantity size_q = {
	size_units, "B, KB, MB, GB, TB, KiB, MiB, GiB or TiB",
	"not a whole number of bytes",
};

static const struct quantity duration_q = {
	duration_units, "ns, us, ms, s, m or h",
	"not a whole number of nanoseconds",
};

/*
 * No value needs more significant fraction digits than this, and the bound
 * keeps frac * mult (< 10^19 * 2^42) far inside 128 bits.
 */
#define MAX_FRACTION_DIGITS 19

/* The only message that names the input, so it needs its own storage. */
static __thread char unknown_unit_msg[128];

static const struct unit *
find_unit(const struct unit *units, const char *name)
{
	for (; units->name != NULL; units++)
		if (strcmp(units->name, name) == 0)
			return units;
	return NULL;
}

static int
parse_quantity(const char *s, const struct quantity *q, uint64_t *out,
	       struct pc_error *err)
{
	const struct unit *u;
	unsigned __int128 frac = 0, pow10 = 1, part;
	uint64_t ip = 0, v;
	const char *p = s, *fs, *fe;
	unsigned nfrac;

	if (s == NULL || *s == '\0') {
		return pc_error_set(err, "empty value");
	}
	if (*p == '-') {
		return pc_error_set(err, "must not be negative");
	}
	if (*p < '0' || *p > '9') {
		return pc_error_set(err, "expected a number followed by a unit");
	}
	for (; *p >= '0' && *p <= '9'; p++) {
		if (__builtin_mul_overflow(ip, 10, &ip) ||
		    __builtin_add_overflow(ip, (uint64_t)(*p - '0'), &ip)) {
			return pc_error_set(err, "value out of range");
		}
	}
	if (*p == '.') {
		p++;
		if (*p < '0' || *p > '9') {
			return pc_error_set(err, "expected a digit after '.'");
		}
		fs = p;
		while (*p >= '0' && *p <= '9')
			p++;
		/* trailing zeros change nothing: 1.50GB is 1.5GB */
		for (fe = p; fe > fs && fe[-1] == '0'; fe--)
			;
		nfrac = (unsigned)(fe - fs);
		if (nfrac > MAX_FRACTION_DIGITS) {
			return pc_error_set(err, "too many decimal places");
		}
		for (; fs < fe; fs++) {
			frac = frac * 10 + (unsigned)(*fs - '0');
			pow10 *= 10;
		}
	}
	while (*p == ' ')
		p++;
	if (*p == '\0') {
		return pc_error_set(err, "missing unit");
	}
	u = find_unit(q->units, p);
	if (u == NULL) {
		snprintf(unknown_unit_msg, sizeof(unknown_unit_msg),
			 "unknown unit '%.32s' (use %s)", p, q->known);
		return pc_error_set(err, "%s", unknown_unit_msg);
	}
	/* frac < 10^19 and mult < 2^42: the product fits 128 bits */
	part = frac * u->mult;
	if (part % pow10 != 0) {
		return pc_error_set(err, "%s", q->not_whole);
	}
	if (__builtin_mul_overflow(ip, u->mult, &v) ||
	    __builtin_add_overflow(v, (uint64_t)(part / pow10), &v)) {
		return pc_error_set(err, "value out of range");
	}
	*out = v;
	return 0;
}

int
pc_parse_rate(const char *s, uint64_t *bps, struct pc_error *err)
{
	return parse_quantity(s, &rate_q, bps, err);
}

int
pc_parse_size(const char *s, uint64_t *bytes, struct pc_error *err)
{
	return parse_quantity(s, &size_q, bytes, err);
}

int
pc_parse_duration(const char *s, uint64_t *ns, struct pc_error *err)
{
	return parse_quantity(s, &duration_q, ns, err);
}

/*
 * Largest unit of `order` in which the value is at least 1 with at most one
 * decimal, so that what is printed reads back as exactly the same value.
 * The last unit of `order` must be the base unit.
 */
static void
format_quantity(char *buf, size_t len, uint64_t v, const char *const *order,
		const struct unit *units, const char *zero)
{
	const struct unit *u = NULL;
	uint64_t rem;

	if (buf == NULL || len == 0)
		return;
	if (v == 0) {
		snprintf(buf, len, "%s", zero);
		return;
	}
	for (; *order != NULL; order++) {
		u = find_unit(units, *order);
		if (v < u->mult)
			continue;
		rem = v % u->mult;
		if (rem == 0) {
			snprintf(buf, len, "%" PRIu64 "%s", v / u->mult, u->name);
			return;
		}
		/* rem < mult < 2^42: rem * 10 cannot overflow */
		if (rem * 10 % u->mult == 0) {
			snprintf(buf, len, "%" PRIu64 ".%" PRIu64 "%s",
				 v / u->mult, rem * 10 / u->mult, u->name);
			return;
		}
	}
}

void
pc_format_rate(char *buf, size_t len, uint64_t bps)
{
	static const char *const order[] = {
		"Tbps", "Gbps", "Mbps", "Kbps", "bps", NULL,
	};

	format_quantity(buf, len, bps, order, rate_units, "0bps");
}

void
pc_format_size(char *buf, size_t len, uint64_t bytes)
{
	static const char *const order[] = {
		"TiB", "TB", "GiB", "GB", "MiB", "MB", "KiB", "KB", "B", NULL,
	};

	format_quantity(buf, len, bytes, order, size_units, "0B");
}

void
pc_format_duration(char *buf, size_t len, uint64_t ns)
{
	/* no minutes or hours: "60s" reads better next to a window of "1.5s" */
	static const char *const order[] = {
		"s", "ms", "us", "ns", NULL,
	};

	format_quantity(buf, len, ns, order, duration_units, "0s");
}
