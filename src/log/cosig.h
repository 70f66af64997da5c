/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * C2SP tlog-cosignature, the Ed25519 type cosignature/v1
 * (https://c2sp.org/tlog-cosignature): a witness's timestamped signature
 * over a checkpoint, carried as one more signature line of its note.
 *
 *   key id    = SHA-256(<name> || "\n" || 0x04 || 32-byte public key)[:4]
 *   line      = "\u2014 " <name> " " base64(key id || u64be timestamp || 64-byte signature) "\n"
 *   message   = "cosignature/v1\n" "time " <timestamp, decimal> "\n" <checkpoint body>
 *
 * The verifier key of a cosigner is a signed-note vkey of type 0x04:
 *   <name>+<hex8 key id>+<base64(0x04 || 32-byte public key)>
 * A witness's secret key is an ordinary podcap-keygen key (type 0x01 in
 * the file): the same Ed25519 key, whose cosignatures carry the 0x04 id.
 */
#ifndef PODCAP_COSIG_H
#define PODCAP_COSIG_H

#include <stddef.h>
#include <stdint.h>

#include "base/error.h"
#include "base/keys.h"

#define PC_COSIG_ALG      0x04
#define PC_COSIG_LINE_MAX (4 + PC_KEY_NAME_LEN + 1 + 104 + 2)
#define PC_COSIG_TIME_MAX INT64_MAX /* the spec: a timestamp never exceeds 2^63 - 1 */

uint32_t pc_cosig_key_id(const char *name, const uint8_t pk[32]);

/* The cosigner's verifier key: a 0x04 vkey, whose id must match. 0, or -1 with err. */
int pc_cosig_vkey_parse(const char *text, struct pc_verifier_key *vk, struct pc_error *err);
int pc_cosig_vkey_format(const struct pc_verifier_key *vk, char *buf, size_t len);
/* The cosigner's verifier key of a secret key (id recomputed for type 0x04). */
void pc_cosig_vkey_of(const struct pc_signer_key *k, struct pc_verifier_key *vk);

/*
 * Whether two cosigner keys are one witness's, which a quorum must count
 * once: the same public key (under any name), the same name (a witness is
 * a name and its key), or the same key id. What they share ("key": name
 * and public key; "public key", "name", "key id"), or NULL for two
 * witnesses.
 */
const char *pc_cosig_vkey_same(const struct pc_verifier_key *a, const struct pc_verifier_key *b);

/*
 * The signed message for a checkpoint body (ending in a newline) at time t,
 * into out (not NUL-terminated): its length, or 0 if out is too small, the
 * body does not end in a newline, or t exceeds 2^63 - 1.
 */
size_t pc_cosig_message(const char *body, size_t body_len, uint64_t t, char *out, size_t outlen);

/*
 * The cosignature line of k over body at time t, NUL-terminated in line
 * (at least PC_COSIG_LINE_MAX bytes): its length, or 0 on bad input.
 */
size_t pc_cosig_sign(const struct pc_signer_key *k, const char *body, size_t body_len, uint64_t t,
		     char *line, size_t linelen);

/*
 * Looks in a signed note for a cosignature by vk (name and 0x04 key id;
 * lines of other keys are ignored): 0 with *t its timestamp when one
 * verifies; else -1 with err ("no cosignature by ...", "bad cosignature by
 * ...", "malformed note", "cosignature ... has a timestamp past 2^63 - 1").
 */
int pc_cosig_verify(const char *note, size_t len, const struct pc_verifier_key *vk, uint64_t *t,
		    struct pc_error *err);

#endif /* PODCAP_COSIG_H */
