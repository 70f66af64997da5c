/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The attestation policy file:
 *
 *	attestation-policy: 1
 *	ak-pem: |                   # the enrolment file's ak-pem
 *	  -----BEGIN PUBLIC KEY-----
 *	  ...
 *	ak-name: 000b...            # optional: the enrolment file's ak-name
 *	max-windows: 20
 *	pcrs:                       # optional: PCR number: SHA-256 value
 *	  0: 3d45...
 *	ima-pcr: 10                 # optional
 *	builds:                     # optional: podcapd builds and their files' SHA-256
 *	  - build-id: 7c82...
 *	    sha256: 91ab...
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <yaml.h>

#include "attest_policy.h"
#include "base/hex.h"

struct pctx {
	yaml_document_t doc;
	const char *path;
	struct pc_error *err;
};

static int __attribute__((format(printf, 3, 4)))
fail_at(struct pctx *c, const yaml_node_t *n, const char *fmt, ...)
{
	char msg[PC_ERR_MSG_LEN];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	pc_error_set(c->err, "%s", msg);
	snprintf(c->err->file, sizeof(c->err->file), "%s", c->path);
	c->err->mark.line = (unsigned)n->start_mark.line + 1;
	c->err->mark.col = (unsigned)n->start_mark.column + 1;
	return -1;
}

static const char *
scalar(const yaml_node_t *n)
{
	return n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value : NULL;
}

static int
hex32(struct pctx *c, const yaml_node_t *n, const char *key, uint8_t out[32])
{
	const char *s = scalar(n);
	if (s == NULL || strlen(s) != 64 || !pc_unhex(s, 64, out, 32))
		return fail_at(c, n, "%s: expected 64 hex digits", key);
	return 0;
}

static int
number(struct pctx *c, const yaml_node_t *n, const char *key, uint64_t max, uint64_t *out)
{
	const char *s = scalar(n);
	char *end;

	if (s == NULL || *s < '0' || *s > '9')
		return fail_at(c, n, "%s: expected a whole number", key);
	unsigned long long v = strtoull(s, &end, 10);
	if (*end != '\0' || v > max)
		return fail_at(c, n, "%s: expected a whole number in range", key);
	*out = v;
	return 0;
}

static int
read_pcrs(struct pctx *c, const yaml_node_t *map, struct pc_attest_policy *p)
{
	if (map->type != YAML_MAPPING_NODE)
		return fail_at(c, map, "%s: expected a mapping of PCR numbers to values", "pcrs");
	for (yaml_node_pair_t *kv = map->data.mapping.pairs.start; kv < map->data.mapping.pairs.top;
	     kv++) {
		yaml_node_t *k = yaml_document_get_node(&c->doc, kv->key);
		yaml_node_t *v = yaml_document_get_node(&c->doc, kv->value);
		uint64_t i;
		if (number(c, k, "pcrs", 23, &i) != 0 || hex32(c, v, "pcrs", p->pcr[i]) != 0)
			return -1;
		if (p->pcr_mask & (1u << i))
			return fail_at(c, k, "%s: PCR given twice", "pcrs");
		p->pcr_mask |= 1u << i;
	}
	return 0;
}

static int
read_builds(struct pctx *c, const yaml_node_t *seq, struct pc_attest_policy *p)
{
	if (seq->type != YAML_SEQUENCE_NODE)
		return fail_at(c, seq, "%s: expected a sequence", "builds");
	for (yaml_node_item_t *it = seq->data.sequence.items.start;
	     it < seq->data.sequence.items.top; it++) {
		yaml_node_t *m = yaml_document_get_node(&c->doc, *it);
		int have = 0;
		if (p->nbuilds == PC_POLICY_MAX_BUILDS)
			return fail_at(c, m, "%s: more than 16 builds", "builds");
		if (m->type != YAML_MAPPING_NODE)
			return fail_at(c, m, "%s: each build is a mapping", "builds");
		for (yaml_node_pair_t *kv = m->data.mapping.pairs.start;
		     kv < m->data.mapping.pairs.top; kv++) {
			yaml_node_t *k = yaml_document_get_node(&c->doc, kv->key);
			yaml_node_t *v = yaml_document_get_node(&c->doc, kv->value);
			const char *key = scalar(k) != NULL ? scalar(k) : "";
			if (strcmp(key, "build-id") == 0 && !(have & 1))
				have |= 1, hex32(c, v, key, p->builds[p->nbuilds].build_id);
			else if (strcmp(key, "sha256") == 0 && !(have & 2))
				have |= 2, hex32(c, v, key, p->builds[p->nbuilds].sha256);
			else
				return fail_at(c, k, "unknown or repeated key '%s' in a build",
					       key);
			if (c->err->msg[0] != '\0')
				return -1;
		}
		if (have != 3)
			return fail_at(c, m, "%s: each build needs build-id and sha256", "builds");
		p->nbuilds++;
	}
	return 0;
}

static int
read_key(struct pctx *c, const char *key, yaml_node_t *v, struct pc_attest_policy *p,
	 unsigned *seen)
{
	static const char *const keys[] = { "attestation-policy",
					    "ak-pem",
					    "ak-name",
					    "max-windows",
					    "pcrs",
					    "ima-pcr",
					    "builds" };
	unsigned k = 0;
	uint64_t n;

	while (k < sizeof(keys) / sizeof(keys[0]) && strcmp(key, keys[k]) != 0)
		k++;
	if (k == sizeof(keys) / sizeof(keys[0]) || (*seen & (1u << k)))
		return fail_at(c, v, "unknown or repeated key '%s'", key);
	*seen |= 1u << k;
	const char *s = scalar(v);
	switch (k) {
	case 0:
		if (s == NULL || strcmp(s, "1") != 0)
			return fail_at(c, v, "%s: only version 1 is known", key);
		return 0;
	case 1:
		if (s == NULL || strlen(s) >= sizeof(p->ak_pem) ||
		    strstr(s, "-----BEGIN PUBLIC KEY-----") == NULL)
			return fail_at(c, v, "%s: expected a PEM public key", key);
		snprintf(p->ak_pem, sizeof(p->ak_pem), "%s", s);
		return 0;
	case 2:
		if (s == NULL || strlen(s) != 68 || !pc_unhex(s, 68, p->ak_name, 34))
			return fail_at(c, v, "%s: expected a TPM name, 68 hex digits", key);
		p->ak_name_len = 34;
		return 0;
	case 3:
		if (number(c, v, key, UINT32_MAX, &n) != 0)
			return -1;
		if (n == 0)
			return fail_at(c, v, "%s: at least 1", key);
		p->max_windows = n;
		return 0;
	case 4:
		return read_pcrs(c, v, p);
	case 5:
		if (number(c, v, key, 23, &n) != 0)
			return -1;
		p->ima_pcr = (unsigned)n;
		return 0;
	default:
		return read_builds(c, v, p);
	}
}

static int
read_doc(struct pctx *c, struct pc_attest_policy *p)
{
	yaml_node_t *root = yaml_document_get_root_node(&c->doc);
	unsigned seen = 0;

	if (root == NULL || root->type != YAML_MAPPING_NODE)
		return pc_error_set(c->err, "%s: not a YAML mapping", c->path);
	for (yaml_node_pair_t *kv = root->data.mapping.pairs.start;
	     kv < root->data.mapping.pairs.top; kv++) {
		yaml_node_t *k = yaml_document_get_node(&c->doc, kv->key);
		yaml_node_t *v = yaml_document_get_node(&c->doc, kv->value);
		const char *key = scalar(k);
		if (read_key(c, key != NULL ? key : "", v, p, &seen) != 0)
			return -1;
	}
	if ((seen & 0x0b) != 0x0b)
		return fail_at(c, root, "attestation-policy, ak-pem and max-windows are required");
	return 0;
}

int
pc_attest_policy_load(const char *path, struct pc_attest_policy *p, struct pc_error *err)
{
	struct pc_error local;
	struct pctx c = { .path = path, .err = err != NULL ? err : &local };
	yaml_parser_t parser;

	memset(p, 0, sizeof(*p));
	memset(c.err, 0, sizeof(*c.err));
	p->ima_pcr = 10;
	FILE *f = fopen(path, "r");
	if (f == NULL)
		return pc_error_errno(c.err, "%s", path);
	yaml_parser_initialize(&parser);
	yaml_parser_set_input_file(&parser, f);
	int ok = yaml_parser_load(&parser, &c.doc);
	fclose(f);
	if (!ok) {
		pc_error_set(c.err, "%s", parser.problem != NULL ? parser.problem : "not YAML");
		snprintf(c.err->file, sizeof(c.err->file), "%s", path);
		c.err->mark.line = (unsigned)parser.problem_mark.line + 1;
		c.err->mark.col = (unsigned)parser.problem_mark.column + 1;
		yaml_parser_delete(&parser);
		return -1;
	}
	int r = read_doc(&c, p);
	yaml_document_delete(&c.doc);
	yaml_parser_delete(&parser);
	return r;
}
