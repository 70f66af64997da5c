/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The control thread's view of the counters: closing windows, keeping
 * totals, and answering the operator (telemetry, metrics).
 */
#ifndef PODCAPD_CONTROL_H
#define PODCAPD_CONTROL_H

#include <stdint.h>

#include "podcap/counters.h"
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
};

/* Realtime clock in ns since the epoch. */
uint64_t pc_now_ns(void);

/*
 * Moves the workers to window `epoch` (and to `table` when it is not NULL),
 * waits until each has switched, then sums the bank of the window that
 * closed into *win (which is then zeroed in the banks) and adds it to the
 * totals. Must be called from the control thread only.
 */
void pc_control_advance(uint64_t epoch, struct pc_table *table, uint64_t window_ns,
			struct pc_window *win);
/* Prints the per-window lines of win to stdout. */
void pc_control_print(const struct pc_window *win);

/* Totals of every closed window plus the live one (for the operator). */
void pc_control_read_totals(const struct pc_table *t, struct pc_pod_ctr (*pod)[PC_DIR_COUNT],
			    struct pc_link_ctr (*link)[PC_DIR_COUNT]);
/* Bytes passed in the last closed window of pod p, direction d (0 if none). */
uint64_t pc_control_last_window_bytes(unsigned p, unsigned d);

int pc_telemetry_register(void);

#endif /* PODCAPD_CONTROL_H */
