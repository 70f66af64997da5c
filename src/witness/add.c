/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * One add-checkpoint request from start to answer: parse, decide
 * (pc_witness_check), store the new state, cosign. The lock makes the
 * check of the old size and the store one step.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "podcap/clock.h"
#include "podcap/cosig.h"
#include "podcap/tlog_witness.h"

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

static unsigned
decide(struct witness *w, const struct pc_add_checkpoint *req, char *out, size_t outmax,
       size_t *outlen, const char **ctype)
{
	struct pc_witness_log *l, was;
	struct pc_checkpoint cp;
	struct pc_error why;
	size_t blen, n;
	unsigned status;
	uint64_t now;

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
	was = *l;
	l->size = cp.size;
	memcpy(l->root, cp.root, sizeof(l->root));
	if (witness_state_store(w, l, &why) != 0) {
		*l = was;
		fprintf(stderr, "podcap-witness: %s\n", why.msg);
		return reply(out, outmax, outlen, ctype, 500, "cannot store the witness's state");
	}
	now = pc_now_ns() / 1000000000u;
	n = pc_cosig_sign(w->key, req->note, blen, now, out, outmax);
	if (n == 0)
		return reply(out, outmax, outlen, ctype, 500, "cannot cosign");
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
