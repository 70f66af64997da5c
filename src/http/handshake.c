/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A TLS connection's handshake watched (handshake.h). The watch is the
 * session's receive transport: its pull function is recv() on the same
 * socket, noting the first byte and the client's close, and the handshake
 * hook finds it there. The client's alerts are encrypted in TLS 1.3 and
 * GnuTLS keeps the last one in the session libmicrohttpd frees, so a
 * handshake the client ends after the appliance's flight is told by what
 * did not come (another message of the client's) rather than by the alert.
 */
#include <errno.h>
#include <poll.h>
#include <sys/socket.h>

#include "handshake.h"

#define RECORD_HANDSHAKE       0x16 /* the content type of a TLS handshake record */
#define EXT_SUPPORTED_VERSIONS 43
#define TIMEOUT_SLACK_MS       250 /* libmicrohttpd's clock started a little before ours */

static struct pc_tls_watch *
watch_of(gnutls_session_t s)
{
	gnutls_transport_ptr_t recv_ptr, send_ptr;

	gnutls_transport_get_ptr2(s, &recv_ptr, &send_ptr);
	return recv_ptr;
}

static ssize_t
watch_pull(gnutls_transport_ptr_t p, void *buf, size_t n)
{
	struct pc_tls_watch *w = p;
	ssize_t got = recv(w->fd, buf, n, 0);
	int saved = errno; /* GnuTLS reads errno for EAGAIN */

	if (got > 0 && w->first_byte < 0)
		w->first_byte = ((const uint8_t *)buf)[0];
	if (got == 0)
		w->eof = true;
	errno = saved;
	return got;
}

static int
watch_pull_timeout(gnutls_transport_ptr_t p, unsigned ms)
{
	struct pc_tls_watch *w = p;
	struct pollfd pfd = { .fd = w->fd, .events = POLLIN };

	return poll(&pfd, 1, ms == GNUTLS_INDEFINITE_TIMEOUT ? -1 : (int)ms);
}

/* One supported_versions list: 1-byte length, then 2-byte versions. */
static int
ext_versions(void *ctx, unsigned tls_id, const unsigned char *data, unsigned size)
{
	int *mask = ctx;

	if (tls_id != EXT_SUPPORTED_VERSIONS)
		return 0;
	if (size < 1 || data[0] % 2 != 0 || (unsigned)data[0] + 1 != size)
		return GNUTLS_E_UNEXPECTED_PACKET_LENGTH;
	*mask = 0;
	for (unsigned i = 1; i < size; i += 2)
		if (data[i] == 3 && data[i + 1] < 31) /* GREASE and DTLS are none of podcap's */
			*mask |= (int)PC_TLS_VERSION_BIT(data[i + 1]);
	return 0;
}

int
pc_tls_hello_versions(const uint8_t *hello, size_t len)
{
	gnutls_datum_t d = { (unsigned char *)(uintptr_t)hello, (unsigned)len };
	int mask = -1, rc;

	if (len < 2 || len > UINT32_MAX || hello[0] != 3 || hello[1] > 30)
		return -1;
	rc = gnutls_ext_raw_parse(&mask, ext_versions, &d, GNUTLS_EXT_RAW_FLAG_TLS_CLIENT_HELLO);
	if (rc < 0 && rc != GNUTLS_E_REQUESTED_DATA_NOT_AVAILABLE) /* that one: no extensions */
		return -1;
	if (mask < 0) /* no supported_versions: up to legacy_version */
		mask = (int)(PC_TLS_VERSION_BIT(hello[1] + 1u) - 1);
	return mask;
}

static void
client_hello(struct pc_tls_watch *w, const gnutls_datum_t *msg)
{
	int offered = pc_tls_hello_versions(msg->data, msg->size);

	w->bad_versions = offered >= 0 && ((unsigned)offered & w->versions) == 0;
}

static int
hook(gnutls_session_t s, unsigned type, unsigned when, unsigned incoming, const gnutls_datum_t *msg)
{
	struct pc_tls_watch *w = watch_of(s);

	if (incoming && when == GNUTLS_HOOK_PRE) {
		w->client_answered = w->flight_sent;
		if (type == GNUTLS_HANDSHAKE_CLIENT_HELLO)
			client_hello(w, msg);
	} else if (incoming && type == GNUTLS_HANDSHAKE_FINISHED) {
		w->finished = true;
	} else if (!incoming && when == GNUTLS_HOOK_POST &&
		   (type == GNUTLS_HANDSHAKE_FINISHED ||
		    type == GNUTLS_HANDSHAKE_SERVER_HELLO_DONE)) {
		/* TLS 1.3's flight ends with the server's Finished, 1.2's with ServerHelloDone */
		w->flight_sent = true;
		w->client_answered = false;
	}
	return 0;
}

int
pc_tls_watch_start(struct pc_tls_watch *w, gnutls_session_t s, unsigned versions, uint64_t now_ms)
{
	gnutls_transport_ptr_t recv_ptr, send_ptr;
	int fd = gnutls_transport_get_int(s);

	if (fd < 0)
		return -1;
	*w = (struct pc_tls_watch){
		.fd = fd, .versions = versions, .started_ms = now_ms, .first_byte = -1
	};
	/* the send side stays libmicrohttpd's: the socket itself */
	gnutls_transport_get_ptr2(s, &recv_ptr, &send_ptr);
	gnutls_transport_set_ptr2(s, w, send_ptr);
	gnutls_transport_set_pull_function(s, watch_pull);
	gnutls_transport_set_pull_timeout_function(s, watch_pull_timeout);
	gnutls_handshake_set_hook_function(s, GNUTLS_HANDSHAKE_ANY, GNUTLS_HOOK_BOTH, hook);
	return 0;
}

enum pc_tls_failure
pc_tls_watch_end(const struct pc_tls_watch *w, uint64_t now_ms, uint64_t timeout_ms)
{
	bool late = now_ms - w->started_ms + TIMEOUT_SLACK_MS >= timeout_ms;

	if (w->finished)
		return PC_TLS_FAILED_NOTHING;
	/* a port check that connects and leaves has begun no handshake */
	if (w->first_byte < 0)
		return late && !w->eof ? PC_TLS_FAILED_TIMEOUT : PC_TLS_FAILED_NOTHING;
	if (w->first_byte != RECORD_HANDSHAKE)
		return PC_TLS_FAILED_NOT_TLS;
	if (w->bad_versions)
		return PC_TLS_FAILED_PROTOCOL_VERSION;
	if (w->eof)
		return PC_TLS_FAILED_CLOSED;
	if (late)
		return PC_TLS_FAILED_TIMEOUT;
	if (w->flight_sent && !w->client_answered)
		return PC_TLS_FAILED_REFUSED_BY_CLIENT;
	return PC_TLS_FAILED_OTHER;
}

const char *
pc_tls_failure_name(enum pc_tls_failure f)
{
	static const char *const names[PC_TLS_FAILED_COUNT] = {
		[PC_TLS_FAILED_NOTHING] = "nothing",
		[PC_TLS_FAILED_TIMEOUT] = "timeout",
		[PC_TLS_FAILED_NOT_TLS] = "not_tls",
		[PC_TLS_FAILED_PROTOCOL_VERSION] = "protocol_version",
		[PC_TLS_FAILED_REFUSED_BY_CLIENT] = "refused_by_client",
		[PC_TLS_FAILED_CLOSED] = "closed",
		[PC_TLS_FAILED_OTHER] = "other",
	};

	return (unsigned)f < PC_TLS_FAILED_COUNT ? names[f] : "other";
}
