/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Build ids or pod map digests: what ran under each, and which one is in
 * force (verify/build.c, verify/podmap.c): kept, saved and reported alike.
 */
#ifndef PODCAP_VERIFY_USES_H
#define PODCAP_VERIFY_USES_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "base/error.h"
#include "log/record.h"
#include "verify.h"

#include "print.h"

struct pcv_lines;

struct pcv_uses {
	struct pc_verify_use *u; /* PC_VERIFY_MAX_KEPT entries */
	uint64_t n;              /* all of them; the first PC_VERIFY_MAX_KEPT are kept */
	int64_t inforce;         /* index of the one in force, -1 when none (or not kept) */
};

int pcv_uses_init(struct pcv_uses *u); /* -1 when out of memory */
void pcv_uses_free(struct pcv_uses *u);
/* Puts `id` in force from record `index` on, adding it when new. */
void pcv_use_begin(struct pcv_uses *u, const uint8_t id[32], uint64_t index, int map);
/* A WINDOW accounted for, under the one in force. */
void pcv_use_window(struct pcv_uses *u, const struct pc_record *r);
const struct pc_verify_use *pcv_use_at(const struct pcv_uses *u, size_t i);

/* The state's "uses WHAT" section; every use's record before `size`, its map below nmaps. */
void pcv_uses_save(FILE *f, const char *what, const struct pcv_uses *u);
int pcv_uses_load(struct pcv_lines *ls, const char *what, struct pcv_uses *u, uint64_t size,
		  size_t nmaps, struct pc_error *err);

/* The text tables' columns of a use: first_record, first_window, last_end, windows. */
void pcv_use_header(struct pcv_table *t, unsigned col);
void pcv_use_cells(struct pcv_table *t, size_t row, unsigned col, const struct pc_verify_use *u);
/* "  N of M WHAT listed": the lists keep the first PC_VERIFY_MAX_KEPT. */
void pcv_uses_left_out(FILE *f, uint64_t n, const char *what);
/* The JSON's fields of a use, after its first. */
void pcv_json_use_fields(FILE *f, const struct pc_verify_use *u);

#endif /* PODCAP_VERIFY_USES_H */
