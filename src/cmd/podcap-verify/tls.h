/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * podcap-verify's TLS to an appliance's endpoint (cmd/podcap-verify/tls.c): --ca FILE
 * (the CA the server's certificate must chain to), --pin sha256:HEX (the
 * SHA-256 of the server's SubjectPublicKeyInfo, as appliance.access names
 * clients; repeatable: any of them), --cert FILE --cert-key FILE (the client's
 * certificate and its key for appliance.access; --key is the log's
 * verifier key). Applied to every URL it fetches: the
 * log's and the taps'. The program's own, not a library's: nothing outside
 * src/cmd/podcap-verify includes it.
 */
#ifndef PODCAP_VERIFY_TLS_H
#define PODCAP_VERIFY_TLS_H

#include <curl/curl.h>

#define VF_TLS_MAX_PINS 4

struct vf_tls {
	const char *ca, *cert, *key;
	unsigned npins;
	char pins[VF_TLS_MAX_PINS][64]; /* "sha256//BASE64", libcurl's form */
};

/* --pin sha256:HEX into o, in libcurl's form; exits 2 on a bad one or a fifth. */
void vf_tls_add_pin(struct vf_tls *o, const char *arg);
/* --cert and --cert-key come together: exits 2 otherwise. */
void vf_tls_check(const struct vf_tls *o);
/* The options on a handle; errbuf (CURL_ERROR_SIZE) gets libcurl's detail. */
void vf_tls_apply(CURL *curl, const struct vf_tls *o, char *errbuf);
/* A clear reason for a failed fetch: libcurl's, its detail, and what to check. */
void vf_tls_reason(CURLcode rc, const char *errbuf, char *out, size_t n);

#endif /* PODCAP_VERIFY_TLS_H */
