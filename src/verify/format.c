/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The verifier's number forms (verify/format.h), the same in its messages,
 * its reports and its saved state: no locale, every digit.
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>

#include "log/record.h"

#include "format.h"

void
pcv_format_u128(u128 x, char *buf, size_t len)
{
	char tmp[U128_LEN];
	int i = (int)sizeof(tmp) - 1;

	tmp[i] = '\0';
	do {
		tmp[--i] = (char)('0' + (int)(x % 10));
		x /= 10;
	} while (x != 0 && i > 0);
	snprintf(buf, len, "%s", tmp + i);
}

void
pcv_print_u128(FILE *f, u128 x)
{
	char b[U128_LEN];

	pcv_format_u128(x, b, sizeof(b));
	fputs(b, f);
}

/*
 * Not pc_format_duration: the pod map's form picks the largest unit that
 * divides the value ("1250ms"), a report keeps to seconds ("1.25s") so that
 * times in it compare at a glance.
 */
void
pcv_format_duration_u128(u128 ns, char *buf, size_t len)
{
	char s[U128_LEN];

	pcv_format_u128(ns / NS, s, sizeof(s));
	if (ns % NS == 0) {
		snprintf(buf, len, "%ss", s);
		return;
	}
	char f[16];
	snprintf(f, sizeof(f), "%09" PRIu64, (uint64_t)(ns % NS));
	for (int i = 8; i > 0 && f[i] == '0'; i--)
		f[i] = '\0';
	snprintf(buf, len, "%s.%ss", s, f);
}

void
pcv_format_duration(uint64_t ns, char *buf, size_t len)
{
	pcv_format_duration_u128(ns, buf, len);
}

/* ---- for people: the HTML page's quantities, rounded to three significant digits ---- */

/*
 * x in units of unit, rounded half up to three significant digits (one
 * digit before the point: two after, ...): the digits, with *dec of them
 * after the point. Exact in 128 bits for any x.
 */
static u128
sig3(u128 x, u128 unit, unsigned *dec)
{
	*dec = x < 10 * unit ? 2 : x < 100 * unit ? 1 : 0;
	u128 p = *dec == 2 ? 100 : *dec == 1 ? 10 : 1;

	return x / unit * p + (x % unit * p + unit / 2) / unit;
}

/* digits with dec of them after the point, trailing zeros dropped: "37.5", "10", "1.25" */
static void
put_digits(u128 digits, unsigned dec, const char *unit, char *buf, size_t len)
{
	u128 p = dec == 2 ? 100 : dec == 1 ? 10 : 1;
	unsigned frac = (unsigned)(digits % p);
	char ip[U128_LEN], fp[4] = "";

	pcv_format_u128(digits / p, ip, sizeof(ip));
	if (frac != 0) {
		snprintf(fp, sizeof(fp), dec == 2 ? "%02u" : "%u", frac);
		if (fp[1] == '0')
			fp[1] = '\0';
	}
	snprintf(buf, len, "%s%s%s %s", ip, frac != 0 ? "." : "", fp, unit);
}

/* x in decimal prefixes of unit[0]: below 1000 exactly, above in three significant digits. */
static void
human_si(u128 x, const char *const *unit, int nunits, char *buf, size_t len)
{
	u128 scale = 1;
	unsigned dec;
	int u = 0;

	while (u + 1 < nunits && x >= scale * 1000) {
		scale *= 1000;
		u++;
	}
	u128 d = sig3(x, scale, &dec);
	/* 999.5 kB rounds to 1000 kB, which reads as 1 MB */
	if (u > 0 && u + 1 < nunits && d >= (dec == 2 ? 100000 : dec == 1 ? 10000 : 1000)) {
		scale *= 1000;
		u++;
		d = sig3(x, scale, &dec);
	}
	put_digits(u == 0 ? x : d, u == 0 ? 0 : dec, unit[u], buf, len);
}

void
pcv_human_bytes(u128 bytes, char *buf, size_t len)
{
	static const char *const unit[] = { "B",  "kB", "MB", "GB", "TB", "PB",
					    "EB", "ZB", "YB", "RB", "QB" };

	human_si(bytes, unit, (int)(sizeof(unit) / sizeof(unit[0])), buf, len);
}

void
pcv_human_rate(u128 bps, char *buf, size_t len)
{
	static const char *const unit[] = { "bit/s",  "kbit/s", "Mbit/s", "Gbit/s",
					    "Tbit/s", "Pbit/s", "Ebit/s", "Zbit/s",
					    "Ybit/s", "Rbit/s", "Qbit/s" };

	human_si(bps, unit, (int)(sizeof(unit) / sizeof(unit[0])), buf, len);
}

/* ns in unit (below limit of it) when it rounds to less than limit; false when it carries */
static bool
human_small(u128 ns, u128 unit, u128 limit, const char *name, char *buf, size_t len)
{
	unsigned dec;
	u128 d = sig3(ns, unit, &dec), p = dec == 2 ? 100 : dec == 1 ? 10 : 1;

	if (d >= limit * p)
		return false;
	put_digits(d, dec, name, buf, len);
	return true;
}

/*
 * Two units, the smaller rounded half up: "4 min 0 s", "2 h 5 min",
 * "3 d 4 h"; false when it rounds to limit of the larger one.
 */
static bool
human_pair(u128 ns, u128 big, u128 small, u128 limit, const char *bn, const char *sn, char *buf,
	   size_t len)
{
	u128 n = ns / small + (ns % small >= small / 2);
	char b[U128_LEN];

	if (limit != 0 && n / (big / small) >= limit)
		return false;
	pcv_format_u128(n / (big / small), b, sizeof(b));
	snprintf(buf, len, "%s %s %u %s", b, bn, (unsigned)(n % (big / small)), sn);
	return true;
}

void
pcv_human_duration(u128 ns, char *buf, size_t len)
{
	const u128 s = NS, min = 60 * s, h = 60 * min, d = 24 * h;

	if (ns == 0) {
		snprintf(buf, len, "0 s");
		return;
	}
	if (ns < 1000) {
		snprintf(buf, len, "%u ns", (unsigned)ns);
		return;
	}
	if ((ns < 1000000 &&
	     human_small(ns, 1000, 1000,
			 "\xc2\xb5"
			 "s",
			 buf, len)) ||
	    (ns < s && human_small(ns, 1000000, 1000, "ms", buf, len)) ||
	    (ns < min && human_small(ns, s, 60, "s", buf, len)) ||
	    (ns < h && human_pair(ns, min, s, 60, "min", "s", buf, len)) ||
	    (ns < d && human_pair(ns, h, min, 24, "h", "min", buf, len)))
		return;
	human_pair(ns, d, h, 0, "d", "h", buf, len);
}

void
pcv_human_permille(uint64_t permille, char *buf, size_t len)
{
	snprintf(buf, len, "%" PRIu64 ".%u %%", permille / 10, (unsigned)(permille % 10));
}

const char *
pcv_promise_name(uint8_t mode)
{
	return mode & PC_POD_MODE_WINDOW ? "window" : "envelope";
}

const char *
pcv_promises_label(uint8_t promises)
{
	static const char *const label[] = { "", "envelope", "window", "envelope, window" };

	return label[promises & (PROMISE_ENVELOPE | PROMISE_WINDOW)];
}
