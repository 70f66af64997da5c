/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The verifier's number forms (verify/format.h), the same in its messages,
 * its reports and its saved state: no locale, every digit.
 */
#include <inttypes.h>
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
