/* SPDX-License-Identifier: BSD-3-Clause */
/* Enrolment: the AK, the EK and the EK certificate, read once and kept by an auditor. */
#ifndef PODCAP_TPM_ENROL_H
#define PODCAP_TPM_ENROL_H

#include "tpm.h"

struct pc_enrolment {
	struct pc_tpm_key ak;
	struct pc_tpm_key ek;
	uint8_t ek_cert[PC_TPM_CERT_MAX];
	size_t ek_cert_len; /* 0: the TPM has no RSA 2048 EK certificate */
};

/* The AK's and the EK's public parts and the EK certificate, from the TPM. 0 or -1. */
int pc_enrol_read(struct pc_tpm *tpm, struct pc_enrolment *e, struct pc_error *err);
/* The enrolment file's text (docs/attestation.md) into out: its length, or -1. */
long pc_enrol_format(const struct pc_enrolment *e, char *out, size_t max, struct pc_error *err);

#endif /* PODCAP_TPM_ENROL_H */
