/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The fleet file (src/verify/fleet.h): read with libyaml's document
 * API, each mapping from a table of keys, every error placed at its node
 * as the pod map's are (podmap/walk.c's cfg_error_at).
 */
#include <errno.h>
#include <libgen.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <yaml.h>

#include "base/fileio.h"
#include "base/hex.h"
#include "base/id.h"
#include "base/units.h"
#include "fleet.h"

#include "podmap/config_impl.h"

#define MAX_FLEET_FILE (16u << 20)

struct fctx {
	const char *path;
	const char *text;
	size_t len;
	char dir[PC_PATH_LEN]; /* the file's directory, for relative paths */
	yaml_document_t *doc;
	struct pc_error *err;
};

static int fail(struct fctx *c, const yaml_node_t *n, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int
fail(struct fctx *c, const yaml_node_t *n, const char *fmt, ...)
{
	char msg[PC_ERR_MSG_LEN];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (c->err == NULL)
		return -1;
	pc_error_set(c->err, "%s", msg);
	return cfg_error_at(c->err, c->path, c->text, c->len,
			    n != NULL ? cfg_mark_of(n) : CFG_NO_MARK);
}

static int
scalar(struct fctx *c, const char *key, const yaml_node_t *v, const char **s)
{
	if (v->type != YAML_SCALAR_NODE || v->data.scalar.length == 0)
		return fail(c, v, "%s must be a non-empty string", key);
	if (strlen((const char *)v->data.scalar.value) != v->data.scalar.length)
		return fail(c, v, "%s holds a NUL", key);
	*s = (const char *)v->data.scalar.value;
	return 0;
}

/* A path from the file: as it is when absolute, else from the fleet file's directory. */
static int
path_of(struct fctx *c, const char *key, const yaml_node_t *v, char **out)
{
	const char *s;
	char buf[PC_PATH_LEN];

	if (scalar(c, key, v, &s) < 0)
		return -1;
	if ((size_t)snprintf(buf, sizeof(buf), "%s%s%s", s[0] == '/' ? "" : c->dir,
			     s[0] == '/' ? "" : "/", s) >= sizeof(buf))
		return fail(c, v, "%s: path too long", key);
	if ((*out = strdup(buf)) == NULL)
		return fail(c, v, "out of memory");
	return 0;
}

static int
url_of(struct fctx *c, const yaml_node_t *v, char **out)
{
	const char *s;

	if (scalar(c, "url", v, &s) < 0)
		return -1;
	if (strncmp(s, "http://", 7) != 0 && strncmp(s, "https://", 8) != 0)
		return fail(c, v, "url must begin with http:// or https://");
	if ((*out = strdup(s)) == NULL)
		return fail(c, v, "out of memory");
	return 0;
}

/* A list of paths (a single one may be a string): at most max, into out[*n]. */
static int
paths_of(struct fctx *c, const char *key, const yaml_node_t *v, char **out, size_t *n, size_t max)
{
	if (v->type == YAML_SCALAR_NODE) {
		*n = 1;
		return path_of(c, key, v, &out[0]);
	}
	if (v->type != YAML_SEQUENCE_NODE)
		return fail(c, v, "%s must be a list of paths", key);
	for (yaml_node_item_t *i = v->data.sequence.items.start; i < v->data.sequence.items.top;
	     i++) {
		const yaml_node_t *item = yaml_document_get_node(c->doc, *i);

		if (*n == max)
			return fail(c, item, "more than %zu in %s", max, key);
		if (path_of(c, key, item, &out[*n]) < 0)
			return -1;
		(*n)++;
	}
	return 0;
}

static int
tap_of(struct fctx *c, const yaml_node_t *n, struct pc_fleet_tap *t)
{
	if (n->type != YAML_MAPPING_NODE)
		return fail(c, n, "a tap must be a mapping (url or ledger, key)");
	for (yaml_node_pair_t *p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top;
	     p++) {
		const yaml_node_t *k = yaml_document_get_node(c->doc, p->key);
		const yaml_node_t *v = yaml_document_get_node(c->doc, p->value);
		const char *ks;
		int rc;

		if (scalar(c, "a key", k, &ks) < 0)
			return -1;
		if (strcmp(ks, "url") == 0)
			rc = t->url != NULL ? fail(c, v, "url given twice") : url_of(c, v, &t->url);
		else if (strcmp(ks, "ledger") == 0)
			rc = t->ledger != NULL ? fail(c, v, "ledger given twice")
					       : path_of(c, "ledger", v, &t->ledger);
		else if (strcmp(ks, "key") == 0)
			rc = t->key != NULL ? fail(c, v, "key given twice")
					    : path_of(c, "key", v, &t->key);
		else
			rc = fail(c, k, "unknown key '%.64s' in a tap (url, ledger, key)", ks);
		if (rc < 0)
			return -1;
	}
	if ((t->url == NULL) == (t->ledger == NULL))
		return fail(c, n, "a tap needs exactly one of url and ledger");
	if (t->key == NULL)
		return fail(c, n, "a tap needs a key (its verifier key file)");
	return 0;
}

static int
taps_of(struct fctx *c, const yaml_node_t *v, struct pc_fleet_appliance *a)
{
	if (v->type != YAML_SEQUENCE_NODE)
		return fail(c, v, "taps must be a list of taps (url or ledger, key)");
	for (yaml_node_item_t *i = v->data.sequence.items.start; i < v->data.sequence.items.top;
	     i++) {
		const yaml_node_t *item = yaml_document_get_node(c->doc, *i);

		if (a->ntaps == PC_FLEET_MAX_KEYS)
			return fail(c, item, "more than %d taps", PC_FLEET_MAX_KEYS);
		if (tap_of(c, item, &a->taps[a->ntaps++]) < 0)
			return -1;
	}
	return 0;
}

/*
 * witnesses: each file another witness's. The same file twice is refused
 * here, where it can be placed; two files of one key are podcap-verify's
 * to refuse (its --witness rule), when it reads them.
 */
static int
witnesses_of(struct fctx *c, const yaml_node_t *v, struct pc_fleet_appliance *a)
{
	if (paths_of(c, "witnesses", v, a->witnesses, &a->nwitnesses, PC_FLEET_MAX_KEYS) < 0)
		return -1;
	for (size_t i = 1; i < a->nwitnesses; i++)
		for (size_t j = 0; j < i; j++)
			if (strcmp(a->witnesses[i], a->witnesses[j]) == 0)
				return fail(
				    c,
				    yaml_document_get_node(c->doc, v->data.sequence.items.start[i]),
				    "witnesses: %s given twice: one witness counted twice",
				    a->witnesses[i]);
	return 0;
}

/* A path given once: its key's value, into *out. */
static int
path_once(struct fctx *c, const char *key, const yaml_node_t *v, char **out)
{
	return *out != NULL ? fail(c, v, "%s given twice", key) : path_of(c, key, v, out);
}

/* One pin: "sha256:" and the SHA-256 of a SubjectPublicKeyInfo, as --pin takes it. */
static int
pin_of(struct fctx *c, const yaml_node_t *v, char **out)
{
	uint8_t h[32];
	const char *s;

	if (scalar(c, "pin", v, &s) < 0)
		return -1;
	if (strncmp(s, "sha256:", 7) != 0 || !pc_unhex(s + 7, strlen(s + 7), h, sizeof(h)))
		return fail(c, v,
			    "pin '%.80s' is not sha256: and 64 hex digits (the SHA-256 of the "
			    "server's SubjectPublicKeyInfo)",
			    s);
	if ((*out = strdup(s)) == NULL)
		return fail(c, v, "out of memory");
	return 0;
}

/* pin: one, or a list of at most PC_FLEET_MAX_PINS, any of which the server's key may be. */
static int
pins_of(struct fctx *c, const yaml_node_t *v, struct pc_fleet_appliance *a)
{
	if (v->type == YAML_SCALAR_NODE) {
		a->npins = 1;
		return pin_of(c, v, &a->pins[0]);
	}
	if (v->type != YAML_SEQUENCE_NODE)
		return fail(c, v, "pin must be a list of sha256:HEX");
	if (v->data.sequence.items.top == v->data.sequence.items.start)
		return fail(c, v, "pin is empty");
	for (yaml_node_item_t *i = v->data.sequence.items.start; i < v->data.sequence.items.top;
	     i++) {
		const yaml_node_t *item = yaml_document_get_node(c->doc, *i);

		if (a->npins == PC_FLEET_MAX_PINS)
			return fail(c, item, "more than %d in pin", PC_FLEET_MAX_PINS);
		if (pin_of(c, item, &a->pins[a->npins]) < 0)
			return -1;
		a->npins++;
	}
	return 0;
}

/* The keys of the appliance's TLS; 1 when k is none of them. */
static int
tls_key(struct fctx *c, const char *k, const yaml_node_t *v, struct pc_fleet_appliance *a)
{
	if (strcmp(k, "ca") == 0)
		return path_once(c, "ca", v, &a->ca);
	if (strcmp(k, "cert") == 0)
		return path_once(c, "cert", v, &a->cert);
	if (strcmp(k, "cert_key") == 0)
		return path_once(c, "cert_key", v, &a->cert_key);
	if (strcmp(k, "pin") == 0)
		return a->npins > 0 ? fail(c, v, "pin given twice") : pins_of(c, v, a);
	return 1;
}

/* podcap-monitor's pull interval: a duration of at least a second, at most a day. */
static int
interval_of(struct fctx *c, const yaml_node_t *v, struct pc_fleet_appliance *a)
{
	const char *s;
	struct pc_error e;

	if (a->interval_ns != 0)
		return fail(c, v, "interval given twice");
	if (scalar(c, "interval", v, &s) < 0)
		return -1;
	if (pc_parse_duration(s, &a->interval_ns, &e) < 0)
		return fail(c, v, "interval: %s", e.msg);
	if (a->interval_ns < PC_FLEET_MIN_INTERVAL_NS || a->interval_ns > PC_FLEET_MAX_INTERVAL_NS)
		return fail(c, v, "interval must be from 1s to 24h");
	return 0;
}

static int
appliance_key(struct fctx *c, const char *k, const yaml_node_t *v, struct pc_fleet_appliance *a)
{
	const char *s;

	if (strcmp(k, "name") == 0) {
		if (scalar(c, "name", v, &s) < 0)
			return -1;
		if (!pc_id_valid(s))
			return fail(c, v, "name '%.63s' is not an id: %s", s, PC_ID_RULE);
		snprintf(a->name, sizeof(a->name), "%s", s);
		return 0;
	}
	if (strcmp(k, "url") == 0)
		return a->url != NULL ? fail(c, v, "url given twice") : url_of(c, v, &a->url);
	if (strcmp(k, "ledger") == 0)
		return a->ledger != NULL ? fail(c, v, "ledger given twice")
					 : path_of(c, "ledger", v, &a->ledger);
	if (strcmp(k, "key") == 0)
		return path_once(c, "key", v, &a->key);
	if (strcmp(k, "state") == 0)
		return path_once(c, "state", v, &a->state);
	if (strcmp(k, "attest") == 0)
		return path_once(c, "attest", v, &a->attest);
	if (strcmp(k, "declarations") == 0)
		return path_once(c, "declarations", v, &a->declarations);
	if (strcmp(k, "assignment") == 0)
		return path_once(c, "assignment", v, &a->assignment);
	if (strcmp(k, "pod_maps") == 0)
		return a->npod_maps > 0
		    ? fail(c, v, "pod_maps given twice")
		    : paths_of(c, "pod_maps", v, a->pod_maps, &a->npod_maps, PC_FLEET_MAX_MAPS);
	if (strcmp(k, "witnesses") == 0)
		return a->nwitnesses > 0 ? fail(c, v, "witnesses given twice")
					 : witnesses_of(c, v, a);
	if (strcmp(k, "auditor_keys") == 0)
		return a->nauditor_keys > 0 ? fail(c, v, "auditor_keys given twice")
					    : paths_of(c, "auditor_keys", v, a->auditor_keys,
						       &a->nauditor_keys, PC_FLEET_MAX_KEYS);
	if (strcmp(k, "taps") == 0)
		return a->ntaps > 0 ? fail(c, v, "taps given twice") : taps_of(c, v, a);
	if (strcmp(k, "interval") == 0)
		return interval_of(c, v, a);
	return tls_key(c, k, v, a);
}

static int
appliance(struct fctx *c, const yaml_node_t *n, struct pc_fleet_appliance *a)
{
	if (n->type != YAML_MAPPING_NODE)
		return fail(c, n, "an appliance must be a mapping (name, url or ledger, key, ...)");
	a->line = cfg_mark_of(n).line;
	for (yaml_node_pair_t *p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top;
	     p++) {
		const yaml_node_t *k = yaml_document_get_node(c->doc, p->key);
		const yaml_node_t *v = yaml_document_get_node(c->doc, p->value);
		const char *ks;

		if (scalar(c, "a key", k, &ks) < 0)
			return -1;
		int rc = appliance_key(c, ks, v, a);
		if (rc < 0)
			return -1;
		if (rc > 0)
			return fail(
			    c, k,
			    "unknown key '%.64s' in an appliance (name, url, ledger, key, "
			    "pod_maps, state, witnesses, attest, declarations, auditor_keys, "
			    "assignment, taps, ca, pin, cert, cert_key, interval)",
			    ks);
	}
	if (a->name[0] == '\0')
		return fail(c, n, "an appliance needs a name");
	if ((a->url == NULL) == (a->ledger == NULL))
		return fail(c, n, "appliance %s needs exactly one of url and ledger", a->name);
	if (a->key == NULL)
		return fail(c, n, "appliance %s needs a key (its verifier key file)", a->name);
	if (a->nauditor_keys > 0 && a->declarations == NULL)
		return fail(c, n, "appliance %s has auditor_keys but no declarations to check",
			    a->name);
	if ((a->cert == NULL) != (a->cert_key == NULL))
		return fail(c, n, "appliance %s has %s but no %s: the two come together", a->name,
			    a->cert != NULL ? "cert" : "cert_key",
			    a->cert != NULL ? "cert_key" : "cert");
	return 0;
}

static int
appliances(struct fctx *c, const yaml_node_t *v, struct pc_fleet *fl)
{
	size_t n;

	if (v->type != YAML_SEQUENCE_NODE)
		return fail(c, v, "appliances must be a list");
	n = (size_t)(v->data.sequence.items.top - v->data.sequence.items.start);
	if (n == 0)
		return fail(c, v, "appliances is empty");
	if (n > PC_FLEET_MAX_APPLIANCES)
		return fail(c, v, "more than %d appliances", PC_FLEET_MAX_APPLIANCES);
	if ((fl->a = calloc(n, sizeof(*fl->a))) == NULL)
		return fail(c, v, "out of memory");
	for (size_t i = 0; i < n; i++) {
		const yaml_node_t *item =
		    yaml_document_get_node(c->doc, v->data.sequence.items.start[i]);

		fl->n++;
		if (appliance(c, item, &fl->a[i]) < 0)
			return -1;
		for (size_t j = 0; j < i; j++)
			if (strcmp(fl->a[j].name, fl->a[i].name) == 0)
				return fail(c, item,
					    "appliance %s is named twice (first at line %u)",
					    fl->a[i].name, fl->a[j].line);
	}
	return 0;
}

static int
jobs(struct fctx *c, const yaml_node_t *v, struct pc_fleet *fl)
{
	const char *s;
	char *end;

	if (scalar(c, "jobs", v, &s) < 0)
		return -1;
	errno = 0;
	unsigned long j = strtoul(s, &end, 10);
	if (errno != 0 || *end != '\0' || s[0] == '-' || j < 1 || j > PC_FLEET_MAX_JOBS)
		return fail(c, v, "jobs must be a whole number from 1 to %d", PC_FLEET_MAX_JOBS);
	fl->jobs = (unsigned)j;
	return 0;
}

static int
walk(struct fctx *c, struct pc_fleet *fl)
{
	const yaml_node_t *root = yaml_document_get_root_node(c->doc);
	bool have = false;

	if (root == NULL || root->type != YAML_MAPPING_NODE)
		return fail(c, root, "a fleet file is a mapping (jobs, appliances)");
	for (yaml_node_pair_t *p = root->data.mapping.pairs.start; p < root->data.mapping.pairs.top;
	     p++) {
		const yaml_node_t *k = yaml_document_get_node(c->doc, p->key);
		const yaml_node_t *v = yaml_document_get_node(c->doc, p->value);
		const char *ks;

		if (scalar(c, "a key", k, &ks) < 0)
			return -1;
		if (strcmp(ks, "jobs") == 0) {
			if (jobs(c, v, fl) < 0)
				return -1;
		} else if (strcmp(ks, "appliances") == 0) {
			if (have)
				return fail(c, k, "appliances given twice");
			have = true;
			if (appliances(c, v, fl) < 0)
				return -1;
		} else {
			return fail(c, k, "unknown key '%.64s' (jobs, appliances)", ks);
		}
	}
	if (!have)
		return fail(c, root, "no appliances");
	return 0;
}

int
pc_fleet_load(const char *path, struct pc_fleet *fl, struct pc_error *err)
{
	struct fctx c = { .path = path, .err = err };
	yaml_parser_t parser;
	yaml_document_t doc;
	char dirbuf[PC_PATH_LEN];
	char *text;
	int rc = -1;

	memset(fl, 0, sizeof(*fl));
	fl->jobs = PC_FLEET_DEFAULT_JOBS;
	if ((text = pc_read_file(path, MAX_FLEET_FILE, &c.len)) == NULL) {
		if (errno == EFBIG)
			return pc_error_set(err, "%s: larger than 16 MiB", path);
		return pc_error_errno(err, "%s", path);
	}
	c.text = text;
	snprintf(dirbuf, sizeof(dirbuf), "%s", path);
	snprintf(c.dir, sizeof(c.dir), "%s", dirname(dirbuf));
	if (!yaml_parser_initialize(&parser)) {
		free(text);
		return pc_error_set(err, "out of memory");
	}
	yaml_parser_set_input_string(&parser, (const unsigned char *)text, c.len);
	if (!yaml_parser_load(&parser, &doc)) {
		struct pc_mark m = { (unsigned)parser.problem_mark.line + 1,
				     (unsigned)parser.problem_mark.column + 1 };

		pc_error_set(err, "%s", parser.problem ? parser.problem : "YAML syntax error");
		cfg_error_at(err, path, text, c.len, m);
		yaml_parser_delete(&parser);
		free(text);
		return -1;
	}
	c.doc = &doc;
	rc = walk(&c, fl);
	yaml_document_delete(&doc);
	yaml_parser_delete(&parser);
	free(text);
	if (rc < 0)
		pc_fleet_free(fl);
	return rc;
}

void
pc_fleet_free(struct pc_fleet *fl)
{
	for (size_t i = 0; i < fl->n; i++) {
		struct pc_fleet_appliance *a = &fl->a[i];

		free(a->url);
		free(a->ledger);
		free(a->key);
		free(a->state);
		free(a->attest);
		free(a->declarations);
		free(a->assignment);
		free(a->ca);
		free(a->cert);
		free(a->cert_key);
		for (size_t k = 0; k < a->npins; k++)
			free(a->pins[k]);
		for (size_t k = 0; k < a->npod_maps; k++)
			free(a->pod_maps[k]);
		for (size_t k = 0; k < a->nwitnesses; k++)
			free(a->witnesses[k]);
		for (size_t k = 0; k < a->nauditor_keys; k++)
			free(a->auditor_keys[k]);
		for (size_t k = 0; k < a->ntaps; k++) {
			free(a->taps[k].url);
			free(a->taps[k].ledger);
			free(a->taps[k].key);
		}
	}
	free(fl->a);
	memset(fl, 0, sizeof(*fl));
}
