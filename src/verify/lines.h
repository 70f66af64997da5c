/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The lines of a verifier's saved state (docs/log-format.md, "The
 * verifier's state"), as each check writes and reads its sections:
 * numbers decimal after a space, hashes lowercase hex, and reading back to
 * the letter, since the file is parsed as hostile input. At the bottom of
 * src/verify with finding.h and format.h.
 */
#ifndef PODCAP_VERIFY_LINES_H
#define PODCAP_VERIFY_LINES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "base/error.h"
#include "base/id.h"
#include "format.h"

/* ---- writing ---- */

void pcv_put_u128(FILE *f, u128 x);
void pcv_put_i128(FILE *f, i128 x);
void pcv_put_hex(FILE *f, const uint8_t *b, size_t n);

/* ---- reading: every line parses to the letter, or the state is refused ---- */

/* A cursor over the state's lines; every parse error names the line. */
struct pcv_lines {
	const char *p, *end;
	unsigned lineno;
	char line[4096];
};

/* The next line: "word rest", rest in *s, when it starts with word. */
bool pcv_line_is(struct pcv_lines *ls, const char *word, char **s);
/* The next space-separated token of *s (advanced), each a number, hash or id to the letter. */
bool pcv_get_u128(char **s, u128 *x);
bool pcv_get_u64(char **s, uint64_t *x);
bool pcv_get_i128(char **s, i128 *x); /* |x| at most SAT */
bool pcv_get_i64(char **s, int64_t *x, int64_t lo, int64_t hi);
bool pcv_get_hex(char **s, uint8_t *b, size_t n);
bool pcv_get_id(char **s, char id[PC_ID_LEN]);
/* -1 and "malformed state at line N after the checkpoint" in err. */
int pcv_lines_bad(const struct pcv_lines *ls, struct pc_error *err);

#endif /* PODCAP_VERIFY_LINES_H */
