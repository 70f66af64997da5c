/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What a request to the verifier endpoint asks for, without a server:
 * methods, paths, every way a query number can be malformed, and the
 * ranges checked against the published tree size.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "podmap/config.h"
#include "http/http.h"
#include "http/request.h"

/*
 * Parses "METHOD PATH?k=v&k2&..." the way the server sees it: the query
 * split at '&', each argument at its first '=' (none: no value).
 */
static struct pc_http_request
req(const char *line, uint64_t published)
{
	struct pc_http_request r;
	char buf[512], method[16], *path, *query, *arg, *save = NULL;

	assert_true(strlen(line) < sizeof(buf));
	strcpy(buf, line);
	path = strchr(buf, ' ');
	assert_non_null(path);
	*path++ = '\0';
	strcpy(method, buf);
	query = strchr(path, '?');
	if (query != NULL)
		*query++ = '\0';
	pc_http_request_init(&r, method, path);
	for (arg = query ? strtok_r(query, "&", &save) : NULL; arg != NULL;
	     arg = strtok_r(NULL, "&", &save)) {
		char *eq = strchr(arg, '=');

		if (eq != NULL)
			*eq++ = '\0';
		pc_http_request_arg(&r, arg, eq, eq ? strlen(eq) : 0);
	}
	pc_http_request_finish(&r, published);
	return r;
}

static void
expect_ok(const char *line, uint64_t published, enum pc_http_route route, uint64_t a,
	  uint64_t b)
{
	struct pc_http_request r = req(line, published);

	if (r.status != 200)
		fail_msg("%s: %u %s", line, r.status, r.reason);
	assert_int_equal(r.route, route);
	assert_int_equal(r.a, a);
	assert_int_equal(r.b, b);
}

static void
expect_refused(const char *line, uint64_t published, unsigned status, const char *reason)
{
	struct pc_http_request r = req(line, published);

	if (r.status != status || strcmp(r.reason, reason) != 0)
		fail_msg("%s: got %u \"%s\", want %u \"%s\"", line, r.status, r.reason, status,
			 reason);
}

static void
test_methods_and_paths(void **state)
{
	(void)state;
	expect_ok("GET /v1/checkpoint", 0, PC_ROUTE_CHECKPOINT, 0, 0);
	expect_ok("HEAD /v1/checkpoint", 0, PC_ROUTE_CHECKPOINT, 0, 0);
	expect_ok("GET /v1/pubkey?from=x", 0, PC_ROUTE_PUBKEY, 0, 0);
	expect_ok("GET /metrics", 0, PC_ROUTE_METRICS, 0, 0);
	expect_refused("POST /v1/checkpoint", 5, 405, "only GET and HEAD are allowed");
	expect_refused("get /v1/checkpoint", 5, 405, "only GET and HEAD are allowed");
	expect_refused("DELETE /nowhere", 5, 405, "only GET and HEAD are allowed");
	expect_refused("GET /v1/checkpoint/", 5, 404, "not found");
	expect_refused("GET /V1/checkpoint", 5, 404, "not found");
	expect_refused("GET /", 5, 404, "not found");
	expect_refused("GET /v1/proof", 5, 404, "not found");
}

static void
test_records(void **state)
{
	(void)state;
	expect_ok("GET /v1/records?from=0&count=1", 1, PC_ROUTE_RECORDS, 0, 1);
	expect_ok("GET /v1/records?count=1000&from=5", 1005, PC_ROUTE_RECORDS, 5, 1000);
	expect_ok("GET /v1/records?from=4&count=1&other=x&other=y", 5, PC_ROUTE_RECORDS, 4, 1);
	expect_refused("GET /v1/records?from=0&count=0", 5, 400, "count must be 1..1000");
	expect_refused("GET /v1/records?from=0&count=1001", 5000, 400, "count must be 1..1000");
	expect_refused("GET /v1/records?from=5&count=1", 5, 400,
		       "from+count must be <= 5, the published tree size");
	expect_refused("GET /v1/records?from=0&count=1", 0, 400,
		       "from+count must be <= 0, the published tree size");
	/* from + count would wrap around */
	expect_refused("GET /v1/records?from=18446744073709551615&count=2", UINT64_MAX, 400,
		       "from+count must be <= 18446744073709551615, the published tree size");
	expect_ok("GET /v1/records?from=18446744073709551614&count=1", UINT64_MAX,
		  PC_ROUTE_RECORDS, UINT64_MAX - 1, 1);
}

static void
test_numbers(void **state)
{
	static const char *bad[] = {
		"", "01", "00", "-1", "+1", "1a", " 1", "1 ", "0x10", "1e3", "%31",
		"18446744073709551616", "99999999999999999999", "184467440737095516150",
	};
	struct pc_http_request r;
	char line[128];
	size_t i;
	uint64_t v;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(line, sizeof(line), "GET /v1/records?from=%s&count=1", bad[i]);
		expect_refused(line, 10, 400, "from must be a decimal number 0..18446744073709551615");
	}
	expect_refused("GET /v1/records?from&count=1", 10, 400,
		       "from must be a decimal number 0..18446744073709551615");
	expect_refused("GET /v1/proof/consistency?old=1&new=", 10, 400,
		       "new must be a decimal number 0..18446744073709551615");

	/* the server hands over decoded values with their length: "%00" is a NUL byte */
	pc_http_request_init(&r, "GET", "/v1/records");
	pc_http_request_arg(&r, "from", "1\0", 2);
	pc_http_request_arg(&r, "count", "1", 1);
	pc_http_request_finish(&r, 10);
	assert_int_equal(r.status, 400);

	assert_int_equal(pc_http_parse_u64("18446744073709551615", 20, &v), 0);
	assert_true(v == UINT64_MAX);
	assert_int_equal(pc_http_parse_u64("0", 1, &v), 0);
	assert_true(v == 0);
	assert_int_equal(pc_http_parse_u64("18446744073709551616", 20, &v), -1);
	assert_int_equal(pc_http_parse_u64(NULL, 0, &v), -1);
}

static void
test_missing_and_repeated(void **state)
{
	(void)state;
	expect_refused("GET /v1/records", 10, 400, "missing query parameter from");
	expect_refused("GET /v1/records?from=1", 10, 400, "missing query parameter count");
	/* the first parameter's problem is the one reported */
	expect_refused("GET /v1/records?count=x", 10, 400, "missing query parameter from");
	expect_refused("GET /v1/records?from=1&from=1&count=1", 10, 400,
		       "query parameter from given twice");
	expect_refused("GET /v1/records?from=x&count=1&count=1", 10, 400,
		       "from must be a decimal number 0..18446744073709551615");
	/* repeated, even when the last is well-formed */
	expect_refused("GET /v1/proof/inclusion?index=x&index=1&size=2", 10, 400,
		       "query parameter index given twice");
	/* names are matched exactly */
	expect_refused("GET /v1/records?From=1&count=1", 10, 400, "missing query parameter from");
	expect_refused("GET /v1/records?from =1&count=1", 10, 400, "missing query parameter from");
}

static void
test_proofs(void **state)
{
	(void)state;
	expect_ok("GET /v1/proof/inclusion?index=0&size=1", 1, PC_ROUTE_INCLUSION, 0, 1);
	expect_ok("HEAD /v1/proof/inclusion?size=7&index=6", 9, PC_ROUTE_INCLUSION, 6, 7);
	expect_refused("GET /v1/proof/inclusion?index=7&size=7", 9, 400, "index must be < size");
	expect_refused("GET /v1/proof/inclusion?index=0&size=10", 9, 400,
		       "size must be <= 9, the published tree size");
	expect_refused("GET /v1/proof/inclusion?index=0&size=0", 0, 400, "index must be < size");

	expect_ok("GET /v1/proof/consistency?old=0&new=0", 0, PC_ROUTE_CONSISTENCY, 0, 0);
	expect_ok("GET /v1/proof/consistency?old=3&new=3", 9, PC_ROUTE_CONSISTENCY, 3, 3);
	expect_ok("GET /v1/proof/consistency?new=9&old=2", 9, PC_ROUTE_CONSISTENCY, 2, 9);
	expect_refused("GET /v1/proof/consistency?old=4&new=3", 9, 400, "old must be <= new");
	expect_refused("GET /v1/proof/consistency?old=1&new=10", 9, 400,
		       "new must be <= 9, the published tree size");
	/* the other route's names are not this one's */
	expect_refused("GET /v1/proof/consistency?index=0&size=1", 9, 400,
		       "missing query parameter old");
}

static const struct pc_access *
rules(void)
{
	static struct pc_access a;

	memset(&a, 0, sizeof(a));
	a.n = 3;
	snprintf(a.r[0].subject, sizeof(a.r[0].subject), "CN=verifier-1,O=Site");
	a.r[0].routes = PC_ACCESS_LOG;
	a.r[1].by_key = true;
	memset(a.r[1].spki_sha256, 0xab, 32);
	a.r[1].routes = PC_ACCESS_METRICS;
	snprintf(a.r[2].subject, sizeof(a.r[2].subject), "CN=inspector,O=Site");
	a.r[2].routes = PC_ACCESS_LOG | PC_ACCESS_ATTEST;
	return &a;
}

static struct pc_http_peer
trusted(const char *subject, uint8_t key_byte)
{
	struct pc_http_peer p = { PC_PEER_TRUSTED, subject, { 0 } };

	memset(p.spki_sha256, key_byte, sizeof(p.spki_sha256));
	return p;
}

/* Each part of the endpoint, and only the part, given to the client a rule names. */
static void
test_access_by_route(void **state)
{
	struct pc_http_peer v = trusted("CN=verifier-1,O=Site", 0);
	struct pc_http_peer prom = trusted("CN=prometheus,O=Site", 0xab);
	struct pc_http_peer insp = trusted("CN=inspector,O=Site", 1);
	static const char *const log_paths[] = {
		"/v1/checkpoint", "/v1/records", "/v1/proof/inclusion", "/v1/pubkey", "/checkpoint",
		"/tile/0/000",    "/nowhere",
	};

	(void)state;
	for (size_t i = 0; i < sizeof(log_paths) / sizeof(log_paths[0]); i++) {
		assert_int_equal(pc_http_access_decide(rules(), &v, log_paths[i]),
				 PC_REFUSED_NOTHING);
		assert_int_equal(pc_http_access_decide(rules(), &prom, log_paths[i]),
				 PC_REFUSED_NOT_ALLOWED);
	}
	assert_int_equal(pc_http_access_decide(rules(), &v, "/metrics"), PC_REFUSED_NOT_ALLOWED);
	assert_int_equal(pc_http_access_decide(rules(), &v, "/v1/attest"), PC_REFUSED_NOT_ALLOWED);
	/* the Prometheus rule names a key: any subject with that key */
	assert_int_equal(pc_http_access_decide(rules(), &prom, "/metrics"), PC_REFUSED_NOTHING);
	assert_int_equal(pc_http_access_decide(rules(), &prom, "/v1/attest"),
			 PC_REFUSED_NOT_ALLOWED);
	assert_int_equal(pc_http_access_decide(rules(), &insp, "/v1/attest"), PC_REFUSED_NOTHING);
	assert_int_equal(pc_http_access_decide(rules(), &insp, "/metrics"), PC_REFUSED_NOT_ALLOWED);
}

/* A certificate named by a subject rule and by a key rule may read what
 * either gives, in whichever order the rules come. */
static void
test_access_named_twice(void **state)
{
	struct pc_http_peer both = trusted("CN=verifier-1,O=Site", 0xab);

	(void)state;
	assert_int_equal(pc_http_access_decide(rules(), &both, "/v1/checkpoint"),
			 PC_REFUSED_NOTHING);
	assert_int_equal(pc_http_access_decide(rules(), &both, "/metrics"), PC_REFUSED_NOTHING);
	assert_int_equal(pc_http_access_decide(rules(), &both, "/v1/attest"),
			 PC_REFUSED_NOT_ALLOWED);
}

/* Subjects match whole and exactly; a key is all 32 bytes. */
static void
test_access_identities(void **state)
{
	struct pc_http_peer p;
	static const char *const near[] = {
		"CN=verifier-1,O=Site ",     "cn=verifier-1,O=Site", "CN=verifier-1",
		"CN=verifier-1,O=Site,OU=x", "O=Site,CN=verifier-1", "",
	};

	(void)state;
	for (size_t i = 0; i < sizeof(near) / sizeof(near[0]); i++) {
		p = trusted(near[i], 0);
		assert_int_equal(pc_http_access_decide(rules(), &p, "/v1/checkpoint"),
				 PC_REFUSED_UNKNOWN_CLIENT);
	}
	p = trusted(NULL, 0xab);
	p.spki_sha256[31] = 0xaa;
	assert_int_equal(pc_http_access_decide(rules(), &p, "/metrics"), PC_REFUSED_UNKNOWN_CLIENT);
	p.spki_sha256[31] = 0xab;
	assert_int_equal(pc_http_access_decide(rules(), &p, "/metrics"), PC_REFUSED_NOTHING);
}

/* What the TLS layer learned decides before any rule: a name is taken only from a valid chain. */
static void
test_access_peer_states(void **state)
{
	struct pc_http_peer p = trusted("CN=verifier-1,O=Site", 0xab);

	(void)state;
	p.state = PC_PEER_NONE;
	assert_int_equal(pc_http_access_decide(rules(), &p, "/v1/checkpoint"),
			 PC_REFUSED_NO_CERTIFICATE);
	p.state = PC_PEER_UNTRUSTED;
	assert_int_equal(pc_http_access_decide(rules(), &p, "/v1/checkpoint"),
			 PC_REFUSED_UNTRUSTED);
	p.state = PC_PEER_EXPIRED;
	assert_int_equal(pc_http_access_decide(rules(), &p, "/metrics"), PC_REFUSED_EXPIRED);
	/* a server with rules never serves a client it did not ask */
	p.state = PC_PEER_ANYONE;
	assert_int_equal(pc_http_access_decide(rules(), &p, "/metrics"), PC_REFUSED_NO_CERTIFICATE);
	/* without rules, every client reads all */
	p.state = PC_PEER_ANYONE;
	assert_int_equal(pc_http_access_decide(NULL, &p, "/metrics"), PC_REFUSED_NOTHING);
	assert_string_equal(pc_http_refusal_name(PC_REFUSED_EXPIRED), "expired_certificate");
	assert_string_equal(pc_http_refusal_name(PC_REFUSED_NO_CERTIFICATE), "no_certificate");
	assert_string_equal(pc_http_refusal_name(PC_REFUSED_COUNT), "unknown");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_methods_and_paths),
		cmocka_unit_test(test_records),
		cmocka_unit_test(test_numbers),
		cmocka_unit_test(test_missing_and_repeated),
		cmocka_unit_test(test_proofs),
		cmocka_unit_test(test_access_by_route),
		cmocka_unit_test(test_access_named_twice),
		cmocka_unit_test(test_access_identities),
		cmocka_unit_test(test_access_peer_states),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
