/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * podcapd's reader of the appliance's clock discipline: a thread of its
 * own polls ptp4l's management socket (src/discipline/ptp4l.h) once a
 * second and keeps what it read for /metrics and, per window, for the
 * recorder (docs/monitoring.md, "The clock discipline").
 *
 * Nothing here is on the data path or waits on the control thread: a poll
 * talks to ptp4l with no lock held, for PC_CLOCK_POLL_TIMEOUT_NS at most,
 * and publishes under a mutex held only to copy. A ptp4l that is missing,
 * stopped, gone or wrong costs a counted poll, never a window.
 */
#ifndef PODCAPD_CLOCK_DISCIPLINE_H
#define PODCAPD_CLOCK_DISCIPLINE_H

#include <stdbool.h>
#include <stdint.h>

#include "discipline/reading.h"
#include "discipline/window.h"

#define PC_CLOCK_POLL_NS         1000000000ull /* one poll a second */
#define PC_CLOCK_POLL_TIMEOUT_NS 250000000ull  /* and each answered within 250 ms */

/* What /metrics shows. */
struct pc_clock_stats {
	bool on;                          /* a discipline is configured */
	bool up;                          /* its last poll read it */
	uint64_t polls[PC_CLOCK_RESULTS]; /* since start, by result */
	bool have;                        /* latest holds the last reading */
	struct pc_clock_reading latest;
};

/*
 * Starts polling the ptp4l socket at path in PTP domain `domain` (after
 * the signer is forked: this is a thread). 0, or -1 logged.
 */
int pc_clock_discipline_start(const char *path, uint8_t domain);
/* Ends the thread; nothing is read after. Safe when it never started. */
void pc_clock_discipline_stop(void);

/*
 * The recorder's, at each window close: the polls that ended before
 * cut_mono_ns (the window's end on CLOCK_MONOTONIC) and were not taken
 * yet, with the latest reading and the worst offset and bound among
 * them. false when no discipline is configured.
 */
bool pc_clock_discipline_snapshot(uint64_t cut_mono_ns, struct pc_clock_window *w);

/* For /metrics; any thread. */
void pc_clock_discipline_stats(struct pc_clock_stats *st);

#endif /* PODCAPD_CLOCK_DISCIPLINE_H */
