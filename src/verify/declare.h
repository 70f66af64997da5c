/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What a verifier knows of the auditor (podcap-verify --auditor-key,
 * --pod-maps, --max-map-age): the auditor keys, every signed declaration it
 * was given, and how old a declaration may be. With them every START and
 * RELOAD must be followed by a DECLARE naming one of those declarations,
 * signed by one of the keys, for this appliance and the pod map put in
 * force, and every window must start within that declaration's validity
 * (docs/verify.md, check 6a).
 */
#ifndef PODCAP_VERIFY_DECLARE_H
#define PODCAP_VERIFY_DECLARE_H

#include <stddef.h>
#include <stdint.h>

#include "base/error.h"
#include "base/keys.h"
#include "verify.h"

/* One declaration file: its path (for the report) and its bytes. */
struct pc_verify_declaration {
	const char *path;
	const char *note;
	size_t len;
};

/*
 * Before pc_verify_resume and the records. Copies everything. max_age_ns:
 * PC_VERIFY_UNLIMITED, or the longest a window may start after its
 * declaration's not-before (the auditor's re-randomization cadence).
 * A verifier with auditor keys verifies every record again on resume.
 * 0, or -1 with err (out of memory, a key that is not an auditor's).
 */
int pc_verify_set_auditors(struct pc_verify *v, const struct pc_verifier_key *keys, size_t nkeys,
			   const struct pc_verify_declaration *decls, size_t ndecls,
			   uint64_t max_age_ns, struct pc_error *err);

/*
 * The maps the auditor's revealed seeds produce for this appliance
 * (podcap-verify --assignment): their digests and a label each (the seed's
 * file). With n > 0 every START and RELOAD must put one of them in force.
 * Copies everything; 0, or -1 with err.
 */
int pc_verify_set_assignments(struct pc_verify *v, const uint8_t (*digests)[32],
			      const char *const *labels, size_t n, struct pc_error *err);

/* One declaration put in force by a DECLARE record, for the report. */
struct pc_verify_declared {
	uint64_t record; /* the DECLARE */
	uint8_t hash[32];
	uint64_t not_before_ns, not_after_ns;
	uint64_t first_window_ns; /* 0: no window ran under it */
	uint64_t last_end_ns;
	uint64_t windows;
	int file;       /* index among the declarations given, or -1 */
	int assignment; /* the seed whose map it declares, or -1 */
};

size_t pc_verify_ndeclared(const struct pc_verify *v);
const struct pc_verify_declared *pc_verify_declared_at(const struct pc_verify *v, size_t i);
/* The path of declaration i as given to pc_verify_set_auditors. */
const char *pc_verify_declaration_path(const struct pc_verify *v, int i);

#endif /* PODCAP_VERIFY_DECLARE_H */
