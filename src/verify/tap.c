/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Reconciling a shaper's log with its taps' (docs/reconcile.md): reading
 * the logs. Each is kept as its windows and, per window, each pod's counts
 * and limits; a tap's windows carry whether the tap saw them fully (its
 * OBSERVE records). Whose tap a tap is is verify/tap_pair.c; the
 * comparison verify/tap_compare.c, the tap's own envelope
 * verify/tap_envelope.c, the verdict and reports verify/tap_report.c.
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "tap.h"
#include "log/record.h"

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
	for (size_t i = 0; i < l->n; i++) {
		free(l->w[i].obs);
		free(l->w[i].down);
	}
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

uint32_t
pcv_tap_link_index(struct pc_reconcile *rc, const char *name, uint32_t hint)
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
		o->uplink = pcv_tap_link_index(rc, p->uplink, i > 0 ? w->obs[i - 1].uplink : 0);
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
	if (r.type == PC_REC_LINK)
		pcv_tap_link(rc, &r);
	if (pc_record_is_observe(r.type))
		rc->shaper.side = r.observe.side; /* a tap's log, given as the shaper's */
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

	for (uint32_t i = 0; i < r->observe.nseen; i++)
		for (int d = 0; d < PC_DIR_COUNT; d++)
			n += r->observe.seen[i].missed[d] + r->observe.seen[i].nombuf[d] +
			    r->observe.seen[i].errors[d];
	return n;
}

/* The tap's slices of each pod, into the window they are of; a pod it does not count has none. */
static void
tap_slices(struct pc_reconcile *rc, struct win *w, const struct pc_record *r)
{
	w->slice_ns = r->observe.slice_ns;
	w->last_short = (r->observe.slice_flags & PC_SLICE_LAST_SHORT) != 0;
	for (uint32_t i = 0; i < r->observe.nslices; i++) {
		const struct pc_record_slice *s = &r->observe.slices[i];
		uint32_t pod = pod_index(rc, s->pod, i);
		const struct obs *found = find_obs(w, pod, i);
		if (found == NULL)
			continue;
		struct obs *o = &w->obs[found - w->obs];
		for (int d = 0; d < PC_DIR_COUNT; d++) {
			o->first_bytes[d] = s->first_bytes[d];
			o->first_frames[d] = s->first_frames[d];
			o->last_bytes[d] = s->last_bytes[d];
			o->last_frames[d] = s->last_frames[d];
		}
	}
}

/* OBSERVE completes the window just logged: fully seen if it and the one before lost nothing. */
static void
tap_observe(struct pc_reconcile *rc, struct log *l, const struct pc_record *r)
{
	struct win *w = l->open ? &l->w[l->n - 1] : NULL;
	uint64_t lost = losses(r);

	if (l->side != 0 && l->side != r->observe.side)
		l->mixed_sides = true;
	l->side = r->observe.side;
	if (w == NULL || w->start_ns != r->window_start_ns || w->count != r->window_count) {
		l->prev_clean = false;
		return;
	}
	l->open = false;
	if (r->type == PC_REC_OBSERVE_SLICES)
		tap_slices(rc, w, r);
	if (lost != 0)
		w->why = "its ports lost frames";
	else if (!l->prev_clean && w->why == NULL)
		w->why = "the window before it was not fully seen";
	w->seen = w->why == NULL;
	l->prev_clean = lost == 0;
}

/*
 * A quote, a reload, a declaration, the clock's readings or a link record
 * say nothing of what the tap's ports saw, and move no window: the tap observed on through it. A quote may
 * even come between a WINDOW and its OBSERVE (the ledger thread appends it
 * once the WINDOW is in a checkpoint).
 */
static bool
says_nothing_seen(uint8_t type)
{
	return type == PC_REC_ATTEST || type == PC_REC_RELOAD || type == PC_REC_DECLARE ||
	    type == PC_REC_SYNC || type == PC_REC_LINK;
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
	if (l->open && !pc_record_is_observe(r.type)) {
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
	case PC_REC_OBSERVE_SLICES:
		tap_observe(rc, l, &r);
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
	for (size_t i = 0; i < l->n; i++) {
		free(l->w[i].obs);
		free(l->w[i].down);
	}
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
