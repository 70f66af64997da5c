/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The control thread's timeline of windows. It arms each window boundary
 * ahead of time for the workers, which switch banks at it by themselves
 * (dataplane.h); once the control thread gets to run after it, it closes
 * what they left there (one record however many windows it fell behind),
 * compares the wall clock with the labels, puts a reload that came with
 * the boundary in force, and arms the next one. Control thread only.
 */
#ifndef PODCAPD_TIMELINE_H
#define PODCAPD_TIMELINE_H

#include <stdint.h>

#include "table.h"
#include "wallclock.h"

struct pc_timeline {
	struct pc_wallclock clk;    /* labels the windows */
	uint64_t window_ns;
	uint64_t epoch;             /* the first window the next close records */
	uint64_t next;              /* the window the armed boundary begins */
	/*
	 * A reload's table that is not in force yet: attached to the armed
	 * boundary (control.h), or, if it missed that, armed with the next.
	 */
	struct pc_table *pending;
};

/* Starts the timeline in the window in progress now. Arms nothing. */
void pc_timeline_start(struct pc_timeline *tl, uint64_t window_ns);
/* Arms the boundary of window tl->next for the workers, with tl->pending. */
void pc_timeline_arm(const struct pc_timeline *tl);
/* CLOCK_MONOTONIC time of the armed boundary. */
uint64_t pc_timeline_due_ns(const struct pc_timeline *tl);
/*
 * Closes the windows from tl->epoch up to the armed boundary once every
 * worker has passed it (waiting for them): records them, records a step
 * of the wall clock or the reload that came with the boundary (and frees
 * the table it replaced), and arms the next boundary: the first still
 * ahead, with the pending table if that missed this one.
 */
void pc_timeline_close(struct pc_timeline *tl);
/*
 * Once the workers have stopped: closes a boundary some worker passed
 * before it stopped, then the window in progress (its record says how far
 * it got), and records STOP.
 */
void pc_timeline_stop(struct pc_timeline *tl);

#endif /* PODCAPD_TIMELINE_H */
