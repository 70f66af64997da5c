/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * podcap-verify --fleet (cmd/podcap-verify/fleet.c). The program's own, not
 * a library's: nothing outside src/cmd/podcap-verify includes it.
 */
#ifndef PODCAP_VERIFY_FLEET_H
#define PODCAP_VERIFY_FLEET_H

/*
 * Runs podcap-verify --fleet with its arguments: each appliance of the
 * fleet file by verify_main (podcap-verify's one-appliance main, given the
 * argv of that run) in a process of its own. Returns the exit status.
 */
int vf_fleet_main(int argc, char **argv, int (*verify_main)(int, char **));

#endif /* PODCAP_VERIFY_FLEET_H */
