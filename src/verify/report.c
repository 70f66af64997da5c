/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The verifier's text report (docs/log-format.md, "podcap-verify"): its
 * layout, the parts of each check (check.h, report) in the report's order
 * with the report's own between them: the log and key, the events, the
 * failures, what the run could not check and the result line, which the
 * JSON and HTML reports share. Fully determined by the log and what the
 * verifier was given (its now, its maps, its policy): no clock, no locale.
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

#include "limit.h"
#include "print.h"
#include "report.h"
#include "verify_impl.h"

/* ---- the report's own parts ---- */

static void
root_hex(const struct pc_verify *v, char out[2 * PC_HASH_LEN + 1])
{
	pc_hex(v->cp.root, PC_HASH_LEN, out);
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

/* The names of event kinds and checks as format_counts takes them. */
static const char *
kind_label(int k)
{
	return pcv_event_name((enum pc_verify_event_kind)k);
}

static const char *
check_label(int c)
{
	return pc_verify_check_name((enum pc_verify_check)c);
}

/* ---- events and failures as text ---- */

static const char *const kind_cols[] = { "kind", "count", "total", "longest", "record", "time" };
#define KIND_COLS (unsigned)(sizeof(kind_cols) / sizeof(kind_cols[0]))

static void
kind_row(struct pcv_table *t, size_t row, const struct pc_verify *v, int k)
{
	const struct pc_verify_event_sum *es = &v->found.evsum[k];
	char d[DURATION_LEN + 8], u[PC_UTC_LEN];

	pcv_table_cell(t, row, 0, "%s", kind_label(k));
	pcv_table_cell(t, row, 1, "%" PRIu64, es->count);
	if (pcv_event_sized((enum pc_verify_event_kind)k))
		pcv_format_duration_u128(es->total_ns, d, sizeof(d));
	else
		snprintf(d, sizeof(d), "-");
	pcv_table_cell(t, row, 2, "%s", d);
	if (!pcv_event_sized((enum pc_verify_event_kind)k) || es->count == 0) {
		for (unsigned c = 3; c < KIND_COLS; c++)
			pcv_table_cell(t, row, c, "-");
		return;
	}
	pcv_format_duration(pc_verify_event_size(&es->worst[0]), d, sizeof(d));
	pc_utc_format(es->worst[0].window_start_ns, u, sizeof(u));
	pcv_table_cell(t, row, 3, "%s", d);
	pcv_table_cell(t, row, 4, "%" PRIu64, es->worst[0].record);
	pcv_table_cell(t, row, 5, "%s", u);
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
	struct pcv_table t = { .ncols = KIND_COLS };

	if (!v->cp_ok)
		return;
	fprintf(f, "\nevents by kind:\n");
	for (unsigned c = 0; c < KIND_COLS; c++)
		pcv_table_cell(&t, 0, c, "%s", kind_cols[c]);
	for (int k = 0; k < PC_VE_COUNT; k++)
		kind_row(&t, (size_t)k + 1, v, k);
	pcv_table_print(&t, "  ", f);
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
	format_counts(left, PC_VE_COUNT, kind_label, n, sizeof(n));
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
	format_counts(count, PC_VC_COUNT, check_label, n, sizeof(n));
	fprintf(f, "\nfailures: %" PRIu64 " (%s)\n", v->found.nfails, n);
	for (uint64_t i = 0; i < pcv_kept(v->found.nfails); i++) {
		format_failure(&v->found.fails[i], line, sizeof(line));
		fprintf(f, "  %s\n", line);
	}
	if (v->found.nfails == pcv_kept(v->found.nfails))
		return;
	failures_left_out(v, count);
	format_counts(count, PC_VC_COUNT, check_label, n, sizeof(n));
	fprintf(f,
		"  %" PRIu64 " of %" PRIu64 " failures listed; not listed: %s; of those, the "
		"first of each check:\n",
		pcv_kept(v->found.nfails), v->found.nfails, n);
	for (uint64_t i = 0; (x = pcv_unlisted_first(&v->found, i)) != NULL; i++) {
		format_failure(x, line, sizeof(line));
		fprintf(f, "  %s\n", line);
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

static void
print_head_text(const struct pc_verify *v, FILE *f)
{
	if (v->cp_ok) {
		char root[2 * PC_HASH_LEN + 1];

		root_hex(v, root);
		fprintf(f, "log %s, tree size %" PRIu64 ", root %s\n", v->cp.origin, v->cp.size, root);
	}
	fprintf(f, "key %s+%08" PRIx32 "\n", v->key.name, v->key.id);
	if (v->resumed)
		fprintf(f,
			"resumed at record %" PRIu64 ": the records before it were verified "
			"by an earlier run (--state)\n",
			v->trusted.size);
}

static void
print_result_text(const struct pc_verify *v, FILE *f)
{
	char line[PC_VERIFY_MSG_LEN + 256];

	pcv_result_line(v, line, sizeof(line));
	fprintf(f, "\n%s\n", line);
}

/* The text report, part by part: a check the layout does not name reports before the failures. */
static const struct pcv_part text_layout[] = {
	PCV_OWN(print_head_text),        /* log, key, resumed */
	PCV_PART(PCV_TOTALS),            /* pods, links */
	PCV_OWN(print_event_kinds_text), /* events by kind, time not accounted for */
	PCV_OWN(print_events_text),      /* events */
	PCV_PART(PCV_BUILD),             /* builds */
	PCV_PART(PCV_PODMAP),            /* pod maps */
	PCV_PART(PCV_DECLARE),           /* declarations */
	PCV_PART(PCV_ATTEST),            /* ATTEST records not checked */
	PCV_PART(PCV_LIMIT),             /* most windows one record covers */
	PCV_PART(PCV_FRESHNESS),         /* newest window, checkpoint age */
	PCV_PART(PCV_OTHERS),            /* a check named nowhere above */
	PCV_OWN(print_failures_text),    /* failures */
	PCV_OWN(print_warnings_text),    /* warnings */
	PCV_PART(PCV_SERIES),            /* indicators */
	PCV_OWN(print_result_text),      /* verified: or FAILED: */
};

void
pc_verify_print_text(const struct pc_verify *v, FILE *f)
{
	pcv_report_parts(v, f, PCV_TEXT, text_layout, PCV_PARTS(text_layout));
}
