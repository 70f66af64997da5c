/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Whose tap a tap is (docs/reconcile.md, "Whose tap"): its log is compared
 * with the shaper's only when it is a tap's log, one side's, and declares
 * what the shaper's does in every window both logs hold: the same uplinks,
 * the same pods on the same uplinks with the same limits; and, where the
 * declared maps of both are known, the shaper's pod map but for the lines
 * that are the appliance's own. A tap of another appliance whose pods have
 * the same ids would otherwise agree with the shaper over every idle
 * window.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "tap.h"
#include "log/record.h"

#include "tap_impl.h"

static const char *
role_name(unsigned role)
{
	return role == PC_ROLE_POD_TAP   ? "pod-tap"
	    : role == PC_ROLE_FABRIC_TAP ? "fabric-tap"
					 : "shaper";
}

static void
limits_text(char *buf, size_t len, const struct obs *o)
{
	snprintf(buf, len, "cap %" PRIu64 " bit/s, burst %" PRIu64 " B, %s%s", o->cap_bps,
		 o->burst_bytes, (o->mode & PC_POD_MODE_POLICE) ? "police" : "shape",
		 (o->mode & PC_POD_MODE_WINDOW) ? ", window promise" : "");
}

static bool
same_limits(const struct obs *a, const struct obs *b)
{
	return a->cap_bps == b->cap_bps && a->burst_bytes == b->burst_bytes && a->mode == b->mode;
}

/* The tap's window tw declares the shaper's window sw's uplinks and pods. */
static int
windows_pair(const struct pc_reconcile *rc, const struct win *sw, const struct win *tw,
	     struct pc_error *err)
{
	char when[PC_UTC_LEN], a[96], b[96];

	pc_utc_format(sw->start_ns, when, sizeof(when));
	if (sw->links != tw->links)
		return pc_error_set(err, "window %s: its uplinks are %s, the shaper's %s", when,
				    rc->linksets[tw->links], rc->linksets[sw->links]);
	for (uint32_t i = 0; i < sw->nobs; i++) {
		const struct obs *so = &sw->obs[i], *to = find_obs(tw, so->pod, i);
		const char *id = rc->ids[so->pod];

		if (to == NULL)
			return pc_error_set(err,
					    "window %s: pod %s is in the shaper's log, not in "
					    "the tap's",
					    when, id);
		if (to->uplink != so->uplink)
			return pc_error_set(err,
					    "window %s: pod %s is on uplink %s in the tap's log, "
					    "on %s in the shaper's",
					    when, id, rc->links[to->uplink], rc->links[so->uplink]);
		if (!same_limits(so, to)) {
			limits_text(a, sizeof(a), to);
			limits_text(b, sizeof(b), so);
			return pc_error_set(err,
					    "window %s: pod %s has %s in the tap's log, %s in "
					    "the shaper's",
					    when, id, a, b);
		}
	}
	for (uint32_t i = 0; tw->nobs != sw->nobs && i < tw->nobs; i++)
		if (find_obs(sw, tw->obs[i].pod, i) == NULL)
			return pc_error_set(err,
					    "window %s: the tap counts pod %s, which the "
					    "shaper's log does not have",
					    when, rc->ids[tw->obs[i].pod]);
	return 0;
}

/* The canonical form's lines that are the appliance's own, not what it enforces. */
static bool
own_line(const char *line, size_t len)
{
	/* the cables too: a tap's ports face other neighbours than the shaper's */
	static const char *const own[] = { "appliance ",
					   "origin ",
					   "role ",
					   "slice ",
					   "auditor_key ",
					   "pod_port ",
					   "fabric_port ",
					   "workers ",
					   "pod_neighbor ",
					   "fabric_neighbor ",
					   "lldp_max_silence_ns " };

	for (size_t i = 0; i < sizeof(own) / sizeof(own[0]); i++)
		if (len >= strlen(own[i]) && strncmp(line, own[i], strlen(own[i])) == 0)
			return true;
	return false;
}

/* The next line of *p that is not the appliance's own; its length, or 0 at the end. */
static size_t
next_line(const char **p, const char **line)
{
	while (**p != '\0') {
		const char *nl = strchr(*p, '\n');
		size_t len = nl != NULL ? (size_t)(nl - *p) : strlen(*p);

		*line = *p;
		*p += len + (nl != NULL);
		if (!own_line(*line, len))
			return len;
	}
	return 0;
}

static char *
canonical(const struct pc_config *c)
{
	size_t len = pc_config_canonical(c, NULL, 0);
	char *buf = malloc(len + 1);

	if (buf == NULL)
		abort();
	pc_config_canonical(c, buf, len + 1);
	return buf;
}

/* Where two canonical forms part, less the appliance's own lines; 0 when they do not. */
static int
canonical_pair(const struct pc_config *s, const struct pc_config *t, struct pc_error *err)
{
	char *a = canonical(s), *b = canonical(t);
	const char *pa = a, *pb = b, *la = "", *lb = "";
	char pod[PC_ID_LEN + 16] = "";
	int rc = 0;

	for (;;) {
		size_t na = next_line(&pa, &la), nb = next_line(&pb, &lb);
		if (na == 0 && nb == 0)
			break;
		if (na == nb && strncmp(la, lb, na) == 0) {
			if (strncmp(la, "pod ", 4) == 0)
				snprintf(pod, sizeof(pod), " (pod %.*s)", (int)(na - 4), la + 4);
			continue;
		}
		rc = pc_error_set(err,
				  "its pod map (appliance %s) is not the shaper's (appliance %s): "
				  "'%.*s' where the shaper's has '%.*s'%s",
				  t->appliance_id, s->appliance_id, nb ? (int)nb : 6,
				  nb ? lb : "no line", na ? (int)na : 7, na ? la : "no line", pod);
		break;
	}
	free(a);
	free(b);
	return rc;
}

/* The tap's declared map t pairs with the shaper's s, for a tap of `side`. */
static int
maps_pair(const struct pc_config *s, const struct pc_config *t, unsigned side, struct pc_error *err)
{
	if (s->role != PC_ROLE_SHAPER)
		return pc_error_set(err,
				    "the shaper's pod map (appliance %s) has appliance.role %s",
				    s->appliance_id, role_name(s->role));
	if (t->role != side)
		return pc_error_set(err,
				    "its pod map (appliance %s) has appliance.role %s, its OBSERVE "
				    "records are a %s's",
				    t->appliance_id, role_name(t->role), role_name(side));
	return canonical_pair(s, t, err);
}

/* What makes a log no tap's at all, or not one tap's. */
static int
is_a_tap(const struct pc_reconcile *rc, const struct log *l, struct pc_error *err)
{
	if (l->side == 0)
		return pc_error_set(err,
				    "its log has no OBSERVE record: not the log of a tap "
				    "(podcapd with appliance.role pod-tap or fabric-tap)");
	if (l->mixed_sides)
		return pc_error_set(err,
				    "its OBSERVE records name both a pod-side and a "
				    "fabric-side tap: the runs of two taps in one log");
	if (rc->shaper.side != 0)
		return pc_error_set(err, "the shaper's log has OBSERVE records: it is a %s's log",
				    role_name(rc->shaper.side));
	if (l->n > 0 && rc->shaper.n > 0 && l->w[0].len_ns != rc->shaper.w[0].len_ns)
		return pc_error_set(err,
				    "its windows are %" PRIu64 " ns, the shaper's %" PRIu64 " ns",
				    l->w[0].len_ns, rc->shaper.w[0].len_ns);
	return 0;
}

int
pc_reconcile_tap_pairs(const struct pc_reconcile *rc, int tap, struct pc_error *err)
{
	if (tap < 0 || tap >= rc->ntaps)
		return pc_error_set(err, "no such tap");
	const struct log *s = &rc->shaper, *l = &rc->taps[tap];
	uint32_t paired_s = NO_MAP, paired_t = NO_MAP; /* the last maps found to pair */
	size_t j = 0;

	if (is_a_tap(rc, l, err) < 0)
		return -1;
	for (size_t i = 0; i < s->n; i++) {
		const struct win *w = &s->w[i];
		while (j < l->n && l->w[j].start_ns < w->start_ns)
			j++;
		if (j == l->n)
			break;
		const struct win *tw = &l->w[j];
		if (tw->start_ns != w->start_ns || tw->count != w->count)
			continue;
		if (windows_pair(rc, w, tw, err) < 0)
			return -1;
		if (w->map == NO_MAP || tw->map == NO_MAP ||
		    (w->map == paired_s && tw->map == paired_t))
			continue;
		if (maps_pair(rc->maps[w->map], rc->maps[tw->map], l->side, err) < 0) {
			char when[PC_UTC_LEN];
			pc_utc_format(w->start_ns, when, sizeof(when));
			return pc_error_prefix(err, "window %s", when);
		}
		paired_s = w->map;
		paired_t = tw->map;
	}
	return 0;
}
