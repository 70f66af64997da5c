/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The control thread's view of the counters: closing windows, keeping
 * totals, and answering the operator (telemetry, metrics).
 */
#ifndef PODCAPD_CONTROL_H
#define PODCAPD_CONTROL_H

#include <stdbool.h>
#include <stdint.h>

#include "shape/counters.h"
#include "dataplane.h"

/* The sums of one closed window over every worker. */
struct pc_window {
	uint64_t epoch;
	uint64_t start_ns;          /* UTC */
	uint64_t len_ns;
	uint64_t count;             /* windows covered: 1 unless the control thread fell behind */
	uint64_t close_mono_ns;     /* CLOCK_MONOTONIC when the close began (timing.h) */
	const struct pc_table *table;
	struct pc_pod_ctr pod[PC_MAX_PODS][PC_DIR_COUNT];
	struct pc_link_ctr link[PC_MAX_UPLINKS][PC_DIR_COUNT];
	struct pc_seen_ctr seen[PC_MAX_UPLINKS][PC_DIR_COUNT]; /* a tap's ports' losses */
	struct pc_slice_ctr slice[PC_MAX_PODS][PC_DIR_COUNT];  /* a tap's boundary slices */
	bool last_short; /* a worker's last slice began late */
};


/*
 * The control thread's side of window boundaries (the only caller of all
 * of these). Arms the boundary at which window `epoch` begins: the workers
 * switch at the first burst at or after TSC `tsc`, to `table` when it is
 * not NULL. Arm only once the previous boundary is closed.
 */
void pc_control_arm(uint64_t epoch, uint64_t tsc, struct pc_table *table);
/* Attaches a reload to the armed boundary: false if a worker has passed it already. */
bool pc_control_attach(struct pc_table *table);
/* Takes it off again: false if a worker has passed the boundary, so it comes with it. */
bool pc_control_detach(struct pc_table *table);
/* Has a worker passed the armed boundary? */
bool pc_control_passed(void);
/* At stop, once the workers have stopped: switches those that had not passed the boundary. */
void pc_control_switch_stopped(void);
/*
 * Waits until every worker has passed the armed boundary, then sums the
 * bank of the windows they left, from `closed` up to the boundary, into
 * *win (zeroing it in the banks) and adds it to the totals. Returns the
 * table in force from the boundary on if it came with it, else NULL.
 */
struct pc_table *pc_control_close(uint64_t closed, uint64_t window_ns, struct pc_window *win);
/*
 * fn runs every 50 ms while pc_control_close waits for a worker, on the
 * control thread: podcapd's watchdog check, so a worker wedged at a
 * boundary is said to be (STATUS=, the log) as one wedged between them.
 */
void pc_control_on_wait(void (*fn)(void));
/*
 * Adds what a tap's ports could not deliver and what it counted in its
 * boundary slices, from bank b, to win, and zeroes them in b (tap.c).
 */
void pc_tap_collect(struct pc_window *win, struct pc_bank *b, const struct pc_config *cfg);
/* Prints the per-window lines of win to stdout. */
void pc_control_print(const struct pc_window *win);

/* Totals of every closed window plus the live one (for the operator). */
void pc_control_read_totals(const struct pc_table *t, struct pc_pod_ctr (*pod)[PC_DIR_COUNT],
			    struct pc_link_ctr (*link)[PC_DIR_COUNT]);
/* Bytes passed in the last closed window of pod p, direction d (0 if none). */
uint64_t pc_control_last_window_bytes(unsigned p, unsigned d);

int pd_telemetry_register(void);

#endif /* PODCAPD_CONTROL_H */
