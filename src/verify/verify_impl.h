/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What every check of the verifier shares: struct pc_verify, the core of a
 * run (docs/verify.md). Internal to src/verify. Each check keeps its own
 * state (check.h: pcv_state), and the files are one concern each:
 *
 *	verify.c       lifecycle, the checkpoint (check 1), each record's way in
 *	               (check 4: it decodes and names this appliance), the results
 *	check.c        the table of checks, in run order, and the loops over it
 *	tree.c ... witness.c   one check each: check.h names them in table order
 *	pods.c         the pods a log names, by id, and each check's state of each
 *	policy.c       what the verifier is given besides the log, and its warnings
 *	state.c        the saved state's file: its order, its magic and its sum
 *	report.c, json.c, html.c   the reports' layouts and their own parts
 *	finding.c, format.c, lines.c, print.c   at the bottom: findings, number
 *	               forms, the state's lines and what report parts print with
 *
 * Names here begin with pcv_: they link across those files and are no part
 * of src/verify/verify.h.
 */
#ifndef PODCAP_VERIFY_IMPL_H
#define PODCAP_VERIFY_IMPL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/id.h"
#include "log/merkle.h"
#include "log/note.h"
#include "log/record.h"
#include "verify.h"

#include "check.h"
#include "finding.h"
#include "format.h"
#include "pods.h"

/* The limits of one pod as a START or RELOAD record declares them. */
struct podlim {
	char id[PC_ID_LEN];
	char uplink[PC_ID_LEN];
	uint64_t cap_bps;
	uint64_t burst_bytes;
	uint8_t mode;
};

/* A pod the log names; each check's state of it is at pcv_pod_state(). */
struct podsum {
	char id[PC_ID_LEN];
	uint64_t stamp;   /* last START/RELOAD that listed it: finds duplicates */
	uint8_t promises; /* PROMISE_* of every START/RELOAD that listed it */
};

struct pc_verify {
	/* what the verifier is given */
	struct pc_verifier_key key;
	const struct pc_config **maps; /* the declared pod maps (--pod-map) */
	uint8_t (*map_digest)[PC_DIGEST_LEN];
	size_t nmaps;
	struct pc_verify_policy policy;
	bool now_given; /* policy.now_ns came from the caller */

	/* the checkpoint under verification */
	bool cp_ok;
	struct pc_checkpoint cp;
	char note[PC_NOTE_MAX + 1];
	size_t note_len;
	char appliance[PC_ID_LEN];

	/* the last trusted checkpoint */
	bool have_trusted;
	struct pc_checkpoint trusted;
	bool resumed; /* records [0, trusted.size) were verified before */

	uint64_t nrec; /* records fed */

	/* where the log is and what is in force: the sequence's (verify/sequence.c) alone to write */
	bool started, stopped;
	uint64_t cursor_ns;  /* end of the last window accounted for */
	uint64_t skipped_ns; /* label time that clock records say did not elapse */
	uint64_t window_ns;
	uint8_t digest[PC_DIGEST_LEN];
	uint64_t inforce_record;
	struct podlim *inforce;
	uint32_t *inforce_sum; /* the index of each pod in force among v->pods */
	uint32_t ninforce;
	uint64_t nwindows;

	/* the pods the log names (verify/pods.c), and each check's state of each */
	struct podsum *pods;
	uint32_t npods, cap_pods;
	struct pcv_idmap pod_ix;
	void *pod_state[PCV_CHECK_COUNT];

	struct pcv_findings found; /* the failures and events (verify/finding.c) */
	bool finished;

	void *state[PCV_CHECK_COUNT]; /* each check's own (check.h) */
};

/* Check id's state. */
static inline void *
pcv_state(const struct pc_verify *v, enum pcv_check_id id)
{
	return v->state[id];
}

/* Check id's state of pod `pod`; NULL for a check with none. */
static inline void *
pcv_pod_state(const struct pc_verify *v, int id, uint32_t pod)
{
	size_t n = pcv_checks[id]->pod_size;

	return n == 0 ? NULL : (char *)v->pod_state[id] + (size_t)pod * n;
}

/* ---- findings (verify/finding.c), of v ---- */

static inline void pcv_fail(struct pc_verify *v, enum pc_verify_check c, int64_t index,
			    const struct pc_record *r, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

/* A failure of check c (pcv_failure), blaming record `index` (-1 for none) and r's type and window. */
static inline void
pcv_fail(struct pc_verify *v, enum pc_verify_check c, int64_t index, const struct pc_record *r,
	 const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	pcv_failure(&v->found, c, index, r, fmt, ap);
	va_end(ap);
}

/* A new event of record `index` (pcv_event_add): the caller sets the kind's own fields. */
static inline struct pc_verify_event *
pcv_event(struct pc_verify *v, enum pc_verify_event_kind kind, uint64_t index,
	  const struct pc_record *r)
{
	return pcv_event_add(&v->found, kind, index, r);
}

/* ---- the policy (verify/policy.c) ---- */

/*
 * The state's policy section. Loading returns 1 when it is this run's
 * policy and pod maps, 0 when not, -1 with err when it does not parse.
 */
void pcv_policy_save(const struct pc_verify *v, FILE *f);
int pcv_policy_load(const struct pc_verify *v, struct pcv_lines *ls, struct pc_error *err);

/* ---- the saved state (verify/state.c) ---- */

/* Whether the state's order places every check's every section once: 0, or -1 and why. */
int pcv_state_order_check(char *why, size_t len);

#endif /* PODCAP_VERIFY_IMPL_H */
