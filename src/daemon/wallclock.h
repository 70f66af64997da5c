/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The wall clock and the label timeline of the windows.
 *
 * Windows are paced by CLOCK_MONOTONIC, so each covers `window` of real
 * time whatever the wall clock does; the wall clock only labels them (UTC
 * multiples of `window`, so a verifier can line up many appliances).
 *
 *   label of the window in progress = (sequence + shift) x window
 *   sequence = (monotonic + base) / window, base = wall - monotonic at start
 *
 * At each boundary the wall clock is compared with the label timeline. When
 * it has moved by more than the tolerance since it was last compared, the
 * wall clock stepped: forward, the labels jump (by whole windows) to catch
 * up; back, they go on as they were, since a label already published may
 * never be reused. Either way a CLOCK record says so and how much real time
 * passed (none: the windows stay contiguous), so the verifier computes the
 * envelope from real time, never from label differences.
 *
 * Only the control thread uses a wall clock. Nothing here reads a clock:
 * callers pass the readings, so that every rule can be tested with any.
 */
#ifndef PODCAPD_WALLCLOCK_H
#define PODCAPD_WALLCLOCK_H

#include <stdint.h>

/* A step of the wall clock smaller than this (either way) is no step. */
#define PC_CLOCK_STEP_TOLERANCE_NS (1000 * 1000 * 1000ll)

struct pc_wallclock {
	int64_t base;       /* wall - monotonic at start */
	uint64_t shift;     /* windows the labels jumped forward since start */
	int64_t skew;       /* wall - label timeline at the last comparison */
};

/* Starts the timeline from a monotonic reading and the wall clock read just after it. */
void pc_wallclock_init(struct pc_wallclock *c, uint64_t mono_ns, uint64_t wall_ns);
/* The window sequence number at monotonic time m. */
uint64_t pc_wallclock_sequence(const struct pc_wallclock *c, uint64_t m, uint64_t window_ns);
/* Monotonic time at which window sequence `seq` begins. */
uint64_t pc_wallclock_boundary(const struct pc_wallclock *c, uint64_t seq, uint64_t window_ns);
/* UTC label (ns) of window sequence `seq`. */
uint64_t pc_wallclock_label(const struct pc_wallclock *c, uint64_t seq, uint64_t window_ns);
/*
 * At the boundary that starts window sequence `seq` (monotonic m), with the
 * wall clock reading `wall_ns` taken then: has the wall clock stepped?
 * Returns its step in ns (0 if none) and jumps the labels forward when the
 * wall clock is now ahead of them. Reads no clock.
 */
int64_t pc_wallclock_check(struct pc_wallclock *c, uint64_t seq, uint64_t m, uint64_t window_ns,
			   uint64_t wall_ns);
/* Logs a step that pc_wallclock_check() returned; labels go on from label_ns. */
void pc_wallclock_log(const struct pc_wallclock *c, int64_t step, uint64_t label_ns);

#endif /* PODCAPD_WALLCLOCK_H */
