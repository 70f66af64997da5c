/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Reconciliation (docs/reconcile.md): per tap, pod and direction, shaper
 * and tap windows of the same span compared one by one and over every run
 * of them, each within the boundary rule of pc_reconcile_boundary_bytes:
 * what crosses within the clocks' offset of a boundary may be counted in
 * either window by either observer.
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "base/clock.h"
#include "tap.h"

#include "tap_impl.h"

bool
pcv_tap_sees_passed(uint8_t side, enum pc_dir d)
{
	return side == PC_ROLE_FABRIC_TAP ? d == PC_DIR_UP : d == PC_DIR_DOWN;
}

/* The boundary bound of o for the tap's view of d; UINT64_MAX when unknown. */
static uint64_t
bound(const struct pc_reconcile *rc, const struct obs *o, uint32_t max_frame, bool passed)
{
	if (passed) {
		/* what crosses within the offset is held by the bucket and by the line */
		uint64_t bucket = pc_reconcile_boundary_bytes(o->cap_bps, o->burst_bytes,
							      rc->policy.offset_ns, max_frame);
		uint64_t line = pc_reconcile_boundary_bytes(rc->policy.line_bps, 0,
							    rc->policy.offset_ns, max_frame);
		return bucket < line ? bucket : line;
	}
	if (o->queue_delay_ns == QUEUE_UNKNOWN)
		return UINT64_MAX;
	return pc_reconcile_boundary_bytes(rc->policy.line_bps, 0,
					   rc->policy.offset_ns + o->queue_delay_ns, max_frame);
}

struct finding *
pcv_tap_finding(struct pc_reconcile *rc, bool failure)
{
	if (failure)
		rc->nfound_fail++;
	else
		rc->nfound_unrec++;
	if (rc->nkept == KEPT)
		return NULL;
	struct finding *f = &rc->found[rc->nkept++];
	f->failure = failure;
	return f;
}

/*
 * How far the tap may be from the shaper in one window, by its two
 * boundaries ([0] its start, [1] its end): above (the tap counted after a
 * boundary what the shaper counted before it) and below (the reverse), in
 * bytes and in frames.
 */
struct tol {
	uint64_t hi[2], lo[2];
	uint64_t hi_frames[2], lo_frames[2]; /* UINT64_MAX: only the bytes' bound */
	bool sliced;                         /* the tap's slices made one of them */
};

/* A comparison in progress: one tap, pod and direction over the shaper's windows. */
struct cmp {
	int tap;
	uint32_t pod;
	enum pc_dir d;
	bool passed;
	bool run; /* a run of agreeing windows is open */
	uint64_t run_start_ns, run_end_ns;
	uint64_t run_hi, run_lo, run_hi_frames, run_lo_frames; /* the bounds at its start */
	__int128 run_bytes, run_frames;
	struct tally *t;
};

static void
say_unreconciled(struct pc_reconcile *rc, const struct cmp *c, uint64_t start_ns, const char *why)
{
	char when[PC_UTC_LEN];
	struct finding *f = pcv_tap_finding(rc, false);

	c->t->unreconciled++;
	if (f == NULL)
		return;
	pc_utc_format(start_ns, when, sizeof(when));
	snprintf(f->msg, sizeof(f->msg), "tap %d: pod %s %s window %s: %s", c->tap + 1,
		 rc->ids[c->pod], pc_dir_name(c->d), when, why);
}

static void
say_disagree(struct pc_reconcile *rc, const struct cmp *c, uint64_t from_ns, uint64_t to_ns,
	     __int128 bytes, __int128 frames, uint64_t tol, uint64_t tol_frames, bool run)
{
	char a[PC_UTC_LEN], b[PC_UTC_LEN];
	struct finding *f = pcv_tap_finding(rc, true);

	c->t->disagree++;
	if (f == NULL)
		return;
	pc_utc_format(from_ns, a, sizeof(a));
	pc_utc_format(to_ns, b, sizeof(b));
	int n = snprintf(f->msg, sizeof(f->msg), "tap %d: pod %s %s %s %s%s%s: ", c->tap + 1,
			 rc->ids[c->pod], pc_dir_name(c->d), run ? "windows" : "window", a,
			 run ? " to " : "", run ? b : "");
	const char *what = c->passed ? "passed" : "was offered (passed + dropped)";
	if (n < 0 || (size_t)n >= sizeof(f->msg))
		return;
	if (bytes > (__int128)tol)
		snprintf(f->msg + n, sizeof(f->msg) - (size_t)n,
			 "the tap saw %" PRIu64 " B more than the shaper says %s (%+" PRId64
			 " frames), more than the %" PRIu64 " B the clocks allow",
			 (uint64_t)bytes, what, (int64_t)frames, tol);
	else
		snprintf(f->msg + n, sizeof(f->msg) - (size_t)n,
			 "the tap saw %" PRIu64 " frames more than the shaper says %s (%+" PRId64
			 " B), more than the %" PRIu64 " frames the clocks allow",
			 (uint64_t)frames, what, (int64_t)bytes, tol_frames);
}

static uint64_t
add_sat(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

static uint64_t
min_u64(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

/*
 * The most frames two bounds allow: a frame of a pod is at least
 * MIN_FRAME bytes, and no more than the slices counted (UINT64_MAX: none).
 */
static uint64_t
frames_tol(uint64_t bytes0, uint64_t bytes1, uint64_t frames0, uint64_t frames1)
{
	return min_u64(add_sat(bytes0, bytes1) / MIN_FRAME, add_sat(frames0, frames1));
}

/* Keeps, for the report, the largest lie window w could have hidden (docs/reconcile.md). */
static void
note_power(struct cmp *c, const struct win *w, const struct obs *so, const struct tol *e)
{
	uint64_t x = add_sat(add_sat(e->hi[0], e->hi[1]), add_sat(e->lo[0], e->lo[1]));
	unsigned __int128 of = (unsigned __int128)so->cap_bps * w->len_ns * w->count / 8000000000u;

	if (e->sliced)
		c->t->sliced++;
	if (x >= c->t->caught) {
		c->t->caught = x;
		c->t->caught_of = of > UINT64_MAX ? UINT64_MAX : (uint64_t)of;
	}
}

/*
 * One shaper window w against the tap's window tw of the same span. A
 * window agrees when tap − shaper is within the bounds at its two
 * boundaries, above and below; a run of agreeing windows when its sum is
 * within the bounds at the run's two ends (what crosses a boundary between
 * two of its windows is counted in one of them by each observer).
 */
static void
compare_window(struct pc_reconcile *rc, struct cmp *c, const struct win *w, const struct obs *so,
	       const struct obs *to, const struct tol *e)
{
	uint64_t s_bytes = so->pass_bytes[c->d], s_frames = so->pass_frames[c->d];
	if (!c->passed) {
		s_bytes += so->drop_bytes[c->d];
		s_frames += so->drop_frames[c->d];
	}
	__int128 db = (__int128)to->pass_bytes[c->d] - s_bytes;
	__int128 df = (__int128)to->pass_frames[c->d] - s_frames;
	uint64_t hi = add_sat(e->hi[0], e->hi[1]), lo = add_sat(e->lo[0], e->lo[1]);
	uint64_t hi_f = frames_tol(e->hi[0], e->hi[1], e->hi_frames[0], e->hi_frames[1]);
	uint64_t lo_f = frames_tol(e->lo[0], e->lo[1], e->lo_frames[0], e->lo_frames[1]);
	uint64_t end_ns = w->start_ns + w->count * w->len_ns;

	if (db > hi || df > hi_f) {
		say_disagree(rc, c, w->start_ns, end_ns, db, df, hi, hi_f, false);
		c->run = false;
		return;
	}
	/*
	 * Less than the shaper says hides nothing from the cap: the tap or its
	 * mirror missed frames its ports could not count, or the shaper
	 * claims more than crossed. Either way the window is no evidence.
	 */
	if (-db > lo || -df > lo_f) {
		char why[160];
		snprintf(why, sizeof(why),
			 "the tap saw %" PRIu64
			 " B less than the shaper says, more than the %" PRIu64
			 " B the clocks allow: its mirror lost frames, or the shaper over-reports",
			 (uint64_t)-db, lo);
		say_unreconciled(rc, c, w->start_ns, why);
		c->run = false;
		return;
	}
	uint64_t mag = (uint64_t)(db < 0 ? -db : db);
	if (mag > c->t->worst_diff || (c->t->agree == 0 && c->t->worst_tol == 0)) {
		c->t->worst_diff = mag;
		c->t->worst_tol = db < 0 ? lo : hi;
	}
	note_power(c, w, so, e);
	c->t->agree++;
	if (!c->run || c->run_end_ns != w->start_ns) {
		c->run = true;
		c->run_start_ns = w->start_ns;
		c->run_hi = e->hi[0];
		c->run_lo = e->lo[0];
		c->run_hi_frames = e->hi_frames[0];
		c->run_lo_frames = e->lo_frames[0];
		c->run_bytes = c->run_frames = 0;
	}
	c->run_bytes += db;
	c->run_frames += df;
	c->run_end_ns = end_ns;
	hi = add_sat(c->run_hi, e->hi[1]);
	hi_f = frames_tol(c->run_hi, e->hi[1], c->run_hi_frames, e->hi_frames[1]);
	if (c->run_bytes > hi || c->run_frames > hi_f) {
		say_disagree(rc, c, c->run_start_ns, end_ns, c->run_bytes, c->run_frames, hi, hi_f,
			     true);
		c->run = false;
	} else if (-c->run_bytes > add_sat(c->run_lo, e->lo[1]) ||
		   -c->run_frames >
		       frames_tol(c->run_lo, e->lo[1], c->run_lo_frames, e->lo_frames[1])) {
		c->run = false; /* short over the run: the next window starts another */
	}
}

/* The bound at the boundary between shaper windows a and b (either may be NULL). */
static uint64_t
edge_bound(const struct pc_reconcile *rc, const struct cmp *c, const struct win *a,
	   const struct win *b, uint32_t hint)
{
	uint64_t e = 0;
	const struct win *side[2] = { a, b };

	for (int i = 0; i < 2; i++) {
		const struct obs *o = side[i] != NULL ? find_obs(side[i], c->pod, hint) : NULL;
		if (o != NULL) {
			uint64_t x = bound(rc, o, side[i]->max_frame, c->passed);
			e = x > e ? x : e;
		}
	}
	return e;
}

/*
 * How far apart the two observers may count one frame at the boundary
 * between shaper windows a and b: the offset, and for what was offered
 * the longest queue delay either side (a frame queued before the boundary
 * is counted when it leaves).
 */
static uint64_t
edge_offset(const struct pc_reconcile *rc, const struct cmp *c, const struct win *a,
	    const struct win *b)
{
	uint64_t q = 0;
	const struct win *side[2] = { a, b };

	for (int i = 0; i < 2 && !c->passed; i++) {
		const struct obs *o = side[i] != NULL ? find_obs(side[i], c->pod, c->pod) : NULL;
		if (o != NULL && o->queue_delay_ns > q)
			q = o->queue_delay_ns;
	}
	return add_sat(rc->policy.offset_ns, q);
}

/*
 * A tap's slice bounds one side of a boundary when it is at least as long
 * as the observers may be apart there, and the tap saw that window fully
 * (frames it lost would be in neither count): what the shaper counted on
 * one side and the tap on the other crossed within that distance of the
 * boundary, on the tap's side, so the tap counted it in that slice.
 */
static void
slice_side(const struct win *tw, const struct obs *to, enum pc_dir d, bool first, uint64_t off,
	   uint64_t *bytes, uint64_t *frames, bool *sliced)
{
	if (tw == NULL || to == NULL || !tw->seen || tw->slice_ns == 0 || tw->slice_ns < off ||
	    (!first && tw->last_short))
		return;
	*bytes = min_u64(*bytes, first ? to->first_bytes[d] : to->last_bytes[d]);
	*frames = min_u64(*frames, first ? to->first_frames[d] : to->last_frames[d]);
	*sliced = true;
}

/* The tap's window of l adjacent to tw before (dir -1) or after (+1) it, or NULL. */
static const struct win *
tap_beside(const struct log *l, size_t j, int dir)
{
	if ((dir < 0 && j == 0) || (dir > 0 && j + 1 >= l->n))
		return NULL;
	const struct win *a = &l->w[dir < 0 ? j - 1 : j], *b = &l->w[dir < 0 ? j : j + 1];
	return adjacent(a, b) ? &l->w[dir < 0 ? j - 1 : j + 1] : NULL;
}

/*
 * The bounds of shaper window i against the tap's window j: at each
 * boundary the bucket's and the line's (e), made tighter by what the tap
 * counted in its slices: above by its own window's slices, below by those
 * of its windows either side.
 */
static void
window_tol(const struct pc_reconcile *rc, const struct cmp *c, size_t i, size_t j, uint64_t e0,
	   uint64_t e1, struct tol *e)
{
	const struct log *s = &rc->shaper, *tl = &rc->taps[c->tap];
	const struct win *w = &s->w[i], *tw = &tl->w[j];
	const struct win *prev = i > 0 && adjacent(&s->w[i - 1], w) ? &s->w[i - 1] : NULL;
	const struct win *next = i + 1 < s->n && adjacent(w, &s->w[i + 1]) ? &s->w[i + 1] : NULL;
	const struct win *tp = tap_beside(tl, j, -1), *tn = tap_beside(tl, j, 1);
	uint64_t off0 = edge_offset(rc, c, prev, w), off1 = edge_offset(rc, c, w, next);

	*e = (struct tol){ .hi = { e0, e1 },
			   .lo = { e0, e1 },
			   .hi_frames = { UINT64_MAX, UINT64_MAX },
			   .lo_frames = { UINT64_MAX, UINT64_MAX } };
	slice_side(tw, find_obs(tw, c->pod, c->pod), c->d, true, off0, &e->hi[0], &e->hi_frames[0],
		   &e->sliced);
	slice_side(tw, find_obs(tw, c->pod, c->pod), c->d, false, off1, &e->hi[1], &e->hi_frames[1],
		   &e->sliced);
	if (prev != NULL && tp != NULL)
		slice_side(tp, find_obs(tp, c->pod, c->pod), c->d, false, off0, &e->lo[0],
			   &e->lo_frames[0], &e->sliced);
	if (next != NULL && tn != NULL)
		slice_side(tn, find_obs(tn, c->pod, c->pod), c->d, true, off1, &e->lo[1],
			   &e->lo_frames[1], &e->sliced);
}

static void
compare_pod(struct pc_reconcile *rc, struct cmp *c)
{
	const struct log *s = &rc->shaper, *tl = &rc->taps[c->tap];
	size_t j = 0;

	for (size_t i = 0; i < s->n; i++) {
		const struct win *w = &s->w[i];
		const struct obs *so = find_obs(w, c->pod, c->pod);
		if (so == NULL)
			continue;
		while (j < tl->n && tl->w[j].start_ns < w->start_ns)
			j++;
		const struct win *tw = j < tl->n ? &tl->w[j] : NULL;
		if (tw == NULL || tw->start_ns != w->start_ns || tw->len_ns != w->len_ns ||
		    tw->count != w->count) {
			say_unreconciled(rc, c, w->start_ns,
					 "the tap logged no window of this span");
			c->run = false;
			continue;
		}
		const struct obs *to = find_obs(tw, c->pod, c->pod);
		if (!tw->seen || to == NULL) {
			say_unreconciled(rc, c, w->start_ns,
					 to == NULL ? "the tap does not count this pod" : tw->why);
			c->run = false;
			continue;
		}
		const struct win *prev = i > 0 && adjacent(&s->w[i - 1], w) ? &s->w[i - 1] : NULL;
		const struct win *next =
		    i + 1 < s->n && adjacent(w, &s->w[i + 1]) ? &s->w[i + 1] : NULL;
		uint64_t e0 = edge_bound(rc, c, prev, w, c->pod),
			 e1 = edge_bound(rc, c, w, next, c->pod);
		if (e0 == UINT64_MAX || e1 == UINT64_MAX) {
			say_unreconciled(rc, c, w->start_ns,
					 "what was offered is not bounded: its queue delay is "
					 "unknown without --pod-map");
			c->run = false;
			continue;
		}
		struct tol e;
		window_tol(rc, c, i, j, e0, e1, &e);
		compare_window(rc, c, w, so, to, &e);
	}
}

uint64_t
pc_reconcile_finish(struct pc_reconcile *rc)
{
	size_t per_tap = rc->nids * PC_DIR_COUNT;

	free(rc->tally);
	rc->tally = calloc((size_t)(rc->ntaps ? rc->ntaps : 1) * (per_tap ? per_tap : 1),
			   sizeof(*rc->tally));
	if (rc->tally == NULL)
		abort();
	for (int t = 0; t < rc->ntaps; t++) {
		/* a refused tap is no evidence: its refusal says so once, no window is listed */
		if (rc->taps[t].refused[0] != '\0')
			continue;
		if (rc->taps[t].open) {
			rc->taps[t].w[rc->taps[t].n - 1].why =
			    "no observe record says what the tap missed";
			rc->taps[t].open = false;
		}
		for (uint32_t p = 0; p < rc->nids; p++)
			for (int d = 0; d < PC_DIR_COUNT; d++) {
				struct cmp c = {
					.tap = t,
					.pod = p,
					.d = (enum pc_dir)d,
					.passed =
					    pcv_tap_sees_passed(rc->taps[t].side, (enum pc_dir)d),
					.t = &rc->tally[t * per_tap + p * PC_DIR_COUNT + d]
				};
				compare_pod(rc, &c);
				if (c.passed)
					pcv_tap_envelope(rc, t, p, (enum pc_dir)d, c.t);
				rc->total_agree += c.t->agree;
				rc->total_unrec += c.t->unreconciled;
				rc->total_fail += c.t->disagree;
			}
		pcv_tap_bypass(rc, t);
	}
	return rc->total_fail;
}
