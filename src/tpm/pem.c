/* SPDX-License-Identifier: BSD-3-Clause */
/* The AK's public key as the PEM SubjectPublicKeyInfo OpenSSL and tpm2-tools read. */
#include <string.h>

#include <sodium.h>
#include <tss2/tss2_mu.h>

#include "tpm.h"

#define P256_LEN 32

/* SEQUENCE { SEQUENCE { id-ecPublicKey, prime256v1 }, BIT STRING { 04 ... } } (RFC 5480) */
static const uint8_t spki_p256[] = {
	0x30, 0x59, 0x30, 0x13, 0x06, 0x07, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x02, 0x01, 0x06,
	0x08, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x03, 0x01, 0x07, 0x03, 0x42, 0x00, 0x04,
};

/* A coordinate the TPM may have sent without its leading zero bytes, at full width. */
static int
put_coord(uint8_t *out, const TPM2B_ECC_PARAMETER *c)
{
	if (c->size > P256_LEN)
		return -1;
	memset(out, 0, P256_LEN - c->size);
	memcpy(out + P256_LEN - c->size, c->buffer, c->size);
	return 0;
}

int
pc_tpm_ak_pem(const struct pc_tpm_key *ak, char out[PC_TPM_PEM_MAX], struct pc_error *err)
{
	uint8_t der[sizeof(spki_p256) + 2 * P256_LEN];
	char b64[sodium_base64_ENCODED_LEN(sizeof(der), sodium_base64_VARIANT_ORIGINAL)];
	TPM2B_PUBLIC pub = { 0 };
	size_t off = 0;

	if (Tss2_MU_TPM2B_PUBLIC_Unmarshal(ak->pub, ak->pub_len, &off, &pub) != TSS2_RC_SUCCESS ||
	    off != ak->pub_len)
		return pc_error_set(err, "the attestation key is not a TPM2B_PUBLIC");
	const TPMT_PUBLIC *p = &pub.publicArea;
	if (p->type != TPM2_ALG_ECC || p->parameters.eccDetail.curveID != TPM2_ECC_NIST_P256)
		return pc_error_set(err, "the attestation key is not an ECC NIST P-256 key");
	memcpy(der, spki_p256, sizeof(spki_p256));
	if (put_coord(der + sizeof(spki_p256), &p->unique.ecc.x) != 0 ||
	    put_coord(der + sizeof(spki_p256) + P256_LEN, &p->unique.ecc.y) != 0)
		return pc_error_set(err, "the attestation key's point is wider than P-256");
	sodium_bin2base64(b64, sizeof(b64), der, sizeof(der), sodium_base64_VARIANT_ORIGINAL);
	/* 120 base64 characters: two lines of at most 64 */
	snprintf(out, PC_TPM_PEM_MAX,
		 "-----BEGIN PUBLIC KEY-----\n%.64s\n%s\n-----END PUBLIC KEY-----\n", b64,
		 b64 + 64);
	return 0;
}
