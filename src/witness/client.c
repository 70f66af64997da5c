/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Submitting checkpoints to a C2SP tlog-witness with libcurl.
 */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>

#include "log/tlog_witness.h"

#include "client.h"

#define ANSWER_MAX 4096

struct answer {
	char buf[ANSWER_MAX];
	size_t len;
	int overflow;
};

static size_t
on_body(char *data, size_t size, size_t n, void *arg)
{
	struct answer *a = arg;
	size_t len = size * n;

	if (len > sizeof(a->buf) - 1 - a->len) {
		a->overflow = 1;
		return 0;
	}
	memcpy(a->buf + a->len, data, len);
	a->len += len;
	return len;
}

int
pc_wclient_init(struct pc_wclient *c, const char *prefix, const struct pc_verifier_key *vk,
		long timeout_ms, struct pc_error *err)
{
	size_t plen = strlen(prefix);

	memset(c, 0, sizeof(*c));
	while (plen > 0 && prefix[plen - 1] == '/')
		plen--;
	if (plen == 0 ||
	    (size_t)snprintf(c->url, sizeof(c->url), "%.*s/add-checkpoint", (int)plen, prefix) >=
		sizeof(c->url))
		return pc_error_set(err, "witness URL \"%s\" is empty or too long", prefix);
	c->vk = *vk;
	c->timeout_ms = timeout_ms;
	c->curl = curl_easy_init();
	if (c->curl == NULL)
		return pc_error_set(err, "libcurl failed to initialise");
	return 0;
}

void
pc_wclient_free(struct pc_wclient *c)
{
	if (c->curl != NULL)
		curl_easy_cleanup(c->curl);
	c->curl = NULL;
}

static int
on_progress(void *arg, curl_off_t dt, curl_off_t dn, curl_off_t ut, curl_off_t un)
{
	const int *stop = arg;

	(void)dt;
	(void)dn;
	(void)ut;
	(void)un;
	return stop != NULL && __atomic_load_n(stop, __ATOMIC_RELAXED) ? 1 : 0;
}

/* One POST; the HTTP status, or 0 with err when there was no answer. */
static long
post(struct pc_wclient *c, const char *body, size_t len, struct answer *a, char *ctype,
     size_t ctlen, struct pc_error *err)
{
	struct curl_slist *hdr = curl_slist_append(NULL, "Content-Type: text/plain");
	char curl_err[CURL_ERROR_SIZE] = "";
	CURL *h = c->curl;
	const char *ct = NULL;
	long status = 0;
	CURLcode rc;

	a->len = 0;
	a->overflow = 0;
	curl_easy_setopt(h, CURLOPT_URL, c->url);
	curl_easy_setopt(h, CURLOPT_POST, 1L);
	curl_easy_setopt(h, CURLOPT_POSTFIELDS, body);
	curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE, (long)len);
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdr);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, a);
	curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, c->timeout_ms);
	curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, c->timeout_ms);
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(h, CURLOPT_ERRORBUFFER, curl_err);
	curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
	/* a witness the log cannot authenticate could be anyone's: refuse it, never below 1.2 */
	curl_easy_setopt(h, CURLOPT_SSLVERSION, (long)CURL_SSLVERSION_TLSv1_2);
	if (c->ca[0] != '\0')
		curl_easy_setopt(h, CURLOPT_CAINFO, c->ca);
	curl_easy_setopt(h, CURLOPT_NOPROGRESS, c->stop == NULL ? 1L : 0L);
	curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, on_progress);
	curl_easy_setopt(h, CURLOPT_XFERINFODATA, (void *)(uintptr_t)c->stop);
	rc = curl_easy_perform(h);
	curl_slist_free_all(hdr);
	curl_easy_setopt(h, CURLOPT_ERRORBUFFER, NULL);
	if (rc != CURLE_OK) {
		pc_error_set(err, "%s: %s", c->url,
			     curl_err[0] != '\0' ? curl_err : curl_easy_strerror(rc));
		return 0;
	}
	curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
	curl_easy_getinfo(h, CURLINFO_CONTENT_TYPE, &ct);
	snprintf(ctype, ctlen, "%s", ct != NULL ? ct : "");
	a->buf[a->len] = '\0';
	return status;
}

/* The first line of the answer, for a message. */
static const char *
first_line(struct answer *a)
{
	a->buf[strcspn(a->buf, "\n")] = '\0';
	return a->buf;
}

/*
 * A 200's lines: each is tried after the note (tlog-witness: the answer
 * appended to the note verifies as a note), and the first that is a valid
 * cosignature by the witness's key is kept. Lines of other keys are ignored.
 */
static enum pc_wclient_result
take_cosignature(struct pc_wclient *c, const char *note, size_t note_len, struct answer *a,
		 char *line, size_t linelen, uint64_t *t, struct pc_error *err)
{
	static _Thread_local char one[PC_NOTE_MAX + ANSWER_MAX];
	const char *p, *nl, *end = a->buf + a->len;
	size_t n;

	for (p = a->buf; p < end && (nl = memchr(p, '\n', (size_t)(end - p))) != NULL; p = nl + 1) {
		n = (size_t)(nl + 1 - p);
		if (n >= linelen || note_len + n > sizeof(one))
			continue;
		memcpy(one, note, note_len);
		memcpy(one + note_len, p, n);
		if (pc_cosig_verify(one, note_len + n, &c->vk, t, NULL) == 0) {
			memcpy(line, p, n);
			line[n] = '\0';
			return PC_WCLIENT_COSIGNED;
		}
	}
	pc_error_set(err, "%s: 200 without a valid cosignature by %s+%08x", c->url, c->vk.name,
		     (unsigned)c->vk.id);
	return PC_WCLIENT_BAD_ANSWER;
}

enum pc_wclient_result
pc_wclient_submit(struct pc_wclient *c, const char *note, size_t note_len,
		  const struct pc_checkpoint *cp, pc_leaf_fn leaf, void *ctx, char *line,
		  size_t linelen, uint64_t *t, long *status, struct pc_error *err)
{
	static _Thread_local char body[PC_WITNESS_REQ_MAX];
	static _Thread_local struct answer a;
	uint8_t proof[PC_MAX_PROOF][PC_HASH_LEN];
	char ctype[128];
	size_t np, len;
	uint64_t held;
	int tries;

	*status = 0;
	for (tries = 0; tries < 2; tries++) {
		if (c->size > cp->size) {
			pc_error_set(err,
				     "%s: the witness holds size %" PRIu64
				     ", past this checkpoint's %" PRIu64,
				     c->url, c->size, cp->size);
			return PC_WCLIENT_CONFLICT;
		}
		if (pc_merkle_consistency_proof(leaf, ctx, c->size, cp->size, proof, &np) != 0 ||
		    np > PC_WITNESS_MAX_PROOF) {
			pc_error_set(err, "cannot read the log for a proof from %" PRIu64, c->size);
			return PC_WCLIENT_DOWN;
		}
		len = pc_add_checkpoint_format(c->size, (const uint8_t(*)[PC_HASH_LEN])proof, np,
					       note, note_len, body, sizeof(body));
		if (len == 0) {
			pc_error_set(err, "the checkpoint does not fit a request");
			return PC_WCLIENT_REFUSED;
		}
		*status = post(c, body, len, &a, ctype, sizeof(ctype), err);
		if (*status == 0 || *status >= 500) {
			if (*status != 0)
				pc_error_set(err, "%s: %ld: %s", c->url, *status, first_line(&a));
			return PC_WCLIENT_DOWN;
		}
		if (*status == 200)
			break;
		if (*status == 422 && c->size == cp->size && cp->size != 0) {
			/* tlog-witness since 95978ca: another root at the size it holds. */
			pc_error_set(
			    err, "%s: 422: the witness holds another tree at size %" PRIu64 ": %s",
			    c->url, c->size, first_line(&a));
			return PC_WCLIENT_CONFLICT;
		}
		if (*status != 409) {
			pc_error_set(err, "%s: %ld: %s", c->url, *status, first_line(&a));
			return *status == 400 || *status == 403 || *status == 404 || *status == 422
			    ? PC_WCLIENT_REFUSED
			    : PC_WCLIENT_BAD_ANSWER;
		}
		if (strncmp(ctype, PC_WITNESS_SIZE_TYPE, strlen(PC_WITNESS_SIZE_TYPE)) != 0 ||
		    pc_witness_size_parse(a.buf, a.len, &held, err) != 0) {
			pc_error_set(err, "%s: 409 without a %s body", c->url,
				     PC_WITNESS_SIZE_TYPE);
			return PC_WCLIENT_BAD_ANSWER;
		}
		if (held == c->size) {
			/* v1.0.0's answer to another root at the same size: another branch. */
			pc_error_set(err,
				     "%s: 409: the witness holds another tree at size %" PRIu64,
				     c->url, held);
			return PC_WCLIENT_CONFLICT;
		}
		c->size = held;
	}
	if (*status != 200) {
		pc_error_set(err, "%s: 409 again from size %" PRIu64, c->url, c->size);
		return PC_WCLIENT_CONFLICT;
	}
	if (take_cosignature(c, note, note_len, &a, line, linelen, t, err) != PC_WCLIENT_COSIGNED)
		return PC_WCLIENT_BAD_ANSWER;
	c->size = cp->size;
	return PC_WCLIENT_COSIGNED;
}
