/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Ed25519 keys in C2SP signed-note form (libsodium).
 *
 * Verifier key (FILE.pub), one line:   <name>+<hex8 key id>+<base64(0x01 || 32-byte public key)>
 * Secret key (FILE, mode 0600), one line:
 *   PRIVATE+KEY+<name>+<hex8 key id>+<base64(0x01 || 32-byte seed)>
 * The key id is the first 4 bytes of SHA-256(name || 0x0A || 0x01 || public key),
 * big-endian, as C2SP signed-note specifies. `name` is the note's key name,
 * for podcap the appliance's log origin ("podcap/<appliance id>").
 */
#ifndef PODCAP_KEYS_H
#define PODCAP_KEYS_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"

#define PC_KEY_NAME_LEN 128

struct pc_verifier_key {
	char name[PC_KEY_NAME_LEN];
	uint32_t id;
	uint8_t pk[32];
};

/* Secret half: lives in sodium_malloc() memory, wiped and freed by pc_signer_key_free. */
struct pc_signer_key {
	char name[PC_KEY_NAME_LEN];
	uint32_t id;
	uint8_t sk[64];   /* libsodium's seed || public key */
	uint8_t pk[32];
};

uint32_t pc_key_id(const char *name, const uint8_t pk[32]);
/* The key id of the same public key under another signature type (0x04: cosig.h). */
uint32_t pc_key_id_alg(const char *name, uint8_t alg, const uint8_t pk[32]);

/* Parse a verifier-key string (trailing newline allowed). 0, or -1 with err. */
int pc_verifier_key_parse(const char *text, struct pc_verifier_key *vk, struct pc_error *err);
/* Format into buf (no newline); returns 0 or -1 if too small. */
int pc_verifier_key_format(const struct pc_verifier_key *vk, char *buf, size_t len);
/* The same for a vkey of signature type alg, whose id is pc_key_id_alg's. */
int pc_verifier_key_parse_alg(const char *text, uint8_t alg, struct pc_verifier_key *vk,
			      struct pc_error *err);
int pc_verifier_key_format_alg(const struct pc_verifier_key *vk, uint8_t alg, char *buf,
			       size_t len);
int pc_verifier_key_load(const char *path, struct pc_verifier_key *vk, struct pc_error *err);

/*
 * Load a secret key file: refuses one that is not a regular file (symbolic
 * links are followed: the file they lead to is checked), that group or others
 * can read or write, that someone other than this user or root owns, or that
 * does not parse, with a message in err. Returns a sodium_malloc'd key or NULL.
 */
struct pc_signer_key *pc_signer_key_load(const char *path, struct pc_error *err);
/* The key of a 32-byte Ed25519 seed (a sealed key's, src/tpm/seal.c), in sodium_malloc memory. */
struct pc_signer_key *pc_signer_key_from_seed(const char *name, const uint8_t seed[32]);
/* New random key named `name`. */
struct pc_signer_key *pc_signer_key_generate(const char *name);
/* Writes FILE (0600, O_EXCL: never overwrites) and FILE.pub. 0 or -1 with err. */
int pc_signer_key_save(const struct pc_signer_key *k, const char *path, struct pc_error *err);
void pc_signer_key_public(const struct pc_signer_key *k, struct pc_verifier_key *vk);
void pc_signer_key_free(struct pc_signer_key *k);

#endif /* PODCAP_KEYS_H */
