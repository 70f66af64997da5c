/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Verifying a podcap log as someone who does not trust its operator.
 *
 * Streaming: give the signed checkpoint, then every record it covers in
 * order (records are never held in memory all at once), then finish. The
 * verifier recomputes the Merkle root, decodes every record, checks the
 * sequence of windows, restarts, gaps and reloads, checks each pod's bytes
 * against its cap envelope, and, given the previous trusted checkpoint,
 * detects rollbacks and forks. What a verifier checks is specified in
 * docs/verify.md, check by check; each check is a row of verify/check.h.
 *
 *	v = pc_verify_new_maps(&key, maps, nmaps);       (or pc_verify_new, one map or none)
 *	pc_verify_set_policy(v, &policy);                (optional: now, skew, limits, builds)
 *	pc_verify_resume(v, state, state_len, &err);     (optional)
 *	if (pc_verify_checkpoint(v, note, len) == 0)
 *		for (i = pc_verify_resume_at(v); i < pc_verify_size(v); i++)
 *			pc_verify_record(v, rec_i, len_i, stored_leaf_i_or_NULL);
 *	rc = pc_verify_finish(v);
 */
#ifndef PODCAP_VERIFY_H
#define PODCAP_VERIFY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "shape/classify.h"
#include "podmap/config.h"
#include "shape/counters.h"
#include "base/keys.h"
#include "log/merkle.h"

/* Which check a failure belongs to. */
enum pc_verify_check {
	PC_VC_CHECKPOINT = 0, /* the checkpoint note does not parse */
	PC_VC_SIGNATURE,      /* not signed by the verifier key */
	PC_VC_ORIGIN,         /* the checkpoint's origin is not the key's name */
	PC_VC_MISSING,        /* fewer records than the checkpoint covers */
	PC_VC_ROOT,           /* the records do not hash to the signed root */
	PC_VC_DECODE,         /* a record is not well-formed */
	PC_VC_APPLIANCE,      /* a record names another appliance than the origin */
	PC_VC_SEQUENCE,       /* order of records, window continuity, what is in force */
	PC_VC_PODMAP,         /* a START or RELOAD names no declared pod map, or differs from it */
	PC_VC_ENVELOPE,       /* a pod passed more than burst + cap x time */
	PC_VC_ROLLBACK,       /* the tree is smaller than the last trusted one */
	PC_VC_FORK,           /* the tree does not extend the last trusted one */
	PC_VC_TIME,           /* a record ends after the verifier's now, or now is before a pull */
	PC_VC_LIMIT,          /* past a limit of the verifier's policy: unaccounted time, age, merging */
	PC_VC_BUILD,          /* a build id not the one in force, or not one the verifier pinned */
	PC_VC_COUNTERS,       /* counters or link blocks no real port can produce */
	PC_VC_WINDOW,         /* held to the window promise, over cap x window in one */
	PC_VC_ATTEST,         /* --attest: a quote refused, or windows too far from a valid one */
	PC_VC_CLOCK,          /* a window without a bound on the clock's offset, or over D */
	PC_VC_LINK, /* a port's link down too long, or its neighbour not the declared one */
	PC_VC_COUNT,
};

/* "checkpoint", "signature", "origin", "missing", "root", ... */
const char *pc_verify_check_name(enum pc_verify_check c);

#define PC_VERIFY_MSG_LEN 384
#define PC_VERIFY_MAX_KEPT 1000   /* failures and events kept for the report */

struct pc_verify_failure {
	enum pc_verify_check check;
	int64_t record;            /* index of the record to blame, -1 for none */
	uint8_t type;              /* its type, 0 if unknown (undecodable) */
	uint64_t window_start_ns;  /* its window, when type != 0 */
	char msg[PC_VERIFY_MSG_LEN];
};

enum pc_verify_event_kind {
	PC_VE_START = 0,   /* record 0 */
	PC_VE_RESTART,     /* a later START: down from `from_ns` to `window_start_ns` */
	PC_VE_STOP,
	PC_VE_GAP,         /* `windows` windows from window_start_ns were not logged */
	PC_VE_RELOAD,
	PC_VE_CLOCK,       /* the wall clock stepped by step_ns: labels jump from from_ns to
			      window_start_ns while elapsed_ns of real time passed */
	PC_VE_COUNT,
};

struct pc_verify_event {
	enum pc_verify_event_kind kind;
	uint64_t record;
	uint64_t window_start_ns;
	uint64_t from_ns;          /* RESTART: end of the last window before it; CLOCK: the cursor */
	uint64_t window_len_ns;
	uint64_t windows;          /* GAP: windows missed; RESTART: windows down */
	bool clean;                /* RESTART: a STOP preceded it */
	int64_t step_ns;           /* CLOCK */
	uint64_t elapsed_ns;       /* CLOCK */
	uint8_t podmap_digest[PC_DIGEST_LEN]; /* START, RESTART, RELOAD: now in force */
	uint8_t build_id[32];      /* START, RESTART */
};

/* The largest events of each kind kept besides the first PC_VERIFY_MAX_KEPT. */
#define PC_VERIFY_WORST 5

/*
 * One kind of event over the whole log, however many there are. The size
 * of an event is its length for a GAP (windows x window length) and a
 * RESTART (the time down, window_start_ns - from_ns), |step_ns| for a
 * CLOCK; START, STOP and RELOAD have none.
 */
struct pc_verify_event_sum {
	uint64_t count;
	unsigned __int128 total_ns;   /* the sizes added up; 0 for the kinds with none */
	uint32_t nworst;              /* min(count, PC_VERIFY_WORST) */
	/*
	 * The largest, largest first and the earliest of equal ones first; for
	 * the kinds with no size the latest, latest first. worst[0] is the
	 * longest gap, the longest time down, the largest step.
	 */
	struct pc_verify_event worst[PC_VERIFY_WORST];
	uint64_t worst_seq[PC_VERIFY_WORST]; /* its place among all events, from 0: listed
						by pc_verify_event_at when < PC_VERIFY_MAX_KEPT */
};

/* One check's failures over the whole run, however many there are. */
struct pc_verify_failure_sum {
	uint64_t count;
	struct pc_verify_failure first;   /* when count > 0 */
	uint64_t first_seq;               /* its place among all failures, from 0 */
};

/* Totals of one pod in one direction over every window of the log. */
struct pc_verify_totals {
	unsigned __int128 bytes;
	unsigned __int128 frames;
	unsigned __int128 drop_frames[PC_POD_DROP_COUNT];
	unsigned __int128 drop_bytes[PC_POD_DROP_COUNT];
	uint64_t windows;          /* windows the pod appears in */
	uint64_t peak_bytes;       /* most bytes passed in one window */
	uint64_t peak_window_start_ns;
	uint64_t peak_permille;    /* peak_bytes / (cap x window / 8), in 1/1000; UINT64_MAX if cap 0 */
	uint64_t at_cap;           /* windows with bytes >= 99% of cap x window / 8 */
};

struct pc_verify;

/* key: the appliance's verifier key; podmap: check against it, or NULL. */
struct pc_verify *pc_verify_new(const struct pc_verifier_key *key, const struct pc_config *podmap);
/*
 * The same with n declared pod maps (--pod-map, repeated), none when n is
 * 0: every START and RELOAD must name the digest of one of them, and the
 * windows after it are checked against that one. The maps must outlive v.
 */
struct pc_verify *pc_verify_new_maps(const struct pc_verifier_key *key,
				     const struct pc_config *const *maps, size_t n);

/* ---- the verifier's policy: what it knows besides the log, and the limits it sets ---- */

#define PC_VERIFY_UNLIMITED UINT64_MAX
#define PC_VERIFY_MAX_BUILD_IDS 64
#define PC_VERIFY_DEFAULT_SKEW_NS (30 * 1000000000ULL)
#define PC_VERIFY_DEFAULT_CLOCK_OFFSET_NS 10000000ULL /* 10 ms, the taps' default */

struct pc_verify_policy {
	/*
	 * The verifier's now, ns since the epoch (--now, else its own clock).
	 * 0: CLOCK_REALTIME when the checkpoint is given; a pull is then not
	 * recorded in the state, as the caller did not say what time it is.
	 */
	uint64_t now_ns;
	/* How far a window may end after now (--clock-skew); below one window, see docs. */
	uint64_t clock_skew_ns;
	uint64_t max_unaccounted_ns;    /* GAPs, downtime and clock time outside windows, in all */
	uint64_t max_gap_ns;            /* the longest unbroken stretch of it */
	uint64_t max_checkpoint_age_ns; /* now - the end of the newest window */
	uint64_t max_merged_windows;    /* windows one WINDOW record may cover */
	/*
	 * The clock offset D each window's SYNC must bound the appliance's
	 * clock within (--max-clock-offset; podcap-verify's default is the
	 * taps' offset)
	 */
	uint64_t max_clock_offset_ns;
	uint64_t max_link_down_ns;      /* a pod-side link's outage, across LINK records */
	size_t nbuild_ids;              /* 0: any build id is accepted */
	uint8_t build_ids[PC_VERIFY_MAX_BUILD_IDS][32];
};

/* The defaults: now from the clock, a skew of 30 s, no limit, any build. */
void pc_verify_policy_init(struct pc_verify_policy *p);
/* Before pc_verify_resume and pc_verify_checkpoint; a verifier starts with the defaults. */
void pc_verify_set_policy(struct pc_verify *v, const struct pc_verify_policy *p);
/* The policy in force, now_ns filled in once the checkpoint was given. */
const struct pc_verify_policy *pc_verify_policy_of(const struct pc_verify *v);
void pc_verify_free(struct pc_verify *v);

/*
 * The last checkpoint this verifier trusted (the --state file). It must
 * verify with the key; -1 with a message in err if it does not (that is the
 * caller's own state gone bad, not a finding about the log).
 */
int pc_verify_trusted(struct pc_verify *v, const char *note, size_t len, struct pc_error *err);
/*
 * The state a verifier saved after its last successful run (the --state
 * file, docs/log-format.md, "The verifier's state"): the trusted checkpoint
 * and, with it, the Merkle tree's right edge and what the record checks
 * carry from one record to the next. Returns 0 when the verifier resumes:
 * feed records from pc_verify_resume_at() on, and the result is the one a
 * full verification of the same log would give for them (the records
 * before are trusted as verified then, not checked again). Returns 1 when
 * the state holds the checkpoint alone (the older format) or was saved
 * under another --pod-map: the checkpoint is trusted as with
 * pc_verify_trusted and every record must be fed. Returns -1 with a
 * message in err when the state is damaged or does not verify; then free v.
 */
int pc_verify_resume(struct pc_verify *v, const char *state, size_t len, struct pc_error *err);
/* The first record to feed after pc_verify_resume returned 0; 0 otherwise. */
uint64_t pc_verify_resume_at(const struct pc_verify *v);
/* The lengths of the records before it added up (pc_ledger_open_ro_from). */
uint64_t pc_verify_resume_bytes(const struct pc_verify *v);
/*
 * The state to save after a run whose pc_verify_finish returned 0: a
 * malloc'ed text in *out. -1 if the run failed or was not finished.
 */
int pc_verify_state_save(const struct pc_verify *v, char **out, size_t *len);

/* Size of the trusted checkpoint; 0 when none was given. */
uint64_t pc_verify_trusted_size(const struct pc_verify *v);

/*
 * The checkpoint to verify. Returns 0 when it parses, is signed by the key
 * and names the key's log; otherwise records the failure and returns -1
 * (records can then prove nothing, but finish still reports).
 */
int pc_verify_checkpoint(struct pc_verify *v, const char *note, size_t len);
/* Tree size of the checkpoint: how many records to feed. */
uint64_t pc_verify_size(const struct pc_verify *v);
/* The note given to pc_verify_checkpoint (to be trusted next time); NULL if it failed. */
const char *pc_verify_checkpoint_note(const struct pc_verify *v, size_t *len);

/*
 * Record i, for i = 0, 1, ... in order. stored_leaf is the leaf hash the
 * source keeps beside the record (the ledger's hashes file), or NULL; it is
 * never trusted, only used to point at the records that changed when the
 * stored hashes still give the signed root.
 */
void pc_verify_record(struct pc_verify *v, const uint8_t *rec, size_t len,
		      const uint8_t *stored_leaf);

/* A consistency proof from the trusted tree to the checkpoint's, from the log server. */
void pc_verify_consistency(struct pc_verify *v, const uint8_t proof[][PC_HASH_LEN], size_t n);

/*
 * Runs the whole-log checks (root, missing records, envelope runs still
 * open, trusted state). Returns 0 when everything holds, 1 when a check
 * failed. Call once, after the last record.
 */
int pc_verify_finish(struct pc_verify *v);

/* ---- results ---- */

uint64_t pc_verify_nfailures(const struct pc_verify *v);      /* all of them */
/* The i-th failure kept (i < min(nfailures, PC_VERIFY_MAX_KEPT)), in the order found. */
const struct pc_verify_failure *pc_verify_failure_at(const struct pc_verify *v, size_t i);
/* The first failure of that check, kept or not, or NULL. */
const struct pc_verify_failure *pc_verify_find(const struct pc_verify *v, enum pc_verify_check c);

uint64_t pc_verify_nevents(const struct pc_verify *v);
const struct pc_verify_event *pc_verify_event_at(const struct pc_verify *v, size_t i);
/* Every event of kind k, after pc_verify_finish; NULL for a k out of range. */
const struct pc_verify_event_sum *pc_verify_event_sum(const struct pc_verify *v,
						      enum pc_verify_event_kind k);
/* The size of an event, as pc_verify_event_sum counts it (0 for the kinds with none). */
uint64_t pc_verify_event_size(const struct pc_verify_event *e);
/*
 * Time the log does not account for, after pc_verify_finish: its gaps and
 * the time down before each restart.
 */
unsigned __int128 pc_verify_unaccounted_ns(const struct pc_verify *v);
/* Every failure of check c; NULL for a c out of range. */
const struct pc_verify_failure_sum *pc_verify_failure_sum(const struct pc_verify *v,
							  enum pc_verify_check c);

/* Totals of a pod (by id) in a direction; 0, or -1 if the pod never appeared. */
int pc_verify_pod_totals(const struct pc_verify *v, const char *pod, enum pc_dir dir,
			 struct pc_verify_totals *t);

uint64_t pc_verify_nrecords(const struct pc_verify *v);   /* records fed */
uint64_t pc_verify_nwindows(const struct pc_verify *v);   /* window records accepted */

/* ---- results of the policy's checks, for the report to state ---- */

/*
 * Time no window covers, from GAP records, restarts (the downtime before a
 * START, after a STOP or not) and the real time a CLOCK record says passed
 * between two windows: the total, the longest unbroken stretch and the
 * record that ends it (-1 when there is none).
 */
void pc_verify_unaccounted(const struct pc_verify *v, uint64_t *total_ns, uint64_t *longest_ns,
			   int64_t *longest_record);
/* The most windows one WINDOW record covers (0 if none), and that record (-1 if none). */
void pc_verify_merged(const struct pc_verify *v, uint64_t *windows, int64_t *record);
/*
 * The verifier's now, the end of the newest window accounted for (0 when
 * none) and the checkpoint's age: now less that end, 0 when it is ahead.
 */
void pc_verify_freshness(const struct pc_verify *v, uint64_t *now_ns, uint64_t *newest_end_ns,
			 uint64_t *age_ns);

/* A successful run kept in the state: its now and what the log was then. */
struct pc_verify_pull {
	uint64_t now_ns;
	uint64_t size;             /* tree size */
	uint64_t cursor_ns;        /* end of the newest window accounted for */
};
#define PC_VERIFY_MAX_PULLS 16
/* The pulls of earlier runs the state kept (the newest last), not this run's. */
size_t pc_verify_npulls(const struct pc_verify *v);
const struct pc_verify_pull *pc_verify_pull_at(const struct pc_verify *v, size_t i);

/* A build id or a pod map digest, and the windows that ran under it. */
struct pc_verify_use {
	uint8_t id[32];            /* the build id, or the pod map digest */
	uint64_t first_record;     /* the START (or RELOAD) that first put it in force */
	uint64_t first_window_ns;  /* start of its first window; 0 when none ran under it */
	uint64_t last_end_ns;      /* end of its last window */
	uint64_t windows;
	int map;                   /* pod maps: index of the declared map with that digest, or -1 */
};
/* Every build id seen, in the order first seen (up to PC_VERIFY_MAX_KEPT). */
uint64_t pc_verify_nbuilds(const struct pc_verify *v);
const struct pc_verify_use *pc_verify_build_at(const struct pc_verify *v, size_t i);
/* Every pod map digest put in force, the same way; map_at gives its file (->path). */
uint64_t pc_verify_nmaps_used(const struct pc_verify *v);
const struct pc_verify_use *pc_verify_map_used_at(const struct pc_verify *v, size_t i);
size_t pc_verify_nmaps(const struct pc_verify *v);
const struct pc_config *pc_verify_map_at(const struct pc_verify *v, size_t i);

/* What a run could not check, for the report to say (bits of 1 << warning). */
enum pc_verify_warning {
	PC_VW_NO_PODMAP = 0,       /* no --pod-map: the caps and pods are the log's own claims */
	PC_VW_ANY_BUILD,           /* no --build-id: any executable was accepted */
	PC_VW_NO_TRUSTED,          /* no trusted checkpoint: a rewritten log goes unseen */
	PC_VW_COUNT,
};
unsigned pc_verify_warnings(const struct pc_verify *v);
/* One sentence for the report. */
const char *pc_verify_warning_text(enum pc_verify_warning w);

/*
 * The report: per-pod table, per-link drops, events, failures and the last
 * line "verified: ..." or "FAILED: ...". Text for people, one JSON object
 * for programs; both are fully determined by the log (no clock, no locale).
 */
void pc_verify_print_text(const struct pc_verify *v, FILE *f);
void pc_verify_print_json(const struct pc_verify *v, FILE *f);

/*
 * Keep each pod's windows over time, downsampled keeping each point's
 * worst record, for the HTML report and the indicators (docs/report.md),
 * which the text and JSON reports then also state. model_bytes: the size
 * to state transfer times for, 0 for none. Before the first record; -1
 * when out of memory.
 */
int pc_verify_keep_series(struct pc_verify *v, uint64_t model_bytes);
/*
 * The report as one self-contained HTML page (inline CSS and SVG, no
 * script, nothing fetched): pc_html_begin, pc_verify_html_appliance,
 * pc_html_end. A report of several appliances puts one
 * pc_verify_html_appliance after another between the two.
 */
void pc_verify_print_html(const struct pc_verify *v, FILE *f);
void pc_html_begin(FILE *f, const char *title);
void pc_verify_html_appliance(const struct pc_verify *v, FILE *f);
void pc_html_end(FILE *f);
/* pc_verify_print_html without pc_html_end: more sections may follow. */
void pc_verify_html_open(const struct pc_verify *v, FILE *f);
/* s as a JSON string, quoted and escaped as the JSON report writes its strings. */
void pc_json_string(FILE *f, const char *s);
/* s escaped for HTML text and quoted attributes (& < > " '). */
void pc_html_escape(FILE *f, const char *s);

#endif /* PODCAP_VERIFY_H */
