/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Time no window covers (verify/limit.c), as the reports and the
 * indicators state it.
 */
#ifndef PODCAP_VERIFY_LIMIT_H
#define PODCAP_VERIFY_LIMIT_H

#include <stdbool.h>
#include <stdint.h>

#include "format.h"

struct pc_verify;

/*
 * Time no window covers as every report states it: pc_verify_unaccounted's
 * total and longest stretch, with the gaps' and the restarts' parts and
 * what is left for the real time across clock steps (unknown, and the
 * total a lower bound, when it saturated).
 */
struct pcv_unaccounted {
	uint64_t total_ns, longest_ns;
	int64_t longest_record;
	bool saturated;
	u128 gaps_ns, down_ns;
	uint64_t clock_ns;
	bool clock_known;
};
void pcv_unaccounted_parts(const struct pc_verify *v, struct pcv_unaccounted *u);

#endif /* PODCAP_VERIFY_LIMIT_H */
