/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A run's failures and events (verify/finding.h): counted always, kept
 * up to PC_VERIFY_MAX_KEPT, and summed per check and kind, so that a
 * report never drops one silently.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "finding.h"
#include "lines.h"

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
	[PC_VC_CLOCK] = "clock",
	[PC_VC_LINK] = "link",
};

const char *
pc_verify_check_name(enum pc_verify_check c)
{
	if ((unsigned)c >= PC_VC_COUNT)
		return "unknown";
	return check_names[c];
}

static const char *const event_names[PC_VE_COUNT] = {
	[PC_VE_START] = "start",     /* record 0 */
	[PC_VE_RESTART] = "restart", /* a later START */
	[PC_VE_STOP] = "stop",       /* a STOP */
	[PC_VE_GAP] = "gap",         /* a GAP */
	[PC_VE_RELOAD] = "reload",   /* a RELOAD */
	[PC_VE_CLOCK] = "clock",     /* a CLOCK */
};

const char *
pcv_event_name(enum pc_verify_event_kind k)
{
	return (unsigned)k < PC_VE_COUNT ? event_names[k] : "unknown";
}

int
pcv_findings_init(struct pcv_findings *f)
{
	memset(f, 0, sizeof(*f));
	f->fails = calloc(PC_VERIFY_MAX_KEPT, sizeof(*f->fails));
	f->events = calloc(PC_VERIFY_MAX_KEPT, sizeof(*f->events));
	return f->fails == NULL || f->events == NULL ? -1 : 0;
}

void
pcv_findings_free(struct pcv_findings *f)
{
	free(f->fails);
	free(f->events);
	f->fails = NULL;
	f->events = NULL;
}

/* ---- failures ---- */

void
pcv_failure(struct pcv_findings *fd, enum pc_verify_check c, int64_t index,
	    const struct pc_record *r, const char *fmt, va_list ap)
{
	uint64_t n = fd->nfails++;
	struct pc_verify_failure_sum *fs = &fd->failsum[c];
	struct pc_verify_failure first;

	fs->count++;
	if (n >= PC_VERIFY_MAX_KEPT && fs->count > 1)
		return;
	/* past the ones kept, the first of each check is still kept */
	struct pc_verify_failure *f = n < PC_VERIFY_MAX_KEPT ? &fd->fails[n] : &first;
	memset(f, 0, sizeof(*f));
	f->check = c;
	f->record = index;
	if (r != NULL) {
		f->type = r->type;
		f->window_start_ns = r->window_start_ns;
	}
	vsnprintf(f->msg, sizeof(f->msg), fmt, ap);
	if (fs->count == 1) {
		fs->first = *f;
		fs->first_seq = n;
	}
}

void
pcv_failures_last(struct pcv_findings *f, enum pc_verify_check c)
{
	uint64_t kept = pcv_kept(f->nfails), n = 0;
	struct pc_verify_failure *tmp = malloc(kept * sizeof(*tmp) + 1);

	if (tmp == NULL)
		return; /* the order is only the report's: keep the one found */
	for (int pass = 0; pass < 2; pass++)
		for (uint64_t i = 0; i < kept; i++)
			if ((f->fails[i].check == c) == (pass == 1))
				tmp[n++] = f->fails[i];
	memcpy(f->fails, tmp, kept * sizeof(*tmp));
	free(tmp);
}

const struct pc_verify_failure *
pcv_unlisted_first(const struct pcv_findings *f, uint64_t i)
{
	for (int c = 0; c < PC_VC_COUNT; c++) {
		const struct pc_verify_failure_sum *fs = &f->failsum[c];

		if (fs->count > 0 && fs->first_seq >= PC_VERIFY_MAX_KEPT && i-- == 0)
			return &fs->first;
	}
	return NULL;
}

/* ---- events ---- */

uint64_t
pc_verify_event_size(const struct pc_verify_event *e)
{
	switch (e->kind) {
	case PC_VE_GAP:
		return e->windows * e->window_len_ns; /* a valid record keeps it below 2^64 */
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
	for (i = es->nworst - 1;
	     i > 0 && pcv_event_worse(e, seq, &es->worst[i - 1], es->worst_seq[i - 1]); i--) {
		es->worst[i] = es->worst[i - 1];
		es->worst_seq[i] = es->worst_seq[i - 1];
	}
	es->worst[i] = *e;
	es->worst_seq[i] = seq;
}

void
pcv_events_close(struct pcv_findings *f)
{
	if (!f->event_open)
		return;
	uint64_t n = f->nevents - 1;
	const struct pc_verify_event *e = n < PC_VERIFY_MAX_KEPT ? &f->events[n] : &f->discard;

	event_sum_add(&f->evsum[e->kind], e, n);
	f->event_open = false;
}

struct pc_verify_event *
pcv_event_add(struct pcv_findings *f, enum pc_verify_event_kind kind, uint64_t index,
	      const struct pc_record *r)
{
	pcv_events_close(f);
	uint64_t n = f->nevents++;
	struct pc_verify_event *e = n < PC_VERIFY_MAX_KEPT ? &f->events[n] : &f->discard;

	f->event_open = true;
	memset(e, 0, sizeof(*e));
	e->kind = kind;
	e->record = index;
	e->window_start_ns = r->window_start_ns;
	e->window_len_ns = r->window_len_ns;
	memcpy(e->podmap_digest, r->podmap_digest, PC_DIGEST_LEN);
	memcpy(e->build_id, r->build_id, sizeof(e->build_id));
	return e;
}

const struct pc_verify_event *
pcv_unlisted_worst(const struct pcv_findings *f, uint64_t i)
{
	for (int k = 0; k < PC_VE_COUNT; k++) {
		const struct pc_verify_event_sum *es = &f->evsum[k];

		for (uint32_t j = 0; j < es->nworst; j++)
			if (es->worst_seq[j] >= PC_VERIFY_MAX_KEPT && i-- == 0)
				return &es->worst[j];
	}
	return NULL;
}

/* ---- the saved state: the events kept so far, and the totals and worst of each kind ---- */

/* An event's fields, after the word that starts its line. */
static void
put_event(FILE *f, const struct pc_verify_event *e)
{
	fprintf(f, " %d %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 " %d",
		(int)e->kind, e->record, e->window_start_ns, e->from_ns, e->window_len_ns,
		e->windows, e->clean ? 1 : 0);
	pcv_put_i128(f, e->step_ns);
	fprintf(f, " %" PRIu64, e->elapsed_ns);
	pcv_put_hex(f, e->podmap_digest, PC_DIGEST_LEN);
	pcv_put_hex(f, e->build_id, sizeof(e->build_id));
	fputc('\n', f);
}

/*
 * The events kept so far and the totals and worst of each kind, so that a
 * resumed report gives the whole log's, as a full one does.
 */
void
pcv_findings_save(const struct pcv_findings *fd, FILE *f)
{
	uint64_t kept = pcv_kept(fd->nevents);

	fprintf(f, "events %" PRIu64 " %" PRIu64 "\n", fd->nevents, kept);
	for (uint64_t i = 0; i < kept; i++) {
		fputs("event", f);
		put_event(f, &fd->events[i]);
	}
	for (int k = 0; k < PC_VE_COUNT; k++) {
		const struct pc_verify_event_sum *es = &fd->evsum[k];

		fprintf(f, "eventsum %d %" PRIu64, k, es->count);
		pcv_put_u128(f, es->total_ns);
		fprintf(f, " %" PRIu32 "\n", es->nworst);
		for (uint32_t i = 0; i < es->nworst; i++) {
			fprintf(f, "worst %" PRIu64, es->worst_seq[i]);
			put_event(f, &es->worst[i]);
		}
	}
}

/* The rest of an event's line (put_event); its record must be one the state covers. */
static bool
get_event(uint64_t size, char **s, struct pc_verify_event *e)
{
	uint64_t kind, clean;
	i128 step;

	memset(e, 0, sizeof(*e));
	if (!pcv_get_u64(s, &kind) || kind >= PC_VE_COUNT || !pcv_get_u64(s, &e->record) ||
	    !pcv_get_u64(s, &e->window_start_ns) || !pcv_get_u64(s, &e->from_ns) ||
	    !pcv_get_u64(s, &e->window_len_ns) || !pcv_get_u64(s, &e->windows) ||
	    !pcv_get_u64(s, &clean) || clean > 1 || !pcv_get_i128(s, &step) || step > INT64_MAX ||
	    step < INT64_MIN || !pcv_get_u64(s, &e->elapsed_ns) ||
	    !pcv_get_hex(s, e->podmap_digest, PC_DIGEST_LEN) ||
	    !pcv_get_hex(s, e->build_id, sizeof(e->build_id)) || **s != '\0' || e->record >= size)
		return false;
	e->kind = (enum pc_verify_event_kind)kind;
	e->clean = clean == 1;
	e->step_ns = (int64_t)step;
	return true;
}

/*
 * The totals of kind k: as many worst events as the count gives, each of
 * that kind, one of the events counted, in the order they are kept.
 */
static bool
load_event_sum(struct pcv_findings *fd, uint64_t size, struct pcv_lines *ls, int k,
	       uint64_t *counted)
{
	struct pc_verify_event_sum *es = &fd->evsum[k];
	char *s;
	uint64_t kk, n;

	if (!pcv_line_is(ls, "eventsum", &s) || !pcv_get_u64(&s, &kk) || kk != (uint64_t)k ||
	    !pcv_get_u64(&s, &es->count) || !pcv_get_u128(&s, &es->total_ns) ||
	    !pcv_get_u64(&s, &n) || *s != '\0' || es->count > fd->nevents - *counted ||
	    n != (es->count < PC_VERIFY_WORST ? es->count : PC_VERIFY_WORST) ||
	    (!pcv_event_sized((enum pc_verify_event_kind)k) && es->total_ns != 0))
		return false;
	*counted += es->count;
	es->nworst = (uint32_t)n;
	for (uint32_t i = 0; i < es->nworst; i++) {
		struct pc_verify_event *e = &es->worst[i];

		if (!pcv_line_is(ls, "worst", &s) || !pcv_get_u64(&s, &es->worst_seq[i]) ||
		    es->worst_seq[i] >= fd->nevents || !get_event(size, &s, e) ||
		    e->kind != (enum pc_verify_event_kind)k ||
		    pc_verify_event_size(e) > es->total_ns ||
		    (i > 0 &&
		     !pcv_event_worse(&es->worst[i - 1], es->worst_seq[i - 1], e,
				      es->worst_seq[i])))
			return false;
	}
	return true;
}

int
pcv_findings_load(struct pcv_findings *fd, uint64_t size, struct pcv_lines *ls,
		  struct pc_error *err)
{
	char *s;
	uint64_t total, kept, counted = 0;

	if (!pcv_line_is(ls, "events", &s) || !pcv_get_u64(&s, &total) || !pcv_get_u64(&s, &kept) ||
	    *s != '\0' || kept != pcv_kept(total))
		return pcv_lines_bad(ls, err);
	for (uint64_t i = 0; i < kept; i++)
		if (!pcv_line_is(ls, "event", &s) || !get_event(size, &s, &fd->events[i]))
			return pcv_lines_bad(ls, err);
	fd->nevents = total;
	for (int k = 0; k < PC_VE_COUNT; k++)
		if (!load_event_sum(fd, size, ls, k, &counted))
			return pcv_lines_bad(ls, err);
	return counted == total ? 0 : pcv_lines_bad(ls, err);
}
