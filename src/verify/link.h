/* SPDX-License-Identifier: BSD-3-Clause */
/* The cables (verify/link.c), as the reports read them. */
#ifndef PODCAP_VERIFY_LINK_H
#define PODCAP_VERIFY_LINK_H

#include <stdbool.h>

struct pc_verify;

/*
 * Whether the reports speak of links: the log has LINK records, a check
 * of them failed, or --max-link-down was given. Reports of other logs
 * stay as they were (no "link" among the failure kinds).
 */
bool pcv_link_reported(const struct pc_verify *v);

#endif /* PODCAP_VERIFY_LINK_H */
