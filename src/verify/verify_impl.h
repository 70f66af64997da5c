/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The verifier's shared state. Internal to src/verify, one file a
 * concern of docs/log-format.md, "Verifying":
 *
 *	verify.c           lifecycle, the checkpoint (check 1), each record's way
 *	                   in (decode, appliance: check 4), finish, the results
 *	verify/tree.c      the Merkle tree: missing records, the root, rollback
 *	                   and fork (checks 2, 3, 8)
 *	verify/records.c   the sequence of records and the pod map (checks 5, 6)
 *	verify/totals.c    pods and links by id, and what each passed and dropped
 *	verify/envelope.c  burst + cap x time over runs of windows (check 7),
 *	                   and cap x window in each window of a pod held to the
 *	                   window promise (check 14)
 *	verify/finding.c   the failures and events every check records
 *	verify/format.c    the number forms of the messages, reports and state
 *	verify/report.c    the text and JSON reports
 *	verify/state.c     the saved state: written after a clean run, read as
 *	                   hostile input
 *	verify/policy.c    what the verifier knows besides the log: its now and
 *	                   pulls, its limits, the build ids it pins and the pod
 *	                   maps it declares (checks 9 to 12)
 *	verify/counters.c  counters and link blocks a real port can produce
 *	                   (check 13)
 *	verify/series.c    each pod's windows over time, downsampled, for the
 *	                   HTML report and the indicators (verify/series.h)
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
#include <stdio.h>

#include "base/id.h"
#include "log/merkle.h"
#include "log/note.h"
#include "log/record.h"
#include "base/units.h"
#include "verify.h"

#include "finding.h"
#include "format.h"

/* The limits of one pod as a START or RELOAD record declares them. */
struct podlim {
	char id[PC_ID_LEN];
	char uplink[PC_ID_LEN];
	uint64_t cap_bps;
	uint64_t burst_bytes;
	uint8_t mode;
};

/*
 * Envelope of one pod and direction (docs/bucket.md, "What the verifier
 * checks"): a bound on what its token bucket can hold, carried from record
 * to record as the bucket carries its level. At real time at_real_ns
 * (label at_ns) the bucket holds at most min(level, 8e9 x burst_bytes)
 * bit-ns; the clamp is applied lazily, when the next record needs it.
 * level below zero means the pod passed more than any bucket could have:
 * -level is the excess of the worst interval ending there, the one from
 * anchor_ns, where the bucket held at most anchor_tokens and from which it
 * earned `earned` while the pod passed `bytes`.
 */
struct env {
	bool active;
	uint64_t cap_bps, burst_bytes;
	char uplink[PC_ID_LEN];    /* a pod moved to another uplink gets a new bucket */
	uint64_t listed;           /* the START or RELOAD that last put it in force */
	i128 level;
	uint64_t at_ns;
	uint64_t at_real_ns;       /* the same in real time: labels less the time clock steps skipped */
	uint64_t anchor_ns;
	i128 anchor_tokens;
	i128 earned;
	u128 bytes;
	bool mixed;                /* the cap or burst changed since the anchor */
	uint64_t over_windows;     /* windows at which some interval broke the envelope */
	bool viol;
	i128 worst;
	uint64_t w_start_ns, w_end_ns, w_window_ns, w_record;
	u128 w_bytes;
	i128 w_tokens, w_earned;
	bool w_mixed;
};

struct podsum {
	char id[PC_ID_LEN];
	struct pc_verify_totals t[PC_DIR_COUNT];
	struct env env[PC_DIR_COUNT];
	uint64_t stamp;            /* last START/RELOAD that listed it: finds duplicates */
	uint8_t promises;          /* PROMISE_* of every START/RELOAD that listed it */
};

struct linksum {
	char name[PC_ID_LEN];
	u128 frames[PC_DIR_COUNT][PC_LINK_DROP_COUNT];
	u128 bytes[PC_DIR_COUNT][PC_LINK_DROP_COUNT];
};

/* Open addressing from an id's hash to its index in pods or links. */
struct slot {
	uint32_t val;              /* index + 1; 0 when empty */
	uint64_t h;
};

struct idmap {
	struct slot *slots;
	uint32_t cap;              /* power of two */
	uint32_t n;
};

/* A record whose bytes differ from the leaf hash the source stores beside it. */
struct changed {
	uint64_t index;
	uint8_t type;
	uint64_t window_start_ns;
};

/* Build ids or pod map digests: what ran under each, and which one is in force. */
struct uses {
	struct pc_verify_use *u;         /* PC_VERIFY_MAX_KEPT entries */
	uint64_t n;                      /* all of them; the first PC_VERIFY_MAX_KEPT are kept */
	int64_t inforce;                 /* index of the one in force, -1 when none (or not kept) */
};

struct pcv_audit;

struct pc_verify {
	struct pc_verifier_key key;
	struct pcv_audit *audit; /* DECLARE records and the auditor (verify/declare.c), or NULL */
	const struct pc_config **maps;   /* the declared pod maps (--pod-map) */
	uint8_t (*map_digest)[PC_DIGEST_LEN];
	size_t nmaps;

	/* the policy, and what its checks carry from one record to the next */
	struct pc_verify_policy policy;
	bool now_given;                  /* policy.now_ns came from the caller */
	struct pc_verify_pull pulls[PC_VERIFY_MAX_PULLS];
	size_t npulls;
	uint64_t unacc_total_ns, unacc_run_ns, unacc_longest_ns;
	int64_t unacc_longest_record;
	bool unacc_total_reported, unacc_run_reported;
	uint64_t merged_most;
	int64_t merged_record;
	uint8_t build[32];               /* the build id of the START in force */
	uint64_t build_record;           /* that START */
	int64_t gap_build_record;        /* a GAP of another build, waiting for its START; -1 */
	uint8_t gap_build[32];
	struct uses builds, mapuse;
	int inforce_map;                 /* the declared map in force, -1 when none */
	char (*inforce_uplinks)[PC_ID_LEN]; /* the uplinks the pods in force name, sorted */
	bool *uplink_seen;
	uint32_t ninforce_uplinks;

	/* the checkpoint under verification */
	bool cp_ok;
	struct pc_checkpoint cp;
	char note[PC_NOTE_MAX + 1];
	size_t note_len;
	char appliance[PC_ID_LEN];

	/* the last trusted checkpoint */
	bool have_trusted;
	struct pc_checkpoint trusted;
	bool trusted_root_seen;
	uint8_t trusted_root_here[PC_HASH_LEN];
	bool resumed;                    /* records [0, trusted.size) were verified before */

	/* the tree */
	uint64_t nrec;
	uint64_t rec_bytes;              /* the records' lengths added up: where the next starts */
	struct pc_merkle_range range;
	struct pc_merkle_range stored;   /* over the source's stored leaf hashes */
	bool stored_all;
	struct changed *changed;
	size_t nchanged;

	/* the sequence */
	bool started, stopped, resync;
	uint64_t cursor_ns;              /* end of the last window accounted for */
	uint64_t skipped_ns;             /* label time that clock records say did not elapse */
	uint64_t window_ns;
	uint8_t digest[PC_DIGEST_LEN];
	uint64_t inforce_record;
	struct podlim *inforce;
	uint32_t *inforce_sum;
	uint32_t ninforce;
	uint64_t nwindows;
	/* a tap's WINDOW awaiting its OBSERVE (only ATTEST records come between), -1: none */
	int64_t observe_for;
	uint64_t observe_start_ns, observe_count; /* its windows */

	/* the envelope: what it needs of the records between windows */
	bool env_declared;               /* a START or RELOAD put pods in force ... */
	uint64_t env_inforce;            /* ... this one */
	bool env_window_seen;            /* a window was accounted for ... */
	uint64_t env_window_real_ns;     /* ... its record's last starting here, in real time */

	/* summaries */
	struct podsum *pods;
	uint32_t npods, cap_pods;
	struct idmap podmap_ix;
	struct linksum *links;
	uint32_t nlinks, cap_links;
	struct idmap linkmap_ix;

	struct pcv_findings found; /* the failures and events (verify/finding.c) */
	bool finished;

	struct pcv_series *series; /* each pod's windows over time, when kept (verify/series.c) */
	/* --attest (verify/attest.c): NULL when off */
	struct pcv_attest *attest;
	uint64_t nattest; /* ATTEST records read in this run, checked or not */
	/* --witness: the tool's policy and its judgement, for the reports; NULL when off */
	const struct pc_witness_policy *witness_policy;
	const struct pc_witness_report *witness;
};

/* verify/sections.c: the sections of --witness, --attest and --pod-maps, when given */
/* Whether the reports have a declarations section: a DECLARE was seen or --auditor-key given. */
bool pcv_audit_reported(const struct pc_verify *v);
void pcv_json_sections(const struct pc_verify *v, FILE *f);
/* The ATTEST records this run read that no --attest policy checked: 0 under --attest. */
uint64_t pcv_attest_unchecked(const struct pc_verify *v);
/* The text report's line saying so, when there are any. */
void pcv_text_attest_unchecked(const struct pc_verify *v, FILE *f);
void pcv_html_witnesses(const struct pc_verify *v, FILE *f);
void pcv_html_attest(const struct pc_verify *v, FILE *f);
void pcv_html_declarations(const struct pc_verify *v, FILE *f);

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

/* ---- the tree (verify/tree.c) ---- */

/*
 * Hashes record `index` into the tree (and stored_leaf, when given, into
 * the stored one). Returns the entry that names the record when its bytes
 * differ from stored_leaf, for the caller to fill in once it decodes;
 * NULL otherwise.
 */
struct changed *pcv_tree_append(struct pc_verify *v, uint64_t index, const uint8_t *rec,
				size_t len, const uint8_t *stored_leaf);
/* After the last record of a checkpoint that verified: checks 2, 3 and 8. */
void pcv_tree_finish(struct pc_verify *v);

/* ---- the sequence and the pod map (verify/records.c) ---- */

/* A record that decoded, in its place in the log. */
void pcv_sequence(struct pc_verify *v, uint64_t index, const struct pc_record *r);
/* verify/declare.c: each record first; DECLARE; each window accounted for; the end; the report */
void pcv_audit_record(struct pc_verify *v, uint64_t index, const struct pc_record *r);
void pcv_audit_declare(struct pc_verify *v, uint64_t index, const struct pc_record *r);
void pcv_audit_window(struct pc_verify *v, uint64_t index, const struct pc_record *r);
void pcv_audit_finish(struct pc_verify *v);
bool pcv_audit_full(const struct pc_verify *v);
void pcv_audit_free(struct pc_verify *v);
void pcv_audit_print_text(const struct pc_verify *v, FILE *f);

/*
 * verify/attest.c, each a no-op without --attest: a run begins; a window;
 * an ATTEST record the sequence accepted (its quote); after each record
 * (the tree before the next); the end.
 */
void pcv_attest_run(struct pc_verify *v);
void pcv_attest_window(struct pc_verify *v, uint64_t index, const struct pc_record *r);
void pcv_attest_record(struct pc_verify *v, uint64_t index, const struct pc_record *r);
void pcv_attest_after(struct pc_verify *v);
void pcv_attest_finish(struct pc_verify *v);
void pcv_attest_free(struct pc_verify *v);

/* ---- pods and links (verify/totals.c) ---- */

/* The index of pod `id` in v->pods, added when new (which may move v->pods). */
uint32_t pcv_pod_index(struct pc_verify *v, const char *id);
/* The index of pod `id`, or -1 if it never appeared. */
int64_t pcv_pod_find(const struct pc_verify *v, const char *id);
/* The same for links in v->links. */
uint32_t pcv_link_index(struct pc_verify *v, const char *name);
/* A WINDOW record the sequence accepted: adds up its pods (and their envelope) and links. */
void pcv_account_window(struct pc_verify *v, uint64_t index, const struct pc_record *r);

/* ---- the envelope (verify/envelope.c) ---- */

/* Pod ps, direction d, passed `bytes` in the window [start, start + len) under (cap, burst). */
void pcv_env_step(struct pc_verify *v, struct podsum *ps, int d, uint64_t index,
		  uint64_t start, uint64_t len, uint64_t bytes, uint64_t cap, uint64_t burst);
/* A WINDOW accounted for: the real start of its last window, for the next START's buckets. */
void pcv_env_window(struct pc_verify *v, const struct pc_record *r);
/* A START or RELOAD the sequence accepted (its pods are in force, v->inforce_sum set). */
void pcv_env_declare(struct pc_verify *v, uint64_t index, const struct pc_record *r);
/* At the end of the log: reports the worst interval of every run still open. */
void pcv_env_finish(struct pc_verify *v);
/* The window promise: pod p of WINDOW r, direction d, within cap x window a window (check 14). */
void pcv_window_check(struct pc_verify *v, uint64_t index, const struct pc_record *r,
		      const struct pc_record_pod *p, int d);
/* ---- the policy (verify/policy.c) ---- */

/* The checkpoint verified: fixes now, checks the declared maps and the last pull against it. */
void pcv_policy_begin(struct pc_verify *v);
/* Any record that decoded: none may end, or be made, after now + skew. */
void pcv_time_record(struct pc_verify *v, uint64_t index, const struct pc_record *r);
/* Any record the sequence takes: its build id against the one in force and the pinned ones. */
void pcv_build_record(struct pc_verify *v, uint64_t index, const struct pc_record *r);
/* `ns` more time no window covers, told by record `index`. */
void pcv_unaccounted(struct pc_verify *v, uint64_t index, const struct pc_record *r, uint64_t ns);
/* A START or RELOAD: the index of the declared map it names, or -1 (a failure when maps were declared). */
int pcv_declared_map(struct pc_verify *v, uint64_t index, const struct pc_record *r);
/* A WINDOW the sequence accepted: merging, the uses, the end of an unaccounted stretch. */
void pcv_policy_window(struct pc_verify *v, uint64_t index, const struct pc_record *r);
/* At the end of the log: the checkpoint's age. */
void pcv_policy_finish(struct pc_verify *v);
/* Puts `id` in force from record `index` on, adding it when new. */
void pcv_use_begin(struct uses *u, const uint8_t id[32], uint64_t index, int map);

/* ---- counters a real port can produce (verify/counters.c) ---- */

/* The pods in force changed: the uplinks they name, for the link blocks of their windows. */
void pcv_inforce_uplinks(struct pc_verify *v);
/* A WINDOW with the pods in force: its link blocks and every counter's bytes per frame. */
void pcv_check_counters(struct pc_verify *v, uint64_t index, const struct pc_record *r);

/* ---- what the text and JSON reports share (verify/report.c) ---- */

/* The names of event kinds and checks as the reports print them. */
const char *pcv_kind_label(int k);
const char *pcv_check_label(int c);
/* The last line of either report: "verified: ..." or "FAILED: ...". */
void pcv_result_line(const struct pc_verify *v, char *buf, size_t len);
/*
 * Time no window covers as both reports state it: pc_verify_unaccounted's
 * total and longest stretch, with the gaps' and the restarts' parts and
 * what is left for the real time across clock steps (unknown, and the
 * total a lower bound, when it saturated).
 */
struct pcv_unaccounted {
	uint64_t total_ns, longest_ns;
	int64_t longest_record;
	bool saturated;
	u128 gaps_ns, down_ns;
	uint64_t clock_ns;
	bool clock_known;
};
void pcv_unaccounted_parts(const struct pc_verify *v, struct pcv_unaccounted *u);
/* Whether --build-id named that build: false for every build when it named none. */
bool pcv_build_pinned(const struct pc_verify *v, const uint8_t id[32]);
/* The file of the declared map a use is of, or NULL when the log's digest is no declared one. */
const char *pcv_map_path(const struct pc_verify *v, const struct pc_verify_use *u);
/* The checkpoint's age is stated only from a now the caller gave (the report reads no clock). */
bool pcv_age_stated(const struct pc_verify *v);

/* ---- the saved state: written by verify/state.c, read by verify/resume.c ---- */

#define STATE_MAGIC  "podcap-verify-state 7\n"
#define STATE_OLDER "podcap-verify-state "   /* another version: its checkpoint alone is used */
#define SUM_TAG "sum "
#define SUM_LINE_LEN (sizeof(SUM_TAG) - 1 + 2 * crypto_generichash_BYTES + 1)

#endif /* PODCAP_VERIFY_IMPL_H */
