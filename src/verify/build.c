/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Build (docs/verify.md, check 12): the build id of every record but a
 * START is that of the START in force, so a build changes only at a
 * start; with --build-id, a START of a build the verifier did not pin is a
 * failure. The one exception is the GAP a new podcapd writes for its
 * downtime just before its START, with the new build. The report lists
 * every build with the windows that ran under it.
 */
#include <inttypes.h>
#include <string.h>

#include "base/hex.h"
#include "log/record.h"
#include "verify.h"

#include "lines.h"
#include "print.h"
#include "uses.h"
#include "verify_impl.h"

#define ID_HEX_LEN (2 * 32 + 1)

struct build {
	uint8_t build[32];        /* the build id of the START in force */
	uint64_t build_record;    /* that START */
	int64_t gap_build_record; /* a GAP of another build, waiting for its START; -1 */
	uint8_t gap_build[32];
	struct pcv_uses builds;
};

static int
build_init(struct pc_verify *v, void *st)
{
	struct build *b = st;

	(void)v;
	b->gap_build_record = -1;
	return pcv_uses_init(&b->builds);
}

static void
build_free(void *st)
{
	pcv_uses_free(&((struct build *)st)->builds);
}

static bool
pinned(const struct pc_verify *v, const uint8_t id[32])
{
	if (v->policy.nbuild_ids == 0)
		return true;
	for (size_t i = 0; i < v->policy.nbuild_ids; i++)
		if (memcmp(v->policy.build_ids[i], id, 32) == 0)
			return true;
	return false;
}

/* A START: its build is in force from here on, if the verifier accepts it. */
static void
start_build(struct pc_verify *v, struct build *b, uint64_t index, const struct pc_record *r)
{
	char a[ID_HEX_LEN];

	pc_hex(r->build_id, 32, a);
	if (!pinned(v, r->build_id))
		pcv_fail(v, PC_VC_BUILD, (int64_t)index, r,
			 "build %s is none of the %zu the "
			 "verifier accepts (--build-id)",
			 a, v->policy.nbuild_ids);
	memcpy(b->build, r->build_id, 32);
	b->build_record = index;
	pcv_use_begin(&b->builds, r->build_id, index, -1);
}

static void
wrong_build(struct pc_verify *v, const struct build *b, uint64_t index, const struct pc_record *r,
	    const uint8_t *id)
{
	char x[ID_HEX_LEN], y[ID_HEX_LEN];

	pc_hex(id, 32, x);
	pc_hex(b->build, 32, y);
	pcv_fail(v, PC_VC_BUILD, (int64_t)index, r,
		 "%s of build %s, the start in force (record %" PRIu64
		 ") is of build %s: a build changes only at a start",
		 pc_record_type_name(r->type), x, b->build_record, y);
}

/*
 * A build changes only at a START. The GAP that a new podcapd writes for
 * its downtime comes just before its START, with the new build: a GAP of
 * another build waits for a START of that build.
 */
static void
build_record(struct pc_verify *v, void *st, uint64_t index, const struct pc_record *r)
{
	struct build *b = st;
	struct pc_record g = { .type = PC_REC_GAP };

	if (r->type == PC_REC_START) {
		if (b->gap_build_record >= 0 && memcmp(b->gap_build, r->build_id, 32) != 0)
			wrong_build(v, b, (uint64_t)b->gap_build_record, &g, b->gap_build);
		b->gap_build_record = -1;
		start_build(v, b, index, r);
		return;
	}
	if (!v->started)
		return; /* the sequence refuses it */
	if (b->gap_build_record >= 0) {
		if (r->type == PC_REC_GAP && memcmp(r->build_id, b->gap_build, 32) == 0)
			return;
		wrong_build(v, b, (uint64_t)b->gap_build_record, &g, b->gap_build);
		b->gap_build_record = -1;
	}
	if (memcmp(r->build_id, b->build, 32) == 0)
		return;
	if (r->type == PC_REC_GAP) {
		b->gap_build_record = (int64_t)index;
		memcpy(b->gap_build, r->build_id, 32);
		return;
	}
	wrong_build(v, b, index, r, r->build_id);
}

static void
build_window(struct pc_verify *v, void *st, uint64_t index, const struct pc_record *r)
{
	struct build *b = st;

	(void)v, (void)index;
	pcv_use_window(&b->builds, r);
}

uint64_t
pc_verify_nbuilds(const struct pc_verify *v)
{
	const struct build *b = pcv_state(v, PCV_BUILD);

	return b->builds.n;
}

const struct pc_verify_use *
pc_verify_build_at(const struct pc_verify *v, size_t i)
{
	const struct build *b = pcv_state(v, PCV_BUILD);

	return pcv_use_at(&b->builds, i);
}

/* ---- the saved state: the build in force, a GAP awaiting its START, the builds seen ---- */

static void
save_build(const struct pc_verify *v, const void *st, FILE *f)
{
	const struct build *b = st;

	(void)v;
	fputs("build", f);
	pcv_put_hex(f, b->build, 32);
	fprintf(f, " %" PRIu64, b->build_record);
	pcv_put_i128(f, b->gap_build_record);
	pcv_put_hex(f, b->gap_build, 32);
	fputc('\n', f);
}

static int
load_build(struct pc_verify *v, void *st, struct pcv_lines *ls, struct pc_error *err)
{
	struct build *b = st;
	char *s;

	(void)v;
	if (!pcv_line_is(ls, "build", &s) || !pcv_get_hex(&s, b->build, 32) ||
	    !pcv_get_u64(&s, &b->build_record) ||
	    !pcv_get_i64(&s, &b->gap_build_record, -1, INT64_MAX) ||
	    !pcv_get_hex(&s, b->gap_build, 32) || *s != '\0')
		return pcv_lines_bad(ls, err);
	return 0;
}

static void
save_uses(const struct pc_verify *v, const void *st, FILE *f)
{
	(void)v;
	pcv_uses_save(f, "builds", &((const struct build *)st)->builds);
}

static int
load_uses(struct pc_verify *v, void *st, struct pcv_lines *ls, struct pc_error *err)
{
	return pcv_uses_load(ls, "builds", &((struct build *)st)->builds, v->trusted.size, v->nmaps,
			     err);
}

/* ---- the reports ---- */

/* Whether --build-id named that build: false for every build when it named none. */
static bool
named(const struct pc_verify *v, const uint8_t id[32])
{
	for (size_t i = 0; i < v->policy.nbuild_ids; i++)
		if (memcmp(v->policy.build_ids[i], id, 32) == 0)
			return true;
	return false;
}

static void
build_text(const struct pc_verify *v, const void *st, FILE *f)
{
	const struct build *b = st;
	struct pcv_table t = { .ncols = 6 };
	uint64_t n = b->builds.n;
	char id[ID_HEX_LEN];

	if (n == 0)
		return;
	fprintf(f, "\nbuilds:\n");
	pcv_table_cell(&t, 0, 0, "build");
	pcv_use_header(&t, 1);
	pcv_table_cell(&t, 0, 5, "pinned");
	for (uint64_t i = 0; i < pcv_kept(n); i++) {
		const struct pc_verify_use *u = pcv_use_at(&b->builds, i);

		pc_hex(u->id, 32, id);
		pcv_table_cell(&t, i + 1, 0, "%s", id);
		pcv_use_cells(&t, i + 1, 1, u);
		pcv_table_cell(&t, i + 1, 5, "%s", named(v, u->id) ? "yes" : "no");
	}
	pcv_table_print(&t, "  ", f);
	pcv_uses_left_out(f, n, "builds");
}

static void
json_build(FILE *f, const struct pc_verify *v, uint64_t i)
{
	const struct pc_verify_use *u = pc_verify_build_at(v, i);

	fprintf(f, "{\"build\": ");
	pcv_json_hex(f, u->id, 32);
	pcv_json_use_fields(f, u);
	fprintf(f, ", \"pinned\": %s}", named(v, u->id) ? "true" : "false");
}

static void
build_json(const struct pc_verify *v, const void *st, FILE *f)
{
	const struct build *b = st;

	pcv_json_counts(f, "builds", b->builds.n);
	pcv_json_list(f, "builds", v, pcv_kept(b->builds.n), json_build);
}

const struct pcv_check pcv_build_check = {
	.name = "build",
	.size = sizeof(struct build),
	.init = build_init,
	.free = build_free,
	.record = build_record,
	.on[PC_REC_WINDOW] = build_window,
	.sections = (const struct pcv_section[]){ { "build", save_build, load_build },
						  { "uses builds", save_uses, load_uses },
						  { NULL } },
	.report[PCV_TEXT] = build_text,
	.report[PCV_JSON] = build_json,
};
