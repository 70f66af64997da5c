/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target for the verifier endpoint's request handling
 * (src/http/request.h) and the proofs it then serves.
 *
 * Input: a byte choosing the published tree size (bit 7 set: the next 8
 * bytes, big-endian, any size; else the next byte too, a size below 1024),
 * then a request line "METHOD PATH?QUERY". The query is split at '&' and
 * each argument at its first '=', and keys and values are percent-decoded
 * with libmicrohttpd's own MHD_http_unescape, as the server does, each
 * value in a buffer of exactly its length.
 *
 * Besides memory errors and undefined behaviour, it aborts when a request
 * is accepted outside the guarantees of pc_http_request_finish(), or is
 * refused without a one-line reason; and for trees small enough to build
 * here, when the proof the endpoint would serve does not verify.
 *
 * The access decision (pc_http_access_decide) is run on the same path,
 * with the path also as the client's subject and the input's last byte
 * choosing what the TLS layer learned of the client: it aborts when a
 * request is served to a client a rule does not give that part of the
 * endpoint, or refused to one it does.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <microhttpd.h>

#include "podmap/config.h"
#include "http/http.h"
#include "http/request.h"
#include "log/merkle.h"

#define SMALL_TREE 1024

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static uint8_t leaves[SMALL_TREE][PC_HASH_LEN];

static int
leaf_of(void *ctx, uint64_t i, uint8_t out[PC_HASH_LEN])
{
	(void)ctx;
	if (i >= SMALL_TREE)
		abort();
	memcpy(out, leaves[i], PC_HASH_LEN);
	return 0;
}

static void
init(void)
{
	static int done;
	uint8_t b[8];

	if (done)
		return;
	for (unsigned i = 0; i < SMALL_TREE; i++) {
		for (int k = 0; k < 8; k++)
			b[k] = (uint8_t)((uint64_t)i >> (8 * k));
		pc_merkle_leaf_hash(b, sizeof(b), leaves[i]);
	}
	done = 1;
}

/* A NUL-terminated, percent-decoded copy of s[0..n). */
static char *
decoded(const uint8_t *s, size_t n, size_t *len)
{
	char *p = malloc(n + 1);

	if (p == NULL)
		abort();
	memcpy(p, s, n);
	p[n] = '\0';
	*len = MHD_http_unescape(p);
	return p;
}

static void
add_arg(struct pc_http_request *r, const uint8_t *s, size_t n)
{
	const uint8_t *eq = memchr(s, '=', n);
	char *key, *val, *exact;
	size_t klen, vlen;

	key = decoded(s, eq ? (size_t)(eq - s) : n, &klen);
	if (eq == NULL) {
		pc_http_request_arg(r, key, NULL, 0);
		free(key);
		return;
	}
	val = decoded(eq + 1, n - (size_t)(eq + 1 - s), &vlen);
	/* exactly vlen bytes: the parser must not read past the length it is given */
	exact = malloc(vlen ? vlen : 1);
	if (exact == NULL)
		abort();
	memcpy(exact, val, vlen);
	pc_http_request_arg(r, key, exact, vlen);
	free(exact);
	free(val);
	free(key);
}

static void
check_contract(const struct pc_http_request *r, uint64_t pub, int known_method)
{
	switch (r->status) {
	case 200:
		break;
	case 405:
		if (known_method)
			abort();
		/* fall through */
	case 400:
	case 404:
		if (r->reason[0] == '\0' || memchr(r->reason, '\0', sizeof(r->reason)) == NULL ||
		    strchr(r->reason, '\n') != NULL)
			abort();
		return;
	default:
		abort();
	}
	if (!known_method)
		abort();
	switch (r->route) {
	case PC_ROUTE_RECORDS:
		if (r->b < 1 || r->b > PC_HTTP_MAX_RECORDS || r->a > pub || r->b > pub - r->a)
			abort();
		break;
	case PC_ROUTE_INCLUSION:
		if (r->a >= r->b || r->b > pub)
			abort();
		break;
	case PC_ROUTE_CONSISTENCY:
		if (r->a > r->b || r->b > pub)
			abort();
		break;
	case PC_ROUTE_NONE:
		abort();
	default:
		break;
	}
}

/* The proof the server would send for r verifies against the tree's roots. */
static void
check_proof(const struct pc_http_request *r)
{
	uint8_t proof[PC_MAX_PROOF][PC_HASH_LEN], root[PC_HASH_LEN], old[PC_HASH_LEN];
	const uint8_t (*p)[PC_HASH_LEN] = (const uint8_t (*)[PC_HASH_LEN])proof;
	size_t n;

	if (r->route == PC_ROUTE_INCLUSION) {
		if (pc_merkle_inclusion_proof(leaf_of, NULL, r->a, r->b, proof, &n) != 0 ||
		    pc_merkle_root(leaf_of, NULL, r->b, root) != 0 ||
		    pc_merkle_verify_inclusion(r->a, r->b, leaves[r->a], p, n, root) != 0)
			abort();
	} else if (r->route == PC_ROUTE_CONSISTENCY) {
		if (pc_merkle_consistency_proof(leaf_of, NULL, r->a, r->b, proof, &n) != 0 ||
		    pc_merkle_root(leaf_of, NULL, r->a, old) != 0 ||
		    pc_merkle_root(leaf_of, NULL, r->b, root) != 0)
			abort();
		/* a tree extends the empty tree and itself with nothing to prove */
		if (r->a == 0 || r->a == r->b) {
			if (n != 0)
				abort();
		} else if (pc_merkle_verify_consistency(r->a, r->b, old, root, p, n) != 0) {
			abort();
		}
	}
}

#define SUBJECT "CN=verifier-1,O=Site"

/* The rules: the log to a subject, /metrics to a key of 32 bytes 0xab. */
static const struct pc_access *
access_rules(void)
{
	static struct pc_access a;

	if (a.n == 0) {
		memcpy(a.r[0].subject, SUBJECT, sizeof(SUBJECT));
		a.r[0].routes = PC_ACCESS_LOG;
		a.r[1].by_key = true;
		memset(a.r[1].spki_sha256, 0xab, sizeof(a.r[1].spki_sha256));
		a.r[1].routes = PC_ACCESS_METRICS;
		a.n = 2;
	}
	return &a;
}

static void
check_access(const char *path, uint8_t how)
{
	struct pc_http_peer p = { (enum pc_http_peer_state)(how % 5), path, { 0 } };
	unsigned part = pc_http_path_part(path);

	memset(p.spki_sha256, how & 0x80 ? 0xab : 0x00, sizeof(p.spki_sha256));
	if (how & 0x40)
		p.subject = SUBJECT;
	if (part != PC_ACCESS_LOG && part != PC_ACCESS_METRICS && part != PC_ACCESS_ATTEST)
		abort();
	enum pc_http_refusal r = pc_http_access_decide(access_rules(), &p, path);
	bool named_log = strcmp(p.subject, SUBJECT) == 0 && part == PC_ACCESS_LOG;
	bool named_metrics = (how & 0x80) && part == PC_ACCESS_METRICS;
	bool trusted = p.state == PC_PEER_TRUSTED;

	if ((unsigned)r >= PC_REFUSED_COUNT ||
	    (r == PC_REFUSED_NOTHING) != (trusted && (named_log || named_metrics)) ||
	    strcmp(pc_http_refusal_name(r), "unknown") == 0 ||
	    pc_http_access_decide(NULL, &p, path) != PC_REFUSED_NOTHING)
		abort();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *line, *end, *sp, *q, *amp;
	struct pc_http_request r;
	char *method, *path;
	size_t mlen, plen;
	uint64_t pub = 0;
	int known;

	init();
	if (size < 2)
		return 0;
	if (data[0] & 0x80) {
		if (size < 9)
			return 0;
		for (int i = 1; i <= 8; i++)
			pub = pub << 8 | data[i];
		line = data + 9;
	} else {
		pub = ((uint64_t)(data[0] & 0x7f) << 8 | data[1]) % SMALL_TREE;
		line = data + 2;
	}
	end = data + size;

	sp = memchr(line, ' ', (size_t)(end - line));
	if (sp == NULL)
		return 0;
	/* the server gets no decoded method: it is a token of the request line */
	method = malloc((size_t)(sp - line) + 1);
	if (method == NULL)
		abort();
	memcpy(method, line, (size_t)(sp - line));
	method[sp - line] = '\0';
	mlen = strlen(method);
	known = (mlen == 3 && memcmp(method, "GET", 3) == 0) ||
		(mlen == 4 && memcmp(method, "HEAD", 4) == 0);

	line = sp + 1;
	q = memchr(line, '?', (size_t)(end - line));
	path = decoded(line, (size_t)((q ? q : end) - line), &plen);
	pc_http_request_init(&r, method, path);
	for (line = q ? q + 1 : end; line < end;) {
		amp = memchr(line, '&', (size_t)(end - line));
		if (amp == NULL)
			amp = end;
		if (amp > line)
			add_arg(&r, line, (size_t)(amp - line));
		line = amp == end ? end : amp + 1;
	}
	pc_http_request_finish(&r, pub);
	check_contract(&r, pub, known);
	if (r.status == 200 && pub <= SMALL_TREE)
		check_proof(&r);
	check_access(path, data[size - 1]);
	free(path);
	free(method);
	return 0;
}
