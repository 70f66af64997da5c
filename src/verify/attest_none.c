/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The verifier built without libcrypto or tpm2-tss's marshalling: no
 * quote can be checked, so --attest is refused (verify/attest_quote.h).
 */
#include <stddef.h>

#include "attest.h"
#include "attest_quote.h"

int
pc_verify_attest_available(void)
{
	return 0;
}

void *
pcv_attest_key(const char *pem, struct pc_error *err)
{
	(void)pem;
	pc_error_set(err,
		     "this podcap-verify was built without attestation "
		     "(libcrypto and tpm2-tss's libtss2-mu)");
	return NULL;
}

void
pcv_attest_key_free(void *ak)
{
	(void)ak;
}

int
pcv_attest_quote(const struct pcv_quote_ctx *q, uint64_t index, const struct pc_record *r,
		 char *why)
{
	(void)q, (void)index, (void)r;
	why[0] = '\0';
	return -1;
}
