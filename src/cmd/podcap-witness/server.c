/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * podcap-witness's HTTP side over libmicrohttpd: POST /add-checkpoint, the
 * body gathered up to the largest request tlog-witness allows, and
 * witness_add_checkpoint's answer sent as it is; GET (and HEAD)
 * /<origin hash>/checkpoint, witness_checkpoint's. The submission and the
 * monitoring prefix are both the server's root.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <microhttpd.h>

#include "http/http.h"
#include "http/mhd_tls.h"

#include "witness.h"

#define POOL_THREADS    2
#define MAX_CONNECTIONS 64
#define MAX_PER_CLIENT  16
#define IDLE_TIMEOUT    10
#define OUT_MAX         WITNESS_NOTE_MAX
#define CHECKPOINT_PATH "/checkpoint"

struct witness_server {
	struct MHD_Daemon *d;
	struct witness *w;
	uint16_t port;
};

/* A request's body as it arrives. */
struct upload {
	size_t len;
	int too_long;
	char body[PC_WITNESS_REQ_MAX];
};

static enum MHD_Result
send_buf(struct MHD_Connection *c, unsigned status, const char *ctype, const char *body, size_t len)
{
	struct MHD_Response *r;
	enum MHD_Result ret;

	r = MHD_create_response_from_buffer(len, (void *)(uintptr_t)body, MHD_RESPMEM_MUST_COPY);
	if (r == NULL)
		return MHD_NO;
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, ctype);
	MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
	ret = MHD_queue_response(c, status, r);
	MHD_destroy_response(r);
	return ret;
}

static enum MHD_Result
send_text(struct MHD_Connection *c, unsigned status, const char *msg)
{
	return send_buf(c, status, "text/plain; charset=utf-8", msg, strlen(msg));
}

/* "/<hash>/checkpoint": the hash's length, or 0 when url is not of that form. */
static size_t
monitor_hash(const char *url)
{
	size_t len = strlen(url), tail = strlen(CHECKPOINT_PATH), n;

	if (len <= 1 + tail || url[0] != '/' || strcmp(url + len - tail, CHECKPOINT_PATH) != 0)
		return 0;
	n = len - 1 - tail;
	return memchr(url + 1, '/', n) == NULL ? n : 0;
}

static enum MHD_Result
monitor(struct witness_server *s, struct MHD_Connection *c, const char *url, const char *method)
{
	char out[OUT_MAX];
	const char *ctype;
	size_t outlen;
	unsigned status;

	if (strcmp(method, MHD_HTTP_METHOD_GET) != 0 && strcmp(method, MHD_HTTP_METHOD_HEAD) != 0)
		return send_text(c, MHD_HTTP_METHOD_NOT_ALLOWED, "a checkpoint is a GET\n");
	status =
	    witness_checkpoint(s->w, url + 1, monitor_hash(url), out, sizeof(out), &outlen, &ctype);
	return send_buf(c, status, ctype, out, outlen);
}

static enum MHD_Result
handle(void *cls, struct MHD_Connection *c, const char *url, const char *method,
       const char *version, const char *data, size_t *data_size, void **con_cls)
{
	struct witness_server *s = cls;
	struct upload *u = *con_cls;
	char out[OUT_MAX];
	const char *ctype;
	size_t outlen;
	unsigned status;

	(void)version;
	if (monitor_hash(url) != 0)
		return monitor(s, c, url, method);
	if (strcmp(url, "/add-checkpoint") != 0)
		return send_text(
		    c, MHD_HTTP_NOT_FOUND,
		    "not found: POST /add-checkpoint, GET /<origin hash>/checkpoint\n");
	if (strcmp(method, MHD_HTTP_METHOD_POST) != 0)
		return send_text(c, MHD_HTTP_METHOD_NOT_ALLOWED, "add-checkpoint is a POST\n");
	if (u == NULL) {
		const char *refused = pc_mhd_tls_refused(s->w->tls, c);

		if (refused != NULL)
			return send_text(c, MHD_HTTP_FORBIDDEN, refused);
		u = calloc(1, sizeof(*u));
		if (u == NULL)
			return MHD_NO;
		*con_cls = u;
		return MHD_YES;
	}
	if (*data_size != 0) {
		if (*data_size > sizeof(u->body) - u->len)
			u->too_long = 1;
		else
			memcpy(u->body + u->len, data, *data_size);
		u->len += u->too_long ? 0 : *data_size;
		*data_size = 0;
		return MHD_YES;
	}
	if (u->too_long)
		return send_text(c, MHD_HTTP_CONTENT_TOO_LARGE, "the request is too long\n");
	status = witness_add_checkpoint(s->w, u->body, u->len, out, sizeof(out), &outlen, &ctype);
	return send_buf(c, status, ctype, out, outlen);
}

static void
done(void *cls, struct MHD_Connection *c, void **con_cls, enum MHD_RequestTerminationCode code)
{
	(void)cls;
	(void)c;
	(void)code;
	free(*con_cls);
	*con_cls = NULL;
}

struct witness_server *
witness_serve(struct witness *w, const char *listen, struct pc_error *err)
{
	struct witness_server *s;
	struct MHD_OptionItem tls[PC_MHD_TLS_OPTIONS + 1];
	struct sockaddr_storage ss;
	const union MHD_DaemonInfo *info;
	unsigned int flags = MHD_USE_INTERNAL_POLLING_THREAD;
	int v6;

	if (pc_http_parse_listen(listen, &ss, &v6) != 0) {
		pc_error_set(err, "bad listen address \"%s\" (want 127.0.0.1:7380 or [::1]:7380)",
			     listen);
		return NULL;
	}
	s = calloc(1, sizeof(*s));
	if (s == NULL) {
		pc_error_set(err, "out of memory");
		return NULL;
	}
	s->w = w;
	if (MHD_is_feature_supported(MHD_FEATURE_EPOLL) == MHD_YES)
		flags |= MHD_USE_EPOLL;
	if (v6)
		flags |= MHD_USE_IPv6;
	tls[pc_mhd_tls_options(w->tls, tls, &flags)] =
	    (struct MHD_OptionItem){ MHD_OPTION_END, 0, NULL };
	errno = 0;
	s->d = MHD_start_daemon(
	    flags, 0, NULL, NULL, handle, s, MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&ss,
	    MHD_OPTION_THREAD_POOL_SIZE, (unsigned int)POOL_THREADS, MHD_OPTION_CONNECTION_LIMIT,
	    (unsigned int)MAX_CONNECTIONS, MHD_OPTION_PER_IP_CONNECTION_LIMIT,
	    (unsigned int)MAX_PER_CLIENT, MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)IDLE_TIMEOUT,
	    MHD_OPTION_NOTIFY_COMPLETED, done, NULL, MHD_OPTION_ARRAY, tls, MHD_OPTION_END);
	if (s->d == NULL) {
		pc_error_set(err, "cannot listen on %s: %s", listen,
			     errno != 0 ? strerror(errno) : "libmicrohttpd failed to start");
		free(s);
		return NULL;
	}
	info = MHD_get_daemon_info(s->d, MHD_DAEMON_INFO_BIND_PORT);
	s->port = info != NULL ? info->port : 0;
	return s;
}

uint16_t
witness_server_port(const struct witness_server *s)
{
	return s->port;
}

void
witness_server_stop(struct witness_server *s)
{
	if (s == NULL)
		return;
	MHD_stop_daemon(s->d);
	free(s);
}
