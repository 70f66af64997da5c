/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Who may read the appliance's endpoint: appliance.tls (the certificate,
 * key and client CA files, read later by podcapd with GnuTLS),
 * appliance.access (each client and what it may read) and
 * appliance.listen_plaintext. How podcapd serves, not what it enforces:
 * none of it is in the canonical form (docs/config.md).
 *
 *   tls:
 *     certificate: /etc/podcap/tls/appliance.crt
 *     key: /etc/podcap/tls/appliance.key
 *     client_ca: /etc/podcap/tls/site-ca.crt
 *   access:
 *     - client: "CN=verifier-1,O=Example Site"
 *       routes: [log]
 *     - client: sha256:9f86d081884c7d65...   (of its SubjectPublicKeyInfo)
 *       routes: [metrics]
 */
#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>

#include "base/hex.h"

#include "config_impl.h"

#define KEY_PREFIX "sha256:"

/* The files are read again at each reload (src/http/tls.c): a certificate is renewed so. */
#define TLS_FIELD(name, member)                                                         \
	.key = name, .fn = cfg_handle_text, .off = offsetof(struct pc_tls_cfg, member), \
	.size = sizeof(((struct pc_tls_cfg *)0)->member), .digest = PC_DIGEST_NEVER,    \
	.reload = PC_RELOAD_APPLIED

const struct field cfg_tls_fields[] = {
	{ TLS_FIELD("certificate", certificate), .required = true },
	{ TLS_FIELD("key", key), .required = true },
	{ TLS_FIELD("client_ca", client_ca) },
	{ TLS_FIELD("priorities", priorities) },
	{ NULL },
};

int
cfg_handle_tls(struct ctx *c, const struct field *f, yaml_node_t *v, void *dst)
{
	struct pc_tls_cfg *t = dst;

	if (cfg_expect(c, f, v, YAML_MAPPING_NODE) < 0)
		return -1;
	memset(t, 0, sizeof(*t));
	t->enabled = true;
	snprintf(t->priorities, sizeof(t->priorities), "%s", PC_TLS_DEFAULT_PRIORITIES);
	if (cfg_parse_mapping(c, v, "in appliance.tls", f->fields, t) < 0)
		return -1;
	/* where podcapd points when GnuTLS refuses one of the files (src/http/tls.c) */
	t->mark = cfg_mark_of(v);
	t->certificate_mark = cfg_key_mark(c, v, "certificate");
	t->key_mark = cfg_key_mark(c, v, "key");
	t->client_ca_mark = cfg_key_mark(c, v, "client_ca");
	t->priorities_mark = cfg_key_mark(c, v, "priorities");
	return 0;
}

int
cfg_handle_bool(struct ctx *c, const struct field *f, yaml_node_t *v, void *dst)
{
	const char *s;

	if (cfg_get_scalar(c, f, v, &s) < 0)
		return -1;
	if (strcmp(s, "true") == 0)
		*(bool *)dst = true;
	else if (strcmp(s, "false") == 0)
		*(bool *)dst = false;
	else
		return cfg_fail_value(c, f->key, v, "expected true or false");
	return 0;
}

/* "sha256:<64 hex digits>" or a distinguished name ("CN=...,O=..."). */
static int
access_client(struct ctx *c, const struct field *f, yaml_node_t *v, void *dst)
{
	struct pc_access_rule *r = dst;
	const char *s;

	if (cfg_get_scalar(c, f, v, &s) < 0)
		return -1;
	if (strncmp(s, KEY_PREFIX, strlen(KEY_PREFIX)) == 0) {
		const char *hex = s + strlen(KEY_PREFIX);
		if (!pc_unhex(hex, strlen(hex), r->spki_sha256, sizeof(r->spki_sha256)))
			return cfg_fail_value(c, f->key, v,
					      "expected sha256: and 64 hex digits, the SHA-256 of "
					      "the client's SubjectPublicKeyInfo");
		r->by_key = true;
		return 0;
	}
	if (strchr(s, '=') == NULL)
		return cfg_fail_value(c, f->key, v,
				      "expected a certificate subject (CN=name,O=site) or "
				      "sha256:<hex of its public key>");
	if (strlen(s) >= sizeof(r->subject))
		return cfg_fail_value(c, f->key, v, "a subject of 256 characters or more");
	snprintf(r->subject, sizeof(r->subject), "%s", s);
	return 0;
}

static const struct {
	const char *name;
	unsigned bit;
} route_names[] = {
	{ "log", PC_ACCESS_LOG },
	{ "metrics", PC_ACCESS_METRICS },
	{ "attest", PC_ACCESS_ATTEST },
};

static int
route_bit(const char *s, unsigned *bit)
{
	for (size_t i = 0; i < sizeof(route_names) / sizeof(route_names[0]); i++) {
		if (strcmp(s, route_names[i].name) == 0) {
			*bit = route_names[i].bit;
			return 0;
		}
	}
	return -1;
}

static int
access_routes(struct ctx *c, const struct field *f, yaml_node_t *v, void *dst)
{
	unsigned *routes = dst, bit;

	if (cfg_expect(c, f, v, YAML_SEQUENCE_NODE) < 0)
		return -1;
	for (yaml_node_item_t *it = v->data.sequence.items.start; it < v->data.sequence.items.top;
	     it++) {
		yaml_node_t *item = cfg_node_at(c, *it);
		unsigned i = (unsigned)(it - v->data.sequence.items.start);

		if (cfg_expect_item(c, f->key, i, item, YAML_SCALAR_NODE) < 0 ||
		    cfg_scalar_checked(c, f->key, item) < 0)
			return -1;
		if (route_bit((const char *)item->data.scalar.value, &bit) < 0)
			return cfg_fail_value(c, f->key, item, "expected log, metrics or attest");
		if (*routes & bit)
			return cfg_fail_value(c, f->key, item, "listed twice");
		*routes |= bit;
	}
	if (*routes == 0)
		return cfg_fail_at(c, cfg_mark_of(v),
				   "empty routes %s (leave the client out to refuse it everything)",
				   c->where);
	return 0;
}

/* Who may read what is decided again at each reload, with the TLS files. */
const struct field cfg_access_fields[] = {
	{ "client", access_client, .required = true, .digest = PC_DIGEST_NEVER,
	  .reload = PC_RELOAD_APPLIED },
	{ "routes", access_routes, offsetof(struct pc_access_rule, routes), sizeof(unsigned),
	  .required = true, .digest = PC_DIGEST_NEVER, .reload = PC_RELOAD_APPLIED },
	{ NULL },
};

static bool
same_client(const struct pc_access_rule *a, const struct pc_access_rule *b)
{
	if (a->by_key != b->by_key)
		return false;
	return a->by_key ? memcmp(a->spki_sha256, b->spki_sha256, sizeof(a->spki_sha256)) == 0
			 : strcmp(a->subject, b->subject) == 0;
}

static int
read_rule(struct ctx *c, struct pc_access *a, unsigned i, yaml_node_t *item)
{
	struct pc_access_rule *r = &a->r[i];
	char where[48];

	if (cfg_expect_item(c, "appliance.access", i, item, YAML_MAPPING_NODE) < 0)
		return -1;
	r->mark = cfg_mark_of(item);
	snprintf(where, sizeof(where), "in access[%u]", i);
	if (cfg_parse_mapping(c, item, where, cfg_access_fields, r) < 0)
		return -1;
	/* two rules for one client: which one holds would be a matter of order */
	for (unsigned j = 0; j < i; j++)
		if (same_client(&a->r[j], r))
			return cfg_fail_at(c, r->mark,
					   "access[%u] names the client of access[%u] "
					   "again: give it one list of routes",
					   i, j);
	a->n = i + 1;
	return 0;
}

int
cfg_handle_access(struct ctx *c, const struct field *f, yaml_node_t *v, void *dst)
{
	struct pc_access *a = dst;
	yaml_node_item_t *it, *start;

	if (cfg_expect(c, f, v, YAML_SEQUENCE_NODE) < 0)
		return -1;
	start = v->data.sequence.items.start;
	if (start == v->data.sequence.items.top)
		return cfg_fail_at(c, cfg_mark_of(v),
				   "empty access list (leave out appliance.tls."
				   "client_ca and appliance.access to serve every client)");
	for (it = start; it < v->data.sequence.items.top; it++) {
		unsigned i = (unsigned)(it - start);

		if (i == PC_MAX_ACCESS)
			return cfg_fail_at(c, cfg_mark_of(cfg_node_at(c, *it)),
					   "too many clients in access (at most %u)",
					   PC_MAX_ACCESS);
		if (read_rule(c, a, i, cfg_node_at(c, *it)) < 0)
			return -1;
	}
	return 0;
}

/* The host of host:port or [v6]:port is a loopback address (or localhost). */
static bool
loopback(const char *listen)
{
	char host[128];
	uint8_t a[16];
	const char *colon;

	if (listen[0] == '[')
		return strncmp(listen, "[::1]:", 6) == 0;
	colon = strrchr(listen, ':');
	if (colon == NULL || (size_t)(colon - listen) >= sizeof(host))
		return false;
	snprintf(host, sizeof(host), "%.*s", (int)(colon - listen), listen);
	if (strcmp(host, "localhost") == 0)
		return true;
	return inet_pton(AF_INET, host, a) == 1 && a[0] == 127;
}

static const yaml_node_t *
appliance_node(const struct ctx *c)
{
	return cfg_value_of(c, yaml_document_get_root_node(c->doc), "appliance");
}

int
cfg_check_endpoint(struct ctx *c)
{
	const struct pc_config *cfg = &c->cfg;
	const yaml_node_t *app = appliance_node(c);

	if (cfg->access.n > 0 && cfg->tls.client_ca[0] == '\0')
		return cfg_fail_at(c, cfg_key_mark(c, app, "access"),
				   "appliance.access names clients by their certificates: it needs "
				   "appliance.tls.client_ca");
	if (cfg->tls.client_ca[0] != '\0' && cfg->access.n == 0)
		return cfg_fail_at(c, cfg->tls.client_ca_mark,
				   "appliance.tls.client_ca without appliance.access: say which "
				   "client may read what");
	if (cfg->tls.enabled && cfg->listen_plaintext)
		return cfg_fail_at(c, cfg_key_mark(c, app, "listen_plaintext"),
				   "listen_plaintext: true and appliance.tls: choose one");
	if (!cfg->tls.enabled && !cfg->listen_plaintext && !loopback(cfg->listen))
		return cfg_fail_at(c, cfg_key_mark(c, app, "listen"),
				   "%s is not a loopback address: serve it with appliance.tls, or "
				   "say appliance.listen_plaintext: true to serve the counters in "
				   "clear",
				   cfg->listen);
	return 0;
}
