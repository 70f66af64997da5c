/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * podcap-verify's one-appliance run (cmd/podcap-verify/run.c): the
 * verifier over one source with everything the options ask of it, the
 * reports on stdout (and --html's page), the state saved after a clean
 * run. podcap-monitor compiles it too, and reads what a run found from a
 * struct vf_outcome instead of parsing a report. The programs' own, not a
 * library's: nothing outside src/cmd/podcap-verify and
 * src/cmd/podcap-monitor includes it.
 */
#ifndef PODCAP_VERIFY_RUN_H
#define PODCAP_VERIFY_RUN_H

#include <stdbool.h>
#include <stdint.h>

#include "verify/verify.h"

#include "options.h"

/* What one run found: what podcap-monitor's metrics and status say of a pull. */
struct vf_outcome {
	int rc;                         /* the exit status: 0 verified, 1 a check failed */
	uint64_t size;                  /* the checkpoint's tree size */
	uint64_t resumed_at;            /* records the state vouched for, not read again */
	uint64_t records;               /* records read and checked by this run */
	uint64_t newest_end_ns;         /* the end of the newest window accounted for, 0 for none */
	uint64_t age_ns;                /* the checkpoint's age at the verifier's now */
	uint64_t failures[PC_VC_COUNT]; /* each check's failures */
	bool witnessed;                 /* the witness policy held (or there is none) */
	unsigned witness_keys;          /* witnesses named; 0: no witness policy */
	unsigned witnesses_valid, witness_quorum;
	bool attest; /* --attest given: the two counts below are the quotes' */
	uint64_t windows_attested, windows_unattested;
	unsigned taps;          /* the verifier's taps on the shaper's links */
	bool taps_agree;        /* their reconciliation failed nothing the shaper's log had not */
	uint64_t peak_permille; /* the largest share of cap x window a pod used in one window */
};

/*
 * One appliance, as podcap-verify runs it: the exit status (0 verified, 1
 * a check failed; an I/O error exits 2). With out not NULL, what it found
 * is also filled in there.
 */
int vf_run(const struct vf_options *o, struct vf_outcome *out);

#endif /* PODCAP_VERIFY_RUN_H */
