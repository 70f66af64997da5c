/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The tree's SHA-256 (src/log/merkle.h) through libcrypto, which
 * libcurl already brings into podcap-verify's process and which uses the
 * CPU's SHA extensions where libsodium's SHA-256 is portable C: the
 * verifier's time is mostly hashing the records (docs/performance.md).
 */
#include <string.h>

#include <openssl/evp.h>

#include "merkle.h"

#include "sha256_libcrypto.h"

void
pc_sha256_libcrypto(uint8_t prefix, const uint8_t *a, size_t alen, const uint8_t *b, size_t blen,
		    uint8_t out[PC_HASH_LEN])
{
	/* one context a thread, made once: EVP_MD_CTX_new per hash would cost more than the hash */
	static _Thread_local EVP_MD_CTX *ctx;
	unsigned int n = 0;

	if (ctx == NULL && (ctx = EVP_MD_CTX_new()) == NULL)
		goto fallback;
	if (EVP_DigestInit_ex(ctx, EVP_sha256(), NULL) != 1 ||
	    EVP_DigestUpdate(ctx, &prefix, 1) != 1 || EVP_DigestUpdate(ctx, a, alen) != 1 ||
	    (blen > 0 && EVP_DigestUpdate(ctx, b, blen) != 1) ||
	    EVP_DigestFinal_ex(ctx, out, &n) != 1 || n != PC_HASH_LEN)
		goto fallback;
	return;
fallback:
	pc_sha256_libsodium(prefix, a, alen, b, blen, out);
}

int
pc_sha256_use_libcrypto(void)
{
	uint8_t msg[300], x[PC_HASH_LEN], y[PC_HASH_LEN];

	/* both must agree on a leaf and a node before the tree trusts libcrypto's */
	for (size_t i = 0; i < sizeof(msg); i++)
		msg[i] = (uint8_t)(i * 7 + 1);
	for (size_t len = 0; len <= sizeof(msg); len += 61) {
		pc_sha256_libsodium(0x00, msg, len, NULL, 0, x);
		pc_sha256_libcrypto(0x00, msg, len, NULL, 0, y);
		if (memcmp(x, y, sizeof(x)) != 0)
			return -1;
	}
	pc_sha256_libsodium(0x01, msg, PC_HASH_LEN, msg + PC_HASH_LEN, PC_HASH_LEN, x);
	pc_sha256_libcrypto(0x01, msg, PC_HASH_LEN, msg + PC_HASH_LEN, PC_HASH_LEN, y);
	if (memcmp(x, y, sizeof(x)) != 0)
		return -1;
	pc_merkle_set_sha256(pc_sha256_libcrypto);
	return 0;
}
