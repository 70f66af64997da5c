/* SPDX-License-Identifier: BSD-3-Clause */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "watchdog.h"

bool
pc_watchdog_ok(uint64_t prev[], const uint64_t cur[], unsigned n, bool signer_ok, int *stuck)
{
	int first = -1;

	for (unsigned i = 0; i < n; i++) {
		/* the counters only grow; != also holds for one that wrapped */
		if (cur[i] == prev[i] && first < 0)
			first = (int)i;
		prev[i] = cur[i];
	}
	if (stuck != NULL)
		*stuck = first;
	return first < 0 && signer_ok;
}
