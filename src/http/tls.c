/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The endpoint's TLS credentials over GnuTLS (http/tls.h): read from the
 * pod map's files, checked as a whole before anything uses them, and
 * applied to each connection's session by the endpoint (tls_session.h).
 * A client's certificate is checked here, against the set's own client
 * CA, since libmicrohttpd only asks for it: GnuTLS keeps a handshake with
 * a bad certificate going, so the refusal is a 403 that can be counted.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gnutls/gnutls.h>
#include <gnutls/x509.h>
#include <sodium.h>

#include "base/fileio.h"
#include "tls.h"

#include "handshake.h"
#include "tls_session.h"

#define PEM_MAX (1u << 20) /* a chain or a CA bundle of 1 MiB is plenty */

struct pc_tls {
	int refs;                              /* atomic */
	gnutls_certificate_credentials_t cred; /* certificate, key and client CA */
	gnutls_priority_t prio;
	char *cert_pem, *key_pem; /* NUL-terminated, for libmicrohttpd */
	size_t key_len;
	char priorities[256];
	bool ask; /* client_ca set: certificates asked */
	struct pc_access rules;
};

/* Which of the files or strings a load failed on, for the pod map's position. */
enum part {
	PART_CERTIFICATE,
	PART_KEY,
	PART_CLIENT_CA,
	PART_PRIORITIES
};

/* A whole PEM file, or NULL with err set. */
static char *
read_pem(const char *what, const char *path, size_t *len, struct pc_error *err)
{
	char *text = pc_read_file(path, PEM_MAX, len);

	if (text == NULL)
		pc_error_errno(err, "cannot read the %s %s", what, path);
	return text;
}

static int
load_pair(struct pc_tls *t, const char *cert, const char *key, enum part *bad, struct pc_error *err)
{
	size_t clen;

	*bad = PART_CERTIFICATE;
	t->cert_pem = read_pem("certificate", cert, &clen, err);
	if (t->cert_pem == NULL)
		return -1;
	*bad = PART_KEY;
	t->key_pem = read_pem("key", key, &t->key_len, err);
	if (t->key_pem == NULL)
		return -1;
	gnutls_datum_t cd = { (unsigned char *)t->cert_pem, (unsigned)clen };
	gnutls_datum_t kd = { (unsigned char *)t->key_pem, (unsigned)t->key_len };
	int rc =
	    gnutls_certificate_set_x509_key_mem2(t->cred, &cd, &kd, GNUTLS_X509_FMT_PEM, NULL, 0);
	if (rc < 0) {
		/* a key that is not the certificate's reads as a refused key */
		*bad = rc == GNUTLS_E_CERTIFICATE_KEY_MISMATCH ? PART_KEY : PART_CERTIFICATE;
		return pc_error_set(err, "GnuTLS refuses the certificate %s with the key %s: %s",
				    cert, key, gnutls_strerror(rc));
	}
	return 0;
}

static int
load_client_ca(struct pc_tls *t, const char *ca, struct pc_error *err)
{
	size_t len;
	char *pem;

	if (ca == NULL || ca[0] == '\0')
		return 0;
	pem = read_pem("client CA", ca, &len, err);
	if (pem == NULL)
		return -1;
	gnutls_datum_t d = { (unsigned char *)pem, (unsigned)len };
	int n = gnutls_certificate_set_x509_trust_mem(t->cred, &d, GNUTLS_X509_FMT_PEM);
	free(pem);
	if (n <= 0)
		return pc_error_set(err, "no CA certificate GnuTLS accepts in %s%s%s", ca,
				    n < 0 ? ": " : "", n < 0 ? gnutls_strerror(n) : "");
	t->ask = true;
	return 0;
}

static int
load_priorities(struct pc_tls *t, const char *prio, struct pc_error *err)
{
	const char *where = NULL;
	int rc = gnutls_priority_init(&t->prio, prio, &where);

	if (rc < 0) {
		t->prio = NULL;
		return pc_error_set(err, "GnuTLS refuses the priorities at '%.40s': %s",
				    where != NULL ? where : prio, gnutls_strerror(rc));
	}
	snprintf(t->priorities, sizeof(t->priorities), "%s", prio);
	return 0;
}

static struct pc_tls *
load(const char *cert, const char *key, const char *ca, const char *prio, enum part *bad,
     struct pc_error *err)
{
	struct pc_tls *t = calloc(1, sizeof(*t));

	if (t == NULL) {
		pc_error_set(err, "tls: out of memory");
		return NULL;
	}
	t->refs = 1;
	if (gnutls_certificate_allocate_credentials(&t->cred) < 0) {
		free(t);
		pc_error_set(err, "tls: out of memory");
		return NULL;
	}
	if (load_pair(t, cert, key, bad, err) != 0 ||
	    (*bad = PART_CLIENT_CA, load_client_ca(t, ca, err)) != 0 ||
	    (*bad = PART_PRIORITIES, load_priorities(t, prio, err)) != 0) {
		pc_tls_put(t);
		return NULL;
	}
	return t;
}

struct pc_tls *
pc_tls_load(const struct pc_config *cfg, struct pc_error *err)
{
	const struct pc_tls_cfg *c = &cfg->tls;
	const struct pc_mark at[] = {
		[PART_CERTIFICATE] = c->certificate_mark,
		[PART_KEY] = c->key_mark,
		[PART_CLIENT_CA] = c->client_ca_mark,
		[PART_PRIORITIES] = c->priorities_mark,
	};
	enum part bad = PART_CERTIFICATE;
	struct pc_tls *t = load(c->certificate, c->key, c->client_ca, c->priorities, &bad, err);

	if (t == NULL) {
		pc_config_error_at(cfg, at[bad], err);
		return NULL;
	}
	t->rules = cfg->access;
	return t;
}

struct pc_tls *
pc_tls_load_files(const char *cert, const char *key, const char *client_ca, struct pc_error *err)
{
	enum part bad;

	return load(cert, key, client_ca, PC_TLS_DEFAULT_PRIORITIES, &bad, err);
}

struct pc_tls *
pc_tls_get(struct pc_tls *t)
{
	__atomic_add_fetch(&t->refs, 1, __ATOMIC_RELAXED);
	return t;
}

void
pc_tls_put(struct pc_tls *t)
{
	if (t == NULL || __atomic_sub_fetch(&t->refs, 1, __ATOMIC_ACQ_REL) != 0)
		return;
	if (t->prio != NULL)
		gnutls_priority_deinit(t->prio);
	gnutls_certificate_free_credentials(t->cred);
	if (t->key_pem != NULL)
		sodium_memzero(t->key_pem, t->key_len);
	free(t->key_pem);
	free(t->cert_pem);
	free(t);
}

const char *
pc_tls_cert_pem(const struct pc_tls *t)
{
	return t->cert_pem;
}

const char *
pc_tls_key_pem(const struct pc_tls *t)
{
	return t->key_pem;
}

const char *
pc_tls_priorities(const struct pc_tls *t)
{
	return t->priorities;
}

unsigned
pc_tls_versions(const struct pc_tls *t)
{
	const unsigned *list;
	unsigned mask = 0;
	int n = gnutls_priority_protocol_list(t->prio, &list);

	for (int i = 0; i < n; i++) {
		/* GNUTLS_SSL3 is wire version 3.0, and each TLS after it one more */
		if (list[i] >= GNUTLS_SSL3 && list[i] <= GNUTLS_TLS1_3)
			mask |= PC_TLS_VERSION_BIT(list[i] - GNUTLS_SSL3);
	}
	return mask;
}

const struct pc_access *
pc_tls_rules(const struct pc_tls *t)
{
	return t->ask ? &t->rules : NULL;
}

int
pc_tls_session_setup(const struct pc_tls *t, gnutls_session_t s)
{
	/* replaces what libmicrohttpd set from the set it was started with */
	if (gnutls_credentials_set(s, GNUTLS_CRD_CERTIFICATE, t->cred) < 0 ||
	    gnutls_priority_set(s, t->prio) < 0)
		return -1;
	if (t->ask)
		gnutls_certificate_server_set_request(s, GNUTLS_CERT_REQUEST);
	return 0;
}

/* Expired or not yet valid, and otherwise of the client CA. */
static bool
only_time(unsigned status)
{
	const unsigned time = GNUTLS_CERT_EXPIRED | GNUTLS_CERT_NOT_ACTIVATED;

	return (status & time) != 0 && (status & ~(time | GNUTLS_CERT_INVALID)) == 0;
}

/* The subject and key of the client's own certificate, the first of its chain. */
static int
identify(const gnutls_datum_t *der, struct pc_http_peer *p, char *subject, size_t n)
{
	gnutls_x509_crt_t crt;
	gnutls_datum_t dn = { NULL, 0 };
	size_t idlen = sizeof(p->spki_sha256);
	int ok = -1;

	if (gnutls_x509_crt_init(&crt) < 0)
		return -1;
	if (gnutls_x509_crt_import(crt, der, GNUTLS_X509_FMT_DER) >= 0 &&
	    gnutls_x509_crt_get_dn3(crt, &dn, 0) >= 0 && dn.size < n &&
	    gnutls_x509_crt_get_key_id(crt, GNUTLS_KEYID_USE_SHA256, p->spki_sha256, &idlen) >= 0 &&
	    idlen == sizeof(p->spki_sha256)) {
		memcpy(subject, dn.data, dn.size);
		subject[dn.size] = '\0';
		p->subject = subject;
		ok = 0;
	}
	gnutls_free(dn.data);
	gnutls_x509_crt_deinit(crt);
	return ok;
}

void
pc_tls_session_peer(const struct pc_tls *t, gnutls_session_t s, struct pc_http_peer *p,
		    char *subject, size_t n)
{
	gnutls_typed_vdata_st purpose = {
		.type = GNUTLS_DT_KEY_PURPOSE_OID,
		.data = (unsigned char *)(uintptr_t)GNUTLS_KP_TLS_WWW_CLIENT,
	};
	const gnutls_datum_t *chain;
	unsigned len = 0, status = 0;

	memset(p, 0, sizeof(*p));
	p->state = PC_PEER_ANYONE;
	if (!t->ask)
		return;
	chain = gnutls_certificate_get_peers(s, &len);
	p->state = PC_PEER_NONE;
	if (chain == NULL || len == 0)
		return;
	p->state = PC_PEER_UNTRUSTED;
	if (gnutls_certificate_verify_peers(s, &purpose, 1, &status) < 0)
		return;
	if (status != 0) {
		if (only_time(status))
			p->state = PC_PEER_EXPIRED;
		return;
	}
	if (identify(&chain[0], p, subject, n) == 0)
		p->state = PC_PEER_TRUSTED;
}
