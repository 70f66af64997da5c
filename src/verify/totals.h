/* SPDX-License-Identifier: BSD-3-Clause */
/* What the log says each pod passed and dropped (verify/totals.c), as others read it. */
#ifndef PODCAP_VERIFY_TOTALS_H
#define PODCAP_VERIFY_TOTALS_H

#include <stdint.h>

#include "verify.h"

/* Pod `pod`'s totals, one per direction. */
const struct pc_verify_totals *pcv_totals_of(const struct pc_verify *v, uint32_t pod);

#endif /* PODCAP_VERIFY_TOTALS_H */
