/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What podcap-audit's two files share: the program's own functions, not a
 * library's (no pc_ prefix; nothing outside src/cmd/podcap-audit uses them).
 */
#ifndef PODCAP_AUDIT_TOOL_H
#define PODCAP_AUDIT_TOOL_H

/* Prints msg (if any) and the usage on stderr; returns 2. */
int audit_usage(const char *msg);
/* podcap-audit assign / commit with their own arguments (argv[0] is the command). */
int audit_assign(int argc, char **argv);
int audit_commit(int argc, char **argv);

#endif
