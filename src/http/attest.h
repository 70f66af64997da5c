/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef PODCAP_HTTP_ATTEST_H
#define PODCAP_HTTP_ATTEST_H

#include <stddef.h>
#include <stdint.h>

#include "log/ledger.h"

/*
 * The newest ATTEST record within the published checkpoint, at *buf + 8
 * (a malloc'd buffer of *cap bytes, grown when a record needs it), and its
 * index: its length, 0 when there is none, -1 when the ledger cannot be read.
 */
long pc_http_latest_attest(struct pc_ledger *l, uint8_t **buf, size_t *cap, uint64_t *index);

#endif /* PODCAP_HTTP_ATTEST_H */
