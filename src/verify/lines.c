/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Writing and reading the lines of a saved state (verify/lines.h). A
 * damaged state must never be taken for a good one: a number that is not
 * all digits, past its range or past 2^128 - 1 is refused, never wrapped.
 */
#include <string.h>

#include "base/hex.h"
#include "log/merkle.h"

#include "lines.h"

/* ---- writing ---- */

void
pcv_put_u128(FILE *f, u128 x)
{
	fputc(' ', f);
	pcv_print_u128(f, x);
}

void
pcv_put_i128(FILE *f, i128 x)
{
	fputs(x < 0 ? " -" : " ", f);
	pcv_print_u128(f, x < 0 ? (u128)-x : (u128)x);
}

void
pcv_put_hex(FILE *f, const uint8_t *b, size_t n)
{
	char h[2 * PC_HASH_LEN + 1];

	pc_hex(b, n, h);
	fprintf(f, " %s", h);
}

/* ---- reading ---- */

static bool
next_line(struct pcv_lines *ls)
{
	const char *nl = memchr(ls->p, '\n', (size_t)(ls->end - ls->p));

	if (nl == NULL || (size_t)(nl - ls->p) >= sizeof(ls->line))
		return false;
	memcpy(ls->line, ls->p, (size_t)(nl - ls->p));
	ls->line[nl - ls->p] = '\0';
	ls->p = nl + 1;
	ls->lineno++;
	return true;
}

/* Next space-separated token of *s (advanced); NULL at the end. */
static const char *
token(char **s)
{
	char *t = *s;

	if (t == NULL || *t == '\0')
		return NULL;
	char *sp = strchr(t, ' ');
	if (sp != NULL) {
		*sp = '\0';
		*s = sp + 1;
	} else {
		*s = t + strlen(t);
	}
	return t;
}

bool
pcv_get_u128(char **s, u128 *x)
{
	const char *t = token(s);

	if (t == NULL || *t == '\0' || strlen(t) > 39)
		return false;
	*x = 0;
	for (; *t != '\0'; t++) {
		u128 d = (u128)(*t - '0');
		if (*t < '0' || *t > '9' || *x > (~(u128)0 - d) / 10)
			return false; /* not a digit, or past 2^128 - 1: refused, not wrapped */
		*x = *x * 10 + d;
	}
	return true;
}

bool
pcv_get_u64(char **s, uint64_t *x)
{
	u128 y;

	if (!pcv_get_u128(s, &y) || y > UINT64_MAX)
		return false;
	*x = (uint64_t)y;
	return true;
}

bool
pcv_get_i128(char **s, i128 *x)
{
	u128 y;
	bool neg = *s != NULL && **s == '-';

	if (neg)
		(*s)++;
	if (!pcv_get_u128(s, &y) || y > (u128)SAT)
		return false;
	*x = neg ? -(i128)y : (i128)y;
	return true;
}

bool
pcv_get_hex(char **s, uint8_t *b, size_t n)
{
	const char *t = token(s);

	return t != NULL && pc_unhex(t, strlen(t), b, n);
}

bool
pcv_get_id(char **s, char id[PC_ID_LEN])
{
	const char *t = token(s);

	if (t == NULL || *t == '\0' || strlen(t) >= PC_ID_LEN)
		return false;
	memcpy(id, t, strlen(t) + 1);
	return true;
}

bool
pcv_get_i64(char **s, int64_t *x, int64_t lo, int64_t hi)
{
	i128 y;

	if (!pcv_get_i128(s, &y) || y < lo || y > hi)
		return false;
	*x = (int64_t)y;
	return true;
}

bool
pcv_line_is(struct pcv_lines *ls, const char *word, char **s)
{
	size_t n = strlen(word);

	if (!next_line(ls) || strncmp(ls->line, word, n) != 0 ||
	    (ls->line[n] != ' ' && ls->line[n] != '\0'))
		return false;
	*s = ls->line + n + (ls->line[n] == ' ');
	return true;
}

int
pcv_lines_bad(const struct pcv_lines *ls, struct pc_error *err)
{
	return pc_error_set(err, "malformed state at line %u after the checkpoint", ls->lineno);
}
