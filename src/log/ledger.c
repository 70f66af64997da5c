/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The ledger directory (docs/log-format.md, "Ledger directory"):
 *
 *   origin      the log origin, one line, written once at creation
 *   records     append-only; per record: u32 BE length, the record bytes,
 *               and its 32-byte Merkle leaf hash
 *   hashes      leaf hash i at byte offset 32 * i (derived from records,
 *               rebuilt on open: it only makes pc_ledger_leaf O(1))
 *   checkpoint  the latest signed checkpoint note, replaced atomically
 *
 * One writer appends; readers in other threads use pread and see only
 * records whose count has been published with a release store, after the
 * bytes were written and synced. The offset index is a table of fixed
 * chunks that never move, so readers need no lock to use it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/bytes.h"
#include "base/clock.h"
#include "base/fileio.h"
#include "record.h"

#include "ledger_impl.h"

int
pc_ledger_parse_note(const char *note, size_t len, struct pc_checkpoint *cp, struct pc_error *err)
{
	const char *blank = memmem(note, len, "\n\n", 2);

	if (blank == NULL)
		return pc_error_set(err, "no empty line after the checkpoint body");
	return pc_checkpoint_parse_body(note, (size_t)(blank - note) + 1, cp, err);
}

/* ---- writing ---- */

/* Takes back a partial append so the file ends at the last durable entry. */
static void
undo_append(struct pc_ledger *l, uint64_t end)
{
	/* hashes first: an entry it holds must be complete in records */
	if (ftruncate(l->hashfd, (off_t)(l->count * PC_HASH_LEN)) < 0 || fsync(l->hashfd) < 0 ||
	    ftruncate(l->recfd, (off_t)end) < 0 || fsync(l->recfd) < 0)
		l->broken = true;
}

int
pc_ledger_append(struct pc_ledger *l, const uint8_t *rec, size_t len)
{
	uint64_t i = l->count, end = l->rec_end;
	uint8_t hdr[4], h[PC_HASH_LEN];

	if (l->ro || l->broken) {
		errno = l->ro ? EBADF : EIO;
		return -1;
	}
	if (len == 0 || len > PC_RECORD_MAX) {
		errno = EINVAL;
		return -1;
	}
	if (i >= MAX_RECORDS) {
		errno = ENOSPC;
		return -1;
	}
	uint64_t t0 = pc_mono_ns();
	pc_store_be32(hdr, (uint32_t)len);
	pc_merkle_leaf_hash(rec, len, h);

	uint8_t *entry = malloc(len + ENTRY_OVERHEAD);
	if (entry == NULL)
		return -1;
	memcpy(entry, hdr, 4);
	memcpy(entry + 4, rec, len);
	memcpy(entry + 4 + len, h, PC_HASH_LEN);
	int rc = pc_pwrite_all(l->recfd, entry, len + ENTRY_OVERHEAD, end);
	free(entry);
	uint64_t t1 = pc_mono_ns();
	if (rc < 0 || fdatasync(l->recfd) < 0) {
		int e = errno;
		undo_append(l, end);
		errno = e;
		return -1;
	}
	uint64_t t2 = pc_mono_ns();
	if (pc_pwrite_all(l->hashfd, h, PC_HASH_LEN, i * PC_HASH_LEN) < 0)
		goto undo;
	uint64_t t3 = pc_mono_ns();
	if (fdatasync(l->hashfd) < 0 || set_entry_end(l, i, end + len + ENTRY_OVERHEAD) < 0)
		goto undo;
	l->last_write_ns = (t1 - t0) + (t3 - t2);
	l->last_sync_ns = (t2 - t1) + (pc_mono_ns() - t3);
	pc_merkle_range_append(&l->range, h);
	pthread_mutex_lock(&l->sh->mu);
	pc_merkle_range_root(&l->range, l->sh->root);
	pthread_mutex_unlock(&l->sh->mu);
	__atomic_store_n(&l->rec_end, end + len + ENTRY_OVERHEAD, __ATOMIC_RELEASE);
	__atomic_store_n(&l->count, i + 1, __ATOMIC_RELEASE);
	return 0;
undo:;
	int e = errno;
	undo_append(l, end);
	errno = e;
	return -1;
}

void
pc_ledger_append_times(const struct pc_ledger *l, uint64_t *write_ns, uint64_t *sync_ns)
{
	*write_ns = l->last_write_ns;
	*sync_ns = l->last_sync_ns;
}

uint64_t
pc_ledger_size(const struct pc_ledger *l)
{
	return load_count(l);
}

void
pc_ledger_root(const struct pc_ledger *l, uint8_t root[PC_HASH_LEN])
{
	pthread_mutex_lock(&l->sh->mu);
	memcpy(root, l->sh->root, PC_HASH_LEN);
	pthread_mutex_unlock(&l->sh->mu);
}

const char *
pc_ledger_origin(const struct pc_ledger *l)
{
	return l->origin;
}

/* A checkpoint may only be published for records that are durable, under their root. */
static int
check_publish(struct pc_ledger *l, const struct pc_checkpoint *cp, struct pc_error *err)
{
	uint8_t root[PC_HASH_LEN];
	uint64_t n = load_count(l);

	if (strcmp(cp->origin, l->origin) != 0)
		return pc_error_set(err, "checkpoint of another log");
	if (cp->size > n)
		return pc_error_set(err, "checkpoint covers records that are not durable");
	if (cp->size < __atomic_load_n(&l->published, __ATOMIC_ACQUIRE))
		return pc_error_set(err, "checkpoint is older than the one published");
	if (cp->size == n)
		pc_ledger_root(l, root);
	else if (pc_merkle_root(pc_ledger_leaf, l, cp->size, root) < 0)
		return pc_error_set(err, "cannot read the leaf hashes");
	if (memcmp(root, cp->root, PC_HASH_LEN) != 0)
		return pc_error_set(err, "checkpoint root is not the root of the ledger");
	return 0;
}

int
pc_ledger_publish(struct pc_ledger *l, const char *note, size_t len, struct pc_error *err)
{
	struct pc_checkpoint cp;

	if (l->ro || l->broken)
		return pc_error_set(err, "ledger %s: %s", l->dir,
				    l->ro ? "opened read-only" : "broken by an earlier write error");
	if (len == 0 || len > PC_NOTE_MAX)
		return pc_error_set(err, "ledger %s: a checkpoint note of %zu bytes", l->dir, len);
	if (pc_ledger_parse_note(note, len, &cp, err) < 0 || check_publish(l, &cp, err) < 0)
		return pc_error_prefix(err, "ledger %s: refusing to publish a checkpoint", l->dir);
	if (pc_replace_file_at(l->dirfd, "checkpoint", note, len, 0640) < 0)
		return pc_error_errno(err, "%s/checkpoint", l->dir);
	pthread_mutex_lock(&l->sh->mu);
	memcpy(l->sh->note, note, len);
	l->sh->note_len = len;
	pthread_mutex_unlock(&l->sh->mu);
	__atomic_store_n(&l->published, cp.size, __ATOMIC_RELEASE);
	return 0;
}

long
pc_ledger_checkpoint(struct pc_ledger *l, char *buf, size_t len)
{
	long n;

	pthread_mutex_lock(&l->sh->mu);
	n = (long)l->sh->note_len;
	if ((size_t)n > len) {
		n = -1;
	} else {
		memcpy(buf, l->sh->note, (size_t)n);
		if ((size_t)n < len)
			buf[n] = '\0';
	}
	pthread_mutex_unlock(&l->sh->mu);
	return n;
}

uint64_t
pc_ledger_published_size(struct pc_ledger *l)
{
	return __atomic_load_n(&l->published, __ATOMIC_ACQUIRE);
}

/* ---- reading (any thread) ---- */

long
pc_ledger_record(struct pc_ledger *l, uint64_t i, uint8_t *buf, size_t len)
{
	if (i < l->first || i >= load_count(l)) {
		errno = ERANGE;
		return -1;
	}
	uint64_t start = entry_start(l, i), end = entry_end(l, i);
	size_t n = (size_t)(end - start - ENTRY_OVERHEAD);
	if (n > len) {
		errno = ENOBUFS;
		return -1;
	}
	if (pc_pread_all(l->recfd, buf, n, start + 4) < 0)
		return -1;
	return (long)n;
}

int
pc_ledger_leaf(void *ledger, uint64_t i, uint8_t out[PC_HASH_LEN])
{
	struct pc_ledger *l = ledger;

	if (i < l->first || i >= load_count(l)) {
		errno = ERANGE;
		return -1;
	}
	if (!l->ro || i < l->hashes_valid)
		return pc_pread_all(l->hashfd, out, PC_HASH_LEN, i * PC_HASH_LEN);

	/* a read-only open of a ledger whose hashes file lags: hash the bytes */
	uint8_t *buf = malloc(PC_RECORD_MAX);
	if (buf == NULL)
		return -1;
	long n = pc_ledger_record(l, i, buf, PC_RECORD_MAX);
	if (n >= 0)
		pc_merkle_leaf_hash(buf, (size_t)n, out);
	free(buf);
	return n < 0 ? -1 : 0;
}

uint64_t
pc_ledger_bytes(struct pc_ledger *l)
{
	uint64_t n;

	pthread_mutex_lock(&l->sh->mu);
	n = l->sh->note_len;
	pthread_mutex_unlock(&l->sh->mu);
	return __atomic_load_n(&l->rec_end, __ATOMIC_ACQUIRE) + load_count(l) * PC_HASH_LEN + n;
}
