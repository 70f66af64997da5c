/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The verifier pull endpoint against a real ledger, fetched with libcurl:
 * every byte served is checked against what was appended, every proof is
 * verified against independently computed roots, and misbehaving clients
 * must not keep others from being served.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <curl/curl.h>
#include <sodium.h>

#include "http/http.h"
#include "base/keys.h"
#include "log/ledger.h"
#include "log/merkle.h"
#include "log/note.h"

#include "testutil.h"

#define ORIGIN "podcap/http-test"
#define NREC 1100                      /* more than one /v1/records page */
#define BIG_INDEX 3                    /* this record is larger than 64 KiB */
#define BIG_LEN (200 * 1024)
#define NIDLE 100

struct fixture {
	char dir[256];
	struct pc_ledger *ledger;
	struct pc_signer_key *key;
	struct pc_verifier_key vk;
	char vkline[256];
	struct pc_http *http;
	uint16_t port;
	uint8_t *rec[NREC + 10];
	size_t len[NREC + 10];
	uint8_t leaf[NREC + 10][PC_HASH_LEN];
	uint64_t nrec;
	uint64_t published;
	int metrics_calls;
};

static struct fixture *fx;

/* ---- helpers ---- */

struct reply {
	long status;
	char *body;
	size_t len;
	char ctype[128];
	char allow[128];
};

static size_t
on_body(char *p, size_t size, size_t n, void *cls)
{
	struct reply *r = cls;
	char *nb = realloc(r->body, r->len + size * n + 1);

	assert_non_null(nb);
	r->body = nb;
	memcpy(r->body + r->len, p, size * n);
	r->len += size * n;
	r->body[r->len] = '\0';
	return size * n;
}

static size_t
on_header(char *p, size_t size, size_t n, void *cls)
{
	struct reply *r = cls;
	size_t len = size * n;

	if (len > 6 && strncasecmp(p, "Allow:", 6) == 0)
		snprintf(r->allow, sizeof(r->allow), "%.*s", (int)(len - 6), p + 6);
	return len;
}

/* Fetches path with method (NULL: GET); returns 0, or -1 if no HTTP reply came. */
static int
fetch(const char *method, const char *path, struct reply *r)
{
	CURL *c = curl_easy_init();
	char url[256 * 1024];
	const char *ct = NULL;
	CURLcode rc;

	assert_non_null(c);
	memset(r, 0, sizeof(*r));
	snprintf(url, sizeof(url), "http://127.0.0.1:%u%s", (unsigned)fx->port, path);
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, r);
	curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(c, CURLOPT_HEADERDATA, r);
	curl_easy_setopt(c, CURLOPT_TIMEOUT, 5L);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	if (method != NULL && strcmp(method, "HEAD") == 0)
		curl_easy_setopt(c, CURLOPT_NOBODY, 1L);
	else if (method != NULL)
		curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
	rc = curl_easy_perform(c);
	if (rc == CURLE_OK) {
		curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &r->status);
		curl_easy_getinfo(c, CURLINFO_CONTENT_TYPE, &ct);
		if (ct != NULL)
			snprintf(r->ctype, sizeof(r->ctype), "%s", ct);
	}
	curl_easy_cleanup(c);
	if (r->body == NULL) {
		r->body = calloc(1, 1);
		assert_non_null(r->body);
	}
	return rc == CURLE_OK ? 0 : -1;
}

static struct reply
get(const char *fmt, ...)
{
	struct reply r;
	char path[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(path, sizeof(path), fmt, ap);
	va_end(ap);
	assert_int_equal(fetch(NULL, path, &r), 0);
	return r;
}

static void
expect_status(struct reply r, long status, const char *body_has)
{
	if (r.status != status)
		fail_msg("status %ld, want %ld; body: %s", r.status, status, r.body);
	if (body_has != NULL && strstr(r.body, body_has) == NULL)
		fail_msg("body \"%s\" lacks \"%s\"", r.body, body_has);
	free(r.body);
}

/* Root of the first n appended records, from the test's own copy. */
static void
root_of(uint64_t n, uint8_t out[PC_HASH_LEN])
{
	struct pc_merkle_range r;
	uint64_t i;

	pc_merkle_range_init(&r);
	for (i = 0; i < n; i++)
		pc_merkle_range_append(&r, fx->leaf[i]);
	pc_merkle_range_root(&r, out);
}

static void
append(size_t len)
{
	uint64_t i = fx->nrec;
	size_t k;

	fx->rec[i] = malloc(len);
	assert_non_null(fx->rec[i]);
	for (k = 0; k < len; k++)
		fx->rec[i][k] = (uint8_t)(i * 31 + k * 7);
	fx->len[i] = len;
	pc_merkle_leaf_hash(fx->rec[i], len, fx->leaf[i]);
	assert_int_equal(pc_ledger_append(fx->ledger, fx->rec[i], len), 0);
	fx->nrec++;
}

/* Publishes a checkpoint of the ledger, whose root must be that of the test's own copy. */
static void
publish(void)
{
	uint8_t root[PC_HASH_LEN], mine[PC_HASH_LEN];

	assert_int_equal(pc_ledger_size(fx->ledger), fx->nrec);
	pc_ledger_root(fx->ledger, root);
	root_of(fx->nrec, mine);
	assert_memory_equal(root, mine, PC_HASH_LEN);
	pc_test_publish(fx->ledger, fx->key);
	fx->published = fx->nrec;
}

static char *
metrics_cb(void *ctx, size_t *len)
{
	struct fixture *f = ctx;
	char *s = malloc(64);

	if (s == NULL)
		return NULL;
	f->metrics_calls++;
	*len = (size_t)snprintf(s, 64, "podcap_test_calls %d\n", f->metrics_calls);
	return s;
}

static int
setup(void **state)
{
	struct pc_http_ops ops;
	char path[300];
	struct pc_error err;

	(void)state;
	if (sodium_init() < 0 || curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
		return -1;
	fx = calloc(1, sizeof(*fx));
	if (fx == NULL)
		return -1;
	if (pc_test_shmdir(fx->dir, sizeof(fx->dir), "http") < 0)
		return -1;
	snprintf(path, sizeof(path), "%s/ledger", fx->dir);
	fx->ledger = pc_ledger_open(path, ORIGIN, &err);
	if (fx->ledger == NULL) {
		fprintf(stderr, "ledger: %s\n", err.msg);
		return -1;
	}
	fx->key = pc_test_key(ORIGIN, &fx->vk);
	if (pc_verifier_key_format(&fx->vk, fx->vkline, sizeof(fx->vkline)) != 0)
		return -1;
	memset(&ops, 0, sizeof(ops));
	ops.ledger = fx->ledger;
	ops.pubkey = fx->vkline;
	ops.metrics = metrics_cb;
	ops.ctx = fx;
	fx->http = pc_http_start("127.0.0.1:0", &ops, &err);
	if (fx->http == NULL) {
		fprintf(stderr, "http: %s\n", err.msg);
		return -1;
	}
	fx->port = pc_http_port(fx->http);
	return fx->port == 0 ? -1 : 0;
}

static int
teardown(void **state)
{
	uint64_t i;

	(void)state;
	pc_http_stop(fx->http);
	pc_ledger_close(fx->ledger);
	pc_signer_key_free(fx->key);
	for (i = 0; i < fx->nrec; i++)
		free(fx->rec[i]);
	pc_test_rm_rf(fx->dir);
	free(fx);
	curl_global_cleanup();
	return 0;
}

/* ---- tests, in order: they build on the ledger's state ---- */

static void
test_before_any_checkpoint(void **state)
{
	(void)state;
	expect_status(get("/v1/checkpoint"), 404, "no checkpoint yet");
	append(10);
	/* Appended but unpublished records are not served. */
	expect_status(get("/v1/records?from=0&count=1"), 400, "published tree size");
	expect_status(get("/v1/proof/inclusion?index=0&size=1"), 400, "published tree size");
}

static void
test_checkpoint_and_pubkey(void **state)
{
	struct pc_verifier_key vk;
	struct pc_checkpoint cp;
	struct reply r;
	uint8_t root[PC_HASH_LEN];
	struct pc_error why;
	size_t blen;
	uint64_t i;

	(void)state;
	for (i = fx->nrec; i < NREC; i++)
		append(i == BIG_INDEX ? BIG_LEN : 1 + (size_t)(i * 37 % 300));
	publish();
	/* More records after the checkpoint: durable, but not yet served. */
	append(50);
	append(60);

	r = get("/v1/checkpoint");
	assert_int_equal(r.status, 200);
	assert_string_equal(r.ctype, "text/plain; charset=utf-8");
	assert_int_equal(pc_note_verify(r.body, r.len, &fx->vk, &blen, &why), 0);
	assert_int_equal(pc_checkpoint_parse_body(r.body, blen, &cp, &why), 0);
	assert_string_equal(cp.origin, ORIGIN);
	assert_int_equal(cp.size, NREC);
	root_of(NREC, root);
	assert_memory_equal(cp.root, root, PC_HASH_LEN);
	free(r.body);

	r = get("/v1/pubkey");
	assert_int_equal(r.status, 200);
	assert_int_equal(r.len, strlen(fx->vkline) + 1);
	assert_memory_equal(r.body, fx->vkline, strlen(fx->vkline));
	assert_int_equal(r.body[r.len - 1], '\n');
	assert_int_equal(pc_verifier_key_parse(r.body, &vk, &why), 0);
	assert_memory_equal(vk.pk, fx->vk.pk, 32);
	free(r.body);
}

/* Checks a /v1/records body against records from..from+count-1. */
static void
check_records(struct reply r, uint64_t from, uint64_t count)
{
	size_t off = 0;
	uint64_t i;
	uint32_t n;

	assert_int_equal(r.status, 200);
	assert_string_equal(r.ctype, "application/octet-stream");
	for (i = from; i < from + count; i++) {
		assert_true(off + 4 <= r.len);
		n = (uint32_t)(uint8_t)r.body[off] << 24 | (uint32_t)(uint8_t)r.body[off + 1] << 16 |
		    (uint32_t)(uint8_t)r.body[off + 2] << 8 | (uint8_t)r.body[off + 3];
		off += 4;
		assert_int_equal(n, fx->len[i]);
		assert_true(off + n <= r.len);
		assert_memory_equal(r.body + off, fx->rec[i], n);
		off += n;
	}
	assert_int_equal(off, r.len);
	free(r.body);
}

static void
test_records(void **state)
{
	(void)state;
	check_records(get("/v1/records?from=0&count=1"), 0, 1);
	check_records(get("/v1/records?from=0&count=1000"), 0, 1000);
	check_records(get("/v1/records?from=1000&count=%d", NREC - 1000), 1000, NREC - 1000);
	check_records(get("/v1/records?from=%d&count=2", BIG_INDEX), BIG_INDEX, 2);
	check_records(get("/v1/records?from=%d&count=1", NREC - 1), NREC - 1, 1);
	/* The limits, each named. */
	expect_status(get("/v1/records?from=0&count=1001"), 400, "count must be 1..1000");
	expect_status(get("/v1/records?from=0&count=0"), 400, "count must be 1..1000");
	expect_status(get("/v1/records?from=%d&count=1", NREC), 400, "1100, the published tree size");
	expect_status(get("/v1/records?from=%d&count=2", NREC - 1), 400, "1100");
	expect_status(get("/v1/records?from=18446744073709551615&count=1000"), 400, "1100");
	expect_status(get("/v1/records?count=1"), 400, "missing query parameter from");
	expect_status(get("/v1/records?from=1"), 400, "missing query parameter count");
	expect_status(get("/v1/records?from=1&count=1&from=2"), 400, "given twice");
}

static void
test_bad_numbers(void **state)
{
	static const char *const bad[] = {
		"", "1e3", "-1", "+1", "01", "00", "%201", "1%20", "0x10", "1.0", "%31%00",
		"18446744073709551616", "99999999999999999999", "123456789012345678901",
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		expect_status(get("/v1/records?from=%s&count=1", bad[i]), 400, "from must be");
		expect_status(get("/v1/records?from=0&count=%s", bad[i]), 400, "count must be");
		expect_status(get("/v1/proof/inclusion?index=%s&size=5", bad[i]), 400, "index must be");
		expect_status(get("/v1/proof/consistency?old=1&new=%s", bad[i]), 400, "new must be");
	}
	/* A key without a value. */
	expect_status(get("/v1/records?from&count=1"), 400, "from must be");
}

/* Decodes a proof body; returns the number of hashes. */
static size_t
parse_proof(struct reply *r, uint8_t proof[][PC_HASH_LEN])
{
	const char *p = r->body, *nl;
	size_t n = 0, got;

	assert_int_equal(r->status, 200);
	assert_string_equal(r->ctype, "text/plain; charset=utf-8");
	while (*p != '\0') {
		nl = strchr(p, '\n');
		assert_non_null(nl);
		assert_true(n < PC_MAX_PROOF);
		assert_int_equal(sodium_base642bin(proof[n], PC_HASH_LEN, p, (size_t)(nl - p), NULL,
						   &got, NULL, sodium_base64_VARIANT_ORIGINAL), 0);
		assert_int_equal(got, PC_HASH_LEN);
		n++;
		p = nl + 1;
	}
	free(r->body);
	return n;
}

static void
test_inclusion_proofs(void **state)
{
	static const uint64_t sizes[] = { 1, 2, 3, 64, 65, 1023, NREC - 1, NREC };
	uint8_t proof[PC_MAX_PROOF][PC_HASH_LEN], root[PC_HASH_LEN];
	struct reply r;
	uint64_t i;
	size_t k, n;

	(void)state;
	for (k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
		root_of(sizes[k], root);
		for (i = 0; i < sizes[k]; i += 1 + sizes[k] / 40) {
			r = get("/v1/proof/inclusion?index=%llu&size=%llu", (unsigned long long)i,
				(unsigned long long)sizes[k]);
			n = parse_proof(&r, proof);
			assert_int_equal(pc_merkle_verify_inclusion(i, sizes[k], fx->leaf[i],
				(const uint8_t (*)[PC_HASH_LEN])proof, n, root), 0);
			/* Not a proof for the neighbouring leaf. */
			if (i + 1 < sizes[k])
				assert_int_equal(pc_merkle_verify_inclusion(i, sizes[k], fx->leaf[i + 1],
					(const uint8_t (*)[PC_HASH_LEN])proof, n, root), -1);
		}
	}
	/* The last leaf of the published tree. */
	root_of(NREC, root);
	r = get("/v1/proof/inclusion?index=%d&size=%d", NREC - 1, NREC);
	n = parse_proof(&r, proof);
	assert_int_equal(pc_merkle_verify_inclusion(NREC - 1, NREC, fx->leaf[NREC - 1],
		(const uint8_t (*)[PC_HASH_LEN])proof, n, root), 0);
	/* HEAD: same status, no body. */
	assert_int_equal(fetch("HEAD", "/v1/proof/inclusion?index=0&size=8", &r), 0);
	assert_int_equal(r.status, 200);
	assert_int_equal(r.len, 0);
	free(r.body);

	expect_status(get("/v1/proof/inclusion?index=0&size=%d", NREC + 1), 400,
		      "size must be <= 1100");
	expect_status(get("/v1/proof/inclusion?index=5&size=5"), 400, "index must be < size");
	expect_status(get("/v1/proof/inclusion?index=0&size=0"), 400, "index must be < size");
	expect_status(get("/v1/proof/inclusion?size=5"), 400, "missing query parameter index");
}

static void
test_consistency_proofs(void **state)
{
	static const uint64_t olds[] = { 0, 1, 2, 7, 8, 64, 100, 1024, NREC - 1, NREC };
	uint8_t proof[PC_MAX_PROOF][PC_HASH_LEN], r1[PC_HASH_LEN], r2[PC_HASH_LEN];
	struct reply r;
	uint64_t nw;
	size_t k, n;

	(void)state;
	for (k = 0; k < sizeof(olds) / sizeof(olds[0]); k++) {
		root_of(olds[k], r1);
		for (nw = olds[k]; nw <= NREC; nw += 1 + (NREC - olds[k]) / 7) {
			root_of(nw, r2);
			r = get("/v1/proof/consistency?old=%llu&new=%llu",
				(unsigned long long)olds[k], (unsigned long long)nw);
			n = parse_proof(&r, proof);
			assert_int_equal(pc_merkle_verify_consistency(olds[k], nw, r1, r2,
				(const uint8_t (*)[PC_HASH_LEN])proof, n), 0);
			if (olds[k] > 0 && nw > olds[k]) {
				r2[0] ^= 1;
				assert_int_equal(pc_merkle_verify_consistency(olds[k], nw, r1, r2,
					(const uint8_t (*)[PC_HASH_LEN])proof, n), -1);
			}
		}
	}
	expect_status(get("/v1/proof/consistency?old=1&new=%d", NREC + 1), 400,
		      "new must be <= 1100");
	expect_status(get("/v1/proof/consistency?old=9&new=8"), 400, "old must be <= new");
	expect_status(get("/v1/proof/consistency?new=8"), 400, "missing query parameter old");
}

static void
test_new_checkpoint_extends_the_old(void **state)
{
	uint8_t proof[PC_MAX_PROOF][PC_HASH_LEN], r1[PC_HASH_LEN];
	struct pc_checkpoint cp;
	struct reply r;
	struct pc_error why;
	size_t blen, n;

	(void)state;
	root_of(NREC, r1);
	publish();
	assert_int_equal(fx->published, NREC + 2);
	r = get("/v1/checkpoint");
	assert_int_equal(pc_note_verify(r.body, r.len, &fx->vk, &blen, &why), 0);
	assert_int_equal(pc_checkpoint_parse_body(r.body, blen, &cp, &why), 0);
	assert_int_equal(cp.size, NREC + 2);
	free(r.body);
	r = get("/v1/proof/consistency?old=%d&new=%d", NREC, NREC + 2);
	n = parse_proof(&r, proof);
	assert_int_equal(pc_merkle_verify_consistency(NREC, NREC + 2, r1, cp.root,
		(const uint8_t (*)[PC_HASH_LEN])proof, n), 0);
	check_records(get("/v1/records?from=%d&count=2", NREC), NREC, 2);
}

static void
test_methods_and_paths(void **state)
{
	static const char *const methods[] = { "POST", "PUT", "DELETE", "PATCH", "OPTIONS" };
	static const char *const unknown[] = {
		"/", "/v1", "/v1/", "/v1/checkpoint/", "/V1/checkpoint", "/v1/record",
		"/v1/proof", "/v1/proof/inclusion/", "/metrics/x", "/../v1/checkpoint.txt",
	};
	struct reply r;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(methods) / sizeof(methods[0]); i++) {
		assert_int_equal(fetch(methods[i], "/v1/checkpoint", &r), 0);
		assert_int_equal(r.status, 405);
		assert_non_null(strstr(r.allow, "GET"));
		assert_non_null(strstr(r.allow, "HEAD"));
		free(r.body);
	}
	for (i = 0; i < sizeof(unknown) / sizeof(unknown[0]); i++)
		expect_status(get("%s", unknown[i]), 404, NULL);
	assert_int_equal(fetch("HEAD", "/v1/checkpoint", &r), 0);
	assert_int_equal(r.status, 200);
	assert_int_equal(r.len, 0);
	free(r.body);
}

static void
test_metrics(void **state)
{
	struct reply r;
	int before = fx->metrics_calls;
	char want[64];

	(void)state;
	r = get("/metrics");
	assert_int_equal(r.status, 200);
	assert_string_equal(r.ctype, "text/plain; version=0.0.4; charset=utf-8");
	assert_int_equal(fx->metrics_calls, before + 1);
	snprintf(want, sizeof(want), "podcap_test_calls %d\n", before + 1);
	assert_memory_equal(r.body, want, strlen(want));
	/* then the endpoint's own refusals, every reason, at 0 on a server without rules */
	assert_non_null(strstr(r.body, "# TYPE podcap_http_refused_total counter\n"));
	assert_non_null(strstr(r.body, "podcap_http_refused_total{reason=\"no_certificate\"} 0\n"));
	assert_non_null(strstr(r.body, "podcap_http_refused_total{reason=\"not_allowed\"} 0\n"));
	/* and its unfinished TLS handshakes, declared on a server without TLS too */
	assert_non_null(
	    strstr(r.body, "# TYPE podcap_http_tls_handshake_failures_total counter\n"));
	assert_non_null(
	    strstr(r.body, "podcap_http_tls_handshake_failures_total{reason=\"timeout\"} 0\n"));
	assert_non_null(strstr(
	    r.body, "podcap_http_tls_handshake_failures_total{reason=\"refused_by_client\"} 0\n"));
	free(r.body);
}

/* A GET of /v1/records?from=0&count=1 padded to about `pad` bytes. */
static int
fetch_padded(size_t pad, struct reply *r)
{
	static const char prefix[] = "/v1/records?from=0&count=1&pad=";
	char *path = malloc(sizeof(prefix) + pad);
	int rc;

	assert_non_null(path);
	memcpy(path, prefix, sizeof(prefix) - 1);
	memset(path + sizeof(prefix) - 1, 'x', pad);
	path[sizeof(prefix) - 1 + pad] = '\0';
	rc = fetch(NULL, path, r);
	free(path);
	return rc;
}

static void
test_huge_url(void **state)
{
	struct reply r;

	(void)state;
	/* Request line and headers live in the connection's 16 KiB. */
	assert_int_equal(fetch_padded(100 * 1024, &r), 0);
	assert_true(r.status >= 400 && r.status < 500);
	free(r.body);
	assert_int_equal(fetch_padded(20 * 1024, &r), 0);
	assert_true(r.status >= 400 && r.status < 500);
	free(r.body);
	/* Smaller ones are served, and so is everyone after. */
	assert_int_equal(fetch_padded(4 * 1024, &r), 0);
	check_records(r, 0, 1);
	expect_status(get("/v1/pubkey"), 200, fx->vkline);
}

/* A TCP connection to the server from `src`, optionally with half a request. */
static int
idle_conn(const char *src, int partial)
{
	struct sockaddr_in sa;
	static const char half[] = "GET /v1/checkpoint HTTP/1.1\r\nHost: x\r\n";
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	assert_true(fd >= 0);
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	inet_pton(AF_INET, src, &sa.sin_addr);
	assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	inet_pton(AF_INET, "127.0.0.1", &sa.sin_addr);
	sa.sin_port = htons(fx->port);
	assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	/* The server may already have refused it (per-client limit); that is fine. */
	if (partial)
		(void)send(fd, half, sizeof(half) - 1, MSG_NOSIGNAL);
	return fd;
}

static double
now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The server closes an idle connection: recv sees EOF or a reset. */
static int
closed_by_server(int fd)
{
	struct timeval tv = { 0, 200 * 1000 };
	char buf[4096];
	ssize_t n;

	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	for (;;) {
		n = recv(fd, buf, sizeof(buf), 0);
		if (n > 0)
			continue;              /* e.g. a 408 before the close */
		return n == 0 || errno == ECONNRESET;
	}
}

static void
test_idle_connections(void **state)
{
	int fds[NIDLE], spread[NIDLE], i, watch;
	char src[32];
	struct reply r;
	double t0, t;

	(void)state;
	/* One client holding 100 idle connections (half with half a request). */
	watch = idle_conn("127.0.0.2", 0);
	t0 = now();
	for (i = 0; i < NIDLE; i++)
		fds[i] = idle_conn("127.0.0.2", i % 2);
	expect_status(get("/v1/pubkey"), 200, fx->vkline);
	r = get("/v1/records?from=0&count=1000");
	check_records(r, 0, 1000);
	/*
	 * Served before the first idle connection could have timed out, so
	 * not by a slot its timeout freed. No tighter bound: the machine may
	 * be loaded, or this a sanitizer build.
	 */
	assert_true(now() - t0 < PC_HTTP_IDLE_TIMEOUT);

	/* 100 clients with one idle connection each. */
	t = now();
	for (i = 0; i < NIDLE; i++) {
		snprintf(src, sizeof(src), "127.0.1.%d", i + 1);
		spread[i] = idle_conn(src, i % 2);
	}
	expect_status(get("/v1/checkpoint"), 200, ORIGIN);
	expect_status(get("/metrics"), 200, "podcap_test_calls");
	assert_true(now() - t < PC_HTTP_IDLE_TIMEOUT);
	for (i = 0; i < NIDLE; i++)
		close(spread[i]);
	for (i = 0; i < NIDLE; i++)
		close(fds[i]);

	/* And an idle connection does not live past the idle timeout. */
	t = now() - t0;
	if (t < PC_HTTP_IDLE_TIMEOUT + 2)
		usleep((useconds_t)((PC_HTTP_IDLE_TIMEOUT + 2 - t) * 1e6));
	assert_true(closed_by_server(watch));
	close(watch);
	expect_status(get("/v1/pubkey"), 200, NULL);
}

/* Sends a whole request on fd; 1 if a 200 comes back, 0 if the server hung up. */
static int
served(int fd)
{
	static const char req[] = "GET /v1/pubkey HTTP/1.1\r\nHost: x\r\n\r\n";
	struct timeval tv = { 3, 0 };
	char buf[512];
	ssize_t n;

	if (send(fd, req, sizeof(req) - 1, MSG_NOSIGNAL) != (ssize_t)sizeof(req) - 1)
		return 0;
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	n = recv(fd, buf, sizeof(buf) - 1, 0);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	return strncmp(buf, "HTTP/1.1 200", 12) == 0;
}

static void
test_per_client_limit(void **state)
{
	int fds[3 * PC_HTTP_MAX_PER_CLIENT], i, ok = 0;

	(void)state;
	/* All open at once: only PC_HTTP_MAX_PER_CLIENT of them are kept and served. */
	for (i = 0; i < 3 * PC_HTTP_MAX_PER_CLIENT; i++)
		fds[i] = idle_conn("127.0.0.3", 0);
	usleep(200 * 1000);
	for (i = 0; i < 3 * PC_HTTP_MAX_PER_CLIENT; i++)
		ok += served(fds[i]);
	assert_int_equal(ok, PC_HTTP_MAX_PER_CLIENT);
	for (i = 0; i < 3 * PC_HTTP_MAX_PER_CLIENT; i++)
		close(fds[i]);
	expect_status(get("/v1/pubkey"), 200, NULL);
}

static void
test_start_errors(void **state)
{
	static const char *const bad[] = {
		"", "127.0.0.1", "127.0.0.1:", "127.0.0.1:65536", "127.0.0.1:-1", "127.0.0.1:http",
		"localhost:80", "[::1]", "[::1]80", "::1:80", "[127.0.0.1]:80", "[127.0.0.1:80", "1.2.3:80",
	};
	struct pc_http_ops ops;
	struct pc_http *h;
	char addr[64];
	struct pc_error err;
	size_t i;

	(void)state;
	memset(&ops, 0, sizeof(ops));
	ops.ledger = fx->ledger;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err.msg[0] = '\0';
		h = pc_http_start(bad[i], &ops, &err);
		if (h != NULL)
			fail_msg("listened on \"%s\"", bad[i]);
		assert_non_null(strstr(err.msg, "bad listen address"));
	}
	/* The port in use. */
	snprintf(addr, sizeof(addr), "127.0.0.1:%u", (unsigned)fx->port);
	assert_null(pc_http_start(addr, &ops, &err));
	assert_non_null(strstr(err.msg, "cannot listen"));
	/* IPv6 loopback, if this host has it; no pubkey and no metrics: 404s. */
	h = pc_http_start("[::1]:0", &ops, &err);
	if (h != NULL) {
		assert_true(pc_http_port(h) != 0);
		pc_http_stop(h);
	}
	ops.ledger = NULL;
	assert_null(pc_http_start("127.0.0.1:0", &ops, &err));
}

static void
test_no_pubkey_no_metrics(void **state)
{
	struct pc_http_ops ops;
	struct pc_http *h;
	uint16_t saved = fx->port;
	struct pc_error err;

	(void)state;
	memset(&ops, 0, sizeof(ops));
	ops.ledger = fx->ledger;
	h = pc_http_start("127.0.0.1:0", &ops, &err);
	assert_non_null(h);
	fx->port = pc_http_port(h);
	expect_status(get("/v1/pubkey"), 404, NULL);
	expect_status(get("/metrics"), 404, NULL);
	expect_status(get("/v1/records?from=0&count=1"), 200, NULL);
	pc_http_stop(h);
	fx->port = saved;
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_before_any_checkpoint),
		cmocka_unit_test(test_checkpoint_and_pubkey),
		cmocka_unit_test(test_records),
		cmocka_unit_test(test_bad_numbers),
		cmocka_unit_test(test_inclusion_proofs),
		cmocka_unit_test(test_consistency_proofs),
		cmocka_unit_test(test_new_checkpoint_extends_the_old),
		cmocka_unit_test(test_methods_and_paths),
		cmocka_unit_test(test_metrics),
		cmocka_unit_test(test_huge_url),
		cmocka_unit_test(test_idle_connections),
		cmocka_unit_test(test_per_client_limit),
		cmocka_unit_test(test_start_errors),
		cmocka_unit_test(test_no_pubkey_no_metrics),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
