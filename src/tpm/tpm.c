/* SPDX-License-Identifier: BSD-3-Clause */
#include <stdlib.h>
#include <string.h>

#include <tss2/tss2_rc.h>
#include <tss2/tss2_tctildr.h>

#include "tpm.h"

int
pc_tpm_fail(struct pc_error *err, TSS2_RC rc, const char *what)
{
	return pc_error_set(err, "%s: %s", what, Tss2_RC_Decode(rc));
}

int
pc_tpm_open(struct pc_tpm *tpm, const char *tcti, struct pc_error *err)
{
	TSS2_RC rc;

	memset(tpm, 0, sizeof(*tpm));
	/* tpm2-tss logs its own errors to stderr; podcap reports them once, as errors */
	setenv("TSS2_LOG", "all+none", 0);
	rc = Tss2_TctiLdr_Initialize(tcti != NULL && *tcti != '\0' ? tcti : NULL, &tpm->tcti);
	if (rc != TSS2_RC_SUCCESS)
		return pc_tpm_fail(err, rc, tcti != NULL && *tcti != '\0' ? tcti : "default TCTI");
	rc = Esys_Initialize(&tpm->esys, tpm->tcti, NULL);
	if (rc != TSS2_RC_SUCCESS) {
		Tss2_TctiLdr_Finalize(&tpm->tcti);
		return pc_tpm_fail(err, rc, "cannot open the TPM's ESAPI context");
	}
	return 0;
}

void
pc_tpm_close(struct pc_tpm *tpm)
{
	if (tpm->esys != NULL)
		Esys_Finalize(&tpm->esys);
	if (tpm->tcti != NULL)
		Tss2_TctiLdr_Finalize(&tpm->tcti);
}

void
pc_tpm_flush(struct pc_tpm *tpm, ESYS_TR *handle)
{
	if (*handle == ESYS_TR_NONE)
		return;
	Esys_FlushContext(tpm->esys, *handle);
	*handle = ESYS_TR_NONE;
}
