/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * podcap-verify's TLS to an appliance's endpoint (cmd/podcap-verify/tls.c): --ca FILE
 * (the CA the server's certificate must chain to), --pin sha256:HEX (the
 * SHA-256 of the server's SubjectPublicKeyInfo, as appliance.access names
 * clients; repeatable: any of them), --cert FILE --cert-key FILE (the client's
 * certificate and its key for appliance.access; --key is the log's
 * verifier key). Applied to every URL it fetches: the
 * log's and the taps'.
 */
#ifndef PODCAP_VERIFY_TLS_H
#define PODCAP_VERIFY_TLS_H

#include <stdbool.h>

#include <curl/curl.h>

#define PC_VERIFY_TLS_MAX_PINS 4

struct pc_verify_tls {
	const char *ca, *cert, *key;
	unsigned npins;
	char pins[PC_VERIFY_TLS_MAX_PINS][64]; /* "sha256//BASE64", libcurl's form */
};

#define PC_VERIFY_TLS_OPTIONS                                                                \
	{ "ca", required_argument, NULL, 0x180 }, { "pin", required_argument, NULL, 0x181 }, \
	    { "cert", required_argument, NULL, 0x182 },                                      \
	{                                                                                    \
		"cert-key", required_argument, NULL, 0x183                                   \
	}

/* One of the options above into o: true if c was one (a bad one exits 2). */
bool pc_verify_tls_arg(int c, const char *arg, struct pc_verify_tls *o);
/* --cert and --cert-key come together: exits 2 otherwise. */
void pc_verify_tls_check(const struct pc_verify_tls *o);
/* The options on a handle; errbuf (CURL_ERROR_SIZE) gets libcurl's detail. */
void pc_verify_tls_apply(CURL *curl, const struct pc_verify_tls *o, char *errbuf);
/* A clear reason for a failed fetch: libcurl's, its detail, and what to check. */
void pc_verify_tls_reason(CURLcode rc, const char *errbuf, char *out, size_t n);

#endif /* PODCAP_VERIFY_TLS_H */
