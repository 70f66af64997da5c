/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * RFC 9162 Merkle tree: hashes, proofs and the compact range.
 *
 * Every subtree hash is computed by streaming its leaves through a compact
 * range, so no function recurses and each leaf hash is read at most once per
 * call. Proof generation walks the RFC's recursive definitions as loops,
 * collecting the sibling subtrees top-down and reversing them at the end.
 */
#include <stdbool.h>
#include <string.h>

#include <sodium.h>

#include "merkle.h"

void
pc_sha256_libsodium(uint8_t prefix, const uint8_t *a, size_t alen, const uint8_t *b, size_t blen,
		    uint8_t out[PC_HASH_LEN])
{
	crypto_hash_sha256_state st;

	crypto_hash_sha256_init(&st);
	crypto_hash_sha256_update(&st, &prefix, 1);
	crypto_hash_sha256_update(&st, a, alen);
	if (blen > 0)
		crypto_hash_sha256_update(&st, b, blen);
	crypto_hash_sha256_final(&st, out);
}

static pc_sha256_fn sha256 = pc_sha256_libsodium;

void
pc_merkle_set_sha256(pc_sha256_fn fn)
{
	sha256 = fn != NULL ? fn : pc_sha256_libsodium;
}

void
pc_merkle_leaf_hash(const uint8_t *leaf, size_t len, uint8_t out[PC_HASH_LEN])
{
	sha256(0x00, leaf, len, NULL, 0, out);
}

void
pc_merkle_node_hash(const uint8_t l[PC_HASH_LEN], const uint8_t r[PC_HASH_LEN],
		    uint8_t out[PC_HASH_LEN])
{
	sha256(0x01, l, PC_HASH_LEN, r, PC_HASH_LEN, out);
}

void
pc_merkle_range_init(struct pc_merkle_range *r)
{
	memset(r, 0, sizeof(*r));
}

void
pc_merkle_range_append(struct pc_merkle_range *r, const uint8_t leaf_hash[PC_HASH_LEN])
{
	uint8_t h[PC_HASH_LEN];
	uint64_t s;

	memcpy(h, leaf_hash, PC_HASH_LEN);
	/* Each trailing one bit of the old size is a perfect subtree the new leaf completes. */
	for (s = r->size; s & 1; s >>= 1)
		pc_merkle_node_hash(r->hashes[--r->n], h, h);
	memcpy(r->hashes[r->n++], h, PC_HASH_LEN);
	r->size++;
}

void
pc_merkle_range_root(const struct pc_merkle_range *r, uint8_t root[PC_HASH_LEN])
{
	uint8_t h[PC_HASH_LEN];
	unsigned i;

	if (r->n == 0) {
		crypto_hash_sha256(root, NULL, 0);
		return;
	}
	memcpy(h, r->hashes[r->n - 1], PC_HASH_LEN);
	for (i = r->n - 1; i > 0; i--)
		pc_merkle_node_hash(r->hashes[i - 1], h, h);
	memcpy(root, h, PC_HASH_LEN);
}

/* MTH(D[lo:lo+count]): reads each of those leaves exactly once. */
static int
subtree_hash(pc_leaf_fn leaf, void *ctx, uint64_t lo, uint64_t count, uint8_t out[PC_HASH_LEN])
{
	struct pc_merkle_range r;
	uint8_t h[PC_HASH_LEN];
	uint64_t i;

	pc_merkle_range_init(&r);
	for (i = 0; i < count; i++) {
		if (leaf(ctx, lo + i, h) != 0)
			return -1;
		pc_merkle_range_append(&r, h);
	}
	pc_merkle_range_root(&r, out);
	return 0;
}

int
pc_merkle_root(pc_leaf_fn leaf, void *ctx, uint64_t n, uint8_t root[PC_HASH_LEN])
{
	return subtree_hash(leaf, ctx, 0, n, root);
}

/* The largest power of two strictly less than n (n >= 2). */
static uint64_t
split_point(uint64_t n)
{
	uint64_t k = 1;

	while (k <= (n - 1) / 2)
		k <<= 1;
	return k;
}

static void
reverse(uint8_t proof[][PC_HASH_LEN], size_t n)
{
	uint8_t t[PC_HASH_LEN];
	size_t i;

	for (i = 0; i < n / 2; i++) {
		memcpy(t, proof[i], PC_HASH_LEN);
		memcpy(proof[i], proof[n - 1 - i], PC_HASH_LEN);
		memcpy(proof[n - 1 - i], t, PC_HASH_LEN);
	}
}

/*
 * One level of RFC 9162's PATH and SUBPROOF (2.1.3.1, 2.1.4.1) over the
 * subtree D[*lo : *lo + *n] split at k: with `left`, the right subtree's
 * hash goes into out and the walk goes on in the left one; else the left
 * one's hash, and on in the right one. Returns 1 when it went right, 0
 * when left, -1 when a leaf cannot be read.
 */
static int
descend(pc_leaf_fn leaf, void *ctx, uint64_t *lo, uint64_t *n, uint64_t *m, bool left,
	uint8_t out[PC_HASH_LEN])
{
	uint64_t k = split_point(*n);

	if (left) {
		if (subtree_hash(leaf, ctx, *lo + k, *n - k, out) != 0)
			return -1;
		*n = k;
		return 0;
	}
	if (subtree_hash(leaf, ctx, *lo, k, out) != 0)
		return -1;
	*lo += k;
	*m -= k;
	*n -= k;
	return 1;
}

int
pc_merkle_inclusion_proof(pc_leaf_fn leaf, void *ctx, uint64_t index, uint64_t size,
			  uint8_t proof[][PC_HASH_LEN], size_t *nproof)
{
	uint64_t lo = 0, n = size, m = index;
	size_t np = 0;

	*nproof = 0;
	if (index >= size)
		return -1;
	/* PATH(m, D[lo:lo+n]), RFC 9162 2.1.3.1, one level per iteration. */
	while (n > 1) {
		if (np == PC_MAX_PROOF || descend(leaf, ctx, &lo, &n, &m, m < split_point(n),
						  proof[np++]) < 0)
			return -1;
	}
	reverse(proof, np);
	*nproof = np;
	return 0;
}

int
pc_merkle_consistency_proof(pc_leaf_fn leaf, void *ctx, uint64_t old_size, uint64_t new_size,
			    uint8_t proof[][PC_HASH_LEN], size_t *nproof)
{
	uint64_t lo = 0, n = new_size, m = old_size;
	size_t np = 0;
	int whole = 1;

	*nproof = 0;
	if (old_size > new_size)
		return -1;
	/* Nothing to prove: every tree extends the empty one, and a tree itself. */
	if (old_size == 0 || old_size == new_size)
		return 0;
	/* SUBPROOF(m, D[lo:lo+n], whole), RFC 9162 2.1.4.1. */
	while (m != n) {
		if (np == PC_MAX_PROOF)
			return -1;
		int right = descend(leaf, ctx, &lo, &n, &m, m <= split_point(n), proof[np++]);
		if (right < 0)
			return -1;
		if (right)
			whole = 0;
	}
	if (!whole) {
		if (np == PC_MAX_PROOF)
			return -1;
		if (subtree_hash(leaf, ctx, lo, m, proof[np++]) != 0)
			return -1;
	}
	reverse(proof, np);
	*nproof = np;
	return 0;
}

/*
 * One step of RFC 9162's proof verification (2.1.3.2 and 2.1.4.2): true
 * when the next proof node is a left sibling (hash it before the running
 * value), false when it is a right one; moves fn and sn up the tree.
 */
static bool
proof_step(uint64_t *fn, uint64_t *sn)
{
	bool left = (*fn & 1) || *fn == *sn;

	if (left)
		while (!(*fn & 1) && *fn != 0) {
			*fn >>= 1;
			*sn >>= 1;
		}
	*fn >>= 1;
	*sn >>= 1;
	return left;
}

int
pc_merkle_verify_inclusion(uint64_t index, uint64_t size, const uint8_t leaf_hash[PC_HASH_LEN],
			   const uint8_t proof[][PC_HASH_LEN], size_t nproof,
			   const uint8_t root[PC_HASH_LEN])
{
	uint8_t r[PC_HASH_LEN];
	uint64_t fn, sn;
	size_t i;

	/* RFC 9162 2.1.3.2. */
	if (index >= size || nproof > PC_MAX_PROOF)
		return -1;
	fn = index;
	sn = size - 1;
	memcpy(r, leaf_hash, PC_HASH_LEN);
	for (i = 0; i < nproof; i++) {
		if (sn == 0)
			return -1;
		if (proof_step(&fn, &sn))
			pc_merkle_node_hash(proof[i], r, r);
		else
			pc_merkle_node_hash(r, proof[i], r);
	}
	if (sn != 0 || sodium_memcmp(r, root, PC_HASH_LEN) != 0)
		return -1;
	return 0;
}

static int
hash_eq(const uint8_t a[PC_HASH_LEN], const uint8_t b[PC_HASH_LEN])
{
	return sodium_memcmp(a, b, PC_HASH_LEN) == 0;
}

int
pc_merkle_verify_consistency(uint64_t old_size, uint64_t new_size,
			     const uint8_t old_root[PC_HASH_LEN],
			     const uint8_t new_root[PC_HASH_LEN],
			     const uint8_t proof[][PC_HASH_LEN], size_t nproof)
{
	uint8_t empty[PC_HASH_LEN], fr[PC_HASH_LEN], sr[PC_HASH_LEN];
	const uint8_t *c;
	uint64_t fn, sn;
	size_t i, start;

	if (old_size > new_size || nproof > PC_MAX_PROOF)
		return -1;
	if (old_size == new_size)
		return nproof == 0 && hash_eq(old_root, new_root) ? 0 : -1;
	if (old_size == 0) {
		/* The empty tree has a known root; anything else claimed for it is false. */
		crypto_hash_sha256(empty, NULL, 0);
		return nproof == 0 && hash_eq(old_root, empty) ? 0 : -1;
	}

	/* RFC 9162 2.1.4.2; a power-of-two old tree is its own first proof node. */
	if (nproof == 0)
		return -1;
	start = 0;
	c = proof[0];
	if ((old_size & (old_size - 1)) == 0)
		c = old_root;
	else
		start = 1;
	fn = old_size - 1;
	sn = new_size - 1;
	while (fn & 1) {
		fn >>= 1;
		sn >>= 1;
	}
	memcpy(fr, c, PC_HASH_LEN);
	memcpy(sr, c, PC_HASH_LEN);
	for (i = start; i < nproof; i++) {
		if (sn == 0)
			return -1;
		if (proof_step(&fn, &sn)) {
			pc_merkle_node_hash(proof[i], fr, fr);
			pc_merkle_node_hash(proof[i], sr, sr);
		} else {
			pc_merkle_node_hash(sr, proof[i], sr);
		}
	}
	if (sn != 0 || !hash_eq(fr, old_root) || !hash_eq(sr, new_root))
		return -1;
	return 0;
}
