/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * podcap-verify --fleet (cmd/podcap-verify/fleet.c). The program's own, not
 * a library's: nothing outside src/cmd/podcap-verify includes it.
 */
#ifndef PODCAP_VERIFY_FLEET_H
#define PODCAP_VERIFY_FLEET_H

#include "options.h"

/* podcap-verify's one-appliance run: its exit status. */
typedef int (*vf_run_fn)(const struct vf_options *o);

/*
 * Runs podcap-verify --fleet with its arguments: each appliance of the
 * fleet file by run, on the fleet-wide options with the appliance's own
 * set from its entry, in a process of its own. Returns the exit status.
 */
int vf_fleet_main(int argc, char **argv, vf_run_fn run);

#endif /* PODCAP_VERIFY_FLEET_H */
