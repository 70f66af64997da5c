/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Credential activation (TPM 2.0 Part 1, 24 "Credential Protection"): a
 * verifier who trusts an EK (its certificate) wraps a secret to it for one
 * key name with TPM2_MakeCredential; TPM2_ActivateCredential returns the
 * secret only inside a TPM that holds that EK and has the named key loaded.
 * The EK's policy (policy A) is PolicySecret with the endorsement hierarchy.
 */
#include <string.h>

#include <tss2/tss2_mu.h>

#include "tpm.h"

static int
ek_session(struct pc_tpm *tpm, ESYS_TR *session, struct pc_error *err)
{
	const TPMT_SYM_DEF sym = { .algorithm = TPM2_ALG_NULL };

	TSS2_RC rc = Esys_StartAuthSession(tpm->esys, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE,
					   ESYS_TR_NONE, ESYS_TR_NONE, NULL, TPM2_SE_POLICY, &sym,
					   TPM2_ALG_SHA256, session);
	if (rc != TSS2_RC_SUCCESS)
		return pc_tpm_fail(err, rc, "TPM2_StartAuthSession");
	rc = Esys_PolicySecret(tpm->esys, ESYS_TR_RH_ENDORSEMENT, *session, ESYS_TR_PASSWORD,
			       ESYS_TR_NONE, ESYS_TR_NONE, NULL, NULL, NULL, 0, NULL, NULL);
	if (rc != TSS2_RC_SUCCESS) {
		pc_tpm_flush(tpm, session);
		return pc_tpm_fail(err, rc, "TPM2_PolicySecret(endorsement)");
	}
	return 0;
}

static int
unmarshal(const uint8_t *blob, size_t blob_len, const uint8_t *secret, size_t secret_len,
	  TPM2B_ID_OBJECT *id, TPM2B_ENCRYPTED_SECRET *enc, struct pc_error *err)
{
	size_t off = 0;

	if (Tss2_MU_TPM2B_ID_OBJECT_Unmarshal(blob, blob_len, &off, id) != TSS2_RC_SUCCESS ||
	    off != blob_len)
		return pc_error_set(err, "the credential blob is not a TPM2B_ID_OBJECT");
	off = 0;
	if (Tss2_MU_TPM2B_ENCRYPTED_SECRET_Unmarshal(secret, secret_len, &off, enc) !=
		TSS2_RC_SUCCESS ||
	    off != secret_len)
		return pc_error_set(err, "the encrypted seed is not a TPM2B_ENCRYPTED_SECRET");
	return 0;
}

long
pc_tpm_activate(struct pc_tpm *tpm, const uint8_t *blob, size_t blob_len, const uint8_t *secret,
		size_t secret_len, uint8_t *out, size_t max, struct pc_error *err)
{
	ESYS_TR ak = ESYS_TR_NONE, ek = ESYS_TR_NONE, session = ESYS_TR_NONE;
	TPM2B_ID_OBJECT id = { 0 };
	TPM2B_ENCRYPTED_SECRET enc = { 0 };
	TPM2B_DIGEST *cert = NULL;
	long n = -1;

	if (unmarshal(blob, blob_len, secret, secret_len, &id, &enc, err) != 0)
		return -1;
	if (pc_tpm_ak_load(tpm, &ak, NULL, err) != 0 || pc_tpm_ek_load(tpm, &ek, NULL, err) != 0 ||
	    ek_session(tpm, &session, err) != 0)
		goto out;
	TSS2_RC rc = Esys_ActivateCredential(tpm->esys, ak, ek, ESYS_TR_PASSWORD, session,
					     ESYS_TR_NONE, &id, &enc, &cert);
	if (rc != TSS2_RC_SUCCESS) {
		pc_tpm_fail(err, rc, "TPM2_ActivateCredential");
		goto out;
	}
	if (cert->size > max) {
		pc_error_set(err, "the credential is %u bytes, more than %zu", cert->size, max);
		goto out;
	}
	memcpy(out, cert->buffer, cert->size);
	n = cert->size;
out:
	if (cert != NULL) {
		memset(cert->buffer, 0, sizeof(cert->buffer));
		Esys_Free(cert);
	}
	pc_tpm_flush(tpm, &session);
	pc_tpm_flush(tpm, &ek);
	pc_tpm_flush(tpm, &ak);
	return n;
}
