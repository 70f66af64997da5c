/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The policy's limits on what the log leaves out (docs/verify.md, checks
 * 10 and 11): time no window covers, in all (--max-unaccounted) and in one
 * unbroken stretch (--max-gap), and the windows one record may merge
 * (--max-merged-windows). No limit by default: the report states the
 * figures either way. The checkpoint's age is verify/freshness.c.
 */
#include <inttypes.h>
#include <string.h>

#include "log/record.h"
#include "verify.h"

#include "limit.h"
#include "lines.h"
#include "print.h"
#include "verify_impl.h"

struct limit {
	uint64_t total_ns, run_ns, longest_ns; /* in all, the stretch open, the longest */
	int64_t longest_record;                /* the record that ends the longest, -1: none */
	bool total_reported, run_reported;
	uint64_t merged_most; /* the most windows one WINDOW covers */
	int64_t merged_record;
};

static int
limit_init(struct pc_verify *v, void *st)
{
	struct limit *l = st;

	(void)v;
	l->longest_record = -1;
	l->merged_record = -1;
	return 0;
}

static uint64_t
add_sat(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

/* `ns` more time no window covers, told by record `index`. */
static void
limit_unaccounted(struct pc_verify *v, void *st, uint64_t index, const struct pc_record *r,
		  uint64_t ns)
{
	struct limit *l = st;
	char a[DURATION_LEN], b[DURATION_LEN];

	if (ns == 0)
		return;
	/* contiguous stretches add up: a long hole cut into many short GAPs is still one */
	l->total_ns = add_sat(l->total_ns, ns);
	l->run_ns = add_sat(l->run_ns, ns);
	if (l->run_ns > l->longest_ns) {
		l->longest_ns = l->run_ns;
		l->longest_record = (int64_t)index;
	}
	if (!l->total_reported && l->total_ns > v->policy.max_unaccounted_ns) {
		pcv_format_duration(l->total_ns, a, sizeof(a));
		pcv_format_duration(v->policy.max_unaccounted_ns, b, sizeof(b));
		pcv_fail(v, PC_VC_LIMIT, (int64_t)index, r,
			 "time no window covers adds up to %s "
			 "here, more than the %s the verifier allows (--max-unaccounted)",
			 a, b);
		l->total_reported = true;
	}
	if (!l->run_reported && l->run_ns > v->policy.max_gap_ns) {
		pcv_format_duration(l->run_ns, a, sizeof(a));
		pcv_format_duration(v->policy.max_gap_ns, b, sizeof(b));
		pcv_fail(v, PC_VC_LIMIT, (int64_t)index, r,
			 "%s without a window up to here, longer "
			 "than the %s the verifier allows (--max-gap)",
			 a, b);
		l->run_reported = true;
	}
}

/* A WINDOW ends the stretch; it may merge at most --max-merged-windows. */
static void
limit_window(struct pc_verify *v, void *st, uint64_t index, const struct pc_record *r)
{
	struct limit *l = st;

	l->run_ns = 0;
	l->run_reported = false;
	if (r->window_count > l->merged_most) {
		l->merged_most = r->window_count;
		l->merged_record = (int64_t)index;
	}
	if (r->window_count > v->policy.max_merged_windows)
		pcv_fail(
		    v, PC_VC_LIMIT, (int64_t)index, r,
		    "one record covers %" PRIu64 " windows, "
		    "the verifier accepts at most %" PRIu64 " (--max-merged-windows): the "
		    "control thread fell behind, or windows were merged to average a burst away",
		    r->window_count, v->policy.max_merged_windows);
}

void
pc_verify_unaccounted(const struct pc_verify *v, uint64_t *total_ns, uint64_t *longest_ns,
		      int64_t *longest_record)
{
	const struct limit *l = pcv_state(v, PCV_LIMIT);

	*total_ns = l->total_ns;
	*longest_ns = l->longest_ns;
	*longest_record = l->longest_record;
}

void
pc_verify_merged(const struct pc_verify *v, uint64_t *windows, int64_t *record)
{
	const struct limit *l = pcv_state(v, PCV_LIMIT);

	*windows = l->merged_most;
	*record = l->merged_record;
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

/* ---- the saved state: the time figures, the stretch open, the most merged ---- */

static void
save_time(const struct pc_verify *v, const void *st, FILE *f)
{
	const struct limit *l = st;

	(void)v;
	fprintf(f, "time %" PRIu64 " %" PRIu64 " %" PRIu64, l->total_ns, l->run_ns, l->longest_ns);
	pcv_put_i128(f, l->longest_record);
	fprintf(f, " %" PRIu64, l->merged_most);
	pcv_put_i128(f, l->merged_record);
	fputc('\n', f);
}

static int
load_time(struct pc_verify *v, void *st, struct pcv_lines *ls, struct pc_error *err)
{
	struct limit *l = st;
	char *s;

	(void)v;
	if (!pcv_line_is(ls, "time", &s) || !pcv_get_u64(&s, &l->total_ns) ||
	    !pcv_get_u64(&s, &l->run_ns) || !pcv_get_u64(&s, &l->longest_ns) ||
	    !pcv_get_i64(&s, &l->longest_record, -1, INT64_MAX) ||
	    !pcv_get_u64(&s, &l->merged_most) ||
	    !pcv_get_i64(&s, &l->merged_record, -1, INT64_MAX) || *s != '\0')
		return pcv_lines_bad(ls, err);
	return 0;
}

/* ---- the reports: time not accounted for is with the events; the most merged here ---- */

static void
limit_text(const struct pc_verify *v, const void *st, FILE *f)
{
	const struct limit *l = st;

	if (!v->cp_ok)
		return;
	fprintf(f, "\nmost windows one record covers: %" PRIu64, l->merged_most);
	if (l->merged_record >= 0)
		fprintf(f, " (record %" PRId64 ")", l->merged_record);
	fputc('\n', f);
}

static void
limit_json(const struct pc_verify *v, const void *st, FILE *f)
{
	const struct limit *l = st;
	struct pcv_unaccounted u;

	pcv_unaccounted_parts(v, &u);
	fprintf(f,
		"  \"unaccounted\": {\"total_ns\": %" PRIu64 ", \"saturated\": %s, "
		"\"gaps_ns\": ",
		u.total_ns, u.saturated ? "true" : "false");
	pcv_print_u128(f, u.gaps_ns);
	fprintf(f, ", \"down_ns\": ");
	pcv_print_u128(f, u.down_ns);
	fprintf(f, ", \"clock_ns\": ");
	if (u.clock_known)
		fprintf(f, "%" PRIu64, u.clock_ns);
	else
		fputs("null", f);
	fprintf(f, ", \"longest_ns\": %" PRIu64 ", \"longest_record\": ", u.longest_ns);
	if (u.longest_record >= 0)
		fprintf(f, "%" PRId64, u.longest_record);
	else
		fputs("null", f);
	fprintf(f, "},\n");

	fprintf(f, "  \"merged_windows_max\": %" PRIu64 ",\n  \"merged_windows_record\": ",
		l->merged_most);
	if (l->merged_record >= 0)
		fprintf(f, "%" PRId64, l->merged_record);
	else
		fputs("null", f);
	fprintf(f, ",\n");
}

const struct pcv_check pcv_limit_check = {
	.name = "limit",
	.size = sizeof(struct limit),
	.init = limit_init,
	.unaccounted = limit_unaccounted,
	.on[PC_REC_WINDOW] = limit_window,
	.sections = (const struct pcv_section[]){ { "time", save_time, load_time }, { NULL } },
	.report[PCV_TEXT] = limit_text,
	.report[PCV_JSON] = limit_json,
};
