/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The numbers the verifier counts in and the forms it writes them in: in
 * its findings' messages, its reports and its saved state. At the bottom
 * of src/verify: it includes no other file of it and calls nothing in it.
 */
#ifndef PODCAP_VERIFY_FORMAT_H
#define PODCAP_VERIFY_FORMAT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "base/units.h"

#define NS ((uint64_t)PC_NS_PER_SEC)

typedef __int128 i128;
typedef unsigned __int128 u128;

/* Envelope sums saturate here: far beyond any real value, far below overflow. */
#define SAT ((i128)1 << 125)

#define U128_LEN     40 /* room for any pcv_format_u128 output: 39 digits and a NUL */
#define DURATION_LEN 32 /* room for any pcv_format_duration output */

/* Decimal, as no printf conversion writes 128 bits. */
void pcv_format_u128(u128 x, char *buf, size_t len);
void pcv_print_u128(FILE *f, u128 x);
/* Seconds with every significant digit: "60s", "1.25s", "0.000001s". */
void pcv_format_duration(uint64_t ns, char *buf, size_t len);
/* The same for totals, which may pass 2^64 ns. */
void pcv_format_duration_u128(u128 ns, char *buf, size_t len);

/*
 * For people (the HTML page; the JSON and the text keep every digit):
 * below 1000 of the base unit exact, above it three significant digits,
 * rounded half up, trailing zeros dropped, a unit that rounds to 1000
 * carried to the next. Decimal prefixes, as link rates are quoted.
 */
#define HUMAN_LEN 48 /* room for any pcv_human_* output */
/* "999 B", "1 kB", "37.5 GB", "18.4 EB" */
void pcv_human_bytes(u128 bytes, char *buf, size_t len);
/* "400 Gbit/s", "2.5 Mbit/s" */
void pcv_human_rate(u128 bps, char *buf, size_t len);
/*
 * "0 s", "999 ns", "1.5 µs", "10 ms", "59.9 s", then two units, the smaller
 * rounded: "4 min 0 s", "2 h 5 min", "3 d 4 h".
 */
void pcv_human_duration(u128 ns, char *buf, size_t len);
/* A share in per mille as a percentage with one decimal: 937 is "93.7 %". */
void pcv_human_permille(uint64_t permille, char *buf, size_t len);

/* The promises a pod was held to (podsum.promises): bits of every START or RELOAD that listed it. */
#define PROMISE_ENVELOPE 1u
#define PROMISE_WINDOW   2u

/* The promise a mode byte holds a pod to: "envelope" or "window". */
const char *pcv_promise_name(uint8_t mode);
/* The promises of podsum.promises: "envelope", "window", "envelope, window" ("" for none). */
const char *pcv_promises_label(uint8_t promises);

#endif /* PODCAP_VERIFY_FORMAT_H */
