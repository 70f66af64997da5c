/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * One TPM quote against the attestation policy (verify/attest_quote.h),
 * checked with the TPM's own structures (tpm2-tss's marshalling library,
 * no TPM) and OpenSSL's ECDSA.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/bn.h>
#include <openssl/ecdsa.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <sodium.h>
#include <tss2/tss2_mu.h>

#include "base/hex.h"
#include "log/attest.h"

#include "attest.h"
#include "attest_quote.h"

int
pc_verify_attest_available(void)
{
	return 1;
}

void *
pcv_attest_key(const char *pem, struct pc_error *err)
{
	BIO *bio = BIO_new_mem_buf(pem, -1);
	EVP_PKEY *ak = bio != NULL ? PEM_read_bio_PUBKEY(bio, NULL, NULL, NULL) : NULL;

	BIO_free(bio);
	if (ak == NULL || EVP_PKEY_base_id(ak) != EVP_PKEY_EC) {
		EVP_PKEY_free(ak);
		pc_error_set(err, "ak-pem is not an EC public key");
		return NULL;
	}
	return ak;
}

void
pcv_attest_key_free(void *ak)
{
	EVP_PKEY_free(ak);
}

#define WHY_LEN PCV_WHY_LEN

/* The ECDSA signature over SHA-256(quote), by the policy's AK. */
static int
check_signature(EVP_PKEY *ak, const struct pc_record_attest *q, char *why)
{
	TPMT_SIGNATURE sig;
	size_t off = 0;
	int ok = 0;

	memset(&sig, 0, sizeof(sig));
	if (Tss2_MU_TPMT_SIGNATURE_Unmarshal(q->sig, q->sig_len, &off, &sig) != TSS2_RC_SUCCESS ||
	    off != q->sig_len || sig.sigAlg != TPM2_ALG_ECDSA ||
	    sig.signature.ecdsa.hash != TPM2_ALG_SHA256) {
		snprintf(why, WHY_LEN,
			 "the signature is not a TPMT_SIGNATURE of ECDSA with SHA-256");
		return -1;
	}
	ECDSA_SIG *es = ECDSA_SIG_new();
	BIGNUM *r = BN_bin2bn(sig.signature.ecdsa.signatureR.buffer,
			      sig.signature.ecdsa.signatureR.size, NULL);
	BIGNUM *s = BN_bin2bn(sig.signature.ecdsa.signatureS.buffer,
			      sig.signature.ecdsa.signatureS.size, NULL);
	unsigned char *der = NULL;
	int derlen = -1;
	if (es != NULL && r != NULL && s != NULL && ECDSA_SIG_set0(es, r, s) == 1) {
		r = s = NULL;
		derlen = i2d_ECDSA_SIG(es, &der);
	}
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();
	if (derlen > 0 && ctx != NULL &&
	    EVP_DigestVerifyInit(ctx, NULL, EVP_sha256(), NULL, ak) == 1)
		ok = EVP_DigestVerify(ctx, der, (size_t)derlen, q->quote, q->quote_len) == 1;
	EVP_MD_CTX_free(ctx);
	OPENSSL_free(der);
	BN_free(r);
	BN_free(s);
	ECDSA_SIG_free(es);
	if (!ok)
		snprintf(why, WHY_LEN,
			 "the quote's signature does not verify with the policy's AK "
			 "(a quote of another TPM, or altered)");
	return ok ? 0 : -1;
}

static int
check_selection(const TPMS_QUOTE_INFO *qi, const struct pc_record_attest *q, char *why)
{
	uint8_t digest[32];
	uint32_t mask = 0;

	if (qi->pcrSelect.count != 1 || qi->pcrSelect.pcrSelections[0].hash != TPM2_ALG_SHA256 ||
	    qi->pcrSelect.pcrSelections[0].sizeofSelect > 3) {
		snprintf(why, WHY_LEN, "the quote's PCR selection is not one SHA-256 bank");
		return -1;
	}
	for (unsigned i = 0; i < 8u * qi->pcrSelect.pcrSelections[0].sizeofSelect; i++)
		if (qi->pcrSelect.pcrSelections[0].pcrSelect[i / 8] & (1u << (i % 8)))
			mask |= 1u << i;
	crypto_hash_sha256(digest, &q->pcr[0][0], 32 * pc_record_attest_npcrs(q->pcr_mask));
	if (mask != q->pcr_mask || qi->pcrDigest.size != 32 ||
	    sodium_memcmp(digest, qi->pcrDigest.buffer, 32) != 0) {
		snprintf(why, WHY_LEN, "the record's PCR values are not the ones the TPM quoted");
		return -1;
	}
	return 0;
}

/* The value of PCR i as quoted, or NULL. */
static const uint8_t *
pcr_value(const struct pc_record_attest *q, unsigned i)
{
	if (!(q->pcr_mask & (1u << i)))
		return NULL;
	return q->pcr[pc_record_attest_npcrs(q->pcr_mask & ((1u << i) - 1))];
}

static int
check_policy_pcrs(const struct pc_attest_policy *p, const struct pc_record_attest *q, char *why)
{
	char want[65], got[65];

	for (unsigned i = 0; i < PC_ATTEST_PCRS; i++) {
		if (!(p->pcr_mask & (1u << i)))
			continue;
		const uint8_t *v = pcr_value(q, i);
		if (v == NULL) {
			snprintf(why, WHY_LEN, "PCR %u is not quoted; the policy fixes its value",
				 i);
			return -1;
		}
		if (memcmp(v, p->pcr[i], 32) != 0) {
			pc_hex(v, 32, got);
			pc_hex(p->pcr[i], 32, want);
			snprintf(why, WHY_LEN, "PCR %u is %.16s..., the policy expects %.16s...", i,
				 got, want);
			return -1;
		}
	}
	return 0;
}

/* SHA-256 of an ima-ng entry's fields, each after its 32-bit little-endian length. */
static void
ima_ng_hash(const uint8_t file[32], const char *path, size_t plen, uint8_t out[32])
{
	crypto_hash_sha256_state h;
	uint8_t len[4];
	static const char algo[] = "sha256:";

	crypto_hash_sha256_init(&h);
	uint32_t n = sizeof(algo) + 32; /* "sha256:" and its NUL, then the digest */
	memcpy(len, (uint8_t[]){ n, n >> 8, n >> 16, n >> 24 }, 4);
	crypto_hash_sha256_update(&h, len, 4);
	crypto_hash_sha256_update(&h, (const uint8_t *)algo, sizeof(algo));
	crypto_hash_sha256_update(&h, file, 32);
	n = (uint32_t)plen + 1;
	memcpy(len, (uint8_t[]){ n, n >> 8, n >> 16, n >> 24 }, 4);
	crypto_hash_sha256_update(&h, len, 4);
	crypto_hash_sha256_update(&h, (const uint8_t *)path, plen);
	crypto_hash_sha256_update(&h, (const uint8_t *)"", 1);
	crypto_hash_sha256_final(&h, out);
}

/* One line "PCR TEMPLATE-HASH ima-ng sha256:FILE-HASH PATH": 0, or -1 with why. */
static int
ima_line(const char *s, size_t len, unsigned pcr, uint8_t tmpl[32], uint8_t file[32], char *why,
	 unsigned lineno)
{
	char head[16];
	int n = snprintf(head, sizeof(head), "%u ", pcr);
	const char *p = s + n;

	if (len < (size_t)n + 64 + 1 + 7 + 7 + 64 + 2 || memcmp(s, head, (size_t)n) != 0 ||
	    !pc_unhex(p, 64, tmpl, 32) || memcmp(p + 64, " ima-ng sha256:", 15) != 0 ||
	    !pc_unhex(p + 79, 64, file, 32) || p[143] != ' ') {
		snprintf(why, WHY_LEN,
			 "IMA line %u is not 'PCR HASH ima-ng sha256:HASH PATH' for PCR %u", lineno,
			 pcr);
		return -1;
	}
	uint8_t want[32];
	ima_ng_hash(file, p + 144, len - (size_t)(p + 144 - s), want);
	if (memcmp(want, tmpl, 32) != 0) {
		snprintf(why, WHY_LEN,
			 "IMA line %u: its template hash is not that of its file hash and path",
			 lineno);
		return -1;
	}
	return 0;
}

/*
 * Replays the IMA list into the quoted PCR and looks, in the part that
 * replays to it, for a measurement of the record's build's file.
 */
static int
check_ima(const struct pc_attest_policy *p, const struct pc_record *r, char *why)
{
	const struct pc_record_attest *q = r->attest;
	const uint8_t *want = NULL, *quoted = pcr_value(q, p->ima_pcr);
	char b[65];

	pc_hex(r->build_id, 32, b);
	for (unsigned i = 0; i < p->nbuilds; i++)
		if (memcmp(p->builds[i].build_id, r->build_id, 32) == 0)
			want = p->builds[i].sha256;
	if (want == NULL) {
		snprintf(why, WHY_LEN, "build %.16s... is none of the policy's builds", b);
		return -1;
	}
	if (quoted == NULL) {
		snprintf(why, WHY_LEN, "PCR %u, IMA's, is not quoted", p->ima_pcr);
		return -1;
	}
	uint8_t pcr[32] = { 0 }, tmpl[32], file[32];
	bool found = false, matched = sodium_memcmp(pcr, quoted, 32) == 0;
	unsigned lineno = 0;
	for (size_t off = 0; off < q->ima_len && !matched; lineno++) {
		const char *s = (const char *)q->ima + off;
		const char *nl = memchr(s, '\n', q->ima_len - off);
		size_t len = nl != NULL ? (size_t)(nl - s) : q->ima_len - off;
		off += len + 1;
		if (ima_line(s, len, p->ima_pcr, tmpl, file, why, lineno + 1) != 0)
			return -1;
		uint8_t cat[64];
		memcpy(cat, pcr, 32);
		memcpy(cat + 32, tmpl, 32);
		crypto_hash_sha256(pcr, cat, 64);
		found |= memcmp(file, want, 32) == 0;
		matched = sodium_memcmp(pcr, quoted, 32) == 0;
	}
	if (!matched) {
		snprintf(why, WHY_LEN,
			 "the IMA list (%u lines) does not replay to the quoted PCR %u", lineno,
			 p->ima_pcr);
		return -1;
	}
	if (!found) {
		pc_hex(want, 32, b);
		snprintf(why, WHY_LEN,
			 "the IMA list that replays to PCR %u has no measurement of "
			 "this build's file (sha256 %.16s...)",
			 p->ima_pcr, b);
		return -1;
	}
	return 0;
}

static int
check_commitment(const struct pcv_quote_ctx *c, uint64_t index, const struct pc_record *r,
		 const TPMS_ATTEST *t, char *why)
{
	const struct pc_record_attest *q = r->attest;
	uint8_t qual[PC_ATTEST_QUAL_LEN];

	if (q->ckpt_size != index || memcmp(q->ckpt_root, c->root_before, 32) != 0) {
		snprintf(why, WHY_LEN,
			 "the quote commits to the checkpoint of size %" PRIu64
			 "%s, not to the log before this record (size %" PRIu64
			 "): a replayed quote",
			 q->ckpt_size, q->ckpt_size == index ? " with another root" : "", index);
		return -1;
	}
	pc_attest_qualifying(c->key, r->podmap_digest, r->build_id, q->ckpt_size, q->ckpt_root,
			     q->key_kind, qual);
	if (t->extraData.size != sizeof(qual) ||
	    sodium_memcmp(t->extraData.buffer, qual, 32) != 0) {
		snprintf(why, WHY_LEN,
			 "the quote's qualifying data does not commit to this log "
			 "(its key, pod map, build and checkpoint)");
		return -1;
	}
	/* the sequence fails the record too; a quote of another map attests none of these windows */
	if (memcmp(r->podmap_digest, c->digest, PC_DIGEST_LEN) != 0) {
		snprintf(why, WHY_LEN, "the quote names another pod map than the one in force");
		return -1;
	}
	return 0;
}

/*
 * A quote names its signer by qualified name: for a primary key of the
 * endorsement hierarchy, 000b || SHA-256(TPM_RH_ENDORSEMENT || its name)
 * (TPM 2.0 Part 1, 16 "Names").
 */
static bool
signed_by_ak(const struct pc_attest_policy *p, const TPMS_ATTEST *t)
{
	uint8_t buf[4 + sizeof(p->ak_name)], qn[34] = { 0x00, 0x0b };

	buf[0] = 0x40, buf[1] = 0x00, buf[2] = 0x00, buf[3] = 0x0b;
	memcpy(buf + 4, p->ak_name, p->ak_name_len);
	crypto_hash_sha256(qn + 2, buf, 4 + p->ak_name_len);
	return t->qualifiedSigner.size == sizeof(qn) &&
	    memcmp(t->qualifiedSigner.name, qn, sizeof(qn)) == 0;
}

int
pcv_attest_quote(const struct pcv_quote_ctx *c, uint64_t index, const struct pc_record *r,
		 char *why)
{
	const struct pc_record_attest *q = r->attest;
	TPMS_ATTEST t;
	size_t off = 0;

	memset(&t, 0, sizeof(t));
	if (Tss2_MU_TPMS_ATTEST_Unmarshal(q->quote, q->quote_len, &off, &t) != TSS2_RC_SUCCESS ||
	    off != q->quote_len || t.magic != TPM2_GENERATED_VALUE ||
	    t.type != TPM2_ST_ATTEST_QUOTE) {
		snprintf(why, WHY_LEN, "the quote is not a TPM-generated TPMS_ATTEST of a quote");
		return -1;
	}
	if (c->policy->ak_name_len != 0 && !signed_by_ak(c->policy, &t)) {
		snprintf(why, WHY_LEN, "the quote is by another key than the policy's AK");
		return -1;
	}
	if (check_signature(c->ak, q, why) != 0 || check_commitment(c, index, r, &t, why) != 0 ||
	    check_selection(&t.attested.quote, q, why) != 0 ||
	    check_policy_pcrs(c->policy, q, why) != 0)
		return -1;
	if (c->policy->nbuilds > 0 && check_ima(c->policy, r, why) != 0)
		return -1;
	return 0;
}
