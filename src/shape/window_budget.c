/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The window promise's set-up; the per-frame functions are inline in
 * window_budget.h.
 */
#include <stdint.h>
#include <string.h>

#include "base/units.h"
#include "window_budget.h"

static uint64_t
sat64(pc_u128 x)
{
	return x > UINT64_MAX ? UINT64_MAX : (uint64_t)x;
}

uint64_t
pc_wb_budget_bytes(uint64_t cap_bps, uint64_t window_ns)
{
	return sat64((pc_u128)cap_bps * window_ns / ((pc_u128)8u * PC_NS_PER_SEC));
}

/*
 * The window in ticks rounded up, and the slot rounded up from that: any
 * W of real time spans at most k + 1 slots. (hz is podcapd's measure with
 * its margin, at least the TSC's true rate: a window of real time is no
 * more ticks than computed here.)
 */
static void
set_limits(struct pc_window_budget *w, const struct pc_limits *lim, uint64_t window_ns, uint64_t hz)
{
	pc_u128 window_ticks = ((pc_u128)window_ns * hz + PC_NS_PER_SEC - 1) / PC_NS_PER_SEC;
	uint64_t slot = sat64((window_ticks + PC_WB_K - 1) / PC_WB_K);

	w->slot_ticks = slot == 0 ? 1 : slot;
	w->budget = pc_wb_budget_bytes(lim->cap_bps, window_ns);
	w->delay_ticks = sat64((pc_u128)lim->queue_delay_ns * hz / PC_NS_PER_SEC);
}

void
pc_wb_init(struct pc_window_budget *w, const struct pc_limits *lim, uint64_t window_ns, uint64_t hz,
	   uint64_t now)
{
	memset(w, 0, sizeof(*w));
	set_limits(w, lim, window_ns, hz);
	w->slot = now / w->slot_ticks;
	w->next_tick =
	    w->slot + 1 > UINT64_MAX / w->slot_ticks ? UINT64_MAX : (w->slot + 1) * w->slot_ticks;
	pc_wb_count(w, w->budget);
}

void
pc_wb_reconfigure(struct pc_window_budget *w, const struct pc_limits *lim, uint64_t window_ns,
		  uint64_t hz)
{
	/* a reload cannot change the window (reload.c) and hz is fixed: the slots stay */
	uint64_t slot_ticks = w->slot_ticks;

	set_limits(w, lim, window_ns, hz);
	w->slot_ticks = slot_ticks;
}
