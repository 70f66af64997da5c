/* SPDX-License-Identifier: BSD-3-Clause */
#include <string.h>

#include "sync_record.h"

/* A TimeInterval the record can carry: -2^63 has no magnitude, so it is one more. */
static int64_t
interval(int64_t v)
{
	return v == INT64_MIN ? INT64_MIN + 1 : v;
}

void
pc_sync_fill(struct pc_record_sync *s, const struct pc_clock_window *w)
{
	memset(s, 0, sizeof(*s));
	s->discipline = PC_SYNC_PTP4L;
	s->polls = w->polls;
	s->readings = w->results[PC_CLOCK_OK];
	s->bounded = w->bounded;
	if (s->readings > 0)
		s->offset = interval(w->worst_offset);
	if (s->bounded > 0)
		s->bound_ns = w->worst_bound_ns;
	if (s->polls > 0 && s->bounded == s->polls)
		s->flags |= PC_SYNC_LOCKED;
	/* the source as the newest reading saw it, also one of a window before */
	if (!w->have_latest)
		return;
	const struct pc_clock_reading *r = &w->latest;
	if (r->gm_present)
		s->flags |= PC_SYNC_GM;
	s->path_delay = interval(r->path_delay);
	memcpy(s->clock, r->clock, sizeof(s->clock));
	memcpy(s->gm, r->gm, sizeof(s->gm));
	s->port = r->port;
	s->port_state = r->port_state;
	s->steps_removed = r->steps_removed;
}
