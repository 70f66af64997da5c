/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The checks of a pod map that need all of it, run once every key is read:
 * those that compare items with one another (names, ports, prefixes) or
 * resolve one against another (a pod's uplink, its limits against the
 * defaults, a duration burst against the cap). Each error points at what
 * the operator should change.
 */

#include <inttypes.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "shape/lease.h"
#include "log/origin.h"
#include "base/units.h"
#include "shape/window_budget.h"

#include "config_impl.h"

struct named {
	const char *name;
	unsigned index;
};

static int
cmp_named(const void *a, const void *b)
{
	const struct named *x = a, *y = b;
	int r = strcmp(x->name, y->name);

	if (r != 0)
		return r;
	return x->index < y->index ? -1 : x->index > y->index;
}

/*
 * Of all names declared twice, the one whose second declaration comes
 * first. Returns 1 and sets *later and *first, 0 if all are distinct, -1
 * if out of memory.
 */
static int
find_duplicate(const char *(*name_of)(const struct ctx *, unsigned),
	       const struct ctx *c, unsigned n, unsigned *later, unsigned *first)
{
	struct named *v = calloc(n, sizeof(*v));
	unsigned i;
	int found = 0;

	if (v == NULL)
		return -1;
	for (i = 0; i < n; i++) {
		v[i].name = name_of(c, i);
		v[i].index = i;
	}
	qsort(v, n, sizeof(*v), cmp_named);
	for (i = 1; i < n; i++) {
		/* a run of equal names: v[i] is its second if v[i-1] is the first */
		if (strcmp(v[i].name, v[i - 1].name) != 0)
			continue;
		if (i >= 2 && strcmp(v[i - 2].name, v[i].name) == 0)
			continue;
		if (!found || v[i].index < *later) {
			*later = v[i].index;
			*first = v[i - 1].index;
			found = 1;
		}
	}
	free(v);
	return found;
}

static const char *
uplink_name(const struct ctx *c, unsigned i)
{
	return c->uplinks[i].up.name;
}

static const char *
pod_id(const struct ctx *c, unsigned i)
{
	return c->pods[i].pod.id;
}

static const yaml_node_t *
uplink_node(const struct ctx *c, unsigned i)
{
	return c->uplinks[i].node;
}

static const yaml_node_t *
pod_node(const struct ctx *c, unsigned i)
{
	return c->pods[i].node;
}

/*
 * The n names name_of() gives are unique: else "duplicate WHAT 'x'", at
 * the `key` of the later one, naming where the first was declared.
 */
static int
check_unique(struct ctx *c, const char *what, const char *key, unsigned n,
	     const char *(*name_of)(const struct ctx *, unsigned),
	     const yaml_node_t *(*node_of)(const struct ctx *, unsigned))
{
	unsigned later = 0, first = 0;
	struct pc_mark m;
	int r = find_duplicate(name_of, c, n, &later, &first);

	if (r < 0)
		return cfg_fail_at(c, CFG_NO_MARK, "out of memory");
	if (r == 0)
		return 0;
	m = cfg_key_mark(c, node_of(c, first), key);
	return cfg_fail_at(c, cfg_key_mark(c, node_of(c, later), key),
			   "duplicate %s '%s' (first declared at %u:%u)", what, name_of(c, later),
			   m.line, m.col);
}

static int
check_names(struct ctx *c)
{
	if (check_unique(c, "uplink name", "name", c->nuplinks, uplink_name, uplink_node) < 0)
		return -1;
	return check_unique(c, "pod id", "id", c->npods, pod_id, pod_node);
}

static int
check_references(struct ctx *c)
{
	struct pod_state *ps;
	unsigned i;
	int u;

	for (i = 0; i < c->npods; i++) {
		ps = &c->pods[i];
		u = cfg_find_name(c->uplinks, c->nuplinks, sizeof(*c->uplinks),
				  offsetof(struct uplink_state, up.name), ps->uplink);
		if (u < 0)
			return cfg_fail_at(c, cfg_key_mark(c, ps->node, "uplink"),
					   "no uplink named '%s'", ps->uplink);
		ps->pod.uplink = (unsigned)u;
		c->uplinks[u].up.npods++;
	}
	return 0;
}

/* What makes a port one device: its PCI address or vdev name, and its iface. */
struct port_id {
	char dev[PC_DEVARGS_LEN];
	char iface[PC_DEVARGS_LEN];
};

static void
port_identity(const char *devargs, struct port_id *id)
{
	cfg_port_device(devargs, id->dev, sizeof(id->dev));
	cfg_port_iface(devargs, id->iface, sizeof(id->iface));
}

static const char *const side_name[2] = { "pod_port", "fabric_port" };

static const char *
port_of(const struct pc_uplink *u, unsigned side)
{
	return side == 0 ? u->pod_port : u->fabric_port;
}

static int
check_ports(struct ctx *c)
{
	struct port_id *ids;
	unsigned n = c->nuplinks * 2, i, j;
	int rc = 0;

	ids = calloc(n, sizeof(*ids));
	if (ids == NULL)
		return cfg_fail_at(c, CFG_NO_MARK, "out of memory");
	for (i = 0; i < n && rc == 0; i++) {
		const struct uplink_state *us = &c->uplinks[i / 2];

		port_identity(port_of(&us->up, i % 2), &ids[i]);
		for (j = 0; j < i && rc == 0; j++) {
			const struct uplink_state *other = &c->uplinks[j / 2];
			struct pc_mark m = cfg_key_mark(c, other->node,
							side_name[j % 2]);
			struct pc_mark here = cfg_key_mark(c, us->node,
							   side_name[i % 2]);

			if (strcmp(ids[i].dev, ids[j].dev) == 0)
				rc = cfg_fail_at(c, here, "port '%s' is already used "
						 "by uplink '%s' (%s at %u:%u)",
						 port_of(&us->up, i % 2),
						 other->up.name, side_name[j % 2],
						 m.line, m.col);
			else if (ids[i].iface[0] != '\0' &&
				 strcmp(ids[i].iface, ids[j].iface) == 0)
				rc = cfg_fail_at(c, here, "interface '%s' is already "
						 "used by uplink '%s' (%s at %u:%u)",
						 ids[i].iface, other->up.name,
						 side_name[j % 2], m.line, m.col);
		}
	}
	free(ids);
	return rc;
}

static int
check_sharing(struct ctx *c)
{
	const struct pod_state *ps;
	const struct uplink_state *us;
	unsigned i;

	for (i = 0; i < c->nuplinks; i++) {
		us = &c->uplinks[i];
		if (us->up.npods == 0)
			return cfg_fail_at(c, us->up.mark,
					   "unused uplink '%s': no pod names it",
					   us->up.name);
	}
	for (i = 0; i < c->npods; i++) {
		ps = &c->pods[i];
		us = &c->uplinks[ps->pod.uplink];
		if (ps->pod.nprefixes == 0 && us->up.npods > 1)
			return cfg_fail_at(c, ps->pod.mark,
					   "pod '%s' has no prefixes, but uplink '%s' "
					   "carries %u pods: prefixes tell them apart",
					   ps->pod.id, us->up.name, us->up.npods);
	}
	return 0;
}

/* bytes = cap * t / 8, rounded down; -1 if it does not fit 64 bits */
static int
burst_bytes(uint64_t cap_bps, const struct limits_spec *spec, uint64_t *bytes)
{
	unsigned __int128 b;

	if (!spec->burst_is_time) {
		*bytes = spec->burst;
		return 0;
	}
	b = (unsigned __int128)cap_bps * spec->burst / (8 * PC_NS_PER_SEC);
	if (b > UINT64_MAX)
		return -1;
	*bytes = (uint64_t)b;
	return 0;
}

/* The mapping (a pod's, the defaults', or none) sets `key` itself. */
static bool
declares(const struct ctx *c, const yaml_node_t *map, const char *key)
{
	return cfg_value_of(c, map, key) != NULL;
}

/*
 * The node an operator should change when a pod's burst is wrong: the burst
 * they wrote, else the cap a time burst was resolved against, else the
 * defaults, else the pod.
 */
static struct pc_mark
burst_origin(const struct ctx *c, const struct pod_state *ps)
{
	if (declares(c, ps->node, "burst"))
		return cfg_key_mark(c, ps->node, "burst");
	if (c->defaults.burst_is_time && declares(c, ps->node, "cap"))
		return cfg_key_mark(c, ps->node, "cap");
	if (declares(c, c->defaults_node, "burst"))
		return cfg_key_mark(c, c->defaults_node, "burst");
	if (c->defaults.burst_is_time && declares(c, c->defaults_node, "cap"))
		return cfg_key_mark(c, c->defaults_node, "cap");
	return ps->pod.mark;
}

static int
resolve_limits(struct ctx *c)
{
	const struct limits_spec *d = &c->defaults;
	struct pc_limits *dl = &c->cfg.defaults;
	unsigned i;

	dl->cap_bps = d->cap_bps;
	dl->mode = d->mode;
	dl->queue_delay_ns = d->queue_delay_ns;
	dl->promise = d->promise;
	if (burst_bytes(d->cap_bps, d, &dl->burst_bytes) < 0)
		return cfg_fail_at(c, cfg_key_mark(c, c->defaults_node, "burst"),
				   "burst in defaults is out of range");
	for (i = 0; i < c->npods; i++) {
		struct pod_state *ps = &c->pods[i];
		const struct limits_spec *s = &ps->lim;
		struct pc_limits *l = &ps->pod.limits;

		l->cap_bps = declares(c, ps->node, "cap") ? s->cap_bps : d->cap_bps;
		l->mode = declares(c, ps->node, "mode") ? s->mode : d->mode;
		l->queue_delay_ns = declares(c, ps->node, "queue_delay") ? s->queue_delay_ns :
		    d->queue_delay_ns;
		l->promise = declares(c, ps->node, "promise") ? s->promise : d->promise;
		if (burst_bytes(l->cap_bps, declares(c, ps->node, "burst") ? s : d,
				&l->burst_bytes) < 0)
			return cfg_fail_at(c, burst_origin(c, ps),
					   "burst of pod '%s' is out of range",
					   ps->pod.id);
		if (l->burst_bytes < c->cfg.max_frame)
			return cfg_fail_at(c, burst_origin(c, ps),
					   "burst of pod '%s' is %" PRIu64 " bytes, "
					   "less than max_frame (%" PRIu32 " bytes)",
					   ps->pod.id, l->burst_bytes,
					   c->cfg.max_frame);
		if (l->promise == PC_PROMISE_WINDOW &&
		    pc_wb_budget_bytes(l->cap_bps, c->cfg.window_ns) < c->cfg.max_frame)
			return cfg_fail_at(
			    c, ps->pod.mark,
			    "pod '%s' is held to the window promise, but cap x window "
			    "is %" PRIu64 " bytes, less than max_frame (%" PRIu32 " bytes)",
			    ps->pod.id, pc_wb_budget_bytes(l->cap_bps, c->cfg.window_ns),
			    c->cfg.max_frame);
	}
	return 0;
}
static int
check_overlaps(struct ctx *c)
{
	struct prefix_ref *e;
	unsigned n = 0, i, k, later = 0, first = 0;
	char a[64], b[64];
	int r;

	for (i = 0; i < c->npods; i++)
		n += c->pods[i].pod.nprefixes;
	if (n == 0)
		return 0;
	e = calloc(n, sizeof(*e));
	if (e == NULL)
		return cfg_fail_at(c, CFG_NO_MARK, "out of memory");
	n = 0;
	for (i = 0; i < c->npods; i++) {
		for (k = 0; k < c->pods[i].pod.nprefixes; k++, n++) {
			e[n].p = &c->pods[i].pod.prefixes[k];
			e[n].pod = i;
			e[n].doc = n;
		}
	}
	r = cfg_find_overlap(e, n, &later, &first);
	if (r > 0) {
		cfg_format_prefix(e[later].p, a, sizeof(a));
		cfg_format_prefix(e[first].p, b, sizeof(b));
		r = cfg_fail_at(c, e[later].p->mark,
				cfg_cmp_prefix(e[later].p, e[first].p) == 0 ?
				"prefix %s is already declared as %s of pod '%s' (%u:%u)" :
				"prefix %s overlaps %s of pod '%s' (%u:%u)",
				a, b, c->pods[e[first].pod].pod.id,
				e[first].p->mark.line, e[first].p->mark.col);
	} else if (r < 0) {
		r = cfg_fail_at(c, CFG_NO_MARK, "out of memory");
	}
	free(e);
	return r;
}

/*
 * An uplink of several workers shares each pod's cap between them
 * (lease.h): police mode and the envelope promise only, and a burst deep
 * enough for a lease each.
 */
static int
check_workers(struct ctx *c)
{
	for (unsigned i = 0; i < c->nuplinks; i++)
		if (c->uplinks[i].up.workers == 0)
			c->uplinks[i].up.workers = 1;
	for (unsigned i = 0; i < c->npods; i++) {
		const struct pod_state *ps = &c->pods[i];
		const struct uplink_state *us = &c->uplinks[ps->pod.uplink];
		unsigned n = us->up.workers;
		if (n == 1)
			continue;
		if (ps->pod.limits.mode != PC_MODE_POLICE)
			return cfg_fail_at(
			    c, ps->pod.mark,
			    "pod '%s' is in shape mode, but uplink '%s' has %u workers: "
			    "several workers police (mode: police)",
			    ps->pod.id, us->up.name, n);
		if (ps->pod.limits.promise != PC_PROMISE_ENVELOPE)
			return cfg_fail_at(
			    c, ps->pod.mark,
			    "pod '%s' is held to the window promise, but uplink '%s' has "
			    "%u workers: several workers keep the envelope only",
			    ps->pod.id, us->up.name, n);
		if (pc_lease_bytes(&ps->pod.limits, n, c->cfg.max_frame) == 0)
			return cfg_fail_at(
			    c, burst_origin(c, ps),
			    "burst of pod '%s' (%" PRIu64 " bytes) is too small for "
			    "the %u workers of uplink '%s': it must hold at least %u "
			    "frames of max_frame",
			    ps->pod.id, ps->pod.limits.burst_bytes, n, us->up.name, n + 1);
	}
	return 0;
}

/* appliance.origin, when set, names this appliance: its last element is appliance.id. */
static int
check_origin(struct ctx *c)
{
	const yaml_node_t *app;
	char id[PC_ID_LEN];

	if (c->cfg.origin[0] == '\0' || pc_origin_parse(c->cfg.origin, id, NULL) < 0 ||
	    strcmp(id, c->cfg.appliance_id) == 0)
		return 0;
	app = cfg_value_of(c, yaml_document_get_root_node(c->doc), "appliance");
	return cfg_fail_at(c, cfg_key_mark(c, app, "origin"),
			   "origin '%s' ends in '%s', not in the appliance's id '%s'",
			   c->cfg.origin, id, c->cfg.appliance_id);
}

/*
 * appliance.slice: only a tap counts slices, and a window holds its first
 * and its last one apart (docs/reconcile.md).
 */
static int
check_slice(struct ctx *c)
{
	const yaml_node_t *app;

	if (c->cfg.slice_ns == 0)
		return 0;
	app = cfg_value_of(c, yaml_document_get_root_node(c->doc), "appliance");
	if (c->cfg.role == PC_ROLE_SHAPER)
		return cfg_fail_at(c, cfg_key_mark(c, app, "slice"),
				   "slice is a tap's: appliance.role is shaper");
	if (c->cfg.slice_ns > c->cfg.window_ns / 2)
		return cfg_fail_at(c, cfg_key_mark(c, app, "slice"),
				   "slice of %" PRIu64 " ns is more than half the window",
				   c->cfg.slice_ns);
	return 0;
}

int
cfg_check(struct ctx *c)
{
	if (check_origin(c) < 0 || check_slice(c) < 0 || check_names(c) < 0 ||
	    check_references(c) < 0 || check_ports(c) < 0 || check_sharing(c) < 0 ||
	    resolve_limits(c) < 0 || check_workers(c) < 0 || check_overlaps(c) < 0 ||
	    cfg_check_vlans(c) < 0 || cfg_check_endpoint(c) < 0)
		return -1;
	return 0;
}
