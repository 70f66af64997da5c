/* SPDX-License-Identifier: BSD-3-Clause */
/* The tree's SHA-256 through libcrypto (sha256_libcrypto.c). */
#ifndef PODCAP_SHA256_LIBCRYPTO_H
#define PODCAP_SHA256_LIBCRYPTO_H

#include <stddef.h>
#include <stdint.h>

#include "merkle.h"

/* A pc_sha256_fn; libsodium's result should libcrypto fail. */
void pc_sha256_libcrypto(uint8_t prefix, const uint8_t *a, size_t alen, const uint8_t *b,
			 size_t blen, uint8_t out[PC_HASH_LEN]);
/* Installs it for the tree once it gives libsodium's bytes; -1 (and libsodium's kept) if not. */
int pc_sha256_use_libcrypto(void);

#endif /* PODCAP_SHA256_LIBCRYPTO_H */
