/* SPDX-License-Identifier: BSD-3-Clause */
/* A quote for an ATTEST record (docs/log-format.md), by the AK. */
#ifndef PODCAP_TPM_QUOTE_H
#define PODCAP_TPM_QUOTE_H

#include "log/record.h"
#include "tpm.h"

/*
 * Quotes the SHA-256 PCRs in mask with qualifying data qual, and reads
 * their values: fills out's quote, sig, pcr_alg, pcr_mask and pcr. The
 * values hash to the quote's PCR digest. 0 or -1.
 */
int pc_tpm_quote(struct pc_tpm *tpm, ESYS_TR ak, uint32_t mask, const uint8_t qual[32],
		 struct pc_record_attest *out, struct pc_error *err);

#endif /* PODCAP_TPM_QUOTE_H */
