/* SPDX-License-Identifier: BSD-3-Clause */
/* The cap envelope (verify/envelope.c), as the series reads it. */
#ifndef PODCAP_VERIFY_ENVELOPE_H
#define PODCAP_VERIFY_ENVELOPE_H

#include <stdint.h>

#include "format.h"

struct pc_verify;

/*
 * Pod `pod`'s bound in direction d, in bit-ns, after the last window it
 * took: what that window could still have passed, below 0 over it.
 */
i128 pcv_envelope_level(const struct pc_verify *v, uint32_t pod, int d);

#endif /* PODCAP_VERIFY_ENVELOPE_H */
