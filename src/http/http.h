/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The verifier pull endpoint: a small read-only HTTP/1.1 server
 * (libmicrohttpd, in its own threads) over a ledger.
 *
 *   GET /v1/checkpoint                     latest signed checkpoint note
 *   GET /v1/records?from=N&count=M         M records (1..1000), each as a
 *                                          4-byte big-endian length and the
 *                                          record bytes; only records covered
 *                                          by the published checkpoint
 *   GET /v1/proof/inclusion?index=I&size=N RFC 9162 proofs, one base64 hash
 *   GET /v1/proof/consistency?old=M&new=N  per line; sizes <= published size
 *   GET /v1/pubkey                         the verifier key line
 *   GET /metrics                           Prometheus text from ops->metrics,
 *                                          then the endpoint's refusals and its
 *                                          unfinished TLS handshakes
 *
 * HEAD works wherever GET does; other methods get 405. Query numbers are
 * canonical decimal uint64s; anything else is a 400 with a one-line reason.
 * Connections are limited in number (overall and per client address), in
 * memory and by an idle timeout, so no client can hold the server.
 */
#ifndef PODCAP_HTTP_H
#define PODCAP_HTTP_H

#include <stddef.h>
#include <stdint.h>

#include "base/error.h"

struct pc_ledger;
struct pc_tls;

struct pc_http_ops {
	struct pc_ledger *ledger;          /* src/log/ledger.h: read functions are thread-safe */
	const char *pubkey;                /* verifier-key line, served by /v1/pubkey (copied) */
	char *(*metrics)(void *ctx, size_t *len);  /* malloc'd Prometheus text; the server frees it */
	/* the checkpoint note with what else is known to sign it (cosignatures); NULL: as stored */
	size_t (*cosigned)(const char *note, size_t len, char *out, size_t outlen);
	void *ctx;
	/*
	 * TLS credentials and access rules (http/tls.h), NULL for plain HTTP;
	 * the server takes a reference of its own. With rules, a request is
	 * first refused with 403 when its client may not read that part of the
	 * endpoint, counted by reason in /metrics (podcap_http_refused_total).
	 */
	struct pc_tls *tls;
};

#define PC_HTTP_MAX_RECORDS 1000       /* records per /v1/records response */
#define PC_HTTP_MAX_CONNECTIONS 256    /* each holds at most 16 KiB of request memory */
#define PC_HTTP_MAX_PER_CLIENT 8       /* connections from one address */
#define PC_HTTP_IDLE_TIMEOUT 10        /* seconds */
#define PC_HTTP_COSIGNED_MAX    2048      /* cosignature lines served after the note */

/*
 * Starts serving on `listen`: "127.0.0.1:9180", "[::1]:9180"; port 0 picks a
 * free port (see pc_http_port). Returns NULL with a message in err.
 * metrics may be NULL (then /metrics is 404). The ledger must outlive the server.
 */
/* "a.b.c.d:port" or "[v6]:port", numeric only, into ss (*v6 set for IPv6): 0 or -1. */
struct sockaddr_storage;
int pc_http_parse_listen(const char *listen, struct sockaddr_storage *ss, int *v6);

struct pc_http *pc_http_start(const char *listen, const struct pc_http_ops *ops,
			      struct pc_error *err);
/*
 * Serves the connections made from now on with t (a SIGHUP's new files);
 * those already open keep the set they were made with. Only on a server
 * started with TLS: 0, or -1 when it was started without (a restart turns
 * TLS on or off). Takes a reference of its own.
 */
int pc_http_set_tls(struct pc_http *h, struct pc_tls *t, struct pc_error *err);
/* The bound port. */
uint16_t pc_http_port(const struct pc_http *h);
/* Stops the server, waits for its threads and closes every connection. */
void pc_http_stop(struct pc_http *h);

#endif /* PODCAP_HTTP_H */
