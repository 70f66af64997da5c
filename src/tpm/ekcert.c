/* SPDX-License-Identifier: BSD-3-Clause */
/* The EK certificate the TPM's manufacturer wrote into its NV memory. */
#include <string.h>

#include "tpm.h"

/* TCG EK Credential Profile 2.0, 2.2.1.4: the RSA 2048 EK certificate */
#define EK_CERT_RSA2048 0x01c00002u
/* how much of an NV index one TPM2_NV_Read returns on every TPM seen */
#define NV_CHUNK 512

static int
nv_defined(struct pc_tpm *tpm, TPM2_HANDLE index, struct pc_error *err)
{
	TPMS_CAPABILITY_DATA *cap = NULL;
	TPMI_YES_NO more;

	TSS2_RC rc = Esys_GetCapability(tpm->esys, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE,
					TPM2_CAP_HANDLES, index, 1, &more, &cap);
	if (rc != TSS2_RC_SUCCESS)
		return pc_tpm_fail(err, rc, "TPM2_GetCapability(handles)");
	int found = cap->data.handles.count == 1 && cap->data.handles.handle[0] == index;
	Esys_Free(cap);
	return found;
}

static long
nv_read(struct pc_tpm *tpm, ESYS_TR nv, uint8_t *out, size_t max, struct pc_error *err)
{
	TPM2B_NV_PUBLIC *pub = NULL;

	TSS2_RC rc =
	    Esys_NV_ReadPublic(tpm->esys, nv, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, &pub, NULL);
	if (rc != TSS2_RC_SUCCESS)
		return pc_tpm_fail(err, rc, "TPM2_NV_ReadPublic");
	size_t size = pub->nvPublic.dataSize;
	Esys_Free(pub);
	if (size > max)
		return pc_error_set(err, "%zu bytes, more than the %zu podcap takes", size, max);
	for (size_t off = 0; off < size;) {
		TPM2B_MAX_NV_BUFFER *data = NULL;
		UINT16 n = size - off < NV_CHUNK ? (UINT16)(size - off) : NV_CHUNK;
		rc = Esys_NV_Read(tpm->esys, nv, nv, ESYS_TR_PASSWORD, ESYS_TR_NONE, ESYS_TR_NONE,
				  n, (UINT16)off, &data);
		if (rc != TSS2_RC_SUCCESS)
			return pc_tpm_fail(err, rc, "TPM2_NV_Read");
		memcpy(out + off, data->buffer, data->size);
		off += data->size;
		Esys_Free(data);
	}
	return (long)size;
}

long
pc_tpm_ek_cert(struct pc_tpm *tpm, uint8_t *out, size_t max, struct pc_error *err)
{
	ESYS_TR nv = ESYS_TR_NONE;

	int defined = nv_defined(tpm, EK_CERT_RSA2048, err);
	if (defined <= 0)
		return defined < 0 ? pc_error_prefix(err, "EK certificate") : 0;
	TSS2_RC rc = Esys_TR_FromTPMPublic(tpm->esys, EK_CERT_RSA2048, ESYS_TR_NONE, ESYS_TR_NONE,
					   ESYS_TR_NONE, &nv);
	if (rc != TSS2_RC_SUCCESS) {
		pc_tpm_fail(err, rc, "TPM2_NV_ReadPublic");
		return pc_error_prefix(err, "EK certificate (NV index 0x%08x)", EK_CERT_RSA2048);
	}
	long n = nv_read(tpm, nv, out, max, err);
	Esys_TR_Close(tpm->esys, &nv);
	if (n < 0)
		return pc_error_prefix(err, "EK certificate (NV index 0x%08x)", EK_CERT_RSA2048);
	return n;
}
