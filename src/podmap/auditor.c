/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * appliance.auditor_keys: the verifier keys of the auditors whose
 * declarations (declaration.h) a map needs before podcapd runs it. Each is
 * a verifier key line, or the path of a file holding one, read when the
 * map is loaded: the canonical form holds the keys themselves, not where
 * they were kept.
 */
#include <stdio.h>
#include <string.h>

#include "log/declaration.h"
#include "base/keys.h"

#include "config_impl.h"

static int
read_key(struct ctx *c, unsigned i, yaml_node_t *item)
{
	struct pc_verifier_key *vk = &c->cfg.auditor_keys[i];
	struct pc_error e;
	char where[48];

	snprintf(where, sizeof(where), "auditor_keys[%u]", i);
	if (cfg_expect_item(c, "appliance.auditor_keys", i, item, YAML_SCALAR_NODE) < 0 ||
	    cfg_scalar_checked(c, where, item) < 0)
		return -1;
	/* the key itself (the map then reads the same anywhere), or the file that holds it */
	const char *s = (const char *)item->data.scalar.value;
	if (pc_verifier_key_parse(s, vk, NULL) != 0 && pc_verifier_key_load(s, vk, &e) != 0)
		return cfg_fail_value(c, where, item, e.msg);
	if (!pc_declaration_key_ok(vk))
		return cfg_fail_value(c, where, item,
				      "not an auditor key: its name must begin "
				      "with " PC_DECL_KEY_PREFIX);
	for (unsigned j = 0; j < i; j++) {
		if (c->cfg.auditor_keys[j].id == vk->id &&
		    memcmp(c->cfg.auditor_keys[j].pk, vk->pk, sizeof(vk->pk)) == 0)
			return cfg_fail_value(c, where, item, "the same key as an earlier one");
	}
	return 0;
}

int
cfg_handle_auditor_keys(struct ctx *c, const struct field *f, yaml_node_t *v, void *dst)
{
	yaml_node_item_t *it, *start;

	(void)dst;
	if (cfg_expect(c, f, v, YAML_SEQUENCE_NODE) < 0)
		return -1;
	start = v->data.sequence.items.start;
	if (start == v->data.sequence.items.top)
		return cfg_fail_at(c, cfg_mark_of(v),
				   "empty auditor_keys (leave the key out "
				   "to run maps no auditor declared)");
	for (it = start; it < v->data.sequence.items.top; it++) {
		yaml_node_t *item = cfg_node_at(c, *it);
		unsigned i = (unsigned)(it - start);

		if (i == PC_MAX_AUDITOR_KEYS)
			return cfg_fail_at(c, cfg_mark_of(item),
					   "too many auditor_keys (at most %u)",
					   PC_MAX_AUDITOR_KEYS);
		if (read_key(c, i, item) < 0)
			return -1;
		c->cfg.nauditor_keys = i + 1;
	}
	return 0;
}
