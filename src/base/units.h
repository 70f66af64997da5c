/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Units of the pod map: bit rates, byte sizes and durations.
 *
 * Every value is parsed into an exact integer in base units (bit/s, bytes,
 * nanoseconds), so that "1Gbps" and "1000Mbps" are the same value and the
 * canonical digest does not depend on how a value was spelled.
 */
#ifndef PODCAP_UNITS_H
#define PODCAP_UNITS_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"

#define PC_NS_PER_SEC 1000000000ULL

/*
 * Each parser returns 0 on success, or -1 with err set to an English
 * message ("missing unit", "unknown unit 'Gb' (use bps, Kbps, Mbps or Gbps)",
 * "value out of range", ...). Decimal fractions are accepted ("7.5GB",
 * "2.5Gbps") when the result is a whole number of base units.
 */
int pc_parse_rate(const char *s, uint64_t *bps, struct pc_error *err);     /* bps Kbps Mbps Gbps Tbps */
int pc_parse_size(const char *s, uint64_t *bytes, struct pc_error *err);   /* B KB MB GB TB KiB MiB GiB TiB */
int pc_parse_duration(const char *s, uint64_t *ns, struct pc_error *err);  /* ns us ms s m h */

/* Human-readable forms, e.g. "1Gbps", "7.5GB", "60s"; always NUL-terminated. */
void pc_format_rate(char *buf, size_t len, uint64_t bps);
void pc_format_size(char *buf, size_t len, uint64_t bytes);
void pc_format_duration(char *buf, size_t len, uint64_t ns);

#endif /* PODCAP_UNITS_H */
