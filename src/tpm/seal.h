/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The log's Ed25519 key sealed to the TPM (docs/attestation.md, "Sealing
 * the key"): its 32-byte seed is the sensitive data of a TPM object under
 * the storage root key, released only to a policy session whose PCRs hold
 * the values they held when it was sealed (TPM2_PolicyPCR).
 *
 * The sealed-key file holds no secret: the object's TPM2B_PUBLIC and
 * TPM2B_PRIVATE (encrypted by the TPM), the key's name and id, and the PCRs.
 */
#ifndef PODCAP_TPM_SEAL_H
#define PODCAP_TPM_SEAL_H

#include <stdbool.h>
#include <stdint.h>

#include "base/keys.h"
#include "tpm.h"

#define PC_SEALED_MAGIC "podcap-sealed-key: 1\n"

/*
 * Seals k's seed to the current values of the SHA-256 PCRs in mask and
 * writes the sealed-key file (never overwriting, mode 0600). 0 or -1.
 */
int pc_sealed_key_write(struct pc_tpm *tpm, const struct pc_signer_key *k, uint32_t mask,
			const char *path, struct pc_error *err);
/*
 * Unseals a sealed-key file into a sodium_malloc'd key; NULL with err when
 * the PCRs differ (the TPM refuses the policy), the file is not one, or the
 * key it gives is not the one the file names. *mask receives its PCRs.
 */
struct pc_signer_key *pc_sealed_key_unseal(struct pc_tpm *tpm, const char *path, uint32_t *mask,
					   struct pc_error *err);

#endif /* PODCAP_TPM_SEAL_H */
