/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Checking the log's TPM quotes against an attestation policy
 * (podcap-verify --attest; docs/attestation.md, "Verifying"). Every ATTEST
 * record's quote must be signed by the policy's AK, commit to this log at
 * this record, and show PCRs the policy accepts; every window must lie
 * within the policy's max-windows of a valid quote of the same run. What
 * fails is a finding of check PC_VC_ATTEST, naming the record and why.
 */
#ifndef PODCAP_VERIFY_ATTEST_H
#define PODCAP_VERIFY_ATTEST_H

#include <stdint.h>
#include <stdio.h>

#include "attest_policy.h"
#include "verify.h"

/* Whether this build can check quotes (libcrypto and tpm2-tss's marshalling). */
int pc_verify_attest_available(void);
/* Turns the checks on; before the first record. 0, or -1 with err (a PEM that does not load). */
int pc_verify_set_attest(struct pc_verify *v, const struct pc_attest_policy *p,
			 struct pc_error *err);

struct pc_verify_attest_summary {
	uint64_t quotes_ok, quotes_refused;
	uint64_t windows_attested, windows_unattested;
	int64_t last_quote; /* the newest valid quote's record, -1 if none */
	uint8_t key_kind;   /* what it says signs the log: PC_KEY_FILE or PC_KEY_SEALED */
};
/* 0 and the counts, or -1 when the checks are off. */
int pc_verify_attest_summary(const struct pc_verify *v, struct pc_verify_attest_summary *s);

#endif /* PODCAP_VERIFY_ATTEST_H */
