/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * podcap-verify's sources (cmd/podcap-verify/fetch.h): the pull endpoint
 * of docs/log-format.md ("HTTP endpoints") through libcurl, and a ledger
 * directory read as a reader of it. Neither trusts what it is given more
 * than the verifier does: a response longer than MAX_BODY or not framed
 * as the endpoint frames records is an error, and every record goes to
 * the verifier, which checks it.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>

#include "base/base64.h"
#include "base/bytes.h"
#include "log/ledger.h"
#include "log/merkle.h"
#include "log/note.h"
#include "log/record.h"

#include "fetch.h"
#include "options.h"
#include "taps.h"

#define CHUNK    1000                /* records per /v1/records request */
#define MAX_BODY ((size_t)512 << 20) /* largest HTTP response accepted */

struct body {
	uint8_t *p;
	size_t len, cap;
	bool too_big;
};

/* libcurl's detail of the last failed transfer, for vf_tls_reason */
static char curl_err[CURL_ERROR_SIZE];

static size_t
on_data(char *data, size_t size, size_t n, void *arg)
{
	struct body *b = arg;
	size_t add = size * n;

	if (add > MAX_BODY - b->len) {
		b->too_big = true;
		return 0;
	}
	if (b->len + add + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 65536;
		while (cap < b->len + add + 1)
			cap *= 2;
		uint8_t *p = realloc(b->p, cap);
		if (p == NULL)
			return 0;
		b->p = p;
		b->cap = cap;
	}
	memcpy(b->p + b->len, data, add);
	b->len += add;
	b->p[b->len] = '\0';
	return add;
}

/* GETs base + path; the body on 200, exits 2 otherwise. */
static void
http_get(CURL *curl, const char *base, const char *path, struct body *b)
{
	char url[2048];
	long status = 0;

	snprintf(url, sizeof(url), "%s%s", base, path);
	free(b->p);
	memset(b, 0, sizeof(*b));
	curl_easy_setopt(curl, CURLOPT_URL, url);
	curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, on_data);
	curl_easy_setopt(curl, CURLOPT_WRITEDATA, b);
	CURLcode rc = curl_easy_perform(curl);
	if (b->too_big)
		vf_die_io("%s: response larger than %zu bytes", url, MAX_BODY);
	if (rc != CURLE_OK) {
		char why[CURL_ERROR_SIZE + 256];
		vf_tls_reason(rc, curl_err, why, sizeof(why));
		vf_die_io("%s: %s", url, why);
	}
	curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
	if (status != 200)
		vf_die_io("%s: HTTP status %ld", url, status);
	if (b->p == NULL) {
		b->p = calloc(1, 1);
		if (b->p == NULL)
			vf_die_io("out of memory");
	}
}

static CURL *
http_open(const struct vf_tls *tls)
{
	CURL *curl;

	if (curl_global_init(CURL_GLOBAL_DEFAULT) != 0 || (curl = curl_easy_init()) == NULL)
		vf_die_io("cannot initialise libcurl");
	curl_easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT, 10L);
	curl_easy_setopt(curl, CURLOPT_TIMEOUT, 600L);
	curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(curl, CURLOPT_USERAGENT, "podcap-verify");
	vf_tls_apply(curl, tls, curl_err);
	return curl;
}

/* The URL without its trailing slashes, which the paths bring their own of. */
static void
base_of(const char *url, char *base, size_t len)
{
	size_t n = strlen(url);

	while (n > 0 && url[n - 1] == '/')
		n--;
	if (n == 0 || n >= len)
		vf_die_io("bad --url");
	memcpy(base, url, n);
	base[n] = '\0';
}

/* One /v1/records response: up to count length-prefixed records; how many it held. */
static uint64_t
take_records(struct pc_verify *v, const struct body *b, uint64_t count, const char *base,
	     const char *path)
{
	uint64_t got = 0;

	for (size_t off = 0; off < b->len && got < count; got++) {
		if (b->len - off < 4)
			vf_die_io("%s%s: malformed response", base, path);
		uint32_t len = pc_load_be32(b->p + off);
		if (len > PC_RECORD_MAX || b->len - off - 4 < len)
			vf_die_io("%s%s: malformed response", base, path);
		vf_take_record(v, b->p + off + 4, len, NULL);
		off += 4 + (size_t)len;
	}
	return got;
}

/* The records from where v resumes to the checkpoint's size, CHUNK at a time. */
static void
fetch_records(struct pc_verify *v, CURL *curl, const char *base, struct body *b)
{
	uint64_t size = pc_verify_size(v), from = pc_verify_resume_at(v);
	char path[128];

	while (from < size) {
		uint64_t count = size - from < CHUNK ? size - from : CHUNK;

		snprintf(path, sizeof(path), "/v1/records?from=%" PRIu64 "&count=%" PRIu64, from,
			 count);
		http_get(curl, base, path, b);
		uint64_t got = take_records(v, b, count, base, path);
		if (got == 0)
			break; /* the server has no more: reported as missing records */
		from += got;
	}
}

/* The proof that the tree v trusts from before is a prefix of the checkpoint's. */
static void
fetch_consistency(struct pc_verify *v, CURL *curl, const char *base, struct body *b)
{
	uint64_t old = pc_verify_trusted_size(v), size = pc_verify_size(v);
	uint8_t proof[PC_MAX_PROOF][PC_HASH_LEN];
	size_t np = 0;
	char path[128], *save = NULL;

	if (old == 0 || old >= size)
		return;
	snprintf(path, sizeof(path), "/v1/proof/consistency?old=%" PRIu64 "&new=%" PRIu64, old,
		 size);
	http_get(curl, base, path, b);
	for (char *line = strtok_r((char *)b->p, "\n", &save); line != NULL;
	     line = strtok_r(NULL, "\n", &save)) {
		size_t bin;
		if (np == PC_MAX_PROOF ||
		    pc_base64_decode(proof[np], PC_HASH_LEN, line, strlen(line), &bin) != 0 ||
		    bin != PC_HASH_LEN)
			vf_die_io("%s%s: malformed proof", base, path);
		np++;
	}
	pc_verify_consistency(v, (const uint8_t(*)[PC_HASH_LEN])proof, np);
}

void
vf_fetch_url(struct pc_verify *v, const char *url, const struct vf_tls *tls, const char *cp,
	     size_t cp_len)
{
	char base[1024];
	struct body b = { 0 };

	base_of(url, base, sizeof(base));
	CURL *curl = http_open(tls);
	if (cp == NULL) {
		http_get(curl, base, "/v1/checkpoint", &b);
		cp = (const char *)b.p;
		cp_len = b.len;
	}
	if (pc_verify_checkpoint(v, cp, cp_len) == 0) {
		fetch_records(v, curl, base, &b);
		fetch_consistency(v, curl, base, &b);
	}
	free(b.p);
	curl_easy_cleanup(curl);
	curl_global_cleanup();
}

/* The records from where v resumes to the checkpoint's size, as far as the ledger holds them. */
static void
read_records(struct pc_verify *v, struct pc_ledger *l, const char *dir)
{
	uint64_t size = pc_verify_size(v), have = pc_ledger_size(l);
	uint8_t *buf = malloc(PC_RECORD_MAX), leaf[PC_HASH_LEN];

	if (buf == NULL)
		vf_die_io("out of memory");
	for (uint64_t i = pc_verify_resume_at(v); i < size && i < have; i++) {
		long len = pc_ledger_record(l, i, buf, PC_RECORD_MAX);
		if (len < 0)
			vf_die_io("%s: record %" PRIu64 ": %s", dir, i, strerror(errno));
		bool stored = pc_ledger_leaf(l, i, leaf) == 0;
		vf_take_record(v, buf, (size_t)len, stored ? leaf : NULL);
	}
	free(buf);
}

void
vf_fetch_ledger(struct pc_verify *v, const char *dir, const char *cp, size_t cp_len)
{
	struct pc_error err;
	char note[PC_NOTE_MAX + 1];
	/* resumed: seek past the records verified before rather than walk them */
	struct pc_ledger *l =
	    pc_ledger_open_ro_from(dir, pc_verify_resume_at(v), pc_verify_resume_bytes(v), &err);

	if (l == NULL)
		vf_die_io("%s", err.msg);
	if (cp == NULL) {
		long n = pc_ledger_checkpoint(l, note, sizeof(note));
		if (n <= 0)
			vf_die_io("ledger %s has no checkpoint to verify", dir);
		cp = note;
		cp_len = (size_t)n;
	}
	if (pc_verify_checkpoint(v, cp, cp_len) == 0)
		read_records(v, l, dir);
	pc_ledger_close(l);
}

void
vf_fetch_log(struct pc_verify *v, const char *source, const struct vf_tls *tls)
{
	if (strncmp(source, "http://", 7) == 0 || strncmp(source, "https://", 8) == 0)
		vf_fetch_url(v, source, tls, NULL, 0);
	else
		vf_fetch_ledger(v, source, NULL, 0);
}
