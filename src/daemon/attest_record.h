/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * An ATTEST record for the ledger thread (docs/attestation.md): the
 * signer's quote of the checkpoint just published, and the IMA list read
 * after it (so that the list holds at least every measurement the quoted
 * PCR covers).
 */
#ifndef PODCAPD_ATTEST_RECORD_H
#define PODCAPD_ATTEST_RECORD_H

#include <stddef.h>
#include <stdint.h>

#include "podmap/config.h"

#include "signer.h"

struct pc_attest_due {
	uint8_t digest[PC_DIGEST_LEN]; /* the pod map in force */
	uint64_t cursor_ns;            /* where the log's windows end */
	uint64_t window_ns;
};

/*
 * The encoded ATTEST record, malloc'd, and its length in *len; NULL when
 * the signer gave no quote (logged). ima_log "" for none.
 */
uint8_t *pc_attest_record(struct pc_signer *signer, const char *appliance_id,
			  const uint8_t build_id[32], const struct pc_attest_due *due,
			  const char *ima_log, size_t *len);

#endif /* PODCAPD_ATTEST_RECORD_H */
