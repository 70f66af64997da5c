/* SPDX-License-Identifier: BSD-3-Clause */
#include <ctype.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <time.h>

#include "clock.h"
#include "error.h"
#include "units.h"

static uint64_t
read_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * PC_NS_PER_SEC + (uint64_t)ts.tv_nsec;
}

uint64_t
pc_mono_ns(void)
{
	return read_ns(CLOCK_MONOTONIC);
}

uint64_t
pc_now_ns(void)
{
	return read_ns(CLOCK_REALTIME);
}

void
pc_utc_format(uint64_t ns, char *buf, size_t len)
{
	time_t secs = (time_t)(ns / PC_NS_PER_SEC);
	uint64_t frac = ns % PC_NS_PER_SEC;
	struct tm tm;
	char base[32];
	char f[16];

	gmtime_r(&secs, &tm);
	strftime(base, sizeof(base), "%Y-%m-%dT%H:%M:%S", &tm);
	if (frac == 0) {
		snprintf(buf, len, "%sZ", base);
		return;
	}
	snprintf(f, sizeof(f), "%09" PRIu64, frac);
	for (int i = 8; i > 0 && f[i] == '0'; i--)
		f[i] = '\0';
	snprintf(buf, len, "%s.%sZ", base, f);
}

/* n decimal digits at *s (advanced); false if they are not all digits. */
static bool
digits(const char **s, unsigned n, unsigned *out)
{
	*out = 0;
	for (unsigned i = 0; i < n; i++, (*s)++) {
		if (!isdigit((unsigned char)**s))
			return false;
		*out = *out * 10 + (unsigned)(**s - '0');
	}
	return true;
}

/* Days from 1970-01-01 to y-m-d in the proleptic Gregorian calendar (y >= 1970). */
static int64_t
days_from_civil(int64_t y, unsigned m, unsigned d)
{
	y -= m <= 2;
	int64_t era = y / 400;
	int64_t yoe = y - era * 400;
	int64_t doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
	int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;

	return era * 146097 + doe - 719468;
}

static unsigned
month_days(unsigned y, unsigned m)
{
	static const unsigned days[12] = { 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };
	bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;

	return m == 2 && leap ? 29 : days[m - 1];
}

/* The fraction of a second after the '.', to ns: at most 9 digits. */
static bool
fraction(const char **s, uint64_t *ns)
{
	unsigned n = 0;

	*ns = 0;
	while (isdigit((unsigned char)**s)) {
		if (++n > 9)
			return false;
		*ns = *ns * 10 + (uint64_t)(**s - '0');
		(*s)++;
	}
	for (unsigned i = n; i < 9; i++)
		*ns *= 10;
	return n > 0;
}

/* "Z", or "+HH:MM" / "-HH:MM": seconds to subtract from the local time. */
static bool
offset(const char *s, int64_t *secs)
{
	unsigned h, m;

	if ((s[0] == 'Z' || s[0] == 'z') && s[1] == '\0') {
		*secs = 0;
		return true;
	}
	if (s[0] != '+' && s[0] != '-')
		return false;
	int sign = s[0] == '-' ? -1 : 1;
	s++;
	if (!digits(&s, 2, &h) || *s++ != ':' || !digits(&s, 2, &m) || *s != '\0' || h > 23 ||
	    m > 59)
		return false;
	*secs = sign * (int64_t)(h * 3600 + m * 60);
	return true;
}

int
pc_utc_parse(const char *s, uint64_t *ns, struct pc_error *err)
{
	unsigned y, mo, d, h, mi, sec;
	uint64_t frac = 0;
	int64_t off;
	const char *p = s;

	bool ok = digits(&p, 4, &y) && *p++ == '-' && digits(&p, 2, &mo) && *p++ == '-' &&
		  digits(&p, 2, &d) && (*p == 'T' || *p == 't' || *p == ' ');
	if (ok) {
		p++;
		ok = digits(&p, 2, &h) && *p++ == ':' && digits(&p, 2, &mi) && *p++ == ':' &&
		     digits(&p, 2, &sec);
	}
	if (ok && *p == '.') {
		p++;
		ok = fraction(&p, &frac);
	}
	if (!ok || !offset(p, &off))
		return pc_error_set(err, "'%s' is not an RFC 3339 time (2024-01-01T00:00:00Z)", s);
	if (y < 1970 || mo < 1 || mo > 12 || d < 1 || d > month_days(y, mo) || h > 23 || mi > 59 ||
	    sec > 59)
		return pc_error_set(err, "'%s': no such time, or before 1970", s);
	int64_t t = days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + sec - off;
	if (t < 0 || (uint64_t)t > (UINT64_MAX - frac) / PC_NS_PER_SEC)
		return pc_error_set(err, "'%s': out of range", s);
	*ns = (uint64_t)t * PC_NS_PER_SEC + frac;
	return 0;
}
