/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Which build is running: the build id is the BLAKE2b-256 of the
 * executable itself. START records carry it, so that a verifier can tell
 * which binary enforced a window.
 */
#ifndef PODCAP_BUILDID_H
#define PODCAP_BUILDID_H

#include <stdint.h>

#define PC_BUILD_ID_LEN 32

/* BLAKE2b-256 of /proc/self/exe. 0, or -1 with errno set. */
int pc_build_id(uint8_t out[PC_BUILD_ID_LEN]);

#endif /* PODCAP_BUILDID_H */
