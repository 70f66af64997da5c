/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pods[].vlan: the tag stack a pod's frames carry, which the pod's switch
 * inserts on its access port and the pod cannot choose. One 802.1Q VLAN id
 * (vlan: 100) or an outer and an inner one (vlan: [200, 100], QinQ). Kept
 * as the word shape/classify.h compares frames with; in the canonical form
 * as "vlan 100" or "vlan 200 100" (outer first), and not at all for a pod
 * without one, so that maps without the key keep their digests.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "shape/classify.h"

#include "config_impl.h"

#define VLAN_ID_RULE "expected a VLAN id, 1 to 4094"

/* One VLAN id, decimal, 1 to 4094 (0 is a priority tag, 4095 reserved). */
static int
read_vid(struct ctx *c, const char *key, const yaml_node_t *v, uint16_t *vid)
{
	const char *s = (const char *)v->data.scalar.value;
	unsigned n = 0;

	if (cfg_scalar_checked(c, key, v) < 0)
		return -1;
	if (*s == '\0' || strspn(s, "0123456789") != strlen(s) || strlen(s) > 4)
		return cfg_fail_value(c, key, v, VLAN_ID_RULE);
	for (; *s != '\0'; s++)
		n = n * 10 + (unsigned)(*s - '0');
	if (n < 1 || n > PC_VLAN_ID_MAX)
		return cfg_fail_value(c, key, v, VLAN_ID_RULE);
	*vid = (uint16_t)n;
	return 0;
}

/* [outer, inner]: exactly two ids. */
static int
read_stack(struct ctx *c, const struct field *f, yaml_node_t *v, uint32_t *vlan)
{
	yaml_node_item_t *start = v->data.sequence.items.start;
	long n = v->data.sequence.items.top - start;
	uint16_t vid[2];
	char name[64];

	if (n != 2)
		return cfg_fail_at(
		    c, cfg_mark_of(v),
		    "'%s' %s has %ld ids: use one VLAN id, or [outer, inner] for QinQ", f->key,
		    c->where, n);
	/* c->where is "in pods[N]" */
	snprintf(name, sizeof(name), "%s.%s", c->where + 3, f->key);
	for (unsigned i = 0; i < 2; i++) {
		yaml_node_t *item = cfg_node_at(c, start[i]);
		if (cfg_expect_item(c, name, i, item, YAML_SCALAR_NODE) < 0 ||
		    read_vid(c, f->key, item, &vid[i]) < 0)
			return -1;
	}
	*vlan = pc_vlan_two(vid[0], vid[1]);
	return 0;
}

int
cfg_handle_vlan(struct ctx *c, const struct field *f, yaml_node_t *v, void *dst)
{
	uint32_t *vlan = dst;
	uint16_t vid;

	if (v->type == YAML_SEQUENCE_NODE)
		return read_stack(c, f, v, vlan);
	if (cfg_expect(c, f, v, YAML_SCALAR_NODE) < 0 || read_vid(c, f->key, v, &vid) < 0)
		return -1;
	*vlan = pc_vlan_one(vid);
	return 0;
}

bool
cfg_put_vlan(struct cfg_lines *o, const void *obj)
{
	uint32_t vlan = *(const uint32_t *)cfg_put_value(o, obj);

	switch (pc_vlan_tags(vlan)) {
	case 0:
		return vlan == PC_VLAN_NONE;
	case 1:
		cfg_put_line(o, "%u", vlan & 0xfffu);
		return true;
	case 2:
		cfg_put_line(o, "%u %u", (vlan >> 12) & 0xfffu, vlan & 0xfffu);
		return true;
	default:
		return false;
	}
}

/*
 * A pod of pods[].vlan is told apart by its stack and its addresses: it
 * needs prefixes, and no other pod of its uplink may have the same stack.
 */
int
cfg_check_vlans(struct ctx *c)
{
	for (unsigned i = 0; i < c->npods; i++) {
		const struct pod_state *ps = &c->pods[i];
		if (ps->pod.vlan == PC_VLAN_NONE)
			continue;
		if (ps->pod.nprefixes == 0)
			return cfg_fail_at(
			    c, cfg_key_mark(c, ps->node, "vlan"),
			    "pod '%s' has a vlan but no prefixes: a frame is a vlan pod's "
			    "by its tags and its address",
			    ps->pod.id);
		for (unsigned j = 0; j < i; j++) {
			const struct pod_state *o = &c->pods[j];
			if (o->pod.uplink != ps->pod.uplink || o->pod.vlan != ps->pod.vlan)
				continue;
			struct pc_mark m = cfg_key_mark(c, o->node, "vlan");
			return cfg_fail_at(c, cfg_key_mark(c, ps->node, "vlan"),
					   "pod '%s' has the vlan of pod '%s' (%u:%u) on uplink "
					   "'%s': the tags would not tell them apart",
					   ps->pod.id, o->pod.id, m.line, m.col,
					   c->uplinks[ps->pod.uplink].up.name);
		}
	}
	return 0;
}
