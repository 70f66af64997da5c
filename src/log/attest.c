/* SPDX-License-Identifier: BSD-3-Clause */
#include <string.h>

#include <sodium.h>

#include "attest.h"
#include "base/bytes.h"

static const char domain[] = "podcap-attest-v1\n";

void
pc_attest_qualifying(const struct pc_verifier_key *vk, const uint8_t podmap_digest[32],
		     const uint8_t build_id[32], uint64_t ckpt_size, const uint8_t ckpt_root[32],
		     uint8_t key_kind, uint8_t out[PC_ATTEST_QUAL_LEN])
{
	crypto_generichash_state h;
	uint8_t be[8];

	crypto_generichash_init(&h, NULL, 0, PC_ATTEST_QUAL_LEN);
	crypto_generichash_update(&h, (const uint8_t *)domain, sizeof(domain) - 1);
	crypto_generichash_update(&h, (const uint8_t *)vk->name, strlen(vk->name));
	crypto_generichash_update(&h, (const uint8_t *)"\n", 1);
	pc_store_be32(be, vk->id);
	crypto_generichash_update(&h, be, 4);
	crypto_generichash_update(&h, vk->pk, sizeof(vk->pk));
	crypto_generichash_update(&h, podmap_digest, 32);
	crypto_generichash_update(&h, build_id, 32);
	pc_store_be64(be, ckpt_size);
	crypto_generichash_update(&h, be, 8);
	crypto_generichash_update(&h, ckpt_root, 32);
	crypto_generichash_update(&h, &key_kind, 1);
	crypto_generichash_final(&h, out, PC_ATTEST_QUAL_LEN);
}
