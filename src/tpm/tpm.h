/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The appliance's TPM 2.0, through tpm2-tss's ESAPI (docs/attestation.md).
 *
 * podcap's attestation key (AK) and the endorsement key (EK) are primary
 * keys of the endorsement hierarchy made from fixed templates, so the same
 * TPM gives the same keys every time they are created, with nothing kept
 * in its NV memory: enrolment reads them once, the signer re-creates the
 * AK at start. Every object and session made here is flushed before the
 * function returns (a TPM without a resource manager has few slots).
 *
 * Errors follow src/base/error.h; a TPM response code is named by
 * tpm2-tss (Tss2_RC_Decode).
 */
#ifndef PODCAP_TPM_H
#define PODCAP_TPM_H

#include <stddef.h>
#include <stdint.h>

#include <tss2/tss2_esys.h>

#include "base/error.h"

struct pc_tpm {
	ESYS_CONTEXT *esys;
	TSS2_TCTI_CONTEXT *tcti;
};

/* The largest marshalled TPM2B_PUBLIC, TPMS_ATTEST and TPMT_SIGNATURE. */
#define PC_TPM_PUBLIC_MAX sizeof(TPM2B_PUBLIC)
#define PC_TPM_NAME_MAX   sizeof(TPMU_NAME)
/* An EK certificate is at most a few KiB; TCG puts no firm bound on it. */
#define PC_TPM_CERT_MAX 8192

/*
 * Opens the TPM named by a tpm2-tss TCTI configuration string ("device:/dev/tpmrm0",
 * "swtpm:host=127.0.0.1,port=2321", ...); NULL or "" takes the TCTI loader's
 * default (TPM2TOOLS_TCTI-like environment variables are not read). 0 or -1.
 */
int pc_tpm_open(struct pc_tpm *tpm, const char *tcti, struct pc_error *err);
void pc_tpm_close(struct pc_tpm *tpm);
/* Sets err to "<what>: <tpm2-tss's name for rc>"; returns -1. */
int pc_tpm_fail(struct pc_error *err, TSS2_RC rc, const char *what);
/* Flushes a transient object or session; ESYS_TR_NONE is ignored. */
void pc_tpm_flush(struct pc_tpm *tpm, ESYS_TR *handle);

/* A key as enrolment exports it: the TPM2B_PUBLIC marshalled and the TPM name. */
struct pc_tpm_key {
	uint8_t pub[PC_TPM_PUBLIC_MAX];
	size_t pub_len;
	uint8_t name[PC_TPM_NAME_MAX];
	size_t name_len;
};

/*
 * Creates the AK (ECC NIST P-256, ECDSA with SHA-256; restricted signing,
 * fixedTPM, fixedParent, sensitiveDataOrigin, userWithAuth) as a primary
 * of the endorsement hierarchy and loads it: *handle must be flushed by
 * the caller. key may be NULL. 0 or -1.
 */
int pc_tpm_ak_load(struct pc_tpm *tpm, ESYS_TR *handle, struct pc_tpm_key *key,
		   struct pc_error *err);
/*
 * Creates the EK from TCG's RSA 2048 template (EK Credential Profile,
 * template L-1, the one EK certificates at NV index 0x01c00002 certify)
 * and loads it; *handle to be flushed by the caller. 0 or -1.
 */
int pc_tpm_ek_load(struct pc_tpm *tpm, ESYS_TR *handle, struct pc_tpm_key *key,
		   struct pc_error *err);
/*
 * The RSA 2048 EK certificate (DER) from NV index 0x01c00002: its length,
 * 0 when the TPM has none, -1 on error.
 */
long pc_tpm_ek_cert(struct pc_tpm *tpm, uint8_t *out, size_t max, struct pc_error *err);
/*
 * The AK's public key as PEM (SubjectPublicKeyInfo), NUL-terminated, from
 * its marshalled TPM2B_PUBLIC. 0, or -1 if it is not a P-256 key.
 */
#define PC_TPM_PEM_MAX 256
int pc_tpm_ak_pem(const struct pc_tpm_key *ak, char out[PC_TPM_PEM_MAX], struct pc_error *err);

/*
 * TPM2_ActivateCredential with the AK and the EK: recovers the secret a
 * verifier sealed to the EK for the AK's name (TPM2_MakeCredential), which
 * only the TPM holding both keys can. blob and secret are the marshalled
 * TPM2B_ID_OBJECT and TPM2B_ENCRYPTED_SECRET. The secret's length, or -1.
 */
long pc_tpm_activate(struct pc_tpm *tpm, const uint8_t *blob, size_t blob_len,
		     const uint8_t *secret, size_t secret_len, uint8_t *out, size_t max,
		     struct pc_error *err);

#endif /* PODCAP_TPM_H */
