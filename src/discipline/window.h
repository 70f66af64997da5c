/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The polls of the clock discipline, summed per window for the recorder:
 * the poller adds each poll as it ends, the control thread takes those
 * that ended before a window's boundary when it closes the window. Pure
 * and single-threaded: the caller locks.
 *
 * The newest PC_CLOCK_RING polls are kept one by one, so that a window
 * closed late (the control thread held up) still leaves the polls after
 * its boundary to the next; older ones are summed together as they drop
 * out, and count for the next window taken.
 */
#ifndef PODCAP_CLOCK_WINDOW_H
#define PODCAP_CLOCK_WINDOW_H

#include <stdbool.h>
#include <stdint.h>

#include "reading.h"

#define PC_CLOCK_RING 256

/* What the polls of a window came to. */
struct pc_clock_window {
	unsigned polls;                     /* polls that ended in it */
	unsigned results[PC_CLOCK_RESULTS]; /* by how they ended */
	unsigned bounded;                   /* readings of them that support a bound */
	int64_t worst_offset;               /* the offset of largest magnitude read (2^-16 ns) */
	uint64_t worst_bound_ns;            /* the largest bound among the bounded */
	bool have_latest;                   /* latest: the newest reading before the */
	struct pc_clock_reading latest;     /* window's end, from this or an earlier one */
};

struct pc_clock_poll {
	uint64_t mono_ns;
	enum pc_clock_result result;
	struct pc_clock_reading r; /* when result is PC_CLOCK_OK */
};

struct pc_clock_acc {
	struct pc_clock_poll ring[PC_CLOCK_RING];
	unsigned head, count;         /* the oldest kept, how many */
	struct pc_clock_window older; /* polls dropped from the ring, not taken yet */
	bool have_latest;             /* the newest reading taken by a window */
	struct pc_clock_reading latest;
};

void pc_clock_acc_init(struct pc_clock_acc *a);
/* A poll that ended at mono_ns (never before the last one added); r when result is OK. */
void pc_clock_acc_add(struct pc_clock_acc *a, uint64_t mono_ns, enum pc_clock_result result,
		      const struct pc_clock_reading *r);
/* The polls that ended before cut_mono_ns and were not taken yet, summed into *w. */
void pc_clock_acc_take(struct pc_clock_acc *a, uint64_t cut_mono_ns, struct pc_clock_window *w);

#endif /* PODCAP_CLOCK_WINDOW_H */
