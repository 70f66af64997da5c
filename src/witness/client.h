/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The log's side of C2SP tlog-witness over libcurl: submit a checkpoint to
 * one witness with the consistency proof from the size the witness holds,
 * learn that size from a 409, and check the cosignature that comes back.
 * One client per witness; not thread-safe (one thread submits).
 */
#ifndef PODCAP_WITNESS_CLIENT_H
#define PODCAP_WITNESS_CLIENT_H

#include <stddef.h>
#include <stdint.h>

#include "log/cosig.h"
#include "base/error.h"
#include "base/keys.h"
#include "log/merkle.h"
#include "log/note.h"

enum pc_wclient_result {
	PC_WCLIENT_COSIGNED,   /* *line holds a cosignature that verifies under the witness's key */
	PC_WCLIENT_CONFLICT,   /* another tree at the size it holds (422, or v1.0.0's 409 from
				* that size), or it holds more */
	PC_WCLIENT_REFUSED,    /* 400, 403, 404 or 422: the witness refused this checkpoint */
	PC_WCLIENT_DOWN,       /* no answer: connection, timeout, 5xx */
	PC_WCLIENT_BAD_ANSWER, /* 200 without a valid cosignature, or an answer outside the spec */
};

struct pc_wclient {
	char url[512];             /* <prefix>/add-checkpoint */
	struct pc_verifier_key vk; /* the witness's cosigner key (type 0x04) */
	uint64_t size;             /* the size the witness is believed to hold */
	long timeout_ms;           /* for a whole request */
	const int *stop;           /* when set and non-zero, a request in flight ends */
	char ca[4096];             /* https: the CA file its certificate chains to; "" system's */
	void *curl;                /* one handle, kept alive between submissions */
};

/* prefix is the witness's submission prefix (http://host:port). 0, or -1 with err. */
int pc_wclient_init(struct pc_wclient *c, const char *prefix, const struct pc_verifier_key *vk,
		    long timeout_ms, struct pc_error *err);
void pc_wclient_free(struct pc_wclient *c);

/*
 * Submits the signed checkpoint `note` (cp, its parsed body) with the
 * proof from c->size, computed over the log's leaves (leaf, ctx). On a
 * 409 it takes the witness's size and tries once more from it. On
 * COSIGNED the cosignature line (with its newline, NUL-terminated) is in
 * line and *t is its timestamp; *status is the last HTTP status (0 when
 * there was none). err says why for every other result.
 */
enum pc_wclient_result pc_wclient_submit(struct pc_wclient *c, const char *note, size_t note_len,
					 const struct pc_checkpoint *cp, pc_leaf_fn leaf, void *ctx,
					 char *line, size_t linelen, uint64_t *t, long *status,
					 struct pc_error *err);

#endif /* PODCAP_WITNESS_CLIENT_H */
