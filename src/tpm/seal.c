/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sodium.h>
#include <tss2/tss2_mu.h>

#include "base/base64.h"
#include "base/fileio.h"
#include "seal.h"

#define FILE_MAX 4096

/* TCG's storage root key template (Provisioning Guidance): ECC P-256, AES-128-CFB. */
static int
srk_load(struct pc_tpm *tpm, ESYS_TR *srk, struct pc_error *err)
{
	const TPM2B_SENSITIVE_CREATE sens = { 0 };
	const TPM2B_DATA outside = { 0 };
	const TPML_PCR_SELECTION none = { 0 };
	TPM2B_PUBLIC t = { 0 };

	t.publicArea.type = TPM2_ALG_ECC;
	t.publicArea.nameAlg = TPM2_ALG_SHA256;
	t.publicArea.objectAttributes = TPMA_OBJECT_RESTRICTED | TPMA_OBJECT_DECRYPT |
	    TPMA_OBJECT_FIXEDTPM | TPMA_OBJECT_FIXEDPARENT | TPMA_OBJECT_SENSITIVEDATAORIGIN |
	    TPMA_OBJECT_USERWITHAUTH | TPMA_OBJECT_NODA;
	TPMS_ECC_PARMS *p = &t.publicArea.parameters.eccDetail;
	p->symmetric.algorithm = TPM2_ALG_AES;
	p->symmetric.keyBits.aes = 128;
	p->symmetric.mode.aes = TPM2_ALG_CFB;
	p->scheme.scheme = TPM2_ALG_NULL;
	p->curveID = TPM2_ECC_NIST_P256;
	p->kdf.scheme = TPM2_ALG_NULL;
	TSS2_RC rc = Esys_CreatePrimary(tpm->esys, ESYS_TR_RH_OWNER, ESYS_TR_PASSWORD, ESYS_TR_NONE,
					ESYS_TR_NONE, &sens, &t, &outside, &none, srk, NULL, NULL,
					NULL, NULL);
	if (rc != TSS2_RC_SUCCESS)
		return pc_tpm_fail(err, rc, "cannot create the storage root key");
	return 0;
}

static void
pcr_selection(uint32_t mask, TPML_PCR_SELECTION *sel)
{
	memset(sel, 0, sizeof(*sel));
	sel->count = 1;
	sel->pcrSelections[0].hash = TPM2_ALG_SHA256;
	sel->pcrSelections[0].sizeofSelect = 3;
	for (unsigned i = 0; i < 24; i++)
		if (mask & (1u << i))
			sel->pcrSelections[0].pcrSelect[i / 8] |= (uint8_t)(1u << (i % 8));
}

/* A session (trial or policy) with PolicyPCR over the PCRs' current values. */
static int
pcr_session(struct pc_tpm *tpm, TPM2_SE type, uint32_t mask, ESYS_TR *session, struct pc_error *err)
{
	const TPMT_SYM_DEF sym = { .algorithm = TPM2_ALG_NULL };
	const TPM2B_DIGEST current = { 0 };
	TPML_PCR_SELECTION sel;

	TSS2_RC rc =
	    Esys_StartAuthSession(tpm->esys, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE,
				  ESYS_TR_NONE, NULL, type, &sym, TPM2_ALG_SHA256, session);
	if (rc != TSS2_RC_SUCCESS)
		return pc_tpm_fail(err, rc, "TPM2_StartAuthSession");
	pcr_selection(mask, &sel);
	rc = Esys_PolicyPCR(tpm->esys, *session, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, &current,
			    &sel);
	if (rc != TSS2_RC_SUCCESS) {
		pc_tpm_flush(tpm, session);
		return pc_tpm_fail(err, rc, "TPM2_PolicyPCR");
	}
	return 0;
}

static int
seal(struct pc_tpm *tpm, const uint8_t seed[32], uint32_t mask, TPM2B_PUBLIC **pub,
     TPM2B_PRIVATE **priv, struct pc_error *err)
{
	ESYS_TR srk = ESYS_TR_NONE, trial = ESYS_TR_NONE;
	TPM2B_DIGEST *policy = NULL;
	TPM2B_SENSITIVE_CREATE sens = { 0 };
	const TPM2B_DATA outside = { 0 };
	const TPML_PCR_SELECTION none = { 0 };
	TPM2B_PUBLIC t = { 0 };
	int r = -1;

	if (srk_load(tpm, &srk, err) != 0 ||
	    pcr_session(tpm, TPM2_SE_TRIAL, mask, &trial, err) != 0)
		goto out;
	TSS2_RC rc = Esys_PolicyGetDigest(tpm->esys, trial, ESYS_TR_NONE, ESYS_TR_NONE,
					  ESYS_TR_NONE, &policy);
	if (rc != TSS2_RC_SUCCESS) {
		pc_tpm_fail(err, rc, "TPM2_PolicyGetDigest");
		goto out;
	}
	t.publicArea.type = TPM2_ALG_KEYEDHASH;
	t.publicArea.nameAlg = TPM2_ALG_SHA256;
	/* no userWithAuth: only the PCR policy releases it */
	t.publicArea.objectAttributes = TPMA_OBJECT_FIXEDTPM | TPMA_OBJECT_FIXEDPARENT;
	t.publicArea.authPolicy = *policy;
	t.publicArea.parameters.keyedHashDetail.scheme.scheme = TPM2_ALG_NULL;
	sens.sensitive.data.size = 32;
	memcpy(sens.sensitive.data.buffer, seed, 32);
	rc = Esys_Create(tpm->esys, srk, ESYS_TR_PASSWORD, ESYS_TR_NONE, ESYS_TR_NONE, &sens, &t,
			 &outside, &none, priv, pub, NULL, NULL, NULL);
	sodium_memzero(&sens, sizeof(sens));
	if (rc != TSS2_RC_SUCCESS) {
		pc_tpm_fail(err, rc, "TPM2_Create");
		goto out;
	}
	r = 0;
out:
	Esys_Free(policy);
	pc_tpm_flush(tpm, &trial);
	pc_tpm_flush(tpm, &srk);
	return r;
}

static void
put_b64(FILE *f, const char *key, const uint8_t *b, size_t n)
{
	char out[sodium_base64_ENCODED_LEN(sizeof(TPM2B_PRIVATE) + sizeof(TPM2B_PUBLIC),
					   sodium_base64_VARIANT_ORIGINAL)];
	sodium_bin2base64(out, sizeof(out), b, n, sodium_base64_VARIANT_ORIGINAL);
	fprintf(f, "%s: %s\n", key, out);
}

int
pc_sealed_key_write(struct pc_tpm *tpm, const struct pc_signer_key *k, uint32_t mask,
		    const char *path, struct pc_error *err)
{
	uint8_t seed[32], pubm[sizeof(TPM2B_PUBLIC)], privm[sizeof(TPM2B_PRIVATE)];
	TPM2B_PUBLIC *pub = NULL;
	TPM2B_PRIVATE *priv = NULL;
	size_t publen = 0, privlen = 0;

	crypto_sign_ed25519_sk_to_seed(seed, k->sk);
	int r = seal(tpm, seed, mask, &pub, &priv, err);
	sodium_memzero(seed, sizeof(seed));
	if (r != 0)
		return -1;
	Tss2_MU_TPM2B_PUBLIC_Marshal(pub, pubm, sizeof(pubm), &publen);
	Tss2_MU_TPM2B_PRIVATE_Marshal(priv, privm, sizeof(privm), &privlen);
	Esys_Free(pub);
	Esys_Free(priv);
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
	FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
	if (f == NULL) {
		if (fd >= 0)
			close(fd);
		return pc_error_errno(err, "%s", path);
	}
	fputs(PC_SEALED_MAGIC, f);
	fprintf(f, "name: %s\nkey-id: %08x\npcrs: %06x\n", k->name, k->id, mask);
	put_b64(f, "public", pubm, publen);
	put_b64(f, "private", privm, privlen);
	if (fflush(f) != 0 || fsync(fileno(f)) != 0) {
		fclose(f);
		unlink(path);
		return pc_error_errno(err, "%s", path);
	}
	fclose(f);
	return 0;
}

struct sealed_file {
	char name[PC_KEY_NAME_LEN];
	unsigned id, mask;
	uint8_t pub[sizeof(TPM2B_PUBLIC)], priv[sizeof(TPM2B_PRIVATE)];
	size_t publen, privlen;
};

static int
field(const char *text, const char *key, char *out, size_t max)
{
	const char *p = strstr(text, key);
	if (p == NULL || (p != text && p[-1] != '\n'))
		return -1;
	p += strlen(key);
	size_t n = strcspn(p, "\n");
	if (n >= max)
		return -1;
	memcpy(out, p, n);
	out[n] = '\0';
	return 0;
}

static int
parse(const char *text, struct sealed_file *s, struct pc_error *err)
{
	char pub[2 * sizeof(TPM2B_PUBLIC)], priv[2 * sizeof(TPM2B_PRIVATE)], id[16], mask[16];

	if (strncmp(text, PC_SEALED_MAGIC, strlen(PC_SEALED_MAGIC)) != 0 ||
	    field(text, "name: ", s->name, sizeof(s->name)) != 0 ||
	    field(text, "key-id: ", id, sizeof(id)) != 0 ||
	    field(text, "pcrs: ", mask, sizeof(mask)) != 0 ||
	    field(text, "public: ", pub, sizeof(pub)) != 0 ||
	    field(text, "private: ", priv, sizeof(priv)) != 0 || sscanf(id, "%8x", &s->id) != 1 ||
	    sscanf(mask, "%6x", &s->mask) != 1 ||
	    pc_base64_decode(s->pub, sizeof(s->pub), pub, strlen(pub), &s->publen) != 0 ||
	    pc_base64_decode(s->priv, sizeof(s->priv), priv, strlen(priv), &s->privlen) != 0)
		return pc_error_set(err, "not a sealed-key file (podcap-attest seal writes them)");
	return 0;
}

static int
unseal(struct pc_tpm *tpm, const struct sealed_file *s, uint8_t seed[32], struct pc_error *err)
{
	ESYS_TR srk = ESYS_TR_NONE, obj = ESYS_TR_NONE, session = ESYS_TR_NONE;
	TPM2B_PUBLIC pub = { 0 };
	TPM2B_PRIVATE priv = { 0 };
	TPM2B_SENSITIVE_DATA *data = NULL;
	size_t o1 = 0, o2 = 0;
	int r = -1;

	if (Tss2_MU_TPM2B_PUBLIC_Unmarshal(s->pub, s->publen, &o1, &pub) != TSS2_RC_SUCCESS ||
	    Tss2_MU_TPM2B_PRIVATE_Unmarshal(s->priv, s->privlen, &o2, &priv) != TSS2_RC_SUCCESS)
		return pc_error_set(err, "the sealed object does not unmarshal");
	if (srk_load(tpm, &srk, err) != 0)
		return -1;
	TSS2_RC rc = Esys_Load(tpm->esys, srk, ESYS_TR_PASSWORD, ESYS_TR_NONE, ESYS_TR_NONE, &priv,
			       &pub, &obj);
	if (rc != TSS2_RC_SUCCESS) {
		pc_tpm_fail(err, rc,
			    "TPM2_Load (sealed by another TPM, or its owner was cleared?)");
		goto out;
	}
	if (pcr_session(tpm, TPM2_SE_POLICY, s->mask, &session, err) != 0)
		goto out;
	rc = Esys_Unseal(tpm->esys, obj, session, ESYS_TR_NONE, ESYS_TR_NONE, &data);
	if (rc != TSS2_RC_SUCCESS) {
		pc_tpm_fail(err, rc, "TPM2_Unseal");
		pc_error_prefix(err, "the PCRs are not those the key was sealed to");
		goto out;
	}
	if (data->size != 32) {
		pc_error_set(err, "the sealed object holds %u bytes, not a 32-byte seed",
			     data->size);
		goto out;
	}
	memcpy(seed, data->buffer, 32);
	r = 0;
out:
	if (data != NULL) {
		sodium_memzero(data, sizeof(*data));
		Esys_Free(data);
	}
	pc_tpm_flush(tpm, &session);
	pc_tpm_flush(tpm, &obj);
	pc_tpm_flush(tpm, &srk);
	return r;
}

struct pc_signer_key *
pc_sealed_key_unseal(struct pc_tpm *tpm, const char *path, uint32_t *mask, struct pc_error *err)
{
	static struct sealed_file s;
	char text[FILE_MAX];
	uint8_t *seed = sodium_malloc(32);

	long n = pc_read_small_at(AT_FDCWD, path, text, sizeof(text));
	if (n < 0) {
		pc_error_errno(err, "%s", path);
		sodium_free(seed);
		return NULL;
	}
	text[n] = '\0';
	struct pc_signer_key *k = NULL;
	if (seed == NULL || parse(text, &s, err) != 0 || unseal(tpm, &s, seed, err) != 0)
		goto out;
	k = pc_signer_key_from_seed(s.name, seed);
	if (k == NULL) {
		pc_error_set(err, "the sealed key's name '%.80s' is not a key name", s.name);
	} else if (k->id != s.id) {
		pc_error_set(err, "the unsealed key's id is %08x but the file names %08x", k->id,
			     s.id);
		pc_signer_key_free(k);
		k = NULL;
	}
	*mask = s.mask;
out:
	if (seed != NULL)
		sodium_free(seed);
	return k;
}
