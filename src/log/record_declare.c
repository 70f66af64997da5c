/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A DECLARE record's own fields after its links (docs/log-format.md,
 * "DECLARE"): the hash of the auditor's declaration file and its validity.
 */
#include "record_impl.h"

static size_t
declare_size(const struct pc_record *r)
{
	(void)r;
	return PC_DIGEST_LEN + 2 * 8;
}

static void
declare_put(struct rec_wr *w, const struct pc_record *r)
{
	rec_put_bytes(w, r->declare.hash, PC_DIGEST_LEN);
	rec_put_u64(w, r->declare.not_before_ns);
	rec_put_u64(w, r->declare.not_after_ns);
}

static void
declare_get(struct rec_rd *rd, struct pc_record *r)
{
	rec_get_bytes(rd, r->declare.hash, PC_DIGEST_LEN);
	r->declare.not_before_ns = rec_get_u64(rd);
	r->declare.not_after_ns = rec_get_u64(rd);
}

/* A validity that is one: no window could run under an empty one. */
static int
declare_check(const struct pc_record *r, struct pc_error *err)
{
	if (r->declare.not_after_ns <= r->declare.not_before_ns)
		return pc_error_set(err, "declaration valid until no later than it is valid from");
	return 0;
}

const struct rec_tail rec_declare_tail = {
	.size = declare_size,
	.put = declare_put,
	.get = declare_get,
	.check = declare_check,
};
