/* SPDX-License-Identifier: BSD-3-Clause */
#include <string.h>

#include "window.h"

static void
merge_poll(struct pc_clock_window *w, const struct pc_clock_poll *p)
{
	w->polls++;
	w->results[p->result]++;
	if (p->result != PC_CLOCK_OK)
		return;
	if (w->results[PC_CLOCK_OK] == 1 ||
	    pc_clock_magnitude(p->r.offset) > pc_clock_magnitude(w->worst_offset))
		w->worst_offset = p->r.offset;
	if (p->r.bounded) {
		w->bounded++;
		if (p->r.bound_ns > w->worst_bound_ns)
			w->worst_bound_ns = p->r.bound_ns;
	}
	w->have_latest = true;
	w->latest = p->r;
}

/* Appends n, the sum of polls newer than those of w, to w. */
static void
append_window(struct pc_clock_window *w, const struct pc_clock_window *n)
{
	if (n->results[PC_CLOCK_OK] > 0 &&
	    (w->results[PC_CLOCK_OK] == 0 ||
	     pc_clock_magnitude(n->worst_offset) > pc_clock_magnitude(w->worst_offset)))
		w->worst_offset = n->worst_offset;
	w->polls += n->polls;
	for (unsigned i = 0; i < PC_CLOCK_RESULTS; i++)
		w->results[i] += n->results[i];
	w->bounded += n->bounded;
	if (n->worst_bound_ns > w->worst_bound_ns)
		w->worst_bound_ns = n->worst_bound_ns;
	if (n->have_latest) {
		w->have_latest = true;
		w->latest = n->latest;
	}
}

void
pc_clock_acc_init(struct pc_clock_acc *a)
{
	memset(a, 0, sizeof(*a));
}

void
pc_clock_acc_add(struct pc_clock_acc *a, uint64_t mono_ns, enum pc_clock_result result,
		 const struct pc_clock_reading *r)
{
	if (a->count == PC_CLOCK_RING) {
		merge_poll(&a->older, &a->ring[a->head]);
		a->head = (a->head + 1) % PC_CLOCK_RING;
		a->count--;
	}
	struct pc_clock_poll *p = &a->ring[(a->head + a->count) % PC_CLOCK_RING];
	p->mono_ns = mono_ns;
	p->result = result;
	if (result == PC_CLOCK_OK)
		p->r = *r;
	else
		memset(&p->r, 0, sizeof(p->r));
	a->count++;
}

void
pc_clock_acc_take(struct pc_clock_acc *a, uint64_t cut_mono_ns, struct pc_clock_window *w)
{
	memset(w, 0, sizeof(*w));
	while (a->count > 0 && a->ring[a->head].mono_ns < cut_mono_ns) {
		merge_poll(w, &a->ring[a->head]);
		a->head = (a->head + 1) % PC_CLOCK_RING;
		a->count--;
	}
	/* what dropped out of the ring is older than anything in it */
	struct pc_clock_window ring_part = *w;
	*w = a->older;
	append_window(w, &ring_part);
	memset(&a->older, 0, sizeof(a->older));
	if (w->have_latest) {
		a->have_latest = true;
		a->latest = w->latest;
	} else if (a->have_latest) {
		w->have_latest = true;
		w->latest = a->latest;
	}
}
