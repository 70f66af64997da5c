/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target for the signed-note, checkpoint and verifier-key parsers
 * (src/log/note.h, keys.h) that podcap-verify runs on what a log
 * server sends and on its own --state and --key files. The input is tried
 * as each of:
 *
 *  - a checkpoint body: one that parses must format back to exactly the
 *    same bytes (the form is canonical);
 *  - a signed note, checked against a fixed key: whatever it claims, it
 *    cannot carry that key's signature, and a refusal has a reason;
 *  - a body that this target signs: printable text ending in a newline
 *    must verify, alone and beside another key's signature, with its
 *    body found whole;
 *  - a verifier key line: one that parses formats and parses back the same.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "base/keys.h"
#include "log/note.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct pc_signer_key signer, other;
static struct pc_verifier_key vk;

static void
make_key(struct pc_signer_key *k, const char *name, uint8_t seed_byte)
{
	uint8_t seed[crypto_sign_SEEDBYTES];

	memset(seed, seed_byte, sizeof(seed));
	crypto_sign_seed_keypair(k->pk, k->sk, seed);
	strcpy(k->name, name);
	k->id = pc_key_id(k->name, k->pk);
}

static void
init(void)
{
	static int done;

	if (done)
		return;
	if (sodium_init() < 0)
		abort();
	make_key(&signer, "podcap/fuzz-1", 0x42);
	make_key(&other, "example.com/other", 0x17);
	pc_signer_key_public(&signer, &vk);
	done = 1;
}

static void
check_body(const char *data, size_t size)
{
	struct pc_checkpoint cp;
	struct pc_error why;
	char *buf;

	why.msg[0] = '\0';
	if (pc_checkpoint_parse_body(data, size, &cp, &why) != 0) {
		if (why.msg[0] == '\0')
			abort();
		return;
	}
	buf = malloc(size + 1);
	if (buf == NULL)
		abort();
	if (pc_checkpoint_body(&cp, buf, size + 1) != size || memcmp(buf, data, size) != 0)
		abort();
	free(buf);
}

static void
check_note(const char *data, size_t size)
{
	struct pc_error why;
	size_t body_len;

	why.msg[0] = '\0';
	if (pc_note_verify(data, size, &vk, &body_len, &why) == 0 || why.msg[0] == '\0')
		abort();
}

static int
printable(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (s[i] != '\n' && (s[i] < 0x20 || s[i] > 0x7e))
			return 0;
	return 1;
}

/* The signature line `k` puts under `body`, appended to out at *len. */
static int
append_sig(const struct pc_signer_key *k, const char *body, size_t size, char *out, size_t *len,
	   size_t cap)
{
	char *note = malloc(size + 512);
	uint8_t sig[64];
	size_t n, line;

	if (note == NULL)
		abort();
	pc_note_sign_body(k, body, size, sig);
	n = pc_note_format(body, size, k->name, k->id, sig, note, size + 512);
	if (n == 0) {
		free(note);
		return -1;
	}
	line = n - size - 1;
	if (*len + line > cap)
		abort();
	memcpy(out + *len, note + size + 1, line);
	*len += line;
	free(note);
	return 0;
}

static void
check_signed(const char *data, size_t size)
{
	size_t cap = size + 1024, len, body_len;
	struct pc_error why;
	char *note;
	int order;

	if (size == 0 || data[size - 1] != '\n' || !printable(data, size))
		return;
	note = malloc(cap);
	if (note == NULL)
		abort();
	for (order = 0; order < 3; order++) {
		memcpy(note, data, size);
		note[size] = '\n';
		len = size + 1;
		if ((order == 2 && append_sig(&other, data, size, note, &len, cap) != 0) ||
		    append_sig(&signer, data, size, note, &len, cap) != 0 ||
		    (order == 1 && append_sig(&other, data, size, note, &len, cap) != 0))
			abort();
		if (pc_note_verify(note, len, &vk, &body_len, &why) != 0 || body_len != size)
			abort();
		/* any change to the body breaks the signature */
		note[size / 2] ^= 0x01;
		if (pc_note_verify(note, len, &vk, &body_len, &why) == 0)
			abort();
	}
	free(note);
}

static void
check_key(const char *data, size_t size)
{
	struct pc_verifier_key k, again;
	char *text, line[512];
	struct pc_error why;

	text = malloc(size + 1);
	if (text == NULL)
		abort();
	memcpy(text, data, size);
	text[size] = '\0';
	if (pc_verifier_key_parse(text, &k, &why) == 0) {
		if (pc_verifier_key_format(&k, line, sizeof(line)) != 0 ||
		    pc_verifier_key_parse(line, &again, &why) != 0 ||
		    strcmp(k.name, again.name) != 0 || k.id != again.id ||
		    memcmp(k.pk, again.pk, sizeof(k.pk)) != 0)
			abort();
	}
	free(text);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *s = (const char *)data;

	init();
	check_body(s, size);
	check_note(s, size);
	check_signed(s, size);
	check_key(s, size);
	return 0;
}
