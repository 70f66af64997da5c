/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The pod map loader.
 *
 * The file is loaded whole with libyaml's document API, then walked with
 * tables of {key, handler}: any key not in the table is an error, so a typo
 * can never silently leave a default in force. Errors found while walking
 * come in document order; the cross-checks that need the whole map (names,
 * ports, references, bursts, prefixes) run after it, in a fixed order, so
 * the same file always yields the same first error.
 */

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <yaml.h>

#include "podcap/config.h"
#include "podcap/units.h"

#include "config_impl.h"

#define DEFAULT_LISTEN		"127.0.0.1:9180"
#define DEFAULT_LCORES		"0-1"
#define DEFAULT_FILE_PREFIX	"podcap-"
#define DEFAULT_WINDOW_NS	(60 * PC_NS_PER_SEC)
#define DEFAULT_MAX_FRAME	1522
#define DEFAULT_CAP_BPS		1000000000ULL
#define DEFAULT_BURST_NS	(60 * PC_NS_PER_SEC)
#define DEFAULT_QUEUE_DELAY_NS	50000000ULL
#define DEFAULT_MEMORY		(1ULL << 30)
#define MAX_FILE_SIZE		(16u << 20)
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
	if (s[i] != '\0' && k + 4 < n) {
		memcpy(buf + k, "...", 3);
		k += 3;
	}
	buf[k] = '\0';
	return buf;
}

int
cfg_fail_at(struct ctx *c, struct pc_mark m, const char *fmt, ...)
{
	va_list ap;

	c->err->mark = m;
	va_start(ap, fmt);
	vsnprintf(c->err->msg, sizeof(c->err->msg), fmt, ap);
	va_end(ap);
	source_line(c->text, c->len, m.line, c->err->line_text,
		    sizeof(c->err->line_text));
	return -1;
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

struct pc_mark
cfg_key_mark(const struct ctx *c, const yaml_node_t *map, const char *key)
{
	yaml_node_pair_t *pair;

	for (pair = map->data.mapping.pairs.start;
	     pair < map->data.mapping.pairs.top; pair++) {
		yaml_node_t *k = cfg_node_at(c, pair->key);

		if (k->type == YAML_SCALAR_NODE &&
		    strcmp((const char *)k->data.scalar.value, key) == 0)
			return cfg_mark_of(cfg_node_at(c, pair->value));
	}
	return cfg_mark_of(map);
}

/* Loading */

static void
set_defaults(struct ctx *c)
{
	struct pc_config *cfg = &c->cfg;

	snprintf(cfg->listen, sizeof(cfg->listen), "%s", DEFAULT_LISTEN);
	cfg->window_ns = DEFAULT_WINDOW_NS;
	cfg->max_frame = DEFAULT_MAX_FRAME;
	snprintf(cfg->dpdk.lcores, sizeof(cfg->dpdk.lcores), "%s", DEFAULT_LCORES);
	cfg->dpdk.memory_bytes = DEFAULT_MEMORY;
	c->defaults.cap_bps = DEFAULT_CAP_BPS;
	c->defaults.burst = DEFAULT_BURST_NS;
	c->defaults.burst_is_time = true;
	c->defaults.mode = PC_MODE_SHAPE;
	c->defaults.queue_delay_ns = DEFAULT_QUEUE_DELAY_NS;
}

/* 1-based line and column of a byte offset, for libyaml's reader errors. */
static struct pc_mark
offset_mark(const char *text, size_t len, size_t off)
{
	struct pc_mark m = { 1, 1 };
	size_t i;

	for (i = 0; i < off && i < len; i++) {
		if (text[i] == '\n') {
			m.line++;
			m.col = 1;
		} else if (((unsigned char)text[i] & 0xc0) != 0x80) {
			m.col++;
		}
	}
	return m;
}

static int
yaml_failure(struct ctx *c, const yaml_parser_t *p)
{
	struct pc_mark m = { p->problem_mark.line + 1, p->problem_mark.column + 1 };
	const char *problem = p->problem != NULL ? p->problem : "unknown error";

	switch (p->error) {
	case YAML_MEMORY_ERROR:
		return cfg_fail_at(c, (struct pc_mark){ 0, 0 }, "out of memory");
	case YAML_READER_ERROR:
		return cfg_fail_at(c, offset_mark(c->text, c->len, p->problem_offset),
				   "invalid YAML: %s", problem);
	default:
		if (p->context != NULL)
			return cfg_fail_at(c, m, "invalid YAML: %s (%s at %zu:%zu)",
					   problem, p->context,
					   p->context_mark.line + 1,
					   p->context_mark.column + 1);
		return cfg_fail_at(c, m, "invalid YAML: %s", problem);
	}
}

static void
finish_defaults(struct ctx *c)
{
	struct pc_dpdk *d = &c->cfg.dpdk;

	if (d->file_prefix[0] == '\0')
		snprintf(d->file_prefix, sizeof(d->file_prefix), "%s%.*s",
			 DEFAULT_FILE_PREFIX,
			 (int)(PC_ID_LEN - 1 - strlen(DEFAULT_FILE_PREFIX)),
			 c->cfg.appliance_id);
}

static int
move_out(struct ctx *c)
{
	struct pc_config *cfg = &c->cfg;
	unsigned i;

	cfg->uplinks = calloc(c->nuplinks, sizeof(*cfg->uplinks));
	cfg->pods = calloc(c->npods, sizeof(*cfg->pods));
	if (cfg->uplinks == NULL || cfg->pods == NULL) {
		free(cfg->uplinks);
		free(cfg->pods);
		cfg->uplinks = NULL;
		cfg->pods = NULL;
		return cfg_fail_at(c, (struct pc_mark){ 0, 0 }, "out of memory");
	}
	for (i = 0; i < c->nuplinks; i++)
		cfg->uplinks[i] = c->uplinks[i].up;
	for (i = 0; i < c->npods; i++)
		cfg->pods[i] = c->pods[i].pod;
	cfg->nuplinks = c->nuplinks;
	cfg->npods = c->npods;
	return 0;
}

static int
load_document(struct ctx *c, yaml_parser_t *parser)
{
	yaml_document_t extra;
	yaml_node_t *root, *more;
	int rc;

	root = yaml_document_get_root_node(c->doc);
	if (root == NULL)
		return cfg_fail_at(c, (struct pc_mark){ 0, 0 }, "the pod map is empty");
	if (root->type != YAML_MAPPING_NODE)
		return cfg_fail_at(c, cfg_mark_of(root),
				   "expected a mapping at the top level, got %s",
				   cfg_kind(root));
	if (!yaml_parser_load(parser, &extra))
		return yaml_failure(c, parser);
	more = yaml_document_get_root_node(&extra);
	rc = 0;
	if (more != NULL)
		rc = cfg_fail_at(c, cfg_mark_of(more), "more than one YAML document "
				 "(a pod map is a single document)");
	yaml_document_delete(&extra);
	if (rc < 0)
		return rc;
	if (cfg_parse_mapping(c, root, "at the top level", cfg_top_fields, c) < 0 ||
	    cfg_check(c) < 0)
		return -1;
	finish_defaults(c);
	return move_out(c);
}

int
pc_config_load_buffer(const char *name, const char *text, size_t len,
		      struct pc_config *cfg, struct pc_error *err)
{
	yaml_parser_t parser;
	yaml_document_t doc;
	struct ctx *c;
	int rc = -1;

	memset(cfg, 0, sizeof(*cfg));
	memset(err, 0, sizeof(*err));
	if (name == NULL)
		name = "<buffer>";
	snprintf(err->file, sizeof(err->file), "%s", name);
	/* a struct pc_config is large; keep it off the stack */
	c = calloc(1, sizeof(*c));
	if (c == NULL) {
		snprintf(err->msg, sizeof(err->msg), "out of memory");
		return -1;
	}
	c->text = text;
	c->len = len;
	c->err = err;
	c->doc = &doc;
	set_defaults(c);
	snprintf(c->cfg.path, sizeof(c->cfg.path), "%s", name);
	if (!yaml_parser_initialize(&parser)) {
		cfg_fail_at(c, (struct pc_mark){ 0, 0 }, "out of memory");
		goto out;
	}
	yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
	if (!yaml_parser_load(&parser, &doc)) {
		yaml_failure(c, &parser);
	} else {
		rc = load_document(c, &parser);
		yaml_document_delete(&doc);
	}
	yaml_parser_delete(&parser);
	if (rc == 0)
		*cfg = c->cfg;
out:
	free(c->uplinks);
	free(c->pods);
	free(c);
	return rc;
}

int
pc_config_load(const char *path, struct pc_config *cfg, struct pc_error *err)
{
	FILE *f;
	char *text;
	size_t n;
	int rc;

	memset(cfg, 0, sizeof(*cfg));
	memset(err, 0, sizeof(*err));
	snprintf(err->file, sizeof(err->file), "%s", path);
	f = fopen(path, "rb");
	if (f == NULL) {
		snprintf(err->msg, sizeof(err->msg), "cannot open: %s",
			 strerror(errno));
		return -1;
	}
	text = malloc(MAX_FILE_SIZE + 1);
	if (text == NULL) {
		fclose(f);
		snprintf(err->msg, sizeof(err->msg), "out of memory");
		return -1;
	}
	n = fread(text, 1, MAX_FILE_SIZE + 1, f);
	if (ferror(f)) {
		snprintf(err->msg, sizeof(err->msg), "cannot read: %s",
			 strerror(errno));
		rc = -1;
	} else if (n > MAX_FILE_SIZE) {
		snprintf(err->msg, sizeof(err->msg), "larger than %u MiB",
			 MAX_FILE_SIZE >> 20);
		rc = -1;
	} else {
		rc = pc_config_load_buffer(path, text, n, cfg, err);
	}
	fclose(f);
	free(text);
	return rc;
}

void
pc_config_free(struct pc_config *cfg)
{
	if (cfg == NULL)
		return;
	free(cfg->uplinks);
	free(cfg->pods);
	memset(cfg, 0, sizeof(*cfg));
}

int
pc_config_find_pod(const struct pc_config *cfg, const char *id)
{
	unsigned i;

	for (i = 0; i < cfg->npods; i++)
		if (strcmp(cfg->pods[i].id, id) == 0)
			return (int)i;
	return -1;
}

int
pc_config_find_uplink(const struct pc_config *cfg, const char *name)
{
	unsigned i;

	for (i = 0; i < cfg->nuplinks; i++)
		if (strcmp(cfg->uplinks[i].name, name) == 0)
			return (int)i;
	return -1;
}
