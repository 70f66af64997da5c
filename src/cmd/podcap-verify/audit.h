/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What podcap-verify is told of the auditor (cmd/podcap-verify/audit.c).
 * The program's own, not a library's: nothing outside src/cmd/podcap-verify
 * includes it.
 */
#ifndef PODCAP_VERIFY_TOOL_AUDIT_H
#define PODCAP_VERIFY_TOOL_AUDIT_H

#include <stddef.h>
#include <stdint.h>

#include "base/keys.h"
#include "verify/verify.h"

/*
 * --pod-maps DIR --auditor-key FILE... --max-map-age: the keys and every
 * declaration (*.sig) in dir given to v; exits 2 on bad input.
 */
void vf_load_auditing(struct pc_verify *v, const char *dir, const char *const *key_files,
		      size_t nkeys, uint64_t max_age_ns);
/* --assignment DIR: gives v the maps the revealed seeds produce; exits 2 on bad input. */
void vf_load_assignment(struct pc_verify *v, const char *dir, const struct pc_verifier_key *key);

#endif
