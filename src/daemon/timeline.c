/* SPDX-License-Identifier: BSD-3-Clause */
#include <pthread.h>
#include <stdint.h>

#include <rte_common.h>

#include "base/clock.h"

#include "control.h"
#include "dataplane.h"
#include "recorder.h"
#include "timeline.h"
#include "tsc.h"

/* A window's sums over every pod: too large for the stack (control.h). */
static struct pc_window win;

void
pc_timeline_start(struct pc_timeline *tl, uint64_t window_ns)
{
	uint64_t m = pc_mono_ns();

	pc_wallclock_init(&tl->clk, m, pc_now_ns());
	tl->window_ns = window_ns;
	tl->epoch = pc_wallclock_sequence(&tl->clk, pc_mono_ns(), window_ns);
	tl->next = tl->epoch + 1;
	tl->pending = NULL;
}

uint64_t
pc_timeline_due_ns(const struct pc_timeline *tl)
{
	return pc_wallclock_boundary(&tl->clk, tl->next, tl->window_ns);
}

void
pc_timeline_arm(const struct pc_timeline *tl)
{
	pc_control_arm(tl->next, pc_tsc_at(pc_timeline_due_ns(tl), pc_dp.hz), tl->pending);
}

/* UTC label of the window the armed boundary begins. */
static uint64_t
next_label(const struct pc_timeline *tl)
{
	return pc_wallclock_label(&tl->clk, tl->next, tl->window_ns);
}

/*
 * t: the table of the closed window. The two clocks are read together:
 * compared across the wait for the workers (a worker late by a second),
 * real time spent waiting would pass for a step of the wall clock.
 */
static void
check_clock(struct pc_timeline *tl, const struct pc_table *t)
{
	uint64_t m = pc_mono_ns();
	uint64_t wall = pc_now_ns();
	uint64_t seq = RTE_MAX(tl->next, pc_wallclock_sequence(&tl->clk, m, tl->window_ns));
	int64_t step = pc_wallclock_check(&tl->clk, seq, m, tl->window_ns, wall);

	if (step == 0)
		return;
	pc_wallclock_log(&tl->clk, step, next_label(tl));
	pc_recorder_clock(t, next_label(tl) / tl->window_ns, tl->window_ns, step);
}

/* The reload nt came with the boundary and every worker has taken it: old is unused. */
static void
take_reload(struct pc_timeline *tl, struct pc_table *old, struct pc_table *nt)
{
	pc_recorder_reload(nt, next_label(tl) / tl->window_ns, tl->window_ns);
	pthread_mutex_lock(&pc_dp.lock);
	nt->prev = NULL;
	pc_table_free(old);
	pthread_mutex_unlock(&pc_dp.lock);
	tl->pending = NULL;
}

/*
 * However long the control thread was held up, the workers switched at the
 * boundary itself and then waited in the next window for this.
 */
void
pc_timeline_close(struct pc_timeline *tl)
{
	struct pc_table *old = pc_dp.table;
	uint64_t closed_label = pc_wallclock_label(&tl->clk, tl->epoch, tl->window_ns);

	struct pc_table *nt = pc_control_close(tl->epoch, tl->window_ns, &win);
	win.start_ns = closed_label;
	/* the record first: with thousands of pods the lines take tens of ms */
	pc_recorder_window(&win);
	pc_control_print(&win);
	check_clock(tl, old);
	if (nt != NULL)
		take_reload(tl, old, nt);
	tl->epoch = tl->next;
	tl->next = RTE_MAX(tl->epoch, pc_wallclock_sequence(&tl->clk, pc_mono_ns(), tl->window_ns)) + 1;
	pc_timeline_arm(tl);
}

void
pc_timeline_stop(struct pc_timeline *tl)
{
	/* a boundary some worker passed before it stopped is closed as any other */
	if (pc_control_passed()) {
		pc_control_switch_stopped();
		pc_timeline_close(tl);
	}
	/* the last window is closed now, not at its end: its record says how far it got */
	uint64_t end = RTE_MAX(tl->epoch, pc_wallclock_sequence(&tl->clk, pc_mono_ns(), tl->window_ns)) + 1;
	pc_control_arm(end, 0, NULL);
	pc_control_switch_stopped();
	pc_control_close(tl->epoch, tl->window_ns, &win);
	win.start_ns = pc_wallclock_label(&tl->clk, tl->epoch, tl->window_ns);
	pc_control_print(&win);
	pc_recorder_window(&win);
	pc_recorder_stop_record(pc_dp.table,
				pc_wallclock_label(&tl->clk, end, tl->window_ns) / tl->window_ns,
				tl->window_ns);
}
