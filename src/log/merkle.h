/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * RFC 6962 / RFC 9162 Merkle tree hashing (SHA-256, libsodium):
 * leaf hash = SHA-256(0x00 || leaf), node hash = SHA-256(0x01 || left || right),
 * the hash of the empty tree = SHA-256("").
 *
 * The tree is given by its leaf hashes; the ledger keeps them in a file, so
 * these functions take a callback that returns leaf hash i.
 */
#ifndef PODCAP_MERKLE_H
#define PODCAP_MERKLE_H

#include <stddef.h>
#include <stdint.h>

#define PC_HASH_LEN 32
#define PC_MAX_PROOF 64   /* hashes in any proof of a tree of < 2^63 leaves */

/* Returns 0 and fills out[32] with leaf hash i, or -1 on I/O error. */
typedef int (*pc_leaf_fn)(void *ctx, uint64_t i, uint8_t out[PC_HASH_LEN]);

/*
 * SHA-256 of prefix || a || b, the one hash of the tree (b unread when blen
 * is 0). libsodium's portable implementation by default; a program may
 * install another implementation of the same function before it hashes
 * anything (podcap-verify installs libcrypto's, which uses the CPU's SHA
 * extensions: src/log/sha256_libcrypto.c). NULL restores libsodium's.
 */
typedef void (*pc_sha256_fn)(uint8_t prefix, const uint8_t *a, size_t alen, const uint8_t *b,
			     size_t blen, uint8_t out[PC_HASH_LEN]);
void pc_sha256_libsodium(uint8_t prefix, const uint8_t *a, size_t alen, const uint8_t *b,
			 size_t blen, uint8_t out[PC_HASH_LEN]);
void pc_merkle_set_sha256(pc_sha256_fn fn);

void pc_merkle_leaf_hash(const uint8_t *leaf, size_t len, uint8_t out[PC_HASH_LEN]);
void pc_merkle_node_hash(const uint8_t l[PC_HASH_LEN], const uint8_t r[PC_HASH_LEN],
			 uint8_t out[PC_HASH_LEN]);

/* Root of the first n leaves (MTH(D[0:n])). Returns 0 or -1. */
int pc_merkle_root(pc_leaf_fn leaf, void *ctx, uint64_t n, uint8_t root[PC_HASH_LEN]);

/* Inclusion proof of leaf `index` in the tree of `size` leaves (RFC 9162 2.1.3.1). */
int pc_merkle_inclusion_proof(pc_leaf_fn leaf, void *ctx, uint64_t index, uint64_t size,
			      uint8_t proof[][PC_HASH_LEN], size_t *nproof);
/* Consistency proof between trees of old_size <= new_size (RFC 9162 2.1.4.1). */
int pc_merkle_consistency_proof(pc_leaf_fn leaf, void *ctx, uint64_t old_size, uint64_t new_size,
				uint8_t proof[][PC_HASH_LEN], size_t *nproof);

/* Verifiers (RFC 9162 2.1.3.2 and 2.1.4.2): 0 when the proof holds, -1 otherwise. */
int pc_merkle_verify_inclusion(uint64_t index, uint64_t size, const uint8_t leaf_hash[PC_HASH_LEN],
			       const uint8_t proof[][PC_HASH_LEN], size_t nproof,
			       const uint8_t root[PC_HASH_LEN]);
int pc_merkle_verify_consistency(uint64_t old_size, uint64_t new_size,
				 const uint8_t old_root[PC_HASH_LEN],
				 const uint8_t new_root[PC_HASH_LEN],
				 const uint8_t proof[][PC_HASH_LEN], size_t nproof);

/*
 * Compact range (the right edge of the tree): lets the ledger append a leaf
 * and get the new root in O(log n) without rereading old leaves.
 */
struct pc_merkle_range {
	uint64_t size;
	unsigned n;                          /* hashes held: popcount(size) */
	uint8_t hashes[PC_MAX_PROOF][PC_HASH_LEN]; /* perfect subtrees, largest (leftmost) first */
};
void pc_merkle_range_init(struct pc_merkle_range *r);
void pc_merkle_range_append(struct pc_merkle_range *r, const uint8_t leaf_hash[PC_HASH_LEN]);
void pc_merkle_range_root(const struct pc_merkle_range *r, uint8_t root[PC_HASH_LEN]);

#endif /* PODCAP_MERKLE_H */
