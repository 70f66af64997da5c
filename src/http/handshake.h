/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What became of one TLS connection's handshake with the endpoint
 * (http.c), for podcap_http_tls_handshake_failures_total. libmicrohttpd
 * runs the handshake, says nothing of how it ended and frees the session
 * before it says the connection closed; so a watch on the session keeps,
 * as the handshake goes, what tells the reasons apart: the first byte the
 * client sent, the versions its ClientHello offers, whether the
 * appliance's flight went out and the client answered it, whether the
 * client closed. Internal to src/http.
 *
 *	pc_tls_watch_start(&w, session, versions, now_ms);  before the handshake
 *	...                                                 GnuTLS feeds the watch
 *	r = pc_tls_watch_end(&w, now_ms, timeout_ms);       when the connection closed
 */
#ifndef PODCAP_HANDSHAKE_H
#define PODCAP_HANDSHAKE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <gnutls/gnutls.h>

/* Why a handshake did not finish; each a label of the counter. */
enum pc_tls_failure {
	PC_TLS_FAILED_NOTHING = 0,       /* it finished, or the client sent nothing and left */
	PC_TLS_FAILED_TIMEOUT,           /* not finished within the endpoint's timeout */
	PC_TLS_FAILED_NOT_TLS,           /* the first byte opens no TLS handshake record */
	PC_TLS_FAILED_PROTOCOL_VERSION,  /* its ClientHello offers no version allowed */
	PC_TLS_FAILED_REFUSED_BY_CLIENT, /* the client ended it on the appliance's certificate */
	PC_TLS_FAILED_CLOSED,            /* the client closed the connection part way */
	PC_TLS_FAILED_OTHER,
	PC_TLS_FAILED_COUNT,
};

/* Versions as a mask: bit n for wire version 3.n (TLS 1.2 is 3.3, TLS 1.3 is 3.4). */
#define PC_TLS_VERSION_BIT(minor) (1u << (minor))

/* One connection's watch; its thread (libmicrohttpd's) alone touches it. */
struct pc_tls_watch {
	int fd;
	unsigned versions;    /* the versions the session's priorities allow */
	uint64_t started_ms;  /* CLOCK_MONOTONIC */
	int first_byte;       /* -1 until the client sent one */
	bool eof;             /* the client closed its side */
	bool bad_versions;    /* its ClientHello offers none of `versions` */
	bool flight_sent;     /* the appliance sent its flight, certificate and all */
	bool client_answered; /* a handshake message of the client's came after that */
	bool finished;        /* the client's Finished was read: the handshake is done */
};

/*
 * Before the handshake, on the session libmicrohttpd made for a
 * connection: the watch reads the socket for GnuTLS (the same recv) and
 * is told of each handshake message. w must stay put until the session
 * is freed. 0, or -1 when the session has no socket.
 */
int pc_tls_watch_start(struct pc_tls_watch *w, gnutls_session_t s, unsigned versions,
		       uint64_t now_ms);
/* When the connection closed: why its handshake did not finish, or NOTHING. Pure. */
enum pc_tls_failure pc_tls_watch_end(const struct pc_tls_watch *w, uint64_t now_ms,
				     uint64_t timeout_ms);
/*
 * The versions a ClientHello's body offers (its supported_versions, or
 * without one every version up to its legacy_version), or -1 when it
 * cannot be read. Pure: the bytes are the client's.
 */
int pc_tls_hello_versions(const uint8_t *hello, size_t len);
/* "timeout", "not_tls", ...: the label of the counter. */
const char *pc_tls_failure_name(enum pc_tls_failure f);

#endif /* PODCAP_HANDSHAKE_H */
