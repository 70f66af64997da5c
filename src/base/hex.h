/* SPDX-License-Identifier: BSD-3-Clause */
/* Lower-case hex, as digests, roots and build ids are written everywhere. */
#ifndef PODCAP_HEX_H
#define PODCAP_HEX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Writes 2n hex digits and a NUL into buf (at least 2n+1 bytes). */
void pc_hex(const uint8_t *bytes, size_t n, char *buf);
/*
 * Reads exactly 2n hex digits from s (either case) into out. False when s
 * has another length (len != 2n) or a byte that is not a hex digit.
 */
bool pc_unhex(const char *s, size_t len, uint8_t *out, size_t n);

#endif /* PODCAP_HEX_H */
