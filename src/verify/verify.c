/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The verifier (docs/log-format.md, "Verifying"): its lifecycle, the
 * checkpoint (check 1), each record's way in (check 4: it decodes and
 * names this appliance) before the tree and the sequence take it, the end
 * of the log, and the results.
 *
 * It trusts nothing but the verifier key (and, when given, the pod map and
 * the last checkpoint it trusted): every claim in the log is recomputed. It
 * streams: one pass over the records, memory bounded by the number of pods,
 * not by the length of the log.
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "podmap/config.h"
#include "base/id.h"
#include "log/merkle.h"
#include "log/note.h"
#include "log/record.h"
#include "log/origin.h"
#include "verify.h"

#include "verify_impl.h"
#include "series.h"

static const char *const check_names[PC_VC_COUNT] = {
	[PC_VC_CHECKPOINT] = "checkpoint",
	[PC_VC_SIGNATURE] = "signature",
	[PC_VC_ORIGIN] = "origin",
	[PC_VC_MISSING] = "missing",
	[PC_VC_ROOT] = "root",
	[PC_VC_DECODE] = "decode",
	[PC_VC_APPLIANCE] = "appliance",
	[PC_VC_SEQUENCE] = "sequence",
	[PC_VC_PODMAP] = "podmap",
	[PC_VC_ENVELOPE] = "envelope",
	[PC_VC_ROLLBACK] = "rollback",
	[PC_VC_FORK] = "fork",
	[PC_VC_TIME] = "time",
	[PC_VC_LIMIT] = "limit",
	[PC_VC_BUILD] = "build",
	[PC_VC_COUNTERS] = "counters",
	[PC_VC_WINDOW] = "window",
	[PC_VC_ATTEST] = "attest",
};

const char *
pc_verify_check_name(enum pc_verify_check c)
{
	if ((unsigned)c >= PC_VC_COUNT)
		return "unknown";
	return check_names[c];
}

/* ---- findings ---- */

void
pcv_fail(struct pc_verify *v, enum pc_verify_check c, int64_t index, const struct pc_record *r,
	 const char *fmt, ...)
{
	va_list ap;
	uint64_t n = v->nfails++;
	struct pc_verify_failure_sum *fs = &v->failsum[c];
	struct pc_verify_failure first;

	fs->count++;
	if (n >= PC_VERIFY_MAX_KEPT && fs->count > 1)
		return;
	/* past the ones kept, the first of each check is still kept */
	struct pc_verify_failure *f = n < PC_VERIFY_MAX_KEPT ? &v->fails[n] : &first;
	memset(f, 0, sizeof(*f));
	f->check = c;
	f->record = index;
	if (r != NULL) {
		f->type = r->type;
		f->window_start_ns = r->window_start_ns;
	}
	va_start(ap, fmt);
	vsnprintf(f->msg, sizeof(f->msg), fmt, ap);
	va_end(ap);
	if (fs->count == 1) {
		fs->first = *f;
		fs->first_seq = n;
	}
}

uint64_t
pc_verify_event_size(const struct pc_verify_event *e)
{
	switch (e->kind) {
	case PC_VE_GAP:
		return e->windows * e->window_len_ns;   /* a valid record keeps it below 2^64 */
	case PC_VE_RESTART:
		return e->window_start_ns - e->from_ns;
	case PC_VE_CLOCK:
		return e->step_ns < 0 ? (uint64_t)-e->step_ns : (uint64_t)e->step_ns;
	default:
		return 0;
	}
}

bool
pcv_event_sized(enum pc_verify_event_kind k)
{
	return k == PC_VE_GAP || k == PC_VE_RESTART || k == PC_VE_CLOCK;
}

bool
pcv_event_worse(const struct pc_verify_event *a, uint64_t seq, const struct pc_verify_event *b,
		uint64_t bseq)
{
	if (!pcv_event_sized(a->kind))
		return seq > bseq;
	uint64_t sa = pc_verify_event_size(a), sb = pc_verify_event_size(b);
	return sa > sb || (sa == sb && seq < bseq);
}

/* The seq-th event, now filled in, into the totals and the worst of its kind. */
static void
event_sum_add(struct pc_verify_event_sum *es, const struct pc_verify_event *e, uint64_t seq)
{
	uint32_t i;

	es->count++;
	es->total_ns += pc_verify_event_size(e);
	if (es->nworst < PC_VERIFY_WORST)
		es->nworst++;
	else if (!pcv_event_worse(e, seq, &es->worst[PC_VERIFY_WORST - 1],
				  es->worst_seq[PC_VERIFY_WORST - 1]))
		return;
	for (i = es->nworst - 1; i > 0 && pcv_event_worse(e, seq, &es->worst[i - 1],
							  es->worst_seq[i - 1]); i--) {
		es->worst[i] = es->worst[i - 1];
		es->worst_seq[i] = es->worst_seq[i - 1];
	}
	es->worst[i] = *e;
	es->worst_seq[i] = seq;
}

void
pcv_events_close(struct pc_verify *v)
{
	if (!v->event_open)
		return;
	uint64_t n = v->nevents - 1;
	const struct pc_verify_event *e = n < PC_VERIFY_MAX_KEPT ? &v->events[n] : &v->discard;

	event_sum_add(&v->evsum[e->kind], e, n);
	v->event_open = false;
}

struct pc_verify_event *
pcv_event(struct pc_verify *v, enum pc_verify_event_kind kind, uint64_t index,
	  const struct pc_record *r)
{
	pcv_events_close(v);
	uint64_t n = v->nevents++;
	struct pc_verify_event *e = n < PC_VERIFY_MAX_KEPT ? &v->events[n] : &v->discard;

	v->event_open = true;

	memset(e, 0, sizeof(*e));
	e->kind = kind;
	e->record = index;
	e->window_start_ns = r->window_start_ns;
	e->window_len_ns = r->window_len_ns;
	memcpy(e->podmap_digest, r->podmap_digest, PC_DIGEST_LEN);
	memcpy(e->build_id, r->build_id, sizeof(e->build_id));
	return e;
}

/* ---- lifecycle ---- */

struct pc_verify *
pc_verify_new_maps(const struct pc_verifier_key *key, const struct pc_config *const *maps,
		   size_t n)
{
	struct pc_verify *v = calloc(1, sizeof(*v));

	if (v == NULL)
		return NULL;
	v->fails = calloc(PC_VERIFY_MAX_KEPT, sizeof(*v->fails));
	v->events = calloc(PC_VERIFY_MAX_KEPT, sizeof(*v->events));
	v->changed = calloc(PC_VERIFY_MAX_KEPT, sizeof(*v->changed));
	v->builds.u = calloc(PC_VERIFY_MAX_KEPT, sizeof(*v->builds.u));
	v->mapuse.u = calloc(PC_VERIFY_MAX_KEPT, sizeof(*v->mapuse.u));
	v->maps = calloc(n ? n : 1, sizeof(*v->maps));
	v->map_digest = calloc(n ? n : 1, sizeof(*v->map_digest));
	if (v->fails == NULL || v->events == NULL || v->changed == NULL || v->builds.u == NULL ||
	    v->mapuse.u == NULL || v->maps == NULL || v->map_digest == NULL) {
		pc_verify_free(v);
		return NULL;
	}
	v->key = *key;
	for (size_t i = 0; i < n; i++) {
		v->maps[i] = maps[i];
		pc_config_digest(maps[i], v->map_digest[i]);
	}
	v->nmaps = n;
	pc_verify_policy_init(&v->policy);
	v->unacc_longest_record = -1;
	v->merged_record = -1;
	v->gap_build_record = -1;
	v->builds.inforce = -1;
	v->mapuse.inforce = -1;
	v->inforce_map = -1;
	v->observe_for = -1;
	v->stored_all = true;
	pc_merkle_range_init(&v->range);
	pc_merkle_range_init(&v->stored);
	return v;
}

struct pc_verify *
pc_verify_new(const struct pc_verifier_key *key, const struct pc_config *podmap)
{
	return pc_verify_new_maps(key, &podmap, podmap != NULL ? 1 : 0);
}

void
pc_verify_free(struct pc_verify *v)
{
	if (v == NULL)
		return;
	free(v->fails);
	free(v->events);
	free(v->changed);
	free(v->builds.u);
	free(v->mapuse.u);
	free(v->maps);
	free(v->map_digest);
	free(v->inforce_uplinks);
	free(v->uplink_seen);
	pcv_series_free(v->series);
	free(v->inforce);
	free(v->inforce_sum);
	free(v->pods);
	free(v->links);
	free(v->podmap_ix.slots);
	free(v->linkmap_ix.slots);
	pcv_audit_free(v);
	pcv_attest_free(v);
	free(v);
}

/* ---- the checkpoint ---- */

/* Parses and verifies a note with the key: 0, or -1 with the check and reason. */
static int
open_note(const struct pc_verify *v, const char *note, size_t len, struct pc_checkpoint *cp,
	  enum pc_verify_check *check, struct pc_error *err)
{
	size_t body_len;

	if (pc_note_verify(note, len, &v->key, &body_len, err) < 0) {
		*check = strcmp(err->msg, "malformed note") == 0 ? PC_VC_CHECKPOINT : PC_VC_SIGNATURE;
		return -1;
	}
	if (pc_checkpoint_parse_body(note, body_len, cp, err) < 0) {
		*check = PC_VC_CHECKPOINT;
		return -1;
	}
	if (strcmp(cp->origin, v->key.name) != 0) {
		*check = PC_VC_ORIGIN;
		return pc_error_set(err, "the checkpoint's origin is not the verifier key's name");
	}
	return 0;
}

int
pc_verify_trusted(struct pc_verify *v, const char *note, size_t len, struct pc_error *err)
{
	enum pc_verify_check c;
	struct pc_error e;

	if (open_note(v, note, len, &v->trusted, &c, &e) < 0)
		return pc_error_set(err, "%s: %s", pc_verify_check_name(c), e.msg);
	v->have_trusted = true;
	if (v->trusted.size == 0) {
		pc_merkle_range_root(&v->range, v->trusted_root_here);
		v->trusted_root_seen = true;
	}
	return 0;
}

uint64_t
pc_verify_trusted_size(const struct pc_verify *v)
{
	return v->have_trusted ? v->trusted.size : 0;
}

int
pc_verify_checkpoint(struct pc_verify *v, const char *note, size_t len)
{
	enum pc_verify_check c;
	struct pc_error why;

	if (open_note(v, note, len, &v->cp, &c, &why) < 0) {
		char origin[PC_KEY_NAME_LEN];
		struct pc_checkpoint cp;
		const char *blank = memmem(note, len, "\n\n", 2);

		/* name the log the checkpoint claims, so a splice is plain to see */
		if (c != PC_VC_CHECKPOINT && blank != NULL &&
		    pc_checkpoint_parse_body(note, (size_t)(blank - note) + 1, &cp, NULL) == 0)
			snprintf(origin, sizeof(origin), "%s", cp.origin);
		else
			snprintf(origin, sizeof(origin), "?");
		if (c == PC_VC_ORIGIN)
			pcv_fail(v, c, -1, NULL, "checkpoint of log '%s', the key is for '%s'",
				 origin, v->key.name);
		else
			pcv_fail(v, c, -1, NULL, "checkpoint of log '%s': %s", origin, why.msg);
		return -1;
	}
	if (pc_origin_parse(v->cp.origin, v->appliance, &why) < 0) {
		pcv_fail(v, PC_VC_ORIGIN, -1, NULL, "origin '%s': %s", v->cp.origin, why.msg);
		return -1;
	}
	if (len > PC_NOTE_MAX) {
		pcv_fail(v, PC_VC_CHECKPOINT, -1, NULL, "checkpoint note longer than %u bytes",
			 PC_NOTE_MAX);
		return -1;
	}
	memcpy(v->note, note, len);
	v->note[len] = '\0';
	v->note_len = len;
	v->cp_ok = true;
	pcv_policy_begin(v);
	return 0;
}

const char *
pc_verify_checkpoint_note(const struct pc_verify *v, size_t *len)
{
	if (!v->cp_ok)
		return NULL;
	*len = v->note_len;
	return v->note;
}

uint64_t
pc_verify_size(const struct pc_verify *v)
{
	return v->cp_ok ? v->cp.size : 0;
}

/* ---- the records ---- */

void
pc_verify_record(struct pc_verify *v, const uint8_t *rec, size_t len, const uint8_t *stored_leaf)
{
	struct pc_record r;
	struct pc_error why;

	if (!v->cp_ok || v->nrec >= v->cp.size || v->finished)
		return;
	uint64_t index = v->nrec++;
	v->rec_bytes += len;
	struct changed *c = pcv_tree_append(v, index, rec, len, stored_leaf);
	if (pc_record_decode(rec, len, &r, &why) < 0) {
		pcv_fail(v, PC_VC_DECODE, (int64_t)index, NULL, "record does not decode: %s",
			 why.msg);
		v->resync = true;
		if (index == 0)
			pcv_fail(v, PC_VC_SEQUENCE, 0, NULL, "record 0 is not a start record");
		return;
	}
	if (c != NULL) {
		c->type = r.type;
		c->window_start_ns = r.window_start_ns;
	}
	if (strcmp(r.appliance_id, v->appliance) != 0)
		pcv_fail(v, PC_VC_APPLIANCE, (int64_t)index, &r,
			 "record of appliance '%s' in the log of '%s'", r.appliance_id,
			 v->appliance);
	pcv_time_record(v, index, &r);
	pcv_sequence(v, index, &r);
	pc_record_free(&r);
}

/*
 * The counters findings come last: an impossible counter is most often
 * the trace of a record changed after signing, which the tree's failure
 * names first.
 */
static void
counters_last(struct pc_verify *v)
{
	uint64_t kept = pcv_kept(v->nfails), n = 0;
	struct pc_verify_failure *tmp = malloc(kept * sizeof(*tmp) + 1);

	if (tmp == NULL)
		return;   /* the order is only the report's: keep the one found */
	for (int pass = 0; pass < 2; pass++)
		for (uint64_t i = 0; i < kept; i++)
			if ((v->fails[i].check == PC_VC_COUNTERS) == (pass == 1))
				tmp[n++] = v->fails[i];
	memcpy(v->fails, tmp, kept * sizeof(*tmp));
	free(tmp);
}

int
pc_verify_finish(struct pc_verify *v)
{
	if (v->finished)
		return v->nfails > 0;
	v->finished = true;
	pcv_events_close(v);
	if (v->cp_ok)
		pcv_tree_finish(v);
	if (pc_verify_find(v, PC_VC_COUNTERS) != NULL)
		counters_last(v);
	pcv_env_finish(v);
	pcv_audit_finish(v);
	pcv_attest_finish(v);
	if (v->cp_ok)
		pcv_policy_finish(v);
	return v->nfails > 0;
}

/* ---- results ---- */

uint64_t
pc_verify_nfailures(const struct pc_verify *v)
{
	return v->nfails;
}

const struct pc_verify_failure *
pc_verify_failure_at(const struct pc_verify *v, size_t i)
{
	if (i >= pcv_kept(v->nfails))
		return NULL;
	return &v->fails[i];
}

const struct pc_verify_failure *
pc_verify_find(const struct pc_verify *v, enum pc_verify_check c)
{
	const struct pc_verify_failure_sum *fs = pc_verify_failure_sum(v, c);

	return fs != NULL && fs->count > 0 ? &fs->first : NULL;
}

const struct pc_verify_failure_sum *
pc_verify_failure_sum(const struct pc_verify *v, enum pc_verify_check c)
{
	if ((unsigned)c >= PC_VC_COUNT)
		return NULL;
	return &v->failsum[c];
}

uint64_t
pc_verify_nevents(const struct pc_verify *v)
{
	return v->nevents;
}

const struct pc_verify_event *
pc_verify_event_at(const struct pc_verify *v, size_t i)
{
	if (i >= pcv_kept(v->nevents))
		return NULL;
	return &v->events[i];
}

const struct pc_verify_event_sum *
pc_verify_event_sum(const struct pc_verify *v, enum pc_verify_event_kind k)
{
	if ((unsigned)k >= PC_VE_COUNT)
		return NULL;
	return &v->evsum[k];
}

unsigned __int128
pc_verify_unaccounted_ns(const struct pc_verify *v)
{
	return v->evsum[PC_VE_GAP].total_ns + v->evsum[PC_VE_RESTART].total_ns;
}

int
pc_verify_pod_totals(const struct pc_verify *v, const char *pod, enum pc_dir dir,
		     struct pc_verify_totals *t)
{
	int64_t i = pcv_pod_find(v, pod);

	if (i < 0 || (unsigned)dir >= PC_DIR_COUNT)
		return -1;
	*t = v->pods[i].t[dir];
	return 0;
}

uint64_t
pc_verify_nrecords(const struct pc_verify *v)
{
	return v->nrec;
}

uint64_t
pc_verify_nwindows(const struct pc_verify *v)
{
	return v->nwindows;
}
