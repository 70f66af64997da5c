/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The verifier pull endpoint over libmicrohttpd. Everything served is
 * derived from the ledger's published checkpoint, so a response never
 * shows a record or tree a verifier could not also check.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <microhttpd.h>
#include <sodium.h>

#include "base/bytes.h"
#include "base/clock.h"
#include "http.h"
#include "request.h"
#include "log/ledger.h"
#include "log/merkle.h"
#include "log/note.h"
#include "log/record.h"
#include "tls.h"

#include "attest.h"
#include "handshake.h"
#include "tiles.h"
#include "tls_session.h"

#define TEXT_TYPE "text/plain; charset=utf-8"
#define METRICS_TYPE "text/plain; version=0.0.4; charset=utf-8"
#define BINARY_TYPE "application/octet-stream"
#define CONN_MEMORY (16 * 1024)        /* request line and headers must fit */
#define POOL_THREADS 2
#define REC_BUF_START (64 * 1024)
#define B64_HASH_LEN 44                /* base64 of a 32-byte hash */

struct pc_http {
	struct MHD_Daemon *d;
	struct pc_ledger *ledger;
	char *pubkey;                      /* with its newline */
	size_t pubkey_len;
	char *(*metrics)(void *ctx, size_t *len);
	size_t (*cosigned)(const char *note, size_t len, char *out, size_t outlen);
	void *ctx;
	uint16_t port;
	/* TLS: the credential set new connections get; NULL for plain HTTP */
	bool use_tls; /* set at start, never changed */
	pthread_mutex_t tls_lock;
	struct pc_tls *tls;
	uint64_t refused[PC_REFUSED_COUNT]; /* relaxed atomics, for /metrics */
	uint64_t handshakes_failed[PC_TLS_FAILED_COUNT]; /* likewise */
};

/*
 * One TLS connection: the credential set it was accepted with, held until
 * it closes, how its handshake went, and what its client's certificate was
 * found to be (the same for every request on it: podcap never
 * renegotiates).
 */
struct conn {
	struct pc_tls *tls;
	struct pc_tls_watch watch;
	bool checked;
	struct pc_http_peer peer;
	char subject[PC_SUBJECT_LEN];
};

/* ---- responses ---- */

static enum MHD_Result
send_response(struct MHD_Connection *c, unsigned status, const char *ctype,
	      struct MHD_Response *r, int no_store)
{
	enum MHD_Result ret;

	if (r == NULL)
		return MHD_NO;
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, ctype);
	MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
	if (no_store)
		MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
	ret = MHD_queue_response(c, status, r);
	MHD_destroy_response(r);
	return ret;
}

static enum MHD_Result
send_copy(struct MHD_Connection *c, unsigned status, const char *ctype, const void *body,
	  size_t len, int no_store)
{
	/* MHD_RESPMEM_MUST_COPY copies before returning; the body is never written. */
	void *p = (void *)(uintptr_t)body;

	return send_response(c, status, ctype,
			     MHD_create_response_from_buffer(len, p, MHD_RESPMEM_MUST_COPY),
			     no_store);
}

/* A one-line text reply, for errors and their reasons. */
static enum MHD_Result __attribute__((format(printf, 3, 4)))
send_text(struct MHD_Connection *c, unsigned status, const char *fmt, ...)
{
	char buf[256];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf) - 1, fmt, ap);
	va_end(ap);
	if (n < 0)
		n = 0;
	if ((size_t)n > sizeof(buf) - 2)
		n = (int)sizeof(buf) - 2;
	buf[n++] = '\n';
	return send_copy(c, status, TEXT_TYPE, buf, (size_t)n, 1);
}

static enum MHD_Result
send_405(struct MHD_Connection *c)
{
	static const char body[] = "only GET and HEAD are allowed\n";
	struct MHD_Response *r;

	r = MHD_create_response_from_buffer(sizeof(body) - 1, (void *)(uintptr_t)body,
					    MHD_RESPMEM_MUST_COPY);
	if (r == NULL)
		return MHD_NO;
	MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
	return send_response(c, MHD_HTTP_METHOD_NOT_ALLOWED, TEXT_TYPE, r, 1);
}

/* ---- the request ---- */

static enum MHD_Result
collect_arg(void *cls, enum MHD_ValueKind kind, const char *key, size_t key_size,
	    const char *value, size_t value_size)
{
	(void)kind;
	(void)key_size;
	pc_http_request_arg(cls, key, value, value_size);
	return MHD_YES;
}

/* ---- endpoints ---- */

static enum MHD_Result
get_checkpoint(struct pc_http *h, struct MHD_Connection *c, const struct pc_http_request *q)
{
	char note[PC_NOTE_MAX];
	long n;

	(void)q;
	n = pc_ledger_checkpoint(h->ledger, note, sizeof(note));
	if (n < 0)
		return send_text(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "cannot read the checkpoint");
	if (n == 0)
		return send_text(c, MHD_HTTP_NOT_FOUND, "no checkpoint yet");
	if (h->cosigned != NULL) {
		char with[PC_NOTE_MAX + PC_HTTP_COSIGNED_MAX];
		size_t m = h->cosigned(note, (size_t)n, with, sizeof(with));

		if (m > 0)
			return send_copy(c, MHD_HTTP_OK, TEXT_TYPE, with, m, 1);
	}
	return send_copy(c, MHD_HTTP_OK, TEXT_TYPE, note, (size_t)n, 1);
}

static enum MHD_Result
get_pubkey(struct pc_http *h, struct MHD_Connection *c, const struct pc_http_request *q)
{
	(void)q;
	if (h->pubkey == NULL)
		return send_text(c, MHD_HTTP_NOT_FOUND, "no public key configured");
	return send_copy(c, MHD_HTTP_OK, TEXT_TYPE, h->pubkey, h->pubkey_len, 0);
}

/* The endpoint's own counters after the daemon's: every reason, also at 0. */
static char *
add_refusals(struct pc_http *h, char *text, size_t *len)
{
	size_t room = *len + 512 + (PC_REFUSED_COUNT + PC_TLS_FAILED_COUNT) * 96;
	char *out = realloc(text, room);
	size_t n = *len;

	if (out == NULL) {
		free(text);
		return NULL;
	}
	n += (size_t)snprintf(out + n, room - n,
			      "# HELP podcap_http_refused_total Requests to the endpoint refused "
			      "with 403, by reason.\n"
			      "# TYPE podcap_http_refused_total counter\n");
	for (int r = PC_REFUSED_NOTHING + 1; r < PC_REFUSED_COUNT; r++)
		n += (size_t)snprintf(out + n, room - n,
				      "podcap_http_refused_total{reason=\"%s\"} %" PRIu64 "\n",
				      pc_http_refusal_name((enum pc_http_refusal)r),
				      __atomic_load_n(&h->refused[r], __ATOMIC_RELAXED));
	n += (size_t)snprintf(out + n, room - n,
			      "# HELP podcap_http_tls_handshake_failures_total TLS handshakes with "
			      "the endpoint that did not finish, by reason.\n"
			      "# TYPE podcap_http_tls_handshake_failures_total counter\n");
	for (int f = PC_TLS_FAILED_NOTHING + 1; f < PC_TLS_FAILED_COUNT; f++)
		n += (size_t)snprintf(
		    out + n, room - n,
		    "podcap_http_tls_handshake_failures_total{reason=\"%s\"} %" PRIu64 "\n",
		    pc_tls_failure_name((enum pc_tls_failure)f),
		    __atomic_load_n(&h->handshakes_failed[f], __ATOMIC_RELAXED));
	*len = n;
	return out;
}

static enum MHD_Result
get_metrics(struct pc_http *h, struct MHD_Connection *c, const struct pc_http_request *q)
{
	struct MHD_Response *r;
	size_t len = 0;
	char *text;

	(void)q;
	if (h->metrics == NULL)
		return send_text(c, MHD_HTTP_NOT_FOUND, "no metrics");
	text = h->metrics(h->ctx, &len);
	if (text == NULL)
		return send_text(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "metrics unavailable");
	text = add_refusals(h, text, &len);
	if (text == NULL)
		return send_text(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory");
	/* From here MHD owns the text and frees it when the response is done. */
	r = MHD_create_response_from_buffer(len, text, MHD_RESPMEM_MUST_FREE);
	if (r == NULL) {
		free(text);
		return MHD_NO;
	}
	return send_response(c, MHD_HTTP_OK, METRICS_TYPE, r, 1);
}

/* The newest quote: its record index (8 bytes, big-endian), then the record. */
static enum MHD_Result
get_attest(struct pc_http *h, struct MHD_Connection *c, const struct pc_http_request *q)
{
	size_t cap = REC_BUF_START;
	uint8_t *buf = malloc(cap);
	uint64_t index;

	(void)q;
	if (buf == NULL)
		return send_text(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory");
	long n = pc_http_latest_attest(h->ledger, &buf, &cap, &index);
	enum MHD_Result r;
	if (n <= 0) {
		r = n < 0 ? send_text(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "cannot read the records")
			  : send_text(c, MHD_HTTP_NOT_FOUND, "no attest record yet");
	} else {
		pc_store_be64(buf, index);
		r = send_copy(c, MHD_HTTP_OK, BINARY_TYPE, buf, 8 + (size_t)n, 1);
	}
	free(buf);
	return r;
}

/*
 * /v1/records streams one record at a time, so a response holds at most
 * one record in memory however many it carries.
 */
struct rec_stream {
	struct pc_ledger *ledger;
	uint64_t next, end;
	uint8_t *buf;                      /* 4-byte length, then the record */
	size_t cap, have, off;
};

static int
load_record(struct rec_stream *s)
{
	long n;
	uint8_t *nb;

	for (;;) {
		n = pc_ledger_record(s->ledger, s->next, s->buf + 4, s->cap - 4);
		if (n >= 0)
			break;
		/* Too small a buffer reads as an error: retry once at the largest record size. */
		if (s->cap >= 4 + (size_t)PC_RECORD_MAX)
			return -1;
		nb = realloc(s->buf, 4 + (size_t)PC_RECORD_MAX);
		if (nb == NULL)
			return -1;
		s->buf = nb;
		s->cap = 4 + (size_t)PC_RECORD_MAX;
	}
	pc_store_be32(s->buf, (uint32_t)n);
	s->have = 4 + (size_t)n;
	s->off = 0;
	s->next++;
	return 0;
}

static ssize_t
rec_read(void *cls, uint64_t pos, char *out, size_t max)
{
	struct rec_stream *s = cls;
	size_t n;

	(void)pos;
	if (s->off == s->have) {
		if (s->next == s->end)
			return MHD_CONTENT_READER_END_OF_STREAM;
		if (load_record(s) != 0)
			return MHD_CONTENT_READER_END_WITH_ERROR;
	}
	n = s->have - s->off;
	if (n > max)
		n = max;
	memcpy(out, s->buf + s->off, n);
	s->off += n;
	return (ssize_t)n;
}

static void
rec_free(void *cls)
{
	struct rec_stream *s = cls;

	free(s->buf);
	free(s);
}

static enum MHD_Result
get_records(struct pc_http *h, struct MHD_Connection *c, const struct pc_http_request *q)
{
	struct MHD_Response *r;
	struct rec_stream *s;
	uint64_t from = q->a, count = q->b;

	s = calloc(1, sizeof(*s));
	if (s == NULL || (s->buf = malloc(REC_BUF_START)) == NULL) {
		free(s);
		return send_text(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory");
	}
	s->ledger = h->ledger;
	s->next = from;
	s->end = from + count;
	s->cap = REC_BUF_START;
	/* Read the first record now, so a broken ledger is a 500 and not a cut stream. */
	if (load_record(s) != 0) {
		rec_free(s);
		return send_text(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "cannot read record %" PRIu64,
				 from);
	}
	r = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 16 * 1024, rec_read, s, rec_free);
	if (r == NULL) {
		rec_free(s);
		return MHD_NO;
	}
	return send_response(c, MHD_HTTP_OK, BINARY_TYPE, r, 0);
}

static enum MHD_Result
send_proof(struct MHD_Connection *c, uint8_t proof[][PC_HASH_LEN], size_t n)
{
	char body[PC_MAX_PROOF * (B64_HASH_LEN + 1) + 1];
	size_t i, len = 0;

	for (i = 0; i < n; i++) {
		sodium_bin2base64(body + len, B64_HASH_LEN + 1, proof[i], PC_HASH_LEN,
				  sodium_base64_VARIANT_ORIGINAL);
		len += B64_HASH_LEN;
		body[len++] = '\n';
	}
	return send_copy(c, MHD_HTTP_OK, TEXT_TYPE, body, len, 0);
}

typedef int (*proof_fn)(pc_leaf_fn leaf, void *ctx, uint64_t a, uint64_t b,
			uint8_t proof[][PC_HASH_LEN], size_t *n);

/* An inclusion or consistency proof between the request's two numbers. */
static enum MHD_Result
send_tree_proof(struct pc_http *h, struct MHD_Connection *c, const struct pc_http_request *q,
		proof_fn make)
{
	uint8_t proof[PC_MAX_PROOF][PC_HASH_LEN];
	size_t n;

	if (make(pc_ledger_leaf, h->ledger, q->a, q->b, proof, &n) != 0)
		return send_text(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "cannot read the tree");
	return send_proof(c, proof, n);
}

static enum MHD_Result
get_inclusion(struct pc_http *h, struct MHD_Connection *c, const struct pc_http_request *q)
{
	return send_tree_proof(h, c, q, pc_merkle_inclusion_proof);
}

static enum MHD_Result
get_consistency(struct pc_http *h, struct MHD_Connection *c, const struct pc_http_request *q)
{
	return send_tree_proof(h, c, q, pc_merkle_consistency_proof);
}

static enum MHD_Result (*const serve[])(struct pc_http *h, struct MHD_Connection *c,
					const struct pc_http_request *q) = {
	[PC_ROUTE_CHECKPOINT] = get_checkpoint, [PC_ROUTE_RECORDS] = get_records,
	[PC_ROUTE_INCLUSION] = get_inclusion,   [PC_ROUTE_CONSISTENCY] = get_consistency,
	[PC_ROUTE_PUBKEY] = get_pubkey,         [PC_ROUTE_METRICS] = get_metrics,
	[PC_ROUTE_ATTEST] = get_attest,
};

/*
 * A body on GET means nothing here; answering it anyway would leave the body
 * for the connection to read or drop. Refused, and the connection closes.
 */
static int
has_body(struct MHD_Connection *c)
{
	const char *len = MHD_lookup_connection_value(c, MHD_HEADER_KIND,
						       MHD_HTTP_HEADER_CONTENT_LENGTH);

	return (len != NULL && strcmp(len, "0") != 0) ||
	       MHD_lookup_connection_value(c, MHD_HEADER_KIND,
					   MHD_HTTP_HEADER_TRANSFER_ENCODING) != NULL;
}

/* ---- who may read what (TLS) ---- */

static struct conn *
conn_of(struct MHD_Connection *c)
{
	const union MHD_ConnectionInfo *i =
	    MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);

	return i != NULL ? i->socket_context : NULL;
}

static gnutls_session_t
session_of(struct MHD_Connection *c)
{
	const union MHD_ConnectionInfo *i =
	    MHD_get_connection_info(c, MHD_CONNECTION_INFO_GNUTLS_SESSION);

	return i != NULL ? (gnutls_session_t)i->tls_session : NULL;
}

static uint64_t
mono_ms(void)
{
	return pc_mono_ns() / 1000000;
}

/* A connection closed: its handshake counted if it did not finish, its set let go. */
static void
closed(struct pc_http *h, struct conn *k)
{
	enum pc_tls_failure f;

	if (k == NULL)
		return;
	f = pc_tls_watch_end(&k->watch, mono_ms(), PC_HTTP_IDLE_TIMEOUT * 1000);
	if (f != PC_TLS_FAILED_NOTHING)
		__atomic_add_fetch(&h->handshakes_failed[f], 1, __ATOMIC_RELAXED);
	pc_tls_put(k->tls);
	free(k);
}

/*
 * libmicrohttpd calls this after it made a connection's TLS session and
 * before the handshake: the session gets the set in force now, so that a
 * reload serves every connection made after it, and the watch of its
 * handshake.
 */
static void
notify(void *cls, struct MHD_Connection *c, void **socket_context,
       enum MHD_ConnectionNotificationCode code)
{
	struct pc_http *h = cls;
	struct conn *k = *socket_context;
	gnutls_session_t s;

	if (code == MHD_CONNECTION_NOTIFY_CLOSED) {
		closed(h, k);
		*socket_context = NULL;
		return;
	}
	k = calloc(1, sizeof(*k));
	if (k == NULL)
		return; /* handle() refuses a connection without one */
	pthread_mutex_lock(&h->tls_lock);
	k->tls = pc_tls_get(h->tls);
	pthread_mutex_unlock(&h->tls_lock);
	s = session_of(c);
	if (s == NULL || pc_tls_session_setup(k->tls, s) != 0 ||
	    pc_tls_watch_start(&k->watch, s, pc_tls_versions(k->tls), mono_ms()) != 0) {
		pc_tls_put(k->tls);
		free(k);
		return;
	}
	*socket_context = k;
}

/* The reason to refuse this request with, PC_REFUSED_NOTHING to serve it. */
static enum pc_http_refusal
refusal(struct MHD_Connection *c, const char *url)
{
	struct conn *k = conn_of(c);

	if (k == NULL)
		return PC_REFUSED_NO_CERTIFICATE;
	if (!k->checked) {
		gnutls_session_t s = session_of(c);

		if (s == NULL)
			return PC_REFUSED_NO_CERTIFICATE;
		pc_tls_session_peer(k->tls, s, &k->peer, k->subject, sizeof(k->subject));
		k->checked = true;
	}
	return pc_http_access_decide(pc_tls_rules(k->tls), &k->peer, url);
}

static enum MHD_Result
refuse(struct pc_http *h, struct MHD_Connection *c, enum pc_http_refusal r)
{
	__atomic_add_fetch(&h->refused[r], 1, __ATOMIC_RELAXED);
	return send_text(c, MHD_HTTP_FORBIDDEN, "forbidden: %s", pc_http_refusal_name(r));
}

static enum MHD_Result
handle(void *cls, struct MHD_Connection *c, const char *url, const char *method,
       const char *version, const char *upload_data, size_t *upload_data_size, void **req)
{
	struct pc_http *h = cls;
	struct pc_http_request q;
	enum pc_http_refusal r;

	(void)version;
	(void)upload_data;
	(void)upload_data_size;
	(void)req;
	/* who is asking comes before what is asked: a stranger learns nothing of the paths */
	if (h->use_tls && (r = refusal(c, url)) != PC_REFUSED_NOTHING)
		return refuse(h, c, r);
	if (strcmp(url, "/checkpoint") == 0 || strncmp(url, "/tile/", 6) == 0)
		return has_body(c)
		    ? send_text(c, MHD_HTTP_BAD_REQUEST, "a GET or HEAD request takes no body")
		    : pc_http_tiles(c, method, url, h->ledger, h->cosigned);
	pc_http_request_init(&q, method, url);
	MHD_get_connection_values_n(c, MHD_GET_ARGUMENT_KIND, collect_arg, &q);
	pc_http_request_finish(&q, pc_ledger_published_size(h->ledger));
	if (q.status == MHD_HTTP_METHOD_NOT_ALLOWED)
		return send_405(c);
	if (has_body(c))
		return send_text(c, MHD_HTTP_BAD_REQUEST, "a GET or HEAD request takes no body");
	if (q.status != MHD_HTTP_OK)
		return send_text(c, q.status, "%s", q.reason);
	return serve[q.route](h, c, &q);
}

/* ---- lifecycle ---- */

static int
parse_port(const char *s, uint16_t *port)
{
	uint64_t v;

	if (pc_http_parse_u64(s, strlen(s), &v) != 0 || v > 65535)
		return -1;
	*port = (uint16_t)v;
	return 0;
}

int
pc_http_parse_listen(const char *listen, struct sockaddr_storage *ss, int *v6)
{
	struct sockaddr_in *s4 = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)ss;
	char host[INET6_ADDRSTRLEN + 1];
	const char *colon, *end;
	uint16_t port;
	size_t hl;

	memset(ss, 0, sizeof(*ss));
	*v6 = listen[0] == '[';
	if (*v6) {
		end = strchr(listen, ']');
		if (end == NULL || end[1] != ':')
			return -1;
		hl = (size_t)(end - listen - 1);
		colon = end + 1;
		listen++;
	} else {
		colon = strchr(listen, ':');
		if (colon == NULL)
			return -1;
		hl = (size_t)(colon - listen);
	}
	if (hl == 0 || hl >= sizeof(host) || parse_port(colon + 1, &port) != 0)
		return -1;
	memcpy(host, listen, hl);
	host[hl] = '\0';
	if (*v6) {
		if (inet_pton(AF_INET6, host, &s6->sin6_addr) != 1)
			return -1;
		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons(port);
	} else {
		if (inet_pton(AF_INET, host, &s4->sin_addr) != 1)
			return -1;
		s4->sin_family = AF_INET;
		s4->sin_port = htons(port);
	}
	return 0;
}

static struct pc_http *
http_new(const struct pc_http_ops *ops, struct pc_error *err)
{
	struct pc_http *h = calloc(1, sizeof(*h));

	if (h == NULL) {
		pc_error_set(err, "http: out of memory");
		return NULL;
	}
	h->ledger = ops->ledger;
	h->metrics = ops->metrics;
	h->cosigned = ops->cosigned;
	h->ctx = ops->ctx;
	pthread_mutex_init(&h->tls_lock, NULL);
	if (ops->tls != NULL) {
		h->use_tls = true;
		h->tls = pc_tls_get(ops->tls);
	}
	if (ops->pubkey != NULL) {
		h->pubkey_len = strcspn(ops->pubkey, "\n") + 1;
		h->pubkey = malloc(h->pubkey_len);
		if (h->pubkey == NULL) {
			pc_http_stop(h);
			pc_error_set(err, "http: out of memory");
			return NULL;
		}
		memcpy(h->pubkey, ops->pubkey, h->pubkey_len - 1);
		h->pubkey[h->pubkey_len - 1] = '\n';
	}
	return h;
}

#define OPT(o, v, p) ((struct MHD_OptionItem){ (o), (intptr_t)(v), (p) })

/* The options of every endpoint, then TLS's, into o[]: how many. */
static size_t
options(struct pc_http *h, struct sockaddr_storage *ss, struct MHD_OptionItem *o)
{
	size_t n = 0;

	o[n++] = OPT(MHD_OPTION_SOCK_ADDR, 0, ss);
	o[n++] = OPT(MHD_OPTION_THREAD_POOL_SIZE, POOL_THREADS, NULL);
	o[n++] = OPT(MHD_OPTION_CONNECTION_LIMIT, PC_HTTP_MAX_CONNECTIONS, NULL);
	o[n++] = OPT(MHD_OPTION_PER_IP_CONNECTION_LIMIT, PC_HTTP_MAX_PER_CLIENT, NULL);
	o[n++] = OPT(MHD_OPTION_CONNECTION_TIMEOUT, PC_HTTP_IDLE_TIMEOUT, NULL);
	o[n++] = OPT(MHD_OPTION_CONNECTION_MEMORY_LIMIT, CONN_MEMORY, NULL);
	if (h->use_tls) {
		/* the daemon's own set: each session gets the set in force instead (notify) */
		o[n++] =
		    OPT(MHD_OPTION_HTTPS_MEM_CERT, 0, (void *)(uintptr_t)pc_tls_cert_pem(h->tls));
		o[n++] =
		    OPT(MHD_OPTION_HTTPS_MEM_KEY, 0, (void *)(uintptr_t)pc_tls_key_pem(h->tls));
		o[n++] = OPT(MHD_OPTION_HTTPS_PRIORITIES, 0,
			     (void *)(uintptr_t)pc_tls_priorities(h->tls));
		o[n++] = OPT(MHD_OPTION_NOTIFY_CONNECTION, (uintptr_t)notify, h);
	}
	o[n++] = OPT(MHD_OPTION_END, 0, NULL);
	return n;
}

struct pc_http *
pc_http_start(const char *listen, const struct pc_http_ops *ops, struct pc_error *err)
{
	struct sockaddr_storage ss;
	struct MHD_OptionItem opts[16];
	const union MHD_DaemonInfo *info;
	unsigned int flags;
	struct pc_http *h;
	int v6;

	if (ops == NULL || ops->ledger == NULL) {
		pc_error_set(err, "http: no ledger to serve");
		return NULL;
	}
	if (listen == NULL || pc_http_parse_listen(listen, &ss, &v6) != 0) {
		pc_error_set(err,
			     "http: bad listen address \"%s\" (want 127.0.0.1:9180 or [::1]:9180)",
			     listen == NULL ? "" : listen);
		return NULL;
	}
	if (ops->tls != NULL && MHD_is_feature_supported(MHD_FEATURE_TLS) != MHD_YES) {
		pc_error_set(err, "http: this libmicrohttpd was built without TLS");
		return NULL;
	}
	h = http_new(ops, err);
	if (h == NULL)
		return NULL;
	flags = MHD_USE_INTERNAL_POLLING_THREAD;
	if (MHD_is_feature_supported(MHD_FEATURE_EPOLL) == MHD_YES)
		flags |= MHD_USE_EPOLL;
	if (v6)
		flags |= MHD_USE_IPv6;
	if (h->use_tls)
		flags |= MHD_USE_TLS;
	options(h, &ss, opts);
	errno = 0;
	h->d = MHD_start_daemon(flags, 0, NULL, NULL, handle, h, MHD_OPTION_ARRAY, opts,
				MHD_OPTION_END);
	if (h->d == NULL) {
		pc_error_set(err, "http: cannot listen on %s: %s", listen,
		     errno != 0 ? strerror(errno) : "libmicrohttpd failed to start");
		pc_http_stop(h);
		return NULL;
	}
	info = MHD_get_daemon_info(h->d, MHD_DAEMON_INFO_BIND_PORT);
	h->port = info != NULL ? info->port : 0;
	return h;
}

int
pc_http_set_tls(struct pc_http *h, struct pc_tls *t, struct pc_error *err)
{
	struct pc_tls *old;

	if (!h->use_tls || t == NULL)
		return pc_error_set(err, "http: TLS is %s: restart podcapd to turn it %s",
				    h->use_tls ? "on" : "off", h->use_tls ? "off" : "on");
	pc_tls_get(t);
	pthread_mutex_lock(&h->tls_lock);
	old = h->tls;
	h->tls = t;
	pthread_mutex_unlock(&h->tls_lock);
	/* connections made with the old set hold references of their own */
	pc_tls_put(old);
	return 0;
}

uint16_t
pc_http_port(const struct pc_http *h)
{
	return h->port;
}

void
pc_http_stop(struct pc_http *h)
{
	if (h == NULL)
		return;
	if (h->d != NULL)
		MHD_stop_daemon(h->d);
	pc_tls_put(h->tls);
	pthread_mutex_destroy(&h->tls_lock);
	free(h->pubkey);
	free(h);
}
