/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The tree's SHA-256 through libcrypto (src/log/sha256_libcrypto.c, what
 * podcap-verify hashes with) gives libsodium's bytes, for every length and
 * both prefixes, and the tree built with it is the same tree.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>
#include <sodium.h>

#include "log/merkle.h"

#include "log/sha256_libcrypto.h"

static uint8_t msg[5000];

static void
test_same_bytes(void **state)
{
	uint8_t x[PC_HASH_LEN], y[PC_HASH_LEN];

	(void)state;
	randombytes_buf(msg, sizeof(msg));
	for (size_t len = 0; len < sizeof(msg); len += len < 200 ? 1 : 97) {
		pc_sha256_libsodium(0x00, msg, len, NULL, 0, x);
		pc_sha256_libcrypto(0x00, msg, len, NULL, 0, y);
		assert_memory_equal(x, y, PC_HASH_LEN);
		pc_sha256_libsodium(0x01, msg, len / 2, msg + len / 2, len - len / 2, x);
		pc_sha256_libcrypto(0x01, msg, len / 2, msg + len / 2, len - len / 2, y);
		assert_memory_equal(x, y, PC_HASH_LEN);
	}
	/* RFC 6962's empty leaf: SHA-256 of the byte 0x00 */
	static const uint8_t empty_leaf[PC_HASH_LEN] = {
		0x6e, 0x34, 0x0b, 0x9c, 0xff, 0xb3, 0x7a, 0x98, 0x9c, 0xa5, 0x44,
		0xe6, 0xbb, 0x78, 0x0a, 0x2c, 0x78, 0x90, 0x1d, 0x3f, 0xb3, 0x37,
		0x38, 0x76, 0x85, 0x11, 0xa3, 0x06, 0x17, 0xaf, 0xa0, 0x1d,
	};
	pc_sha256_libcrypto(0x00, msg, 0, NULL, 0, y);
	assert_memory_equal(y, empty_leaf, PC_HASH_LEN);
}

/* A tree of 1000 leaves has one root, whichever implementation hashed it. */
static void
test_same_tree(void **state)
{
	struct pc_merkle_range r;
	uint8_t h[PC_HASH_LEN], a[PC_HASH_LEN], b[PC_HASH_LEN];

	(void)state;
	for (int pass = 0; pass < 2; pass++) {
		if (pass == 1)
			assert_int_equal(pc_sha256_use_libcrypto(), 0);
		pc_merkle_range_init(&r);
		for (size_t i = 0; i < 1000; i++) {
			pc_merkle_leaf_hash(msg + i, 1 + i % 300, h);
			pc_merkle_range_append(&r, h);
		}
		pc_merkle_range_root(&r, pass == 0 ? a : b);
	}
	assert_memory_equal(a, b, PC_HASH_LEN);
	pc_merkle_set_sha256(NULL);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_same_bytes),
		cmocka_unit_test(test_same_tree),
	};

	if (sodium_init() < 0)
		return 1;
	return cmocka_run_group_tests(tests, NULL, NULL);
}
