/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * C2SP signed notes and tlog checkpoints.
 *
 * A checkpoint body is three lines:
 *   <origin>\n<tree size, decimal>\n<base64 root hash>\n
 * optionally followed by extension lines. The signed note is the body, an
 * empty line, and one signature line per signer:
 *   \u2014 <key name> <base64(4-byte key id || 64-byte Ed25519 signature)>\n
 * The Ed25519 signature is over the body bytes.
 */
#ifndef PODCAP_NOTE_H
#define PODCAP_NOTE_H

#include <stddef.h>
#include <stdint.h>

#include "base/keys.h"
#include "merkle.h"

#define PC_NOTE_MAX 4096

/*
 * The one decimal of checkpoints and of tlog-witness (tree sizes, old
 * sizes): digits only, no leading zero unless "0", no overflow. 0 or -1.
 */
int pc_decimal_parse(const char *s, size_t len, uint64_t *out);

struct pc_checkpoint {
	char origin[PC_KEY_NAME_LEN];
	uint64_t size;
	uint8_t root[PC_HASH_LEN];
	char extra[1024];   /* extension lines after the third, each ending in \n; "" if none */
};

/*
 * Body text of a checkpoint; returns its length, or 0 if buf is too small or
 * cp would not parse back (empty origin or one with a newline, extension
 * lines that are empty or not newline-terminated).
 */
size_t pc_checkpoint_body(const struct pc_checkpoint *cp, char *buf, size_t len);
int pc_checkpoint_parse_body(const char *body, size_t len, struct pc_checkpoint *cp, struct pc_error *err);

/*
 * The signed note for `body` (which must end in a newline) with one signature
 * line made from a raw Ed25519 signature: body, "\n", signature line, into
 * out (NUL-terminated). Returns the note's length, or 0 if out is too small or
 * the body or key name is not valid.
 */
size_t pc_note_format(const char *body, size_t body_len, const char *key_name, uint32_t key_id,
		      const uint8_t sig[64], char *out, size_t outlen);
/* Sign body with the secret key (used inside the signer process only). */
void pc_note_sign_body(const struct pc_signer_key *k, const char *body, size_t body_len, uint8_t sig[64]);

/*
 * Verifies a signed note against vk: 0 when a signature line with vk's name
 * and id verifies; else -1 with err ("no signature by key X", "bad
 * signature", "malformed note"; valid until the thread's next call). On
 * success *body_len is the body's length (the body is note[0..body_len)).
 */
int pc_note_verify(const char *note, size_t len, const struct pc_verifier_key *vk,
		   size_t *body_len, struct pc_error *err);

/*
 * One signature line of a note, as pc_note_each_sig() hands it over: the
 * key name (not NUL-terminated), the key id and the bytes after it.
 */
struct pc_note_sig {
	const char *name;
	size_t name_len;
	uint32_t id;
	const uint8_t *sig; /* sig_len bytes after the 4-byte key id */
	size_t sig_len;
};
typedef int (*pc_note_sig_fn)(void *ctx, const struct pc_note_sig *s);

/*
 * Splits a note into its body and signature lines and calls fn on each
 * line, in order, until fn returns non-zero (which it then returns). A
 * note that is not well formed is -1 with err ("malformed note") before any
 * call. *body_len is the body's length, final newline included.
 */
int pc_note_each_sig(const char *note, size_t len, size_t *body_len, pc_note_sig_fn fn, void *ctx,
		     struct pc_error *err);

#endif /* PODCAP_NOTE_H */
