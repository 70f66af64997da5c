/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The signer's TPM (docs/attestation.md): opened in the signer process at
 * start when the pod map has appliance.attestation, with the AK loaded for
 * the run. A quote that fails closes that context (tpm2-tss never uses one
 * again after the TPM was unreachable); the next quote opens a new one and
 * loads the AK again, so a TPM that comes back is quoted again. A quote's qualifying data is made here, from what the
 * signer knows itself: its verifier key, its own executable's build id and
 * the last checkpoint it signed; only the pod map digest comes from podcapd.
 */
#ifndef PODCAPD_SIGNER_ATTEST_H
#define PODCAPD_SIGNER_ATTEST_H

#include <stdbool.h>
#include <stdint.h>

#include "podmap/config.h"
#include "base/error.h"
#include "base/keys.h"
#include "log/record.h"

struct signer_tpm;

/* NULL with err set when the TPM cannot be opened or the AK made. */
struct signer_tpm *signer_tpm_open(const struct pc_attestation *a, struct pc_error *err);
/*
 * Quotes for the checkpoint (size, root) and the pod map digest: fills
 * out's ckpt_size, ckpt_root, quote, sig and PCRs. 0 or -1 (the context
 * dropped, to be opened again by the next call).
 */
int signer_tpm_quote(struct signer_tpm *t, const struct pc_verifier_key *vk,
		     const uint8_t podmap_digest[32], uint64_t size, const uint8_t root[32],
		     struct pc_record_attest *out, struct pc_error *err);
/*
 * The log's key from a sealed-key file (src/tpm/seal.h), into sodium_malloc
 * memory; from then on quotes say the key is sealed. NULL with err when the
 * TPM refuses (the PCRs differ) or the file is not one.
 */
struct pc_signer_key *signer_tpm_unseal(struct signer_tpm *t, const char *path,
					struct pc_error *err);
/* Whether path is a sealed-key file rather than a key file. */
bool signer_key_is_sealed(const char *path);
void signer_tpm_close(struct signer_tpm *t);

#endif /* PODCAPD_SIGNER_ATTEST_H */
