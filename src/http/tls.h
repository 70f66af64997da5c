/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The endpoint's TLS credentials of one pod map (appliance.tls and
 * appliance.access, src/http/tls.c over GnuTLS): its certificate and key,
 * the CA its clients must chain to, the priorities and the access rules,
 * read and checked together. Reference counted: the endpoint holds the set
 * in force and every connection the set it was accepted with, so a SIGHUP
 * installs a new set for the connections made after it while the older
 * ones finish with theirs.
 *
 *	struct pc_tls *t = pc_tls_load(&cfg, &err);   at start and on SIGHUP
 *	pc_http_set_tls(http, t);                     the endpoint takes it
 */
#ifndef PODCAP_TLS_H
#define PODCAP_TLS_H

#include "podmap/config.h"
#include "base/error.h"

struct pc_tls;

/*
 * Reads and checks the files of cfg->tls (cfg->tls.enabled must be set):
 * the certificate with its key, the client CA, the priority string. NULL
 * with err placed at the key of the file or string GnuTLS refused
 * (file:line:col of the pod map). The set holds one reference.
 */
struct pc_tls *pc_tls_load(const struct pc_config *cfg, struct pc_error *err);
/*
 * The same from paths, for podcap-witness: TLS 1.3 only; with client_ca
 * (NULL or "" for none) clients are asked for a certificate, and there are
 * no rules (pc_http_access_decide is not for it). NULL with err set.
 */
struct pc_tls *pc_tls_load_files(const char *cert, const char *key, const char *client_ca,
				 struct pc_error *err);
/* One more reference to t; returns t. Thread-safe, as pc_tls_put. */
struct pc_tls *pc_tls_get(struct pc_tls *t);
/* Drops one; the last frees the set and wipes its key. NULL is ignored. */
void pc_tls_put(struct pc_tls *t);

#endif /* PODCAP_TLS_H */
