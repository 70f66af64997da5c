/* SPDX-License-Identifier: BSD-3-Clause */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "podmap/config.h"
#include "shape/counters.h"

#include "daemon/control.h"
#include "daemon/dataplane.h"
#include "fixture.h"
#include "daemon/recorder.h"
#include "daemon/timeline.h"

struct fx_record fx_records[FX_RECORDS_MAX];
unsigned fx_nrecords;
struct pc_timeline fx_tl;

static uint64_t mono_ns = FX_MONO0;
static bool freed[64];               /* by generation */
#define MAPS_MAX 16
static char maps[MAPS_MAX][PC_PATH_LEN];   /* pod map files written, removed at reset */
static unsigned nmaps;

uint64_t __wrap_pc_mono_ns(void);
uint64_t __wrap_pc_now_ns(void);
uint64_t __wrap_pc_tsc_at(uint64_t m, uint64_t hz);
void __wrap_pc_table_free(struct pc_table *t);
void __real_pc_table_free(struct pc_table *t);
void __wrap_pc_recorder_window(const struct pc_window *w);
void __wrap_pc_recorder_reload(const struct pc_table *t, uint64_t epoch, uint64_t window_ns);
void __wrap_pc_recorder_clock(const struct pc_table *t, uint64_t epoch, uint64_t window_ns,
			      int64_t step_ns);
void __wrap_pc_recorder_stop_record(const struct pc_table *t, uint64_t epoch,
				    uint64_t window_ns);

uint64_t
__wrap_pc_mono_ns(void)
{
	return mono_ns;
}

uint64_t
__wrap_pc_now_ns(void)
{
	return mono_ns - FX_MONO0 + FX_WALL0;
}

/* The TSC is CLOCK_MONOTONIC in ns: a boundary's TSC is its monotonic time. */
uint64_t
__wrap_pc_tsc_at(uint64_t m, uint64_t hz)
{
	(void)hz;
	return m;
}

void
__wrap_pc_table_free(struct pc_table *t)
{
	if (t != NULL && t->generation < sizeof(freed) / sizeof(freed[0]))
		freed[t->generation] = true;
	__real_pc_table_free(t);
}

static struct fx_record *
capture(enum fx_type type, const struct pc_table *t, uint64_t start_ns)
{
	assert_true(fx_nrecords < FX_RECORDS_MAX);
	struct fx_record *r = &fx_records[fx_nrecords++];
	memset(r, 0, sizeof(*r));
	r->type = type;
	r->start_ns = start_ns;
	r->generation = t->generation;
	r->npods = t->cfg.npods < FX_PODS_MAX ? t->cfg.npods : FX_PODS_MAX;
	for (unsigned p = 0; p < r->npods; p++)
		snprintf(r->pod[p], sizeof(r->pod[p]), "%s", t->cfg.pods[p].id);
	return r;
}

void
__wrap_pc_recorder_window(const struct pc_window *w)
{
	struct fx_record *r = capture(FX_WINDOW_REC, w->table, w->start_ns);

	r->count = w->count;
	for (unsigned p = 0; p < r->npods; p++)
		r->frames[p] = w->pod[p][PC_DIR_UP].pass_frames;
}

void
__wrap_pc_recorder_reload(const struct pc_table *t, uint64_t epoch, uint64_t window_ns)
{
	capture(FX_RELOAD_REC, t, epoch * window_ns);
}

void
__wrap_pc_recorder_clock(const struct pc_table *t, uint64_t epoch, uint64_t window_ns,
			 int64_t step_ns)
{
	(void)step_ns;
	capture(FX_CLOCK_REC, t, epoch * window_ns);
}

void
__wrap_pc_recorder_stop_record(const struct pc_table *t, uint64_t epoch, uint64_t window_ns)
{
	capture(FX_STOP_REC, t, epoch * window_ns);
}

void
fx_clock_at(uint64_t m)
{
	mono_ns = m;
}

const uint16_t (*fx_ports(void))[PC_DIR_COUNT]
{
	static const uint16_t ports[PC_MAX_UPLINKS][PC_DIR_COUNT] = { { 0, 1 }, { 2, 3 } };
	return ports;
}

struct pc_table *
fx_table(const char *yaml, unsigned generation)
{
	struct pc_config cfg;
	struct pc_error err;

	if (pc_config_load_buffer("fixture", yaml, strlen(yaml), &cfg, &err) != 0) {
		pc_error_print(&err, stderr);
		fail();
	}
	struct pc_table *t = pc_table_create(&cfg, fx_ports(), pc_dp.nworkers, pc_dp.hz,
					     generation);
	assert_non_null(t);
	return t;
}

const char *
fx_map_file(const char *yaml)
{
	const char *tmp = getenv("TMPDIR");

	assert_true(nmaps < MAPS_MAX);
	char *path = maps[nmaps];
	snprintf(path, sizeof(maps[0]), "%s/podcapd-test-%d-%u.yaml", tmp ? tmp : "/tmp",
		 (int)getpid(), nmaps++);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	assert_int_equal(fputs(yaml, f) >= 0, 1);
	assert_int_equal(fclose(f), 0);
	return path;
}

struct pc_table *
fx_start(unsigned n, const char *yaml)
{
	mono_ns = FX_MONO0;
	pc_dp.hz = FX_NS;
	pc_dp.nworkers = n;
	struct pc_table *t = fx_table(yaml, 0);
	for (unsigned i = 0; i < n; i++) {
		pc_dp.workers[i] = pc_worker_create(i, i + 1);
		assert_non_null(pc_dp.workers[i]);
		/* what pc_worker_main does first, for a table with nothing queued yet */
		pc_dp.workers[i]->table = t;
	}
	pc_dp.table = t;
	pc_timeline_start(&fx_tl, FX_WINDOW);
	pc_timeline_arm(&fx_tl);
	return t;
}

uint64_t
fx_boundary(uint64_t epoch)
{
	return pc_wallclock_boundary(&fx_tl.clk, epoch, FX_WINDOW);
}

void
fx_pass_and_close(void)
{
	uint64_t t = pc_dp.switch_tsc;

	for (unsigned i = 0; i < pc_dp.nworkers; i++)
		fx_burst(i, t, NULL, 0);
	mono_ns = t + 20 * FX_NS / 1000;
	pc_timeline_close(&fx_tl);
}

void
fx_burst(unsigned w, uint64_t tsc, const char *id, unsigned frames)
{
	struct pc_worker *wk = pc_dp.workers[w];

	pc_worker_boundary(wk, tsc);
	if (frames == 0)
		return;
	int p = pc_config_find_pod(&wk->table->cfg, id);
	assert_true(p >= 0);
	/* as the worker counts a frame the port took: into the bank it counts in */
	for (unsigned i = 0; i < frames; i++) {
		pc_ctr_add(&wk->bank->pod[p][PC_DIR_UP].pass_frames, 1);
		pc_ctr_add(&wk->bank->pod[p][PC_DIR_UP].pass_bytes, 100);
	}
}

uint64_t
fx_frames(const struct fx_record *r, const char *id)
{
	for (unsigned p = 0; p < r->npods; p++)
		if (strcmp(r->pod[p], id) == 0)
			return r->frames[p];
	return 0;
}

bool
fx_freed(unsigned generation)
{
	return freed[generation];
}

int
fx_teardown(void **state)
{
	(void)state;
	pc_table_free(fx_tl.pending);
	fx_tl.pending = NULL;
	for (unsigned i = 0; i < pc_dp.nworkers; i++)
		pc_worker_free(pc_dp.workers[i]);
	pc_dp.nworkers = 0;
	pc_table_free(pc_dp.table);
	pc_dp.table = NULL;
	pc_dp.bank = 0;
	pc_dp.switch_tsc = UINT64_MAX;
	pc_dp.switch_epoch = 0;
	pc_dp.switch_table = 0;
	memset(freed, 0, sizeof(freed));
	for (unsigned i = 0; i < nmaps; i++)
		unlink(maps[i]);
	nmaps = 0;
	fx_nrecords = 0;
	return 0;
}
