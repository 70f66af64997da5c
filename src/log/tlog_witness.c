/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * C2SP tlog-witness add-checkpoint: the request's encoding, its strict
 * parser (hostile input: fuzzed as tests/fuzz/fuzz_witness.c), the 409
 * body, the witness's decision, and the note it serves monitors.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <sodium.h>

#include "base/base64.h"
#include "base/bytes.h"
#include "tlog_witness.h"

#define HASH_B64_LEN 44

size_t
pc_add_checkpoint_format(uint64_t old_size, const uint8_t proof[][PC_HASH_LEN], size_t nproof,
			 const char *note, size_t note_len, char *out, size_t outlen)
{
	char b64[sodium_base64_ENCODED_LEN(PC_HASH_LEN, sodium_base64_VARIANT_ORIGINAL)];
	size_t pos, i;
	int n;

	if (nproof > PC_WITNESS_MAX_PROOF)
		return 0;
	n = snprintf(out, outlen, "old %" PRIu64 "\n", old_size);
	if (n < 0 || (size_t)n >= outlen)
		return 0;
	pos = (size_t)n;
	for (i = 0; i < nproof; i++) {
		sodium_bin2base64(b64, sizeof(b64), proof[i], PC_HASH_LEN,
				  sodium_base64_VARIANT_ORIGINAL);
		if (pos + HASH_B64_LEN + 1 > outlen)
			return 0;
		memcpy(out + pos, b64, HASH_B64_LEN);
		pos += HASH_B64_LEN;
		out[pos++] = '\n';
	}
	if (pos + 1 + note_len > outlen)
		return 0;
	out[pos++] = '\n';
	memcpy(out + pos, note, note_len);
	return pos + note_len;
}

int
pc_add_checkpoint_parse(const char *body, size_t len, struct pc_add_checkpoint *req,
			struct pc_error *err)
{
	const char *p = body, *end = body + len, *nl;
	size_t n, got;

	memset(req, 0, sizeof(*req));
	nl = memchr(p, '\n', len);
	if (nl == NULL || nl - p < 4 || memcmp(p, "old ", 4) != 0 ||
	    pc_decimal_parse(p + 4, (size_t)(nl - p - 4), &req->old_size) != 0)
		return pc_error_set(err, "the first line is not \"old <size>\"");
	for (p = nl + 1;; p = nl + 1) {
		nl = memchr(p, '\n', (size_t)(end - p));
		if (nl == NULL)
			return pc_error_set(err, "no empty line before the checkpoint");
		n = (size_t)(nl - p);
		if (n == 0)
			break;
		if (req->nproof == PC_WITNESS_MAX_PROOF)
			return pc_error_set(err, "more than %d consistency proof lines",
					    PC_WITNESS_MAX_PROOF);
		if (n != HASH_B64_LEN ||
		    pc_base64_decode(req->proof[req->nproof], PC_HASH_LEN, p, n, &got) != 0 ||
		    got != PC_HASH_LEN)
			return pc_error_set(err,
					    "consistency proof line %zu is not base64 of 32 bytes",
					    req->nproof + 1);
		req->nproof++;
	}
	req->note = nl + 1;
	req->note_len = (size_t)(end - req->note);
	if (req->note_len == 0)
		return pc_error_set(err, "no checkpoint after the empty line");
	if (req->note_len > PC_NOTE_MAX)
		return pc_error_set(err, "the checkpoint is longer than %d bytes", PC_NOTE_MAX);
	return 0;
}

int
pc_witness_size_parse(const char *body, size_t len, uint64_t *size, struct pc_error *err)
{
	if (len < 2 || body[len - 1] != '\n' || pc_decimal_parse(body, len - 1, size) != 0)
		return pc_error_set(err, "the conflict answer is not \"<size>\\n\"");
	return 0;
}

static int
no_line(void *ctx, const struct pc_note_sig *s)
{
	(void)ctx;
	(void)s;
	return 0;
}

/* RFC 6962 2.1: the hash of the empty tree is SHA-256 of the empty string. */
static int
is_empty_tree(const uint8_t root[PC_HASH_LEN])
{
	uint8_t empty[PC_HASH_LEN];

	crypto_hash_sha256(empty, NULL, 0);
	return sodium_memcmp(root, empty, PC_HASH_LEN) == 0;
}

static struct pc_witness_log *
find_log(struct pc_witness_log *logs, size_t nlogs, const char *origin)
{
	size_t i;

	for (i = 0; i < nlogs; i++)
		if (strcmp(logs[i].origin, origin) == 0)
			return &logs[i];
	return NULL;
}

int
pc_witness_check(struct pc_witness_log *logs, size_t nlogs, const struct pc_add_checkpoint *req,
		 struct pc_witness_log **log, struct pc_checkpoint *cp, size_t *body_len,
		 struct pc_error *err)
{
	struct pc_witness_log *l;
	struct pc_error why;

	*log = NULL;
	/* The origin is read before any signature: an unknown log is 404, not 403. */
	if (pc_note_each_sig(req->note, req->note_len, body_len, no_line, NULL, &why) != 0 ||
	    pc_checkpoint_parse_body(req->note, *body_len, cp, &why) != 0) {
		/* A note whose body does not parse has no origin to look up. */
		pc_error_set(err, "%s", why.msg);
		return 400;
	}
	l = find_log(logs, nlogs, cp->origin);
	if (l == NULL) {
		pc_error_set(err, "unknown log origin \"%s\"", cp->origin);
		return 404;
	}
	*log = l;
	if (pc_note_verify(req->note, req->note_len, &l->key, body_len, &why) != 0) {
		pc_error_set(err, "%s", why.msg);
		return 403;
	}
	if (req->old_size > cp->size) {
		pc_error_set(err, "old size %" PRIu64 " is past the checkpoint's size %" PRIu64,
			     req->old_size, cp->size);
		return 400;
	}
	if (req->old_size != l->size) {
		pc_error_set(err, "old size %" PRIu64 " is not the size last cosigned, %" PRIu64,
			     req->old_size, l->size);
		return 409;
	}
	if (cp->size == 0 && !is_empty_tree(cp->root)) {
		pc_error_set(err, "a checkpoint of size 0 whose root is not the empty tree's");
		return 422;
	}
	/* At size 0 the rule above already holds the root to the empty tree's. */
	if (cp->size == l->size && l->size != 0 &&
	    sodium_memcmp(cp->root, l->root, PC_HASH_LEN) != 0) {
		pc_error_set(err, "a different root at the size last cosigned, %" PRIu64, l->size);
		return 422;
	}
	if (req->old_size == 0 ? req->nproof != 0
			       : pc_merkle_verify_consistency(
				     req->old_size, cp->size, l->root, cp->root,
				     (const uint8_t(*)[PC_HASH_LEN])req->proof, req->nproof) != 0) {
		pc_error_set(
		    err, "the consistency proof from %" PRIu64 " to %" PRIu64 " does not verify",
		    req->old_size, cp->size);
		return 422;
	}
	return 200;
}

/* The served note as it is built: the log's lines are copied as they come. */
struct served {
	const struct pc_verifier_key *log;
	char *out;
	size_t pos, len;
	int kept, full;
};

static int
keep_log_line(void *ctx, const struct pc_note_sig *s)
{
	struct served *sv = ctx;
	uint8_t raw[4 + crypto_sign_BYTES];
	char b64[sodium_base64_ENCODED_LEN(sizeof(raw), sodium_base64_VARIANT_ORIGINAL)];
	int n;

	if (s->id != sv->log->id || s->name_len != strlen(sv->log->name) ||
	    memcmp(s->name, sv->log->name, s->name_len) != 0 || s->sig_len != crypto_sign_BYTES)
		return 0;
	pc_store_be32(raw, s->id);
	memcpy(raw + 4, s->sig, crypto_sign_BYTES);
	sodium_bin2base64(b64, sizeof(b64), raw, sizeof(raw), sodium_base64_VARIANT_ORIGINAL);
	n = snprintf(sv->out + sv->pos, sv->len - sv->pos, "\xe2\x80\x94 %s %s\n", sv->log->name,
		     b64);
	if (n < 0 || (size_t)n >= sv->len - sv->pos) {
		sv->full = 1;
		return 1;
	}
	sv->pos += (size_t)n;
	sv->kept++;
	return 0;
}

size_t
pc_witness_served_note(const struct pc_verifier_key *log, const char *note, size_t len,
		       const char *cosig, size_t cosig_len, char *out, size_t outlen)
{
	struct served sv = { .log = log, .out = out, .len = outlen };
	size_t blen;

	if (pc_note_each_sig(note, len, &blen, no_line, NULL, NULL) != 0 || blen + 1 >= outlen)
		return 0;
	memcpy(out, note, blen);
	out[blen] = '\n';
	sv.pos = blen + 1;
	if (pc_note_each_sig(note, len, &blen, keep_log_line, &sv, NULL) != 0 || sv.kept == 0 ||
	    cosig_len == 0 || cosig[cosig_len - 1] != '\n' || sv.pos + cosig_len >= outlen)
		return 0;
	memcpy(out + sv.pos, cosig, cosig_len);
	sv.pos += cosig_len;
	out[sv.pos] = '\0';
	return sv.pos;
}
