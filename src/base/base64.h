/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Standard base64 (RFC 4648 section 4, padded), decoded strictly: keys,
 * checkpoint roots, signatures and proofs each have exactly one encoding.
 */
#ifndef PODCAP_BASE64_H
#define PODCAP_BASE64_H

#include <stddef.h>
#include <stdint.h>

/*
 * Decodes in[0..len) into out (at most outmax bytes): 0 with *outlen, or -1
 * if it is not padded standard base64 or does not fit. libsodium decodes;
 * every byte is first checked to be in the alphabet, because libsodium
 * 1.0.18 (Debian 12) decodes any byte >= 0x80 as if it were '/'.
 */
int pc_base64_decode(uint8_t *out, size_t outmax, const char *in, size_t len, size_t *outlen);

#endif /* PODCAP_BASE64_H */
