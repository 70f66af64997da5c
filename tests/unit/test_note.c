/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Signed note and checkpoint tests, anchored to the golang.org/x/mod
 * sumdb/note example so podcap's notes stay readable by other C2SP tools.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <fcntl.h>

#include <cmocka.h>
#include <sodium.h>

#include "log/note.h"

#include "testutil.h"

#define GO_SKEY "PRIVATE+KEY+PeterNeumann+c74f20a3+AYEKFALVFGyNhPJEMzD1QIDr+Y7hfZx09iUvxdXHKDFz"
#define GO_VKEY "PeterNeumann+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW"
#define GO_TEXT "If you think cryptography is the answer to your problem,\n" \
		"then you don't know what your problem is.\n"
#define GO_SIG "x08go/ZJkuBS9UG/SffcvIAQxVBtiFupLLr8pAcElZInNIuGUgYN1FFYC2pZSNXgKvqfqdngotpRZb6KE6RyyBwJnAM="
#define GO_NOTE GO_TEXT "\n\xe2\x80\x94 PeterNeumann " GO_SIG "\n"
#define DASH "\xe2\x80\x94 "

static struct pc_signer_key *key;
static struct pc_verifier_key vkey;

static int
setup(void **state)
{
	(void)state;
	if (sodium_init() < 0)
		return -1;
	key = pc_test_key("podcap/unit-test", &vkey);
	return 0;
}

static int
teardown(void **state)
{
	(void)state;
	pc_signer_key_free(key);
	return 0;
}

static int
verify(const char *note, size_t len, struct pc_error *why)
{
	size_t blen;

	return pc_note_verify(note, len, &vkey, &blen, why);
}

/* dst = the NULL-terminated list of strings, which must fit. */
static void
join(char *dst, size_t cap, ...)
{
	const char *p;
	size_t len = 0, n;
	va_list ap;

	va_start(ap, cap);
	while ((p = va_arg(ap, const char *)) != NULL) {
		n = strlen(p);
		assert_true(len + n < cap);
		memcpy(dst + len, p, n);
		len += n;
	}
	va_end(ap);
	dst[len] = '\0';
}

/* A signature line by some other key, with a random signature. */
static void
other_sig_line(const char *name, uint32_t id, size_t siglen, char *out, size_t outlen)
{
	uint8_t raw[4 + 128];
	char b64[256];

	raw[0] = (uint8_t)(id >> 24);
	raw[1] = (uint8_t)(id >> 16);
	raw[2] = (uint8_t)(id >> 8);
	raw[3] = (uint8_t)id;
	randombytes_buf(raw + 4, siglen);
	sodium_bin2base64(b64, sizeof(b64), raw, 4 + siglen, sodium_base64_VARIANT_ORIGINAL);
	join(out, outlen, DASH, name, " ", b64, "\n", (const char *)NULL);
}

static void
test_go_example(void **state)
{
	struct pc_verifier_key gv;
	struct pc_signer_key *gk;
	char dir[256], path[300], out[PC_NOTE_MAX];
	struct pc_error err;
	struct pc_error why;
	size_t blen = 0, n;
	int fd;

	(void)state;
	assert_int_equal(pc_verifier_key_parse(GO_VKEY, &gv, &why), 0);
	assert_int_equal(pc_note_verify(GO_NOTE, strlen(GO_NOTE), &gv, &blen, &why), 0);
	assert_int_equal(blen, strlen(GO_TEXT));

	/* Ed25519 is deterministic: signing the text gives the published note exactly. */
	assert_int_equal(pc_test_tmpdir(dir, sizeof(dir), "note"), 0);
	snprintf(path, sizeof(path), "%s/k", dir);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, GO_SKEY "\n", strlen(GO_SKEY) + 1), (ssize_t)strlen(GO_SKEY) + 1);
	close(fd);
	gk = pc_signer_key_load(path, &err);
	pc_test_rm_rf(dir);
	assert_non_null(gk);
	n = pc_test_sign_note(gk, GO_TEXT, out, sizeof(out));
	pc_signer_key_free(gk);
	assert_int_equal(n, strlen(GO_NOTE));
	assert_string_equal(out, GO_NOTE);
}

static void
test_round_trip(void **state)
{
	char note[PC_NOTE_MAX];
	const char *body = "podcap/unit-test\n5\nAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=\n";
	struct pc_error why;
	size_t n, blen = 0;

	(void)state;
	n = pc_test_sign_note(key, body, note, sizeof(note));
	assert_true(n > strlen(body));
	assert_int_equal(strlen(note), n);
	assert_memory_equal(note, body, strlen(body));
	assert_int_equal(note[strlen(body)], '\n');
	assert_memory_equal(note + strlen(body) + 1, DASH "podcap/unit-test ", 4 + 17);
	assert_int_equal(pc_note_verify(note, n, &vkey, &blen, &why), 0);
	assert_int_equal(blen, strlen(body));

	/* Too small a buffer, by one byte (the NUL) or more. */
	assert_int_equal(pc_test_sign_note(key, body, note, n), 0);
	assert_int_equal(pc_test_sign_note(key, body, note, n + 1), n);
	/* A body must end in a newline; the key name must be valid. */
	assert_int_equal(pc_test_sign_note(key, "no newline", note, sizeof(note)), 0);
	assert_int_equal(pc_test_sign_note(key, "", note, sizeof(note)), 0);
	{
		uint8_t sig[64] = { 0 };

		assert_int_equal(pc_note_format("x\n", 2, "bad name", 1, sig, note, sizeof(note)), 0);
		assert_int_equal(pc_note_format("x\n", 2, "bad+name", 1, sig, note, sizeof(note)), 0);
		assert_int_equal(pc_note_format("x\n", 2, "", 1, sig, note, sizeof(note)), 0);
	}
}

static void
test_tampered_body(void **state)
{
	char note[PC_NOTE_MAX], t[PC_NOTE_MAX];
	const char *body = "podcap/unit-test\n17\nq83vEjRWeJq83vEjRWeJq83vEjRWeJq83vEjRWeJq80=\n";
	struct pc_error why;
	size_t n, i;

	(void)state;
	n = pc_test_sign_note(key, body, note, sizeof(note));
	assert_true(n > 0);
	for (i = 0; i < strlen(body); i++) {
		memcpy(t, note, n);
		t[i] ^= 0x01;
		why.msg[0] = '\0';
		assert_int_equal(verify(t, n, &why), -1);
		assert_true(why.msg[0] != '\0');
	}
	/* A changed digit is a bad signature, and the message says by which key. */
	memcpy(t, note, n);
	t[strlen("podcap/unit-test\n")] = '8';
	assert_int_equal(verify(t, n, &why), -1);
	assert_non_null(strstr(why.msg, "bad signature"));
	assert_non_null(strstr(why.msg, "podcap/unit-test"));
	/* Every byte of the signature line matters too. */
	for (i = strlen(body) + 1; i < n - 1; i++) {
		memcpy(t, note, n);
		t[i] ^= 0x01;
		assert_int_equal(verify(t, n, &why), -1);
	}
}

static void
test_wrong_key(void **state)
{
	struct pc_signer_key *other;
	struct pc_verifier_key ov, forged;
	char note[PC_NOTE_MAX];
	const char *body = "hello\n";
	struct pc_error why;
	size_t n, blen;

	(void)state;
	/* Same name, new key: a different id, so no signature by it. */
	other = pc_test_key("podcap/unit-test", &ov);
	n = pc_test_sign_note(other, body, note, sizeof(note));
	assert_int_equal(verify(note, n, &why), -1);
	assert_non_null(strstr(why.msg, "no signature by key podcap/unit-test"));
	assert_int_equal(pc_note_verify(note, n, &ov, &blen, &why), 0);
	pc_signer_key_free(other);

	/* Right name and id but another public key: the signature is bad. */
	n = pc_test_sign_note(key, body, note, sizeof(note));
	forged = vkey;
	forged.pk[5] ^= 0x20;
	assert_int_equal(pc_note_verify(note, n, &forged, &blen, &why), -1);
	assert_non_null(strstr(why.msg, "bad signature"));
	/* Same key, another name. */
	forged = vkey;
	strcpy(forged.name, "podcap/unit-tesT");
	assert_int_equal(pc_note_verify(note, n, &forged, &blen, &why), -1);
	assert_non_null(strstr(why.msg, "no signature"));
}

static void
test_truncated_and_missing(void **state)
{
	char note[PC_NOTE_MAX], t[PC_NOTE_MAX];
	const char *body = "a\nb\n";
	struct pc_error why;
	size_t n, cut;

	(void)state;
	n = pc_test_sign_note(key, body, note, sizeof(note));
	/* Drop 4 base64 characters: 66 bytes, still valid base64. */
	memcpy(t, note, n);
	memcpy(t + n - 5, "\n", 2);
	assert_int_equal(verify(t, n - 4, &why), -1);
	assert_non_null(strstr(why.msg, "bad signature"));
	/* Any other truncation of the signature line. */
	for (cut = 1; cut < n - strlen(body) - 1; cut++) {
		memcpy(t, note, n - cut);
		t[n - cut - 1] = '\n';
		assert_int_equal(verify(t, n - cut, &why), -1);
	}
	/* Missing signature line, missing final newline, missing blank line. */
	assert_int_equal(verify("a\nb\n\n", 5, &why), -1);
	assert_string_equal(why.msg, "malformed note");
	assert_int_equal(verify(note, n - 1, &why), -1);
	assert_string_equal(why.msg, "malformed note");
	memcpy(t, note, strlen(body));
	memcpy(t + strlen(body), note + strlen(body) + 1, n - strlen(body) - 1);
	assert_int_equal(verify(t, n - 1, &why), -1);
	assert_string_equal(why.msg, "malformed note");
	/* A body that does not end in a newline ("b" then the blank line is gone). */
	join(t, sizeof(t), "a\nb", note + strlen(body), (const char *)NULL);
	assert_int_equal(verify(t, strlen(t), &why), -1);
	assert_int_equal(verify("", 0, &why), -1);
}

static void
test_other_signatures(void **state)
{
	char note[PC_NOTE_MAX], t[PC_NOTE_MAX], l1[256], l2[256], l3[256], l4[256];
	const char *body = "podcap/unit-test\n1\nAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=\n";
	struct pc_error why;
	size_t blen = 0, bl = strlen(body);

	(void)state;
	assert_true(pc_test_sign_note(key, body, note, sizeof(note)) > 0);
	other_sig_line("witness.example/w1", 0x01020304, 64, l1, sizeof(l1));
	other_sig_line("witness.example/w2", 0xdeadbeef, 72, l2, sizeof(l2));
	/* Our name with another id is someone else's key. */
	other_sig_line(vkey.name, vkey.id ^ 1, 64, l3, sizeof(l3));
	other_sig_line("\xc3\xa9t\xc3\xa9.example", 7, 1, l4, sizeof(l4));
	join(t, sizeof(t), body, "\n", l1, l3, note + bl + 1, l2, l4, (const char *)NULL);
	assert_int_equal(pc_note_verify(t, strlen(t), &vkey, &blen, &why), 0);
	assert_int_equal(blen, bl);
	/* Only the others: no signature by ours. */
	join(t, sizeof(t), body, "\n", l1, l2, l3, (const char *)NULL);
	assert_int_equal(verify(t, strlen(t), &why), -1);
	assert_non_null(strstr(why.msg, "no signature by key"));
	/* Our signature twice is fine; ours twice with one bad is not. */
	join(t, sizeof(t), note, note + bl + 1, (const char *)NULL);
	assert_int_equal(verify(t, strlen(t), &why), 0);
	join(l3, sizeof(l3), note + bl + 1, (const char *)NULL);
	l3[strlen(l3) - 4] = l3[strlen(l3) - 4] == 'A' ? 'B' : 'A';
	join(t, sizeof(t), note, l3, (const char *)NULL);
	assert_int_equal(verify(t, strlen(t), &why), -1);
	assert_non_null(strstr(why.msg, "bad signature"));
}

static void
test_malformed_notes(void **state)
{
	char note[PC_NOTE_MAX], t[PC_NOTE_MAX * 4], line[256];
	const char *body = "x\n";
	struct pc_error why;
	size_t n, i;
	static const char *const bad_lines[] = {
		"-- podcap/unit-test AAAAAAAAAAAAAAAAAAAAAAAA\n",          /* ASCII dashes */
		"\xe2\x80\x94podcap/unit-test AAAAAAAA\n",                  /* no space after dash */
		DASH "podcap/unit-test\n",                                  /* no signature */
		DASH "podcap/unit-test \n",
		DASH " AAAAAAAA\n",                                         /* empty name */
		DASH "a+b AAAAAAAA\n",                                      /* '+' in name */
		DASH "a\xc2\xa0" "b AAAAAAAA\n",                            /* NBSP in name */
		DASH "podcap/x AAAA\n",                                     /* 3 bytes < 5 */
		DASH "podcap/x AAAAAAAA!\n",                                /* not base64 */
		DASH "podcap/x AAAAAAA\n",                                  /* unpadded */
		DASH "podcap/x AAAAAAAA AAAAAAAA\n",
		DASH "podcap/x AAAA\xc3\xa9" "AA\n",                      /* not ASCII, yet UTF-8 */
		"\n",                                                       /* empty line */
	};
	static const char *const bad_bytes[] = { "\t", "\r", "\x7f", "\xff", "\xc3", "\xed\xa0\x80" };

	(void)state;
	n = pc_test_sign_note(key, body, note, sizeof(note));
	for (i = 0; i < sizeof(bad_lines) / sizeof(bad_lines[0]); i++) {
		/* The bad line after a good signature still spoils the note. */
		join(t, sizeof(t), note, bad_lines[i], (const char *)NULL);
		why.msg[0] = '\0';
		if (verify(t, strlen(t), &why) != -1)
			fail_msg("accepted bad signature line #%zu", i);
		assert_string_equal(why.msg, "malformed note");
	}
	/* Control characters and invalid UTF-8 anywhere. */
	for (i = 0; i < sizeof(bad_bytes) / sizeof(bad_bytes[0]); i++) {
		char b[32];

		snprintf(b, sizeof(b), "a%sb\n", bad_bytes[i]);
		assert_true(pc_test_sign_note(key, b, t, sizeof(t)) > 0);
		assert_int_equal(verify(t, strlen(t), &why), -1);
		assert_string_equal(why.msg, "malformed note");
	}
	/* An embedded NUL. */
	memcpy(t, note, n);
	t[0] = '\0';
	assert_int_equal(verify(t, n, &why), -1);
	/* No more than 100 signature lines. */
	other_sig_line("w.example", 1, 64, line, sizeof(line));
	memcpy(t, note, n);
	t[n] = '\0';
	for (i = 0; i < 99; i++)
		strcat(t, line);
	assert_int_equal(verify(t, strlen(t), &why), 0);
	strcat(t, line);
	assert_int_equal(verify(t, strlen(t), &why), -1);
	assert_string_equal(why.msg, "malformed note");
}

/* ---- checkpoints ---- */

static void
test_checkpoint_round_trip(void **state)
{
	struct pc_checkpoint cp, back;
	char body[2048], note[PC_NOTE_MAX];
	struct pc_error why;
	size_t n, blen;
	static const uint64_t sizes[] = { 0, 1, 10, 1234567, UINT64_MAX };
	size_t i;

	(void)state;
	memset(&cp, 0, sizeof(cp));
	strcpy(cp.origin, "podcap/appliance-7");
	cp.size = 42;
	n = pc_checkpoint_body(&cp, body, sizeof(body));
	assert_string_equal(body, "podcap/appliance-7\n42\nAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=\n");
	assert_int_equal(n, strlen(body));
	assert_int_equal(pc_checkpoint_body(&cp, body, n), 0);
	assert_int_equal(pc_checkpoint_body(&cp, body, n + 1), n);

	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		cp.size = sizes[i];
		randombytes_buf(cp.root, sizeof(cp.root));
		strcpy(cp.extra, i % 2 ? "" : "- 1700000000\nwitness hint\n");
		n = pc_checkpoint_body(&cp, body, sizeof(body));
		assert_true(n > 0);
		assert_int_equal(pc_checkpoint_parse_body(body, n, &back, &why), 0);
		assert_string_equal(back.origin, cp.origin);
		assert_int_equal(back.size, cp.size);
		assert_memory_equal(back.root, cp.root, PC_HASH_LEN);
		assert_string_equal(back.extra, cp.extra);
		/* And through a signed note. */
		n = pc_test_sign_note(key, body, note, sizeof(note));
		assert_int_equal(verify(note, n, &why), 0);
		assert_int_equal(pc_note_verify(note, n, &vkey, &blen, &why), 0);
		assert_int_equal(pc_checkpoint_parse_body(note, blen, &back, &why), 0);
		assert_int_equal(back.size, cp.size);
	}
	/* What would not parse back is not formatted. */
	strcpy(cp.extra, "");
	strcpy(cp.origin, "");
	assert_int_equal(pc_checkpoint_body(&cp, body, sizeof(body)), 0);
	strcpy(cp.origin, "two\nlines");
	assert_int_equal(pc_checkpoint_body(&cp, body, sizeof(body)), 0);
	strcpy(cp.origin, "ok");
	strcpy(cp.extra, "no newline");
	assert_int_equal(pc_checkpoint_body(&cp, body, sizeof(body)), 0);
	strcpy(cp.extra, "a\n\nb\n");
	assert_int_equal(pc_checkpoint_body(&cp, body, sizeof(body)), 0);
}

static void
test_checkpoint_rejections(void **state)
{
#define R "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="
	static const char *const bad[] = {
		"",
		"\n0\n" R "\n",                          /* empty origin */
		"o\n\n" R "\n",                           /* empty size */
		"o\n01\n" R "\n",                         /* leading zero */
		"o\n00\n" R "\n",
		"o\n-1\n" R "\n",
		"o\n+1\n" R "\n",
		"o\n1e3\n" R "\n",
		"o\n 1\n" R "\n",
		"o\n1 \n" R "\n",
		"o\n0x10\n" R "\n",
		"o\n18446744073709551616\n" R "\n",       /* 2^64 */
		"o\n99999999999999999999\n" R "\n",
		"o\n123456789012345678901\n" R "\n",
		"o\n1\n" R,                               /* no final newline */
		"o\n1\n",                                 /* no root */
		"o\n1\n\n",
		"o\n1\nAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA==\n",  /* 31 bytes */
		"o\n1\nAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA\n",  /* 33 bytes */
		"o\n1\nAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA\n",   /* unpadded */
		"o\n1\nAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAB=\n",  /* stray low bits */
		"o\n1\nAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA-=\n",  /* URL alphabet */
		/* UTF-8 in the root, which libsodium 1.0.18 alone decodes as "//" */
		"o\n1\nAAAAAAAAAA\xd0\x9c" "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=\n",
		"o\n1\n" R " \n",
		"o\n1\n" R "\n\n",                        /* empty extension line */
		"o\n1\n" R "\next\n\nmore\n",
		"o\n1\n" R "\nno newline",
		"o\tx\n1\n" R "\n",                       /* control character */
	};
#undef R
	struct pc_checkpoint cp;
	char big[2048];
	struct pc_error why;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		why.msg[0] = '\0';
		if (pc_checkpoint_parse_body(bad[i], strlen(bad[i]), &cp, &why) != -1)
			fail_msg("accepted checkpoint #%zu", i);
		assert_true(why.msg[0] != '\0');
	}
	snprintf(big, sizeof(big), "o\n18446744073709551615\n"
		 "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=\n");
	assert_int_equal(pc_checkpoint_parse_body(big, strlen(big), &cp, &why), 0);
	assert_true(cp.size == UINT64_MAX);
	/* An origin longer than the struct holds. */
	memset(big, 'o', PC_KEY_NAME_LEN);
	snprintf(big + PC_KEY_NAME_LEN, sizeof(big) - PC_KEY_NAME_LEN,
		 "\n1\nAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=\n");
	assert_int_equal(pc_checkpoint_parse_body(big, strlen(big), &cp, &why), -1);
	memmove(big + 1, big + 2, strlen(big + 2) + 1);
	assert_int_equal(pc_checkpoint_parse_body(big, strlen(big), &cp, &why), 0);
	/* Extension lines longer than the struct holds. */
	i = (size_t)snprintf(big, sizeof(big), "o\n1\nAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=\n");
	memset(big + i, 'e', sizeof(cp.extra) - 1);
	big[i + sizeof(cp.extra) - 1] = '\n';
	big[i + sizeof(cp.extra)] = '\0';
	assert_int_equal(pc_checkpoint_parse_body(big, strlen(big), &cp, &why), -1);
	big[i + sizeof(cp.extra) - 2] = '\n';
	big[i + sizeof(cp.extra) - 1] = '\0';
	assert_int_equal(pc_checkpoint_parse_body(big, strlen(big), &cp, &why), 0);
	assert_int_equal(strlen(cp.extra), sizeof(cp.extra) - 1);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_go_example),
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_tampered_body),
		cmocka_unit_test(test_wrong_key),
		cmocka_unit_test(test_truncated_and_missing),
		cmocka_unit_test(test_other_signatures),
		cmocka_unit_test(test_malformed_notes),
		cmocka_unit_test(test_checkpoint_round_trip),
		cmocka_unit_test(test_checkpoint_rejections),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
