/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What the endpoint (http.c) does with a credential set (http/tls.h) on
 * one connection's GnuTLS session: set it up before the handshake, and
 * after it learn who the client is. Internal to src/http.
 */
#ifndef PODCAP_TLS_SESSION_H
#define PODCAP_TLS_SESSION_H

#include <stddef.h>

#include <gnutls/gnutls.h>

#include "request.h"
#include "tls.h"

/* The set's certificate, key and priorities, for MHD_start_daemon (owned by t). */
const char *pc_tls_cert_pem(const struct pc_tls *t);
const char *pc_tls_key_pem(const struct pc_tls *t);
const char *pc_tls_priorities(const struct pc_tls *t);
/* The versions the priorities allow, as http/handshake.h's mask. */
unsigned pc_tls_versions(const struct pc_tls *t);
/* The access rules, or NULL when clients are not asked for a certificate. */
const struct pc_access *pc_tls_rules(const struct pc_tls *t);

/*
 * Before the handshake: the set's credentials and priorities on s, and a
 * certificate asked of the client when there are rules. 0 or -1.
 */
int pc_tls_session_setup(const struct pc_tls *t, gnutls_session_t s);
/*
 * After the handshake: what the client's certificate is worth against the
 * set's client CA (PC_PEER_*), and for a trusted one its subject (into
 * subject[n]) and the SHA-256 of its SubjectPublicKeyInfo.
 */
void pc_tls_session_peer(const struct pc_tls *t, gnutls_session_t s, struct pc_http_peer *p,
			 char *subject, size_t n);

#endif /* PODCAP_TLS_SESSION_H */
