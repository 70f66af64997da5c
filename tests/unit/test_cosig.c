/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * C2SP tlog-cosignature (cosignature/v1) and tlog-witness (add-checkpoint)
 * against the specifications' rules and examples, and against vectors that
 * Go's golang.org/x/mod/sumdb note and tlog packages wrote
 * (tests/interop/witness_vectors.go into tests/vectors/witness/).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <sodium.h>

#include "base/base64.h"
#include "base/bytes.h"
#include "log/cosig.h"
#include "base/hex.h"
#include "log/note.h"
#include "log/tlog_tiles.h"
#include "log/tlog_witness.h"
#include "verify/witness.h"

#include "testutil.h"

#define VEC  PC_SOURCE_ROOT "/tests/vectors/witness/"
#define DASH "\xe2\x80\x94 "

/* The tlog-cosignature specification's example. */
#define SPEC_BODY \
	"example.com/behind-the-sofa\n20852163\nCsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=\n"
/* clang-format off */
#define SPEC_NOTE                                                                       \
	SPEC_BODY "\n" DASH "example.com/behind-the-sofa "                              \
			    "Az3grlgtzPICa5OS8npVmf1Myq/5IZniMp+ZJurmRDeOoRDe4URYN7u5/" \
			    "Zhcyv2q1gGzGku9nTo+zyWE+xeMcTOAYQ8=\n" DASH                \
		  "witness.example.com/w1 "                                             \
		  "jWbPPwAAAABkGFDLEZMHwSRaJNiIDoe9DYn/"                                \
		  "zXcrtPHeolMI5OWXEhZCB9dlrDJsX3b2oyin1nPZqhf5nNo0xUe+mbIUBkBIfZ+qnA==\n"
/* clang-format on */

static char *
slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf;
	long n;

	assert_non_null(f);
	assert_int_equal(fseek(f, 0, SEEK_END), 0);
	n = ftell(f);
	rewind(f);
	buf = malloc((size_t)n + 1);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
	buf[n] = '\0';
	fclose(f);
	*len = (size_t)n;
	return buf;
}

/* The value after "<key> " on its line in the vectors' header. */
static void
field(const char *text, const char *key, char *out, size_t len)
{
	char pat[64];
	const char *p, *nl;

	snprintf(pat, sizeof(pat), "%s ", key);
	p = strstr(text, pat);
	assert_non_null(p);
	p += strlen(pat);
	nl = strchr(p, '\n');
	assert_non_null(nl);
	assert_true((size_t)(nl - p) < len);
	memcpy(out, p, (size_t)(nl - p));
	out[nl - p] = '\0';
}

/* A signer key from a hex seed, as the vectors give it. */
static void
seeded_key(struct pc_signer_key *k, const char *name, const char *hexseed)
{
	uint8_t seed[32];

	memset(k, 0, sizeof(*k));
	assert_true(pc_unhex(hexseed, 64, seed, sizeof(seed)));
	crypto_sign_seed_keypair(k->pk, k->sk, seed);
	strcpy(k->name, name);
	k->id = pc_key_id(k->name, k->pk);
}

static void
test_key_id_rule(void **state)
{
	struct pc_signer_key *k = pc_test_key("witness.example/w1", NULL);
	crypto_hash_sha256_state st;
	uint8_t h[32];
	const uint8_t sep[2] = { '\n', 0x04 };

	(void)state;
	crypto_hash_sha256_init(&st);
	crypto_hash_sha256_update(&st, (const uint8_t *)k->name, strlen(k->name));
	crypto_hash_sha256_update(&st, sep, 2);
	crypto_hash_sha256_update(&st, k->pk, 32);
	crypto_hash_sha256_final(&st, h);
	assert_int_equal(pc_cosig_key_id(k->name, k->pk), pc_load_be32(h));
	/* The same key's note (0x01) id differs: the type byte is in the hash. */
	assert_int_not_equal(pc_cosig_key_id(k->name, k->pk), k->id);
	pc_signer_key_free(k);
}

static struct pc_note_sig seen[4];

static int
collect(void *ctx, const struct pc_note_sig *s)
{
	size_t *i = ctx;

	if (*i < 4)
		seen[*i] = *s;
	(*i)++;
	return 0;
}

static void
test_spec_message_and_line(void **state)
{
	static const char want[] = "cosignature/v1\ntime 1679315147\n" SPEC_BODY;
	char msg[512];
	size_t blen, n = 0;

	(void)state;
	assert_int_equal(
	    pc_cosig_message(SPEC_BODY, strlen(SPEC_BODY), 1679315147, msg, sizeof(msg)),
	    strlen(want));
	assert_memory_equal(msg, want, strlen(want));
	/* Timestamps past 2^63 - 1, and bodies without a final newline, have no message. */
	assert_int_equal(pc_cosig_message(SPEC_BODY, strlen(SPEC_BODY), (uint64_t)INT64_MAX + 1,
					  msg, sizeof(msg)),
			 0);
	assert_int_not_equal(
	    pc_cosig_message(SPEC_BODY, strlen(SPEC_BODY), (uint64_t)INT64_MAX, msg, sizeof(msg)),
	    0);
	assert_int_equal(pc_cosig_message(SPEC_BODY, strlen(SPEC_BODY) - 1, 1, msg, sizeof(msg)),
			 0);

	/* The example's witness line: key id 8d66cf3f, then the timestamp its message shows. */
	assert_int_equal(pc_note_each_sig(SPEC_NOTE, strlen(SPEC_NOTE), &blen, collect, &n, NULL),
			 0);
	assert_int_equal(blen, strlen(SPEC_BODY));
	assert_int_equal(n, 2);
	assert_int_equal(seen[1].id, 0x8d66cf3f);
	assert_int_equal(seen[1].sig_len, 8 + 64);
	assert_int_equal(pc_load_be64(seen[1].sig), 1679315147);
	assert_int_equal(seen[1].name_len, strlen("witness.example.com/w1"));
	assert_int_equal(seen[0].sig_len, 64);
}

/* podcap signs Go's vectors byte for byte, and verifies what Go signed. */
static void
test_go_vectors(void **state)
{
	char *text, *note, line[PC_COSIG_LINE_MAX], buf[256];
	struct pc_verifier_key logk, w1, w2, mine;
	struct pc_signer_key k1, k2;
	struct pc_error why;
	uint64_t t;
	size_t len, nlen, blen;

	(void)state;
	text = slurp(VEC "cosig.txt", &len);
	note = strstr(text, "\nnote\n");
	assert_non_null(note);
	note += 6;
	nlen = len - (size_t)(note - text);
	field(text, "log-vkey", buf, sizeof(buf));
	assert_int_equal(pc_verifier_key_parse(buf, &logk, &why), 0);
	field(text, "w1-vkey", buf, sizeof(buf));
	assert_int_equal(pc_cosig_vkey_parse(buf, &w1, &why), 0);
	/* A cosigner key is not a note key, nor the other way round. */
	assert_int_equal(pc_verifier_key_parse(buf, &mine, &why), -1);
	field(text, "log-vkey", buf, sizeof(buf));
	assert_int_equal(pc_cosig_vkey_parse(buf, &mine, &why), -1);
	assert_non_null(strstr(why.msg, "type 0x01"));
	field(text, "w2-vkey", buf, sizeof(buf));
	assert_int_equal(pc_cosig_vkey_parse(buf, &w2, &why), 0);

	assert_int_equal(pc_note_verify(note, nlen, &logk, &blen, &why), 0);
	assert_int_equal(pc_cosig_verify(note, nlen, &w1, &t, &why), 0);
	assert_int_equal(t, 1679315147);
	assert_int_equal(pc_cosig_verify(note, nlen, &w2, &t, &why), 0);
	assert_int_equal(t, 1700000000);

	/* Ed25519 is deterministic: the same seed and time give Go's very line. */
	field(text, "w1-seed", buf, sizeof(buf));
	seeded_key(&k1, "witness.example/w1", buf);
	field(text, "w2-seed", buf, sizeof(buf));
	seeded_key(&k2, "witness.example/w2", buf);
	pc_cosig_vkey_of(&k1, &mine);
	assert_int_equal(mine.id, w1.id);
	assert_memory_equal(mine.pk, w1.pk, 32);
	assert_int_equal(pc_cosig_vkey_format(&mine, buf, sizeof(buf)), 0);
	assert_non_null(strstr(text, buf));
	assert_int_not_equal(pc_cosig_sign(&k1, note, blen, 1679315147, line, sizeof(line)), 0);
	assert_non_null(strstr(note, line));
	assert_int_not_equal(pc_cosig_sign(&k2, note, blen, 1700000000, line, sizeof(line)), 0);
	assert_non_null(strstr(note, line));
	free(text);
}

/* The rules a verifier applies to a line: name and 0x04 id select it, the message and time decide. */
static void
test_verify_rules(void **state)
{
	struct pc_signer_key *log = pc_test_key("example.com/log", NULL);
	struct pc_signer_key *w = pc_test_key("witness.example/w1", NULL);
	struct pc_signer_key *other = pc_test_key("witness.example/w1", NULL);
	struct pc_verifier_key vk, ovk;
	static const char body[] =
	    "example.com/log\n3\nCsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=\n";
	char note[PC_NOTE_MAX], copy[PC_NOTE_MAX], line[PC_COSIG_LINE_MAX];
	struct pc_error why;
	uint64_t t;
	size_t n, l;
	char *p;

	(void)state;
	pc_cosig_vkey_of(w, &vk);
	pc_cosig_vkey_of(other, &ovk);
	n = pc_test_sign_note(log, body, note, sizeof(note));
	assert_int_not_equal(n, 0);
	assert_int_equal(pc_cosig_verify(note, n, &vk, &t, &why), -1);
	assert_non_null(strstr(why.msg, "no cosignature by witness.example/w1+"));
	l = pc_cosig_sign(w, body, strlen(body), 1800000000, line, sizeof(line));
	assert_int_not_equal(l, 0);
	memcpy(note + n, line, l + 1);
	n += l;
	assert_int_equal(pc_cosig_verify(note, n, &vk, &t, &why), 0);
	assert_int_equal(t, 1800000000);
	/* Another key of the same name is not this cosigner: its id differs, its line is skipped. */
	assert_int_equal(pc_cosig_verify(note, n, &ovk, &t, &why), -1);
	assert_non_null(strstr(why.msg, "no cosignature"));
	/* A note key (0x01 id) of the witness is not its cosigner key. */
	pc_signer_key_public(w, &ovk);
	assert_int_equal(pc_cosig_verify(note, n, &ovk, &t, &why), -1);

	/* A changed body, or a changed timestamp, no longer verifies. */
	memcpy(copy, note, n + 1);
	copy[strlen("example.com/log\n")] = '4';
	assert_int_equal(pc_cosig_verify(copy, n, &vk, &t, &why), -1);
	assert_non_null(strstr(why.msg, "bad cosignature"));
	{
		uint8_t raw[76];
		char b64[120];
		size_t got;

		p = strrchr(note, ' ') + 1;
		assert_int_equal(pc_base64_decode(raw, sizeof(raw), p, strlen(p) - 1, &got), 0);
		assert_int_equal(got, 76);
		pc_store_be64(raw + 4, 1800000001);
		sodium_bin2base64(b64, sizeof(b64), raw, sizeof(raw),
				  sodium_base64_VARIANT_ORIGINAL);
		memcpy(copy, note, n + 1);
		memcpy(copy + (p - note), b64, strlen(b64));
		assert_int_equal(pc_cosig_verify(copy, n, &vk, &t, &why), -1);
		assert_non_null(strstr(why.msg, "bad cosignature"));
		/* A 0x01-sized (64-byte) signature under the cosigner's id is bad, not skipped. */
		sodium_bin2base64(b64, sizeof(b64), raw, 68, sodium_base64_VARIANT_ORIGINAL);
		memcpy(copy, note, (size_t)(p - note));
		snprintf(copy + (p - note), sizeof(copy) - (size_t)(p - note), "%s\n", b64);
		assert_int_equal(pc_cosig_verify(copy, strlen(copy), &vk, &t, &why), -1);
		assert_non_null(strstr(why.msg, "bad cosignature"));
	}
	/* A timestamp past 2^63 - 1 is refused even signing. */
	assert_int_equal(
	    pc_cosig_sign(w, body, strlen(body), (uint64_t)INT64_MAX + 1, line, sizeof(line)), 0);
	pc_signer_key_free(log);
	pc_signer_key_free(w);
	pc_signer_key_free(other);
}

/* Consistency proofs from every old size to every size up to 33 are Go's tlog.ProveTree's. */
static uint8_t leaves[33][PC_HASH_LEN];

static int
leaf_at(void *ctx, uint64_t i, uint8_t out[PC_HASH_LEN])
{
	(void)ctx;
	memcpy(out, leaves[i], PC_HASH_LEN);
	return 0;
}

static void
test_consistency_every_old_size(void **state)
{
	uint8_t proof[PC_MAX_PROOF][PC_HASH_LEN], want[PC_HASH_LEN], root[PC_HASH_LEN],
	    old_root[PC_HASH_LEN];
	char *text, *line, *save, *tok, leaf[16];
	size_t len, np, i, got, lines = 0;
	unsigned long t, o;

	(void)state;
	for (i = 0; i < 33; i++) {
		snprintf(leaf, sizeof(leaf), "leaf %zu", i);
		pc_merkle_leaf_hash((const uint8_t *)leaf, strlen(leaf), leaves[i]);
	}
	text = slurp(VEC "consistency.txt", &len);
	for (line = strtok_r(text, "\n", &save); line != NULL; line = strtok_r(NULL, "\n", &save)) {
		char *ls;

		if (line[0] == '#')
			continue;
		t = strtoul(strtok_r(line, " ", &ls), NULL, 10);
		o = strtoul(strtok_r(NULL, " ", &ls), NULL, 10);
		tok = strtok_r(NULL, " ", &ls);
		assert_int_equal(pc_base64_decode(want, 32, tok, strlen(tok), &got), 0);
		assert_int_equal(pc_merkle_root(leaf_at, NULL, t, root), 0);
		assert_memory_equal(root, want, 32);
		assert_int_equal(pc_merkle_consistency_proof(leaf_at, NULL, o, t, proof, &np), 0);
		for (i = 0; (tok = strtok_r(NULL, " ", &ls)) != NULL; i++) {
			assert_true(i < np);
			assert_int_equal(pc_base64_decode(want, 32, tok, strlen(tok), &got), 0);
			assert_memory_equal(proof[i], want, 32);
		}
		assert_int_equal(i, np);
		assert_int_equal(pc_merkle_root(leaf_at, NULL, o, old_root), 0);
		assert_int_equal(pc_merkle_verify_consistency(o, t, old_root, root,
							      (const uint8_t(*)[32])proof, np),
				 0);
		lines++;
	}
	assert_int_equal(lines, 33 * 34 / 2);
	free(text);
}

/* The tlog-witness specification's example request. */
/* clang-format off */
#define SPEC_REQ                                                        \
	"old 20852014\n"                                                \
	"PlRNCrwHpqhGrupue0L7gxbjbMiKA9temvuZZDDpkaw=\n"                \
	"jrJZDmY8Y7SyJE0MWLpLozkIVMSMZcD5kvuKxPC3swk=\n"                \
	"5+pKlUdi2LeF/BcMHBn+Ku6yhPGNCswZZD1X/6QgPd8=\n"                \
	"/6WVhPs2CwSsb5rYBH5cjHV/wSmA79abXAwhXw3Kj/0=\n"                \
	"\n"                                                            \
	"example.com/behind-the-sofa\n20852163\nCsUYapGGPo4dkMgIAUqom/" \
	"Xajj7h2fB2MPA3j2jxq2I=\n\n" DASH                               \
	"example.com/behind-the-sofa "                                  \
	"Az3grlgtzPICa5OS8npVmf1Myq/5IZniMp+ZJurmRDeOoRDe4URYN7u5/"     \
	"Zhcyv2q1gGzGku9nTo+zyWE+xeMcTOAYQ8=\n" DASH                    \
	"example.com/behind-the-sofa "                                  \
	"opLqBQsREYCgu6xQkYQwJr9fo45a62DN9EdmHXnZdXNqlcVGlCum2Wks+49/"  \
	"V6267UEjw6QUXTS5Rovnzv++qbSzm9Q=\n"
/* clang-format on */

static void
test_request_spec_example(void **state)
{
	static struct pc_add_checkpoint req;
	char out[PC_WITNESS_REQ_MAX];
	struct pc_error why;
	uint8_t first[32];
	size_t got;

	(void)state;
	assert_int_equal(pc_add_checkpoint_parse(SPEC_REQ, strlen(SPEC_REQ), &req, &why), 0);
	assert_int_equal(req.old_size, 20852014);
	assert_int_equal(req.nproof, 4);
	assert_int_equal(
	    pc_base64_decode(first, 32, "PlRNCrwHpqhGrupue0L7gxbjbMiKA9temvuZZDDpkaw=", 44, &got),
	    0);
	assert_memory_equal(req.proof[0], first, 32);
	assert_string_equal(req.note, strstr(SPEC_REQ, "example.com/"));
	/* Formatting what was parsed gives the same bytes back. */
	assert_int_equal(pc_add_checkpoint_format(req.old_size, (const uint8_t(*)[32])req.proof,
						  req.nproof, req.note, req.note_len, out,
						  sizeof(out)),
			 strlen(SPEC_REQ));
	assert_memory_equal(out, SPEC_REQ, strlen(SPEC_REQ));
}

static void
test_request_strict(void **state)
{
	static const char *const bad[] = {
		"",
		"old\n\nx",
		"old 01\n\nx",
		"old -1\n\nx",
		"old 1 \n\nx",
		"Old 1\n\nx",
		"old 18446744073709551616\n\nx",
		"old 1\n",
		"old 1\nx\n",
		"old 1\nPlRNCrwHpqhGrupue0L7gxbjbMiKA9temvuZZDDpkaw\n\nx",
		"old 1\nPlRNCrwHpqhGrupue0L7gxbjbMiKA9temvuZZDDpkaw=\n",
		"old 1\nPlRNCrwHpqhGrupue0L7gxbjbMiKA9temvuZZDDpkaw=\n\n",
		"old 1\nPlRNCrwHpqhGrupue0L7gxbjbMiKA9temvuZZDDpkax=\n\nx",
		"old 1\r\n\r\nx",
	};
	static struct pc_add_checkpoint req;
	char big[PC_WITNESS_REQ_MAX + 100], *p;
	struct pc_error why;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		why.msg[0] = '\0';
		assert_int_equal(pc_add_checkpoint_parse(bad[i], strlen(bad[i]), &req, &why), -1);
		assert_true(why.msg[0] != '\0');
	}
	assert_int_equal(pc_add_checkpoint_parse("old 0\n\nx", 8, &req, &why), 0);
	assert_int_equal(req.old_size, 0);
	assert_int_equal(req.nproof, 0);
	/* 63 proof lines are allowed, 64 are not. */
	for (i = 63; i <= 64; i++) {
		size_t j;

		p = big + sprintf(big, "old 5\n");
		for (j = 0; j < i; j++)
			p += sprintf(p, "PlRNCrwHpqhGrupue0L7gxbjbMiKA9temvuZZDDpkaw=\n");
		p += sprintf(p, "\nx");
		assert_int_equal(pc_add_checkpoint_parse(big, (size_t)(p - big), &req, &why),
				 i == 63 ? 0 : -1);
	}
	assert_string_equal(why.msg, "more than 63 consistency proof lines");
	/* The 409 body. */
	uint64_t size;
	assert_int_equal(pc_witness_size_parse("20852014\n", 9, &size, &why), 0);
	assert_int_equal(size, 20852014);
	assert_int_equal(pc_witness_size_parse("20852014", 8, &size, &why), -1);
	assert_int_equal(pc_witness_size_parse("020\n", 4, &size, &why), -1);
	assert_int_equal(pc_witness_size_parse("\n", 1, &size, &why), -1);
}

/* A request for the tree of the first `size` leaves, signed by k, from old. */
static size_t
request(const struct pc_signer_key *k, uint64_t old, uint64_t size, char *out, size_t outlen,
	struct pc_add_checkpoint *req)
{
	uint8_t proof[PC_MAX_PROOF][PC_HASH_LEN], root[PC_HASH_LEN];
	char note[PC_NOTE_MAX];
	size_t np, nlen, len;

	assert_int_equal(pc_merkle_root(leaf_at, NULL, size, root), 0);
	nlen = pc_test_checkpoint(k, k->name, size, root, note, sizeof(note));
	assert_int_equal(pc_merkle_consistency_proof(leaf_at, NULL, old, size, proof, &np), 0);
	len =
	    pc_add_checkpoint_format(old, (const uint8_t(*)[32])proof, np, note, nlen, out, outlen);
	assert_int_not_equal(len, 0);
	assert_int_equal(pc_add_checkpoint_parse(out, len, req, NULL), 0);
	return len;
}

/*
 * A checkpoint of size 0 must carry the empty tree's root, SHA-256 of ""
 * (RFC 6962 2.1): any other is 422, whether the witness holds 0 or not.
 */
static void
empty_tree(const struct pc_signer_key *k, struct pc_witness_log *logs)
{
	static struct pc_add_checkpoint req;
	static char note[PC_NOTE_MAX], buf[PC_WITNESS_REQ_MAX];
	uint8_t root[PC_HASH_LEN];
	struct pc_witness_log *l;
	struct pc_checkpoint cp;
	struct pc_error why;
	size_t n, blen;

	logs[1].size = 0;
	memset(logs[1].root, 0, PC_HASH_LEN);
	memset(root, 0x5a, sizeof(root));
	n = pc_test_checkpoint(k, k->name, 0, root, note, sizeof(note));
	n = pc_add_checkpoint_format(0, NULL, 0, note, n, buf, sizeof(buf));
	assert_int_equal(pc_add_checkpoint_parse(buf, n, &req, NULL), 0);
	assert_int_equal(pc_witness_check(logs, 2, &req, &l, &cp, &blen, &why), 422);
	assert_non_null(strstr(why.msg, "size 0 whose root is not the empty tree's"));
	/* The empty tree's root itself: cosigned. */
	crypto_hash_sha256(root, NULL, 0);
	n = pc_test_checkpoint(k, k->name, 0, root, note, sizeof(note));
	n = pc_add_checkpoint_format(0, NULL, 0, note, n, buf, sizeof(buf));
	assert_int_equal(pc_add_checkpoint_parse(buf, n, &req, NULL), 0);
	assert_int_equal(pc_witness_check(logs, 2, &req, &l, &cp, &blen, &why), 200);
	/* A witness holding a larger tree answers its size first: 409 comes before 422. */
	logs[1].size = 5;
	memset(root, 0x5a, sizeof(root));
	n = pc_test_checkpoint(k, k->name, 0, root, note, sizeof(note));
	n = pc_add_checkpoint_format(0, NULL, 0, note, n, buf, sizeof(buf));
	assert_int_equal(pc_add_checkpoint_parse(buf, n, &req, NULL), 0);
	assert_int_equal(pc_witness_check(logs, 2, &req, &l, &cp, &blen, &why), 409);
}

static void
test_witness_statuses(void **state)
{
	static struct pc_witness_log logs[2];
	static struct pc_add_checkpoint req;
	struct pc_signer_key *k = pc_test_key("example.com/log-a", NULL);
	struct pc_signer_key *forger = pc_test_key("example.com/log-a", NULL);
	struct pc_signer_key *stranger = pc_test_key("example.com/log-z", NULL);
	char buf[PC_WITNESS_REQ_MAX], leaf[16];
	struct pc_witness_log *l;
	struct pc_checkpoint cp;
	struct pc_error why;
	size_t blen, i;

	(void)state;
	for (i = 0; i < 33; i++) {
		snprintf(leaf, sizeof(leaf), "leaf %zu", i);
		pc_merkle_leaf_hash((const uint8_t *)leaf, strlen(leaf), leaves[i]);
	}
	strcpy(logs[0].origin, "example.com/log-0");
	strcpy(logs[1].origin, k->name);
	pc_signer_key_public(k, &logs[1].key);
	pc_signer_key_public(k, &logs[0].key);

	request(stranger, 0, 5, buf, sizeof(buf), &req);
	assert_int_equal(pc_witness_check(logs, 2, &req, &l, &cp, &blen, &why), 404);
	assert_null(l);
	request(forger, 0, 5, buf, sizeof(buf), &req);
	assert_int_equal(pc_witness_check(logs, 2, &req, &l, &cp, &blen, &why), 403);
	/* Never cosigned: old 0 is the only size that is not a conflict. */
	request(k, 3, 5, buf, sizeof(buf), &req);
	assert_int_equal(pc_witness_check(logs, 2, &req, &l, &cp, &blen, &why), 409);
	assert_ptr_equal(l, &logs[1]);
	assert_int_equal(l->size, 0);
	request(k, 0, 5, buf, sizeof(buf), &req);
	assert_int_equal(pc_witness_check(logs, 2, &req, &l, &cp, &blen, &why), 200);
	assert_int_equal(cp.size, 5);
	l->size = cp.size;
	memcpy(l->root, cp.root, 32);
	/* From every old size the witness does not hold: 409 with its size. */
	for (i = 0; i <= 9; i++) {
		if (i == 5)
			continue;
		request(k, i, 9, buf, sizeof(buf), &req);
		assert_int_equal(pc_witness_check(logs, 2, &req, &l, &cp, &blen, &why), 409);
	}
	/* The old size past the checkpoint's is a bad request. */
	request(k, 0, 5, buf, sizeof(buf), &req);
	req.old_size = 6;
	assert_int_equal(pc_witness_check(logs, 2, &req, &l, &cp, &blen, &why), 400);
	/* A proof that does not hold: 422, and nothing changes. */
	request(k, 5, 9, buf, sizeof(buf), &req);
	req.proof[0][0] ^= 1;
	assert_int_equal(pc_witness_check(logs, 2, &req, &l, &cp, &blen, &why), 422);
	assert_non_null(strstr(why.msg, "does not verify"));
	request(k, 5, 9, buf, sizeof(buf), &req);
	req.nproof--;
	assert_int_equal(pc_witness_check(logs, 2, &req, &l, &cp, &blen, &why), 422);
	/*
	 * The same size again: the same root is cosigned again; another is 422 (the
	 * current tlog-witness text; v1.0.0 answered 409), so that every 409 means
	 * "send from this size".
	 */
	request(k, 5, 5, buf, sizeof(buf), &req);
	assert_int_equal(pc_witness_check(logs, 2, &req, &l, &cp, &blen, &why), 200);
	leaves[4][0] ^= 1;
	request(k, 5, 5, buf, sizeof(buf), &req);
	assert_int_equal(pc_witness_check(logs, 2, &req, &l, &cp, &blen, &why), 422);
	assert_non_null(strstr(why.msg, "a different root at the size last cosigned, 5"));
	assert_int_equal(logs[1].size, 5);
	/* A fork (another fifth leaf) grown to 9 fails its proof from the root the witness holds. */
	request(k, 5, 9, buf, sizeof(buf), &req);
	assert_int_equal(pc_witness_check(logs, 2, &req, &l, &cp, &blen, &why), 422);
	leaves[4][0] ^= 1;
	request(k, 5, 9, buf, sizeof(buf), &req);
	assert_int_equal(pc_witness_check(logs, 2, &req, &l, &cp, &blen, &why), 200);
	/* From size 0, any proof line is refused. */
	logs[1].size = 0;
	request(k, 0, 9, buf, sizeof(buf), &req);
	req.nproof = 1;
	assert_int_equal(pc_witness_check(logs, 2, &req, &l, &cp, &blen, &why), 422);
	empty_tree(k, logs);
	pc_signer_key_free(k);
	pc_signer_key_free(forger);
	pc_signer_key_free(stranger);
}

/*
 * The note served to monitors: the body, every line of the log's key, the
 * witness's cosignature; not the lines of keys the witness did not check.
 */
static void
test_served_note(void **state)
{
	struct pc_signer_key *log = pc_test_key("example.com/log", NULL);
	struct pc_signer_key *other = pc_test_key("witness.example/other", NULL);
	struct pc_signer_key *w = pc_test_key("witness.example/w1", NULL);
	static const char body[] =
	    "example.com/log\n3\nCsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=\n";
	char note[PC_NOTE_MAX], line[PC_COSIG_LINE_MAX], alien[PC_COSIG_LINE_MAX];
	char out[PC_NOTE_MAX + PC_COSIG_LINE_MAX];
	struct pc_verifier_key lk, wk, ok;
	size_t n, l, a, len, blen;
	uint64_t t;

	(void)state;
	pc_signer_key_public(log, &lk);
	pc_cosig_vkey_of(w, &wk);
	pc_cosig_vkey_of(other, &ok);
	n = pc_test_sign_note(log, body, note, sizeof(note));
	a = pc_cosig_sign(other, body, strlen(body), 1800000000, alien, sizeof(alien));
	alien[a - 10] = alien[a - 10] == 'A' ? 'B' : 'A'; /* a bad line it never checks */
	memcpy(note + n, alien, a + 1);
	n += a;
	l = pc_cosig_sign(w, body, strlen(body), 1800000001, line, sizeof(line));
	len = pc_witness_served_note(&lk, note, n, line, l, out, sizeof(out));
	assert_int_not_equal(len, 0);
	assert_int_equal(strlen(out), len);
	assert_memory_equal(out, body, strlen(body));
	assert_int_equal(pc_note_verify(out, len, &lk, &blen, NULL), 0);
	assert_int_equal(blen, strlen(body));
	assert_int_equal(pc_cosig_verify(out, len, &wk, &t, NULL), 0);
	assert_int_equal(t, 1800000001);
	assert_null(strstr(out, "witness.example/other"));
	assert_int_equal(len, strlen(body) + 1 + (n - strlen(body) - 1 - a) + l);
	/* A note without the log's line, or no room: nothing. */
	assert_int_equal(pc_witness_served_note(&ok, note, n, line, l, out, sizeof(out)), 0);
	assert_int_equal(pc_witness_served_note(&lk, note, n, line, l, out, len), 0);
	assert_int_not_equal(pc_witness_served_note(&lk, note, n, line, l, out, len + 1), 0);
	pc_signer_key_free(log);
	pc_signer_key_free(other);
	pc_signer_key_free(w);
}

/* One witness's keys, which a quorum must count once: by public key, name or key id. */
static void
test_vkey_same(void **state)
{
	struct pc_signer_key *w1 = pc_test_key("witness.example/w1", NULL);
	struct pc_signer_key *w2 = pc_test_key("witness.example/w2", NULL);
	struct pc_verifier_key a, b, c;

	(void)state;
	pc_cosig_vkey_of(w1, &a);
	pc_cosig_vkey_of(w2, &b);
	assert_null(pc_cosig_vkey_same(&a, &b));
	assert_string_equal(pc_cosig_vkey_same(&a, &a), "key");
	/* w1's public key under w2's name: another key id, one witness */
	c = a;
	strcpy(c.name, b.name);
	c.id = pc_cosig_key_id(c.name, c.pk);
	assert_int_not_equal(c.id, a.id);
	assert_string_equal(pc_cosig_vkey_same(&c, &a), "public key");
	/* w2's name with another key: a witness that has two */
	c = b;
	strcpy(c.name, a.name);
	c.id = pc_cosig_key_id(c.name, c.pk);
	assert_string_equal(pc_cosig_vkey_same(&c, &a), "name");
	c = b;
	c.id = a.id;
	assert_string_equal(pc_cosig_vkey_same(&c, &a), "key id");
	pc_signer_key_free(w1);
	pc_signer_key_free(w2);
}

/* The verifier's witness policy: quorum, labels ahead of the first cosignature, late cosigning. */
static void
test_judge(void **state)
{
	struct pc_signer_key *log = pc_test_key("example.com/log", NULL);
	struct pc_signer_key *w[3] = {
		pc_test_key("witness.example/w1", NULL),
		pc_test_key("witness.example/w2", NULL),
		pc_test_key("witness.example/w3", NULL),
	};
	static const char body[] =
	    "example.com/log\n3\nCsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=\n";
	const uint64_t s = UINT64_C(1000000000), t1 = 1800000000, t2 = 1800000010;
	static struct pc_witness_policy p;
	static struct pc_witness_report r;
	char note[PC_NOTE_MAX], line[PC_COSIG_LINE_MAX];
	size_t n, l;

	(void)state;
	memset(&p, 0, sizeof(p));
	for (int i = 0; i < 3; i++)
		pc_cosig_vkey_of(w[i], &p.keys[i]);
	p.nkeys = 3;
	p.max_delay_ns = 300 * s;
	n = pc_test_sign_note(log, body, note, sizeof(note));
	l = pc_cosig_sign(w[1], body, strlen(body), t2, line, sizeof(line));
	memcpy(note + n, line, l + 1);
	n += l;
	l = pc_cosig_sign(w[0], body, strlen(body), t1, line, sizeof(line));
	memcpy(note + n, line, l + 1);
	n += l;

	/* Every key's by default: two of three is short. */
	assert_int_equal(pc_witness_judge(&p, note, n, t1 * s - 5 * s, &r), -1);
	assert_int_equal(r.nvalid, 2);
	assert_int_equal(r.quorum, 3);
	assert_non_null(strstr(r.fail[0], "2 valid cosignatures of the 3 required"));
	assert_non_null(strstr(r.seen[2].why, "no cosignature by witness.example/w3"));
	p.quorum = 2;
	assert_int_equal(pc_witness_judge(&p, note, n, t1 * s - 5 * s, &r), 0);
	assert_int_equal(r.first, 0); /* the earlier of the two */
	/* A window may end within the cosignature's second, not after it. */
	assert_int_equal(pc_witness_judge(&p, note, n, t1 * s + s, &r), 0);
	assert_int_equal(pc_witness_judge(&p, note, n, t1 * s + s + 1, &r), -1);
	assert_non_null(strstr(r.fail[0], "ran ahead of the witnesses' time"));
	assert_non_null(strstr(r.fail[0], "witness.example/w1"));
	/* ... the verifier's clock skew allowed on top. */
	p.skew_ns = 2 * s;
	assert_int_equal(pc_witness_judge(&p, note, n, t1 * s + 3 * s, &r), 0);
	p.skew_ns = 0;
	/* The newest window cosigned more than the delay after it ended is named. */
	assert_int_equal(pc_witness_judge(&p, note, n, t1 * s - 300 * s, &r), 0);
	assert_int_equal(pc_witness_judge(&p, note, n, t1 * s - 301 * s, &r), -1);
	assert_non_null(strstr(r.fail[0], "301 s after it ended"));
	/* ... exactly the delay: the clock skew widens the end's bound, not this one. */
	p.skew_ns = 30 * s;
	assert_int_equal(pc_witness_judge(&p, note, n, t1 * s - 300 * s, &r), 0);
	assert_int_equal(pc_witness_judge(&p, note, n, t1 * s - 301 * s, &r), -1);
	assert_non_null(strstr(r.fail[0], "301 s after it ended"));
	assert_int_equal(pc_witness_judge(&p, note, n, t1 * s - 330 * s, &r), -1);
	p.max_delay_ns = 0;
	assert_int_equal(pc_witness_judge(&p, note, n, t1 * s, &r), 0);
	assert_int_equal(pc_witness_judge(&p, note, n, t1 * s - 11 * s, &r), -1);
	assert_non_null(strstr(r.fail[0], "11 s after it ended"));
	p.max_delay_ns = 300 * s;
	p.skew_ns = 0;
	/* A cosignature over another body is no cosignature. */
	note[strlen("example.com/log\n")] = '4';
	assert_int_equal(pc_witness_judge(&p, note, n, t1 * s - 5 * s, &r), -1);
	assert_int_equal(r.nvalid, 0);
	pc_signer_key_free(log);
	for (int i = 0; i < 3; i++)
		pc_signer_key_free(w[i]);
}

/* C2SP tlog-tiles: paths both ways, and the hash tiles of 600 leaves exactly as Go's tlog reads them. */
static uint8_t many[600][PC_HASH_LEN];

static int
many_at(void *ctx, uint64_t i, uint8_t out[PC_HASH_LEN])
{
	(void)ctx;
	if (i >= 600)
		return -1;
	memcpy(out, many[i], PC_HASH_LEN);
	return 0;
}

static void
test_tiles(void **state)
{
	static const char *const bad[] = {
		"tile/0/1",          "tile/0/0001",
		"tile/0/x000/001",   "tile/0/x1/001",
		"tile/8/000",        "tile/00/000",
		"tile/0/000.p/0",    "tile/0/000.p/256",
		"tile/0/000.p/01",   "tile/0/000/",
		"tile/entries/x001", "tile/-1/000",
		"tile//000",         "tile/0/",
		"tile/0/x001/234/",  "tile/0/x018/x446/x744/x073/x709/x551/616",
	};
	static uint8_t got[PC_TILE_WIDTH][PC_HASH_LEN], want[PC_TILE_WIDTH * PC_HASH_LEN];
	char *text, *line, *save, path[96], leaf[16];
	struct pc_tile t;
	size_t len, n, tiles = 0;

	(void)state;
	assert_int_equal(pc_tile_parse("tile/0/x001/x234/067", &t), 0);
	assert_int_equal(t.index, 1234067);
	assert_int_equal(t.width, 256);
	assert_int_equal(pc_tile_parse("tile/entries/x001/234.p/7", &t), 0);
	assert_true(t.entries);
	assert_int_equal(t.index, 1234);
	assert_int_equal(t.width, 7);
	assert_int_equal(pc_tile_path(&t, path, sizeof(path)), strlen("tile/entries/x001/234.p/7"));
	assert_string_equal(path, "tile/entries/x001/234.p/7");
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(pc_tile_parse(bad[i], &t), -1);
	/*
	 * Which exist in a tree of 600: two full tiles at level 0, the partial
	 * ones of that tree and of every smaller one (a client may hold an
	 * older checkpoint), and nothing beyond.
	 */
	assert_int_equal(pc_tile_parse("tile/0/001", &t), 0);
	assert_true(pc_tile_exists(&t, 600));
	assert_int_equal(pc_tile_parse("tile/0/002", &t), 0);
	assert_false(pc_tile_exists(&t, 600));
	assert_int_equal(pc_tile_parse("tile/0/002.p/88", &t), 0);
	assert_true(pc_tile_exists(&t, 600));
	assert_int_equal(pc_tile_parse("tile/0/002.p/87", &t), 0);
	assert_true(pc_tile_exists(&t, 600));
	assert_int_equal(pc_tile_parse("tile/0/002.p/89", &t), 0);
	assert_false(pc_tile_exists(&t, 600));
	assert_int_equal(pc_tile_parse("tile/0/001.p/4", &t), 0);
	assert_true(pc_tile_exists(&t, 600));
	assert_int_equal(pc_tile_parse("tile/1/000.p/3", &t), 0);
	assert_false(pc_tile_exists(&t, 600));
	assert_int_equal(pc_tile_parse("tile/1/000.p/1", &t), 0);
	assert_true(pc_tile_exists(&t, 600));
	assert_int_equal(pc_tile_parse("tile/1/000.p/2", &t), 0);
	assert_true(pc_tile_exists(&t, 600));
	assert_int_equal(pc_tile_parse("tile/2/000.p/1", &t), 0);
	assert_false(pc_tile_exists(&t, 600));

	for (size_t i = 0; i < 600; i++) {
		snprintf(leaf, sizeof(leaf), "leaf %zu", i);
		pc_merkle_leaf_hash((const uint8_t *)leaf, strlen(leaf), many[i]);
	}
	text = slurp(VEC "tiles.txt", &len);
	for (line = strtok_r(text, "\n", &save); line != NULL; line = strtok_r(NULL, "\n", &save)) {
		char *sp = strchr(line, ' ');

		if (line[0] == '#')
			continue;
		assert_non_null(sp);
		*sp = '\0';
		assert_int_equal(pc_tile_parse(line, &t), 0);
		assert_true(pc_tile_exists(&t, 600));
		assert_int_equal(pc_tile_path(&t, path, sizeof(path)), strlen(line));
		assert_string_equal(path, line);
		assert_int_equal(pc_base64_decode(want, sizeof(want), sp + 1, strlen(sp + 1), &n),
				 0);
		assert_int_equal(n, (size_t)t.width * PC_HASH_LEN);
		assert_int_equal(pc_tile_hashes(&t, many_at, NULL, got), 0);
		assert_memory_equal(got, want, n);
		tiles++;
	}
	assert_int_equal(tiles, 4);
	free(text);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_key_id_rule),
		cmocka_unit_test(test_spec_message_and_line),
		cmocka_unit_test(test_go_vectors),
		cmocka_unit_test(test_verify_rules),
		cmocka_unit_test(test_consistency_every_old_size),
		cmocka_unit_test(test_request_spec_example),
		cmocka_unit_test(test_request_strict),
		cmocka_unit_test(test_witness_statuses),
		cmocka_unit_test(test_served_note),
		cmocka_unit_test(test_vkey_same),
		cmocka_unit_test(test_judge),
		cmocka_unit_test(test_tiles),
	};

	if (sodium_init() < 0)
		return 1;
	return cmocka_run_group_tests(tests, NULL, NULL);
}
