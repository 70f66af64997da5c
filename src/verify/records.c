/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The sequence of records and the pod map (docs/log-format.md, "Verifying",
 * checks 5 and 6): walking the records with the cursor, the window length,
 * the pod map digest and pods in force and whether podcapd is stopped,
 * each record must continue the log exactly where it is. Gaps, restarts,
 * reloads, stops and clock steps are reported as events; what no record
 * explains is a failure. Each START and RELOAD puts in force the declared
 * pod map it names (verify/policy.c), whose pods it must list.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "podmap/config.h"
#include "log/record.h"
#include "verify.h"

#include "verify_impl.h"

static bool
podlim_eq(const struct podlim *a, const struct pc_record_pod *p)
{
	return strcmp(a->id, p->id) == 0 && strcmp(a->uplink, p->uplink) == 0 &&
	    a->cap_bps == p->cap_bps && a->burst_bytes == p->burst_bytes && a->mode == p->mode;
}

/* START and RELOAD against the declared map they name: the limits the record claims are the file's. */
static void
check_podmap_pods(struct pc_verify *v, uint64_t index, const struct pc_record *r,
		  const struct pc_config *c)
{
	if (r->window_len_ns != c->window_ns)
		pcv_fail(v, PC_VC_PODMAP, (int64_t)index, r, "window length %" PRIu64
			 " ns, the pod map says %" PRIu64 " ns", r->window_len_ns, c->window_ns);
	if (r->npods != c->npods) {
		pcv_fail(v, PC_VC_PODMAP, (int64_t)index, r, "%" PRIu32 " pods, the pod map "
			 "declares %u", r->npods, c->npods);
		return;
	}
	for (uint32_t i = 0; i < r->npods; i++) {
		const struct pc_record_pod *p = &r->pods[i];
		int j = pc_config_find_pod(c, p->id);

		if (j < 0) {
			pcv_fail(v, PC_VC_PODMAP, (int64_t)index, r, "pod %s is not in the pod map",
				 p->id);
			continue;
		}
		const struct pc_pod *cp = &c->pods[j];
		uint8_t mode = pc_record_mode(&cp->limits);

		if (strcmp(c->uplinks[cp->uplink].name, p->uplink) != 0 ||
		    cp->limits.cap_bps != p->cap_bps || cp->limits.burst_bytes != p->burst_bytes ||
		    mode != p->mode)
			pcv_fail(v, PC_VC_PODMAP, (int64_t)index, r,
				 "pod %s: uplink %s cap %" PRIu64 " bit/s burst %" PRIu64
				 " bytes mode %u (%s promise), the pod "
				 "map says uplink %s cap %" PRIu64 " bit/s burst %" PRIu64 " bytes "
				 "mode %u (%s promise)",
				 p->id, p->uplink, p->cap_bps, p->burst_bytes, p->mode,
				 pcv_promise_name(p->mode), c->uplinks[cp->uplink].name,
				 cp->limits.cap_bps, cp->limits.burst_bytes, mode,
				 pcv_promise_name(mode));
	}
}

/*
 * START and RELOAD: from this record's window on, its pod map and pods are
 * in force (and, with --pod-map, they must be those of the file it names).
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
	pcv_env_declare(v, index, r);
	pcv_inforce_uplinks(v);
	v->inforce_map = pcv_declared_map(v, index, r);
	if (v->inforce_map >= 0)
		check_podmap_pods(v, index, r, v->maps[v->inforce_map]);
	pcv_use_begin(&v->mapuse, r->podmap_digest, index, v->inforce_map);
}

/*
 * Where a record that continues the log must start: exactly at the cursor.
 * Earlier is an overlap (or a window replayed), later is a hole nobody
 * explained. Returns true when it may be accounted for.
 */
static bool
check_contiguous(struct pc_verify *v, uint64_t index, const struct pc_record *r)
{
	char t1[PC_UTC_LEN], t2[PC_UTC_LEN];

	if (v->resync) {
		/* after an undecodable record the cursor is unknown: that failure is reported */
		v->resync = false;
		if (r->window_start_ns >= v->cursor_ns)
			return true;
	}
	if (r->window_start_ns == v->cursor_ns)
		return true;
	pc_utc_format(v->cursor_ns, t1, sizeof(t1));
	if (r->window_start_ns < v->cursor_ns) {
		pcv_fail(v, PC_VC_SEQUENCE, (int64_t)index, r, "overlaps what was already logged "
			 "up to %s: a window duplicated, reordered or going backwards", t1);
		return false;
	}
	pc_utc_format(r->window_start_ns, t2, sizeof(t2));
	pcv_fail(v, PC_VC_SEQUENCE, (int64_t)index, r, "the windows from %s to %s were not logged "
		 "and no gap record or restart explains it", t1, t2);
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
		pcv_fail(v, PC_VC_SEQUENCE, (int64_t)index, r, "window length %" PRIu64 " ns, %"
			 PRIu64 " ns is in force", r->window_len_ns, v->window_ns);
		return false;
	}
	return true;
}

static void
on_start(struct pc_verify *v, uint64_t index, const struct pc_record *r)
{
	char t1[PC_UTC_LEN];

	if (!v->started) {
		pcv_event(v, PC_VE_START, index, r);
	} else if (r->window_start_ns < v->cursor_ns && !v->resync) {
		pc_utc_format(v->cursor_ns, t1, sizeof(t1));
		pcv_fail(v, PC_VC_SEQUENCE, (int64_t)index, r, "restart goes back before %s, the "
			 "end of what was already logged", t1);
		return;
	} else {
		struct pc_verify_event *e = pcv_event(v, PC_VE_RESTART, index, r);

		e->from_ns = v->resync ? r->window_start_ns : v->cursor_ns;
		e->windows = (r->window_start_ns - e->from_ns) / r->window_len_ns;
		e->clean = v->stopped;
		pcv_unaccounted(v, index, r, r->window_start_ns - e->from_ns);
	}
	v->started = true;
	v->stopped = false;
	v->resync = false;
	set_inforce(v, index, r);
}

static void
on_window(struct pc_verify *v, uint64_t index, const struct pc_record *r)
{
	if (!require_running(v, index, r) || !check_contiguous(v, index, r))
		return;
	v->cursor_ns = r->window_start_ns + r->window_count * r->window_len_ns;
	v->observe_for = (int64_t)index;
	v->observe_start_ns = r->window_start_ns;
	v->observe_count = r->window_count;
	if (memcmp(r->podmap_digest, v->digest, PC_DIGEST_LEN) != 0) {
		pcv_fail(v, PC_VC_SEQUENCE, (int64_t)index, r, "window under a pod map digest "
			 "other than the one in force since record %" PRIu64, v->inforce_record);
		return;
	}
	if (r->npods != v->ninforce) {
		pcv_fail(v, PC_VC_SEQUENCE, (int64_t)index, r, "window of %" PRIu32 " pods, %"
			 PRIu32 " are in force since record %" PRIu64, r->npods, v->ninforce,
			 v->inforce_record);
		return;
	}
	for (uint32_t i = 0; i < r->npods; i++)
		if (!podlim_eq(&v->inforce[i], &r->pods[i])) {
			pcv_fail(v, PC_VC_SEQUENCE, (int64_t)index, r, "pod #%" PRIu32 " (%s) "
				 "differs from the pod in force since record %" PRIu64 " (%s)", i,
				 r->pods[i].id, v->inforce_record, v->inforce[i].id);
			return;
		}
	v->nwindows += r->window_count;
	pcv_check_counters(v, index, r);
	pcv_policy_window(v, index, r);
	pcv_audit_window(v, index, r);
	pcv_account_window(v, index, r);
}

/* A gap may also stand for the time down between a STOP and the next START. */
static void
on_gap(struct pc_verify *v, uint64_t index, const struct pc_record *r)
{
	bool stopped = v->stopped;

	v->stopped = false;
	if (!require_running(v, index, r) || !check_contiguous(v, index, r)) {
		v->stopped = stopped;
		return;
	}
	v->stopped = stopped;
	struct pc_verify_event *e = pcv_event(v, PC_VE_GAP, index, r);
	e->windows = r->window_count;
	pcv_unaccounted(v, index, r, r->window_count * r->window_len_ns);
	v->cursor_ns = r->window_start_ns + r->window_count * r->window_len_ns;
}

/*
 * The wall clock stepped. Labels may jump forward (never back), and the
 * record says how much real time passed meanwhile: the envelope counts that,
 * not the labels, so a step forward grants no allowance.
 */
static void
on_clock(struct pc_verify *v, uint64_t index, const struct pc_record *r)
{
	char t1[PC_UTC_LEN];

	if (!require_running(v, index, r))
		return;
	bool resync = v->resync;
	v->resync = false;
	if (r->window_start_ns < v->cursor_ns) {
		pc_utc_format(v->cursor_ns, t1, sizeof(t1));
		pcv_fail(v, PC_VC_SEQUENCE, (int64_t)index, r, "clock record takes the windows "
			 "back before %s, the end of what was already logged", t1);
		return;
	}
	uint64_t skip = r->window_start_ns - v->cursor_ns;
	if (!resync && r->elapsed_ns > skip) {
		char a[DURATION_LEN], b[DURATION_LEN];

		pcv_format_duration(r->elapsed_ns, a, sizeof(a));
		pcv_format_duration(skip, b, sizeof(b));
		pcv_fail(v, PC_VC_SEQUENCE, (int64_t)index, r, "clock record claims %s of real "
			 "time where its window labels advance %s", a, b);
		return;
	}
	struct pc_verify_event *e = pcv_event(v, PC_VE_CLOCK, index, r);
	e->from_ns = v->cursor_ns;
	e->step_ns = r->step_ns;
	e->elapsed_ns = r->elapsed_ns;
	if (!resync) {
		v->skipped_ns += skip - r->elapsed_ns;
		pcv_unaccounted(v, index, r, r->elapsed_ns);
	}
	v->cursor_ns = r->window_start_ns;
}

static void
on_reload(struct pc_verify *v, uint64_t index, const struct pc_record *r)
{
	if (!v->started || v->stopped) {
		pcv_fail(v, PC_VC_SEQUENCE, (int64_t)index, r, "reload %s",
			 v->started ? "after a stop record" : "before any start record");
		return;
	}
	if (!check_contiguous(v, index, r))
		return;
	pcv_event(v, PC_VE_RELOAD, index, r);
	set_inforce(v, index, r);
}

static void
on_stop(struct pc_verify *v, uint64_t index, const struct pc_record *r)
{
	if (!require_running(v, index, r) || !check_contiguous(v, index, r))
		return;
	pcv_event(v, PC_VE_STOP, index, r);
	v->stopped = true;
}

/*
 * A tap's account of what its ports missed in the windows it just logged
 * (docs/reconcile.md): the same windows as the WINDOW before it, which it
 * follows with at most ATTEST records between, one OBSERVE a WINDOW, under
 * the pod map in force. It moves nothing.
 */
static void
on_observe(struct pc_verify *v, uint64_t index, const struct pc_record *r)
{
	char t1[PC_UTC_LEN], t2[PC_UTC_LEN];
	int64_t w = v->observe_for;

	v->observe_for = -1;
	if (!require_running(v, index, r) || v->resync)
		return;
	if (w < 0) {
		pcv_fail(v, PC_VC_SEQUENCE, (int64_t)index, r,
			 "observe record of windows other than the ones just logged: no window "
			 "record before it awaits one");
		return;
	}
	bool other_map = memcmp(r->podmap_digest, v->digest, PC_DIGEST_LEN) != 0;
	if (r->window_start_ns == v->observe_start_ns && r->window_count == v->observe_count &&
	    !other_map)
		return;
	pc_utc_format(r->window_start_ns, t1, sizeof(t1));
	pc_utc_format(v->observe_start_ns, t2, sizeof(t2));
	pcv_fail(v, PC_VC_SEQUENCE, (int64_t)index, r,
		 "observe record of windows other than the ones just logged: %" PRIu64
		 " window%s from %s%s, where record %" PRId64 " logged %" PRIu64 " from %s",
		 r->window_count, r->window_count == 1 ? "" : "s", t1,
		 other_map ? " under another pod map" : "", w, v->observe_count, t2);
}

/*
 * A TPM quote of the log before it (docs/attestation.md): inside a run,
 * labelled with the cursor, under the window length and pod map in force,
 * whether or not --attest looks into the quote. It moves nothing. A quote
 * outside a run is of no run; one in a run is checked under --attest even
 * when its label lies, so that a replayed quote is also named as one.
 */
static void
on_attest(struct pc_verify *v, uint64_t index, const struct pc_record *r)
{
	char t1[PC_UTC_LEN], t2[PC_UTC_LEN];

	v->nattest++;
	if (!require_run(v, index, r))
		return;
	if (r->window_len_ns != v->window_ns)
		pcv_fail(v, PC_VC_SEQUENCE, (int64_t)index, r,
			 "attest record of window length %" PRIu64 " ns, %" PRIu64
			 " ns is in force",
			 r->window_len_ns, v->window_ns);
	/* after an undecodable record the cursor is unknown: that failure is reported */
	if (r->window_start_ns != v->cursor_ns && !v->resync) {
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
	pcv_attest_record(v, index, r);
}

/* The rules of each record type; a decoded record has one of these types. */
static void (*const on_type[])(struct pc_verify *, uint64_t, const struct pc_record *) = {
	[PC_REC_START] = on_start,
	[PC_REC_WINDOW] = on_window,
	[PC_REC_GAP] = on_gap,
	[PC_REC_RELOAD] = on_reload,
	[PC_REC_STOP] = on_stop,
	[PC_REC_CLOCK] = on_clock,
	[PC_REC_OBSERVE] = on_observe, /* a tap's */
	[PC_REC_DECLARE] = pcv_audit_declare,
	[PC_REC_ATTEST] = on_attest,
};

void
pcv_sequence(struct pc_verify *v, uint64_t index, const struct pc_record *r)
{
	if (index == 0 && r->type != PC_REC_START)
		pcv_fail(v, PC_VC_SEQUENCE, 0, r, "record 0 is not a start record");
	pcv_build_record(v, index, r);
	pcv_audit_record(v, index, r);
	/* a tap's OBSERVE answers the WINDOW just before it, a quote at most between */
	if (r->type != PC_REC_OBSERVE && r->type != PC_REC_ATTEST)
		v->observe_for = -1;
	/* --attest: a start begins another run of quotes and windows */
	if (r->type == PC_REC_START)
		pcv_attest_run(v);
	if (r->type < sizeof(on_type) / sizeof(on_type[0]) && on_type[r->type] != NULL)
		on_type[r->type](v, index, r);
	if (r->type == PC_REC_WINDOW)
		pcv_attest_window(v, index, r);
	pcv_attest_after(v);
}
