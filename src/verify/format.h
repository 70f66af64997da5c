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

/* The promises a pod was held to (podsum.promises): bits of every START or RELOAD that listed it. */
#define PROMISE_ENVELOPE 1u
#define PROMISE_WINDOW   2u

/* The promise a mode byte holds a pod to: "envelope" or "window". */
const char *pcv_promise_name(uint8_t mode);
/* The promises of podsum.promises: "envelope", "window", "envelope, window" ("" for none). */
const char *pcv_promises_label(uint8_t promises);

#endif /* PODCAP_VERIFY_FORMAT_H */
