/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The AK's and the EK's templates, and making them primaries of the
 * endorsement hierarchy. A primary key is derived from the hierarchy's
 * seed and its template alone, so these give the same keys on the same
 * TPM every time (until the endorsement seed changes).
 */
#include <string.h>

#include <tss2/tss2_mu.h>

#include "tpm.h"

/* TCG EK Credential Profile 2.0, B.3.3: PolicySecret(TPM_RH_ENDORSEMENT). */
static const uint8_t ek_policy_a[32] = {
	0x83, 0x71, 0x97, 0x67, 0x44, 0x84, 0xb3, 0xf8, 0x1a, 0x90, 0xcc,
	0x8d, 0x46, 0xa5, 0xd7, 0x24, 0xfd, 0x52, 0xd7, 0x6e, 0x06, 0x52,
	0x0b, 0x64, 0xf2, 0xa1, 0xda, 0x1b, 0x33, 0x14, 0x69, 0xaa,
};

static void
ak_template(TPM2B_PUBLIC *t)
{
	memset(t, 0, sizeof(*t));
	t->publicArea.type = TPM2_ALG_ECC;
	t->publicArea.nameAlg = TPM2_ALG_SHA256;
	t->publicArea.objectAttributes = TPMA_OBJECT_RESTRICTED | TPMA_OBJECT_SIGN_ENCRYPT |
	    TPMA_OBJECT_FIXEDTPM | TPMA_OBJECT_FIXEDPARENT | TPMA_OBJECT_SENSITIVEDATAORIGIN |
	    TPMA_OBJECT_USERWITHAUTH;
	TPMS_ECC_PARMS *p = &t->publicArea.parameters.eccDetail;
	p->symmetric.algorithm = TPM2_ALG_NULL;
	p->scheme.scheme = TPM2_ALG_ECDSA;
	p->scheme.details.ecdsa.hashAlg = TPM2_ALG_SHA256;
	p->curveID = TPM2_ECC_NIST_P256;
	p->kdf.scheme = TPM2_ALG_NULL;
}

static void
ek_template(TPM2B_PUBLIC *t)
{
	memset(t, 0, sizeof(*t));
	t->publicArea.type = TPM2_ALG_RSA;
	t->publicArea.nameAlg = TPM2_ALG_SHA256;
	t->publicArea.objectAttributes = TPMA_OBJECT_FIXEDTPM | TPMA_OBJECT_FIXEDPARENT |
	    TPMA_OBJECT_SENSITIVEDATAORIGIN | TPMA_OBJECT_ADMINWITHPOLICY | TPMA_OBJECT_RESTRICTED |
	    TPMA_OBJECT_DECRYPT;
	t->publicArea.authPolicy.size = sizeof(ek_policy_a);
	memcpy(t->publicArea.authPolicy.buffer, ek_policy_a, sizeof(ek_policy_a));
	TPMS_RSA_PARMS *p = &t->publicArea.parameters.rsaDetail;
	p->symmetric.algorithm = TPM2_ALG_AES;
	p->symmetric.keyBits.aes = 128;
	p->symmetric.mode.aes = TPM2_ALG_CFB;
	p->scheme.scheme = TPM2_ALG_NULL;
	p->keyBits = 2048;
	p->exponent = 0;
	/* template L-1 fills the unique field with 256 zero bytes */
	t->publicArea.unique.rsa.size = 256;
}

static int
export_key(struct pc_tpm *tpm, ESYS_TR handle, const TPM2B_PUBLIC *pub, struct pc_tpm_key *key,
	   struct pc_error *err)
{
	TPM2B_NAME *name = NULL;
	size_t off = 0;

	TSS2_RC rc = Tss2_MU_TPM2B_PUBLIC_Marshal(pub, key->pub, sizeof(key->pub), &off);
	if (rc != TSS2_RC_SUCCESS)
		return pc_tpm_fail(err, rc, "cannot marshal the public key");
	key->pub_len = off;
	rc = Esys_TR_GetName(tpm->esys, handle, &name);
	if (rc != TSS2_RC_SUCCESS)
		return pc_tpm_fail(err, rc, "cannot read the key's name");
	memcpy(key->name, name->name, name->size);
	key->name_len = name->size;
	Esys_Free(name);
	return 0;
}

static int
create_primary(struct pc_tpm *tpm, const TPM2B_PUBLIC *tmpl, const char *what, ESYS_TR *handle,
	       struct pc_tpm_key *key, struct pc_error *err)
{
	const TPM2B_SENSITIVE_CREATE sens = { 0 };
	const TPM2B_DATA outside = { 0 };
	const TPML_PCR_SELECTION none = { 0 };
	TPM2B_PUBLIC *pub = NULL;

	*handle = ESYS_TR_NONE;
	TSS2_RC rc = Esys_CreatePrimary(tpm->esys, ESYS_TR_RH_ENDORSEMENT, ESYS_TR_PASSWORD,
					ESYS_TR_NONE, ESYS_TR_NONE, &sens, tmpl, &outside, &none,
					handle, &pub, NULL, NULL, NULL);
	if (rc != TSS2_RC_SUCCESS) {
		pc_tpm_fail(err, rc, "TPM2_CreatePrimary");
		return pc_error_prefix(err, "cannot create the %s", what);
	}
	int r = key != NULL ? export_key(tpm, *handle, pub, key, err) : 0;
	Esys_Free(pub);
	if (r != 0) {
		pc_tpm_flush(tpm, handle);
		return pc_error_prefix(err, "%s", what);
	}
	return 0;
}

int
pc_tpm_ak_load(struct pc_tpm *tpm, ESYS_TR *handle, struct pc_tpm_key *key, struct pc_error *err)
{
	TPM2B_PUBLIC t;

	ak_template(&t);
	return create_primary(tpm, &t, "attestation key", handle, key, err);
}

int
pc_tpm_ek_load(struct pc_tpm *tpm, ESYS_TR *handle, struct pc_tpm_key *key, struct pc_error *err)
{
	TPM2B_PUBLIC t;

	ek_template(&t);
	return create_primary(tpm, &t, "endorsement key", handle, key, err);
}
