/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * One add-checkpoint request from start to answer: parse, decide
 * (pc_witness_check), cosign, store the new state with the cosigned note,
 * answer. The lock makes the check of the old size and the store one
 * step; the cosignature leaves only once the state holds it.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "base/clock.h"
#include "log/cosig.h"
#include "log/tlog_witness.h"

#include "witness.h"

#define TEXT_TYPE "text/plain; charset=utf-8"

static unsigned
reply(char *out, size_t outmax, size_t *outlen, const char **ctype, unsigned status,
      const char *msg)
{
	int n = snprintf(out, outmax, "%s\n", msg);

	*outlen = n < 0 ? 0 : (size_t)n < outmax ? (size_t)n : outmax - 1;
	*ctype = TEXT_TYPE;
	return status;
}

/* The state moved to cp with the note cosigned there, on disk and then in memory. */
static int
store(struct witness *w, struct pc_witness_log *l, const struct pc_checkpoint *cp, const char *note,
      size_t len, struct pc_error *err)
{
	struct witness_note *kept = &w->served[l - w->logs];
	struct pc_witness_log was = *l;

	l->size = cp->size;
	memcpy(l->root, cp->root, sizeof(l->root));
	if (witness_state_store(w, l, note, len, err) != 0) {
		*l = was;
		return -1;
	}
	memcpy(kept->text, note, len + 1);
	kept->len = len;
	return 0;
}

static unsigned
decide(struct witness *w, const struct pc_add_checkpoint *req, char *out, size_t outmax,
       size_t *outlen, const char **ctype)
{
	static char served[WITNESS_NOTE_MAX]; /* under w->lock */
	char line[PC_COSIG_LINE_MAX];
	struct pc_witness_log *l;
	struct pc_checkpoint cp;
	struct pc_error why;
	size_t blen, n, len;
	unsigned status;

	status = (unsigned)pc_witness_check(w->logs, w->nlogs, req, &l, &cp, &blen, &why);
	if (status == 409 && l != NULL) {
		/* tlog-witness: the body is the size it holds, as text/x.tlog.size. */
		n = (size_t)snprintf(out, outmax, "%" PRIu64 "\n", l->size);
		*outlen = n;
		*ctype = PC_WITNESS_SIZE_TYPE;
		fprintf(stderr, "podcap-witness: %s: 409: %s\n", l->origin, why.msg);
		return 409;
	}
	if (status != 200) {
		if (l != NULL)
			fprintf(stderr, "podcap-witness: %s: %u: %s\n", l->origin, status, why.msg);
		return reply(out, outmax, outlen, ctype, status, why.msg);
	}
	n = pc_cosig_sign(w->key, req->note, blen, pc_now_ns() / 1000000000u, line, sizeof(line));
	len = n == 0 ? 0
		     : pc_witness_served_note(&l->key, req->note, req->note_len, line, n, served,
					      sizeof(served));
	if (len == 0 || n >= outmax)
		return reply(out, outmax, outlen, ctype, 500, "cannot cosign");
	if (store(w, l, &cp, served, len, &why) != 0) {
		fprintf(stderr, "podcap-witness: %s\n", why.msg);
		return reply(out, outmax, outlen, ctype, 500, "cannot store the witness's state");
	}
	memcpy(out, line, n);
	*outlen = n;
	*ctype = TEXT_TYPE;
	return 200;
}

unsigned
witness_add_checkpoint(struct witness *w, const char *body, size_t len, char *out, size_t outmax,
		       size_t *outlen, const char **ctype)
{
	static struct pc_add_checkpoint req; /* under w->lock: one request at a time */
	struct pc_error why;
	unsigned status;

	pthread_mutex_lock(&w->lock);
	if (pc_add_checkpoint_parse(body, len, &req, &why) != 0)
		status = reply(out, outmax, outlen, ctype, 400, why.msg);
	else
		status = decide(w, &req, out, outmax, outlen, ctype);
	pthread_mutex_unlock(&w->lock);
	return status;
}
