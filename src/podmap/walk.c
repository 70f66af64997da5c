/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The walker of the pod map's YAML document: nodes and their 1-based
 * positions, mappings read with tables of keys (unknown, duplicate and
 * missing keys), the type a value must have, and the positioned error
 * (file:line:col, the line, a caret) every mistake in the file becomes.
 */

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <yaml.h>

#include "config.h"
#include "base/error.h"

#include "config_impl.h"

#define QUOTE_LEN		64	/* characters of a value quoted in a message */

struct pc_mark
cfg_mark_of(const yaml_node_t *n)
{
	struct pc_mark m = { n->start_mark.line + 1, n->start_mark.column + 1 };

	return m;
}

/* Copies line `line` (1-based) of the text, without its line break. */
static void
source_line(const char *text, size_t len, unsigned line, char *out, size_t n)
{
	size_t i = 0, k = 0;
	unsigned l = 1;

	out[0] = '\0';
	if (text == NULL || line == 0)
		return;
	while (i < len && l < line) {
		if (text[i++] == '\n')
			l++;
	}
	if (l != line)
		return;
	while (i < len && text[i] != '\n' && text[i] != '\r' && k + 1 < n)
		out[k++] = text[i++];
	out[k] = '\0';
}

/* Printable, bounded copy of a value for a message. */
static const char *
quote(const char *s, char *buf, size_t n)
{
	size_t i, k = 0;

	for (i = 0; s[i] != '\0' && i < QUOTE_LEN && k + 1 < n; i++) {
		unsigned char ch = (unsigned char)s[i];

		buf[k++] = ch < 0x20 || ch == 0x7f ? '?' : (char)ch;
	}
	if (s[i] != '\0' && k + 3 < n) {
		memcpy(buf + k, "...", 3);
		k += 3;
	}
	buf[k] = '\0';
	return buf;
}

int
cfg_error_at(struct pc_error *err, const char *file, const char *text, size_t len,
	     struct pc_mark m)
{
	if (err == NULL)
		return -1;
	snprintf(err->file, sizeof(err->file), "%s", file);
	err->mark = m;
	source_line(text, len, m.line, err->line_text, sizeof(err->line_text));
	return -1;
}

int
cfg_fail_at(struct ctx *c, struct pc_mark m, const char *fmt, ...)
{
	char msg[PC_ERR_MSG_LEN];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	pc_error_set(c->err, "%s", msg);
	return cfg_error_at(c->err, c->name, c->text, c->len, m);
}

int
cfg_fail_value(struct ctx *c, const char *key, const yaml_node_t *v, const char *why)
{
	char q[QUOTE_LEN + 4];

	return cfg_fail_at(c, cfg_mark_of(v), "invalid %s '%s' %s: %s", key,
			   quote((const char *)v->data.scalar.value, q, sizeof(q)),
			   c->where, why);
}

yaml_node_t *
cfg_node_at(const struct ctx *c, int index)
{
	return yaml_document_get_node(c->doc, index);
}

static bool
is_null(const yaml_node_t *n)
{
	const char *s;

	if (n->type != YAML_SCALAR_NODE)
		return false;
	s = (const char *)n->data.scalar.value;
	if (n->data.scalar.length == 0)
		return true;
	return n->data.scalar.style == YAML_PLAIN_SCALAR_STYLE &&
	    (strcmp(s, "~") == 0 || strcmp(s, "null") == 0 ||
	     strcmp(s, "Null") == 0 || strcmp(s, "NULL") == 0);
}

const char *
cfg_kind(const yaml_node_t *n)
{
	switch (n->type) {
	case YAML_MAPPING_NODE:
		return "a mapping";
	case YAML_SEQUENCE_NODE:
		return "a sequence";
	default:
		return is_null(n) ? "nothing" : "a scalar";
	}
}

static const char *
type_name(yaml_node_type_t t)
{
	return t == YAML_MAPPING_NODE ? "a mapping" :
	    t == YAML_SEQUENCE_NODE ? "a sequence" : "a scalar";
}

int
cfg_expect(struct ctx *c, const struct field *f, const yaml_node_t *v,
	   yaml_node_type_t t)
{
	if (v->type == t && !(t == YAML_SCALAR_NODE && is_null(v)))
		return 0;
	if (t == YAML_SCALAR_NODE && is_null(v))
		return cfg_fail_at(c, cfg_mark_of(v), "missing value for '%s' %s",
				   f->key, c->where);
	return cfg_fail_at(c, cfg_mark_of(v), "expected %s for '%s' %s, got %s",
			   type_name(t), f->key, c->where, cfg_kind(v));
}

int
cfg_expect_item(struct ctx *c, const char *name, unsigned i, const yaml_node_t *v,
		yaml_node_type_t t)
{
	if (v->type == t && !(t == YAML_SCALAR_NODE && is_null(v)))
		return 0;
	return cfg_fail_at(c, cfg_mark_of(v), "expected %s for %s[%u], got %s",
			   type_name(t), name, i, cfg_kind(v));
}

int
cfg_scalar_checked(struct ctx *c, const char *key, const yaml_node_t *v)
{
	if (strlen((const char *)v->data.scalar.value) != v->data.scalar.length)
		return cfg_fail_value(c, key, v, "contains a NUL character");
	return 0;
}

int
cfg_get_scalar(struct ctx *c, const struct field *f, const yaml_node_t *v,
	       const char **s)
{
	if (cfg_expect(c, f, v, YAML_SCALAR_NODE) < 0 ||
	    cfg_scalar_checked(c, f->key, v) < 0)
		return -1;
	*s = (const char *)v->data.scalar.value;
	return 0;
}

static const struct field *
find_field(const struct field *fields, const char *key)
{
	for (; fields->key != NULL; fields++)
		if (strcmp(fields->key, key) == 0)
			return fields;
	return NULL;
}

static bool
same_scalar(const yaml_node_t *a, const yaml_node_t *b)
{
	return a->data.scalar.length == b->data.scalar.length &&
	    memcmp(a->data.scalar.value, b->data.scalar.value,
		   a->data.scalar.length) == 0;
}

int
cfg_parse_mapping(struct ctx *c, yaml_node_t *node, const char *where,
		  const struct field *fields, void *obj)
{
	yaml_node_pair_t *pair, *prev, *start = node->data.mapping.pairs.start;
	const struct field *f;
	char saved[sizeof(c->where)], q[QUOTE_LEN + 4];
	uint64_t seen = 0;
	int rc = -1;

	memcpy(saved, c->where, sizeof(saved));
	snprintf(c->where, sizeof(c->where), "%s", where);
	for (pair = start; pair < node->data.mapping.pairs.top; pair++) {
		yaml_node_t *k = cfg_node_at(c, pair->key);
		yaml_node_t *v = cfg_node_at(c, pair->value);
		const char *key;

		if (k->type != YAML_SCALAR_NODE) {
			cfg_fail_at(c, cfg_mark_of(k), "expected a scalar key %s, got %s",
				    c->where, cfg_kind(k));
			goto out;
		}
		key = (const char *)k->data.scalar.value;
		for (prev = start; prev < pair; prev++) {
			yaml_node_t *pk = cfg_node_at(c, prev->key);

			if (pk->type == YAML_SCALAR_NODE && same_scalar(pk, k)) {
				struct pc_mark m = cfg_mark_of(pk);

				cfg_fail_at(c, cfg_mark_of(k),
					    "duplicate key '%s' %s (first at %u:%u)",
					    quote(key, q, sizeof(q)), c->where,
					    m.line, m.col);
				goto out;
			}
		}
		f = find_field(fields, key);
		if (f == NULL || strlen(key) != k->data.scalar.length) {
			cfg_fail_at(c, cfg_mark_of(k), "unknown key '%s' %s",
				    quote(key, q, sizeof(q)), c->where);
			goto out;
		}
		seen |= 1ULL << (f - fields);
		if (f->fn(c, f, v, (char *)obj + f->off) < 0)
			goto out;
	}
	for (f = fields; f->key != NULL; f++) {
		if (f->required && !(seen & (1ULL << (f - fields)))) {
			cfg_fail_at(c, cfg_mark_of(node), "missing key '%s' %s", f->key,
				    c->where);
			goto out;
		}
	}
	rc = 0;
out:
	memcpy(c->where, saved, sizeof(saved));
	return rc;
}

const yaml_node_t *
cfg_value_of(const struct ctx *c, const yaml_node_t *map, const char *key)
{
	yaml_node_pair_t *pair;

	if (map == NULL)
		return NULL;
	for (pair = map->data.mapping.pairs.start;
	     pair < map->data.mapping.pairs.top; pair++) {
		yaml_node_t *k = cfg_node_at(c, pair->key);

		if (k->type == YAML_SCALAR_NODE &&
		    strcmp((const char *)k->data.scalar.value, key) == 0)
			return cfg_node_at(c, pair->value);
	}
	return NULL;
}

struct pc_mark
cfg_key_mark(const struct ctx *c, const yaml_node_t *map, const char *key)
{
	const yaml_node_t *v = cfg_value_of(c, map, key);

	return cfg_mark_of(v != NULL ? v : map);
}
