/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The control thread and the workers of podcapd, driven by hand: a fake
 * CLOCK_MONOTONIC (CLOCK_REALTIME follows it), a TSC that is that clock in
 * ns, workers that each run bursts at the TSC the test says, and the
 * records the timeline hands the recorder, captured instead of written.
 * Linked with mock_dpdk.c and the wraps of meson.build.
 */
#ifndef PODCAPD_TEST_FIXTURE_H
#define PODCAPD_TEST_FIXTURE_H

#include <stdbool.h>
#include <stdint.h>

#include "daemon/table.h"
#include "daemon/timeline.h"

#define FX_NS 1000000000ull
#define FX_WINDOW (60 * FX_NS)
#define FX_MONO0 (5000 * FX_NS)          /* CLOCK_MONOTONIC at the start of a test */
#define FX_WALL0 (28333333 * FX_WINDOW + 25 * FX_NS) /* the wall clock then: 25 s into a window */
#define FX_RECORDS_MAX 32
#define FX_PODS_MAX 4

enum fx_type { FX_WINDOW_REC, FX_RELOAD_REC, FX_CLOCK_REC, FX_STOP_REC };

/* What the timeline handed the recorder. */
struct fx_record {
	enum fx_type type;
	uint64_t start_ns;            /* WINDOW: its label; others: epoch x window */
	uint64_t count;               /* WINDOW: windows covered */
	unsigned generation;          /* of the table it was counted under, or brought in */
	unsigned npods;
	char pod[FX_PODS_MAX][PC_ID_LEN];
	uint64_t frames[FX_PODS_MAX]; /* WINDOW: frames passed up, per pod */
};

extern struct fx_record fx_records[FX_RECORDS_MAX];
extern unsigned fx_nrecords;

/* Sets the fake clocks: CLOCK_MONOTONIC at mono_ns, the wall clock on its course from FX_WALL0. */
void fx_clock_at(uint64_t mono_ns);
/* The control thread's timeline; fx_start() starts it at FX_MONO0. */
extern struct pc_timeline fx_tl;

/*
 * Starts n workers (TSC frequency 1 GHz) enforcing the pod map text, whose
 * table (generation 0) is in force from the window in progress at
 * FX_MONO0, and arms the next boundary; returns the table.
 */
struct pc_table *fx_start(unsigned n, const char *yaml);
/* The TSC (and monotonic time) of the boundary at which window `epoch` begins. */
uint64_t fx_boundary(uint64_t epoch);
/* Every worker polls at the armed boundary; the control thread closes it 20 ms after. */
void fx_pass_and_close(void);
/* A table for the pod map text, numbered `generation`, for the workers started. */
struct pc_table *fx_table(const char *yaml, unsigned generation);
/* Writes a pod map to a file of its own for a reload to read; returns its path. */
const char *fx_map_file(const char *yaml);
/* The uplink ports every table of the tests is built with. */
const uint16_t (*fx_ports(void))[PC_DIR_COUNT];
/*
 * Worker w reads TSC `tsc` for a burst and passes `frames` frames of pod
 * `id` (0: polls, none), as pc_worker_main does: the boundary first.
 */
void fx_burst(unsigned w, uint64_t tsc, const char *id, unsigned frames);
/* Frames of pod `id` in a captured WINDOW record (0 if it has no such pod). */
uint64_t fx_frames(const struct fx_record *r, const char *id);
/* Whether the table numbered `generation` has been freed. */
bool fx_freed(unsigned generation);
/* A cmocka teardown: frees the workers and tables, removes the files, forgets the records. */
int fx_teardown(void **state);

#endif /* PODCAPD_TEST_FIXTURE_H */
