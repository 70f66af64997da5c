/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What a TPM quote in the log commits to (docs/log-format.md, "ATTEST"):
 * its qualifying data binds the quote to one log and one point in it, so
 * that a quote cannot be replayed into another log or later in this one.
 */
#ifndef PODCAP_ATTEST_H
#define PODCAP_ATTEST_H

#include <stdint.h>

#include "base/keys.h"

#define PC_ATTEST_QUAL_LEN 32

/*
 * BLAKE2b-256 of "podcap-attest-v1\n", the verifier key (name, a newline,
 * key id, Ed25519 public key), the pod map digest, the build id, the
 * checkpoint's size (8 bytes, big-endian) and root, and the key's kind
 * (one byte, PC_KEY_FILE or PC_KEY_SEALED).
 */
void pc_attest_qualifying(const struct pc_verifier_key *vk, const uint8_t podmap_digest[32],
			  const uint8_t build_id[32], uint64_t ckpt_size,
			  const uint8_t ckpt_root[32], uint8_t key_kind,
			  uint8_t out[PC_ATTEST_QUAL_LEN]);

#endif /* PODCAP_ATTEST_H */
