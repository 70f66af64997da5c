/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Time (docs/verify.md, check 9): no record may end, or have been made,
 * after the verifier's now plus the clock skew it allows; and that now may
 * not be before a pull of an earlier run, a time the verifier already
 * lived through. Its state is those pulls, which the saved state carries.
 */
#include <inttypes.h>
#include <string.h>

#include "base/clock.h"
#include "log/record.h"
#include "verify.h"

#include "lines.h"
#include "verify_impl.h"

struct time {
	struct pc_verify_pull pulls[PC_VERIFY_MAX_PULLS]; /* the oldest first */
	size_t npulls;
};

static uint64_t
add_sat(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

/* The latest a record of an honest appliance can end: now, and the clocks' disagreement. */
static uint64_t
latest(const struct pc_verify *v)
{
	return add_sat(v->policy.now_ns, v->policy.clock_skew_ns);
}

/* The checkpoint verified: a pull the state records is a time the verifier already lived through. */
static void
time_begin(struct pc_verify *v, void *st)
{
	const struct time *t = st;
	char now[PC_UTC_LEN], then[PC_UTC_LEN];

	if (t->npulls > 0 && t->pulls[t->npulls - 1].now_ns > latest(v)) {
		pc_utc_format(v->policy.now_ns, now, sizeof(now));
		pc_utc_format(t->pulls[t->npulls - 1].now_ns, then, sizeof(then));
		pcv_fail(v, PC_VC_TIME, -1, NULL,
			 "the verifier's now, %s, is before its own last "
			 "pull at %s: --now or its clock is wrong",
			 now, then);
	}
}

/* Any record that decoded: none may end, or be made, after now + skew. */
static void
time_record(struct pc_verify *v, void *st, uint64_t index, const struct pc_record *r)
{
	char at[PC_UTC_LEN], now[PC_UTC_LEN], skew[DURATION_LEN];
	/* a record ends where the windows it covers end (WINDOW, GAP and OBSERVE; others cover none) */
	uint64_t end = r->window_start_ns + r->window_count * r->window_len_ns; /* decoded */

	(void)st;
	if (end <= latest(v) && r->time_ns <= latest(v))
		return;
	pc_utc_format(end > latest(v) ? end : r->time_ns, at, sizeof(at));
	pc_utc_format(v->policy.now_ns, now, sizeof(now));
	pcv_format_duration(v->policy.clock_skew_ns, skew, sizeof(skew));
	pcv_fail(v, PC_VC_TIME, (int64_t)index, r,
		 "%s at %s, after the verifier's now %s and "
		 "the %s of clock skew it allows",
		 end > latest(v) ? "its window ends" : "it was made", at, now, skew);
}

size_t
pc_verify_npulls(const struct pc_verify *v)
{
	const struct time *t = pcv_state(v, PCV_TIME);

	return t->npulls;
}

const struct pc_verify_pull *
pc_verify_pull_at(const struct pc_verify *v, size_t i)
{
	const struct time *t = pcv_state(v, PCV_TIME);

	return i < t->npulls ? &t->pulls[i] : NULL;
}

/* ---- the saved state: the earlier pulls and this one, when its caller said what time it is ---- */

static void
save_pulls(const struct pc_verify *v, const void *st, FILE *f)
{
	const struct time *t = st;
	struct pc_verify_pull now = { v->policy.now_ns, v->nrec, v->cursor_ns };
	size_t n = t->npulls + (v->now_given ? 1 : 0);
	size_t from = n > PC_VERIFY_MAX_PULLS ? n - PC_VERIFY_MAX_PULLS : 0;

	fprintf(f, "pulls %zu\n", n - from);
	for (size_t i = from; i < n; i++) {
		const struct pc_verify_pull *p = i < t->npulls ? &t->pulls[i] : &now;

		fprintf(f, "pull %" PRIu64 " %" PRIu64 " %" PRIu64 "\n", p->now_ns, p->size,
			p->cursor_ns);
	}
}

static int
load_pulls(struct pc_verify *v, void *st, struct pcv_lines *ls, struct pc_error *err)
{
	struct time *t = st;
	char *s;
	uint64_t n;

	if (!pcv_line_is(ls, "pulls", &s) || !pcv_get_u64(&s, &n) || *s != '\0' ||
	    n > PC_VERIFY_MAX_PULLS)
		return pcv_lines_bad(ls, err);
	for (uint64_t i = 0; i < n; i++) {
		struct pc_verify_pull *p = &t->pulls[i];

		if (!pcv_line_is(ls, "pull", &s) || !pcv_get_u64(&s, &p->now_ns) ||
		    !pcv_get_u64(&s, &p->size) || !pcv_get_u64(&s, &p->cursor_ns) || *s != '\0' ||
		    p->size > v->trusted.size)
			return pcv_lines_bad(ls, err);
	}
	t->npulls = (size_t)n;
	return 0;
}

const struct pcv_check pcv_time_check = {
	.name = "time",
	.size = sizeof(struct time),
	.begin = time_begin,
	.record = time_record,
	.sections = (const struct pcv_section[]){ { "pulls", save_pulls, load_pulls }, { NULL } },
};
