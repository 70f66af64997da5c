/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A verifier check is one unit (docs/verify.md, "How checks plug in"): a
 * row of callbacks, struct pcv_check, with its own state, in a table whose
 * order is the order in which the checks see each record. The core
 * (verify.c, the loops of check.c) calls every row's hooks in that order;
 * a check calls no other check's hooks, and reads another's results only
 * through that check's header. Adding a check is a file with its row, a
 * value below and its line in pcv_checks[] (check.c).
 */
#ifndef PODCAP_VERIFY_CHECK_H
#define PODCAP_VERIFY_CHECK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "base/error.h"
#include "log/record.h"

/* The checks, in the order they see each record (the table's order). */
enum pcv_check_id {
	PCV_TREE,     /* verify/tree.c: the Merkle tree, rollback and fork (checks 2, 3, 8) */
	PCV_TIME,     /* verify/time.c: no record after now, now not before a pull (check 9) */
	PCV_SEQUENCE, /* verify/sequence.c: each record where the log is (check 5) */
	PCV_BUILD,    /* verify/build.c: a build changes only at a start (check 12) */
	PCV_COUNTERS, /* verify/counters.c: counters a real port can produce (check 13) */
	PCV_LIMIT,    /* verify/limit.c: time no window covers, merged windows (checks 10, 11) */
	PCV_TOTALS,   /* verify/totals.c: what each pod and link passed and dropped */
	PCV_ENVELOPE, /* verify/envelope.c: burst + cap x time (check 7) */
	PCV_WINDOW,   /* verify/window.c: cap x window in every window (check 14) */
	PCV_SERIES,   /* verify/series.c: each pod's windows over time, when kept */
	PCV_PODMAP,   /* verify/podmap.c: the declared pod maps (check 6) */
	PCV_DECLARE,  /* verify/declare.c: DECLARE records, the auditor's declarations (check 6a) */
	PCV_ATTEST,   /* verify/attest.c: the TPM quotes (--attest) */
	PCV_FRESHNESS, /* verify/freshness.c: the checkpoint's age at the verifier's now (check 11) */
	PCV_WITNESS,   /* verify/witness.c: the witnesses' judgement, for the reports */
	PCV_CLOCK,     /* verify/clock.c: the clock discipline's readings within D (check 15) */
	PCV_LINK,      /* verify/link.c: the cables, their links and neighbours (check 16) */
	PCV_CHECK_COUNT,
};

struct pc_verify;
struct pcv_lines;

/* Hooks are indexed by record type: enum pc_record_type, 1 to PC_REC_NEWEST. */
#define PCV_REC_TYPES (PC_REC_NEWEST + 1)

/* The reports a check may have a part in. */
enum pcv_report {
	PCV_TEXT,
	PCV_JSON,
	PCV_HTML,
	PCV_REPORT_COUNT,
};

/* Record `index`, decoded into r, and st the check's state. */
typedef void pcv_record_fn(struct pc_verify *v, void *st, uint64_t index,
			   const struct pc_record *r);

/*
 * One section of the saved state: lines that the check writes after a run
 * without failures and reads back to resume. verify/state.c holds the
 * order of the file (docs/log-format.md, "The verifier's state").
 */
struct pcv_section {
	const char *tag; /* the words its first line starts with */
	void (*save)(const struct pc_verify *v, const void *st, FILE *f);
	/* 0, or -1 with err (pcv_lines_bad when a line does not parse) */
	int (*load)(struct pc_verify *v, void *st, struct pcv_lines *ls, struct pc_error *err);
};

struct pcv_check {
	const char *name; /* its file: verify/<name>.c */
	size_t size;      /* its state, zeroed, at pcv_state(v, id) */
	size_t pod_size;  /* its state of each pod the log names, zeroed, at pcv_pod_state() */
	int (*init)(struct pc_verify *v, void *st); /* the state zeroed: 0, or -1 out of memory */
	void (*free)(void *st);                     /* what init and the run allocated */

	/* ---- the run, hook by hook in this order; NULL for none ---- */
	void (*begin)(struct pc_verify *v, void *st); /* the checkpoint verified */
	/* each record as it came, before it is decoded */
	void (*bytes)(struct pc_verify *v, void *st, uint64_t index, const uint8_t *rec, size_t len,
		      const uint8_t *stored_leaf);
	void (*undecodable)(struct pc_verify *v, void *st, uint64_t index);
	pcv_record_fn *record; /* each record that decoded, before the rules */
	/*
	 * The sequence's rules (verify/sequence.c): whether the record
	 * continues the log where it is. Only a record that does reaches on[].
	 */
	bool (*rules)(struct pc_verify *v, void *st, uint64_t index, const struct pc_record *r);
	pcv_record_fn *on[PCV_REC_TYPES]; /* a record of that type in its place */
	/*
	 * Each pod p (pod: its index among the pods) of a WINDOW in its
	 * place, in each direction d, after every on[PC_REC_WINDOW]; podst is
	 * the check's state of the pod.
	 */
	void (*pod)(struct pc_verify *v, void *st, void *podst, uint64_t index,
		    const struct pc_record *r, const struct pc_record_pod *p, uint32_t pod, int d);
	/* ns of time no window covers, which the rules found at record `index` */
	void (*unaccounted)(struct pc_verify *v, void *st, uint64_t index,
			    const struct pc_record *r, uint64_t ns);
	pcv_record_fn *after; /* each record that decoded, once every hook above saw it */
	void (*finish)(struct pc_verify *v, void *st); /* after the last record */

	/* ---- the saved state ---- */
	const struct pcv_section *sections; /* ended by a NULL tag; NULL for none */
	/* its lines of pod podst in direction d, in the state's pods section */
	void (*save_pod)(const struct pc_verify *v, const void *podst, int d, FILE *f);
	int (*load_pod)(struct pc_verify *v, void *podst, int d, struct pcv_lines *ls,
			struct pc_error *err);
	/* what it checks is not in the state: a run with it reads every record */
	bool (*rereads)(const struct pc_verify *v, const void *st);
	void (*resume)(struct pc_verify *v, void *st); /* the whole state was read */

	/* ---- its part of each report, placed by the report's layout ---- */
	void (*report[PCV_REPORT_COUNT])(const struct pc_verify *v, const void *st, FILE *f);
};

/* The table, in run order: pcv_checks[id] is check id's row. */
extern const struct pcv_check *const pcv_checks[PCV_CHECK_COUNT];

extern const struct pcv_check pcv_tree_check, pcv_time_check, pcv_sequence_check, pcv_build_check,
    pcv_counters_check, pcv_limit_check, pcv_totals_check, pcv_envelope_check, pcv_window_check,
    pcv_series_check, pcv_podmap_check, pcv_declare_check, pcv_attest_check, pcv_freshness_check,
    pcv_witness_check, pcv_clock_check, pcv_link_check;

/* ---- the loops over the table (verify/check.c), for the core ---- */

/* Every check's state and init; -1 when out of memory. */
int pcv_checks_new(struct pc_verify *v);
void pcv_checks_free(struct pc_verify *v);
void pcv_checks_begin(struct pc_verify *v);
void pcv_checks_bytes(struct pc_verify *v, uint64_t index, const uint8_t *rec, size_t len,
		      const uint8_t *stored_leaf);
void pcv_checks_undecodable(struct pc_verify *v, uint64_t index);
/* A record that decoded, from record to after. */
void pcv_checks_record(struct pc_verify *v, uint64_t index, const struct pc_record *r);
void pcv_checks_finish(struct pc_verify *v);
bool pcv_checks_reread(const struct pc_verify *v);
void pcv_checks_resume(struct pc_verify *v);
/* For the sequence's rules: record `index` leaves ns of time no window covers. */
void pcv_tell_unaccounted(struct pc_verify *v, uint64_t index, const struct pc_record *r,
			  uint64_t ns);
/* Check id's section `tag`, or NULL (verify/state.c). */
const struct pcv_section *pcv_check_section(enum pcv_check_id id, const char *tag);

/*
 * One part of a report, in its layout: the report's own, or check
 * `check`'s part, or, for PCV_OTHERS, the parts of every check the layout
 * does not name, in table order: a new check's part needs no layout.
 */
struct pcv_part {
	void (*own)(const struct pc_verify *v, FILE *f); /* NULL for a check's */
	int check;
};
#define PCV_OTHERS PCV_CHECK_COUNT
#define PCV_OWN(fn)      \
	{                \
		(fn), -1 \
	}
#define PCV_PART(id)       \
	{                  \
		NULL, (id) \
	}
#define PCV_PARTS(lay) (sizeof(lay) / sizeof((lay)[0]))

void pcv_report_parts(const struct pc_verify *v, FILE *f, enum pcv_report which,
		      const struct pcv_part *layout, size_t n);

#endif /* PODCAP_VERIFY_CHECK_H */
