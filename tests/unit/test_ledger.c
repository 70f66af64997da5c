/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The ledger directory: append, reopen, roots; recovery from a torn tail
 * at every byte of the last entry; refusal of corrupt or altered history;
 * checkpoints; the read-only view; a reader thread racing the writer.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <fcntl.h>
#include <pthread.h>
#include <sodium.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/keys.h"
#include "log/ledger.h"
#include "log/merkle.h"
#include "log/note.h"
#include "log/record.h"

#include "testutil.h"

#define ORIGIN "podcap/test-app"
#define MAXREC 4096

static char base[256];       /* per-test scratch directory */
static unsigned dirs;

/* ---- scaffolding ---- */

static int
setup(void **state)
{
	(void)state;
	return pc_test_tmpdir(base, sizeof(base), "ledger");
}

static int
teardown(void **state)
{
	(void)state;
	pc_test_rm_rf(base);
	return 0;
}

static void
new_dir(char *out, size_t len)
{
	if ((size_t)snprintf(out, len, "%s/l%u", base, dirs++) >= len)
		fail_msg("path too long");
}

static void
path_in(char *out, size_t len, const char *dir, const char *name)
{
	if ((size_t)snprintf(out, len, "%s/%s", dir, name) >= len)
		fail_msg("path too long");
}

/* Record i: deterministic bytes of a length that varies with i. */
static size_t
gen(uint64_t i, uint8_t *out)
{
	size_t n = 20 + (size_t)(i * 37 % 300);

	for (size_t k = 0; k < n; k++)
		out[k] = (uint8_t)(i * 131 + k * 7 + (k >> 3));
	memcpy(out, &i, sizeof(i));
	return n;
}

static void
ref_root(uint64_t n, uint8_t root[PC_HASH_LEN])
{
	struct pc_merkle_range r;
	uint8_t rec[MAXREC], h[PC_HASH_LEN];

	pc_merkle_range_init(&r);
	for (uint64_t i = 0; i < n; i++) {
		size_t len = gen(i, rec);
		pc_merkle_leaf_hash(rec, len, h);
		pc_merkle_range_append(&r, h);
	}
	pc_merkle_range_root(&r, root);
}

static struct pc_ledger *
open_ok(const char *dir)
{
	struct pc_error err = { .msg = "" };
	struct pc_ledger *l = pc_ledger_open(dir, ORIGIN, &err);

	if (l == NULL)
		fail_msg("open %s: %s", dir, err.msg);
	return l;
}

static void
append_gen(struct pc_ledger *l, uint64_t from, uint64_t to)
{
	uint8_t rec[MAXREC];

	for (uint64_t i = from; i < to; i++)
		assert_int_equal(pc_ledger_append(l, rec, gen(i, rec)), 0);
}

/* Every record, leaf and the root are what records 0..n-1 of gen() give. */
static void
assert_contents(struct pc_ledger *l, uint64_t n)
{
	uint8_t rec[MAXREC], got[MAXREC], h[PC_HASH_LEN], leaf[PC_HASH_LEN];
	uint8_t root[PC_HASH_LEN], want[PC_HASH_LEN];

	assert_true(pc_ledger_size(l) == n);
	for (uint64_t i = 0; i < n; i++) {
		size_t len = gen(i, rec);
		assert_int_equal(pc_ledger_record(l, i, got, sizeof(got)), (long)len);
		assert_memory_equal(got, rec, len);
		pc_merkle_leaf_hash(rec, len, h);
		assert_int_equal(pc_ledger_leaf(l, i, leaf), 0);
		assert_memory_equal(leaf, h, PC_HASH_LEN);
	}
	assert_int_equal(pc_ledger_record(l, n, got, sizeof(got)), -1);
	assert_int_equal(pc_ledger_leaf(l, n, leaf), -1);
	pc_ledger_root(l, root);
	ref_root(n, want);
	assert_memory_equal(root, want, PC_HASH_LEN);
}

static off_t
file_size(const char *dir, const char *name)
{
	char p[512];
	struct stat st;

	path_in(p, sizeof(p), dir, name);
	if (stat(p, &st) < 0)
		return -1;
	return st.st_size;
}

static uint8_t *
read_file(const char *dir, const char *name, size_t *len)
{
	char p[512];
	FILE *f;
	uint8_t *b;
	off_t n = file_size(dir, name);

	assert_true(n >= 0);
	path_in(p, sizeof(p), dir, name);
	f = fopen(p, "rb");
	assert_non_null(f);
	b = malloc((size_t)n + 1);
	assert_int_equal(fread(b, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	*len = (size_t)n;
	return b;
}

static void
write_file(const char *dir, const char *name, const void *data, size_t len)
{
	char p[512];
	FILE *f;

	path_in(p, sizeof(p), dir, name);
	f = fopen(p, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(data, 1, len, f), len);
	fclose(f);
}

#define ALL UINT64_MAX

/*
 * A copy of ledger `src` in a fresh directory, with `records` replaced and
 * the hashes file cut to `hashes` entries: after a crash it holds only
 * entries whose records were durable.
 */
static void
clone_with_records(const char *src, char *dst, size_t dstlen, const uint8_t *records, size_t len,
		   uint64_t hashes)
{
	static const char *const names[] = { "origin", "hashes", "checkpoint" };

	new_dir(dst, dstlen);
	assert_int_equal(mkdir(dst, 0750), 0);
	for (size_t k = 0; k < sizeof(names) / sizeof(names[0]); k++) {
		size_t n;

		if (file_size(src, names[k]) < 0)
			continue;
		uint8_t *b = read_file(src, names[k], &n);
		if (strcmp(names[k], "hashes") == 0 && hashes != ALL && n > hashes * PC_HASH_LEN)
			n = hashes * PC_HASH_LEN;
		write_file(dst, names[k], b, n);
		free(b);
	}
	write_file(dst, "records", records, len);
}

/* Offset of entry i in a records file. */
static size_t
entry_offset(uint64_t i)
{
	uint8_t rec[MAXREC];
	size_t off = 0;

	for (uint64_t k = 0; k < i; k++)
		off += 4 + gen(k, rec) + PC_HASH_LEN;
	return off;
}

/* ---- tests ---- */

static void
test_append_reopen(void **state)
{
	char dir[512], note[PC_NOTE_MAX];
	uint8_t root[PC_HASH_LEN], empty[PC_HASH_LEN];

	(void)state;
	new_dir(dir, sizeof(dir));
	struct pc_ledger *l = open_ok(dir);
	assert_string_equal(pc_ledger_origin(l), ORIGIN);
	assert_true(pc_ledger_size(l) == 0);
	pc_ledger_root(l, root);
	crypto_hash_sha256(empty, NULL, 0);
	assert_memory_equal(root, empty, PC_HASH_LEN);
	assert_int_equal(pc_ledger_checkpoint(l, note, sizeof(note)), 0);
	assert_true(pc_ledger_published_size(l) == 0);

	for (uint64_t i = 0; i < 40; i++) {
		append_gen(l, i, i + 1);
		uint8_t want[PC_HASH_LEN];
		pc_ledger_root(l, root);
		ref_root(i + 1, want);
		assert_memory_equal(root, want, PC_HASH_LEN);
	}
	assert_contents(l, 40);
	assert_int_equal(file_size(dir, "records"), (off_t)entry_offset(40));
	assert_int_equal(file_size(dir, "hashes"), 40 * PC_HASH_LEN);
	assert_true(pc_ledger_bytes(l) == entry_offset(40) + 40 * PC_HASH_LEN);
	/* refused: empty and oversized records */
	uint8_t one = 0;
	assert_int_equal(pc_ledger_append(l, &one, 0), -1);
	assert_true(pc_ledger_size(l) == 40);
	pc_ledger_close(l);

	/* the origin file names the log */
	size_t olen;
	uint8_t *o = read_file(dir, "origin", &olen);
	assert_int_equal(olen, strlen(ORIGIN "\n"));
	assert_memory_equal(o, ORIGIN "\n", olen);
	free(o);

	l = open_ok(dir);
	assert_contents(l, 40);
	append_gen(l, 40, 55);
	assert_contents(l, 55);
	pc_ledger_close(l);
	l = open_ok(dir);
	assert_contents(l, 55);
	pc_ledger_close(l);
}

static void
test_origin_and_lock(void **state)
{
	char dir[512], dir2[512];
	struct pc_error err;

	(void)state;
	new_dir(dir, sizeof(dir));
	struct pc_ledger *l = open_ok(dir);
	append_gen(l, 0, 3);

	/* one writer at a time */
	assert_null(pc_ledger_open(dir, ORIGIN, &err));
	assert_non_null(strstr(err.msg, "in use"));
	/* readers do not lock */
	struct pc_ledger *ro = pc_ledger_open_ro(dir, &err);
	assert_non_null(ro);
	assert_true(pc_ledger_size(ro) == 3);
	pc_ledger_close(ro);
	pc_ledger_close(l);

	/* another log's ledger is refused */
	assert_null(pc_ledger_open(dir, "podcap/other", &err));
	assert_non_null(strstr(err.msg, "belongs to log 'podcap/test-app'"));
	assert_null(pc_ledger_open(dir, "bad origin", &err));
	assert_null(pc_ledger_open(dir, "", &err));

	/* records without an origin file: refused, not adopted */
	size_t n;
	uint8_t *rec = read_file(dir, "records", &n);
	new_dir(dir2, sizeof(dir2));
	assert_int_equal(mkdir(dir2, 0750), 0);
	write_file(dir2, "records", rec, n);
	free(rec);
	assert_null(pc_ledger_open(dir2, ORIGIN, &err));
	assert_non_null(strstr(err.msg, "no origin"));

	l = open_ok(dir);
	assert_contents(l, 3);
	pc_ledger_close(l);
}

static void
test_torn_tail_every_offset(void **state)
{
	char src[512], dir[512];
	size_t len;
	const uint64_t n = 6;
	uint8_t rec[MAXREC], got[MAXREC];

	(void)state;
	new_dir(src, sizeof(src));
	struct pc_ledger *l = open_ok(src);
	append_gen(l, 0, n);
	pc_ledger_close(l);
	uint8_t *records = read_file(src, "records", &len);
	size_t last = entry_offset(n - 1);
	assert_int_equal(len, entry_offset(n));

	for (size_t cut = last; cut < len; cut++) {
		clone_with_records(src, dir, sizeof(dir), records, cut, n - 1);
		l = open_ok(dir);
		/* every complete record is kept, the torn one is cut from the file */
		assert_contents(l, n - 1);
		assert_int_equal(file_size(dir, "records"), (off_t)last);
		assert_int_equal(file_size(dir, "hashes"), (off_t)((n - 1) * PC_HASH_LEN));
		/* and the log goes on */
		size_t rlen = gen(1000 + cut, rec);
		assert_int_equal(pc_ledger_append(l, rec, rlen), 0);
		pc_ledger_close(l);
		l = open_ok(dir);
		assert_true(pc_ledger_size(l) == n);
		assert_int_equal(pc_ledger_record(l, n - 1, got, sizeof(got)), (long)rlen);
		assert_memory_equal(got, rec, rlen);
		pc_ledger_close(l);
		pc_test_rm_rf(dir);

		/* had the hashes file recorded it, the entry was durable: damage, not a tail */
		struct pc_error err;
		clone_with_records(src, dir, sizeof(dir), records, cut, ALL);
		assert_null(pc_ledger_open(dir, ORIGIN, &err));
		assert_non_null(strstr(err.msg, "record 5 is corrupt"));
		assert_int_equal(file_size(dir, "records"), (off_t)cut);
		pc_test_rm_rf(dir);
	}

	/* a complete last entry whose bytes do not match its hash (a torn write) */
	uint8_t *t = malloc(len + 4096);
	memcpy(t, records, len);
	t[last + 10] ^= 0x40;
	clone_with_records(src, dir, sizeof(dir), t, len, n - 1);
	l = open_ok(dir);
	assert_contents(l, n - 1);
	pc_ledger_close(l);

	/* zeros where the file grew but the entry never landed */
	memcpy(t, records, len);
	memset(t + len, 0, 4096);
	clone_with_records(src, dir, sizeof(dir), t, len + 4096, ALL);
	l = open_ok(dir);
	assert_contents(l, n);
	assert_int_equal(file_size(dir, "records"), (off_t)len);
	pc_ledger_close(l);
	free(t);
	free(records);
}

static void
test_corrupt_middle_refused(void **state)
{
	char src[512], dir[512];
	struct pc_error err;
	size_t len;

	(void)state;
	new_dir(src, sizeof(src));
	struct pc_ledger *l = open_ok(src);
	append_gen(l, 0, 6);
	pc_ledger_close(l);
	uint8_t *records = read_file(src, "records", &len);
	uint8_t *t = malloc(len);
	size_t off2 = entry_offset(2);

	/* a record byte, its stored hash, its length field: each refused, nothing cut */
	const size_t where[] = { off2 + 4 + 5, entry_offset(3) - 1, off2 + 1 };
	for (size_t k = 0; k < sizeof(where) / sizeof(where[0]); k++) {
		memcpy(t, records, len);
		t[where[k]] ^= 0x01;
		clone_with_records(src, dir, sizeof(dir), t, len, ALL);
		err.msg[0] = '\0';
		assert_null(pc_ledger_open(dir, ORIGIN, &err));
		assert_non_null(strstr(err.msg, "record 2 is corrupt"));
		assert_int_equal(file_size(dir, "records"), (off_t)len);
		/* a reader still sees every entry and can judge the bytes itself */
		struct pc_ledger *ro = pc_ledger_open_ro(dir, &err);
		assert_non_null(ro);
		assert_true(pc_ledger_size(ro) == (k == 2 ? 2 : 6));
		if (k == 0) {
			/*
			 * It leaves the hashing to the verifier: its tree is the
			 * stored hashes', not the altered bytes' (hashing them at
			 * open doubled podcap-verify's time).
			 */
			uint8_t root[PC_HASH_LEN], want[PC_HASH_LEN];
			pc_ledger_root(ro, root);
			ref_root(6, want);
			assert_memory_equal(root, want, PC_HASH_LEN);
		}
		pc_ledger_close(ro);
	}
	/* a length field of zero with data after it is damage, not a torn tail */
	memcpy(t, records, len);
	memset(t + off2, 0, 4);
	clone_with_records(src, dir, sizeof(dir), t, len, 2);
	assert_null(pc_ledger_open(dir, ORIGIN, &err));
	assert_non_null(strstr(err.msg, "record 2 is corrupt"));
	free(t);
	free(records);
}

static void
test_checkpoint(void **state)
{
	char dir[512], note[PC_NOTE_MAX], got[PC_NOTE_MAX];
	struct pc_error err;
	uint8_t root[PC_HASH_LEN], bad[PC_HASH_LEN];
	struct pc_signer_key *k = pc_test_key(ORIGIN, NULL);

	(void)state;
	new_dir(dir, sizeof(dir));
	struct pc_ledger *l = open_ok(dir);
	append_gen(l, 0, 10);
	pc_ledger_root(l, root);

	/* refused: wrong root, records not there, another log, no body terminator */
	memcpy(bad, root, PC_HASH_LEN);
	bad[0] ^= 1;
	size_t n = pc_test_checkpoint(k, ORIGIN, 10, bad, note, sizeof(note));
	assert_int_equal(pc_ledger_publish(l, note, n, NULL), -1);
	n = pc_test_checkpoint(k, ORIGIN, 11, root, note, sizeof(note));
	assert_int_equal(pc_ledger_publish(l, note, n, NULL), -1);
	n = pc_test_checkpoint(k, "podcap/other", 10, root, note, sizeof(note));
	assert_int_equal(pc_ledger_publish(l, note, n, NULL), -1);
	assert_int_equal(pc_ledger_publish(l, "podcap/test-app\n10\n", 19, NULL), -1);
	assert_int_equal(pc_ledger_checkpoint(l, got, sizeof(got)), 0);
	assert_int_equal(file_size(dir, "checkpoint"), -1);

	/* an older size: its root is recomputed from the leaves */
	uint8_t r7[PC_HASH_LEN];
	ref_root(7, r7);
	n = pc_test_checkpoint(k, ORIGIN, 7, r7, note, sizeof(note));
	assert_int_equal(pc_ledger_publish(l, note, n, NULL), 0);
	assert_true(pc_ledger_published_size(l) == 7);

	n = pc_test_checkpoint(k, ORIGIN, 10, root, note, sizeof(note));
	assert_int_equal(pc_ledger_publish(l, note, n, NULL), 0);
	assert_true(pc_ledger_published_size(l) == 10);
	assert_int_equal(pc_ledger_checkpoint(l, got, sizeof(got)), (long)n);
	assert_memory_equal(got, note, n);
	assert_int_equal(pc_ledger_checkpoint(l, got, n - 1), -1);
	assert_int_equal(file_size(dir, "checkpoint"), (off_t)n);
	assert_int_equal(file_size(dir, "checkpoint.tmp"), -1);
	assert_true(pc_ledger_bytes(l) == entry_offset(10) + 10 * PC_HASH_LEN + n);

	/* never back to an older checkpoint */
	n = pc_test_checkpoint(k, ORIGIN, 7, r7, note, sizeof(note));
	assert_int_equal(pc_ledger_publish(l, note, n, NULL), -1);
	assert_true(pc_ledger_published_size(l) == 10);

	append_gen(l, 10, 12);
	pc_ledger_close(l);

	l = open_ok(dir);
	assert_true(pc_ledger_published_size(l) == 10);
	assert_true(pc_ledger_size(l) == 12);
	n = pc_test_checkpoint(k, ORIGIN, 10, root, note, sizeof(note));
	assert_int_equal(pc_ledger_checkpoint(l, got, sizeof(got)), (long)n);
	assert_memory_equal(got, note, n);
	pc_ledger_close(l);

	/* a torn tail beyond the checkpoint is cut; one inside it is refused */
	size_t len;
	uint8_t *records = read_file(dir, "records", &len);
	char d2[512];
	clone_with_records(dir, d2, sizeof(d2), records, entry_offset(11) + 3, 11);
	l = open_ok(d2);
	assert_contents(l, 11);
	pc_ledger_close(l);
	clone_with_records(dir, d2, sizeof(d2), records, entry_offset(9) + 3, 9);
	assert_null(pc_ledger_open(d2, ORIGIN, &err));
	assert_non_null(strstr(err.msg, "checkpoint covers 10 records but only 9"));
	clone_with_records(dir, d2, sizeof(d2), records, entry_offset(10), 10);
	l = open_ok(d2);
	assert_contents(l, 10);
	pc_ledger_close(l);
	/* whole entries gone that the hashes file shows were durable */
	clone_with_records(dir, d2, sizeof(d2), records, entry_offset(10), ALL);
	assert_null(pc_ledger_open(d2, ORIGIN, &err));
	assert_non_null(strstr(err.msg, "record 10 is corrupt (missing from records"));
	/* the last signed entry garbled: not cut as a torn tail, refused */
	uint8_t *t = malloc(len);
	memcpy(t, records, len);
	t[entry_offset(9) + 8] ^= 0x10;
	clone_with_records(dir, d2, sizeof(d2), t, entry_offset(10), 9);
	assert_null(pc_ledger_open(d2, ORIGIN, &err));
	assert_non_null(strstr(err.msg, "checkpoint covers 10 records but only 9"));
	assert_int_equal(file_size(d2, "records"), (off_t)entry_offset(10));
	clone_with_records(dir, d2, sizeof(d2), t, entry_offset(10), ALL);
	assert_null(pc_ledger_open(d2, ORIGIN, &err));
	assert_non_null(strstr(err.msg, "record 9 is corrupt"));
	assert_non_null(strstr(err.msg, "covered by the signed checkpoint"));

	/* rewritten consistently (bytes and framing hash): the root gives it away */
	memcpy(t, records, len);
	size_t off = entry_offset(4);
	uint8_t rec[MAXREC];
	size_t rlen = gen(4, rec);
	t[off + 4 + 3] ^= 0x08;
	pc_merkle_leaf_hash(t + off + 4, rlen, t + off + 4 + rlen);
	clone_with_records(dir, d2, sizeof(d2), t, len, ALL);
	assert_null(pc_ledger_open(d2, ORIGIN, &err));
	assert_non_null(strstr(err.msg, "do not hash to the root of the signed checkpoint"));
	free(t);
	free(records);

	/* a checkpoint of another log in the directory */
	n = pc_test_checkpoint(k, "podcap/other", 10, root, note, sizeof(note));
	write_file(dir, "checkpoint", note, n);
	assert_null(pc_ledger_open(dir, ORIGIN, &err));
	assert_non_null(strstr(err.msg, "is for log 'podcap/other'"));
	pc_signer_key_free(k);
}

static void
test_read_only(void **state)
{
	char dir[512], d2[512], note[PC_NOTE_MAX];
	struct pc_error err;
	struct pc_signer_key *k = pc_test_key(ORIGIN, NULL);
	uint8_t rec[MAXREC];

	(void)state;
	new_dir(dir, sizeof(dir));
	struct pc_ledger *l = open_ok(dir);
	append_gen(l, 0, 8);
	pc_test_publish(l, k);
	pc_ledger_close(l);

	size_t len;
	uint8_t *records = read_file(dir, "records", &len);
	clone_with_records(dir, d2, sizeof(d2), records, len - 5, ALL);
	struct pc_ledger *ro = pc_ledger_open_ro(d2, &err);
	assert_non_null(ro);
	/* the torn tail is ignored, not repaired */
	assert_contents(ro, 7);
	assert_int_equal(file_size(d2, "records"), (off_t)(len - 5));
	assert_true(pc_ledger_published_size(ro) == 8);
	assert_true(pc_ledger_checkpoint(ro, note, sizeof(note)) > 0);
	assert_int_equal(pc_ledger_append(ro, rec, gen(0, rec)), -1);
	assert_int_equal(pc_ledger_publish(ro, note, strlen(note), NULL), -1);
	pc_ledger_close(ro);

	/* without a hashes file the leaves are computed from the records */
	char p[512];
	path_in(p, sizeof(p), d2, "hashes");
	assert_int_equal(unlink(p), 0);
	ro = pc_ledger_open_ro(d2, &err);
	assert_non_null(ro);
	assert_contents(ro, 7);
	pc_ledger_close(ro);

	/* no ledger there */
	assert_null(pc_ledger_open_ro("/nonexistent/podcap", &err));
	assert_true(strlen(err.msg) > 0);
	free(records);
	pc_signer_key_free(k);
}

static void
test_hashes_rebuilt(void **state)
{
	char dir[512], p[512];
	uint8_t junk[PC_HASH_LEN * 3];

	(void)state;
	new_dir(dir, sizeof(dir));
	struct pc_ledger *l = open_ok(dir);
	append_gen(l, 0, 9);
	pc_ledger_close(l);

	/* garbled and too long */
	memset(junk, 0xab, sizeof(junk));
	write_file(dir, "hashes", junk, sizeof(junk));
	size_t n;
	uint8_t *h = read_file(dir, "hashes", &n);
	free(h);
	l = open_ok(dir);
	assert_contents(l, 9);
	pc_ledger_close(l);
	assert_int_equal(file_size(dir, "hashes"), 9 * PC_HASH_LEN);

	/* gone */
	path_in(p, sizeof(p), dir, "hashes");
	assert_int_equal(unlink(p), 0);
	l = open_ok(dir);
	assert_contents(l, 9);
	append_gen(l, 9, 10);
	assert_contents(l, 10);
	pc_ledger_close(l);
}

/* ---- a reader thread racing the writer ---- */

struct race {
	struct pc_ledger *l;
	const struct pc_signer_key *k;
	uint64_t total;
	int done;
	uint64_t reads, roots;
	int bad;
};

static void *
reader(void *arg)
{
	struct race *r = arg;
	uint8_t rec[MAXREC], got[MAXREC], h[PC_HASH_LEN], leaf[PC_HASH_LEN];
	char note[PC_NOTE_MAX];

	while (!__atomic_load_n(&r->done, __ATOMIC_ACQUIRE)) {
		uint64_t n = pc_ledger_size(r->l);

		if (n == 0)
			continue;
		uint64_t i = randombytes_uniform((uint32_t)n);
		size_t len = gen(i, rec);
		if (pc_ledger_record(r->l, i, got, sizeof(got)) != (long)len ||
		    memcmp(got, rec, len) != 0)
			r->bad++;
		pc_merkle_leaf_hash(rec, len, h);
		if (pc_ledger_leaf(r->l, i, leaf) != 0 || memcmp(leaf, h, PC_HASH_LEN) != 0)
			r->bad++;
		r->reads++;

		/* the published checkpoint always matches the leaves a reader gets */
		long nl = pc_ledger_checkpoint(r->l, note, sizeof(note));
		if (nl > 0 && r->reads % 16 == 0) {
			struct pc_checkpoint cp;
			struct pc_error why;
			const char *blank = memmem(note, (size_t)nl, "\n\n", 2);
			uint8_t root[PC_HASH_LEN];

			if (blank == NULL ||
			    pc_checkpoint_parse_body(note, (size_t)(blank - note) + 1, &cp, &why) != 0 ||
			    cp.size > pc_ledger_size(r->l) ||
			    pc_merkle_root(pc_ledger_leaf, r->l, cp.size, root) != 0 ||
			    memcmp(root, cp.root, PC_HASH_LEN) != 0)
				r->bad++;
			r->roots++;
		}
	}
	return NULL;
}

static void
test_concurrent_reader(void **state)
{
	char dir[512];
	struct pc_signer_key *k = pc_test_key(ORIGIN, NULL);
	struct race r = { .k = k, .total = 300 };
	pthread_t th;

	(void)state;
	new_dir(dir, sizeof(dir));
	r.l = open_ok(dir);
	assert_int_equal(pthread_create(&th, NULL, reader, &r), 0);
	for (uint64_t i = 0; i < r.total; i++) {
		append_gen(r.l, i, i + 1);
		if (i % 5 == 4)
			pc_test_publish(r.l, k);
	}
	__atomic_store_n(&r.done, 1, __ATOMIC_RELEASE);
	pthread_join(th, NULL);
	assert_int_equal(r.bad, 0);
	assert_true(r.reads > 100);
	assert_true(r.roots > 0);
	assert_contents(r.l, r.total);
	pc_ledger_close(r.l);
	pc_signer_key_free(k);
}

/*
 * pc_ledger_check agrees with pc_ledger_open on what it refuses and why,
 * and makes nothing: not the directory, not its origin file.
 */
static void
test_check(void **state)
{
	char dir[512], sub[600], file[600];
	struct pc_error err;
	struct stat st;

	(void)state;
	new_dir(dir, sizeof(dir));
	/* absent, in a directory that exists: it can be made, and is not */
	assert_int_equal(pc_ledger_check(dir, ORIGIN, &err), 0);
	assert_int_equal(stat(dir, &st), -1);
	/* absent, in a directory that does not exist: what the open says too */
	path_in(sub, sizeof(sub), dir, "ledger");
	assert_int_equal(pc_ledger_check(sub, ORIGIN, &err), -1);
	assert_non_null(strstr(err.msg, "No such file or directory"));
	assert_null(pc_ledger_open(sub, ORIGIN, &err));
	assert_non_null(strstr(err.msg, "No such file or directory"));
	/* a file where the directory would be, or would be made */
	write_file(base, "afile", (const uint8_t *)"x", 1);
	path_in(file, sizeof(file), base, "afile");
	assert_int_equal(pc_ledger_check(file, ORIGIN, &err), -1);
	assert_non_null(strstr(err.msg, "Not a directory"));
	path_in(sub, sizeof(sub), file, "ledger");
	assert_int_equal(pc_ledger_check(sub, ORIGIN, &err), -1);

	/* a ledger of this log passes, also while its writer holds the lock */
	struct pc_ledger *l = open_ok(dir);
	append_gen(l, 0, 2);
	assert_int_equal(pc_ledger_check(dir, ORIGIN, &err), 0);
	/* another log's is refused with the open's message */
	assert_int_equal(pc_ledger_check(dir, "podcap/other", &err), -1);
	assert_non_null(strstr(err.msg, "belongs to log 'podcap/test-app', not 'podcap/other'"));
	assert_int_equal(pc_ledger_check(dir, "bad origin", &err), -1);
	pc_ledger_close(l);

	/* records and no origin file */
	size_t n;
	uint8_t *rec = read_file(dir, "records", &n);
	new_dir(sub, sizeof(sub));
	assert_int_equal(mkdir(sub, 0750), 0);
	write_file(sub, "records", rec, n);
	free(rec);
	assert_int_equal(pc_ledger_check(sub, ORIGIN, &err), -1);
	assert_non_null(strstr(err.msg, "no origin"));
	/* an empty directory passes and stays empty */
	new_dir(sub, sizeof(sub));
	assert_int_equal(mkdir(sub, 0750), 0);
	assert_int_equal(pc_ledger_check(sub, ORIGIN, &err), 0);
	path_in(file, sizeof(file), sub, "origin");
	assert_int_equal(stat(file, &st), -1);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_append_reopen),
		cmocka_unit_test(test_origin_and_lock),
		cmocka_unit_test(test_torn_tail_every_offset),
		cmocka_unit_test(test_corrupt_middle_refused),
		cmocka_unit_test(test_checkpoint),
		cmocka_unit_test(test_read_only),
		cmocka_unit_test(test_hashes_rebuilt),
		cmocka_unit_test(test_concurrent_reader),
		cmocka_unit_test(test_check),
	};

	if (sodium_init() < 0)
		return 1;
	return cmocka_run_group_tests(tests, setup, teardown);
}
