/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What an auditor declares of an uplink's cables, for the verifier to hold
 * the LINK records to (docs/config.md):
 *
 *   pod_neighbor: {chassis_id: "02:00:00:00:01:01", port_id: swp1}
 *   fabric_neighbor: {chassis_id: leaf-3, port_id: Ethernet12}
 *   lldp_max_silence: 120s
 *
 * An id is written as podcap shows a received one (shape/lldp.h): a MAC
 * address as six lower-case hex pairs with colons (written with capitals
 * or dashes it is read so), anything else printable ASCII with a
 * backslash as \\ and any other byte as \xNN. In the digest, as
 * "pod_neighbor chassis_id ID" and "pod_neighbor port_id ID" lines.
 */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "base/units.h"

#include "config_impl.h"

#define NS_PER_SEC    1000000000ULL
#define MAX_SILENCE_S 86400ULL

/* aa:bb:cc:dd:ee:ff or aa-bb-..., any case: a MAC address, made podcap's form. */
static bool
mac_form(const char *s, char *out)
{
	if (strlen(s) != 17)
		return false;
	for (int i = 0; i < 17; i++) {
		bool sep = i % 3 == 2;
		if (sep ? s[i] != ':' && s[i] != '-' : !isxdigit((unsigned char)s[i]))
			return false;
		out[i] = sep ? ':' : (char)tolower((unsigned char)s[i]);
	}
	out[17] = '\0';
	return true;
}

/* Printable ASCII, a backslash only as \\ or \xNN (lower-case hex), as pc_lldp_render_id writes. */
static bool
rendered_form(const char *s)
{
	for (size_t i = 0; s[i] != '\0'; i++) {
		unsigned char ch = (unsigned char)s[i];
		if (ch < 0x20 || ch > 0x7e)
			return false;
		if (ch != '\\')
			continue;
		if (s[i + 1] == '\\') {
			i++;
			continue;
		}
		if (s[i + 1] != 'x' || !isxdigit((unsigned char)s[i + 2]) ||
		    !isxdigit((unsigned char)s[i + 3]) || isupper((unsigned char)s[i + 2]) ||
		    isupper((unsigned char)s[i + 3]))
			return false;
		i += 3;
	}
	return true;
}

static int
neighbor_id(struct ctx *c, const struct field *f, yaml_node_t *v, void *dst)
{
	char *out = dst;
	const char *s;

	if (cfg_get_scalar(c, f, v, &s) < 0)
		return -1;
	if (strlen(s) >= PC_NEIGHBOR_ID_LEN)
		return cfg_fail_value(c, f->key, v, "longer than 127 characters");
	if (mac_form(s, out))
		return 0;
	if (!rendered_form(s))
		return cfg_fail_value(
		    c, f->key, v,
		    "expected an id as podcap shows it: printable ASCII, a "
		    "backslash only to escape (two of them, or x and two hex digits)");
	strcpy(out, s);
	return 0;
}

/* in the digest and applied at a reload as their mapping is, through its lines */
const struct field cfg_neighbor_fields[] = {
	{ "chassis_id", neighbor_id, .off = offsetof(struct pc_neighbor, chassis_id),
	  .size = PC_NEIGHBOR_ID_LEN, .required = true, .digest = PC_DIGEST_ALWAYS,
	  .reload = PC_RELOAD_APPLIED },
	{ "port_id", neighbor_id, .off = offsetof(struct pc_neighbor, port_id),
	  .size = PC_NEIGHBOR_ID_LEN, .required = true, .digest = PC_DIGEST_ALWAYS,
	  .reload = PC_RELOAD_APPLIED },
	{ NULL },
};

int
cfg_handle_neighbor(struct ctx *c, const struct field *f, yaml_node_t *v, void *dst)
{
	struct pc_neighbor *n = dst;
	char where[64];

	if (cfg_expect(c, f, v, YAML_MAPPING_NODE) < 0)
		return -1;
	snprintf(where, sizeof(where), "in %s %s", f->key, c->where);
	if (cfg_parse_mapping(c, v, where, f->fields, n) < 0)
		return -1;
	n->set = true;
	return 0;
}

/* A duration of 1 s to a day: LLDP speaks every 30 s by default, and holds for 120 s. */
int
cfg_handle_lldp_silence(struct ctx *c, const struct field *f, yaml_node_t *v, void *dst)
{
	const char *s;
	struct pc_error e;
	uint64_t ns;

	if (cfg_get_scalar(c, f, v, &s) < 0)
		return -1;
	if (pc_parse_duration(s, &ns, &e) < 0)
		return cfg_fail_value(c, f->key, v, e.msg);
	if (ns < NS_PER_SEC || ns > MAX_SILENCE_S * NS_PER_SEC)
		return cfg_fail_value(c, f->key, v, "must be 1s to 24h");
	*(uint64_t *)dst = ns;
	return 0;
}

bool
cfg_put_neighbor(struct cfg_lines *o, const void *obj)
{
	const struct pc_neighbor *n = cfg_put_value(o, obj);

	if (!n->set)
		return true;
	cfg_put_line(o, "chassis_id %s", n->chassis_id);
	cfg_put_line(o, "port_id %s", n->port_id);
	return true;
}

bool
pc_config_links_declared(const struct pc_config *cfg)
{
	for (unsigned u = 0; u < cfg->nuplinks; u++) {
		const struct pc_uplink *up = &cfg->uplinks[u];
		if (up->pod_neighbor.set || up->fabric_neighbor.set || up->lldp_max_silence_ns != 0)
			return true;
	}
	return false;
}
