/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What the log says each pod and link passed and dropped: the totals of
 * the reports, added up window by window. Not a check of its own (a log's
 * counts are what the other checks judge), but a unit like one: its state
 * of each pod, the links by name, their lines in the saved state and the
 * reports' tables of them.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "shape/classify.h"
#include "shape/counters.h"
#include "log/record.h"
#include "verify.h"

#include "lines.h"
#include "print.h"
#include "totals.h"
#include "verify_impl.h"

struct linksum {
	char name[PC_ID_LEN];
	u128 frames[PC_DIR_COUNT][PC_LINK_DROP_COUNT];
	u128 bytes[PC_DIR_COUNT][PC_LINK_DROP_COUNT];
};

struct totals {
	struct linksum *links;
	uint32_t nlinks, cap_links;
	struct pcv_idmap ix;
};

static void
totals_free(void *st)
{
	struct totals *t = st;

	free(t->links);
	free(t->ix.slots);
}

const struct pc_verify_totals *
pcv_totals_of(const struct pc_verify *v, uint32_t pod)
{
	return pcv_pod_state(v, PCV_TOTALS, pod);
}

int
pc_verify_pod_totals(const struct pc_verify *v, const char *pod, enum pc_dir dir,
		     struct pc_verify_totals *t)
{
	int64_t i = pcv_pod_find(v, pod);

	if (i < 0 || (unsigned)dir >= PC_DIR_COUNT)
		return -1;
	*t = pcv_totals_of(v, (uint32_t)i)[dir];
	return 0;
}

/* ---- the links by name ---- */

static const char *
link_name(const void *ctx, uint32_t i)
{
	const struct totals *t = ctx;

	return t->links[i].name;
}

static uint32_t
link_index(struct totals *t, const char *name)
{
	bool added;
	uint32_t i = pcv_idmap_index(&t->ix, name, t->nlinks, &added, link_name, t);

	if (added) {
		t->links = pcv_grow(t->links, &t->cap_links, ++t->nlinks, sizeof(*t->links));
		memset(&t->links[i], 0, sizeof(t->links[i]));
		snprintf(t->links[i].name, PC_ID_LEN, "%s", name);
	}
	return i;
}

/* ---- each window ---- */

static void
totals_window(struct pc_verify *v, void *st, uint64_t index, const struct pc_record *r)
{
	struct totals *t = st;

	(void)v, (void)index;
	for (uint32_t i = 0; i < r->nlinks; i++) {
		uint32_t li = link_index(t, r->links[i].name); /* may move t->links */
		struct linksum *ls = &t->links[li];

		for (int d = 0; d < PC_DIR_COUNT; d++)
			for (int k = 0; k < PC_LINK_DROP_COUNT; k++) {
				ls->frames[d][k] += r->links[i].dir[d].drop_frames[k];
				ls->bytes[d][k] += r->links[i].dir[d].drop_bytes[k];
			}
	}
}

static void
totals_pod(struct pc_verify *v, void *st, void *podst, uint64_t index, const struct pc_record *r,
	   const struct pc_record_pod *p, uint32_t pod, int d)
{
	struct pc_verify_totals *t = &((struct pc_verify_totals *)podst)[d];
	const struct pc_pod_ctr *c = &p->dir[d];
	uint64_t dur = r->window_len_ns * r->window_count; /* cannot overflow: decoded */
	u128 cap_window = (u128)p->cap_bps * dur;          /* bit-ns in the window */
	u128 scaled = (u128)8 * NS * c->pass_bytes;        /* < 2^97 */

	(void)v, (void)st, (void)index, (void)pod;
	t->bytes += c->pass_bytes;
	t->frames += c->pass_frames;
	for (int k = 0; k < PC_POD_DROP_COUNT; k++) {
		t->drop_frames[k] += c->drop_frames[k];
		t->drop_bytes[k] += c->drop_bytes[k];
	}
	t->windows++;
	if (t->windows == 1 || c->pass_bytes > t->peak_bytes) {
		t->peak_bytes = c->pass_bytes;
		t->peak_window_start_ns = r->window_start_ns;
		if (cap_window == 0) {
			t->peak_permille = UINT64_MAX;
		} else {
			u128 pm = scaled * 1000 / cap_window;
			t->peak_permille = pm >= UINT64_MAX ? UINT64_MAX - 1 : (uint64_t)pm;
		}
	}
	/* 99% of the cap: 100 x 8e9 x bytes >= 99 x cap x ns, in 128 bits */
	if (cap_window < ((u128)1 << 120) && scaled * 100 >= cap_window * 99)
		t->at_cap++;
}

/* ---- the saved state: each pod's totals, each link's drops ---- */

static void
save_pod(const struct pc_verify *v, const void *podst, int d, FILE *f)
{
	const struct pc_verify_totals *t = &((const struct pc_verify_totals *)podst)[d];

	(void)v;
	fprintf(f, "totals %d", d);
	pcv_put_u128(f, t->bytes);
	pcv_put_u128(f, t->frames);
	for (int k = 0; k < PC_POD_DROP_COUNT; k++) {
		pcv_put_u128(f, t->drop_frames[k]);
		pcv_put_u128(f, t->drop_bytes[k]);
	}
	fprintf(f, " %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 "\n", t->windows,
		t->peak_bytes, t->peak_window_start_ns, t->peak_permille, t->at_cap);
}

static int
load_pod(struct pc_verify *v, void *podst, int d, struct pcv_lines *ls, struct pc_error *err)
{
	struct pc_verify_totals *t = &((struct pc_verify_totals *)podst)[d];
	char *s;
	uint64_t dd;

	(void)v;
	if (!pcv_line_is(ls, "totals", &s) || !pcv_get_u64(&s, &dd) || dd != (uint64_t)d ||
	    !pcv_get_u128(&s, &t->bytes) || !pcv_get_u128(&s, &t->frames))
		return pcv_lines_bad(ls, err);
	for (int k = 0; k < PC_POD_DROP_COUNT; k++)
		if (!pcv_get_u128(&s, &t->drop_frames[k]) || !pcv_get_u128(&s, &t->drop_bytes[k]))
			return pcv_lines_bad(ls, err);
	if (!pcv_get_u64(&s, &t->windows) || !pcv_get_u64(&s, &t->peak_bytes) ||
	    !pcv_get_u64(&s, &t->peak_window_start_ns) || !pcv_get_u64(&s, &t->peak_permille) ||
	    !pcv_get_u64(&s, &t->at_cap) || *s != '\0')
		return pcv_lines_bad(ls, err);
	return 0;
}

static void
save_links(const struct pc_verify *v, const void *st, FILE *f)
{
	const struct totals *t = st;

	(void)v;
	fprintf(f, "links %" PRIu32 "\n", t->nlinks);
	for (uint32_t i = 0; i < t->nlinks; i++) {
		fprintf(f, "link %s", t->links[i].name);
		for (int d = 0; d < PC_DIR_COUNT; d++)
			for (int k = 0; k < PC_LINK_DROP_COUNT; k++) {
				pcv_put_u128(f, t->links[i].frames[d][k]);
				pcv_put_u128(f, t->links[i].bytes[d][k]);
			}
		fputc('\n', f);
	}
}

static int
load_links(struct pc_verify *v, void *st, struct pcv_lines *ls, struct pc_error *err)
{
	struct totals *t = st;
	char *s, name[PC_ID_LEN];
	uint64_t n;

	(void)v;
	if (!pcv_line_is(ls, "links", &s) || !pcv_get_u64(&s, &n) || *s != '\0' ||
	    n > UINT32_MAX / 2)
		return pcv_lines_bad(ls, err);
	for (uint64_t i = 0; i < n; i++) {
		if (!pcv_line_is(ls, "link", &s) || !pcv_get_id(&s, name))
			return pcv_lines_bad(ls, err);
		uint32_t before = t->nlinks, li = link_index(t, name);
		if (li != before)
			return pcv_lines_bad(ls, err);
		for (int d = 0; d < PC_DIR_COUNT; d++)
			for (int k = 0; k < PC_LINK_DROP_COUNT; k++)
				if (!pcv_get_u128(&s, &t->links[li].frames[d][k]) ||
				    !pcv_get_u128(&s, &t->links[li].bytes[d][k]))
					return pcv_lines_bad(ls, err);
		if (*s != '\0')
			return pcv_lines_bad(ls, err);
	}
	return 0;
}

/* ---- the text report ---- */

static void
format_share(uint64_t permille, char *buf, size_t len)
{
	if (permille == UINT64_MAX)
		snprintf(buf, len, "-");
	else
		snprintf(buf, len, "%" PRIu64 ".%" PRIu64 "%%", permille / 10, permille % 10);
}

/* A count of drops as the tables show it: frames/bytes. */
static void
cell_drops(struct pcv_table *t, size_t row, unsigned col, u128 frames, u128 bytes)
{
	char a[U128_LEN], b[U128_LEN];

	pcv_format_u128(frames, a, sizeof(a));
	pcv_format_u128(bytes, b, sizeof(b));
	pcv_table_cell(t, row, col, "%s/%s", a, b);
}

static const char *const pod_cols[] = {
	"pod",        "dir",         "windows",  "bytes",  "frames",
	"peak_bytes", "peak_window", "peak/cap", "at_cap",
};
#define POD_COLS (unsigned)(sizeof(pod_cols) / sizeof(pod_cols[0]))

static void
pod_row(struct pcv_table *t, size_t row, const struct podsum *ps, const struct pc_verify_totals *tt,
	int d)
{
	char n[U128_LEN], c[PC_UTC_LEN], s[32];

	pcv_table_cell(t, row, 0, "%s", ps->id);
	pcv_table_cell(t, row, 1, "%s", pc_dir_name((enum pc_dir)d));
	pcv_table_cell(t, row, 2, "%" PRIu64, tt->windows);
	pcv_format_u128(tt->bytes, n, sizeof(n));
	pcv_table_cell(t, row, 3, "%s", n);
	pcv_format_u128(tt->frames, n, sizeof(n));
	pcv_table_cell(t, row, 4, "%s", n);
	pcv_table_cell(t, row, 5, "%" PRIu64, tt->peak_bytes);
	if (tt->windows > 0) {
		pc_utc_format(tt->peak_window_start_ns, c, sizeof(c));
		format_share(tt->peak_permille, s, sizeof(s));
	} else {
		snprintf(c, sizeof(c), "-");
		snprintf(s, sizeof(s), "-");
	}
	pcv_table_cell(t, row, 6, "%s", c);
	pcv_table_cell(t, row, 7, "%s", s);
	pcv_table_cell(t, row, 8, "%" PRIu64, tt->at_cap);
	for (int k = 0; k < PC_POD_DROP_COUNT; k++)
		cell_drops(t, row, POD_COLS + (unsigned)k, tt->drop_frames[k], tt->drop_bytes[k]);
}

/* The pods held to one promise (a pod a reload moved to the other is named under both). */
static void
print_promises_text(const struct pc_verify *v, FILE *f, unsigned promise, const char *what)
{
	const char *sep = ": ";

	for (uint32_t i = 0; i < v->npods; i++) {
		if (!(v->pods[i].promises & promise))
			continue;
		if (sep[0] == ':')
			fprintf(f, "promise %s", what);
		fprintf(f, "%s%s", sep, v->pods[i].id);
		sep = ", ";
	}
	if (sep[0] != ':')
		fputc('\n', f);
}

static void
print_pods_text(const struct pc_verify *v, FILE *f)
{
	struct pcv_table t = { .ncols = POD_COLS + PC_POD_DROP_COUNT };
	size_t row = 0;

	if (v->npods == 0)
		return;
	fputc('\n', f);
	for (unsigned c = 0; c < POD_COLS; c++)
		pcv_table_cell(&t, 0, c, "%s", pod_cols[c]);
	for (int k = 0; k < PC_POD_DROP_COUNT; k++)
		pcv_table_cell(&t, 0, POD_COLS + (unsigned)k, "%s",
			       pc_pod_drop_name((enum pc_pod_drop)k));
	for (uint32_t i = 0; i < v->npods; i++)
		for (int d = 0; d < PC_DIR_COUNT; d++)
			pod_row(&t, ++row, &v->pods[i], &pcv_totals_of(v, i)[d], d);
	pcv_table_print(&t, "", f);
	fprintf(f,
		"(drops in frames/bytes; peak/cap: the peak window's bytes over cap x window / 8;"
		" at_cap: windows at 99%% of it or more)\n");
	print_promises_text(v, f, PROMISE_ENVELOPE,
			    "envelope (at most burst + cap x T over any interval T)");
	print_promises_text(v, f, PROMISE_WINDOW,
			    "window (also at most cap x window in every interval of one window)");
}

static void
print_links_text(const struct totals *tl, FILE *f)
{
	struct pcv_table t = { .ncols = 2 + PC_LINK_DROP_COUNT };
	size_t row = 0;

	if (tl->nlinks == 0)
		return;
	pcv_table_cell(&t, 0, 0, "link");
	pcv_table_cell(&t, 0, 1, "dir");
	for (int k = 0; k < PC_LINK_DROP_COUNT; k++)
		pcv_table_cell(&t, 0, 2 + (unsigned)k, "%s",
			       pc_link_drop_name((enum pc_link_drop)k));
	for (uint32_t i = 0; i < tl->nlinks; i++)
		for (int d = 0; d < PC_DIR_COUNT; d++) {
			const struct linksum *ls = &tl->links[i];

			row++;
			pcv_table_cell(&t, row, 0, "%s", ls->name);
			pcv_table_cell(&t, row, 1, "%s", pc_dir_name((enum pc_dir)d));
			for (int k = 0; k < PC_LINK_DROP_COUNT; k++)
				cell_drops(&t, row, 2 + (unsigned)k, ls->frames[d][k],
					   ls->bytes[d][k]);
		}
	fputc('\n', f);
	pcv_table_print(&t, "", f);
}

static void
totals_text(const struct pc_verify *v, const void *st, FILE *f)
{
	print_pods_text(v, f);
	print_links_text(st, f);
}

/* ---- the JSON report ---- */

/* A count of drops: {"frames": F, "bytes": B}. */
static void
json_drops(FILE *f, u128 frames, u128 bytes)
{
	fprintf(f, "{\"frames\": ");
	pcv_print_u128(f, frames);
	fprintf(f, ", \"bytes\": ");
	pcv_print_u128(f, bytes);
	fputc('}', f);
}

/* Item i of the pods list: pod i / 2, direction i % 2. */
static void
json_pod(FILE *f, const struct pc_verify *v, uint64_t i)
{
	const struct podsum *ps = &v->pods[i / PC_DIR_COUNT];
	int d = (int)(i % PC_DIR_COUNT);
	const struct pc_verify_totals *t = &pcv_totals_of(v, (uint32_t)(i / PC_DIR_COUNT))[d];

	fprintf(f, "{\"pod\": ");
	pc_json_string(f, ps->id);
	fprintf(f, ", \"dir\": \"%s\", \"windows\": %" PRIu64 ", \"bytes\": ",
		pc_dir_name((enum pc_dir)d), t->windows);
	pcv_print_u128(f, t->bytes);
	fprintf(f, ", \"frames\": ");
	pcv_print_u128(f, t->frames);
	fprintf(f, ", \"peak_bytes\": %" PRIu64 ", \"peak_window\": ", t->peak_bytes);
	pcv_json_time_or_null(f, t->peak_window_start_ns, t->windows > 0);
	fprintf(f, ", \"peak_permille\": ");
	if (t->windows > 0 && t->peak_permille != UINT64_MAX)
		fprintf(f, "%" PRIu64, t->peak_permille);
	else
		fputs("null", f);
	fprintf(f, ", \"windows_at_cap\": %" PRIu64 ", \"drops\": {", t->at_cap);
	for (int k = 0; k < PC_POD_DROP_COUNT; k++) {
		fprintf(f, "%s\"%s\": ", k ? ", " : "", pc_pod_drop_name((enum pc_pod_drop)k));
		json_drops(f, t->drop_frames[k], t->drop_bytes[k]);
	}
	fprintf(f, "}, \"promises\": [");
	if (ps->promises & PROMISE_ENVELOPE)
		fprintf(f, "\"envelope\"%s", ps->promises & PROMISE_WINDOW ? ", " : "");
	if (ps->promises & PROMISE_WINDOW)
		fprintf(f, "\"window\"");
	fprintf(f, "]}");
}

static void
json_link(FILE *f, const struct pc_verify *v, uint64_t i)
{
	const struct totals *t = pcv_state(v, PCV_TOTALS);
	const struct linksum *ls = &t->links[i / PC_DIR_COUNT];
	int d = (int)(i % PC_DIR_COUNT);

	fprintf(f, "{\"link\": ");
	pc_json_string(f, ls->name);
	fprintf(f, ", \"dir\": \"%s\"", pc_dir_name((enum pc_dir)d));
	for (int k = 0; k < PC_LINK_DROP_COUNT; k++) {
		fprintf(f, ", \"%s\": ", pc_link_drop_name((enum pc_link_drop)k));
		json_drops(f, ls->frames[d][k], ls->bytes[d][k]);
	}
	fputc('}', f);
}

static void
totals_json(const struct pc_verify *v, const void *st, FILE *f)
{
	const struct totals *t = st;

	pcv_json_list(f, "pods", v, (uint64_t)v->npods * PC_DIR_COUNT, json_pod);
	pcv_json_list(f, "links", v, (uint64_t)t->nlinks * PC_DIR_COUNT, json_link);
}

/* ---- the HTML page ---- */

static void
html_pod_rows(const struct pc_verify *v, FILE *f)
{
	for (uint32_t i = 0; i < v->npods; i++)
		for (int d = 0; d < PC_DIR_COUNT; d++) {
			const struct pc_verify_totals *t = &pcv_totals_of(v, i)[d];

			fputs("<tr class=\"pod-row\" data-pod=\"", f);
			pc_html_escape(f, v->pods[i].id);
			fprintf(f, "\" data-dir=\"%s\">", pc_dir_name((enum pc_dir)d));
			pcv_td_str(f, "pod", v->pods[i].id);
			pcv_td_str(f, "dir", pc_dir_name((enum pc_dir)d));
			pcv_td_u64(f, "windows", t->windows);
			pcv_td_bytes(f, "bytes", t->bytes);
			pcv_td_u128(f, "frames", t->frames);
			pcv_td_bytes(f, "peak_bytes", t->peak_bytes);
			fputs("<td data-k=\"peak_window\">", f);
			if (t->windows > 0)
				pcv_html_time(f, t->peak_window_start_ns);
			fputs("</td>", f);
			if (t->windows > 0 && t->peak_permille != UINT64_MAX)
				pcv_td_permille(f, "peak_permille", t->peak_permille);
			else
				fputs("<td data-k=\"peak_permille\"></td>", f);
			pcv_td_u64(f, "windows_at_cap", t->at_cap);
			pcv_td_str(f, "promise", pcv_promises_label(v->pods[i].promises));
			fputs("</tr>\n", f);
		}
}

static void
html_drop_rows(const struct pc_verify *v, FILE *f)
{
	for (uint32_t i = 0; i < v->npods; i++)
		for (int d = 0; d < PC_DIR_COUNT; d++) {
			const struct pc_verify_totals *t = &pcv_totals_of(v, i)[d];
			char key[64];

			fputs("<tr class=\"drop-row\" data-pod=\"", f);
			pc_html_escape(f, v->pods[i].id);
			fprintf(f, "\" data-dir=\"%s\">", pc_dir_name((enum pc_dir)d));
			pcv_td_str(f, "pod", v->pods[i].id);
			pcv_td_str(f, "dir", pc_dir_name((enum pc_dir)d));
			for (int k = 0; k < PC_POD_DROP_COUNT; k++) {
				snprintf(key, sizeof(key), "drops.%s.frames",
					 pc_pod_drop_name((enum pc_pod_drop)k));
				pcv_td_u128(f, key, t->drop_frames[k]);
				snprintf(key, sizeof(key), "drops.%s.bytes",
					 pc_pod_drop_name((enum pc_pod_drop)k));
				pcv_td_bytes(f, key, t->drop_bytes[k]);
			}
			fputs("</tr>\n", f);
		}
}

static void
html_links(const struct totals *t, FILE *f)
{
	if (t->nlinks == 0)
		return;
	fputs("<h3>Frames of no pod, per uplink</h3>\n<table id=\"link-table\">\n<tr>"
	      "<th>link</th><th>dir</th>",
	      f);
	for (int k = 0; k < PC_LINK_DROP_COUNT; k++)
		fprintf(f, "<th>%s frames</th><th>%s bytes</th>",
			pc_link_drop_name((enum pc_link_drop)k),
			pc_link_drop_name((enum pc_link_drop)k));
	fputs("</tr>\n", f);
	for (uint32_t i = 0; i < t->nlinks; i++)
		for (int d = 0; d < PC_DIR_COUNT; d++) {
			char key[64];

			fputs("<tr class=\"link-row\">", f);
			pcv_td_str(f, "link", t->links[i].name);
			pcv_td_str(f, "dir", pc_dir_name((enum pc_dir)d));
			for (int k = 0; k < PC_LINK_DROP_COUNT; k++) {
				const char *n = pc_link_drop_name((enum pc_link_drop)k);
				snprintf(key, sizeof(key), "%s.frames", n);
				pcv_td_u128(f, key, t->links[i].frames[d][k]);
				snprintf(key, sizeof(key), "%s.bytes", n);
				pcv_td_bytes(f, key, t->links[i].bytes[d][k]);
			}
			fputs("</tr>\n", f);
		}
	fputs("</table>\n", f);
}

static void
totals_html(const struct pc_verify *v, const void *st, FILE *f)
{
	fputs("<section id=\"pods\">\n<h2>Pods</h2>\n<table id=\"pod-table\">\n<tr><th>pod</th>"
	      "<th>dir</th><th>windows</th><th>bytes</th><th>frames</th><th>peak bytes</th>"
	      "<th>peak window</th><th>peak, % of cap</th><th>windows at cap</th>"
	      "<th>promise</th></tr>\n",
	      f);
	html_pod_rows(v, f);
	fputs("</table>\n<h3>Drops by reason</h3>\n<table id=\"drop-table\">\n<tr><th>pod</th>"
	      "<th>dir</th>",
	      f);
	for (int k = 0; k < PC_POD_DROP_COUNT; k++)
		fprintf(f, "<th>%s frames</th><th>%s bytes</th>",
			pc_pod_drop_name((enum pc_pod_drop)k),
			pc_pod_drop_name((enum pc_pod_drop)k));
	fputs("</tr>\n", f);
	html_drop_rows(v, f);
	fputs("</table>\n", f);
	html_links(st, f);
	fputs("</section>\n", f);
}

const struct pcv_check pcv_totals_check = {
	.name = "totals",
	.size = sizeof(struct totals),
	.pod_size = PC_DIR_COUNT * sizeof(struct pc_verify_totals),
	.free = totals_free,
	.on[PC_REC_WINDOW] = totals_window,
	.pod = totals_pod,
	.sections = (const struct pcv_section[]){ { "links", save_links, load_links }, { NULL } },
	.save_pod = save_pod,
	.load_pod = load_pod,
	.report[PCV_TEXT] = totals_text,
	.report[PCV_JSON] = totals_json,
	.report[PCV_HTML] = totals_html,
};
