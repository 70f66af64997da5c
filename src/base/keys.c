/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Ed25519 signer and verifier keys in C2SP signed-note text form.
 *
 * Secret material only ever lives in sodium_malloc() memory (guarded,
 * locked, wiped on free) or in stack buffers wiped before returning.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sodium.h>

#include "base64.h"
#include "bytes.h"
#include "hex.h"
#include "error.h"
#include "keys.h"

#include "utf8.h"

#define ALG_ED25519 0x01
#define KEY_DATA_LEN 33                 /* algorithm byte || 32-byte key */
#define KEY_B64_LEN 44                  /* base64 of KEY_DATA_LEN bytes */
#define SECRET_PREFIX "PRIVATE+KEY+"
#define KEY_FILE_MAX 1024               /* either key file is one short line */
#define KEY_LINE_MAX (sizeof(SECRET_PREFIX) + PC_KEY_NAME_LEN + 10 + KEY_B64_LEN + 2)

/* Scratch space for parsing a secret key file, kept out of swap. */
struct secret_scratch {
	char text[KEY_FILE_MAX + 1];
	uint8_t data[KEY_DATA_LEN];
	uint8_t pk[32];
};


/*
 * C2SP: a key name is non-empty UTF-8 with neither spaces nor '+'. Control
 * characters are refused too, since a note containing one cannot verify.
 */
static int
key_name_valid(const char *name, size_t len)
{
	const unsigned char *s = (const unsigned char *)name;
	uint32_t c;
	size_t i, n;

	if (len == 0 || len >= PC_KEY_NAME_LEN)
		return 0;
	for (i = 0; i < len; i += n) {
		n = pc_utf8_next(s + i, len - i, &c);
		if (n == 0 || c == '+' || pc_utf8_space_or_control(c))
			return 0;
	}
	return 1;
}

uint32_t
pc_key_id(const char *name, const uint8_t pk[32])
{
	return pc_key_id_alg(name, ALG_ED25519, pk);
}

uint32_t
pc_key_id_alg(const char *name, uint8_t alg, const uint8_t pk[32])
{
	crypto_hash_sha256_state st;
	const uint8_t sep[2] = { '\n', alg };
	uint8_t h[crypto_hash_sha256_BYTES];
	uint32_t id;

	crypto_hash_sha256_init(&st);
	crypto_hash_sha256_update(&st, (const uint8_t *)name, strlen(name));
	crypto_hash_sha256_update(&st, sep, sizeof(sep));
	crypto_hash_sha256_update(&st, pk, 32);
	crypto_hash_sha256_final(&st, h);
	id = pc_load_be32(h);
	return id;
}

/* The fields of "<name>+<hex8>+<base64>", located in place. */
struct key_fields {
	const char *name, *id, *data;
	size_t name_len, data_len;
};

static int
split_key(const char *s, size_t len, struct key_fields *f, struct pc_error *err)
{
	const char *p1, *p2;

	p1 = memchr(s, '+', len);
	if (p1 == NULL || (p2 = memchr(p1 + 1, '+', len - (size_t)(p1 + 1 - s))) == NULL)
		return pc_error_set(err, "expected <name>+<key id>+<key data>");
	f->name = s;
	f->name_len = (size_t)(p1 - s);
	f->id = p1 + 1;
	f->data = p2 + 1;
	f->data_len = len - (size_t)(f->data - s);
	if (!key_name_valid(f->name, f->name_len))
		return pc_error_set(err, "bad key name");
	if (p2 - f->id != 8)
		return pc_error_set(err, "key id is not 8 hex digits");
	return 0;
}

static int
parse_id(const char *hex, uint32_t *id, struct pc_error *err)
{
	uint8_t b[4];

	if (!pc_unhex(hex, 8, b, sizeof(b)))
		return pc_error_set(err, "key id is not 8 hex digits");
	*id = pc_load_be32(b);
	return 0;
}

static int
parse_data(const char *b64, size_t len, uint8_t alg, uint8_t out[KEY_DATA_LEN],
	   struct pc_error *err)
{
	size_t n;

	if (pc_base64_decode(out, KEY_DATA_LEN, b64, len, &n) != 0 || n != KEY_DATA_LEN)
		return pc_error_set(err, "key data is not base64 of 33 bytes");
	if (out[0] == ALG_ED25519 && alg != ALG_ED25519)
		return pc_error_set(
		    err, "an Ed25519 note key (type 0x01), not a key of type 0x%02x", alg);
	if (out[0] != alg)
		return pc_error_set(
		    err, alg == ALG_ED25519 ? "not an Ed25519 key" : "not a key of type 0x%02x",
		    alg);
	return 0;
}

/* Length of s without one trailing newline. */
static size_t
line_len(const char *s)
{
	size_t len = strlen(s);

	if (len > 0 && s[len - 1] == '\n')
		len--;
	return len;
}

int
pc_verifier_key_parse(const char *text, struct pc_verifier_key *vk, struct pc_error *err)
{
	return pc_verifier_key_parse_alg(text, ALG_ED25519, vk, err);
}

int
pc_verifier_key_parse_alg(const char *text, uint8_t alg, struct pc_verifier_key *vk,
			  struct pc_error *err)
{
	struct key_fields f;
	uint8_t data[KEY_DATA_LEN];
	size_t len = line_len(text);

	if (memchr(text, '\n', len) != NULL)
		return pc_error_set(err, "more than one line");
	if (split_key(text, len, &f, err) != 0 || parse_id(f.id, &vk->id, err) != 0 ||
	    parse_data(f.data, f.data_len, alg, data, err) != 0)
		return -1;
	memcpy(vk->name, f.name, f.name_len);
	vk->name[f.name_len] = '\0';
	memcpy(vk->pk, data + 1, 32);
	if (pc_key_id_alg(vk->name, alg, vk->pk) != vk->id)
		return pc_error_set(err, "key id does not match the name and key");
	return 0;
}

int
pc_verifier_key_format(const struct pc_verifier_key *vk, char *buf, size_t len)
{
	return pc_verifier_key_format_alg(vk, ALG_ED25519, buf, len);
}

int
pc_verifier_key_format_alg(const struct pc_verifier_key *vk, uint8_t alg, char *buf, size_t len)
{
	uint8_t data[KEY_DATA_LEN];
	char b64[sodium_base64_ENCODED_LEN(KEY_DATA_LEN, sodium_base64_VARIANT_ORIGINAL)];
	int n;

	data[0] = alg;
	memcpy(data + 1, vk->pk, 32);
	sodium_bin2base64(b64, sizeof(b64), data, sizeof(data), sodium_base64_VARIANT_ORIGINAL);
	n = snprintf(buf, len, "%s+%08x+%s", vk->name, (unsigned)vk->id, b64);
	return n < 0 || (size_t)n >= len ? -1 : 0;
}

/* Reads a small file into buf (NUL-terminated); the file must be regular and < cap bytes. */
static int
read_small(int fd, const char *path, char *buf, size_t cap, struct pc_error *err)
{
	size_t have = 0;
	ssize_t n;

	for (;;) {
		n = read(fd, buf + have, cap - have);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return pc_error_errno(err, "%s", path);
		if (n == 0)
			break;
		have += (size_t)n;
		if (have == cap)
			return pc_error_set(err, "%s: file too long for a key", path);
	}
	buf[have] = '\0';
	if (strlen(buf) != have)
		return pc_error_set(err, "%s: key file contains a NUL byte", path);
	return 0;
}

static int
open_key_file(const char *path, struct stat *st, struct pc_error *err)
{
	int fd;

	/* O_NONBLOCK: a FIFO at the path must fail the regular-file check, not hang. */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return pc_error_errno(err, "%s", path);
	if (fstat(fd, st) != 0) {
		pc_error_errno(err, "%s", path);
		close(fd);
		return -1;
	}
	if (!S_ISREG(st->st_mode)) {
		pc_error_set(err, "%s: not a regular file", path);
		close(fd);
		return -1;
	}
	return fd;
}

int
pc_verifier_key_load(const char *path, struct pc_verifier_key *vk, struct pc_error *err)
{
	char buf[KEY_FILE_MAX + 1];
	struct stat st;
	int fd, rc;

	fd = open_key_file(path, &st, err);
	if (fd < 0)
		return -1;
	rc = read_small(fd, path, buf, KEY_FILE_MAX, err);
	close(fd);
	if (rc != 0)
		return -1;
	if (pc_verifier_key_parse(buf, vk, err) != 0)
		return pc_error_prefix(err, "%s: not a verifier key", path);
	return 0;
}

static const char *
mode_word(mode_t mode)
{
	if (mode & 044)
		return "readable";
	if (mode & 022)
		return "writable";
	return "accessible";
}

/* Fills k from the text of a secret key file; wipes what it decodes. */
static int
parse_secret(struct secret_scratch *s, struct pc_signer_key *k, struct pc_error *err)
{
	const size_t plen = sizeof(SECRET_PREFIX) - 1;
	struct key_fields f;
	size_t len = line_len(s->text);

	if (memchr(s->text, '\n', len) != NULL)
		return pc_error_set(err, "more than one line");
	if (len < plen || memcmp(s->text, SECRET_PREFIX, plen) != 0) {
		struct pc_verifier_key vk;

		if (pc_verifier_key_parse(s->text, &vk, NULL) == 0)
			return pc_error_set(err, "this is a verifier key (the .pub file), give the secret key");
		return pc_error_set(err, "does not start with " SECRET_PREFIX);
	}
	if (split_key(s->text + plen, len - plen, &f, err) != 0 ||
	    parse_id(f.id, &k->id, err) != 0 ||
	    parse_data(f.data, f.data_len, ALG_ED25519, s->data, err) != 0)
		return -1;
	memcpy(k->name, f.name, f.name_len);
	k->name[f.name_len] = '\0';
	crypto_sign_seed_keypair(k->pk, k->sk, s->data + 1);
	if (pc_key_id(k->name, k->pk) != k->id)
		return pc_error_set(err, "key id does not match the name and key");
	return 0;
}

struct pc_signer_key *
pc_signer_key_load(const char *path, struct pc_error *err)
{
	struct secret_scratch *s;
	struct pc_signer_key *k;
	struct stat st;
	int fd, rc;

	if (sodium_init() < 0) {
		pc_error_set(err, "%s: libsodium failed to initialise", path);
		return NULL;
	}
	fd = open_key_file(path, &st, err);
	if (fd < 0)
		return NULL;
	if ((st.st_mode & 077) != 0) {
		pc_error_set(err, "%s: secret key is %s by group or others (mode %04o); chmod 600 it",
		     path, mode_word(st.st_mode), (unsigned)(st.st_mode & 07777));
		close(fd);
		return NULL;
	}
	/* whoever owns the file can replace the key: only this user or root may */
	if (st.st_uid != geteuid() && st.st_uid != 0) {
		pc_error_set(err, "%s: secret key is owned by uid %u, not by this user (uid %u) "
		     "or root; chown it", path, (unsigned)st.st_uid, (unsigned)geteuid());
		close(fd);
		return NULL;
	}
	s = sodium_malloc(sizeof(*s));
	k = sodium_malloc(sizeof(*k));
	if (s == NULL || k == NULL) {
		pc_error_set(err, "%s: out of memory", path);
		close(fd);
		sodium_free(s);
		sodium_free(k);
		return NULL;
	}
	memset(k, 0, sizeof(*k));
	rc = read_small(fd, path, s->text, KEY_FILE_MAX, err);
	close(fd);
	if (rc == 0 && parse_secret(s, k, err) != 0)
		rc = pc_error_prefix(err, "%s: not a podcap secret key", path);
	sodium_free(s);
	if (rc != 0) {
		sodium_free(k);
		return NULL;
	}
	sodium_mprotect_readonly(k);
	return k;
}

struct pc_signer_key *
pc_signer_key_generate(const char *name)
{
	struct pc_signer_key *k;

	if (sodium_init() < 0 || !key_name_valid(name, strlen(name)))
		return NULL;
	k = sodium_malloc(sizeof(*k));
	if (k == NULL)
		return NULL;
	memset(k, 0, sizeof(*k));
	strcpy(k->name, name);
	crypto_sign_keypair(k->pk, k->sk);
	k->id = pc_key_id(k->name, k->pk);
	sodium_mprotect_readonly(k);
	return k;
}

struct pc_signer_key *
pc_signer_key_from_seed(const char *name, const uint8_t seed[32])
{
	struct pc_signer_key *k;

	if (sodium_init() < 0 || !key_name_valid(name, strlen(name)))
		return NULL;
	k = sodium_malloc(sizeof(*k));
	if (k == NULL)
		return NULL;
	memset(k, 0, sizeof(*k));
	strcpy(k->name, name);
	crypto_sign_seed_keypair(k->pk, k->sk, seed);
	k->id = pc_key_id(k->name, k->pk);
	sodium_mprotect_readonly(k);
	return k;
}

void
pc_signer_key_public(const struct pc_signer_key *k, struct pc_verifier_key *vk)
{
	memset(vk, 0, sizeof(*vk));
	memcpy(vk->name, k->name, sizeof(vk->name));
	vk->id = k->id;
	memcpy(vk->pk, k->pk, sizeof(vk->pk));
}

void
pc_signer_key_free(struct pc_signer_key *k)
{
	/* sodium_free makes the pages writable again and wipes them. */
	sodium_free(k);
}

static int
write_all(int fd, const char *buf, size_t len)
{
	ssize_t n;

	while (len > 0) {
		n = write(fd, buf, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

static int
create_excl(const char *path, mode_t mode, struct pc_error *err)
{
	int fd;

	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, mode);
	if (fd < 0 && errno == EEXIST)
		return pc_error_set(err, "%s: exists; refusing to overwrite", path);
	if (fd < 0)
		return pc_error_errno(err, "%s", path);
	/* The umask must not decide who can read a key. */
	if (fchmod(fd, mode) != 0) {
		pc_error_errno(err, "%s", path);
		close(fd);
		unlink(path);
		return -1;
	}
	return fd;
}

static int
write_file(int fd, const char *path, const char *text, struct pc_error *err)
{
	int rc = 0;

	if (write_all(fd, text, strlen(text)) != 0 || fsync(fd) != 0) {
		pc_error_errno(err, "%s", path);
		rc = -1;
	}
	if (close(fd) != 0 && rc == 0) {
		pc_error_errno(err, "%s", path);
		rc = -1;
	}
	return rc;
}

/* Makes the new directory entries durable too. */
static void
sync_parent(const char *path)
{
	char dir[PATH_MAX];
	char *slash;
	int fd;

	if (snprintf(dir, sizeof(dir), "%s", path) >= (int)sizeof(dir))
		return;
	slash = strrchr(dir, '/');
	if (slash == NULL)
		strcpy(dir, ".");
	else if (slash == dir)
		dir[1] = '\0';
	else
		*slash = '\0';
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd >= 0) {
		fsync(fd);
		close(fd);
	}
}

static int
format_secret(const struct pc_signer_key *k, char *buf, size_t len)
{
	uint8_t data[KEY_DATA_LEN];
	char b64[sodium_base64_ENCODED_LEN(KEY_DATA_LEN, sodium_base64_VARIANT_ORIGINAL)];
	int n;

	data[0] = ALG_ED25519;
	crypto_sign_ed25519_sk_to_seed(data + 1, k->sk);
	sodium_bin2base64(b64, sizeof(b64), data, sizeof(data), sodium_base64_VARIANT_ORIGINAL);
	n = snprintf(buf, len, SECRET_PREFIX "%s+%08x+%s\n", k->name, (unsigned)k->id, b64);
	sodium_memzero(data, sizeof(data));
	sodium_memzero(b64, sizeof(b64));
	return n < 0 || (size_t)n >= len ? -1 : 0;
}

int
pc_signer_key_save(const struct pc_signer_key *k, const char *path, struct pc_error *err)
{
	struct pc_verifier_key vk;
	char secret[KEY_LINE_MAX], pub[KEY_LINE_MAX], pubpath[PATH_MAX];
	int fd, pfd, rc = -1;

	if ((size_t)snprintf(pubpath, sizeof(pubpath), "%s.pub", path) >= sizeof(pubpath))
		return pc_error_set(err, "%s: path too long", path);
	pc_signer_key_public(k, &vk);
	if (pc_verifier_key_format(&vk, pub, sizeof(pub) - 1) != 0 ||
	    format_secret(k, secret, sizeof(secret)) != 0) {
		pc_error_set(err, "%s: key name too long", path);
		goto out;
	}
	strcat(pub, "\n");
	fd = create_excl(path, 0600, err);
	if (fd < 0)
		goto out;
	pfd = create_excl(pubpath, 0644, err);
	if (pfd < 0) {
		close(fd);
		unlink(path);
		goto out;
	}
	if (write_file(fd, path, secret, err) != 0) {
		close(pfd);
		goto fail;
	}
	if (write_file(pfd, pubpath, pub, err) != 0)
		goto fail;
	sync_parent(path);
	rc = 0;
	goto out;
fail:
	unlink(path);
	unlink(pubpath);
out:
	sodium_memzero(secret, sizeof(secret));
	return rc;
}
