/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What the unit tests share: scratch directories, keys and signed notes,
 * and logs held in memory that are signed and fed to the verifier the way
 * podcap-verify feeds it.
 *
 * The helpers fail the running cmocka test (or fixture) when something
 * they need does not work; where a helper returns what the code under
 * test returned, its comment says so.
 */
#ifndef PODCAP_TESTUTIL_H
#define PODCAP_TESTUTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "podmap/config.h"
#include "base/keys.h"
#include "log/ledger.h"
#include "log/merkle.h"
#include "log/record.h"
#include "verify/verify.h"

/* ---- scratch directories ---- */

/*
 * Makes a new directory podcap-<name>-XXXXXX under $TMPDIR, else under
 * /tmp, and writes its path into buf. Returns 0, or -1 so that a group
 * fixture can return it.
 */
int pc_test_tmpdir(char *buf, size_t len, const char *name);
/*
 * The same under /dev/shm when it is writable, for a test that appends
 * thousands of records: on a tmpfs a ledger's fdatasyncs cost nothing.
 * Not for a test whose threads race the disk's pace.
 */
int pc_test_shmdir(char *buf, size_t len, const char *name);
/* Removes path and everything below it, as rm -rf does; symbolic links are not followed. */
void pc_test_rm_rf(const char *path);

/* Loads the pod map text as file `name` into c, or fails the test with the error. */
void pc_test_load_map(struct pc_config *c, const char *text, const char *name);

/* ---- keys and signed notes ---- */

/* A new signer key named `name`, and its verifier key in vk unless vk is NULL. */
struct pc_signer_key *pc_test_key(const char *name, struct pc_verifier_key *vk);
/*
 * The note of `body` (a C string) signed by k, into out. Returns what
 * pc_note_format returns: the note's length, or 0 when it is refused.
 */
size_t pc_test_sign_note(const struct pc_signer_key *k, const char *body, char *out, size_t len);
/* The checkpoint (origin, size, root) signed by k, into note; returns its length. */
size_t pc_test_checkpoint(const struct pc_signer_key *k, const char *origin, uint64_t size,
			  const uint8_t root[PC_HASH_LEN], char *note, size_t len);
/* Publishes in l the checkpoint k signs over l as it is now, under k's name. */
void pc_test_publish(struct pc_ledger *l, const struct pc_signer_key *k);

/* ---- logs in memory, signed and verified ---- */

#define PC_TEST_MAXLOG 64

/* Records in the order a log holds them; an all-zero one is empty. */
struct pc_test_log {
	uint8_t *rec[PC_TEST_MAXLOG];      /* malloc'ed */
	size_t len[PC_TEST_MAXLOG];
	size_t n;
};

/* Encodes r as the log's next record. */
void pc_test_log_push(struct pc_test_log *lg, const struct pc_record *r);
/*
 * Makes r an ATTEST record: its type, and in att a quote that decodes but
 * that no TPM signed (for the checks that do not look into quotes).
 */
void pc_test_attest(struct pc_record *r, struct pc_record_attest *att);
/* out becomes a log with the same records, in copies of its own. */
void pc_test_log_copy(const struct pc_test_log *lg, struct pc_test_log *out);
/* Takes record `from` out and puts it back at `to`, shifting those between. */
void pc_test_log_move(struct pc_test_log *lg, size_t from, size_t to);
/* Frees the records and empties the log. */
void pc_test_log_free(struct pc_test_log *lg);
/* The Merkle root of the first n records, computed here rather than by the code under test. */
void pc_test_log_root(const struct pc_test_log *lg, size_t n, uint8_t root[PC_HASH_LEN]);
/* The checkpoint k signs over the first n records, under k's name; returns its length. */
size_t pc_test_log_checkpoint(const struct pc_test_log *lg, size_t n,
			      const struct pc_signer_key *k, char *note, size_t len);

/* What a verifier is given besides the checkpoint and the records. */
struct pc_test_run {
	const struct pc_verifier_key *vk;
	const struct pc_config *podmap;    /* --pod-map, or NULL */
	const char *trusted;               /* the last trusted checkpoint note, or NULL */
	const char *state;                 /* a saved state it must resume from, or NULL */
	size_t state_len;
	const struct pc_test_log *stored;  /* the leaf hashes a source keeps beside the records */
	const struct pc_verify_policy *policy; /* set before the state is read, or NULL */
	const struct pc_config *const *maps;   /* several declared pod maps, instead of podmap */
	size_t nmaps;
};

/*
 * Verifies lg under the checkpoint `note` as podcap-verify does: the
 * trusted checkpoint or the state, the checkpoint, the records it covers
 * that lg holds (from where the state ends), finish. Returns the verifier
 * for the test to examine and pc_verify_free.
 */
struct pc_verify *pc_test_verify(const struct pc_test_run *o, const char *note, size_t len,
				 const struct pc_test_log *lg);
/* The same under the checkpoint k signs over all of lg. */
struct pc_verify *pc_test_verify_signed(const struct pc_test_run *o,
					const struct pc_signer_key *k,
					const struct pc_test_log *lg);

/*
 * For every split point n of lg (1 to lg->n - 1): a verifier given o that
 * verified the first n records saves its state, and one resumed from it
 * verifies all of lg under the checkpoint k signs over it; `same` compares
 * that run with a full one. A prefix that fails leaves no state: the full
 * run must then fail too.
 */
void pc_test_every_split(const struct pc_test_run *o, const struct pc_signer_key *k,
			 const struct pc_test_log *lg,
			 void (*same)(const struct pc_verify *full, const struct pc_verify *inc,
				      size_t n));

/* Prints every failure kept in v as "  <check>: record <n>: <message>", for a test that failed. */
void pc_test_print_failures(const struct pc_verify *v);
/* v's text or JSON report, as podcap-verify prints it; malloc'ed. */
char *pc_test_report(const struct pc_verify *v, bool json);

#endif /* PODCAP_TESTUTIL_H */
