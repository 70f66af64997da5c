/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * podcap-verify's options (cmd/podcap-verify/options.c): everything its
 * command line sets, in one struct that the one-appliance run reads and
 * nothing else. vf_parse_args fills it from argv; a fleet's child gets a
 * copy of the fleet-wide ones with its appliance's fields set through the
 * same setters (cmd/podcap-verify/fleet.c), so a value is checked, and
 * refused with the same message, whichever way it came. The program's own,
 * not a library's: nothing outside src/cmd/podcap-verify includes it.
 */
#ifndef PODCAP_VERIFY_OPTIONS_H
#define PODCAP_VERIFY_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "log/declaration.h"
#include "verify/verify.h"
#include "verify/witness.h"

#include "taps.h"
#include "tls.h"

#define VF_MAX_MAPS 64 /* --pod-map files, directories counted by file */

struct vf_options {
	const char *key;
	const char *url;
	const char *ledger;
	const char *pod_maps[VF_MAX_MAPS]; /* files and directories, as given */
	size_t npod_maps;
	const char *state;
	const char *checkpoint; /* verify this signed checkpoint, not the source's newest */
	bool json;
	const char *html;     /* also write the HTML report there */
	bool indicators;      /* state the indicators in the text or JSON report */
	uint64_t model_bytes; /* --model-size: transfer times for it */
	struct pc_verify_policy policy;
	const char *decl_dir; /* --pod-maps */
	const char *auditor_keys[PC_DECL_MAX_KEYS];
	size_t nauditor_keys;
	uint64_t max_map_age_ns; /* PC_VERIFY_UNLIMITED unless --max-map-age */
	const char *assignment;  /* --assignment DIR: the draw's inputs and revealed seeds */
	struct pc_witness_policy witness; /* --witness, --witness-quorum, --max-witness-delay */
	const char *attest;               /* --attest: the attestation policy file */
	struct vf_taps taps; /* --tap, --tap-key, --tap-clock-offset, --tap-line-rate */
	struct vf_tls tls;   /* --ca, --pin, --cert, --cert-key */
};

/* The defaults of every option: the verifier's, the witness policy's and the taps'. */
void vf_options_init(struct vf_options *o);
/*
 * The command line into o (after vf_options_init): exits 0 for --help and
 * --version, 2 for a usage error or a bad value; o then holds a whole run's
 * options, vf_options_check passed.
 */
void vf_parse_args(int argc, char **argv, struct vf_options *o);
/*
 * One option by its long name ("max-gap"), as the command line gives it:
 * false if there is none of that name that takes an argument (or, with arg
 * NULL, none that takes none). Exits 2 on a bad value.
 */
bool vf_option_set(struct vf_options *o, const char *name, const char *arg);
/*
 * The rules between options, once the last is set (--pod-maps and its
 * auditor keys, the witness quorum, --cert with --cert-key): exits 2 when
 * one is broken. Then the witness policy's skew is the verifier's, and
 * without --now the verifier's now is its clock's.
 */
void vf_options_check(struct vf_options *o);

/*
 * The setters vf_parse_args uses, for the options a fleet file gives per
 * appliance. Each refuses, exit 2, what the command line would.
 */
void vf_add_pod_map(struct vf_options *o, const char *path);     /* --pod-map */
void vf_set_declarations(struct vf_options *o, const char *dir); /* --pod-maps */
void vf_add_auditor_key(struct vf_options *o, const char *path); /* --auditor-key */
void vf_add_witness(struct vf_options *o, const char *key);      /* --witness */
void vf_add_tap(struct vf_options *o, const char *source);       /* --tap */
void vf_add_tap_key(struct vf_options *o, const char *path);     /* --tap-key */

/* The usage summary (--help on stdout, after a usage error on stderr). */
void vf_usage(FILE *f);
/* "podcap-verify: <message>" on stderr, then exit 2: an I/O error, the log unread. */
void vf_die_io(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
/* The same and the usage summary: a bad option or option argument. */
void vf_die_usage(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

#endif /* PODCAP_VERIFY_OPTIONS_H */
