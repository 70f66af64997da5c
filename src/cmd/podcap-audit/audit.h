/* SPDX-License-Identifier: BSD-3-Clause */
/* What podcap-audit's two files share. */
#ifndef PODCAP_AUDIT_TOOL_H
#define PODCAP_AUDIT_TOOL_H

/* Prints msg (if any) and the usage on stderr; returns 2. */
int pc_audit_usage(const char *msg);
/* podcap-audit assign / commit with their own arguments (argv[0] is the command). */
int pc_audit_assign(int argc, char **argv);
int pc_audit_commit(int argc, char **argv);

#endif
