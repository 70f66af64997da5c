/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * podcap-verify: checks a podcap log as someone who does not trust the
 * operator who runs it.
 *
 *   podcap-verify --key VERIFIER_KEY (--url http://HOST:PORT | --ledger DIR)
 *                 [--pod-map FILE|DIR]... [--state FILE] [--checkpoint FILE] [--json]
 *                 [--now TIME] [--clock-skew DURATION] [--max-unaccounted DURATION]
 *                 [--max-gap DURATION] [--max-checkpoint-age DURATION]
 *                 [--max-merged-windows N] [--build-id HEX]...
 *                 [--pod-maps DIR --auditor-key FILE... [--max-map-age DURATION]]
 *                 [--assignment DIR] [--attest POLICY]
 *                 [--tap URL|DIR --tap-key KEY]... [--tap-clock-offset DURATION]
 *                 [--tap-line-rate RATE]
 *                 [--ca FILE] [--pin sha256:HEX]... [--cert FILE --cert-key FILE]
 *
 * --assignment DIR holds the auditor's draw (podcap-audit assign): pods.txt,
 * uplinks.txt, template.yaml, constraints.txt (optional) and the revealed
 * seeds, *.seed; every START and RELOAD must put in force the map one of
 * the seeds produces for this appliance.
 *
 * --tap (repeatable) verifies the log of a tap the verifier owns with its
 * own key, then reconciles the shaper's windows with it (cmd/podcap-verify/taps.c,
 * docs/reconcile.md).
 *
 * --pod-map may be repeated, and a directory stands for every *.yaml in
 * it: every START and RELOAD must name one of the maps. The verifier's now
 * is its own clock, or --now for an audit of an old log; the limits and
 * the pinned build ids are its policy (docs/threat-model.md says which to
 * set).
 *
 * --state FILE keeps what a successful run verified: the checkpoint, the
 * Merkle tree's right edge at its size and what the record checks carry
 * over (docs/log-format.md, "The verifier's state"). The next run reads
 * and checks only the records after it. A state that does not check out
 * is refused (exit 2); a state holding only the checkpoint, or saved under
 * another --pod-map, makes the run read every record.
 *
 * --pod-maps DIR is --pod-map DIR and, with --auditor-key, every *.sig in
 * it is an auditor's declaration: every START and RELOAD must be followed
 * by a DECLARE naming one of them, signed by an auditor key, and every
 * window must start while it is valid (verify/declare.h).
 * --witness KEY (repeatable), --witness-quorum K, --max-witness-delay D:
 * the checkpoint must carry K valid cosignatures of those witnesses, and
 * their times bound the newest window (src/verify/witness.h).
 *
 * --checkpoint FILE verifies the log as of that signed checkpoint (one
 * kept earlier, or obtained from elsewhere) instead of the newest the
 * source offers.
 *
 * Exit status: 0 when every check holds, 1 when one fails, 2 for usage or
 * I/O errors (unreachable server, unreadable files). Links src/verify,
 * libsodium and libcurl only.
 *
 * This file is the wiring: the options (options.c) into one run (run.c);
 * --fleet runs it once per appliance (fleet.c).
 */
#include <stdio.h>
#include <string.h>

#ifdef PC_HAVE_LIBCRYPTO
#include "log/sha256_libcrypto.h"
#endif

#include "fleet.h"
#include "options.h"
#include "run.h"

/* One appliance: the options of the command line, or those of a fleet's child. */
static int
run(const struct vf_options *o)
{
	return vf_run(o, NULL);
}

int
main(int argc, char **argv)
{
#ifdef PC_HAVE_LIBCRYPTO
	/* the same bytes as libsodium's, faster: checked before it is used */
	if (pc_sha256_use_libcrypto() < 0)
		fprintf(stderr,
			"podcap-verify: warning: libcrypto's SHA-256 disagrees with "
			"libsodium's; hashing with libsodium\n");
#endif
	static struct vf_options o;

	for (int i = 1; i < argc; i++)
		if (strcmp(argv[i], "--fleet") == 0)
			return vf_fleet_main(argc, argv, run);
	vf_options_init(&o);
	vf_parse_args(argc, argv, &o);
	return run(&o);
}
