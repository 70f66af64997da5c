/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The sequence of records (docs/verify.md, check 5): walking the records
 * with the cursor, the window length, the pod map digest and pods in force
 * and whether podcapd is stopped, each record must continue the log
 * exactly where it is. Gaps, restarts, reloads, stops and clock steps are
 * reported as events; what no record explains is a failure. Its rules
 * decide which records reach the checks after it (check.h, rules), and it
 * alone writes where the log is and what is in force (struct pc_verify).
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "log/record.h"
#include "verify.h"

#include "lines.h"
#include "verify_impl.h"

struct sequence {
	bool resync; /* the record before did not decode: the cursor is unknown */
	/* a tap's WINDOW awaiting its OBSERVE (only ATTEST records come between), -1: none */
	int64_t observe_for;
	uint64_t observe_start_ns, observe_count; /* its windows */
};

static int
sequence_init(struct pc_verify *v, void *st)
{
	struct sequence *q = st;

	(void)v;
	q->observe_for = -1;
	return 0;
}

static bool
podlim_eq(const struct podlim *a, const struct pc_record_pod *p)
{
	return strcmp(a->id, p->id) == 0 && strcmp(a->uplink, p->uplink) == 0 &&
	    a->cap_bps == p->cap_bps && a->burst_bytes == p->burst_bytes && a->mode == p->mode;
}

/*
 * START and RELOAD: from this record's window on, its pod map and pods are
 * in force. The checks after the sequence take them from there (on[START],
 * on[RELOAD]): the envelope's buckets, the declared map it names.
 */
static void
set_inforce(struct pc_verify *v, uint64_t index, const struct pc_record *r)
{
	v->cursor_ns = r->window_start_ns;
	v->window_ns = r->window_len_ns;
	memcpy(v->digest, r->podmap_digest, PC_DIGEST_LEN);
	v->inforce_record = index;
	free(v->inforce);
	free(v->inforce_sum);
	v->inforce = calloc(r->npods ? r->npods : 1, sizeof(*v->inforce));
	v->inforce_sum = calloc(r->npods ? r->npods : 1, sizeof(*v->inforce_sum));
	if (v->inforce == NULL || v->inforce_sum == NULL)
		abort();
	v->ninforce = r->npods;
	for (uint32_t i = 0; i < r->npods; i++) {
		const struct pc_record_pod *p = &r->pods[i];
		struct podlim *pl = &v->inforce[i];

		memcpy(pl->id, p->id, PC_ID_LEN);
		memcpy(pl->uplink, p->uplink, PC_ID_LEN);
		pl->cap_bps = p->cap_bps;
		pl->burst_bytes = p->burst_bytes;
		pl->mode = p->mode;
		v->inforce_sum[i] = pcv_pod_index(v, p->id);
		if (v->pods[v->inforce_sum[i]].stamp == index)
			pcv_fail(v, PC_VC_SEQUENCE, (int64_t)index, r, "pod %s is declared twice",
				 p->id);
		v->pods[v->inforce_sum[i]].stamp = index;
		v->pods[v->inforce_sum[i]].promises |=
		    p->mode & PC_POD_MODE_WINDOW ? PROMISE_WINDOW : PROMISE_ENVELOPE;
	}
}

/*
 * Where a record that continues the log must start: exactly at the cursor.
 * Earlier is an overlap (or a window replayed), later is a hole nobody
 * explained. Returns true when it may be accounted for.
 */
static bool
check_contiguous(struct pc_verify *v, struct sequence *q, uint64_t index, const struct pc_record *r)
{
	char t1[PC_UTC_LEN], t2[PC_UTC_LEN];

	if (q->resync) {
		/* after an undecodable record the cursor is unknown: that failure is reported */
		q->resync = false;
		if (r->window_start_ns >= v->cursor_ns)
			return true;
	}
	if (r->window_start_ns == v->cursor_ns)
		return true;
	pc_utc_format(v->cursor_ns, t1, sizeof(t1));
	if (r->window_start_ns < v->cursor_ns) {
		pcv_fail(v, PC_VC_SEQUENCE, (int64_t)index, r,
			 "overlaps what was already logged "
			 "up to %s: a window duplicated, reordered or going backwards",
			 t1);
		return false;
	}
	pc_utc_format(r->window_start_ns, t2, sizeof(t2));
	pcv_fail(v, PC_VC_SEQUENCE, (int64_t)index, r,
		 "the windows from %s to %s were not logged "
		 "and no gap record or restart explains it",
		 t1, t2);
	return true;
}

/* Between a START and a STOP. */
static bool
require_run(struct pc_verify *v, uint64_t index, const struct pc_record *r)
{
	if (!v->started) {
		pcv_fail(v, PC_VC_SEQUENCE, (int64_t)index, r, "%s before any start record",
			 pc_record_type_name(r->type));
		return false;
	}
	if (v->stopped) {
		pcv_fail(v, PC_VC_SEQUENCE, (int64_t)index, r, "%s after a stop record",
			 pc_record_type_name(r->type));
		return false;
	}
	return true;
}

/* In a run, under the window length in force. */
static bool
require_running(struct pc_verify *v, uint64_t index, const struct pc_record *r)
{
	if (!require_run(v, index, r))
		return false;
	if (r->window_len_ns != v->window_ns) {
		pcv_fail(v, PC_VC_SEQUENCE, (int64_t)index, r,
			 "window length %" PRIu64 " ns, %" PRIu64 " ns is in force",
			 r->window_len_ns, v->window_ns);
		return false;
	}
	return true;
}

static bool
on_start(struct pc_verify *v, struct sequence *q, uint64_t index, const struct pc_record *r)
{
	char t1[PC_UTC_LEN];

	if (!v->started) {
		pcv_event(v, PC_VE_START, index, r);
	} else if (r->window_start_ns < v->cursor_ns && !q->resync) {
		pc_utc_format(v->cursor_ns, t1, sizeof(t1));
		pcv_fail(v, PC_VC_SEQUENCE, (int64_t)index, r,
			 "restart goes back before %s, the "
			 "end of what was already logged",
			 t1);
		return false;
	} else {
		struct pc_verify_event *e = pcv_event(v, PC_VE_RESTART, index, r);

		e->from_ns = q->resync ? r->window_start_ns : v->cursor_ns;
		e->windows = (r->window_start_ns - e->from_ns) / r->window_len_ns;
		e->clean = v->stopped;
		pcv_tell_unaccounted(v, index, r, r->window_start_ns - e->from_ns);
	}
	v->started = true;
	v->stopped = false;
	q->resync = false;
	set_inforce(v, index, r);
	return true;
}

static bool
on_window(struct pc_verify *v, struct sequence *q, uint64_t index, const struct pc_record *r)
{
	if (!require_running(v, index, r) || !check_contiguous(v, q, index, r))
		return false;
	v->cursor_ns = r->window_start_ns + r->window_count * r->window_len_ns;
	q->observe_for = (int64_t)index;
	q->observe_start_ns = r->window_start_ns;
	q->observe_count = r->window_count;
	if (memcmp(r->podmap_digest, v->digest, PC_DIGEST_LEN) != 0) {
		pcv_fail(v, PC_VC_SEQUENCE, (int64_t)index, r,
			 "window under a pod map digest "
			 "other than the one in force since record %" PRIu64,
			 v->inforce_record);
		return false;
	}
	if (r->npods != v->ninforce) {
		pcv_fail(v, PC_VC_SEQUENCE, (int64_t)index, r,
			 "window of %" PRIu32 " pods, %" PRIu32
			 " are in force since record %" PRIu64,
			 r->npods, v->ninforce, v->inforce_record);
		return false;
	}
	for (uint32_t i = 0; i < r->npods; i++)
		if (!podlim_eq(&v->inforce[i], &r->pods[i])) {
			pcv_fail(v, PC_VC_SEQUENCE, (int64_t)index, r,
				 "pod #%" PRIu32 " (%s) "
				 "differs from the pod in force since record %" PRIu64 " (%s)",
				 i, r->pods[i].id, v->inforce_record, v->inforce[i].id);
			return false;
		}
	v->nwindows += r->window_count;
	return true;
}

/* A gap may also stand for the time down between a STOP and the next START. */
static bool
on_gap(struct pc_verify *v, struct sequence *q, uint64_t index, const struct pc_record *r)
{
	bool stopped = v->stopped;

	v->stopped = false;
	if (!require_running(v, index, r) || !check_contiguous(v, q, index, r)) {
		v->stopped = stopped;
		return false;
	}
	v->stopped = stopped;
	struct pc_verify_event *e = pcv_event(v, PC_VE_GAP, index, r);
	e->windows = r->window_count;
	pcv_tell_unaccounted(v, index, r, r->window_count * r->window_len_ns);
	v->cursor_ns = r->window_start_ns + r->window_count * r->window_len_ns;
	return true;
}

/*
 * The wall clock stepped. Labels may jump forward (never back), and the
 * record says how much real time passed meanwhile: the envelope counts that,
 * not the labels, so a step forward grants no allowance.
 */
static bool
on_clock(struct pc_verify *v, struct sequence *q, uint64_t index, const struct pc_record *r)
{
	char t1[PC_UTC_LEN];

	if (!require_running(v, index, r))
		return false;
	bool resync = q->resync;
	q->resync = false;
	if (r->window_start_ns < v->cursor_ns) {
		pc_utc_format(v->cursor_ns, t1, sizeof(t1));
		pcv_fail(v, PC_VC_SEQUENCE, (int64_t)index, r,
			 "clock record takes the windows "
			 "back before %s, the end of what was already logged",
			 t1);
		return false;
	}
	uint64_t skip = r->window_start_ns - v->cursor_ns;
	if (!resync && r->clock.elapsed_ns > skip) {
		char a[DURATION_LEN], b[DURATION_LEN];

		pcv_format_duration(r->clock.elapsed_ns, a, sizeof(a));
		pcv_format_duration(skip, b, sizeof(b));
		pcv_fail(v, PC_VC_SEQUENCE, (int64_t)index, r,
			 "clock record claims %s of real "
			 "time where its window labels advance %s",
			 a, b);
		return false;
	}
	struct pc_verify_event *e = pcv_event(v, PC_VE_CLOCK, index, r);
	e->from_ns = v->cursor_ns;
	e->step_ns = r->clock.step_ns;
	e->elapsed_ns = r->clock.elapsed_ns;
	if (!resync) {
		v->skipped_ns += skip - r->clock.elapsed_ns;
		pcv_tell_unaccounted(v, index, r, r->clock.elapsed_ns);
	}
	v->cursor_ns = r->window_start_ns;
	return true;
}

static bool
on_reload(struct pc_verify *v, struct sequence *q, uint64_t index, const struct pc_record *r)
{
	if (!v->started || v->stopped) {
		pcv_fail(v, PC_VC_SEQUENCE, (int64_t)index, r, "reload %s",
			 v->started ? "after a stop record" : "before any start record");
		return false;
	}
	if (!check_contiguous(v, q, index, r))
		return false;
	pcv_event(v, PC_VE_RELOAD, index, r);
	set_inforce(v, index, r);
	return true;
}

static bool
on_stop(struct pc_verify *v, struct sequence *q, uint64_t index, const struct pc_record *r)
{
	if (!require_running(v, index, r) || !check_contiguous(v, q, index, r))
		return false;
	pcv_event(v, PC_VE_STOP, index, r);
	v->stopped = true;
	return true;
}

/*
 * A tap's account of what its ports missed in the windows it just logged
 * (docs/reconcile.md): the same windows as the WINDOW before it, which it
 * follows with at most ATTEST records between, one OBSERVE a WINDOW, under
 * the pod map in force. It moves nothing.
 */
static bool
on_observe(struct pc_verify *v, struct sequence *q, uint64_t index, const struct pc_record *r)
{
	char t1[PC_UTC_LEN], t2[PC_UTC_LEN];
	int64_t w = q->observe_for;

	q->observe_for = -1;
	if (!require_running(v, index, r) || q->resync)
		return false;
	if (w < 0) {
		pcv_fail(v, PC_VC_SEQUENCE, (int64_t)index, r,
			 "observe record of windows other than the ones just logged: no window "
			 "record before it awaits one");
		return false;
	}
	bool other_map = memcmp(r->podmap_digest, v->digest, PC_DIGEST_LEN) != 0;
	if (r->window_start_ns == q->observe_start_ns && r->window_count == q->observe_count &&
	    !other_map)
		return true;
	pc_utc_format(r->window_start_ns, t1, sizeof(t1));
	pc_utc_format(q->observe_start_ns, t2, sizeof(t2));
	pcv_fail(v, PC_VC_SEQUENCE, (int64_t)index, r,
		 "observe record of windows other than the ones just logged: %" PRIu64
		 " window%s from %s%s, where record %" PRId64 " logged %" PRIu64 " from %s",
		 r->window_count, r->window_count == 1 ? "" : "s", t1,
		 other_map ? " under another pod map" : "", w, q->observe_count, t2);
	return false;
}

/*
 * A TPM quote of the log before it (docs/attestation.md): inside a run,
 * labelled with the cursor, under the window length and pod map in force,
 * whether or not --attest looks into the quote. It moves nothing. A quote
 * outside a run is of no run; one in a run is checked under --attest even
 * when its label lies, so that a replayed quote is also named as one.
 */
static bool
on_attest(struct pc_verify *v, struct sequence *q, uint64_t index, const struct pc_record *r)
{
	char t1[PC_UTC_LEN], t2[PC_UTC_LEN];

	if (!require_run(v, index, r))
		return false;
	if (r->window_len_ns != v->window_ns)
		pcv_fail(v, PC_VC_SEQUENCE, (int64_t)index, r,
			 "attest record of window length %" PRIu64 " ns, %" PRIu64
			 " ns is in force",
			 r->window_len_ns, v->window_ns);
	/* after an undecodable record the cursor is unknown: that failure is reported */
	if (r->window_start_ns != v->cursor_ns && !q->resync) {
		pc_utc_format(r->window_start_ns, t1, sizeof(t1));
		pc_utc_format(v->cursor_ns, t2, sizeof(t2));
		pcv_fail(v, PC_VC_SEQUENCE, (int64_t)index, r,
			 "attest record labelled %s, where the log's windows end at %s: a quote "
			 "is of the log up to the cursor",
			 t1, t2);
	}
	if (memcmp(r->podmap_digest, v->digest, PC_DIGEST_LEN) != 0)
		pcv_fail(v, PC_VC_SEQUENCE, (int64_t)index, r,
			 "attest record under a pod map digest other than the one in force since "
			 "record %" PRIu64,
			 v->inforce_record);
	return true;
}

/*
 * The clock discipline's readings over the windows just logged
 * (verify/clock.c judges them): in a run, under the window length and pod
 * map in force, ending at the cursor. It moves nothing.
 */
static bool
on_sync(struct pc_verify *v, struct sequence *q, uint64_t index, const struct pc_record *r)
{
	char t1[PC_UTC_LEN], t2[PC_UTC_LEN];

	if (!require_running(v, index, r) || q->resync)
		return false;
	uint64_t end = r->window_start_ns + r->window_count * r->window_len_ns;
	if (r->window_len_ns == v->window_ns && end == v->cursor_ns &&
	    memcmp(r->podmap_digest, v->digest, PC_DIGEST_LEN) == 0)
		return true;
	pc_utc_format(r->window_start_ns, t1, sizeof(t1));
	pc_utc_format(v->cursor_ns, t2, sizeof(t2));
	pcv_fail(v, PC_VC_SEQUENCE, (int64_t)index, r,
		 "sync record of windows other than the ones just logged: %" PRIu64
		 " window%s from %s, where the log's windows end at %s",
		 r->window_count, r->window_count == 1 ? "" : "s", t1, t2);
	return false;
}

/* The rules of each record type; a decoded record has one of these types. */
static bool (*const rule[])(struct pc_verify *, struct sequence *, uint64_t,
			    const struct pc_record *) = {
	[PC_REC_START] = on_start,     /* at or after the cursor: what is in force */
	[PC_REC_WINDOW] = on_window,   /* at the cursor, under what is in force */
	[PC_REC_GAP] = on_gap,         /* at the cursor, also while stopped */
	[PC_REC_RELOAD] = on_reload,   /* at the cursor: what is in force */
	[PC_REC_STOP] = on_stop,       /* at the cursor */
	[PC_REC_CLOCK] = on_clock,     /* at or after the cursor, no more real time than labels */
	[PC_REC_OBSERVE] = on_observe, /* a tap's: the windows of the WINDOW just before */
	[PC_REC_ATTEST] = on_attest,   /* in a run, at the cursor */
	[PC_REC_OBSERVE_SLICES] = on_observe, /* the same, with the tap's boundary slices */
	[PC_REC_SYNC] = on_sync,              /* the windows just logged, under what is in force */
	/* DECLARE: its rules are the declarations' (verify/declare.c) */
};

static bool
sequence_rules(struct pc_verify *v, void *st, uint64_t index, const struct pc_record *r)
{
	if (r->type < sizeof(rule) / sizeof(rule[0]) && rule[r->type] != NULL)
		return rule[r->type](v, st, index, r);
	return true;
}

/* Each record first: the log begins with a START; an OBSERVE answers the WINDOW just before it. */
static void
sequence_record(struct pc_verify *v, void *st, uint64_t index, const struct pc_record *r)
{
	struct sequence *q = st;

	if (index == 0 && r->type != PC_REC_START)
		pcv_fail(v, PC_VC_SEQUENCE, 0, r, "record 0 is not a start record");
	/* a quote at most comes between the two */
	if (!pc_record_is_observe(r->type) && r->type != PC_REC_ATTEST)
		q->observe_for = -1;
}

/* After an undecodable record the cursor is unknown: the next that continues the log resyncs. */
static void
sequence_undecodable(struct pc_verify *v, void *st, uint64_t index)
{
	struct sequence *q = st;

	q->resync = true;
	if (index == 0)
		pcv_fail(v, PC_VC_SEQUENCE, 0, NULL, "record 0 is not a start record");
}

/* ---- the saved state: where the log is, what is in force, the OBSERVE awaited ---- */

static void
save_sequence(const struct pc_verify *v, const void *st, FILE *f)
{
	(void)st;
	fprintf(f, "sequence %d %d %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64,
		v->started ? 1 : 0, v->stopped ? 1 : 0, v->cursor_ns, v->skipped_ns, v->window_ns,
		v->inforce_record, v->nwindows);
	pcv_put_hex(f, v->digest, PC_DIGEST_LEN);
	fputc('\n', f);
}

static int
load_sequence(struct pc_verify *v, void *st, struct pcv_lines *ls, struct pc_error *err)
{
	char *s;
	uint64_t started, stopped, size = v->trusted.size;

	(void)st;
	if (!pcv_line_is(ls, "sequence", &s) || !pcv_get_u64(&s, &started) || started > 1 ||
	    !pcv_get_u64(&s, &stopped) || stopped > 1 || !pcv_get_u64(&s, &v->cursor_ns) ||
	    !pcv_get_u64(&s, &v->skipped_ns) || !pcv_get_u64(&s, &v->window_ns) ||
	    !pcv_get_u64(&s, &v->inforce_record) || !pcv_get_u64(&s, &v->nwindows) ||
	    !pcv_get_hex(&s, v->digest, PC_DIGEST_LEN) || *s != '\0' ||
	    (size > 0 && (started != 1 || v->inforce_record >= size)))
		return pcv_lines_bad(ls, err);
	v->started = started == 1;
	v->stopped = stopped == 1;
	return 0;
}

static void
save_observe(const struct pc_verify *v, const void *st, FILE *f)
{
	const struct sequence *q = st;

	(void)v;
	fputs("observe", f);
	pcv_put_i128(f, q->observe_for);
	fprintf(f, " %" PRIu64 " %" PRIu64 "\n", q->observe_start_ns, q->observe_count);
}

/* A tap's WINDOW whose OBSERVE may be the first record read. */
static int
load_observe(struct pc_verify *v, void *st, struct pcv_lines *ls, struct pc_error *err)
{
	struct sequence *q = st;
	char *s;

	if (!pcv_line_is(ls, "observe", &s) ||
	    !pcv_get_i64(&s, &q->observe_for, -1, (int64_t)v->trusted.size - 1) ||
	    !pcv_get_u64(&s, &q->observe_start_ns) || !pcv_get_u64(&s, &q->observe_count) ||
	    *s != '\0')
		return pcv_lines_bad(ls, err);
	return 0;
}

static void
save_inforce(const struct pc_verify *v, const void *st, FILE *f)
{
	(void)st;
	fprintf(f, "inforce %" PRIu32 "\n", v->ninforce);
	for (uint32_t i = 0; i < v->ninforce; i++) {
		const struct podlim *pl = &v->inforce[i];

		fprintf(f, "limits %" PRIu32 " %s %s %" PRIu64 " %" PRIu64 " %u\n",
			v->inforce_sum[i], pl->id, pl->uplink, pl->cap_bps, pl->burst_bytes,
			pl->mode);
	}
}

/* The pods in force, each one of the pods the state listed before. */
static int
load_inforce(struct pc_verify *v, void *st, struct pcv_lines *ls, struct pc_error *err)
{
	char *s;
	uint64_t n, sum, mode;

	(void)st;
	if (!pcv_line_is(ls, "inforce", &s) || !pcv_get_u64(&s, &n) || *s != '\0' || n > v->npods)
		return pcv_lines_bad(ls, err);
	v->inforce = calloc(n ? n : 1, sizeof(*v->inforce));
	v->inforce_sum = calloc(n ? n : 1, sizeof(*v->inforce_sum));
	if (v->inforce == NULL || v->inforce_sum == NULL)
		abort();
	v->ninforce = (uint32_t)n;
	for (uint32_t i = 0; i < v->ninforce; i++) {
		struct podlim *pl = &v->inforce[i];

		if (!pcv_line_is(ls, "limits", &s) || !pcv_get_u64(&s, &sum) || sum >= v->npods ||
		    !pcv_get_id(&s, pl->id) || !pcv_get_id(&s, pl->uplink) ||
		    !pcv_get_u64(&s, &pl->cap_bps) || !pcv_get_u64(&s, &pl->burst_bytes) ||
		    !pcv_get_u64(&s, &mode) || mode > UINT8_MAX || *s != '\0' ||
		    strcmp(v->pods[sum].id, pl->id) != 0)
			return pcv_lines_bad(ls, err);
		pl->mode = (uint8_t)mode;
		v->inforce_sum[i] = (uint32_t)sum;
	}
	return 0;
}

const struct pcv_check pcv_sequence_check = {
	.name = "sequence",
	.size = sizeof(struct sequence),
	.init = sequence_init,
	.undecodable = sequence_undecodable,
	.record = sequence_record,
	.rules = sequence_rules,
	.sections = (const struct pcv_section[]){ { "sequence", save_sequence, load_sequence },
						  { "observe", save_observe, load_observe },
						  { "inforce", save_inforce, load_inforce },
						  { NULL } },
};
