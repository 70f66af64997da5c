/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * appliance.witnesses in the pod map: the C2SP tlog-witnesses podcapd
 * submits each checkpoint to, each a mapping
 *
 *   - url: http://witness.example:7380     (the submission prefix)
 *     key: witness.example/w1+416d5874+BFvi...   (its cosigner key, type 0x04)
 *     ca: /etc/podcap/tls/witness-ca.crt   (https only: the CA its certificate chains to)
 *
 * How podcapd runs, not what it enforces: not in the canonical form.
 */
#include <stdio.h>
#include <string.h>

#include "log/cosig.h"

#include "config_impl.h"

static int
witness_url(struct ctx *c, const struct field *f, yaml_node_t *v, void *dst)
{
	struct pc_witness_cfg *w = dst;
	const char *s;

	if (cfg_get_scalar(c, f, v, &s) < 0)
		return -1;
	if (strncmp(s, "http://", 7) != 0 && strncmp(s, "https://", 8) != 0)
		return cfg_fail_value(c, f->key, v, "expected an http:// or https:// URL");
	if (strlen(s) >= sizeof(w->url) || s[strcspn(s, " \t\r\n\v\f")] != '\0')
		return cfg_fail_value(c, f->key, v, "too long, or has a space in it");
	strcpy(w->url, s);
	return 0;
}

static int
witness_key(struct ctx *c, const struct field *f, yaml_node_t *v, void *dst)
{
	struct pc_witness_cfg *w = dst;
	struct pc_error why;
	const char *s;

	if (cfg_get_scalar(c, f, v, &s) < 0)
		return -1;
	if (pc_cosig_vkey_parse(s, &w->key, &why) != 0)
		return cfg_fail_value(c, f->key, v, why.msg);
	return 0;
}

static int
witness_ca(struct ctx *c, const struct field *f, yaml_node_t *v, void *dst)
{
	struct pc_witness_cfg *w = dst;
	const char *s;

	if (cfg_get_scalar(c, f, v, &s) < 0)
		return -1;
	if (strlen(s) >= sizeof(w->ca))
		return cfg_fail_value(c, f->key, v, "too long");
	strcpy(w->ca, s);
	w->ca_mark = cfg_mark_of(v);
	return 0;
}

/* The witnesses' threads start with podcapd (src/cmd/podcapd/witnesses.c). */
const struct field cfg_witness_fields[] = {
	{ "url", witness_url, .required = true, .digest = PC_DIGEST_NEVER,
	  .reload = PC_RELOAD_AT_START },
	{ "key", witness_key, .required = true, .digest = PC_DIGEST_NEVER,
	  .reload = PC_RELOAD_AT_START },
	{ "ca", witness_ca, .digest = PC_DIGEST_NEVER, .reload = PC_RELOAD_AT_START },
	{ NULL },
};

/*
 * witnesses[i] and [j] are one witness when their keys are (the same name,
 * public key or key id): a positioned error, since a log's cosignatures
 * from it would be counted as two witnesses'.
 */
static int
same_witness(struct ctx *c, const struct pc_witnesses *ws, unsigned j, unsigned i)
{
	const struct pc_verifier_key *a = &ws->w[i].key, *b = &ws->w[j].key;
	const char *same = pc_cosig_vkey_same(a, b);

	if (same == NULL)
		return 0;
	if (strcmp(same, "key") == 0 || strcmp(same, "name") == 0)
		return cfg_fail_at(c, ws->w[i].mark, "witness %s is declared twice", a->name);
	return cfg_fail_at(c, ws->w[i].mark,
			   "witness %s+%08x has the %s of witnesses[%u], %s+%08x: one witness "
			   "declared twice",
			   a->name, (unsigned)a->id, same, j, b->name, (unsigned)b->id);
}

int
cfg_handle_witnesses(struct ctx *c, const struct field *f, yaml_node_t *v, void *dst)
{
	struct pc_witnesses *ws = dst;
	yaml_node_item_t *it, *start;
	char where[48];
	unsigned i, j;

	if (cfg_expect(c, f, v, YAML_SEQUENCE_NODE) < 0)
		return -1;
	start = v->data.sequence.items.start;
	for (it = start; it < v->data.sequence.items.top; it++) {
		yaml_node_t *item = cfg_node_at(c, *it);
		struct pc_witness_cfg *w;

		i = (unsigned)(it - start);
		if (i == PC_MAX_WITNESSES)
			return cfg_fail_at(c, cfg_mark_of(item), "too many witnesses (at most %u)",
					   PC_MAX_WITNESSES);
		if (cfg_expect_item(c, f->key, i, item, YAML_MAPPING_NODE) < 0)
			return -1;
		w = &ws->w[i];
		w->mark = cfg_mark_of(item);
		snprintf(where, sizeof(where), "in witnesses[%u]", i);
		if (cfg_parse_mapping(c, item, where, f->fields, w) < 0)
			return -1;
		/* a CA for plain HTTP would read as protection that is not there */
		if (w->ca[0] != '\0' && strncmp(w->url, "https://", 8) != 0)
			return cfg_fail_at(c, w->ca_mark, "witnesses[%u].ca is for an https:// url",
					   i);
		for (j = 0; j < i; j++)
			if (same_witness(c, ws, j, i) < 0)
				return -1;
		ws->n = i + 1;
	}
	return 0;
}
