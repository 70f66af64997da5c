/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * C2SP tlog-cosignature cosignature/v1 (Ed25519): signing a checkpoint
 * body with a timestamp, and finding and checking a cosigner's line in a
 * note.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <sodium.h>

#include "base/bytes.h"
#include "cosig.h"
#include "note.h"

#define COSIG_HEADER  "cosignature/v1\n"
#define COSIG_RAW_LEN (4 + 8 + crypto_sign_BYTES) /* key id || timestamp || signature */
#define DASH          "\xe2\x80\x94 "

uint32_t
pc_cosig_key_id(const char *name, const uint8_t pk[32])
{
	return pc_key_id_alg(name, PC_COSIG_ALG, pk);
}

int
pc_cosig_vkey_parse(const char *text, struct pc_verifier_key *vk, struct pc_error *err)
{
	if (pc_verifier_key_parse_alg(text, PC_COSIG_ALG, vk, err) != 0)
		return pc_error_prefix(err, "not a cosigner (type 0x04) verifier key");
	return 0;
}

int
pc_cosig_vkey_format(const struct pc_verifier_key *vk, char *buf, size_t len)
{
	return pc_verifier_key_format_alg(vk, PC_COSIG_ALG, buf, len);
}

void
pc_cosig_vkey_of(const struct pc_signer_key *k, struct pc_verifier_key *vk)
{
	pc_signer_key_public(k, vk);
	vk->id = pc_cosig_key_id(vk->name, vk->pk);
}

const char *
pc_cosig_vkey_same(const struct pc_verifier_key *a, const struct pc_verifier_key *b)
{
	int name = strcmp(a->name, b->name) == 0;

	if (sodium_memcmp(a->pk, b->pk, sizeof(a->pk)) == 0)
		return name ? "key" : "public key";
	if (name)
		return "name";
	if (a->id == b->id)
		return "key id";
	return NULL;
}

size_t
pc_cosig_message(const char *body, size_t body_len, uint64_t t, char *out, size_t outlen)
{
	char head[sizeof(COSIG_HEADER) + 32];
	int n;

	if (body_len == 0 || body[body_len - 1] != '\n' || t > PC_COSIG_TIME_MAX)
		return 0;
	n = snprintf(head, sizeof(head), COSIG_HEADER "time %" PRIu64 "\n", t);
	if (n < 0 || (size_t)n >= sizeof(head) || (size_t)n + body_len > outlen)
		return 0;
	memcpy(out, head, (size_t)n);
	memcpy(out + n, body, body_len);
	return (size_t)n + body_len;
}

size_t
pc_cosig_sign(const struct pc_signer_key *k, const char *body, size_t body_len, uint64_t t,
	      char *line, size_t linelen)
{
	char msg[PC_NOTE_MAX + 64];
	uint8_t raw[COSIG_RAW_LEN];
	char b64[sodium_base64_ENCODED_LEN(COSIG_RAW_LEN, sodium_base64_VARIANT_ORIGINAL)];
	size_t mlen;
	int n;

	mlen = pc_cosig_message(body, body_len, t, msg, sizeof(msg));
	if (mlen == 0)
		return 0;
	pc_store_be32(raw, pc_cosig_key_id(k->name, k->pk));
	pc_store_be64(raw + 4, t);
	crypto_sign_detached(raw + 12, NULL, (const uint8_t *)msg, mlen, k->sk);
	sodium_bin2base64(b64, sizeof(b64), raw, sizeof(raw), sodium_base64_VARIANT_ORIGINAL);
	n = snprintf(line, linelen, DASH "%s %s\n", k->name, b64);
	if (n < 0 || (size_t)n >= linelen)
		return 0;
	return (size_t)n;
}

struct find_ctx {
	const struct pc_verifier_key *vk;
	const char *body;
	size_t body_len;
	uint64_t t;
	int found, bad;
};

static int
check_line(void *arg, const struct pc_note_sig *s)
{
	struct find_ctx *c = arg;
	char msg[PC_NOTE_MAX + 64];
	size_t mlen;
	uint64_t t;

	/* Lines of other keys (the log's own, other witnesses) are ignored. */
	if (s->id != c->vk->id || s->name_len != strlen(c->vk->name) ||
	    memcmp(s->name, c->vk->name, s->name_len) != 0)
		return 0;
	if (s->sig_len != 8 + crypto_sign_BYTES) {
		c->bad = 1;
		return 1;
	}
	t = pc_load_be64(s->sig);
	mlen = pc_cosig_message(c->body, c->body_len, t, msg, sizeof(msg));
	if (mlen == 0 ||
	    crypto_sign_verify_detached(s->sig + 8, (const uint8_t *)msg, mlen, c->vk->pk) != 0) {
		c->bad = t > PC_COSIG_TIME_MAX ? 2 : 1;
		return 1;
	}
	c->t = t;
	c->found = 1;
	return 1;
}

int
pc_cosig_verify(const char *note, size_t len, const struct pc_verifier_key *vk, uint64_t *t,
		struct pc_error *err)
{
	struct find_ctx c = { .vk = vk, .body = note };

	if (pc_note_each_sig(note, len, &c.body_len, check_line, &c, err) < 0)
		return -1;
	if (c.bad == 2)
		return pc_error_set(err, "cosignature by %s+%08x has a timestamp past 2^63 - 1",
				    vk->name, (unsigned)vk->id);
	if (c.bad)
		return pc_error_set(err, "bad cosignature by %s+%08x", vk->name, (unsigned)vk->id);
	if (!c.found)
		return pc_error_set(err, "no cosignature by %s+%08x", vk->name, (unsigned)vk->id);
	*t = c.t;
	return 0;
}
