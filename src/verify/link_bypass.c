/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A bypass a fabric-side tap shows (docs/verify.md, "Bypass"): the
 * shaper's LINK says the appliance's pod-side port of an uplink was down
 * all of a window, yet the tap on the fabric side of that uplink counted
 * frames of a pod on it in that window. Those frames did not cross the
 * appliance: the pod's cable reaches the fabric around it. A window down
 * only part of the time says nothing: the frames may have crossed while
 * the link was up.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "base/clock.h"

#include "tap_impl.h"

/* The LINK follows its WINDOW (only OBSERVE and ATTEST between, check 16): the last one logged. */
void
pcv_tap_link(struct pc_reconcile *rc, const struct pc_record *r)
{
	const struct pc_record_linkstate *ls = &r->linkstate;
	struct log *l = &rc->shaper;

	if (ls->kind != PC_LINK_WINDOW || l->n == 0)
		return;
	struct win *w = &l->w[l->n - 1];
	if (w->down != NULL || ls->span_ns != w->count * w->len_ns ||
	    w->start_ns + w->count * w->len_ns != r->window_start_ns)
		return;
	for (uint32_t i = 0; i < ls->nports; i++) {
		const struct pc_record_port *p = &ls->ports[i];
		if (p->side != PC_DIR_UP || p->down_ns < ls->span_ns)
			continue;
		if (w->down == NULL)
			w->down = calloc(ls->nports, sizeof(*w->down));
		if (w->down == NULL)
			abort();
		w->down[w->ndown++] = pcv_tap_link_index(rc, p->uplink, 0);
	}
}

static bool
is_down(const struct win *w, uint32_t uplink)
{
	for (uint32_t i = 0; i < w->ndown; i++)
		if (w->down[i] == uplink)
			return true;
	return false;
}

static void
say_bypass(struct pc_reconcile *rc, int tap, const struct win *w, const struct obs *o)
{
	char when[PC_UTC_LEN];
	uint64_t frames = 0;
	struct finding *f = pcv_tap_finding(rc, true);

	rc->total_fail++;
	if (f == NULL)
		return;
	for (int d = 0; d < PC_DIR_COUNT; d++)
		frames += o->pass_frames[d] + o->drop_frames[d];
	pc_utc_format(w->start_ns, when, sizeof(when));
	snprintf(f->msg, sizeof(f->msg),
		 "tap %d: pod %s window %s: bypass: uplink %s's pod-side link was down all of "
		 "the window by the shaper's link record, yet the fabric-side tap saw %" PRIu64
		 " frames of the pod: they went around the appliance",
		 tap + 1, rc->ids[o->pod], when, rc->links[o->uplink], frames);
}

static bool
saw_any(const struct obs *o)
{
	for (int d = 0; d < PC_DIR_COUNT; d++)
		if (o->pass_frames[d] + o->drop_frames[d] != 0)
			return true;
	return false;
}

void
pcv_tap_bypass(struct pc_reconcile *rc, int tap)
{
	const struct log *s = &rc->shaper, *l = &rc->taps[tap];
	size_t j = 0;

	if (l->side != PC_ROLE_FABRIC_TAP)
		return;
	for (size_t i = 0; i < s->n; i++) {
		const struct win *w = &s->w[i];
		if (w->ndown == 0)
			continue;
		while (j < l->n && l->w[j].start_ns < w->start_ns)
			j++;
		if (j == l->n)
			return;
		const struct win *tw = &l->w[j];
		if (tw->start_ns != w->start_ns || tw->count != w->count)
			continue;
		for (uint32_t k = 0; k < tw->nobs; k++)
			if (is_down(w, tw->obs[k].uplink) && saw_any(&tw->obs[k]))
				say_bypass(rc, tap, tw, &tw->obs[k]);
	}
}
