/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Reconciling a shaper's log with its taps' (docs/reconcile.md). Each log
 * is kept as its windows and, per window, each pod's counts; a tap's
 * windows carry whether the tap saw them fully. Then, per tap, pod and
 * direction, shaper and tap windows of the same span are compared one by
 * one and over every run of them, each within the boundary rule of
 * pc_reconcile_boundary_bytes.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "tap.h"
#include "log/record.h"
#include "verify.h"

#include "tap_impl.h"

uint64_t
pc_reconcile_boundary_bytes(uint64_t rate_bps, uint64_t burst_bytes, uint64_t offset_ns,
			    uint32_t max_frame)
{
	/* with no offset both observers count every frame in the same window */
	if (offset_ns == 0)
		return 0;
	unsigned __int128 bits = (unsigned __int128)rate_bps * offset_ns;
	unsigned __int128 b = (bits + 8000000000ull - 1) / 8000000000ull;
	b += burst_bytes + max_frame;
	return b > UINT64_MAX ? UINT64_MAX : (uint64_t)b;
}

static void *
grow(void *p, size_t *cap, size_t need, size_t elem)
{
	if (need <= *cap)
		return p;
	size_t n = *cap ? *cap * 2 : 64;
	while (n < need)
		n *= 2;
	void *q = realloc(p, n * elem);
	if (q == NULL)
		abort();
	*cap = n;
	return q;
}

struct pc_reconcile *
pc_reconcile_new(const struct pc_reconcile_policy *p, const struct pc_config *const *maps,
		 size_t nmaps)
{
	struct pc_reconcile *rc = calloc(1, sizeof(*rc));

	if (rc == NULL)
		return NULL;
	rc->policy = *p;
	rc->maps = maps;
	rc->nmaps = nmaps;
	rc->digests = calloc(nmaps ? nmaps : 1, PC_DIGEST_LEN);
	rc->found = calloc(KEPT, sizeof(*rc->found));
	if (rc->digests == NULL || rc->found == NULL) {
		pc_reconcile_free(rc);
		return NULL;
	}
	for (size_t i = 0; i < nmaps; i++)
		pc_config_digest(maps[i], rc->digests[i]);
	return rc;
}

static void
log_free(struct log *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->w[i].obs);
	free(l->w);
}

void
pc_reconcile_free(struct pc_reconcile *rc)
{
	if (rc == NULL)
		return;
	log_free(&rc->shaper);
	for (int t = 0; t < rc->ntaps; t++)
		log_free(&rc->taps[t]);
	free(rc->digests);
	free(rc->ids);
	free(rc->links);
	for (size_t i = 0; i < rc->nlinksets; i++)
		free(rc->linksets[i]);
	free(rc->linksets);
	free(rc->tally);
	free(rc->found);
	free(rc);
}

/* The index of name among names (added when new), trying hint first. */
static uint32_t
name_index(char (**names)[PC_ID_LEN], size_t *n, size_t *cap, const char *name, uint32_t hint)
{
	if (hint < *n && strcmp((*names)[hint], name) == 0)
		return hint;
	for (size_t i = 0; i < *n; i++)
		if (strcmp((*names)[i], name) == 0)
			return (uint32_t)i;
	*names = grow(*names, cap, *n + 1, sizeof(**names));
	memcpy((*names)[*n], name, PC_ID_LEN);
	return (uint32_t)(*n)++;
}

static uint32_t
pod_index(struct pc_reconcile *rc, const char *id, uint32_t hint)
{
	return name_index(&rc->ids, &rc->nids, &rc->capids, id, hint);
}

static uint32_t
link_index(struct pc_reconcile *rc, const char *name, uint32_t hint)
{
	return name_index(&rc->links, &rc->nlinks, &rc->caplinks, name, hint);
}

/* The declared map a record names (its max_frame and queue delays), or NO_MAP. */
static uint32_t
map_of(const struct pc_reconcile *rc, const uint8_t digest[PC_DIGEST_LEN])
{
	for (size_t i = 0; i < rc->nmaps; i++)
		if (memcmp(rc->digests[i], digest, PC_DIGEST_LEN) == 0)
			return (uint32_t)i;
	return NO_MAP;
}

static int
cmp_name(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The index of a window's uplinks among the sets seen, each named once, in order. */
static uint32_t
linkset_index(struct pc_reconcile *rc, const struct pc_record *r)
{
	const char *name[PC_MAX_UPLINKS];
	char set[PC_MAX_UPLINKS * (PC_ID_LEN + 2)] = "";
	size_t at = 0;
	uint32_t n = r->nlinks < PC_MAX_UPLINKS ? r->nlinks : PC_MAX_UPLINKS;

	for (uint32_t i = 0; i < n; i++)
		name[i] = r->links[i].name;
	qsort(name, n, sizeof(name[0]), cmp_name);
	for (uint32_t i = 0; i < n; i++)
		at += (size_t)snprintf(set + at, sizeof(set) - at, "%s%s", i ? ", " : "", name[i]);
	for (size_t i = rc->nlinksets; i-- > 0;)
		if (strcmp(rc->linksets[i], set) == 0)
			return (uint32_t)i;
	rc->linksets =
	    grow(rc->linksets, &rc->caplinksets, rc->nlinksets + 1, sizeof(*rc->linksets));
	rc->linksets[rc->nlinksets] = strdup(set);
	if (rc->linksets[rc->nlinksets] == NULL)
		abort();
	return (uint32_t)rc->nlinksets++;
}

static struct win *
add_window(struct pc_reconcile *rc, struct log *l, const struct pc_record *r)
{
	uint32_t m = map_of(rc, r->podmap_digest);
	const struct pc_config *map = m != NO_MAP ? rc->maps[m] : NULL;

	l->w = grow(l->w, &l->cap, l->n + 1, sizeof(*l->w));
	struct win *w = &l->w[l->n++];
	memset(w, 0, sizeof(*w));
	w->start_ns = r->window_start_ns;
	w->len_ns = r->window_len_ns;
	w->count = r->window_count;
	w->map = m;
	w->links = linkset_index(rc, r);
	w->max_frame = map != NULL ? map->max_frame : ANY_MAX_FRAME;
	w->obs = calloc(r->npods ? r->npods : 1, sizeof(*w->obs));
	if (w->obs == NULL)
		abort();
	w->nobs = r->npods;
	for (uint32_t i = 0; i < r->npods; i++) {
		const struct pc_record_pod *p = &r->pods[i];
		struct obs *o = &w->obs[i];
		int k = map != NULL ? pc_config_find_pod(map, p->id) : -1;

		o->pod = pod_index(rc, p->id, i);
		o->uplink = link_index(rc, p->uplink, i > 0 ? w->obs[i - 1].uplink : 0);
		o->cap_bps = p->cap_bps;
		o->burst_bytes = p->burst_bytes;
		o->mode = p->mode;
		o->queue_delay_ns = (p->mode & PC_POD_MODE_POLICE) ? 0
		    : k >= 0 ? map->pods[k].limits.queue_delay_ns
			     : QUEUE_UNKNOWN;
		for (int d = 0; d < PC_DIR_COUNT; d++) {
			o->pass_bytes[d] = p->dir[d].pass_bytes;
			o->pass_frames[d] = p->dir[d].pass_frames;
			for (int k2 = 0; k2 < PC_POD_DROP_COUNT; k2++) {
				o->drop_bytes[d] += p->dir[d].drop_bytes[k2];
				o->drop_frames[d] += p->dir[d].drop_frames[k2];
			}
		}
	}
	return w;
}

static bool
decode(const uint8_t *rec, size_t len, struct pc_record *r)
{
	return pc_record_decode(rec, len, r, NULL) == 0;
}

void
pc_reconcile_shaper(struct pc_reconcile *rc, const uint8_t *rec, size_t len)
{
	struct pc_record r;

	if (!decode(rec, len, &r))
		return;
	if (r.type == PC_REC_WINDOW)
		add_window(rc, &rc->shaper, &r);
	if (r.type == PC_REC_OBSERVE)
		rc->shaper.side = r.side; /* a tap's log, given as the shaper's */
	pc_record_free(&r);
}

int
pc_reconcile_tap(struct pc_reconcile *rc, const char *source)
{
	if (rc->ntaps == PC_RECONCILE_MAX_TAPS)
		return -1;
	struct log *l = &rc->taps[rc->ntaps];
	snprintf(l->source, sizeof(l->source), "%s", source);
	return rc->ntaps++;
}

static uint64_t
losses(const struct pc_record *r)
{
	uint64_t n = 0;

	for (uint32_t i = 0; i < r->nseen; i++)
		for (int d = 0; d < PC_DIR_COUNT; d++)
			n += r->seen[i].missed[d] + r->seen[i].nombuf[d] + r->seen[i].errors[d];
	return n;
}

/* OBSERVE completes the window just logged: fully seen if it and the one before lost nothing. */
static void
tap_observe(struct log *l, const struct pc_record *r)
{
	struct win *w = l->open ? &l->w[l->n - 1] : NULL;
	uint64_t lost = losses(r);

	if (l->side != 0 && l->side != r->side)
		l->mixed_sides = true;
	l->side = r->side;
	if (w == NULL || w->start_ns != r->window_start_ns || w->count != r->window_count) {
		l->prev_clean = false;
		return;
	}
	l->open = false;
	if (lost != 0)
		w->why = "its ports lost frames";
	else if (!l->prev_clean && w->why == NULL)
		w->why = "the window before it was not fully seen";
	w->seen = w->why == NULL;
	l->prev_clean = lost == 0;
}

/*
 * A quote, a reload or a declaration says nothing of what the tap's ports
 * saw, and moves no window: the tap observed on through it. A quote may
 * even come between a WINDOW and its OBSERVE (the ledger thread appends it
 * once the WINDOW is in a checkpoint).
 */
static bool
says_nothing_seen(uint8_t type)
{
	return type == PC_REC_ATTEST || type == PC_REC_RELOAD || type == PC_REC_DECLARE;
}

void
pc_reconcile_tap_record(struct pc_reconcile *rc, int tap, const uint8_t *rec, size_t len)
{
	struct pc_record r;

	if (tap < 0 || tap >= rc->ntaps || !decode(rec, len, &r))
		return;
	struct log *l = &rc->taps[tap];
	if (says_nothing_seen(r.type)) {
		pc_record_free(&r);
		return;
	}
	if (l->open && r.type != PC_REC_OBSERVE) {
		l->w[l->n - 1].why = "no observe record says what the tap missed";
		l->open = false;
		l->prev_clean = false;
	}
	switch (r.type) {
	case PC_REC_WINDOW: {
		bool contiguous = l->n > 0 &&
		    l->w[l->n - 1].start_ns + l->w[l->n - 1].count * l->w[l->n - 1].len_ns ==
			r.window_start_ns;
		struct win *w = add_window(rc, l, &r);
		if (!contiguous) {
			w->why = "the tap started in it";
			l->prev_clean = false;
		}
		l->open = true;
		break;
	}
	case PC_REC_OBSERVE:
		tap_observe(l, &r);
		break;
	case PC_REC_STOP:
		if (l->n > 0) {
			l->w[l->n - 1].seen = false;
			l->w[l->n - 1].why = "the tap stopped in it";
		}
		/* fall through */
	default:
		/* START, GAP, CLOCK: the tap did not observe on from the window before */
		l->prev_clean = false;
	}
	pc_record_free(&r);
}

void
pc_reconcile_tap_refuse(struct pc_reconcile *rc, int tap, const char *why)
{
	if (tap < 0 || tap >= rc->ntaps)
		return;
	struct log *l = &rc->taps[tap];
	for (size_t i = 0; i < l->n; i++)
		free(l->w[i].obs);
	l->n = 0;
	l->open = false;
	if (l->refused[0] == '\0')
		rc->nrefused++;
	snprintf(l->refused, sizeof(l->refused), "%s", why);
}

void
pc_reconcile_shaper_failed(struct pc_reconcile *rc)
{
	rc->shaper_failed = true;
}

const struct pc_config *const *
pc_reconcile_maps(const struct pc_reconcile *rc, size_t *n)
{
	if (n != NULL)
		*n = rc->nmaps;
	return rc->maps;
}

/* ---- the comparison ---- */

/* What the tap on `side` sees of direction d: the shaper's passed, or what was offered to it. */
static bool
sees_passed(uint8_t side, enum pc_dir d)
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

static struct finding *
finding(struct pc_reconcile *rc, bool failure)
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

/* A comparison in progress: one tap, pod and direction over the shaper's windows. */
struct cmp {
	int tap;
	uint32_t pod;
	enum pc_dir d;
	bool passed;
	bool run; /* a run of agreeing windows is open */
	uint64_t run_start_ns, run_end_ns, run_bound;
	__int128 run_bytes, run_frames;
	struct tally *t;
};

static void
say_unreconciled(struct pc_reconcile *rc, const struct cmp *c, uint64_t start_ns, const char *why)
{
	char when[PC_UTC_LEN];
	struct finding *f = finding(rc, false);

	c->t->unreconciled++;
	if (f == NULL)
		return;
	pc_utc_format(start_ns, when, sizeof(when));
	snprintf(f->msg, sizeof(f->msg), "tap %d: pod %s %s window %s: %s", c->tap + 1,
		 rc->ids[c->pod], pc_dir_name(c->d), when, why);
}

static void
say_disagree(struct pc_reconcile *rc, const struct cmp *c, uint64_t from_ns, uint64_t to_ns,
	     __int128 bytes, __int128 frames, uint64_t tol, bool run)
{
	char a[PC_UTC_LEN], b[PC_UTC_LEN];
	struct finding *f = finding(rc, true);

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
			 (uint64_t)frames, what, (int64_t)bytes, tol / MIN_FRAME);
}

static uint64_t
add_sat(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

/*
 * One shaper window w against the tap's window tw of the same span. A
 * window agrees when |tap − shaper| is within the bounds at its two
 * boundaries; a run of agreeing windows when its sum is within the bounds
 * at the run's two ends (what crosses a boundary between two of its
 * windows is counted in one of them by each observer).
 */
static void
compare_window(struct pc_reconcile *rc, struct cmp *c, const struct win *w, const struct obs *so,
	       const struct obs *to, uint64_t e_start, uint64_t e_end)
{
	uint64_t s_bytes = so->pass_bytes[c->d], s_frames = so->pass_frames[c->d];
	if (!c->passed) {
		s_bytes += so->drop_bytes[c->d];
		s_frames += so->drop_frames[c->d];
	}
	__int128 db = (__int128)to->pass_bytes[c->d] - s_bytes;
	__int128 df = (__int128)to->pass_frames[c->d] - s_frames;
	uint64_t tol = add_sat(e_start, e_end);
	uint64_t end_ns = w->start_ns + w->count * w->len_ns;

	if (db > tol || df > tol / MIN_FRAME) {
		say_disagree(rc, c, w->start_ns, end_ns, db, df, tol, false);
		c->run = false;
		return;
	}
	/*
	 * Less than the shaper says hides nothing from the cap: the tap or its
	 * mirror missed frames its ports could not count, or the shaper
	 * claims more than crossed. Either way the window is no evidence.
	 */
	if (-db > tol || -df > tol / MIN_FRAME) {
		char why[160];
		snprintf(why, sizeof(why),
			 "the tap saw %" PRIu64
			 " B less than the shaper says, more than the %" PRIu64
			 " B the clocks allow: its mirror lost frames, or the shaper over-reports",
			 (uint64_t)-db, tol);
		say_unreconciled(rc, c, w->start_ns, why);
		c->run = false;
		return;
	}
	uint64_t mag = (uint64_t)(db < 0 ? -db : db);
	if (mag > c->t->worst_diff || (c->t->agree == 0 && c->t->worst_tol == 0)) {
		c->t->worst_diff = mag;
		c->t->worst_tol = tol;
	}
	c->t->agree++;
	if (!c->run || c->run_end_ns != w->start_ns) {
		c->run = true;
		c->run_start_ns = w->start_ns;
		c->run_bound = e_start;
		c->run_bytes = c->run_frames = 0;
	}
	c->run_bytes += db;
	c->run_frames += df;
	c->run_end_ns = end_ns;
	tol = add_sat(c->run_bound, e_end);
	if (c->run_bytes > tol || c->run_frames > tol / MIN_FRAME) {
		say_disagree(rc, c, c->run_start_ns, end_ns, c->run_bytes, c->run_frames, tol,
			     true);
		c->run = false;
	} else if (-c->run_bytes > tol || -c->run_frames > tol / MIN_FRAME) {
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
		compare_window(rc, c, w, so, to, e0, e1);
	}
}

/* Bytes x 8e9: what a cap in bit/s earns over ns, exactly. */
#define SCALE 8000000000ll

/* The pod's block of window i of l, when it is the same bucket as that of window j. */
static const struct obs *
same_bucket(const struct log *l, size_t i, size_t j, uint32_t pod)
{
	if (i >= l->n)
		return NULL;
	const struct win *a = &l->w[i < j ? i : j], *b = &l->w[i < j ? j : i];
	const struct obs *o = find_obs(&l->w[i], pod, pod);
	const struct obs *p = find_obs(&l->w[j], pod, pod);
	/* a pod that moved to another uplink is another bucket */
	return adjacent(a, b) && o != NULL && p != NULL && o->uplink == p->uplink ? o : NULL;
}

/*
 * What the shaper's bucket can pass of pod in the offset D before the
 * tap's window i, scaled: the level it may hold D before (the burst in force
 * then) and what it earns over D at the caps in force, walking back
 * through the windows D covers. Those the tap's log does not show (before
 * its first window, across a hole) are taken to have window i's limits. A
 * reload only clamps the level it carries, so nothing else is owed; and
 * what crosses in D is held by the line too, the level after it by window
 * i's burst.
 */
static __int128
before_run(const struct pc_reconcile *rc, const struct log *l, size_t i, uint32_t pod)
{
	const struct obs *o = find_obs(&l->w[i], pod, pod), *k = o;
	uint64_t left = rc->policy.offset_ns;
	__int128 earned = 0;

	for (size_t j = i; left > 0;) {
		const struct obs *p = j > 0 ? same_bucket(l, j - 1, j, pod) : NULL;
		if (p == NULL) {
			earned += (__int128)k->cap_bps * left;
			break;
		}
		j--;
		k = p;
		uint64_t span = l->w[j].count * l->w[j].len_ns;
		span = span < left ? span : left;
		earned += (__int128)k->cap_bps * span;
		left -= span;
	}
	__int128 bucket = (__int128)k->burst_bytes * SCALE + earned;
	__int128 line = (__int128)rc->policy.line_bps * rc->policy.offset_ns +
	    ((__int128)l->w[i].max_frame + o->burst_bytes) * SCALE;
	return bucket < line ? bucket : line;
}

/* What the bucket earns in the offset after the tap's window i, at the caps then in force. */
static __int128
after_run(const struct pc_reconcile *rc, const struct log *l, size_t i, uint32_t pod)
{
	const struct obs *k = find_obs(&l->w[i], pod, pod);
	uint64_t left = rc->policy.offset_ns;
	__int128 earned = 0;

	for (size_t j = i; left > 0;) {
		const struct obs *p = same_bucket(l, j + 1, j, pod);
		if (p == NULL) {
			earned += (__int128)k->cap_bps * left;
			break;
		}
		j++;
		k = p;
		uint64_t span = l->w[j].count * l->w[j].len_ns;
		span = span < left ? span : left;
		earned += (__int128)k->cap_bps * span;
		left -= span;
	}
	return earned;
}

/* The worst run of a tap's windows ending at the one in hand. */
struct env_run {
	bool open;
	__int128 excess; /* its bytes less what its windows earn, less what it may start with */
	__int128 start;  /* what it may start with (before_run) */
	__int128 earned; /* what its windows earn */
	uint64_t from_ns, bytes; /* where it begins, and the bytes it saw */
};

static void
say_cap_broken(struct pc_reconcile *rc, int tap, uint32_t pod, enum pc_dir d,
	       const struct env_run *r, uint64_t to_ns, uint64_t allowed)
{
	char a[PC_UTC_LEN], b[PC_UTC_LEN];
	struct finding *f = finding(rc, true);

	if (f == NULL)
		return;
	pc_utc_format(r->from_ns, a, sizeof(a));
	pc_utc_format(to_ns, b, sizeof(b));
	snprintf(f->msg, sizeof(f->msg),
		 "tap %d: pod %s %s: the tap saw %" PRIu64 " B pass from %s to %s, more than "
		 "the %" PRIu64 " B the bursts and caps in force allow over that time and the "
		 "clock offset either side: the cap did not hold",
		 tap + 1, rc->ids[pod], pc_dir_name(d), r->bytes, a, b, allowed);
}

/*
 * The verifier's own evidence that the cap held (docs/reconcile.md): in the
 * direction the tap sees passed, every run of the tap's consecutive windows
 * of a pod on one uplink (reloads between them included: a bucket's level
 * is carried, clamped) saw at most what the shaper's bucket could pass from
 * the offset before the run to the offset after it, at the limits in force
 * there: before_run + the caps x the windows + after_run + 2 x max_frame for
 * the rounding of a real bucket. The worst run ending at each window is
 * kept as it goes, in one pass.
 */
static void
tap_envelope(struct pc_reconcile *rc, int tap, uint32_t pod, enum pc_dir d, struct tally *t)
{
	const struct log *l = &rc->taps[tap];
	struct env_run r = { .open = false };

	for (size_t i = 0; i < l->n; i++) {
		const struct win *w = &l->w[i];
		const struct obs *o = find_obs(w, pod, pod);
		if (o == NULL) {
			r.open = false;
			continue;
		}
		__int128 earn = (__int128)o->cap_bps * (w->count * w->len_ns);
		__int128 x = (__int128)o->pass_bytes[d] * SCALE - earn;
		__int128 start = before_run(rc, l, i, pod);
		bool goes_on = r.open && i > 0 && same_bucket(l, i - 1, i, pod) != NULL;
		/* a run from here is worse than the one that ends here when it may start with less */
		if (!goes_on || r.excess < -start) {
			r = (struct env_run){ .open = true,
					      .excess = -start,
					      .start = start,
					      .from_ns = w->start_ns };
		}
		r.excess += x;
		r.earned += earn;
		r.bytes += o->pass_bytes[d];
		__int128 end = after_run(rc, l, i, pod) + (__int128)2 * w->max_frame * SCALE;
		if (r.excess > end) {
			t->disagree++;
			say_cap_broken(rc, tap, pod, d, &r, w->start_ns + w->count * w->len_ns,
				       (uint64_t)((r.start + r.earned + end) / SCALE));
			r.open = false; /* start again after the window that broke it */
		}
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
					.passed = sees_passed(rc->taps[t].side, (enum pc_dir)d),
					.t = &rc->tally[t * per_tap + p * PC_DIR_COUNT + d]
				};
				compare_pod(rc, &c);
				if (c.passed)
					tap_envelope(rc, t, p, (enum pc_dir)d, c.t);
				rc->total_agree += c.t->agree;
				rc->total_unrec += c.t->unreconciled;
				rc->total_fail += c.t->disagree;
			}
	}
	return rc->total_fail;
}

/* ---- reports ---- */

static bool
verdict_ok(const struct pc_reconcile *rc)
{
	return rc->total_fail == 0 && rc->nrefused == 0 && !rc->shaper_failed;
}

static void __attribute__((format(printf, 4, 5)))
append(char *buf, size_t len, size_t *at, const char *fmt, ...)
{
	va_list ap;

	if (*at >= len)
		return;
	va_start(ap, fmt);
	int n = vsnprintf(buf + *at, len - *at, fmt, ap);
	va_end(ap);
	*at = n < 0 ? len : *at + (size_t)n;
}

void
pc_reconcile_result_line(const struct pc_reconcile *rc, char *buf, size_t len)
{
	size_t at = 0;

	append(buf, len, &at,
	       "%s: %" PRIu64 " windows agree, %" PRIu64 " unreconciled, %" PRIu64 " disagree",
	       verdict_ok(rc) ? "reconciled" : "RECONCILE FAILED", rc->total_agree, rc->total_unrec,
	       rc->total_fail);
	for (int t = 0; t < rc->ntaps; t++)
		if (rc->taps[t].refused[0] != '\0') {
			append(buf, len, &at, "; tap %d refused: %s", t + 1, rc->taps[t].refused);
			if (rc->nrefused > 1)
				append(buf, len, &at, " (and %d more tap%s refused)",
				       rc->nrefused - 1, rc->nrefused == 2 ? "" : "s");
			break;
		}
	if (rc->shaper_failed)
		append(buf, len, &at, "; the shaper's log failed verification (its report above)");
}

static const char *
side_name(uint8_t side)
{
	return side == PC_ROLE_POD_TAP   ? "pod side"
	    : side == PC_ROLE_FABRIC_TAP ? "fabric side"
					 : "side unknown";
}

/* What was compared for tap t, pod p and direction d; NULL when nothing was. */
static const struct tally *
row(const struct pc_reconcile *rc, int t, uint32_t p, int d)
{
	const struct tally *y = &rc->tally[((size_t)t * rc->nids + p) * PC_DIR_COUNT + (size_t)d];

	return y->agree + y->unreconciled + y->disagree == 0 ? NULL : y;
}

void
pc_reconcile_print_text(const struct pc_reconcile *rc, FILE *f)
{
	char line[2 * PC_RECONCILE_WHY_LEN];

	fprintf(f, "\nreconciliation (clock offset %" PRIu64 " ns, line rate %" PRIu64 " bit/s)\n",
		rc->policy.offset_ns, rc->policy.line_bps);
	for (int t = 0; t < rc->ntaps; t++) {
		if (rc->taps[t].refused[0] != '\0')
			fprintf(f, "tap %d: %s, refused: %s\n", t + 1, rc->taps[t].source,
				rc->taps[t].refused);
		else
			fprintf(f, "tap %d: %s, %s\n", t + 1, rc->taps[t].source,
				side_name(rc->taps[t].side));
		for (uint32_t p = 0; p < rc->nids; p++)
			for (int d = 0; d < PC_DIR_COUNT; d++) {
				const struct tally *y = row(rc, t, p, d);
				if (y == NULL)
					continue;
				fprintf(f,
					"  %s %s (%s): %" PRIu64
					" windows agree (largest difference %" PRIu64 " B, %" PRIu64
					" B allowed), %" PRIu64 " unreconciled, %" PRIu64
					" disagree\n",
					rc->ids[p], pc_dir_name((enum pc_dir)d),
					sees_passed(rc->taps[t].side, (enum pc_dir)d) ? "passed"
										      : "offered",
					y->agree, y->worst_diff, y->worst_tol, y->unreconciled,
					y->disagree);
			}
	}
	for (uint64_t i = 0; i < rc->nkept; i++)
		fprintf(f, "%s: %s\n", rc->found[i].failure ? "reconcile" : "unreconciled",
			rc->found[i].msg);
	if (rc->nfound_fail + rc->nfound_unrec > rc->nkept)
		fprintf(f, "(%" PRIu64 " more findings not listed)\n",
			rc->nfound_fail + rc->nfound_unrec - rc->nkept);
	pc_reconcile_result_line(rc, line, sizeof(line));
	fprintf(f, "%s\n", line);
}

void
pc_reconcile_print_json(const struct pc_reconcile *rc, FILE *f)
{
	fprintf(f, "{\"offset_ns\":%" PRIu64 ",\"line_bps\":%" PRIu64 ",\"taps\":[",
		rc->policy.offset_ns, rc->policy.line_bps);
	for (int t = 0; t < rc->ntaps; t++) {
		fprintf(f, "%s{\"source\":", t ? "," : "");
		pc_json_string(f, rc->taps[t].source);
		fprintf(f, ",\"side\":\"%s\",\"pods\":[", side_name(rc->taps[t].side));
		bool first = true;
		for (uint32_t p = 0; p < rc->nids; p++)
			for (int d = 0; d < PC_DIR_COUNT; d++) {
				const struct tally *y = row(rc, t, p, d);
				if (y == NULL)
					continue;
				fprintf(f, "%s{\"pod\":", first ? "" : ",");
				pc_json_string(f, rc->ids[p]);
				fprintf(f,
					",\"dir\":\"%s\",\"agree\":%" PRIu64
					",\"unreconciled\":%" PRIu64 ",\"disagree\":%" PRIu64
					",\"largest_difference\":%" PRIu64 ",\"allowed\":%" PRIu64
					"}",
					pc_dir_name((enum pc_dir)d), y->agree, y->unreconciled,
					y->disagree, y->worst_diff, y->worst_tol);
				first = false;
			}
		fprintf(f, "]}");
	}
	fprintf(f, "],\"findings\":[");
	for (uint64_t i = 0; i < rc->nkept; i++) {
		fprintf(f, "%s{\"failure\":%s,\"message\":", i ? "," : "",
			rc->found[i].failure ? "true" : "false");
		pc_json_string(f, rc->found[i].msg);
		fputc('}', f);
	}
	fprintf(f,
		"],\"agree\":%" PRIu64 ",\"unreconciled\":%" PRIu64 ",\"disagree\":%" PRIu64
		",\"refused_total\":%d,\"refused\":[",
		rc->total_agree, rc->total_unrec, rc->total_fail, rc->nrefused);
	bool first = true;
	for (int t = 0; t < rc->ntaps; t++) {
		if (rc->taps[t].refused[0] == '\0')
			continue;
		fprintf(f, "%s{\"tap\":%d,\"source\":", first ? "" : ",", t + 1);
		pc_json_string(f, rc->taps[t].source);
		fputs(",\"reason\":", f);
		pc_json_string(f, rc->taps[t].refused);
		fputc('}', f);
		first = false;
	}
	char line[2 * PC_RECONCILE_WHY_LEN];
	pc_reconcile_result_line(rc, line, sizeof(line));
	fprintf(f, "],\"shaper_verified\":%s,\"ok\":%s,\"result\":",
		rc->shaper_failed ? "false" : "true", verdict_ok(rc) ? "true" : "false");
	pc_json_string(f, line);
	fputc('}', f);
}

static void
html_n(FILE *f, const char *key, uint64_t x)
{
	fprintf(f, "<td class=\"n\" data-k=\"%s\">%" PRIu64 "</td>", key, x);
}

/* The page's "taps" section: the JSON's reconciliation, cell by cell. */
void
pc_reconcile_print_html(const struct pc_reconcile *rc, FILE *f)
{
	fprintf(f,
		"<section id=\"taps\" class=\"%s\">\n<h2>Taps</h2>\n<table id=\"tap-summary\">\n",
		verdict_ok(rc) ? "ok" : "failed");
	fputs("<tr><th>windows that agree</th>", f);
	html_n(f, "agree", rc->total_agree);
	fputs("</tr>\n<tr><th>not reconciled</th>", f);
	html_n(f, "unreconciled", rc->total_unrec);
	fputs("</tr>\n<tr><th>disagree</th>", f);
	html_n(f, "disagree", rc->total_fail);
	fputs("</tr>\n<tr><th>taps refused</th>", f);
	html_n(f, "refused", (uint64_t)rc->nrefused);
	fputs("</tr>\n</table>\n", f);
	for (int t = 0; t < rc->ntaps; t++) {
		if (rc->taps[t].refused[0] == '\0')
			continue;
		fprintf(f, "<p class=\"bad\" data-k=\"refused_reason\">tap %d (", t + 1);
		pc_html_escape(f, rc->taps[t].source);
		fputs(") refused: ", f);
		pc_html_escape(f, rc->taps[t].refused);
		fputs("</p>\n", f);
	}
	for (uint64_t i = 0; i < rc->nkept; i++) {
		fprintf(f, "<p class=\"%s\" data-k=\"message\">",
			rc->found[i].failure ? "bad" : "warn");
		pc_html_escape(f, rc->found[i].msg);
		fputs("</p>\n", f);
	}
	fputs("<table id=\"tap-list\">\n<tr><th>tap</th><th>side</th><th>pod</th><th>dir</th>"
	      "<th>agree</th><th>not reconciled</th><th>disagree</th><th>largest difference</th>"
	      "<th>allowed</th></tr>\n",
	      f);
	for (int t = 0; t < rc->ntaps; t++)
		for (uint32_t p = 0; p < rc->nids; p++)
			for (int d = 0; d < PC_DIR_COUNT; d++) {
				const struct tally *y = row(rc, t, p, d);

				if (y == NULL)
					continue;
				fputs("<tr class=\"tap-row\"><td data-k=\"source\">", f);
				pc_html_escape(f, rc->taps[t].source);
				fprintf(f, "</td><td data-k=\"side\">%s</td><td data-k=\"pod\">",
					side_name(rc->taps[t].side));
				pc_html_escape(f, rc->ids[p]);
				fprintf(f, "</td><td data-k=\"dir\">%s</td>",
					pc_dir_name((enum pc_dir)d));
				html_n(f, "agree", y->agree);
				html_n(f, "unreconciled", y->unreconciled);
				html_n(f, "disagree", y->disagree);
				html_n(f, "largest_difference", y->worst_diff);
				html_n(f, "allowed", y->worst_tol);
				fputs("</tr>\n", f);
			}
	fputs("</table>\n</section>\n", f);
}
