/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target for the auditor declaration parser
 * (src/log/declaration.h) that podcapd and podcap-audit run on a
 * MAP.sig file. The input is tried as each of:
 *
 *  - a declaration body: one that parses must format back to exactly the
 *    same bytes (one spelling), and have not-after later than not-before;
 *  - a signed note, opened with a fixed auditor key: whatever it claims, it
 *    cannot carry that key's signature, and a refusal has a reason;
 *  - a body that this target signs: it opens exactly when it parses.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "log/declaration.h"
#include "base/keys.h"
#include "log/note.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct pc_signer_key signer;
static struct pc_verifier_key vk;

static void
init(void)
{
	static int done;
	uint8_t seed[crypto_sign_SEEDBYTES];

	if (done)
		return;
	if (sodium_init() < 0)
		abort();
	memset(seed, 0x5a, sizeof(seed));
	crypto_sign_seed_keypair(signer.pk, signer.sk, seed);
	strcpy(signer.name, "auditor/fuzz");
	signer.id = pc_key_id(signer.name, signer.pk);
	pc_signer_key_public(&signer, &vk);
	done = 1;
}

/* 0 when the body parses (and then formats back the same), else -1. */
static int
check_body(const char *data, size_t size)
{
	struct pc_declaration d;
	struct pc_error why;
	char buf[PC_DECL_BODY_MAX];

	why.msg[0] = '\0';
	if (pc_declaration_parse_body(data, size, &d, &why) != 0) {
		if (why.msg[0] == '\0')
			abort();
		return -1;
	}
	if (d.not_after_ns <= d.not_before_ns ||
	    pc_declaration_body(&d, buf, sizeof(buf)) != size || memcmp(buf, data, size) != 0)
		abort();
	return 0;
}

static void
check_note(const char *data, size_t size)
{
	struct pc_declaration d;
	struct pc_error why;

	why.msg[0] = '\0';
	if (pc_declaration_open(data, size, &vk, 1, &d, NULL, &why) == 0 || why.msg[0] == '\0')
		abort();
}

static void
check_signed(const char *data, size_t size, int parses)
{
	char note[PC_NOTE_MAX];
	struct pc_declaration d;
	uint8_t sig[64];
	size_t n;

	if (size == 0 || size > PC_NOTE_MAX - 256)
		return;
	pc_note_sign_body(&signer, data, size, sig);
	n = pc_note_format(data, size, signer.name, signer.id, sig, note, sizeof(note));
	if (n == 0)
		return;
	if ((pc_declaration_open(note, n, &vk, 1, &d, NULL, NULL) == 0) != (parses == 0))
		abort();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *s = (const char *)data;
	int parses;

	init();
	parses = check_body(s, size);
	check_note(s, size);
	check_signed(s, size, parses);
	return 0;
}
