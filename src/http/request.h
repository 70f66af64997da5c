/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What a request to the verifier endpoint asks for: the method, path and
 * query arguments (as libmicrohttpd hands them over, already decoded) are
 * turned into a route and its two numbers, or into the error status and
 * the one-line reason to reply with. Pure: no I/O, no allocation, so it
 * is tested and fuzzed without a server (see src/http/http.h for the
 * endpoints).
 *
 *	pc_http_request_init(&r, method, path);
 *	for each query argument:  pc_http_request_arg(&r, key, value, value_len);
 *	pc_http_request_finish(&r, published_tree_size);
 *	if (r.status != 200) reply r.status with r.reason
 */
#ifndef PODCAP_HTTP_REQUEST_H
#define PODCAP_HTTP_REQUEST_H

#include <stddef.h>
#include <stdint.h>

enum pc_http_route {
	PC_ROUTE_NONE = 0,     /* no such path (404) or method (405) */
	PC_ROUTE_CHECKPOINT,   /* /v1/checkpoint */
	PC_ROUTE_RECORDS,      /* /v1/records?from=A&count=B */
	PC_ROUTE_INCLUSION,    /* /v1/proof/inclusion?index=A&size=B */
	PC_ROUTE_CONSISTENCY,  /* /v1/proof/consistency?old=A&new=B */
	PC_ROUTE_PUBKEY,       /* /v1/pubkey */
	PC_ROUTE_METRICS,      /* /metrics */
	PC_ROUTE_ATTEST,       /* /v1/attest: the newest ATTEST record (src/http/attest.c) */
};

#define PC_HTTP_REASON_LEN 160

struct pc_http_request {
	enum pc_http_route route;
	unsigned status;          /* 200, or 400, 404, 405 to reply with */
	char reason[PC_HTTP_REASON_LEN]; /* when status != 200: one line, no newline */
	uint64_t a, b;            /* the route's two numbers, valid when status == 200 */
	/* the two query arguments the route takes: how often given, and the last value */
	const char *name[2];
	unsigned seen[2];
	int valid[2];
	uint64_t val[2];
};

/* method and path as in the request line (path without the query string). */
void pc_http_request_init(struct pc_http_request *r, const char *method, const char *path);
/* One query argument: key NUL-terminated; value NULL when it had no '='. */
void pc_http_request_arg(struct pc_http_request *r, const char *key, const char *value,
			 size_t value_len);
/*
 * Checks the arguments and, for records and proofs, the range against the
 * published tree size. After it, status 200 guarantees for records
 * 1 <= b <= PC_HTTP_MAX_RECORDS and a + b <= published; for an inclusion
 * proof a < b <= published; for a consistency proof a <= b <= published.
 */
void pc_http_request_finish(struct pc_http_request *r, uint64_t published);

/*
 * Who may read what (appliance.access). The TLS layer (src/http/tls.c)
 * says what it learned of the client; the decision is made here, pure.
 */
enum pc_http_peer_state {
	PC_PEER_ANYONE = 0, /* clients are not asked for a certificate: all may read all */
	PC_PEER_NONE,       /* asked, and none was given */
	PC_PEER_UNTRUSTED,  /* one that does not chain to the client CA, or not for clients */
	PC_PEER_EXPIRED,    /* one of the client CA's, expired or not yet valid */
	PC_PEER_TRUSTED,    /* one of the client CA's, valid now */
};

struct pc_http_peer {
	enum pc_http_peer_state state;
	const char *subject;     /* PC_PEER_TRUSTED: RFC 4514, as GnuTLS prints it */
	uint8_t spki_sha256[32]; /* PC_PEER_TRUSTED: of its SubjectPublicKeyInfo */
};

/* Why a request was refused with 403; each counted in /metrics. */
enum pc_http_refusal {
	PC_REFUSED_NOTHING = 0, /* allowed */
	PC_REFUSED_NO_CERTIFICATE,
	PC_REFUSED_UNTRUSTED,
	PC_REFUSED_EXPIRED,
	PC_REFUSED_UNKNOWN_CLIENT, /* trusted, but named by no rule */
	PC_REFUSED_NOT_ALLOWED,    /* a client of the rules, not given this part */
	PC_REFUSED_COUNT,
};

struct pc_access;
/*
 * Which part of the endpoint a path is (PC_ACCESS_* of podmap/config.h):
 * /metrics, /v1/attest, and the log for everything else, so that a client
 * that may read none of the log learns nothing of which paths exist.
 */
unsigned pc_http_path_part(const char *path);
/* Whether peer may read path under rules (NULL: every client may read all). */
enum pc_http_refusal pc_http_access_decide(const struct pc_access *rules,
					   const struct pc_http_peer *peer, const char *path);
/* "no_certificate", "untrusted_certificate", ...: the label of the counter. */
const char *pc_http_refusal_name(enum pc_http_refusal r);

/* Canonical decimal: digits only, no sign, no leading zero but "0", no overflow. 0 or -1. */
int pc_http_parse_u64(const char *s, size_t len, uint64_t *out);

#endif /* PODCAP_HTTP_REQUEST_H */
