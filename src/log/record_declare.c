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
	rec_put_bytes(w, r->decl_hash, PC_DIGEST_LEN);
	rec_put_u64(w, r->not_before_ns);
	rec_put_u64(w, r->not_after_ns);
}

static void
declare_get(struct rec_rd *rd, struct pc_record *r)
{
	rec_get_bytes(rd, r->decl_hash, PC_DIGEST_LEN);
	r->not_before_ns = rec_get_u64(rd);
	r->not_after_ns = rec_get_u64(rd);
}

/* A validity that is one: no window could run under an empty one. */
static int
declare_check(const struct pc_record *r, struct pc_error *err)
{
	if (r->not_after_ns <= r->not_before_ns)
		return pc_error_set(err, "declaration valid until no later than it is valid from");
	return 0;
}

static bool
declare_present(const struct pc_record *r)
{
	uint8_t any = 0;

	for (size_t i = 0; i < PC_DIGEST_LEN; i++)
		any |= r->decl_hash[i];
	return any != 0 || r->not_before_ns != 0 || r->not_after_ns != 0;
}

const struct rec_tail rec_declare_tail = {
	.size = declare_size,
	.put = declare_put,
	.get = declare_get,
	.check = declare_check,
	.present = declare_present,
	.stray = "declaration fields in a record other than declare",
};
