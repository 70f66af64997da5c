/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Reading the clocks and writing times. CLOCK_MONOTONIC paces windows and
 * times stages; CLOCK_REALTIME only labels windows. Times in records are
 * ns since the Unix epoch, UTC, and are written in ISO 8601.
 */
#ifndef PODCAP_CLOCK_H
#define PODCAP_CLOCK_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"

#define PC_UTC_LEN 40   /* room for any pc_utc_format output */

/* CLOCK_MONOTONIC in ns. */
uint64_t pc_mono_ns(void);
/* CLOCK_REALTIME in ns since the Unix epoch. */
uint64_t pc_now_ns(void);

/*
 * UTC ISO 8601 of ns since the epoch, e.g. "2024-01-01T00:01:00Z", with
 * fractional seconds (trailing zeros dropped) only when they are not zero.
 */
void pc_utc_format(uint64_t ns, char *buf, size_t len);
/*
 * An RFC 3339 time, "2024-01-01T00:01:00Z", "2024-01-01T01:01:00.5+01:00"
 * (T or t or a space, Z or z or an offset), into ns since the epoch; what
 * pc_utc_format writes reads back as the same value. 0, or -1 with err.
 */
int pc_utc_parse(const char *s, uint64_t *ns, struct pc_error *err);

#endif /* PODCAP_CLOCK_H */
