/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A run's findings: the failures of its checks and the events of the log
 * (docs/verify.md, "Findings"). Each is counted always; the first
 * PC_VERIFY_MAX_KEPT are kept for the report, and past them the first
 * failure of each check and the worst events of each kind. At the bottom
 * of src/verify: every check records here, and nothing here calls a check
 * or the report (verify_impl.h's pcv_fail and pcv_event hand it v's).
 */
#ifndef PODCAP_VERIFY_FINDING_H
#define PODCAP_VERIFY_FINDING_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "base/error.h"
#include "log/record.h"
#include "verify.h"

struct pcv_findings {
	struct pc_verify_failure *fails; /* PC_VERIFY_MAX_KEPT entries */
	uint64_t nfails;                 /* all of them */
	struct pc_verify_event *events;  /* PC_VERIFY_MAX_KEPT entries */
	uint64_t nevents;
	struct pc_verify_event discard; /* events past the ones kept */
	bool event_open; /* the last event is not yet in evsum: its caller fills it */
	struct pc_verify_event_sum evsum[PC_VE_COUNT];
	struct pc_verify_failure_sum failsum[PC_VC_COUNT];
};

/* 0, or -1 when out of memory (then pcv_findings_free). */
int pcv_findings_init(struct pcv_findings *f);
void pcv_findings_free(struct pcv_findings *f);

/* How many of n failures or events are kept for the report: the first ones. */
static inline uint64_t
pcv_kept(uint64_t n)
{
	return n < PC_VERIFY_MAX_KEPT ? n : PC_VERIFY_MAX_KEPT;
}

/*
 * A failure of check c, blaming record `index` (-1 for none) and, when r
 * is not NULL, naming its type and window. Counted always, kept up to
 * PC_VERIFY_MAX_KEPT, the first of each check always.
 */
void pcv_failure(struct pcv_findings *f, enum pc_verify_check c, int64_t index,
		 const struct pc_record *r, const char *fmt, va_list ap)
    __attribute__((format(printf, 5, 0)));
/* The kept failures of check c after the others, each group in the order found. */
void pcv_failures_last(struct pcv_findings *f, enum pc_verify_check c);

/*
 * A new event of record `index`, filled from r; the caller sets the kind's
 * own fields. It is added to the totals of its kind at the next event or
 * at pcv_events_close, once those fields are set.
 */
struct pc_verify_event *pcv_event_add(struct pcv_findings *f, enum pc_verify_event_kind kind,
				      uint64_t index, const struct pc_record *r);
/* Adds the last event to the totals of its kind (at the end of the log). */
void pcv_events_close(struct pcv_findings *f);
/* Whether events of kind k have a size (pc_verify_event_size) that the totals add up. */
bool pcv_event_sized(enum pc_verify_event_kind k);
/*
 * Whether a, the seq-th event, ranks before b, the bseq-th, of the same
 * kind among the worst kept (pc_verify_event_sum).
 */
bool pcv_event_worse(const struct pc_verify_event *a, uint64_t seq, const struct pc_verify_event *b,
		     uint64_t bseq);

/* The names of event kinds as the reports print them. */
const char *pcv_event_name(enum pc_verify_event_kind k);
/* The i-th of the worst events (first failures) left out of the kept list, or NULL. */
const struct pc_verify_event *pcv_unlisted_worst(const struct pcv_findings *f, uint64_t i);
const struct pc_verify_failure *pcv_unlisted_first(const struct pcv_findings *f, uint64_t i);

/*
 * The saved state's events section: the events kept and the totals and
 * worst of each kind, so that a resumed report gives the whole log's.
 * Loading refuses an event of a record at or past `size`, the records the
 * state covers.
 */
struct pcv_lines;
void pcv_findings_save(const struct pcv_findings *f, FILE *out);
int pcv_findings_load(struct pcv_findings *f, uint64_t size, struct pcv_lines *ls,
		      struct pc_error *err);

#endif /* PODCAP_VERIFY_FINDING_H */
