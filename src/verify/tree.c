/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The Merkle tree over the records (docs/log-format.md, "Verifying", checks
 * 2, 3 and 8): every record's leaf hash folded into the tree's right edge,
 * whose root must be the signed one; no record missing; and, against the
 * last trusted checkpoint, no rollback and no fork. The leaf hashes a
 * source stores are never trusted: they only point at the records that
 * changed when they still give the signed root.
 */
#include <inttypes.h>
#include <string.h>

#include "base/hex.h"
#include "log/merkle.h"
#include "log/record.h"
#include "verify.h"

#include "verify_impl.h"

struct changed *
pcv_tree_append(struct pc_verify *v, uint64_t index, const uint8_t *rec, size_t len,
		const uint8_t *stored_leaf)
{
	uint8_t h[PC_HASH_LEN];
	struct changed *c = NULL;

	pc_merkle_leaf_hash(rec, len, h);
	pc_merkle_range_append(&v->range, h);
	/* the first trusted.size records must give the trusted root (check 8) */
	if (v->have_trusted && index + 1 == v->trusted.size) {
		pc_merkle_range_root(&v->range, v->trusted_root_here);
		v->trusted_root_seen = true;
	}
	if (stored_leaf == NULL)
		v->stored_all = false;
	else if (v->stored_all)
		pc_merkle_range_append(&v->stored, stored_leaf);

	if (stored_leaf != NULL && memcmp(stored_leaf, h, PC_HASH_LEN) != 0 &&
	    v->nchanged < PC_VERIFY_MAX_KEPT) {
		c = &v->changed[v->nchanged++];
		memset(c, 0, sizeof(*c));
		c->index = index;
	}
	return c;
}

void
pc_verify_consistency(struct pc_verify *v, const uint8_t proof[][PC_HASH_LEN], size_t n)
{
	if (!v->cp_ok || !v->have_trusted || v->trusted.size > v->cp.size)
		return;
	if (pc_merkle_verify_consistency(v->trusted.size, v->cp.size, v->trusted.root, v->cp.root,
					 proof, n) < 0)
		pcv_fail(v, PC_VC_FORK, -1, NULL,
			 "the log's consistency proof from the trusted size %" PRIu64 " to %" PRIu64
			 " does not verify: the log forked", v->trusted.size, v->cp.size);
}

static void
check_root(struct pc_verify *v)
{
	uint8_t root[PC_HASH_LEN], sroot[PC_HASH_LEN];
	char a[2 * PC_HASH_LEN + 1], b[2 * PC_HASH_LEN + 1];

	pc_merkle_range_root(&v->range, root);
	if (memcmp(root, v->cp.root, PC_HASH_LEN) == 0)
		return;
	pc_merkle_range_root(&v->stored, sroot);
	if (v->stored_all && memcmp(sroot, v->cp.root, PC_HASH_LEN) == 0 && v->nchanged > 0) {
		/* the stored hashes are the signed leaves: whatever differs from them changed */
		for (size_t i = 0; i < v->nchanged; i++) {
			struct pc_record r = { .type = v->changed[i].type,
					       .window_start_ns = v->changed[i].window_start_ns };
			pcv_fail(v, PC_VC_ROOT, (int64_t)v->changed[i].index, &r, "the record's "
				 "bytes differ from the leaf under the signed root: it was altered "
				 "after signing");
		}
		return;
	}
	pc_hex(root, PC_HASH_LEN, a);
	pc_hex(v->cp.root, PC_HASH_LEN, b);
	if (v->resumed) {
		pcv_fail(v, PC_VC_ROOT, -1, NULL, "records %" PRIu64 " to %" PRIu64 " on the "
			 "trusted tree of %" PRIu64 " hash to root %s, the checkpoint signs %s: "
			 "records were altered, or the log does not extend the trusted one "
			 "(forked)", v->trusted.size, v->nrec - 1, v->trusted.size, a, b);
		return;
	}
	pcv_fail(v, PC_VC_ROOT, -1, NULL, "the %" PRIu64 " records hash to root %s, the checkpoint "
		 "signs %s: records were altered, removed, reordered or inserted", v->nrec, a, b);
}

static void
check_trusted(struct pc_verify *v)
{
	const struct pc_checkpoint *t = &v->trusted;

	if (!v->have_trusted)
		return;
	if (v->cp.size < t->size) {
		pcv_fail(v, PC_VC_ROLLBACK, -1, NULL, "the checkpoint's tree has %" PRIu64
			 " records, fewer than the %" PRIu64
			 " of the last trusted checkpoint: rolled back", v->cp.size, t->size);
		return;
	}
	if (v->cp.size == t->size) {
		if (memcmp(v->cp.root, t->root, PC_HASH_LEN) != 0)
			pcv_fail(v, PC_VC_FORK, -1, NULL,
				 "the checkpoint and the last trusted one both have %" PRIu64
				 " records but different roots: the log forked", t->size);
		return;
	}
	if (v->trusted_root_seen && memcmp(v->trusted_root_here, t->root, PC_HASH_LEN) != 0)
		pcv_fail(v, PC_VC_FORK, -1, NULL, "the first %" PRIu64 " records do not hash to "
			 "the root of the last trusted checkpoint: the log forked", t->size);
}

void
pcv_tree_finish(struct pc_verify *v)
{
	if (v->resumed && v->cp.size <= v->trusted.size) {
		check_trusted(v);   /* nothing new: the roots compare, or it rolled back */
		return;
	}
	if (v->nrec < v->cp.size)
		pcv_fail(v, PC_VC_MISSING, (int64_t)v->nrec, NULL, "the checkpoint covers %" PRIu64
			 " records but only %" PRIu64 " are in the log: records were removed or "
			 "the tail was truncated", v->cp.size, v->nrec);
	else
		check_root(v);
	check_trusted(v);
}
