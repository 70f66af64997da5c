/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Key tests: C2SP key strings (checked against the golang.org/x/mod
 * sumdb/note example key), key ids, and the secret key file's safety rules.
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

#include "base/keys.h"

#include "testutil.h"

/* The example key pair of golang.org/x/mod/sumdb/note. */
#define GO_SKEY "PRIVATE+KEY+PeterNeumann+c74f20a3+AYEKFALVFGyNhPJEMzD1QIDr+Y7hfZx09iUvxdXHKDFz"
#define GO_VKEY "PeterNeumann+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW"

static char dir[128];        /* the scratch directory: paths in it fit in 256 bytes */

static int
setup(void **state)
{
	(void)state;
	if (sodium_init() < 0)
		return -1;
	return pc_test_tmpdir(dir, sizeof(dir), "keys");
}

static int
teardown(void **state)
{
	(void)state;
	pc_test_rm_rf(dir);
	return 0;
}

static void
path_of(char *buf, size_t len, const char *name)
{
	snprintf(buf, len, "%s/%s", dir, name);
}

static void
write_file(const char *path, const char *text, size_t len, mode_t mode)
{
	int fd;

	unlink(path);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL, mode);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, len), (ssize_t)len);
	assert_int_equal(fchmod(fd, mode), 0);
	close(fd);
}

static size_t
read_file(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");
	size_t n;

	assert_non_null(f);
	n = fread(buf, 1, len - 1, f);
	buf[n] = '\0';
	fclose(f);
	return n;
}

/* SHA-256(name || "\n" || 0x01 || pk), first four bytes big-endian. */
static uint32_t
independent_id(const char *name, const uint8_t pk[32])
{
	uint8_t buf[256], h[32];
	size_t n = strlen(name);

	memcpy(buf, name, n);
	buf[n] = 0x0a;
	buf[n + 1] = 0x01;
	memcpy(buf + n + 2, pk, 32);
	crypto_hash_sha256(h, buf, n + 34);
	return (uint32_t)h[0] << 24 | (uint32_t)h[1] << 16 | (uint32_t)h[2] << 8 | h[3];
}

static void
test_go_example_key(void **state)
{
	struct pc_verifier_key vk, vk2;
	struct pc_signer_key *k;
	char path[256], buf[256];
	struct pc_error err;
	struct pc_error why;

	(void)state;
	assert_int_equal(pc_verifier_key_parse(GO_VKEY, &vk, &why), 0);
	assert_string_equal(vk.name, "PeterNeumann");
	assert_int_equal(vk.id, 0xc74f20a3);
	assert_int_equal(pc_key_id(vk.name, vk.pk), 0xc74f20a3);
	assert_int_equal(independent_id(vk.name, vk.pk), 0xc74f20a3);
	assert_int_equal(pc_verifier_key_format(&vk, buf, sizeof(buf)), 0);
	assert_string_equal(buf, GO_VKEY);

	/* The secret key of the pair loads and derives that very verifier key. */
	path_of(path, sizeof(path), "go.key");
	write_file(path, GO_SKEY "\n", strlen(GO_SKEY) + 1, 0600);
	k = pc_signer_key_load(path, &err);
	assert_non_null(k);
	pc_signer_key_public(k, &vk2);
	assert_string_equal(vk2.name, vk.name);
	assert_int_equal(vk2.id, vk.id);
	assert_memory_equal(vk2.pk, vk.pk, 32);
	pc_signer_key_free(k);
	/* Without the trailing newline too. */
	write_file(path, GO_SKEY, strlen(GO_SKEY), 0600);
	k = pc_signer_key_load(path, &err);
	assert_non_null(k);
	pc_signer_key_free(k);
}

static void
test_generate_save_load(void **state)
{
	struct pc_signer_key *k, *k2;
	struct pc_verifier_key vk, vk2;
	char path[256], pubpath[256], text[512], want[256];
	struct pc_error err;
	uint8_t sig[64], msg[] = "window 42";
	struct stat st;
	size_t n;

	(void)state;
	k = pc_signer_key_generate("podcap/appliance-7");
	assert_non_null(k);
	assert_string_equal(k->name, "podcap/appliance-7");
	assert_int_equal(k->id, independent_id(k->name, k->pk));
	/* libsodium's secret key is seed || public key. */
	assert_memory_equal(k->sk + 32, k->pk, 32);

	path_of(path, sizeof(path), "signer.key");
	path_of(pubpath, sizeof(pubpath), "signer.key.pub");
	assert_int_equal(pc_signer_key_save(k, path, &err), 0);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0600);
	assert_int_equal(stat(pubpath, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0644);

	/* FILE.pub is the verifier key line. */
	pc_signer_key_public(k, &vk);
	assert_int_equal(pc_verifier_key_format(&vk, want, sizeof(want) - 1), 0);
	strcat(want, "\n");
	read_file(pubpath, text, sizeof(text));
	assert_string_equal(text, want);
	/* FILE is PRIVATE+KEY+<name>+<id>+<base64(0x01 || seed)>. */
	n = read_file(path, text, sizeof(text));
	snprintf(want, sizeof(want), "PRIVATE+KEY+podcap/appliance-7+%08x+", (unsigned)k->id);
	assert_memory_equal(text, want, strlen(want));
	assert_int_equal(text[n - 1], '\n');

	k2 = pc_signer_key_load(path, &err);
	assert_non_null(k2);
	assert_string_equal(k2->name, k->name);
	assert_int_equal(k2->id, k->id);
	assert_memory_equal(k2->sk, k->sk, 64);
	assert_memory_equal(k2->pk, k->pk, 32);

	assert_int_equal(pc_verifier_key_load(pubpath, &vk2, &err), 0);
	assert_string_equal(vk2.name, vk.name);
	assert_int_equal(vk2.id, vk.id);
	assert_memory_equal(vk2.pk, vk.pk, 32);

	/* The loaded key signs what the saved public key verifies. */
	crypto_sign_detached(sig, NULL, msg, sizeof(msg), k2->sk);
	assert_int_equal(crypto_sign_verify_detached(sig, msg, sizeof(msg), vk2.pk), 0);
	msg[0] ^= 1;
	assert_int_equal(crypto_sign_verify_detached(sig, msg, sizeof(msg), vk2.pk), -1);
	pc_signer_key_free(k);
	pc_signer_key_free(k2);

	/* Two generated keys differ. */
	k = pc_signer_key_generate("podcap/appliance-7");
	assert_non_null(k);
	assert_memory_not_equal(k->pk, vk.pk, 32);
	pc_signer_key_free(k);
}

static void
test_refuses_open_modes(void **state)
{
	struct pc_signer_key *k;
	char path[256], want[PC_ERR_MSG_LEN];
	struct pc_error err;
	static const mode_t modes[] = { 0640, 0604, 0644, 0660, 0606, 0610, 0601 };
	size_t i;

	(void)state;
	path_of(path, sizeof(path), "open.key");
	for (i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
		write_file(path, GO_SKEY "\n", strlen(GO_SKEY) + 1, modes[i]);
		err.msg[0] = '\0';
		k = pc_signer_key_load(path, &err);
		assert_null(k);
		snprintf(want, sizeof(want), "%s: secret key is ", path);
		assert_memory_equal(err.msg, want, strlen(want));
		snprintf(want, sizeof(want), "by group or others (mode %04o); chmod 600 it",
			 (unsigned)modes[i]);
		assert_non_null(strstr(err.msg, want));
	}
	write_file(path, GO_SKEY "\n", strlen(GO_SKEY) + 1, 0640);
	k = pc_signer_key_load(path, &err);
	assert_null(k);
	assert_non_null(strstr(err.msg, "readable by group or others (mode 0640)"));
	/* Owner-only modes are fine. */
	write_file(path, GO_SKEY "\n", strlen(GO_SKEY) + 1, 0400);
	k = pc_signer_key_load(path, &err);
	assert_non_null(k);
	pc_signer_key_free(k);
}

/* Links are followed and the file they lead to is judged; FIFOs and owners too. */
static void
test_links_fifos_owners(void **state)
{
	struct pc_signer_key *k;
	char path[256], link[256], fifo[256];
	struct pc_error err;

	(void)state;
	path_of(path, sizeof(path), "target.key");
	path_of(link, sizeof(link), "link.key");
	write_file(path, GO_SKEY "\n", strlen(GO_SKEY) + 1, 0600);
	unlink(link);
	assert_int_equal(symlink(path, link), 0);
	k = pc_signer_key_load(link, &err);
	assert_non_null(k);
	pc_signer_key_free(k);
	assert_int_equal(chmod(path, 0644), 0);
	assert_null(pc_signer_key_load(link, &err));
	assert_non_null(strstr(err.msg, "link.key: secret key is readable by group or others (mode 0644)"));
	unlink(link);
	assert_int_equal(symlink(dir, link), 0);
	assert_null(pc_signer_key_load(link, &err));
	assert_non_null(strstr(err.msg, "link.key: not a regular file"));

	/* a FIFO must be refused at once, not wait for a writer */
	path_of(fifo, sizeof(fifo), "fifo.key");
	assert_int_equal(mkfifo(fifo, 0600), 0);
	assert_null(pc_signer_key_load(fifo, &err));
	assert_non_null(strstr(err.msg, "fifo.key: not a regular file"));

	/* someone else's file, even of mode 0600: its owner could swap the key */
	if (geteuid() == 0) {
		write_file(path, GO_SKEY "\n", strlen(GO_SKEY) + 1, 0600);
		assert_int_equal(chown(path, 65534, 65534), 0);
		assert_null(pc_signer_key_load(path, &err));
		assert_non_null(strstr(err.msg, "target.key: secret key is owned by uid 65534, not by this user"));
	}
}

/* A verifier key given where the secret key belongs gets told so. */
static void
test_verifier_key_as_secret(void **state)
{
	char path[256];
	struct pc_error err;

	(void)state;
	path_of(path, sizeof(path), "swapped.key");
	write_file(path, GO_VKEY "\n", strlen(GO_VKEY) + 1, 0600);
	assert_null(pc_signer_key_load(path, &err));
	assert_non_null(strstr(err.msg, "swapped.key: not a podcap secret key: this is a verifier key "
			       "(the .pub file), give the secret key"));
	write_file(path, "hello\n", 6, 0600);
	assert_null(pc_signer_key_load(path, &err));
	assert_non_null(strstr(err.msg, "does not start with PRIVATE+KEY+"));
}

static void
test_refuses_overwrite(void **state)
{
	struct pc_signer_key *k, *k2;
	char path[256], pubpath[256], before[512], after[512];
	struct pc_error err;
	struct stat st;

	(void)state;
	k = pc_test_key("podcap/a", NULL);
	k2 = pc_test_key("podcap/b", NULL);
	path_of(path, sizeof(path), "once.key");
	path_of(pubpath, sizeof(pubpath), "once.key.pub");
	assert_int_equal(pc_signer_key_save(k, path, &err), 0);
	read_file(path, before, sizeof(before));

	assert_int_equal(pc_signer_key_save(k2, path, &err), -1);
	assert_non_null(strstr(err.msg, "once.key: exists; refusing to overwrite"));
	read_file(path, after, sizeof(after));
	assert_string_equal(before, after);

	/* A leftover FILE.pub also stops it, and FILE is not left behind. */
	assert_int_equal(unlink(path), 0);
	assert_int_equal(pc_signer_key_save(k2, path, &err), -1);
	assert_non_null(strstr(err.msg, "once.key.pub: exists; refusing to overwrite"));
	assert_int_equal(stat(path, &st), -1);

	/* Nor through a dangling symlink. */
	assert_int_equal(unlink(pubpath), 0);
	assert_int_equal(symlink("/tmp/podcap-keys-nonexistent-target", path), 0);
	assert_int_equal(pc_signer_key_save(k2, path, &err), -1);
	assert_int_equal(lstat("/tmp/podcap-keys-nonexistent-target", &st), -1);
	unlink(path);
	pc_signer_key_free(k);
	pc_signer_key_free(k2);
}

static void
test_garbage_secret_files(void **state)
{
	static const char *const bad[] = {
		"",
		"\n",
		"hello world\n",
		GO_VKEY "\n",                                       /* a verifier key */
		"PRIVATE+KEY+PeterNeumann+c74f20a3\n",
		"PRIVATE+KEY+PeterNeumann+c74f20a3+\n",
		"PRIVATE+KEY+PeterNeumann+c74f20a3+AYEKFALVFGyNhPJEMzD1QIDr+Y7hfZx09iUvxdXHKDF\n",
		"PRIVATE+KEY+PeterNeumann+c74f20a3+AYEKFALVFGyNhPJEMzD1QIDr+Y7hfZx09iUvxdXHKDFzAA==\n",
		"PRIVATE+KEY+PeterNeumann+c74f20a4+AYEKFALVFGyNhPJEMzD1QIDr+Y7hfZx09iUvxdXHKDFz\n",
		"PRIVATE+KEY+PeterNeumanN+c74f20a3+AYEKFALVFGyNhPJEMzD1QIDr+Y7hfZx09iUvxdXHKDFz\n",
		"PRIVATE+KEY+PeterNeumann+c74f20a+AYEKFALVFGyNhPJEMzD1QIDr+Y7hfZx09iUvxdXHKDFz\n",
		"PRIVATE+KEY+PeterNeumann+c74f20ag+AYEKFALVFGyNhPJEMzD1QIDr+Y7hfZx09iUvxdXHKDFz\n",
		"PRIVATE+KEY++c74f20a3+AYEKFALVFGyNhPJEMzD1QIDr+Y7hfZx09iUvxdXHKDFz\n",
		"PRIVATE+KEY+Peter Neumann+c74f20a3+AYEKFALVFGyNhPJEMzD1QIDr+Y7hfZx09iUvxdXHKDFz\n",
		/* algorithm byte 0x02 instead of 0x01 */
		"PRIVATE+KEY+PeterNeumann+c74f20a3+AoEKFALVFGyNhPJEMzD1QIDr+Y7hfZx09iUvxdXHKDFz\n",
		"private+key+PeterNeumann+c74f20a3+AYEKFALVFGyNhPJEMzD1QIDr+Y7hfZx09iUvxdXHKDFz\n",
		GO_SKEY "\n" GO_SKEY "\n",
		GO_SKEY "\n\n",
		" " GO_SKEY "\n",
	};
	struct pc_signer_key *k;
	char path[256], big[4096];
	struct pc_error err;
	size_t i;

	(void)state;
	path_of(path, sizeof(path), "garbage.key");
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		write_file(path, bad[i], strlen(bad[i]), 0600);
		err.msg[0] = '\0';
		k = pc_signer_key_load(path, &err);
		if (k != NULL)
			fail_msg("accepted garbage #%zu: %s", i, bad[i]);
		assert_non_null(strstr(err.msg, "garbage.key: not a podcap secret key: "));
	}
	/* A NUL inside, an oversized file, a directory, a missing file. */
	write_file(path, GO_SKEY "\0\n", strlen(GO_SKEY) + 2, 0600);
	assert_null(pc_signer_key_load(path, &err));
	memset(big, 'A', sizeof(big));
	write_file(path, big, sizeof(big), 0600);
	assert_null(pc_signer_key_load(path, &err));
	assert_null(pc_signer_key_load(dir, &err));
	path_of(path, sizeof(path), "missing.key");
	assert_null(pc_signer_key_load(path, &err));
	assert_non_null(strstr(err.msg, "missing.key: "));
}

static void
test_verifier_key_strings(void **state)
{
	struct pc_verifier_key vk, vk2;
	struct pc_signer_key *k;
	char buf[256], mangled[300], small[20];
	struct pc_error why;
	size_t i, len;

	(void)state;
	k = pc_test_key("podcap/\xc3\xbc-appliance", &vk);   /* UTF-8 is allowed */
	pc_signer_key_free(k);
	assert_int_equal(pc_verifier_key_format(&vk, buf, sizeof(buf)), 0);
	assert_int_equal(pc_verifier_key_format(&vk, small, sizeof(small)), -1);
	memset(&vk2, 0, sizeof(vk2));
	assert_int_equal(pc_verifier_key_parse(buf, &vk2, &why), 0);
	assert_string_equal(vk2.name, vk.name);
	assert_int_equal(vk2.id, vk.id);
	assert_memory_equal(vk2.pk, vk.pk, 32);
	/* One trailing newline is allowed. */
	snprintf(mangled, sizeof(mangled), "%s\n", buf);
	assert_int_equal(pc_verifier_key_parse(mangled, &vk2, &why), 0);

	/* Another name with the same id and key: the id no longer matches. */
	assert_int_equal(pc_verifier_key_parse(
		"PeterNeumanm+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW", &vk2, &why), -1);
	assert_string_equal(why.msg, "key id does not match the name and key");
	assert_int_equal(pc_verifier_key_parse(
		"PeterNeumann+c74f20a2+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW", &vk2, &why), -1);
	assert_string_equal(why.msg, "key id does not match the name and key");
	/* A different public key under the right name and id. */
	assert_int_equal(pc_verifier_key_parse(
		"PeterNeumann+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TX", &vk2, &why), -1);

	/* Every single-byte change and every proper substring is refused. */
	len = strlen(GO_VKEY);
	for (i = 0; i < len; i++) {
		strcpy(mangled, GO_VKEY);
		mangled[i] = (char)(mangled[i] + 1);
		assert_int_equal(pc_verifier_key_parse(mangled, &vk2, &why), -1);
		strcpy(mangled, GO_VKEY);
		mangled[i] = '\0';
		assert_int_equal(pc_verifier_key_parse(mangled, &vk2, &why), -1);
		assert_int_equal(pc_verifier_key_parse(GO_VKEY + i + 1, &vk2, &why), -1);
	}
	/* A byte >= 0x80 for the '/': libsodium 1.0.18 alone would decode it as '/'. */
	assert_int_equal(pc_verifier_key_parse("PeterNeumann+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq"
					       "\xaf" "LDE4izWy10TW", &vk2, &why), -1);
	assert_string_equal(why.msg, "key data is not base64 of 33 bytes");
	assert_int_equal(pc_verifier_key_parse(GO_VKEY "\n\n", &vk2, &why), -1);
	assert_int_equal(pc_verifier_key_parse(GO_VKEY " ", &vk2, &why), -1);
	assert_int_equal(pc_verifier_key_parse("PeterNeumann+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/"
					       "LDE4izWy10TW+", &vk2, &why), -1);
	/* Upper-case hex is the same id. */
	assert_int_equal(pc_verifier_key_parse(
		"PeterNeumann+C74F20A3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW", &vk2, &why), 0);
}

static void
test_key_names(void **state)
{
	static const char *const bad[] = {
		"", "a b", "a+b", "a\tb", "a\nb", "a\x7f" "b", "a\xc2\xa0" "b" /* NBSP */,
		"a\xe2\x80\x83" "b" /* EM SPACE */, "a\xe3\x80\x80" "b" /* IDEOGRAPHIC SPACE */,
		"a\xc2\x85" "b" /* NEL */, "\xff", "a\xc3", "\xc0\xaf" /* overlong */,
		"\xed\xa0\x80" /* surrogate */,
	};
	struct pc_signer_key *k;
	char longname[PC_KEY_NAME_LEN + 1];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		k = pc_signer_key_generate(bad[i]);
		if (k != NULL)
			fail_msg("accepted key name #%zu", i);
	}
	/* The longest name that fits struct pc_signer_key.name, and one more. */
	memset(longname, 'n', sizeof(longname));
	longname[PC_KEY_NAME_LEN] = '\0';
	assert_null(pc_signer_key_generate(longname));
	longname[PC_KEY_NAME_LEN - 1] = '\0';
	k = pc_signer_key_generate(longname);
	assert_non_null(k);
	assert_string_equal(k->name, longname);
	pc_signer_key_free(k);
	k = pc_signer_key_generate("example.com/log\xe2\x80\x94" "1");
	assert_non_null(k);
	pc_signer_key_free(k);
	pc_signer_key_free(NULL);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_go_example_key),
		cmocka_unit_test(test_generate_save_load),
		cmocka_unit_test(test_refuses_open_modes),
		cmocka_unit_test(test_refuses_overwrite),
		cmocka_unit_test(test_links_fifos_owners),
		cmocka_unit_test(test_verifier_key_as_secret),
		cmocka_unit_test(test_garbage_secret_files),
		cmocka_unit_test(test_verifier_key_strings),
		cmocka_unit_test(test_key_names),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
