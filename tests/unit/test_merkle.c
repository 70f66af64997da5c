/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Merkle tree tests: the library against a reference written straight from
 * the recursive definitions of RFC 9162 2.1, and against the RFC 6962 test
 * vectors every CT implementation shares.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>
#include <sodium.h>

#include "log/merkle.h"

#define MAXN 130
#define PROOF_MAXN 70

struct leaves {
	uint8_t (*h)[PC_HASH_LEN];
	uint64_t n;
	uint64_t reads;
	uint64_t fail_at;     /* index whose read fails, UINT64_MAX for none */
};

static int
leaf_cb(void *ctx, uint64_t i, uint8_t out[PC_HASH_LEN])
{
	struct leaves *l = ctx;

	l->reads++;
	if (i >= l->n || i == l->fail_at)
		return -1;
	memcpy(out, l->h[i], PC_HASH_LEN);
	return 0;
}

static uint8_t hashes[MAXN][PC_HASH_LEN];
static uint8_t roots[MAXN + 1][PC_HASH_LEN];

/* Reference proofs: [size][index] and [new size][old size]. */
#define REF_PROOF 8
struct ref_proof {
	size_t n;
	uint8_t h[REF_PROOF][PC_HASH_LEN];
};
static struct ref_proof ref_incl[PROOF_MAXN + 2][PROOF_MAXN + 2];
static struct ref_proof ref_cons[PROOF_MAXN + 2][PROOF_MAXN + 2];

static struct leaves
all_leaves(void)
{
	struct leaves l = { hashes, MAXN, 0, UINT64_MAX };

	return l;
}

/* ---- the reference: RFC 9162 2.1.1, 2.1.3.1, 2.1.4.1 as written ---- */

static uint64_t
ref_k(uint64_t n)
{
	uint64_t k = 1;

	while (k * 2 < n)
		k *= 2;
	return k;
}

static void
ref_node(const uint8_t *l, const uint8_t *r, uint8_t *out)
{
	uint8_t buf[1 + 2 * PC_HASH_LEN];

	buf[0] = 0x01;
	memcpy(buf + 1, l, PC_HASH_LEN);
	memcpy(buf + 1 + PC_HASH_LEN, r, PC_HASH_LEN);
	crypto_hash_sha256(out, buf, sizeof(buf));
}

static void
ref_mth(uint8_t (*d)[PC_HASH_LEN], uint64_t n, uint8_t *out)
{
	uint8_t l[PC_HASH_LEN], r[PC_HASH_LEN];
	uint64_t k;

	if (n == 0) {
		crypto_hash_sha256(out, NULL, 0);
		return;
	}
	if (n == 1) {
		memcpy(out, d[0], PC_HASH_LEN);
		return;
	}
	k = ref_k(n);
	ref_mth(d, k, l);
	ref_mth(d + k, n - k, r);
	ref_node(l, r, out);
}

static void
ref_path(uint64_t m, uint8_t (*d)[PC_HASH_LEN], uint64_t n, uint8_t (*out)[PC_HASH_LEN],
	 size_t *np)
{
	uint64_t k;

	if (n <= 1)
		return;
	k = ref_k(n);
	if (m < k) {
		ref_path(m, d, k, out, np);
		ref_mth(d + k, n - k, out[(*np)++]);
	} else {
		ref_path(m - k, d + k, n - k, out, np);
		ref_mth(d, k, out[(*np)++]);
	}
}

static void
ref_subproof(uint64_t m, uint8_t (*d)[PC_HASH_LEN], uint64_t n, int b,
	     uint8_t (*out)[PC_HASH_LEN], size_t *np)
{
	uint64_t k;

	if (m == n) {
		if (!b)
			ref_mth(d, m, out[(*np)++]);
		return;
	}
	k = ref_k(n);
	if (m <= k) {
		ref_subproof(m, d, k, b, out, np);
		ref_mth(d + k, n - k, out[(*np)++]);
	} else {
		ref_subproof(m - k, d + k, n - k, 0, out, np);
		ref_mth(d, k, out[(*np)++]);
	}
}

static void
ref_consistency(uint64_t m, uint8_t (*d)[PC_HASH_LEN], uint64_t n,
		uint8_t (*out)[PC_HASH_LEN], size_t *np)
{
	*np = 0;
	if (m > 0 && m < n)
		ref_subproof(m, d, n, 1, out, np);
}

/* ---- fixtures ---- */

static int
setup(void **state)
{
	uint8_t data[8];
	uint64_t i, n, m;

	(void)state;
	if (sodium_init() < 0)
		return -1;
	for (i = 0; i < MAXN; i++) {
		/* Distinct leaves of varying lengths. */
		memset(data, 0, sizeof(data));
		data[0] = (uint8_t)i;
		data[1] = (uint8_t)(i * 37 + 1);
		pc_merkle_leaf_hash(data, 1 + (size_t)(i % 8), hashes[i]);
	}
	for (i = 0; i <= MAXN; i++)
		ref_mth(hashes, i, roots[i]);
	for (n = 1; n <= PROOF_MAXN + 1; n++) {
		for (m = 0; m <= n; m++) {
			if (m < n)
				ref_path(m, hashes, n, ref_incl[n][m].h, &ref_incl[n][m].n);
			ref_consistency(m, hashes, n, ref_cons[n][m].h, &ref_cons[n][m].n);
		}
	}
	return 0;
}

static void
unhex(const char *hex, uint8_t *out, size_t len)
{
	size_t n;

	assert_int_equal(sodium_hex2bin(out, len, hex, strlen(hex), NULL, &n, NULL), 0);
	assert_int_equal(n, len);
}

/* ---- RFC 6962 vectors ---- */

static const char *const vec_leaves[8] = {
	"", "00", "10", "2021", "3031", "40414243", "5051525354555657",
	"606162636465666768696a6b6c6d6e6f",
};

static const char *const vec_roots[9] = {
	"e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
	"6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d",
	"fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125",
	"aeb6bcfe274b70a14fb067a5e5578264db0fa9b51af5e0ba159158f329e06e77",
	"d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7",
	"4e3bbb1f7b478dcfe71fb631631519a3bca12c9aefca1612bfce4c13a86264d4",
	"76e67dadbcdf1e10e1b74ddc608abd2f98dfb16fbce75277b5232a127f2087ef",
	"ddb89be403809e325750d3d263cd78929c2942b7942a34b77e122c9594a74c8c",
	"5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328",
};

struct vec_proof {
	uint64_t a, b;          /* index and size, or old and new size */
	size_t n;
	const char *h[3];
};

static const struct vec_proof vec_incl[] = {
	{ 0, 8, 3, { "96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7",
		     "5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
		     "6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4" } },
	{ 5, 8, 3, { "bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b",
		     "ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0",
		     "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7" } },
};

static const struct vec_proof vec_cons[] = {
	{ 2, 8, 2, { "5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
		     "6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4" } },
	{ 6, 8, 3, { "0ebc5d3437fbe2db158b9f126a1d118e308181031d0a949f8dededebc558ef6a",
		     "ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0",
		     "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7" } },
	{ 2, 5, 2, { "5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
		     "bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b" } },
};

static void
test_rfc6962_vectors(void **state)
{
	uint8_t vh[8][PC_HASH_LEN], want[PC_HASH_LEN], got[PC_HASH_LEN];
	uint8_t data[16], proof[PC_MAX_PROOF][PC_HASH_LEN], wantp[3][PC_HASH_LEN];
	struct leaves l = { vh, 8, 0, UINT64_MAX };
	size_t i, j, np;

	(void)state;
	for (i = 0; i < 8; i++) {
		size_t len = strlen(vec_leaves[i]) / 2;

		unhex(vec_leaves[i], data, len);
		pc_merkle_leaf_hash(data, len, vh[i]);
	}
	for (i = 0; i <= 8; i++) {
		unhex(vec_roots[i], want, PC_HASH_LEN);
		assert_int_equal(pc_merkle_root(leaf_cb, &l, i, got), 0);
		assert_memory_equal(got, want, PC_HASH_LEN);
	}
	for (i = 0; i < sizeof(vec_incl) / sizeof(vec_incl[0]); i++) {
		const struct vec_proof *v = &vec_incl[i];

		assert_int_equal(pc_merkle_inclusion_proof(leaf_cb, &l, v->a, v->b, proof, &np), 0);
		assert_int_equal(np, v->n);
		for (j = 0; j < np; j++) {
			unhex(v->h[j], wantp[j], PC_HASH_LEN);
			assert_memory_equal(proof[j], wantp[j], PC_HASH_LEN);
		}
		unhex(vec_roots[v->b], want, PC_HASH_LEN);
		assert_int_equal(pc_merkle_verify_inclusion(v->a, v->b, vh[v->a],
			(const uint8_t (*)[PC_HASH_LEN])wantp, np, want), 0);
	}
	for (i = 0; i < sizeof(vec_cons) / sizeof(vec_cons[0]); i++) {
		const struct vec_proof *v = &vec_cons[i];
		uint8_t oldr[PC_HASH_LEN];

		assert_int_equal(pc_merkle_consistency_proof(leaf_cb, &l, v->a, v->b, proof, &np), 0);
		assert_int_equal(np, v->n);
		for (j = 0; j < np; j++) {
			unhex(v->h[j], wantp[j], PC_HASH_LEN);
			assert_memory_equal(proof[j], wantp[j], PC_HASH_LEN);
		}
		unhex(vec_roots[v->a], oldr, PC_HASH_LEN);
		unhex(vec_roots[v->b], want, PC_HASH_LEN);
		assert_int_equal(pc_merkle_verify_consistency(v->a, v->b, oldr, want,
			(const uint8_t (*)[PC_HASH_LEN])wantp, np), 0);
	}
}

static void
test_node_and_leaf_hash(void **state)
{
	uint8_t buf[1 + 2 * PC_HASH_LEN], a[PC_HASH_LEN], b[PC_HASH_LEN], got[PC_HASH_LEN];
	uint8_t want[PC_HASH_LEN];

	(void)state;
	memset(a, 0xaa, sizeof(a));
	memset(b, 0xbb, sizeof(b));
	buf[0] = 0x01;
	memcpy(buf + 1, a, PC_HASH_LEN);
	memcpy(buf + 1 + PC_HASH_LEN, b, PC_HASH_LEN);
	crypto_hash_sha256(want, buf, sizeof(buf));
	pc_merkle_node_hash(a, b, got);
	assert_memory_equal(got, want, PC_HASH_LEN);
	buf[0] = 0x00;
	crypto_hash_sha256(want, buf, 1 + PC_HASH_LEN);
	pc_merkle_leaf_hash(a, PC_HASH_LEN, got);
	assert_memory_equal(got, want, PC_HASH_LEN);
}

/* ---- roots and the compact range ---- */

static void
test_root_matches_reference(void **state)
{
	struct leaves l = all_leaves();
	uint8_t got[PC_HASH_LEN];
	uint64_t n;

	(void)state;
	for (n = 0; n <= MAXN; n++) {
		l.reads = 0;
		assert_int_equal(pc_merkle_root(leaf_cb, &l, n, got), 0);
		assert_memory_equal(got, roots[n], PC_HASH_LEN);
		/* Each leaf is read exactly once. */
		assert_int_equal(l.reads, n);
	}
}

static void
test_compact_range(void **state)
{
	struct pc_merkle_range r;
	uint8_t got[PC_HASH_LEN];
	uint64_t n;

	(void)state;
	pc_merkle_range_init(&r);
	pc_merkle_range_root(&r, got);
	assert_memory_equal(got, roots[0], PC_HASH_LEN);
	for (n = 1; n <= MAXN; n++) {
		pc_merkle_range_append(&r, hashes[n - 1]);
		assert_int_equal(r.size, n);
		assert_int_equal(r.n, (unsigned)__builtin_popcountll(n));
		pc_merkle_range_root(&r, got);
		assert_memory_equal(got, roots[n], PC_HASH_LEN);
	}
}

static void
test_read_errors_propagate(void **state)
{
	struct leaves l = all_leaves();
	uint8_t got[PC_HASH_LEN], proof[PC_MAX_PROOF][PC_HASH_LEN];
	size_t np;

	(void)state;
	l.fail_at = 17;
	assert_int_equal(pc_merkle_root(leaf_cb, &l, 40, got), -1);
	assert_int_equal(pc_merkle_root(leaf_cb, &l, 17, got), 0);
	assert_int_equal(pc_merkle_inclusion_proof(leaf_cb, &l, 3, 40, proof, &np), -1);
	assert_int_equal(pc_merkle_consistency_proof(leaf_cb, &l, 5, 40, proof, &np), -1);
	/* Out-of-range arguments. */
	l.fail_at = UINT64_MAX;
	assert_int_equal(pc_merkle_inclusion_proof(leaf_cb, &l, 40, 40, proof, &np), -1);
	assert_int_equal(pc_merkle_inclusion_proof(leaf_cb, &l, 0, 0, proof, &np), -1);
	assert_int_equal(pc_merkle_consistency_proof(leaf_cb, &l, 41, 40, proof, &np), -1);
}

/* ---- inclusion ---- */

static void
flip_each_bit_fails_inclusion(uint64_t i, uint64_t n, uint8_t (*proof)[PC_HASH_LEN], size_t np)
{
	uint8_t leaf[PC_HASH_LEN], root[PC_HASH_LEN];
	size_t j, b;

	memcpy(leaf, hashes[i], PC_HASH_LEN);
	memcpy(root, roots[n], PC_HASH_LEN);
	for (j = 0; j < np; j++) {
		for (b = 0; b < PC_HASH_LEN; b++) {
			proof[j][b] ^= 0x01;
			assert_int_equal(pc_merkle_verify_inclusion(i, n, leaf,
				(const uint8_t (*)[PC_HASH_LEN])proof, np, root), -1);
			proof[j][b] ^= 0x01;
		}
	}
	for (b = 0; b < PC_HASH_LEN; b++) {
		leaf[b] ^= 0x80;
		assert_int_equal(pc_merkle_verify_inclusion(i, n, leaf,
			(const uint8_t (*)[PC_HASH_LEN])proof, np, root), -1);
		leaf[b] ^= 0x80;
		root[b] ^= 0x80;
		assert_int_equal(pc_merkle_verify_inclusion(i, n, leaf,
			(const uint8_t (*)[PC_HASH_LEN])proof, np, root), -1);
		root[b] ^= 0x80;
	}
}

static int
proofs_equal(uint8_t (*a)[PC_HASH_LEN], size_t na, const struct ref_proof *b)
{
	return na == b->n && (na == 0 || memcmp(a, b->h, na * PC_HASH_LEN) == 0);
}

static void
test_inclusion_all(void **state)
{
	struct leaves l = all_leaves();
	uint8_t proof[PC_MAX_PROOF + 1][PC_HASH_LEN];
	uint64_t n, i, j;
	size_t np;
	int same;

	(void)state;
	for (n = 1; n <= PROOF_MAXN; n++) {
		for (i = 0; i < n; i++) {
			l.reads = 0;
			assert_int_equal(pc_merkle_inclusion_proof(leaf_cb, &l, i, n, proof, &np), 0);
			assert_true(l.reads <= n);
			assert_true(proofs_equal(proof, np, &ref_incl[n][i]));
			assert_int_equal(pc_merkle_verify_inclusion(i, n, hashes[i],
				(const uint8_t (*)[PC_HASH_LEN])proof, np, roots[n]), 0);

			flip_each_bit_fails_inclusion(i, n, proof, np);
			/* Another index, with either leaf, is not proven by this path. */
			for (j = 0; j < n + 2; j++) {
				if (j == i)
					continue;
				assert_int_equal(pc_merkle_verify_inclusion(j, n, hashes[i],
					(const uint8_t (*)[PC_HASH_LEN])proof, np, roots[n]), -1);
				if (j < n)
					assert_int_equal(pc_merkle_verify_inclusion(j, n, hashes[j],
						(const uint8_t (*)[PC_HASH_LEN])proof, np,
						roots[n]), -1);
			}
			/*
			 * Another tree size (with that tree's root) is proven only
			 * where the two trees give this leaf the same path.
			 */
			for (j = 1; j <= PROOF_MAXN + 1; j++) {
				if (j == n)
					continue;
				same = i < j && proofs_equal(proof, np, &ref_incl[j][i]);
				assert_int_equal(pc_merkle_verify_inclusion(i, j, hashes[i],
					(const uint8_t (*)[PC_HASH_LEN])proof, np, roots[j]),
					same ? 0 : -1);
			}
			/*
			 * With this tree's root, a path of the wrong length for the
			 * claimed size never verifies: the sizes are bound too.
			 */
			for (j = i + 1; j <= PROOF_MAXN + 1; j++) {
				if (ref_incl[j][i].n != np)
					assert_int_equal(pc_merkle_verify_inclusion(i, j, hashes[i],
						(const uint8_t (*)[PC_HASH_LEN])proof, np, roots[n]), -1);
			}
			/* Shorter or longer paths fail. */
			if (np > 0)
				assert_int_equal(pc_merkle_verify_inclusion(i, n, hashes[i],
					(const uint8_t (*)[PC_HASH_LEN])proof, np - 1, roots[n]), -1);
			memcpy(proof[np], roots[n], PC_HASH_LEN);
			assert_int_equal(pc_merkle_verify_inclusion(i, n, hashes[i],
				(const uint8_t (*)[PC_HASH_LEN])proof, np + 1, roots[n]), -1);
		}
	}
}

/* ---- consistency ---- */

static void
flip_each_bit_fails_consistency(uint64_t m, uint64_t n, uint8_t (*proof)[PC_HASH_LEN], size_t np)
{
	uint8_t r1[PC_HASH_LEN], r2[PC_HASH_LEN];
	size_t j, b;

	memcpy(r1, roots[m], PC_HASH_LEN);
	memcpy(r2, roots[n], PC_HASH_LEN);
	for (j = 0; j < np; j++) {
		for (b = 0; b < PC_HASH_LEN; b++) {
			proof[j][b] ^= 0x04;
			assert_int_equal(pc_merkle_verify_consistency(m, n, r1, r2,
				(const uint8_t (*)[PC_HASH_LEN])proof, np), -1);
			proof[j][b] ^= 0x04;
		}
	}
	for (b = 0; b < PC_HASH_LEN; b++) {
		r1[b] ^= 0x10;
		assert_int_equal(pc_merkle_verify_consistency(m, n, r1, r2,
			(const uint8_t (*)[PC_HASH_LEN])proof, np), -1);
		r1[b] ^= 0x10;
		/* Every tree extends the empty one, whatever its root. */
		if (m == 0)
			continue;
		r2[b] ^= 0x10;
		assert_int_equal(pc_merkle_verify_consistency(m, n, r1, r2,
			(const uint8_t (*)[PC_HASH_LEN])proof, np), -1);
		r2[b] ^= 0x10;
	}
}

static void
test_consistency_all(void **state)
{
	struct leaves l = all_leaves();
	uint8_t proof[PC_MAX_PROOF + 1][PC_HASH_LEN];
	uint64_t n, m, j;
	size_t np;
	int same;

	(void)state;
	for (n = 1; n <= PROOF_MAXN; n++) {
		for (m = 0; m <= n; m++) {
			l.reads = 0;
			assert_int_equal(pc_merkle_consistency_proof(leaf_cb, &l, m, n, proof, &np), 0);
			assert_true(l.reads <= n);
			assert_true(proofs_equal(proof, np, &ref_cons[n][m]));
			assert_int_equal(pc_merkle_verify_consistency(m, n, roots[m], roots[n],
				(const uint8_t (*)[PC_HASH_LEN])proof, np), 0);

			flip_each_bit_fails_consistency(m, n, proof, np);
			/* Other old sizes, with their true roots. */
			for (j = 0; j <= n; j++) {
				if (j == m)
					continue;
				same = proofs_equal(proof, np, &ref_cons[n][j]);
				assert_int_equal(pc_merkle_verify_consistency(j, n, roots[j], roots[n],
					(const uint8_t (*)[PC_HASH_LEN])proof, np), same ? 0 : -1);
			}
			/* Other new sizes, with their true roots. */
			for (j = 1; j <= PROOF_MAXN + 1; j++) {
				if (j == n)
					continue;
				same = m <= j && proofs_equal(proof, np, &ref_cons[j][m]);
				assert_int_equal(pc_merkle_verify_consistency(m, j, roots[m], roots[j],
					(const uint8_t (*)[PC_HASH_LEN])proof, np), same ? 0 : -1);
			}
			/* Claimed sizes whose proofs have another length, same roots. */
			for (j = m; j <= PROOF_MAXN + 1; j++) {
				if (ref_cons[j][m].n != np)
					assert_int_equal(pc_merkle_verify_consistency(m, j, roots[m], roots[n],
						(const uint8_t (*)[PC_HASH_LEN])proof, np), -1);
			}
			if (np > 0)
				assert_int_equal(pc_merkle_verify_consistency(m, n, roots[m], roots[n],
					(const uint8_t (*)[PC_HASH_LEN])proof, np - 1), -1);
			memcpy(proof[np], roots[m], PC_HASH_LEN);
			assert_int_equal(pc_merkle_verify_consistency(m, n, roots[m], roots[n],
				(const uint8_t (*)[PC_HASH_LEN])proof, np + 1), -1);
		}
	}
}

static void
test_consistency_edges(void **state)
{
	uint8_t proof[1][PC_HASH_LEN];

	(void)state;
	/* An old tree larger than the new one is never consistent. */
	assert_int_equal(pc_merkle_verify_consistency(5, 4, roots[5], roots[4], NULL, 0), -1);
	/* Same size: only the same root, with an empty proof. */
	assert_int_equal(pc_merkle_verify_consistency(7, 7, roots[7], roots[7], NULL, 0), 0);
	assert_int_equal(pc_merkle_verify_consistency(7, 7, roots[7], roots[6], NULL, 0), -1);
	/* The empty tree's root is SHA-256(""), nothing else. */
	assert_int_equal(pc_merkle_verify_consistency(0, 9, roots[0], roots[9], NULL, 0), 0);
	assert_int_equal(pc_merkle_verify_consistency(0, 9, roots[1], roots[9], NULL, 0), -1);
	memcpy(proof[0], roots[3], PC_HASH_LEN);
	assert_int_equal(pc_merkle_verify_consistency(0, 9, roots[0], roots[9],
		(const uint8_t (*)[PC_HASH_LEN])proof, 1), -1);
	/* A non-trivial step needs a proof. */
	assert_int_equal(pc_merkle_verify_consistency(4, 9, roots[4], roots[9], NULL, 0), -1);
	/* Oversized proofs are refused outright. */
	assert_int_equal(pc_merkle_verify_inclusion(0, 2, hashes[0], NULL, PC_MAX_PROOF + 1,
						    roots[2]), -1);
}

/* Leaf i of a large synthetic tree is computed, not stored. */
static int
synth_leaf(void *ctx, uint64_t i, uint8_t out[PC_HASH_LEN])
{
	uint8_t b[8];
	int k;

	(void)ctx;
	for (k = 0; k < 8; k++)
		b[k] = (uint8_t)(i >> (8 * k));
	pc_merkle_leaf_hash(b, sizeof(b), out);
	return 0;
}

static void
test_large_tree(void **state)
{
	const uint64_t n = 100003, m = 65537;
	uint8_t root[PC_HASH_LEN], oldr[PC_HASH_LEN], leaf[PC_HASH_LEN];
	uint8_t proof[PC_MAX_PROOF][PC_HASH_LEN];
	struct pc_merkle_range r;
	uint64_t i, idx[] = { 0, 1, 65535, 65536, 99999, n - 1 };
	size_t np, k;

	(void)state;
	pc_merkle_range_init(&r);
	for (i = 0; i < n; i++) {
		synth_leaf(NULL, i, leaf);
		pc_merkle_range_append(&r, leaf);
		if (i + 1 == m)
			pc_merkle_range_root(&r, oldr);
	}
	pc_merkle_range_root(&r, root);
	for (k = 0; k < sizeof(idx) / sizeof(idx[0]); k++) {
		assert_int_equal(pc_merkle_inclusion_proof(synth_leaf, NULL, idx[k], n, proof, &np), 0);
		synth_leaf(NULL, idx[k], leaf);
		assert_int_equal(pc_merkle_verify_inclusion(idx[k], n, leaf,
			(const uint8_t (*)[PC_HASH_LEN])proof, np, root), 0);
	}
	assert_int_equal(pc_merkle_consistency_proof(synth_leaf, NULL, m, n, proof, &np), 0);
	assert_int_equal(pc_merkle_verify_consistency(m, n, oldr, root,
		(const uint8_t (*)[PC_HASH_LEN])proof, np), 0);
	assert_int_equal(pc_merkle_root(synth_leaf, NULL, n, leaf), 0);
	assert_memory_equal(leaf, root, PC_HASH_LEN);
}

/* Sizes near 2^63: the index arithmetic must not overflow. */
static void
test_huge_sizes(void **state)
{
	const uint64_t big = (uint64_t)1 << 63;
	uint8_t leaf[PC_HASH_LEN], left[1][PC_HASH_LEN], root[PC_HASH_LEN];

	(void)state;
	memset(leaf, 0x42, sizeof(leaf));
	memset(left[0], 0x24, sizeof(left[0]));
	/* The last leaf of a 2^63 + 1 tree hangs right of the perfect 2^63 subtree. */
	pc_merkle_node_hash(left[0], leaf, root);
	assert_int_equal(pc_merkle_verify_inclusion(big, big + 1, leaf,
		(const uint8_t (*)[PC_HASH_LEN])left, 1, root), 0);
	assert_int_equal(pc_merkle_verify_inclusion(big - 1, big + 1, leaf,
		(const uint8_t (*)[PC_HASH_LEN])left, 1, root), -1);
	pc_merkle_node_hash(leaf, left[0], root);
	assert_int_equal(pc_merkle_verify_inclusion(big, big + 1, leaf,
		(const uint8_t (*)[PC_HASH_LEN])left, 1, root), -1);
	/* The 2^63 tree is consistent with 2^63 + 1 by the one new leaf. */
	memcpy(left[0], leaf, PC_HASH_LEN);
	memset(leaf, 0x24, sizeof(leaf));
	pc_merkle_node_hash(leaf, left[0], root);
	assert_int_equal(pc_merkle_verify_consistency(big, big + 1, leaf, root,
		(const uint8_t (*)[PC_HASH_LEN])left, 1), 0);
	assert_int_equal(pc_merkle_verify_consistency(UINT64_MAX, UINT64_MAX, leaf, leaf, NULL, 0), 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rfc6962_vectors),
		cmocka_unit_test(test_node_and_leaf_hash),
		cmocka_unit_test(test_root_matches_reference),
		cmocka_unit_test(test_compact_range),
		cmocka_unit_test(test_read_errors_propagate),
		cmocka_unit_test(test_inclusion_all),
		cmocka_unit_test(test_consistency_all),
		cmocka_unit_test(test_consistency_edges),
		cmocka_unit_test(test_large_tree),
		cmocka_unit_test(test_huge_sizes),
	};

	return cmocka_run_group_tests(tests, setup, NULL);
}
