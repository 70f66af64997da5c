/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Which build is running: the release and the build id, the BLAKE2b-256
 * of the executable itself. START records carry the build id, so that a
 * verifier can tell which binary enforced a window; --version prints both,
 * so that an operator can match a ledger to the binary on a host.
 */
#ifndef PODCAP_BUILDID_H
#define PODCAP_BUILDID_H

#include <stdint.h>
#include <stdio.h>

#include "error.h"

/* meson.build's project version: meson passes it to every program it builds. */
#ifndef PODCAP_VERSION
#error "PODCAP_VERSION is set by meson.build"
#endif

#define PC_BUILD_ID_LEN 32

/* BLAKE2b-256 of /proc/self/exe. 0, or -1 with errno set. */
int pc_build_id(uint8_t out[PC_BUILD_ID_LEN]);
/*
 * What --version prints: "<prog> <version> build <64 hex digits>" and a
 * newline, to f. Pass PODCAP_VERSION as the caller sees it. 0, or -1 with
 * err set.
 */
int pc_version_print(FILE *f, const char *prog, const char *version, struct pc_error *err);

#endif /* PODCAP_BUILDID_H */
