/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * C2SP tlog-witness (https://c2sp.org/tlog-witness, as of C2SP commit
 * 95978ca, 2026-07-06: the text after v1.0.0 that answers 422 for another
 * root at the size held and for a size-0 checkpoint without the empty
 * tree's root): the add-checkpoint request a log sends a witness, the
 * witness's decision, the answers, and the checkpoint served to monitors.
 *
 * Request body (POST <prefix>/add-checkpoint), every line ending in "\n":
 *   old <size, decimal, no leading zero>
 *   <base64 hash>          zero to 63 lines: the RFC 6962 consistency proof
 *                          from the old size to the checkpoint's
 *   <empty line>
 *   <signed note of the checkpoint>
 * 200: one or more cosignature lines; 409: "<witness's size>\n" as
 * text/x.tlog.size; 400, 403, 404, 422 otherwise (see pc_witness_check).
 * GET <prefix>/<hex SHA-256 of the origin>/checkpoint: the latest note
 * cosigned (pc_witness_served_note), 404 before the first.
 *
 * Everything here is pure: no I/O, no clock, no libmicrohttpd.
 */
#ifndef PODCAP_TLOG_WITNESS_H
#define PODCAP_TLOG_WITNESS_H

#include <stddef.h>
#include <stdint.h>

#include "base/error.h"
#include "base/keys.h"
#include "merkle.h"
#include "note.h"

#define PC_WITNESS_MAX_PROOF 63
#define PC_WITNESS_REQ_MAX   (64 + PC_WITNESS_MAX_PROOF * 45 + 1 + PC_NOTE_MAX)
#define PC_WITNESS_SIZE_TYPE "text/x.tlog.size"

struct pc_add_checkpoint {
	uint64_t old_size;
	size_t nproof;
	uint8_t proof[PC_WITNESS_MAX_PROOF][PC_HASH_LEN];
	const char *note; /* points into the parsed buffer */
	size_t note_len;
};

/* The request body into out: its length, or 0 if it does not fit or nproof > 63. */
size_t pc_add_checkpoint_format(uint64_t old_size, const uint8_t proof[][PC_HASH_LEN],
				size_t nproof, const char *note, size_t note_len, char *out,
				size_t outlen);
/* Parses a request body strictly (400 when it fails): 0, or -1 with err. */
int pc_add_checkpoint_parse(const char *body, size_t len, struct pc_add_checkpoint *req,
			    struct pc_error *err);

/* "<size>\n" of a 409 answer: 0 with *size, or -1 with err. */
int pc_witness_size_parse(const char *body, size_t len, uint64_t *size, struct pc_error *err);

/* What a witness knows of one log. */
struct pc_witness_log {
	char origin[PC_KEY_NAME_LEN];
	struct pc_verifier_key key; /* the log's key (type 0x01) */
	uint64_t size;              /* latest cosigned size, 0 before the first */
	uint8_t root[PC_HASH_LEN];  /* its root (unused while size is 0: the empty tree's) */
};

/*
 * The witness's decision on a parsed request, against the logs it knows,
 * in the order tlog-witness gives: 404 the origin is not one of logs; 403
 * no signature by that log's key verifies; 400 the old size is past the
 * checkpoint's; 409 the old size is not the size it last cosigned; 422 a
 * checkpoint of size 0 whose root is not the empty tree's (SHA-256 of
 * ""), the sizes equal and the roots not (v1.0.0 answered 409 there), or
 * a consistency proof that does not verify (or is not empty from size 0);
 * 200 otherwise. err says why for every status but 200. On 200 *log is
 * the entry to update to the checkpoint (*cp, body_len its body's length);
 * otherwise *log is set whenever the origin is known (on 409 its size is
 * the answer's body).
 */
int pc_witness_check(struct pc_witness_log *logs, size_t nlogs, const struct pc_add_checkpoint *req,
		     struct pc_witness_log **log, struct pc_checkpoint *cp, size_t *body_len,
		     struct pc_error *err);

/*
 * The checkpoint a witness serves monitors after cosigning `note` (the
 * request's, which the log's key signed): its body, the signature lines of
 * log (every one of which verified), and the witness's cosignature line
 * (ending in "\n"), NUL-terminated in out. Lines of other keys are left
 * out: the witness did not check them, and a monitor that knows one of
 * those keys would refuse the note for a bad line. Its length, or 0 when
 * it does not fit or note has no line of log.
 */
size_t pc_witness_served_note(const struct pc_verifier_key *log, const char *note, size_t len,
			      const char *cosig, size_t cosig_len, char *out, size_t outlen);

#endif /* PODCAP_TLOG_WITNESS_H */
