/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * When podcapd pings systemd's watchdog (WatchdogSec=). A ping says that
 * podcapd works, not only that its control thread runs: a worker that no
 * longer loops forwards nothing and switches no window, and a signer that
 * does not answer signs no checkpoint. Either stops the pings, and systemd
 * restarts the appliance (Restart=on-failure).
 *
 * The rule alone, free of clocks, DPDK and the notification, so that it
 * can be tested with any counters; run.c applies it every half interval.
 */
#ifndef PODCAPD_WATCHDOG_H
#define PODCAPD_WATCHDOG_H

#include <stdbool.h>
#include <stdint.h>

/*
 * Whether to ping now: each of the n workers looped since the last check
 * (its loop counter cur[i] moved from prev[i]) and the signer answers.
 * prev[] becomes cur[] either way, so that a worker counts as alive only
 * for looping within the last period, and one that runs again brings the
 * pings back at the next check. *stuck, when not NULL, receives the first
 * worker that did not loop, or -1.
 */
bool pc_watchdog_ok(uint64_t prev[], const uint64_t cur[], unsigned n, bool signer_ok, int *stuck);

#endif /* PODCAPD_WATCHDOG_H */
