/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * One TPM quote against an attestation policy (verify/attest_quote.c, with
 * libcrypto and tpm2-tss's marshalling; verify/attest_none.c without): for
 * the attestation check, verify/attest.c.
 */
#ifndef PODCAP_VERIFY_ATTEST_QUOTE_H
#define PODCAP_VERIFY_ATTEST_QUOTE_H

#include <stdint.h>

#include "base/error.h"
#include "base/keys.h"
#include "log/merkle.h"
#include "log/record.h"

#include "attest_policy.h"

#define PCV_WHY_LEN 200

/* The policy's AK as a key to check signatures with; NULL and why in err when it is none. */
void *pcv_attest_key(const char *pem, struct pc_error *err);
void pcv_attest_key_free(void *ak);

/* What a quote is checked against. */
struct pcv_quote_ctx {
	const struct pc_attest_policy *policy;
	void *ak;                          /* pcv_attest_key's */
	const struct pc_verifier_key *key; /* the log's */
	const uint8_t *root_before;        /* the tree of the records before it */
	const uint8_t *digest;             /* the pod map in force */
};

/*
 * Record r, at `index`: its quote signed by the policy's AK, committing to
 * this log before it and showing PCRs (and an IMA list) the policy
 * accepts. 0, or -1 with why (PCV_WHY_LEN).
 */
int pcv_attest_quote(const struct pcv_quote_ctx *q, uint64_t index, const struct pc_record *r,
		     char *why);

#endif /* PODCAP_VERIFY_ATTEST_QUOTE_H */
