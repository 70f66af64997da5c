/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * podcap-verify's TLS options (cmd/podcap-verify/tls.h). The verifier trusts the
 * operator's network no more than the operator: with --ca and --pin a log
 * served by a machine in the middle is refused before a byte of it is read.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "base/hex.h"

#include "tls.h"

#define PIN_PREFIX "sha256:"

static void __attribute__((noreturn)) bad(const char *opt, const char *arg, const char *why)
{
	fprintf(stderr, "podcap-verify: %s %s: %s\n", opt, arg, why);
	exit(2);
}

/* sha256:HEX, the form appliance.access and certtool's "Public Key ID" use, to libcurl's. */
void
vf_tls_add_pin(struct vf_tls *o, const char *arg)
{
	uint8_t h[32];
	const char *hex = arg + strlen(PIN_PREFIX);

	if (strncmp(arg, PIN_PREFIX, strlen(PIN_PREFIX)) != 0 ||
	    !pc_unhex(hex, strlen(hex), h, sizeof(h)))
		bad("--pin", arg,
		    "expected sha256: and 64 hex digits (the SHA-256 of the server's "
		    "SubjectPublicKeyInfo)");
	if (o->npins == VF_TLS_MAX_PINS)
		bad("--pin", arg, "at most 4 pins");
	char *out = o->pins[o->npins++];
	memcpy(out, "sha256//", 8);
	sodium_bin2base64(out + 8, sizeof(o->pins[0]) - 8, h, sizeof(h),
			  sodium_base64_VARIANT_ORIGINAL);
}

void
vf_tls_check(const struct vf_tls *o)
{
	if ((o->cert == NULL) != (o->key == NULL)) {
		fprintf(stderr, "podcap-verify: --cert and --cert-key come together\n");
		exit(2);
	}
}

void
vf_tls_apply(CURL *curl, const struct vf_tls *o, char *errbuf)
{
	char pins[VF_TLS_MAX_PINS * 64];
	size_t n = 0;

	errbuf[0] = '\0';
	curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, errbuf);
	/* never below TLS 1.2, whatever the library's default */
	curl_easy_setopt(curl, CURLOPT_SSLVERSION, (long)CURL_SSLVERSION_TLSv1_2);
	if (o->ca != NULL)
		curl_easy_setopt(curl, CURLOPT_CAINFO, o->ca);
	if (o->cert != NULL) {
		curl_easy_setopt(curl, CURLOPT_SSLCERT, o->cert);
		curl_easy_setopt(curl, CURLOPT_SSLKEY, o->key);
	}
	for (unsigned i = 0; i < o->npins; i++)
		n += (size_t)snprintf(pins + n, sizeof(pins) - n, "%s%s", i ? ";" : "", o->pins[i]);
	if (o->npins > 0)
		curl_easy_setopt(curl, CURLOPT_PINNEDPUBLICKEY, pins);
}

void
vf_tls_reason(CURLcode rc, const char *errbuf, char *out, size_t n)
{
	const char *hint = "";

	switch (rc) {
	case CURLE_PEER_FAILED_VERIFICATION:
		hint = ": the server's certificate does not chain to --ca (or the system's CAs) "
		       "or does not name the host: refused";
		break;
	case CURLE_SSL_PINNEDPUBKEYNOTMATCH:
		hint = ": the server's key is not the one --pin names: refused";
		break;
	case CURLE_SSL_CERTPROBLEM:
		hint = ": check --cert and --cert-key";
		break;
	case CURLE_SSL_CACERT_BADFILE:
		hint = ": check --ca";
		break;
	default:
		break;
	}
	snprintf(out, n, "%s%s%s%s", curl_easy_strerror(rc), errbuf[0] ? " (" : "", errbuf,
		 errbuf[0] ? ")" : "");
	size_t len = strlen(out);
	snprintf(out + len, n - len, "%s", hint);
}
