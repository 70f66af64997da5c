/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The Merkle tree over the records (docs/verify.md, checks 2, 3 and 8):
 * every record's leaf hash folded into the tree's right edge, whose root
 * must be the signed one; no record missing; and, against the last
 * trusted checkpoint, no rollback and no fork. The leaf hashes a source
 * stores are never trusted: they only point at the records that changed
 * when they still give the signed root. Its state is the edge, which a
 * saved state carries so that a resumed run reads only the new records.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "base/hex.h"
#include "log/merkle.h"
#include "log/record.h"
#include "verify.h"

#include "lines.h"
#include "tree.h"
#include "verify_impl.h"

/* A record whose bytes differ from the leaf hash the source stores beside it. */
struct changed {
	uint64_t index;
	uint8_t type;
	uint64_t window_start_ns;
};

struct tree {
	struct pc_merkle_range range;
	struct pc_merkle_range stored; /* over the source's stored leaf hashes */
	bool stored_all;
	struct changed *changed; /* PC_VERIFY_MAX_KEPT entries */
	size_t nchanged;
	struct changed *pending; /* the record being fed, when it changed: filled once it decodes */
	bool trusted_root_seen;
	uint8_t trusted_root_here[PC_HASH_LEN];
	uint64_t rec_bytes; /* the records' lengths added up: where the next starts */
	/* read from a saved state, in force once the whole state is read */
	struct pc_merkle_range saved;
	uint64_t saved_bytes;
};

static int
tree_init(struct pc_verify *v, void *st)
{
	struct tree *t = st;

	(void)v;
	t->stored_all = true;
	pc_merkle_range_init(&t->range);
	pc_merkle_range_init(&t->stored);
	t->changed = calloc(PC_VERIFY_MAX_KEPT, sizeof(*t->changed));
	return t->changed == NULL ? -1 : 0;
}

static void
tree_free(void *st)
{
	free(((struct tree *)st)->changed);
}

void
pcv_tree_root(const struct pc_verify *v, uint8_t root[PC_HASH_LEN])
{
	const struct tree *t = pcv_state(v, PCV_TREE);

	pc_merkle_range_root(&t->range, root);
}

/* A trusted tree of no records: its root is the empty tree's. */
static void
tree_begin(struct pc_verify *v, void *st)
{
	struct tree *t = st;

	if (v->have_trusted && v->trusted.size == 0) {
		pc_merkle_range_root(&t->range, t->trusted_root_here);
		t->trusted_root_seen = true;
	}
}

/*
 * Hashes record `index` into the tree (and stored_leaf, when given, into
 * the stored one). When its bytes differ from stored_leaf, the entry that
 * names it waits for its type and window until it decodes.
 */
static void
tree_bytes(struct pc_verify *v, void *st, uint64_t index, const uint8_t *rec, size_t len,
	   const uint8_t *stored_leaf)
{
	struct tree *t = st;
	uint8_t h[PC_HASH_LEN];

	t->rec_bytes += len;
	t->pending = NULL;
	pc_merkle_leaf_hash(rec, len, h);
	pc_merkle_range_append(&t->range, h);
	/* the first trusted.size records must give the trusted root (check 8) */
	if (v->have_trusted && index + 1 == v->trusted.size) {
		pc_merkle_range_root(&t->range, t->trusted_root_here);
		t->trusted_root_seen = true;
	}
	if (stored_leaf == NULL)
		t->stored_all = false;
	else if (t->stored_all)
		pc_merkle_range_append(&t->stored, stored_leaf);

	if (stored_leaf != NULL && memcmp(stored_leaf, h, PC_HASH_LEN) != 0 &&
	    t->nchanged < PC_VERIFY_MAX_KEPT) {
		t->pending = &t->changed[t->nchanged++];
		memset(t->pending, 0, sizeof(*t->pending));
		t->pending->index = index;
	}
}

static void
tree_record(struct pc_verify *v, void *st, uint64_t index, const struct pc_record *r)
{
	struct tree *t = st;

	(void)v, (void)index;
	if (t->pending != NULL) {
		t->pending->type = r->type;
		t->pending->window_start_ns = r->window_start_ns;
		t->pending = NULL;
	}
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
check_root(struct pc_verify *v, const struct tree *t)
{
	uint8_t root[PC_HASH_LEN], sroot[PC_HASH_LEN];
	char a[2 * PC_HASH_LEN + 1], b[2 * PC_HASH_LEN + 1];

	pc_merkle_range_root(&t->range, root);
	if (memcmp(root, v->cp.root, PC_HASH_LEN) == 0)
		return;
	pc_merkle_range_root(&t->stored, sroot);
	if (t->stored_all && memcmp(sroot, v->cp.root, PC_HASH_LEN) == 0 && t->nchanged > 0) {
		/* the stored hashes are the signed leaves: whatever differs from them changed */
		for (size_t i = 0; i < t->nchanged; i++) {
			struct pc_record r = { .type = t->changed[i].type,
					       .window_start_ns = t->changed[i].window_start_ns };
			pcv_fail(v, PC_VC_ROOT, (int64_t)t->changed[i].index, &r,
				 "the record's "
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
check_trusted(struct pc_verify *v, const struct tree *tr)
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
	if (tr->trusted_root_seen && memcmp(tr->trusted_root_here, t->root, PC_HASH_LEN) != 0)
		pcv_fail(v, PC_VC_FORK, -1, NULL, "the first %" PRIu64 " records do not hash to "
			 "the root of the last trusted checkpoint: the log forked", t->size);
}

/* After the last record of a checkpoint that verified: checks 2, 3 and 8. */
static void
tree_finish(struct pc_verify *v, void *st)
{
	const struct tree *t = st;

	if (!v->cp_ok)
		return;
	if (v->resumed && v->cp.size <= v->trusted.size) {
		check_trusted(v, t); /* nothing new: the roots compare, or it rolled back */
		return;
	}
	if (v->nrec < v->cp.size)
		pcv_fail(v, PC_VC_MISSING, (int64_t)v->nrec, NULL, "the checkpoint covers %" PRIu64
			 " records but only %" PRIu64 " are in the log: records were removed or "
			 "the tail was truncated", v->cp.size, v->nrec);
	else
		check_root(v, t);
	check_trusted(v, t);
}

/* ---- the saved state: the trusted tree's edge, and where the records after it start ---- */

static void
save_edge(const struct pc_verify *v, const void *st, FILE *f)
{
	const struct tree *t = st;

	(void)v;
	fprintf(f, "edge %" PRIu64 " %u\n", t->range.size, t->range.n);
	for (unsigned i = 0; i < t->range.n; i++) {
		fputs("hash", f);
		pcv_put_hex(f, t->range.hashes[i], PC_HASH_LEN);
		fputc('\n', f);
	}
	fprintf(f, "bytes %" PRIu64 "\n", t->rec_bytes);
}

/* The edge must give the signed root: then it is the edge of the trusted tree. */
static int
load_edge(struct pc_verify *v, void *st, struct pcv_lines *ls, struct pc_error *err)
{
	struct tree *t = st;
	struct pc_merkle_range *r = &t->saved;
	char *s;
	uint64_t size, n;
	uint8_t root[PC_HASH_LEN];

	pc_merkle_range_init(r);
	if (!pcv_line_is(ls, "edge", &s) || !pcv_get_u64(&s, &size) || !pcv_get_u64(&s, &n) ||
	    *s != '\0' || n != (uint64_t)__builtin_popcountll(size) || size != v->trusted.size)
		return pcv_lines_bad(ls, err);
	r->size = size;
	r->n = (unsigned)n;
	for (unsigned i = 0; i < r->n; i++)
		if (!pcv_line_is(ls, "hash", &s) || !pcv_get_hex(&s, r->hashes[i], PC_HASH_LEN) ||
		    *s != '\0')
			return pcv_lines_bad(ls, err);
	if (!pcv_line_is(ls, "bytes", &s) || !pcv_get_u64(&s, &t->saved_bytes) || *s != '\0' ||
	    t->saved_bytes < size)
		return pcv_lines_bad(ls, err);
	pc_merkle_range_root(r, root);
	if (memcmp(root, v->trusted.root, PC_HASH_LEN) != 0)
		return pc_error_set(err,
				    "the saved tree edge does not hash to the root of the saved "
				    "checkpoint");
	return 0;
}

/* The run goes on from the saved edge; the source's stored leaves extend the same trusted edge. */
static void
tree_resume(struct pc_verify *v, void *st)
{
	struct tree *t = st;

	(void)v;
	t->range = t->saved;
	t->stored = t->saved;
	t->rec_bytes = t->saved_bytes;
	pc_merkle_range_root(&t->saved, t->trusted_root_here);
	t->trusted_root_seen = true;
}

uint64_t
pc_verify_resume_bytes(const struct pc_verify *v)
{
	const struct tree *t = pcv_state(v, PCV_TREE);

	return v->resumed ? t->rec_bytes : 0;
}

const struct pcv_check pcv_tree_check = {
	.name = "tree",
	.size = sizeof(struct tree),
	.init = tree_init,
	.free = tree_free,
	.begin = tree_begin,
	.bytes = tree_bytes,
	.record = tree_record,
	.finish = tree_finish,
	.sections = (const struct pcv_section[]){ { "edge", save_edge, load_edge }, { NULL } },
	.resume = tree_resume,
};
