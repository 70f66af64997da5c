/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What a check's part of a report is written with (check.h, report):
 * aligned text tables, JSON values and lists, HTML text and table cells,
 * each in the one form every report uses (no clock, no locale). At the
 * bottom of src/verify with format.h: it calls no check and no report.
 */
#ifndef PODCAP_VERIFY_PRINT_H
#define PODCAP_VERIFY_PRINT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "format.h"

struct pc_verify;

/* ---- text: a table of strings, printed with columns aligned; rows are built cell by cell ---- */

#define PCV_TABLE_COLS 12
#define PCV_CELL_LEN   96

struct pcv_table {
	unsigned ncols;
	size_t nrows, cap;
	char (*cells)[PCV_TABLE_COLS][PCV_CELL_LEN];
	/* when set, row r ends with tail(r, ctx) after the columns, unpadded and uncut */
	const char *(*tail)(size_t row, const void *ctx);
	const void *ctx;
};

void pcv_table_cell(struct pcv_table *t, size_t row, unsigned col, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Prints every row after indent, then empties the table. */
void pcv_table_print(struct pcv_table *t, const char *indent, FILE *f);

/* ---- JSON ---- */

/* A time as a UTC ISO 8601 string; null when not known. */
void pcv_json_time(FILE *f, uint64_t ns);
void pcv_json_time_or_null(FILE *f, uint64_t ns, bool known);
void pcv_json_hex(FILE *f, const uint8_t *b, size_t n);
/* "name": [item 0, ..., item n - 1], each item on a line of its own. */
void pcv_json_list(FILE *f, const char *name, const struct pc_verify *v, uint64_t n,
		   void (*item)(FILE *, const struct pc_verify *, uint64_t));
/* "WHAT_total", "WHAT_listed", "WHAT_truncated": whether the list that follows has them all. */
void pcv_json_counts(FILE *f, const char *what, uint64_t total);

/* ---- HTML: cells are <td data-k="key">, the key naming the JSON field they equal ---- */

void pcv_html_time(FILE *f, uint64_t ns);
/* Bytes for people: "37.5 GB" (pcv_human_bytes). */
void pcv_html_size(FILE *f, uint64_t bytes);
void pcv_td_u64(FILE *f, const char *key, uint64_t x);
void pcv_td_u128(FILE *f, const char *key, u128 x);
/*
 * A quantity for people, its every digit in the cell's title (a tooltip):
 * <td class="n" data-k="bytes" title="37500000000 B">37.5 GB</td>.
 */
void pcv_td_human(FILE *f, const char *key, const char *human, const char *exact);
void pcv_td_bytes(FILE *f, const char *key, u128 bytes);           /* title "N B" */
void pcv_td_rate(FILE *f, const char *key, u128 bps);              /* title "N bit/s" */
void pcv_td_duration(FILE *f, const char *key, u128 ns);           /* title "N ns" */
void pcv_td_permille(FILE *f, const char *key, uint64_t permille); /* "93.7 %", title "937 ‰" */
void pcv_td_str(FILE *f, const char *key, const char *s);
/* A time, or "-" when not known. */
void pcv_td_time(FILE *f, const char *key, uint64_t ns, bool known);
/* <tr><th>label</th><td ...>x</td></tr> */
void pcv_tr_u64(FILE *f, const char *label, const char *key, uint64_t x);

#endif /* PODCAP_VERIFY_PRINT_H */
