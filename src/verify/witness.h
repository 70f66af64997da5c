/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The verifier's witness policy (podcap-verify --witness, --witness-quorum,
 * --max-witness-delay): the checkpoint verified must carry a quorum of
 * valid cosignatures (cosig.h) from the witnesses the verifier trusts, and
 * their timestamps, the first trusted time the log has, bound its windows.
 *
 * Every window the checkpoint covers was covered by a cosignature at the
 * earliest valid one's time T at the latest, so none may end after T (a
 * cosignature's time is in whole seconds: after T + 1 s, plus the
 * verifier's clock skew); and the newest window must have been cosigned
 * no more than the delay after it ended, or the log was written, or first
 * shown to witnesses, long after the fact. The delay is exact (T - E at
 * most the delay): no clock skew is added to it, since a verifier that
 * wants room for clocks there says so in the delay it gives.
 */
#ifndef PODCAP_VERIFY_WITNESS_H
#define PODCAP_VERIFY_WITNESS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "base/error.h"
#include "base/keys.h"

#define PC_VERIFY_MAX_WITNESSES    16
#define PC_VERIFY_WITNESS_DELAY_NS (UINT64_C(300) * 1000000000) /* default: five 60 s windows */

struct pc_witness_policy {
	struct pc_verifier_key keys[PC_VERIFY_MAX_WITNESSES]; /* cosigner keys, type 0x04 */
	size_t nkeys;
	unsigned quorum;       /* valid cosignatures required; 0: every key's */
	uint64_t max_delay_ns; /* newest window's end to its first cosignature, exactly */
	uint64_t skew_ns;      /* the verifier's allowance for clocks, on the end only */
};

struct pc_witness_seen {
	int valid;
	uint64_t t;               /* the cosignature's timestamp, s, when valid */
	char why[PC_ERR_MSG_LEN]; /* when not */
};

struct pc_witness_report {
	struct pc_witness_seen seen[PC_VERIFY_MAX_WITNESSES];
	unsigned nvalid, quorum;
	int first; /* index of the earliest valid cosignature, -1 if none */
	unsigned nfail;
	char fail[3][320]; /* each finding, naming the window and the witness */
};

/*
 * Judges the checkpoint note (with its cosignature lines) whose newest
 * window ends at newest_end_ns (0: no window). Returns 0 when every rule
 * holds, -1 with the findings in r.
 */
int pc_witness_judge(const struct pc_witness_policy *p, const char *note, size_t len,
		     uint64_t newest_end_ns, struct pc_witness_report *r);
/* The report's section, "witnesses:" and a line per witness and finding. */
void pc_witness_report_print(const struct pc_witness_policy *p, const struct pc_witness_report *r,
			     FILE *f);

/*
 * Hands the judgement to v's JSON and HTML reports (their "witnesses"
 * section); both must outlive v's reports.
 */
struct pc_verify;
void pc_verify_set_witness_result(struct pc_verify *v, const struct pc_witness_policy *p,
				  const struct pc_witness_report *r);

#endif /* PODCAP_VERIFY_WITNESS_H */
