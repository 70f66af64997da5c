/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * podcap-verify --fleet (cmd/podcap-verify/fleet.c). The program's own, not
 * a library's: nothing outside src/cmd/podcap-verify includes it.
 */
#ifndef PODCAP_VERIFY_FLEET_H
#define PODCAP_VERIFY_FLEET_H

#include <stdbool.h>
#include <stdio.h>

#include "verify/fleet.h"

#include "options.h"

/* podcap-verify's one-appliance run: its exit status. */
typedef int (*vf_run_fn)(const struct vf_options *o);

/*
 * The appliance's own options over the fleet-wide ones in o (its key,
 * source, maps, state, witnesses, declarations, taps and TLS; html for its
 * page or NULL), checked as the command line's: exits 2 when they break a
 * rule. podcap-monitor's pulls take theirs from the same entries this way.
 */
void vf_fleet_appliance_options(struct vf_options *o, const struct pc_fleet_appliance *a,
				const char *html);
/*
 * Whether opt ("--max-gap") is a fleet-wide option that takes an argument:
 * the verifier's policy and TLS, set for every appliance by vf_option_set.
 */
bool vf_fleet_takes_arg(const char *opt);

/* One appliance of a fleet page. */
struct vf_fleet_row {
	const char *name;
	const char *source; /* its URL or ledger directory */
	int status;         /* its run's exit status: 0 verified, 1 failed, 2 error */
	const char *html;   /* the file of its own page (--html), or NULL */
	const char *err;    /* the file of what its run said on stderr, or NULL */
};

/*
 * The fleet's page (--fleet --html) on f: the table of rows (in the order
 * given: the failed first), then each appliance's article from its page,
 * or what its run said when it wrote none. Exits 2 when a file is unreadable.
 */
void vf_fleet_page(FILE *f, const struct vf_fleet_row *rows, size_t n, size_t nfailed);
/*
 * Runs podcap-verify --fleet with its arguments: each appliance of the
 * fleet file by run, on the fleet-wide options with the appliance's own
 * set from its entry, in a process of its own. Returns the exit status.
 */
int vf_fleet_main(int argc, char **argv, vf_run_fn run);

#endif /* PODCAP_VERIFY_FLEET_H */
