/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The forms report parts are written in (verify/print.h): every text that
 * comes from a log or a file is escaped, in JSON strings as in HTML.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "base/hex.h"
#include "base/units.h"
#include "verify.h"

#include "finding.h"
#include "print.h"

/* ---- text ---- */

void
pcv_table_cell(struct pcv_table *t, size_t row, unsigned col, const char *fmt, ...)
{
	va_list ap;

	if (row >= t->cap) {
		size_t n = t->cap ? t->cap * 2 : 16;
		void *p = realloc(t->cells, n * sizeof(*t->cells));
		if (p == NULL)
			abort();
		t->cells = p;
		memset(t->cells + t->cap, 0, (n - t->cap) * sizeof(*t->cells));
		t->cap = n;
	}
	if (row >= t->nrows)
		t->nrows = row + 1;
	va_start(ap, fmt);
	vsnprintf(t->cells[row][col], PCV_CELL_LEN, fmt, ap);
	va_end(ap);
}

void
pcv_table_print(struct pcv_table *t, const char *indent, FILE *f)
{
	size_t w[PCV_TABLE_COLS] = { 0 };

	for (size_t r = 0; r < t->nrows; r++)
		for (unsigned c = 0; c < t->ncols; c++)
			if (strlen(t->cells[r][c]) > w[c])
				w[c] = strlen(t->cells[r][c]);
	for (size_t r = 0; r < t->nrows; r++) {
		fputs(indent, f);
		for (unsigned c = 0; c < t->ncols; c++) {
			if (c + 1 == t->ncols && t->tail == NULL)
				fprintf(f, "%s\n", t->cells[r][c]);
			else
				fprintf(f, "%-*s  ", (int)w[c], t->cells[r][c]);
		}
		if (t->tail != NULL)
			fprintf(f, "%s\n", t->tail(r, t->ctx));
	}
	free(t->cells);
	t->cells = NULL;
	t->nrows = t->cap = 0;
}

/* ---- JSON ---- */

/* A JSON string: the short escapes where JSON has them, \u00XX for other controls. */
void
pc_json_string(FILE *f, const char *s)
{
	static const char plain[] = "\"\\\n\t\r", escaped[] = "\"\\ntr";

	fputc('"', f);
	for (const unsigned char *p = (const unsigned char *)s; *p != '\0'; p++) {
		const char *k = strchr(plain, *p);

		if (k != NULL)
			fprintf(f, "\\%c", escaped[k - plain]);
		else if (*p < 0x20 || *p == 0x7f)
			fprintf(f, "\\u%04x", *p);
		else
			fputc(*p, f);
	}
	fputc('"', f);
}

void
pcv_json_time(FILE *f, uint64_t ns)
{
	char t[PC_UTC_LEN];

	pc_utc_format(ns, t, sizeof(t));
	pc_json_string(f, t);
}

void
pcv_json_time_or_null(FILE *f, uint64_t ns, bool known)
{
	if (known)
		pcv_json_time(f, ns);
	else
		fputs("null", f);
}

void
pcv_json_hex(FILE *f, const uint8_t *b, size_t n)
{
	char h[2 * 64 + 1];

	pc_hex(b, n, h);
	pc_json_string(f, h);
}

void
pcv_json_list(FILE *f, const char *name, const struct pc_verify *v, uint64_t n,
	      void (*item)(FILE *, const struct pc_verify *, uint64_t))
{
	fprintf(f, "  \"%s\": [", name);
	for (uint64_t i = 0; i < n; i++) {
		fputs(i == 0 ? "\n    " : ",\n    ", f);
		item(f, v, i);
	}
	fprintf(f, "%s],\n", n == 0 ? "" : "\n  ");
}

void
pcv_json_counts(FILE *f, const char *what, uint64_t total)
{
	fprintf(f,
		"  \"%s_total\": %" PRIu64 ",\n  \"%s_listed\": %" PRIu64 ",\n"
		"  \"%s_truncated\": %s,\n",
		what, total, what, pcv_kept(total), what,
		total > pcv_kept(total) ? "true" : "false");
}

/* ---- HTML ---- */

/* s with &, <, >, " and ' escaped: safe in element text and in quoted attributes. */
void
pc_html_escape(FILE *f, const char *s)
{
	for (const char *p = s; *p != '\0'; p++) {
		switch (*p) {
		case '&':
			fputs("&amp;", f);
			break;
		case '<':
			fputs("&lt;", f);
			break;
		case '>':
			fputs("&gt;", f);
			break;
		case '"':
			fputs("&quot;", f);
			break;
		case '\'':
			fputs("&#39;", f);
			break;
		default:
			fputc(*p, f);
		}
	}
}

void
pcv_html_time(FILE *f, uint64_t ns)
{
	char t[PC_UTC_LEN];

	pc_utc_format(ns, t, sizeof(t));
	pc_html_escape(f, t);
}

void
pcv_html_size(FILE *f, uint64_t bytes)
{
	char b[HUMAN_LEN];

	pcv_human_bytes(bytes, b, sizeof(b));
	pc_html_escape(f, b);
}

void
pcv_td_u64(FILE *f, const char *key, uint64_t x)
{
	fprintf(f, "<td class=\"n\" data-k=\"%s\">%" PRIu64 "</td>", key, x);
}

void
pcv_td_u128(FILE *f, const char *key, u128 x)
{
	fprintf(f, "<td class=\"n\" data-k=\"%s\">", key);
	pcv_print_u128(f, x);
	fputs("</td>", f);
}

void
pcv_td_human(FILE *f, const char *key, const char *human, const char *exact)
{
	fprintf(f, "<td class=\"n\" data-k=\"%s\" title=\"", key);
	pc_html_escape(f, exact);
	fputs("\">", f);
	pc_html_escape(f, human);
	fputs("</td>", f);
}

/* x in unit, every digit: the title of a cell that shows it rounded */
static void
exact_text(u128 x, const char *unit, char *buf, size_t len)
{
	char d[U128_LEN];

	pcv_format_u128(x, d, sizeof(d));
	snprintf(buf, len, "%s %s", d, unit);
}

void
pcv_td_bytes(FILE *f, const char *key, u128 bytes)
{
	char h[HUMAN_LEN], e[U128_LEN + 8];

	pcv_human_bytes(bytes, h, sizeof(h));
	exact_text(bytes, "B", e, sizeof(e));
	pcv_td_human(f, key, h, e);
}

void
pcv_td_rate(FILE *f, const char *key, u128 bps)
{
	char h[HUMAN_LEN], e[U128_LEN + 8];

	pcv_human_rate(bps, h, sizeof(h));
	exact_text(bps, "bit/s", e, sizeof(e));
	pcv_td_human(f, key, h, e);
}

void
pcv_td_duration(FILE *f, const char *key, u128 ns)
{
	char h[HUMAN_LEN], e[U128_LEN + 8];

	pcv_human_duration(ns, h, sizeof(h));
	exact_text(ns, "ns", e, sizeof(e));
	pcv_td_human(f, key, h, e);
}

void
pcv_td_permille(FILE *f, const char *key, uint64_t permille)
{
	char h[HUMAN_LEN], e[U128_LEN + 16];

	pcv_human_permille(permille, h, sizeof(h));
	exact_text(permille, "\xe2\x80\xb0", e, sizeof(e)); /* U+2030 PER MILLE SIGN */
	pcv_td_human(f, key, h, e);
}

void
pcv_td_str(FILE *f, const char *key, const char *s)
{
	fprintf(f, "<td data-k=\"%s\">", key);
	pc_html_escape(f, s);
	fputs("</td>", f);
}

void
pcv_td_time(FILE *f, const char *key, uint64_t ns, bool known)
{
	char t[PC_UTC_LEN];

	if (known)
		pc_utc_format(ns, t, sizeof(t));
	pcv_td_str(f, key, known ? t : "-");
}

void
pcv_tr_u64(FILE *f, const char *label, const char *key, uint64_t x)
{
	fprintf(f, "<tr><th>%s</th>", label);
	pcv_td_u64(f, key, x);
	fputs("</tr>\n", f);
}
