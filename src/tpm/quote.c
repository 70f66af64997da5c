/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * TPM2_Quote over the SHA-256 bank, and the PCR values it covers. The values
 * are read after the quote and must hash to the quote's PCR digest: a PCR
 * extended in between gives other values, and the pair is taken again.
 */
#include <string.h>

#include <sodium.h>
#include <tss2/tss2_mu.h>

#include "quote.h"

#define TRIES 4

static void
selection(uint32_t mask, TPML_PCR_SELECTION *sel)
{
	memset(sel, 0, sizeof(*sel));
	sel->count = 1;
	sel->pcrSelections[0].hash = TPM2_ALG_SHA256;
	sel->pcrSelections[0].sizeofSelect = 3;
	for (unsigned i = 0; i < PC_ATTEST_PCRS; i++)
		if (mask & (1u << i))
			sel->pcrSelections[0].pcrSelect[i / 8] |= (uint8_t)(1u << (i % 8));
}

/* The values of the PCRs in mask, in increasing order; TPM2_PCR_Read returns at most 8 a call. */
static int
read_pcrs(struct pc_tpm *tpm, uint32_t mask, uint8_t out[][32], struct pc_error *err)
{
	unsigned n = 0;

	for (unsigned i = 0; i < PC_ATTEST_PCRS; i++) {
		if (!(mask & (1u << i)))
			continue;
		TPML_PCR_SELECTION sel, *got = NULL;
		TPML_DIGEST *vals = NULL;
		UINT32 counter;

		selection(1u << i, &sel);
		TSS2_RC rc = Esys_PCR_Read(tpm->esys, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE,
					   &sel, &counter, &got, &vals);
		if (rc != TSS2_RC_SUCCESS)
			return pc_tpm_fail(err, rc, "TPM2_PCR_Read");
		int ok = vals->count == 1 && vals->digests[0].size == 32;
		if (ok)
			memcpy(out[n++], vals->digests[0].buffer, 32);
		Esys_Free(got);
		Esys_Free(vals);
		if (!ok)
			return pc_error_set(err, "the TPM has no SHA-256 bank for PCR %u", i);
	}
	return 0;
}

/* The PCR digest inside a marshalled quote, checked to be a quote of sel by the AK. */
static int
quoted_digest(const uint8_t *quote, size_t len, uint8_t digest[32], struct pc_error *err)
{
	TPMS_ATTEST a;
	size_t off = 0;

	memset(&a, 0, sizeof(a));
	if (Tss2_MU_TPMS_ATTEST_Unmarshal(quote, len, &off, &a) != TSS2_RC_SUCCESS || off != len ||
	    a.type != TPM2_ST_ATTEST_QUOTE || a.attested.quote.pcrDigest.size != 32)
		return pc_error_set(err, "the TPM's quote is not a TPMS_ATTEST of a SHA-256 quote");
	memcpy(digest, a.attested.quote.pcrDigest.buffer, 32);
	return 0;
}

static int
quote_once(struct pc_tpm *tpm, ESYS_TR ak, const uint8_t qual[32], struct pc_record_attest *out,
	   struct pc_error *err)
{
	const TPMT_SIG_SCHEME scheme = { .scheme = TPM2_ALG_NULL };
	TPM2B_DATA data = { .size = 32 };
	TPML_PCR_SELECTION sel;
	TPM2B_ATTEST *quoted = NULL;
	TPMT_SIGNATURE *sig = NULL;
	size_t off = 0;

	memcpy(data.buffer, qual, 32);
	selection(out->pcr_mask, &sel);
	TSS2_RC rc = Esys_Quote(tpm->esys, ak, ESYS_TR_PASSWORD, ESYS_TR_NONE, ESYS_TR_NONE, &data,
				&scheme, &sel, &quoted, &sig);
	if (rc != TSS2_RC_SUCCESS)
		return pc_tpm_fail(err, rc, "TPM2_Quote");
	int r = -1;
	if (quoted->size > sizeof(out->quote)) {
		pc_error_set(err, "a quote of %u bytes", quoted->size);
		goto out;
	}
	memcpy(out->quote, quoted->attestationData, quoted->size);
	out->quote_len = quoted->size;
	rc = Tss2_MU_TPMT_SIGNATURE_Marshal(sig, out->sig, sizeof(out->sig), &off);
	if (rc != TSS2_RC_SUCCESS) {
		pc_tpm_fail(err, rc, "cannot marshal the quote's signature");
		goto out;
	}
	out->sig_len = (uint16_t)off;
	r = 0;
out:
	Esys_Free(quoted);
	Esys_Free(sig);
	return r;
}

int
pc_tpm_quote(struct pc_tpm *tpm, ESYS_TR ak, uint32_t mask, const uint8_t qual[32],
	     struct pc_record_attest *out, struct pc_error *err)
{
	uint8_t want[32], got[32];

	out->pcr_alg = PC_TPM_ALG_SHA256;
	out->pcr_mask = mask;
	for (int t = 0; t < TRIES; t++) {
		if (quote_once(tpm, ak, qual, out, err) != 0 ||
		    quoted_digest(out->quote, out->quote_len, want, err) != 0 ||
		    read_pcrs(tpm, mask, out->pcr, err) != 0)
			return -1;
		crypto_hash_sha256(got, &out->pcr[0][0], 32 * pc_record_attest_npcrs(mask));
		if (sodium_memcmp(got, want, 32) == 0)
			return 0;
	}
	return pc_error_set(err, "the PCRs changed under every one of %d quotes", TRIES);
}
