/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The verifier's report (docs/log-format.md, "podcap-verify"): per pod and
 * direction, per link, the events, the builds and pod maps in force, the
 * policy's figures, the failures, what the run could not check and the
 * result line, as text for people or as one JSON object for programs. Both
 * are fully determined by the log and what the verifier was given (its now,
 * its maps, its policy): no clock, no locale.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "shape/classify.h"
#include "base/clock.h"
#include "shape/counters.h"
#include "base/hex.h"
#include "log/record.h"
#include "verify.h"

#include "verify_impl.h"
#include "series.h"

/* ---- the report ---- */

static void
root_hex(const struct pc_verify *v, char out[2 * PC_HASH_LEN + 1])
{
	pc_hex(v->cp.root, PC_HASH_LEN, out);
}

static void
format_share(uint64_t permille, char *buf, size_t len)
{
	if (permille == UINT64_MAX)
		snprintf(buf, len, "-");
	else
		snprintf(buf, len, "%" PRIu64 ".%" PRIu64 "%%", permille / 10, permille % 10);
}

static void
format_failure(const struct pc_verify_failure *f, char *buf, size_t len)
{
	char t[PC_UTC_LEN];

	if (f->record < 0) {
		snprintf(buf, len, "%s: %s", pc_verify_check_name(f->check), f->msg);
	} else if (f->type == 0) {
		snprintf(buf, len, "%s: record %" PRId64 ": %s", pc_verify_check_name(f->check),
			 f->record, f->msg);
	} else {
		pc_utc_format(f->window_start_ns, t, sizeof(t));
		snprintf(buf, len, "%s: record %" PRId64 " (%s, %s): %s",
			 pc_verify_check_name(f->check), f->record, pc_record_type_name(f->type), t,
			 f->msg);
	}
}

void
pcv_result_line(const struct pc_verify *v, char *buf, size_t len)
{
	char root[2 * PC_HASH_LEN + 1], first[PC_VERIFY_MSG_LEN + 128];

	if (v->found.nfails == 0) {
		root_hex(v, root);
		snprintf(buf, len, "verified: %" PRIu64 " records, %" PRIu64 " windows, tree size %"
			 PRIu64 ", root %s", v->nrec, v->nwindows, v->cp.size, root);
		return;
	}
	format_failure(&v->found.fails[0], first, sizeof(first));
	if (v->found.nfails == 1)
		snprintf(buf, len, "FAILED: %s", first);
	else
		snprintf(buf, len, "FAILED: %s (and %" PRIu64 " more failure%s)", first,
			 v->found.nfails - 1, v->found.nfails == 2 ? "" : "s");
}

/* A table of strings, printed with columns aligned; rows are built cell by cell. */
#define TABLE_COLS 12
#define CELL_LEN 96

struct table {
	unsigned ncols;
	size_t nrows, cap;
	char (*cells)[TABLE_COLS][CELL_LEN];
	/* when set, row r ends with tail(r, ctx) after the columns, unpadded and uncut */
	const char *(*tail)(size_t row, const void *ctx);
	const void *ctx;
};

static void table_cell(struct table *t, size_t row, unsigned col, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static void
table_cell(struct table *t, size_t row, unsigned col, const char *fmt, ...)
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
	vsnprintf(t->cells[row][col], CELL_LEN, fmt, ap);
	va_end(ap);
}

static void
table_print(struct table *t, const char *indent, FILE *f)
{
	size_t w[TABLE_COLS] = { 0 };

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

/* A count of drops as the tables show it: frames/bytes. */
static void
cell_drops(struct table *t, size_t row, unsigned col, u128 frames, u128 bytes)
{
	char a[U128_LEN], b[U128_LEN];

	pcv_format_u128(frames, a, sizeof(a));
	pcv_format_u128(bytes, b, sizeof(b));
	table_cell(t, row, col, "%s/%s", a, b);
}

static const char *const pod_cols[] = {
	"pod", "dir", "windows", "bytes", "frames", "peak_bytes", "peak_window", "peak/cap",
	"at_cap",
};
#define POD_COLS (unsigned)(sizeof(pod_cols) / sizeof(pod_cols[0]))

static void
pod_row(struct table *t, size_t row, const struct podsum *ps, int d)
{
	const struct pc_verify_totals *tt = &ps->t[d];
	char n[U128_LEN], c[PC_UTC_LEN], s[32];

	table_cell(t, row, 0, "%s", ps->id);
	table_cell(t, row, 1, "%s", pc_dir_name((enum pc_dir)d));
	table_cell(t, row, 2, "%" PRIu64, tt->windows);
	pcv_format_u128(tt->bytes, n, sizeof(n));
	table_cell(t, row, 3, "%s", n);
	pcv_format_u128(tt->frames, n, sizeof(n));
	table_cell(t, row, 4, "%s", n);
	table_cell(t, row, 5, "%" PRIu64, tt->peak_bytes);
	if (tt->windows > 0) {
		pc_utc_format(tt->peak_window_start_ns, c, sizeof(c));
		format_share(tt->peak_permille, s, sizeof(s));
	} else {
		snprintf(c, sizeof(c), "-");
		snprintf(s, sizeof(s), "-");
	}
	table_cell(t, row, 6, "%s", c);
	table_cell(t, row, 7, "%s", s);
	table_cell(t, row, 8, "%" PRIu64, tt->at_cap);
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
	struct table t = { .ncols = POD_COLS + PC_POD_DROP_COUNT };
	size_t row = 0;

	if (v->npods == 0)
		return;
	fputc('\n', f);
	for (unsigned c = 0; c < POD_COLS; c++)
		table_cell(&t, 0, c, "%s", pod_cols[c]);
	for (int k = 0; k < PC_POD_DROP_COUNT; k++)
		table_cell(&t, 0, POD_COLS + (unsigned)k, "%s",
			   pc_pod_drop_name((enum pc_pod_drop)k));
	for (uint32_t i = 0; i < v->npods; i++)
		for (int d = 0; d < PC_DIR_COUNT; d++)
			pod_row(&t, ++row, &v->pods[i], d);
	table_print(&t, "", f);
	fprintf(f, "(drops in frames/bytes; peak/cap: the peak window's bytes over cap x window / 8;"
		" at_cap: windows at 99%% of it or more)\n");
	print_promises_text(v, f, PROMISE_ENVELOPE,
			    "envelope (at most burst + cap x T over any interval T)");
	print_promises_text(v, f, PROMISE_WINDOW,
			    "window (also at most cap x window in every interval of one window)");
}

static void
print_links_text(const struct pc_verify *v, FILE *f)
{
	struct table t = { .ncols = 2 + PC_LINK_DROP_COUNT };
	size_t row = 0;

	if (v->nlinks == 0)
		return;
	table_cell(&t, 0, 0, "link");
	table_cell(&t, 0, 1, "dir");
	for (int k = 0; k < PC_LINK_DROP_COUNT; k++)
		table_cell(&t, 0, 2 + (unsigned)k, "%s", pc_link_drop_name((enum pc_link_drop)k));
	for (uint32_t i = 0; i < v->nlinks; i++)
		for (int d = 0; d < PC_DIR_COUNT; d++) {
			const struct linksum *ls = &v->links[i];

			row++;
			table_cell(&t, row, 0, "%s", ls->name);
			table_cell(&t, row, 1, "%s", pc_dir_name((enum pc_dir)d));
			for (int k = 0; k < PC_LINK_DROP_COUNT; k++)
				cell_drops(&t, row, 2 + (unsigned)k, ls->frames[d][k],
					   ls->bytes[d][k]);
		}
	fputc('\n', f);
	table_print(&t, "", f);
}

static void
event_detail(const struct pc_verify_event *e, char *buf, size_t len)
{
	char d[2 * PC_DIGEST_LEN + 1], b[2 * 32 + 1], t[PC_UTC_LEN], dur[DURATION_LEN];
	char w[DURATION_LEN];

	pc_hex(e->podmap_digest, PC_DIGEST_LEN, d);
	pc_hex(e->build_id, 32, b);
	pcv_format_duration(e->window_len_ns, w, sizeof(w));
	switch (e->kind) {
	case PC_VE_START:
		snprintf(buf, len, "window %s, pod map %s, build %s", w, d, b);
		break;
	case PC_VE_RESTART:
		pc_utc_format(e->from_ns, t, sizeof(t));
		pcv_format_duration(pc_verify_event_size(e), dur, sizeof(dur));
		snprintf(buf, len, "%s, down from %s for %s (%" PRIu64 " window%s), window %s, "
			 "pod map %s, build %s", e->clean ? "after a stop" : "no stop before it",
			 t, dur, e->windows, e->windows == 1 ? "" : "s", w, d, b);
		break;
	case PC_VE_STOP:
		snprintf(buf, len, "stopped cleanly");
		break;
	case PC_VE_GAP:
		pcv_format_duration(pc_verify_event_size(e), dur, sizeof(dur));
		snprintf(buf, len, "%" PRIu64 " window%s (%s) not logged", e->windows,
			 e->windows == 1 ? "" : "s", dur);
		break;
	case PC_VE_RELOAD:
		snprintf(buf, len, "window %s, pod map %s", w, d);
		break;
	case PC_VE_CLOCK: {
		char step[DURATION_LEN], real[DURATION_LEN], labels[DURATION_LEN];

		pcv_format_duration(pc_verify_event_size(e), step, sizeof(step));
		pcv_format_duration(e->elapsed_ns, real, sizeof(real));
		pcv_format_duration(e->window_start_ns - e->from_ns, labels, sizeof(labels));
		pc_utc_format(e->from_ns, t, sizeof(t));
		snprintf(buf, len, "wall clock stepped %s by %s; window labels advance %s from %s "
			 "while %s of real time passed", e->step_ns < 0 ? "back" : "forward", step,
			 labels, t, real);
		break;
	}
	default:
		buf[0] = '\0';
	}
}

/* ---- what the lists leave out ---- */

/* Per kind, the events past the ones pc_verify_event_at lists. */
static void
events_left_out(const struct pc_verify *v, uint64_t left[PC_VE_COUNT])
{
	for (int k = 0; k < PC_VE_COUNT; k++)
		left[k] = v->found.evsum[k].count;
	for (uint64_t i = 0; i < pcv_kept(v->found.nevents); i++)
		left[v->found.events[i].kind]--;
}

static void
failures_left_out(const struct pc_verify *v, uint64_t left[PC_VC_COUNT])
{
	for (int c = 0; c < PC_VC_COUNT; c++)
		left[c] = v->found.failsum[c].count;
	for (uint64_t i = 0; i < pcv_kept(v->found.nfails); i++)
		left[v->found.fails[i].check]--;
}

/* "restart 499, gap 1": the names with a count, in order; "none" when all are 0. */
static void
format_counts(const uint64_t *n, int count, const char *(*name)(int), char *buf, size_t len)
{
	size_t at = 0;

	buf[0] = '\0';
	for (int i = 0; i < count; i++)
		if (n[i] > 0 && at < len)
			at += (size_t)snprintf(buf + at, len - at, "%s%s %" PRIu64, at ? ", " : "",
					       name(i), n[i]);
	if (at == 0)
		snprintf(buf, len, "none");
}

const char *
pcv_kind_label(int k)
{
	return pcv_event_name((enum pc_verify_event_kind)k);
}

const char *
pcv_check_label(int c)
{
	return pc_verify_check_name((enum pc_verify_check)c);
}

/* ---- events and failures as text ---- */

static const char *const kind_cols[] = { "kind", "count", "total", "longest", "record", "time" };
#define KIND_COLS (unsigned)(sizeof(kind_cols) / sizeof(kind_cols[0]))

static void
kind_row(struct table *t, size_t row, const struct pc_verify *v, int k)
{
	const struct pc_verify_event_sum *es = &v->found.evsum[k];
	char d[DURATION_LEN + 8], u[PC_UTC_LEN];

	table_cell(t, row, 0, "%s", pcv_kind_label(k));
	table_cell(t, row, 1, "%" PRIu64, es->count);
	if (pcv_event_sized((enum pc_verify_event_kind)k))
		pcv_format_duration_u128(es->total_ns, d, sizeof(d));
	else
		snprintf(d, sizeof(d), "-");
	table_cell(t, row, 2, "%s", d);
	if (!pcv_event_sized((enum pc_verify_event_kind)k) || es->count == 0) {
		for (unsigned c = 3; c < KIND_COLS; c++)
			table_cell(t, row, c, "-");
		return;
	}
	pcv_format_duration(pc_verify_event_size(&es->worst[0]), d, sizeof(d));
	pc_utc_format(es->worst[0].window_start_ns, u, sizeof(u));
	table_cell(t, row, 3, "%s", d);
	table_cell(t, row, 4, "%" PRIu64, es->worst[0].record);
	table_cell(t, row, 5, "%s", u);
}

/*
 * Time no window covers, in the one sense the whole report uses: the
 * policy's (pc_verify_unaccounted), which besides the gaps and the time
 * down before restarts counts the real time a CLOCK record says passed
 * between two windows. pc_verify_unaccounted_ns, from the event totals,
 * leaves that out and is not stated.
 */
void
pcv_unaccounted_parts(const struct pc_verify *v, struct pcv_unaccounted *u)
{
	u128 known;

	pc_verify_unaccounted(v, &u->total_ns, &u->longest_ns, &u->longest_record);
	u->saturated = u->total_ns == UINT64_MAX;
	u->gaps_ns = v->found.evsum[PC_VE_GAP].total_ns;
	u->down_ns = v->found.evsum[PC_VE_RESTART].total_ns;
	/* the clock's part is what the gaps and the restarts leave, unless the total saturated */
	known = u->gaps_ns + u->down_ns;
	u->clock_known = !u->saturated && known <= u->total_ns;
	u->clock_ns = u->clock_known ? u->total_ns - (uint64_t)known : 0;
}

static void
print_unaccounted_text(const struct pc_verify *v, FILE *f)
{
	struct pcv_unaccounted u;
	char all[DURATION_LEN], gaps[DURATION_LEN + 8], down[DURATION_LEN + 8];
	char clock[DURATION_LEN], longest[DURATION_LEN];

	pcv_unaccounted_parts(v, &u);
	pcv_format_duration(u.total_ns, all, sizeof(all));
	pcv_format_duration_u128(u.gaps_ns, gaps, sizeof(gaps));
	pcv_format_duration_u128(u.down_ns, down, sizeof(down));
	if (u.clock_known)
		pcv_format_duration(u.clock_ns, clock, sizeof(clock));
	else
		snprintf(clock, sizeof(clock), "-");
	fprintf(f, "time not accounted for: %s%s (gaps %s, down before restarts %s, real time "
		"across clock steps %s)", all, u.saturated ? " or more" : "", gaps, down, clock);
	if (u.longest_record >= 0) {
		pcv_format_duration(u.longest_ns, longest, sizeof(longest));
		fprintf(f, "; longest unbroken %s, up to record %" PRId64, longest,
			u.longest_record);
	}
	fputc('\n', f);
}

/* Every kind, however many events the list below leaves out, and the time they leave unlogged. */
static void
print_event_kinds_text(const struct pc_verify *v, FILE *f)
{
	struct table t = { .ncols = KIND_COLS };

	if (!v->cp_ok)
		return;
	fprintf(f, "\nevents by kind:\n");
	for (unsigned c = 0; c < KIND_COLS; c++)
		table_cell(&t, 0, c, "%s", kind_cols[c]);
	for (int k = 0; k < PC_VE_COUNT; k++)
		kind_row(&t, (size_t)k + 1, v, k);
	table_print(&t, "  ", f);
	print_unaccounted_text(v, f);
}

static void
print_event_line(FILE *f, const struct pc_verify_event *e)
{
	char t[PC_UTC_LEN], detail[512];

	pc_utc_format(e->window_start_ns, t, sizeof(t));
	event_detail(e, detail, sizeof(detail));
	fprintf(f, "  %s  record %" PRIu64 "  %s: %s\n", t, e->record, pcv_event_name(e->kind),
		detail);
}

static void
print_events_text(const struct pc_verify *v, FILE *f)
{
	const struct pc_verify_event *e;
	uint64_t left[PC_VE_COUNT];
	char n[256];

	if (v->found.nevents == 0)
		return;
	fprintf(f, "\nevents:\n");
	for (uint64_t i = 0; i < pcv_kept(v->found.nevents); i++)
		print_event_line(f, &v->found.events[i]);
	if (v->found.nevents == pcv_kept(v->found.nevents))
		return;
	events_left_out(v, left);
	format_counts(left, PC_VE_COUNT, pcv_kind_label, n, sizeof(n));
	fprintf(f,
		"  %" PRIu64 " of %" PRIu64 " events listed; not listed: %s; of those, the "
		"largest %d of each kind (the latest for start, stop and reload):\n",
		pcv_kept(v->found.nevents), v->found.nevents, n, PC_VERIFY_WORST);
	for (uint64_t i = 0; (e = pcv_unlisted_worst(&v->found, i)) != NULL; i++)
		print_event_line(f, e);
}

static void
print_failures_text(const struct pc_verify *v, FILE *f)
{
	const struct pc_verify_failure *x;
	char line[PC_VERIFY_MSG_LEN + 256], n[512];
	uint64_t count[PC_VC_COUNT];

	if (v->found.nfails == 0)
		return;
	for (int c = 0; c < PC_VC_COUNT; c++)
		count[c] = v->found.failsum[c].count;
	format_counts(count, PC_VC_COUNT, pcv_check_label, n, sizeof(n));
	fprintf(f, "\nfailures: %" PRIu64 " (%s)\n", v->found.nfails, n);
	for (uint64_t i = 0; i < pcv_kept(v->found.nfails); i++) {
		format_failure(&v->found.fails[i], line, sizeof(line));
		fprintf(f, "  %s\n", line);
	}
	if (v->found.nfails == pcv_kept(v->found.nfails))
		return;
	failures_left_out(v, count);
	format_counts(count, PC_VC_COUNT, pcv_check_label, n, sizeof(n));
	fprintf(f,
		"  %" PRIu64 " of %" PRIu64 " failures listed; not listed: %s; of those, the "
		"first of each check:\n",
		pcv_kept(v->found.nfails), v->found.nfails, n);
	for (uint64_t i = 0; (x = pcv_unlisted_first(&v->found, i)) != NULL; i++) {
		format_failure(x, line, sizeof(line));
		fprintf(f, "  %s\n", line);
	}
}

/* ---- builds, pod maps and the policy's figures ---- */

bool
pcv_build_pinned(const struct pc_verify *v, const uint8_t id[32])
{
	const struct pc_verify_policy *p = pc_verify_policy_of(v);

	for (size_t i = 0; i < p->nbuild_ids; i++)
		if (memcmp(p->build_ids[i], id, 32) == 0)
			return true;
	return false;
}

const char *
pcv_map_path(const struct pc_verify *v, const struct pc_verify_use *u)
{
	const struct pc_config *c = u->map >= 0 ? pc_verify_map_at(v, (size_t)u->map) : NULL;

	return c != NULL ? c->path : NULL;
}

bool
pcv_age_stated(const struct pc_verify *v)
{
	return v->now_given;
}

/* The windows under a build or a map: its first record, first window start and last end. */
static void
use_cells(struct table *t, size_t row, unsigned col, const struct pc_verify_use *u)
{
	char a[PC_UTC_LEN], b[PC_UTC_LEN];

	if (u->windows > 0) {
		pc_utc_format(u->first_window_ns, a, sizeof(a));
		pc_utc_format(u->last_end_ns, b, sizeof(b));
	} else {
		snprintf(a, sizeof(a), "-");
		snprintf(b, sizeof(b), "-");
	}
	table_cell(t, row, col, "%" PRIu64, u->first_record);
	table_cell(t, row, col + 1, "%s", a);
	table_cell(t, row, col + 2, "%s", b);
	table_cell(t, row, col + 3, "%" PRIu64, u->windows);
}

static void
use_header(struct table *t, unsigned col)
{
	static const char *const cols[] = { "first_record", "first_window", "last_end", "windows" };

	for (unsigned c = 0; c < 4; c++)
		table_cell(t, 0, col + c, "%s", cols[c]);
}

/* "  N of M builds listed": the lists keep the first PC_VERIFY_MAX_KEPT. */
static void
print_left_out(FILE *f, uint64_t n, const char *what)
{
	if (n > pcv_kept(n))
		fprintf(f, "  %" PRIu64 " of %" PRIu64 " %s listed, in the order first seen\n",
			pcv_kept(n), n, what);
}

static void
print_builds_text(const struct pc_verify *v, FILE *f)
{
	struct table t = { .ncols = 6 };
	uint64_t n = pc_verify_nbuilds(v);
	char id[2 * 32 + 1];

	if (n == 0)
		return;
	fprintf(f, "\nbuilds:\n");
	table_cell(&t, 0, 0, "build");
	use_header(&t, 1);
	table_cell(&t, 0, 5, "pinned");
	for (uint64_t i = 0; i < pcv_kept(n); i++) {
		const struct pc_verify_use *u = pc_verify_build_at(v, i);

		pc_hex(u->id, 32, id);
		table_cell(&t, i + 1, 0, "%s", id);
		use_cells(&t, i + 1, 1, u);
		table_cell(&t, i + 1, 5, "%s", pcv_build_pinned(v, u->id) ? "yes" : "no");
	}
	table_print(&t, "  ", f);
	print_left_out(f, n, "builds");
}

/* The file of the map in row r (0: the header), uncut: it is a path. */
static const char *
map_tail(size_t row, const void *ctx)
{
	const struct pc_verify *v = ctx;
	const struct pc_verify_use *u;

	if (row == 0)
		return "map";
	u = pc_verify_map_used_at(v, row - 1);
	return pcv_map_path(v, u) != NULL ? pcv_map_path(v, u) : "-";
}

static void
print_maps_text(const struct pc_verify *v, FILE *f)
{
	struct table t = { .ncols = 5, .tail = map_tail, .ctx = v };
	uint64_t n = pc_verify_nmaps_used(v);
	char d[2 * PC_DIGEST_LEN + 1];

	if (n == 0)
		return;
	fprintf(f, "\npod maps:\n");
	table_cell(&t, 0, 0, "digest");
	use_header(&t, 1);
	for (uint64_t i = 0; i < pcv_kept(n); i++) {
		const struct pc_verify_use *u = pc_verify_map_used_at(v, i);

		pc_hex(u->id, PC_DIGEST_LEN, d);
		table_cell(&t, i + 1, 0, "%s", d);
		use_cells(&t, i + 1, 1, u);
	}
	table_print(&t, "  ", f);
	print_left_out(f, n, "pod maps");
	if (pc_verify_nmaps(v) == 0)
		fprintf(f, "(map -: no --pod-map was given, the digests are the log's own)\n");
}

/* Merged windows and the checkpoint's age (time not accounted for is with the events). */
static void
print_figures_text(const struct pc_verify *v, FILE *f)
{
	uint64_t most, now, newest, age;
	int64_t record;
	char a[PC_UTC_LEN], b[PC_UTC_LEN], d[DURATION_LEN];

	if (!v->cp_ok)
		return;
	pc_verify_merged(v, &most, &record);
	fprintf(f, "\nmost windows one record covers: %" PRIu64, most);
	if (record >= 0)
		fprintf(f, " (record %" PRId64 ")", record);
	fputc('\n', f);
	pc_verify_freshness(v, &now, &newest, &age);
	if (newest == 0)
		fprintf(f, "newest window: none");
	else
		pc_utc_format(newest, a, sizeof(a)), fprintf(f, "newest window ends %s", a);
	if (pcv_age_stated(v)) {
		pc_utc_format(now, b, sizeof(b));
		pcv_format_duration(age, d, sizeof(d));
		if (newest == 0)
			fprintf(f, "; the verifier's now is %s\n", b);
		else
			fprintf(f, "; checkpoint age %s at the verifier's now %s\n", d, b);
	} else {
		fprintf(f, "; checkpoint age not stated: the verifier was given no now (--now)\n");
	}
}

static void
print_warnings_text(const struct pc_verify *v, FILE *f)
{
	unsigned w = pc_verify_warnings(v);

	if (w == 0)
		return;
	fputc('\n', f);
	for (int i = 0; i < PC_VW_COUNT; i++)
		if (w & (1u << i))
			fprintf(f, "warning: %s\n",
				pc_verify_warning_text((enum pc_verify_warning)i));
}

void
pc_verify_print_text(const struct pc_verify *v, FILE *f)
{
	char line[PC_VERIFY_MSG_LEN + 256];

	if (v->cp_ok) {
		char root[2 * PC_HASH_LEN + 1];

		root_hex(v, root);
		fprintf(f, "log %s, tree size %" PRIu64 ", root %s\n", v->cp.origin, v->cp.size, root);
	}
	fprintf(f, "key %s+%08" PRIx32 "\n", v->key.name, v->key.id);
	if (v->resumed)
		fprintf(f, "resumed at record %" PRIu64 ": the records before it were verified "
			"by an earlier run (--state)\n", v->trusted.size);
	print_pods_text(v, f);
	print_links_text(v, f);
	print_event_kinds_text(v, f);
	print_events_text(v, f);
	print_builds_text(v, f);
	print_maps_text(v, f);
	pcv_audit_print_text(v, f);
	pcv_text_attest_unchecked(v, f);
	print_figures_text(v, f);
	print_failures_text(v, f);
	print_warnings_text(v, f);
	if (v->series != NULL)
		pcv_text_indicators(v, f);
	pcv_result_line(v, line, sizeof(line));
	fprintf(f, "\n%s\n", line);
}
