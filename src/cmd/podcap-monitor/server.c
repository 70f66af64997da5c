/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * podcap-monitor's HTTP side over libmicrohttpd, read-only: GET (and
 * HEAD) /metrics, /status.json, / (the fleet page) and
 * /appliances/<name>/report.html; anything else is 404, any other method
 * 405. Over TLS (--tls-cert, --tls-key) with src/http's credential set,
 * set up as podcap-witness's (http/mhd_tls.h); with --client-ca every
 * route wants a client certificate that chains to it (docs/tls.md). The
 * pages are served with the CSP of their own <meta>: nothing on them may
 * be fetched, whatever a log holds.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <microhttpd.h>

#include "http/http.h"
#include "http/tls.h"
#include "http/mhd_tls.h"

#include "monitor.h"

#define POOL_THREADS    2
#define MAX_CONNECTIONS 64
#define MAX_PER_CLIENT  16
#define IDLE_TIMEOUT    10
#define PAGE_CSP        "default-src 'none'; style-src 'unsafe-inline'; img-src data:"

struct mon_server {
	struct MHD_Daemon *d;
	struct mon *m;
	struct pc_tls *tls;
	uint16_t port;
};

/* Sends body (malloc'ed, freed by libmicrohttpd), or a 500 when it is NULL. */
static enum MHD_Result
send_owned(struct MHD_Connection *c, unsigned status, const char *ctype, char *body, size_t len)
{
	struct MHD_Response *r;
	enum MHD_Result ret;
	bool page = strncmp(ctype, "text/html", 9) == 0;

	if (body == NULL) {
		static const char oom[] = "out of memory\n";
		r = MHD_create_response_from_buffer(sizeof(oom) - 1, (void *)(uintptr_t)oom,
						    MHD_RESPMEM_PERSISTENT);
		status = MHD_HTTP_INTERNAL_SERVER_ERROR;
		ctype = "text/plain; charset=utf-8";
	} else {
		r = MHD_create_response_from_buffer(len, body, MHD_RESPMEM_MUST_FREE);
	}
	if (r == NULL) {
		free(body);
		return MHD_NO;
	}
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, ctype);
	MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
	MHD_add_response_header(r, "Cache-Control", "no-store");
	if (page) {
		MHD_add_response_header(r, "Content-Security-Policy", PAGE_CSP);
		MHD_add_response_header(r, "X-Frame-Options", "DENY");
	}
	ret = MHD_queue_response(c, status, r);
	MHD_destroy_response(r);
	return ret;
}

static enum MHD_Result
send_text(struct MHD_Connection *c, unsigned status, const char *msg)
{
	return send_owned(c, status, "text/plain; charset=utf-8", strdup(msg), strlen(msg));
}

/* "/appliances/<name>/report.html": the name's length, 0 when url is not of that form. */
static size_t
report_name(const char *url, char *name, size_t max)
{
	static const char head[] = "/appliances/", tail[] = "/report.html";
	size_t len = strlen(url), h = sizeof(head) - 1, t = sizeof(tail) - 1;

	if (len <= h + t || strncmp(url, head, h) != 0 || strcmp(url + len - t, tail) != 0)
		return 0;
	size_t n = len - h - t;
	if (n >= max || memchr(url + h, '/', n) != NULL)
		return 0;
	memcpy(name, url + h, n);
	name[n] = '\0';
	return n;
}

static enum MHD_Result
route(struct mon_server *s, struct MHD_Connection *c, const char *url)
{
	char name[PC_ID_LEN], *body;
	size_t len = 0;

	if (strcmp(url, "/metrics") == 0) {
		body = mon_metrics(s->m, &len);
		return send_owned(c, MHD_HTTP_OK, "text/plain; version=0.0.4; charset=utf-8", body,
				  len);
	}
	if (strcmp(url, "/status.json") == 0) {
		body = mon_status_json(s->m, &len);
		return send_owned(c, MHD_HTTP_OK, "application/json", body, len);
	}
	if (strcmp(url, "/") == 0) {
		body = mon_overview_page(s->m, &len);
		if (body == NULL)
			return send_text(c, MHD_HTTP_SERVICE_UNAVAILABLE,
					 "the fleet page could not be built (out of memory)\n");
		return send_owned(c, MHD_HTTP_OK, "text/html; charset=utf-8", body, len);
	}
	if (report_name(url, name, sizeof(name)) != 0) {
		body = mon_report_page(s->m, name, &len);
		if (body == NULL)
			return send_text(c, MHD_HTTP_NOT_FOUND,
					 "no report of that appliance (yet)\n");
		return send_owned(c, MHD_HTTP_OK, "text/html; charset=utf-8", body, len);
	}
	return send_text(c, MHD_HTTP_NOT_FOUND,
			 "not found: /, /metrics, /status.json, /appliances/<name>/report.html\n");
}

static enum MHD_Result
handle(void *cls, struct MHD_Connection *c, const char *url, const char *method,
       const char *version, const char *data, size_t *data_size, void **con_cls)
{
	struct mon_server *s = cls;
	const char *no;

	(void)version;
	(void)data;
	(void)con_cls;
	if (strcmp(method, MHD_HTTP_METHOD_GET) != 0 && strcmp(method, MHD_HTTP_METHOD_HEAD) != 0)
		return send_text(c, MHD_HTTP_METHOD_NOT_ALLOWED, "read-only: GET and HEAD\n");
	if (*data_size != 0)
		return send_text(c, MHD_HTTP_BAD_REQUEST, "a GET has no body\n");
	if ((no = pc_mhd_tls_refused(s->tls, c)) != NULL)
		return send_text(c, MHD_HTTP_FORBIDDEN, no);
	return route(s, c, url);
}

static struct MHD_Daemon *
start(struct mon_server *s, const struct sockaddr_storage *ss, unsigned flags)
{
	struct MHD_OptionItem tls[PC_MHD_TLS_OPTIONS + 1];

	tls[pc_mhd_tls_options(s->tls, tls, &flags)] =
	    (struct MHD_OptionItem){ MHD_OPTION_END, 0, NULL };
	return MHD_start_daemon(flags, 0, NULL, NULL, handle, s, MHD_OPTION_SOCK_ADDR,
				(const struct sockaddr *)ss, MHD_OPTION_THREAD_POOL_SIZE,
				(unsigned int)POOL_THREADS, MHD_OPTION_CONNECTION_LIMIT,
				(unsigned int)MAX_CONNECTIONS, MHD_OPTION_PER_IP_CONNECTION_LIMIT,
				(unsigned int)MAX_PER_CLIENT, MHD_OPTION_CONNECTION_TIMEOUT,
				(unsigned int)IDLE_TIMEOUT, MHD_OPTION_ARRAY, tls, MHD_OPTION_END);
}

struct mon_server *
mon_serve(struct mon *m, struct pc_error *err)
{
	struct sockaddr_storage ss;
	unsigned int flags = MHD_USE_INTERNAL_POLLING_THREAD;
	int v6;

	if (pc_http_parse_listen(m->listen, &ss, &v6) != 0) {
		pc_error_set(err, "--listen %s: not an address (want 127.0.0.1:9190 or [::1]:9190)",
			     m->listen);
		return NULL;
	}
	struct mon_server *s = calloc(1, sizeof(*s));
	if (s == NULL) {
		pc_error_set(err, "out of memory");
		return NULL;
	}
	s->m = m;
	if (m->tls_cert != NULL &&
	    (s->tls = pc_tls_load_files(m->tls_cert, m->tls_key, m->client_ca, err)) == NULL) {
		free(s);
		return NULL;
	}
	if (MHD_is_feature_supported(MHD_FEATURE_EPOLL) == MHD_YES)
		flags |= MHD_USE_EPOLL;
	if (v6)
		flags |= MHD_USE_IPv6;
	errno = 0;
	if ((s->d = start(s, &ss, flags)) == NULL) {
		pc_error_set(err, "cannot listen on %s: %s", m->listen,
			     errno != 0 ? strerror(errno) : "libmicrohttpd failed to start");
		pc_tls_put(s->tls);
		free(s);
		return NULL;
	}
	const union MHD_DaemonInfo *info = MHD_get_daemon_info(s->d, MHD_DAEMON_INFO_BIND_PORT);
	s->port = info != NULL ? info->port : 0;
	return s;
}

uint16_t
mon_server_port(const struct mon_server *s)
{
	return s->port;
}

void
mon_server_stop(struct mon_server *s)
{
	if (s == NULL)
		return;
	MHD_stop_daemon(s->d);
	pc_tls_put(s->tls);
	free(s);
}
