/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A verifier's attestation policy (podcap-verify --attest FILE; YAML,
 * docs/attestation.md): the enrolled AK, what the quoted PCRs must hold,
 * which podcapd builds are expected with the SHA-256 of their files, and
 * how many windows may pass after a quote.
 */
#ifndef PODCAP_ATTEST_POLICY_H
#define PODCAP_ATTEST_POLICY_H

#include <stdint.h>

#include "base/error.h"

#define PC_POLICY_MAX_BUILDS 16
#define PC_POLICY_PEM_MAX    1024

struct pc_attest_policy {
	char ak_pem[PC_POLICY_PEM_MAX]; /* the AK's PEM public key (the enrolment's ak-pem) */
	uint8_t ak_name[34];            /* its TPM name; ak_name_len 0 when not given */
	unsigned ak_name_len;
	uint32_t pcr_mask;   /* PCRs whose values are fixed: bit i = PCR i */
	uint8_t pcr[24][32]; /* indexed by PCR number */
	unsigned ima_pcr;    /* the PCR IMA extends; default 10 */
	unsigned nbuilds;    /* 0: no IMA requirement */
	struct {
		uint8_t build_id[32]; /* BLAKE2b-256 of the file: what records carry */
		uint8_t sha256[32];   /* SHA-256 of the same file: what IMA measures */
	} builds[PC_POLICY_MAX_BUILDS];
	uint64_t max_windows; /* windows a quote covers after it; required */
};

/* Loads and checks a policy file. 0, or -1 with err (file:line:col when it has a place). */
int pc_attest_policy_load(const char *path, struct pc_attest_policy *p, struct pc_error *err);

#endif /* PODCAP_ATTEST_POLICY_H */
