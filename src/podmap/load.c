/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The pod map loader.
 *
 * The file is loaded whole with libyaml's document API, then walked with
 * tables of {key, handler} (podmap/walk.c, podmap/fields.c): any key not in
 * the table is an error, so a typo can never silently leave a default in
 * force. Errors found while walking come in document order; the
 * cross-checks that need the whole map (names, ports, references, bursts,
 * prefixes; podmap/check.c) run after it, in a fixed order, so the same
 * file always yields the same first error. Only then is anything handed to
 * the caller.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <yaml.h>

#include "config.h"
#include "base/error.h"
#include "base/fileio.h"
#include "base/units.h"

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
		return cfg_fail_at(c, CFG_NO_MARK, "out of memory");
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
		return cfg_fail_at(c, CFG_NO_MARK, "out of memory");
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
		return cfg_fail_at(c, CFG_NO_MARK, "the pod map is empty");
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

/* The error just set in err is about the file as a whole: "path: msg". */
static int
in_file(struct pc_error *err, const char *path)
{
	return cfg_error_at(err, path, NULL, 0, CFG_NO_MARK);
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
	if (name == NULL)
		name = "<buffer>";
	/* a struct pc_config is large; keep it off the stack */
	c = calloc(1, sizeof(*c));
	if (c == NULL) {
		pc_error_set(err, "out of memory");
		return in_file(err, name);
	}
	c->name = name;
	c->text = text;
	c->len = len;
	c->err = err;
	c->doc = &doc;
	set_defaults(c);
	snprintf(c->cfg.path, sizeof(c->cfg.path), "%s", name);
	if (!yaml_parser_initialize(&parser)) {
		cfg_fail_at(c, CFG_NO_MARK, "out of memory");
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
	f = fopen(path, "rb");
	if (f == NULL) {
		pc_error_errno(err, "cannot open");
		return in_file(err, path);
	}
	text = malloc(MAX_FILE_SIZE + 1);
	if (text == NULL) {
		fclose(f);
		pc_error_set(err, "out of memory");
		return in_file(err, path);
	}
	n = fread(text, 1, MAX_FILE_SIZE + 1, f);
	if (ferror(f)) {
		pc_error_errno(err, "cannot read");
		rc = in_file(err, path);
	} else if (n > MAX_FILE_SIZE) {
		pc_error_set(err, "larger than %u MiB", MAX_FILE_SIZE >> 20);
		rc = in_file(err, path);
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
cfg_find_name(const void *items, unsigned n, size_t size, size_t off, const char *name)
{
	const char *item = items;
	unsigned i;

	for (i = 0; i < n; i++, item += size)
		if (strcmp(item + off, name) == 0)
			return (int)i;
	return -1;
}

int
pc_config_find_pod(const struct pc_config *cfg, const char *id)
{
	return cfg_find_name(cfg->pods, cfg->npods, sizeof(*cfg->pods),
			     offsetof(struct pc_pod, id), id);
}

int
pc_config_find_uplink(const struct pc_config *cfg, const char *name)
{
	return cfg_find_name(cfg->uplinks, cfg->nuplinks, sizeof(*cfg->uplinks),
			     offsetof(struct pc_uplink, name), name);
}

int
pc_config_error_at(const struct pc_config *cfg, struct pc_mark m, struct pc_error *err)
{
	size_t len = 0;
	char *text = pc_read_file(cfg->path, MAX_FILE_SIZE, &len);

	cfg_error_at(err, cfg->path, text, text != NULL ? len : 0, m);
	free(text);
	return -1;
}
