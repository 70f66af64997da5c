/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * An auditor's declaration: a C2SP signed note, kept next to a pod map (MAP.sig),
 * by which an auditor says that this pod map, for this appliance, may be
 * enforced between two times. Its body is exactly five lines:
 *
 *   podcap-declaration v1\n
 *   appliance <appliance id>\n
 *   podmap <64 lower-case hex digits: the pod map's canonical digest>\n
 *   not-before <UTC time, 2026-01-01T00:00:00Z, whole seconds>\n
 *   not-after <the same>\n
 *
 * signed by a key whose name begins with "auditor/". The declaration is in
 * force at t when not-before <= t < not-after. docs/config.md ("Auditor
 * declarations") has the format and the rules byte for byte.
 */
#ifndef PODCAP_DECLARATION_H
#define PODCAP_DECLARATION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "podmap/config.h"
#include "base/error.h"
#include "base/keys.h"

#define PC_DECL_HEADER     "podcap-declaration v1"
#define PC_DECL_KEY_PREFIX "auditor/"
#define PC_DECL_SUFFIX     ".sig"
#define PC_DECL_BODY_MAX   512
#define PC_DECL_MAX_KEYS   16

/* Why a declaration does not let a map run: the reasons podcapd counts. */
enum pc_decl_refusal {
	PC_DECL_UNSIGNED = 0,  /* no MAP.sig, or it cannot be read */
	PC_DECL_MALFORMED,     /* not a signed note, or its body not a declaration */
	PC_DECL_BAD_SIGNATURE, /* not signed by an auditor key, or a bad signature */
	PC_DECL_OTHER_APPLIANCE,
	PC_DECL_OTHER_MAP,
	PC_DECL_NOT_YET_VALID,
	PC_DECL_EXPIRED,
	PC_DECL_REFUSALS
};

/* "unsigned", "malformed", "bad_signature", ...: a metric's label value. */
const char *pc_declaration_refusal_name(enum pc_decl_refusal r);

struct pc_declaration {
	char appliance_id[PC_ID_LEN];
	uint8_t podmap_digest[PC_DIGEST_LEN];
	uint64_t not_before_ns; /* whole seconds, ns since the Unix epoch */
	uint64_t not_after_ns;  /* > not_before_ns */
};

/*
 * The body of d into buf (NUL-terminated); its length, or 0 when d is not
 * a valid declaration (bad id, times not whole seconds or not increasing)
 * or buf is too small.
 */
size_t pc_declaration_body(const struct pc_declaration *d, char *buf, size_t len);
/* Strict: only what pc_declaration_body writes parses. 0, or -1 with err. */
int pc_declaration_parse_body(const char *body, size_t len, struct pc_declaration *d,
			      struct pc_error *err);

/* The key is an auditor key: its name begins with "auditor/". */
bool pc_declaration_key_ok(const struct pc_verifier_key *vk);

/*
 * Checks the note's signature by one of the nkeys auditor keys and parses
 * its body into d; *which (may be NULL) is the index of the key that
 * signed. 0, or -1 with err: malformed note, signed by none of the keys,
 * bad signature, a key that is not an auditor key, a body that is not a
 * declaration.
 */
int pc_declaration_open(const char *note, size_t len, const struct pc_verifier_key *keys,
			size_t nkeys, struct pc_declaration *d, size_t *which,
			struct pc_error *err);

/*
 * The rules a valid, signed declaration must also meet to let a map run:
 * the appliance id and the pod map digest are the map's, and t is within
 * [not-before, not-after). 0, or -1 with err naming the first that fails
 * and *why (may be NULL) its reason.
 */
int pc_declaration_check(const struct pc_declaration *d, const char *appliance_id,
			 const uint8_t digest[PC_DIGEST_LEN], uint64_t t_ns,
			 enum pc_decl_refusal *why, struct pc_error *err);

/* BLAKE2b-256 of the note's bytes: the hash DECLARE records carry. */
void pc_declaration_hash(const char *note, size_t len, uint8_t hash[PC_DIGEST_LEN]);

/* MAP's declaration path, MAP.sig; -1 if it does not fit. */
int pc_declaration_path(const char *map_path, char *out, size_t len);

/*
 * Reads the note at path (at most PC_NOTE_MAX - 1 bytes) into buf, which
 * must hold PC_NOTE_MAX; its length, or -1 with err (missing, unreadable,
 * too long).
 */
long pc_declaration_read(const char *path, char *buf, struct pc_error *err);

/*
 * Loads everything a map needs to run under auditor keys: reads path's
 * note, opens it with the keys and checks it against the map's appliance
 * id and digest at t_ns. On success fills d and hash. 0, or -1 with err
 * prefixed by the note's path and *why (may be NULL) set.
 */
int pc_declaration_load(const char *path, const struct pc_verifier_key *keys, size_t nkeys,
			const char *appliance_id, const uint8_t digest[PC_DIGEST_LEN],
			uint64_t t_ns, struct pc_declaration *d, uint8_t hash[PC_DIGEST_LEN],
			enum pc_decl_refusal *why, struct pc_error *err);

#endif /* PODCAP_DECLARATION_H */
