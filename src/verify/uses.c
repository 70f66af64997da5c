/* SPDX-License-Identifier: BSD-3-Clause */
/* The windows under each build id or pod map digest (verify/uses.h). */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"

#include "finding.h"
#include "lines.h"
#include "uses.h"

int
pcv_uses_init(struct pcv_uses *u)
{
	u->u = calloc(PC_VERIFY_MAX_KEPT, sizeof(*u->u));
	u->inforce = -1;
	return u->u == NULL ? -1 : 0;
}

void
pcv_uses_free(struct pcv_uses *u)
{
	free(u->u);
	u->u = NULL;
}

void
pcv_use_begin(struct pcv_uses *u, const uint8_t id[32], uint64_t index, int map)
{
	for (uint64_t i = 0; i < pcv_kept(u->n); i++)
		if (memcmp(u->u[i].id, id, 32) == 0) {
			u->inforce = (int64_t)i;
			return;
		}
	if (u->n++ >= PC_VERIFY_MAX_KEPT) {
		u->inforce = -1;
		return;
	}
	struct pc_verify_use *e = &u->u[u->n - 1];
	memset(e, 0, sizeof(*e));
	memcpy(e->id, id, 32);
	e->first_record = index;
	e->map = map;
	u->inforce = (int64_t)u->n - 1;
}

void
pcv_use_window(struct pcv_uses *u, const struct pc_record *r)
{
	if (u->inforce < 0)
		return;
	struct pc_verify_use *e = &u->u[u->inforce];
	if (e->windows == 0)
		e->first_window_ns = r->window_start_ns;
	e->last_end_ns = r->window_start_ns + r->window_count * r->window_len_ns;
	e->windows += r->window_count;
}

const struct pc_verify_use *
pcv_use_at(const struct pcv_uses *u, size_t i)
{
	return i < pcv_kept(u->n) ? &u->u[i] : NULL;
}

/* ---- the saved state ---- */

void
pcv_uses_save(FILE *f, const char *what, const struct pcv_uses *u)
{
	fprintf(f, "uses %s %" PRIu64 " %" PRIu64, what, u->n, pcv_kept(u->n));
	pcv_put_i128(f, u->inforce);
	fputc('\n', f);
	for (uint64_t i = 0; i < pcv_kept(u->n); i++) {
		const struct pc_verify_use *e = &u->u[i];

		fputs("use", f);
		pcv_put_hex(f, e->id, 32);
		fprintf(f, " %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64, e->first_record,
			e->first_window_ns, e->last_end_ns, e->windows);
		pcv_put_i128(f, e->map);
		fputc('\n', f);
	}
}

int
pcv_uses_load(struct pcv_lines *ls, const char *what, struct pcv_uses *u, uint64_t size,
	      size_t nmaps, struct pc_error *err)
{
	char *s;
	uint64_t kept;

	if (!pcv_line_is(ls, "uses", &s) || strncmp(s, what, strlen(what)) != 0 ||
	    s[strlen(what)] != ' ')
		return pcv_lines_bad(ls, err);
	s += strlen(what) + 1;
	if (!pcv_get_u64(&s, &u->n) || !pcv_get_u64(&s, &kept) || kept != pcv_kept(u->n) ||
	    !pcv_get_i64(&s, &u->inforce, -1, (int64_t)kept - 1) || *s != '\0')
		return pcv_lines_bad(ls, err);
	for (uint64_t i = 0; i < kept; i++) {
		struct pc_verify_use *e = &u->u[i];
		int64_t map;

		if (!pcv_line_is(ls, "use", &s) || !pcv_get_hex(&s, e->id, 32) ||
		    !pcv_get_u64(&s, &e->first_record) || !pcv_get_u64(&s, &e->first_window_ns) ||
		    !pcv_get_u64(&s, &e->last_end_ns) || !pcv_get_u64(&s, &e->windows) ||
		    !pcv_get_i64(&s, &map, -1, (int64_t)nmaps - 1) || *s != '\0' ||
		    e->first_record >= size)
			return pcv_lines_bad(ls, err);
		e->map = (int)map;
	}
	return 0;
}

/* ---- the reports ---- */

void
pcv_use_cells(struct pcv_table *t, size_t row, unsigned col, const struct pc_verify_use *u)
{
	char a[PC_UTC_LEN], b[PC_UTC_LEN];

	if (u->windows > 0) {
		pc_utc_format(u->first_window_ns, a, sizeof(a));
		pc_utc_format(u->last_end_ns, b, sizeof(b));
	} else {
		snprintf(a, sizeof(a), "-");
		snprintf(b, sizeof(b), "-");
	}
	pcv_table_cell(t, row, col, "%" PRIu64, u->first_record);
	pcv_table_cell(t, row, col + 1, "%s", a);
	pcv_table_cell(t, row, col + 2, "%s", b);
	pcv_table_cell(t, row, col + 3, "%" PRIu64, u->windows);
}

void
pcv_use_header(struct pcv_table *t, unsigned col)
{
	static const char *const cols[] = { "first_record", "first_window", "last_end", "windows" };

	for (unsigned c = 0; c < 4; c++)
		pcv_table_cell(t, 0, col + c, "%s", cols[c]);
}

void
pcv_uses_left_out(FILE *f, uint64_t n, const char *what)
{
	if (n > pcv_kept(n))
		fprintf(f, "  %" PRIu64 " of %" PRIu64 " %s listed, in the order first seen\n",
			pcv_kept(n), n, what);
}

void
pcv_json_use_fields(FILE *f, const struct pc_verify_use *u)
{
	fprintf(f, ", \"first_record\": %" PRIu64 ", \"first_window\": ", u->first_record);
	pcv_json_time_or_null(f, u->first_window_ns, u->windows > 0);
	fprintf(f, ", \"last_end\": ");
	pcv_json_time_or_null(f, u->last_end_ns, u->windows > 0);
	fprintf(f, ", \"windows\": %" PRIu64, u->windows);
}
