/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Deciding what a request to the verifier endpoint asks for, apart from
 * libmicrohttpd so it can be tested and fuzzed on its own.
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "podmap/config.h"
#include "http.h"
#include "request.h"

static const struct {
	const char *path;
	enum pc_http_route route;
	const char *args[2];
} routes[] = {
	{ "/v1/checkpoint", PC_ROUTE_CHECKPOINT, { NULL, NULL } },
	{ "/v1/records", PC_ROUTE_RECORDS, { "from", "count" } },
	{ "/v1/proof/inclusion", PC_ROUTE_INCLUSION, { "index", "size" } },
	{ "/v1/proof/consistency", PC_ROUTE_CONSISTENCY, { "old", "new" } },
	{ "/v1/pubkey", PC_ROUTE_PUBKEY, { NULL, NULL } },
	{ "/v1/attest", PC_ROUTE_ATTEST, { NULL, NULL } },
	{ "/metrics", PC_ROUTE_METRICS, { NULL, NULL } },
};

static void __attribute__((format(printf, 3, 4)))
refuse(struct pc_http_request *r, unsigned status, const char *fmt, ...)
{
	va_list ap;

	r->status = status;
	va_start(ap, fmt);
	vsnprintf(r->reason, sizeof(r->reason), fmt, ap);
	va_end(ap);
}

int
pc_http_parse_u64(const char *s, size_t len, uint64_t *out)
{
	uint64_t v = 0, d;
	size_t i;

	if (s == NULL || len == 0 || len > 20 || (len > 1 && s[0] == '0'))
		return -1;
	for (i = 0; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		d = (uint64_t)(s[i] - '0');
		if (v > (UINT64_MAX - d) / 10)
			return -1;
		v = v * 10 + d;
	}
	*out = v;
	return 0;
}

void
pc_http_request_init(struct pc_http_request *r, const char *method, const char *path)
{
	size_t i;

	memset(r, 0, sizeof(*r));
	if (strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0) {
		refuse(r, 405, "only GET and HEAD are allowed");
		return;
	}
	for (i = 0; i < sizeof(routes) / sizeof(routes[0]); i++) {
		if (strcmp(path, routes[i].path) == 0) {
			r->route = routes[i].route;
			r->name[0] = routes[i].args[0];
			r->name[1] = routes[i].args[1];
			r->status = 200;
			return;
		}
	}
	refuse(r, 404, "not found");
}

void
pc_http_request_arg(struct pc_http_request *r, const char *key, const char *value,
		    size_t value_len)
{
	int i;

	for (i = 0; i < 2; i++) {
		if (r->name[i] != NULL && strcmp(key, r->name[i]) == 0) {
			/* the last one given is the one parsed, should it be given once */
			r->seen[i]++;
			r->valid[i] = pc_http_parse_u64(value, value == NULL ? 0 : value_len,
							&r->val[i]) == 0;
		}
	}
}

/* Both arguments given once each, as canonical decimal numbers. */
static int
check_args(struct pc_http_request *r)
{
	int i;

	for (i = 0; i < 2; i++) {
		if (r->seen[i] == 0) {
			refuse(r, 400, "missing query parameter %s", r->name[i]);
			return -1;
		}
		if (r->seen[i] > 1) {
			refuse(r, 400, "query parameter %s given twice", r->name[i]);
			return -1;
		}
		if (!r->valid[i]) {
			refuse(r, 400, "%s must be a decimal number 0..18446744073709551615",
			       r->name[i]);
			return -1;
		}
	}
	r->a = r->val[0];
	r->b = r->val[1];
	return 0;
}

void
pc_http_request_finish(struct pc_http_request *r, uint64_t pub)
{
	if (r->status != 200 || r->name[0] == NULL || check_args(r) != 0)
		return;
	switch (r->route) {
	case PC_ROUTE_RECORDS:
		if (r->b < 1 || r->b > PC_HTTP_MAX_RECORDS)
			refuse(r, 400, "count must be 1..%d", PC_HTTP_MAX_RECORDS);
		else if (r->a > pub || r->b > pub - r->a)
			refuse(r, 400, "from+count must be <= %" PRIu64 ", the published tree size",
			       pub);
		break;
	case PC_ROUTE_INCLUSION:
		if (r->b > pub)
			refuse(r, 400, "size must be <= %" PRIu64 ", the published tree size", pub);
		else if (r->a >= r->b)
			refuse(r, 400, "index must be < size");
		break;
	case PC_ROUTE_CONSISTENCY:
		if (r->b > pub)
			refuse(r, 400, "new must be <= %" PRIu64 ", the published tree size", pub);
		else if (r->a > r->b)
			refuse(r, 400, "old must be <= new");
		break;
	default:
		break;
	}
}

unsigned
pc_http_path_part(const char *path)
{
	if (strcmp(path, "/metrics") == 0)
		return PC_ACCESS_METRICS;
	if (strcmp(path, "/v1/attest") == 0)
		return PC_ACCESS_ATTEST;
	return PC_ACCESS_LOG;
}

static bool
rule_names(const struct pc_access_rule *r, const struct pc_http_peer *peer)
{
	if (r->by_key)
		return memcmp(r->spki_sha256, peer->spki_sha256, sizeof(r->spki_sha256)) == 0;
	return peer->subject != NULL && strcmp(r->subject, peer->subject) == 0;
}

enum pc_http_refusal
pc_http_access_decide(const struct pc_access *rules, const struct pc_http_peer *peer,
		      const char *path)
{
	unsigned part = pc_http_path_part(path);

	if (rules == NULL)
		return PC_REFUSED_NOTHING;
	switch (peer->state) {
	case PC_PEER_TRUSTED:
		break;
	case PC_PEER_EXPIRED:
		return PC_REFUSED_EXPIRED;
	case PC_PEER_UNTRUSTED:
		return PC_REFUSED_UNTRUSTED;
	case PC_PEER_NONE:
	case PC_PEER_ANYONE:
	default:
		/* a server that asks and was told nothing serves nothing */
		return PC_REFUSED_NO_CERTIFICATE;
	}
	/* a certificate may be named by its subject and by its key: it may
	 * read what any rule naming it gives, whatever their order */
	bool named = false;
	for (unsigned i = 0; i < rules->n && i < PC_MAX_ACCESS; i++) {
		if (!rule_names(&rules->r[i], peer))
			continue;
		if (rules->r[i].routes & part)
			return PC_REFUSED_NOTHING;
		named = true;
	}
	return named ? PC_REFUSED_NOT_ALLOWED : PC_REFUSED_UNKNOWN_CLIENT;
}

const char *
pc_http_refusal_name(enum pc_http_refusal r)
{
	static const char *const names[PC_REFUSED_COUNT] = {
		[PC_REFUSED_NOTHING] = "none",
		[PC_REFUSED_NO_CERTIFICATE] = "no_certificate",
		[PC_REFUSED_UNTRUSTED] = "untrusted_certificate",
		[PC_REFUSED_EXPIRED] = "expired_certificate",
		[PC_REFUSED_UNKNOWN_CLIENT] = "unknown_client",
		[PC_REFUSED_NOT_ALLOWED] = "not_allowed",
	};

	return (unsigned)r < PC_REFUSED_COUNT ? names[r] : "unknown";
}
