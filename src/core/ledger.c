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
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "podcap/bytes.h"
#include "podcap/clock.h"
#include "podcap/config.h"
#include "podcap/ledger.h"
#include "podcap/note.h"
#include "podcap/record.h"

#define ENTRY_OVERHEAD (4 + PC_HASH_LEN)
#define CHUNK_SHIFT 16
#define CHUNK_LEN (1u << CHUNK_SHIFT)
#define MAX_CHUNKS (1u << 16)
#define MAX_RECORDS ((uint64_t)CHUNK_LEN * MAX_CHUNKS - 1)

/* What readers in other threads share with the writer beyond atomics. */
struct shared {
	pthread_mutex_t mu;
	uint8_t root[PC_HASH_LEN];
	char note[PC_NOTE_MAX];
	size_t note_len;
};

struct pc_ledger {
	char dir[PC_PATH_LEN];
	char origin[PC_KEY_NAME_LEN];
	int dirfd;
	int recfd;
	int hashfd;
	bool ro;
	bool broken;                 /* a write failed half-way: refuse to go on */
	uint64_t count;              /* durable records (atomic) */
	uint64_t rec_end;            /* bytes of records in use (atomic) */
	uint64_t published;          /* size of the published checkpoint (atomic) */
	uint64_t hashes_valid;       /* read-only open: entries present in `hashes` */
	uint64_t first;              /* read-only open from a record: the first readable */
	uint64_t first_off;          /* ... and where its entry starts */
	struct pc_merkle_range range;/* writer only */
	struct shared *sh;
	uint64_t *ends[MAX_CHUNKS];  /* ends[i]: offset just past entry i */
	uint64_t last_write_ns;      /* the last append: hashing and writing */
	uint64_t last_sync_ns;       /* the last append: its fdatasyncs */
};

static int
pread_all(int fd, void *buf, size_t len, uint64_t off)
{
	uint8_t *p = buf;

	while (len > 0) {
		ssize_t n = pread(fd, p, len, (off_t)off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		if (n == 0) {
			errno = EIO;
			return -1;
		}
		p += n;
		len -= (size_t)n;
		off += (uint64_t)n;
	}
	return 0;
}

static int
pwrite_all(int fd, const void *buf, size_t len, uint64_t off)
{
	const uint8_t *p = buf;

	while (len > 0) {
		ssize_t n = pwrite(fd, p, len, (off_t)off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		p += n;
		len -= (size_t)n;
		off += (uint64_t)n;
	}
	return 0;
}

static uint64_t
entry_end(const struct pc_ledger *l, uint64_t i)
{
	return l->ends[i >> CHUNK_SHIFT][i & (CHUNK_LEN - 1)];
}

static uint64_t
entry_start(const struct pc_ledger *l, uint64_t i)
{
	return i == l->first ? l->first_off : entry_end(l, i - 1);
}

/* Writer only: records where entry i ends, allocating its chunk first. */
static int
set_entry_end(struct pc_ledger *l, uint64_t i, uint64_t end)
{
	uint64_t **chunk = &l->ends[i >> CHUNK_SHIFT];

	if (*chunk == NULL) {
		*chunk = calloc(CHUNK_LEN, sizeof(uint64_t));
		if (*chunk == NULL)
			return -1;
	}
	(*chunk)[i & (CHUNK_LEN - 1)] = end;
	return 0;
}

static uint64_t
load_count(const struct pc_ledger *l)
{
	return __atomic_load_n(&l->count, __ATOMIC_ACQUIRE);
}

/* A log origin is also the note's key name: printable, no spaces, no '+'. */
static bool
origin_ok(const char *o)
{
	size_t n = strlen(o);

	if (n == 0 || n >= PC_KEY_NAME_LEN)
		return false;
	for (size_t i = 0; i < n; i++)
		if (o[i] <= ' ' || o[i] > '~' || o[i] == '+')
			return false;
	return true;
}

/* Reads a small file under dirfd; returns its length, -1 with errno. */
static long
read_small(int dirfd, const char *name, char *buf, size_t len)
{
	int fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC);
	size_t got = 0;

	if (fd < 0)
		return -1;
	for (;;) {
		if (got == len) {
			close(fd);
			errno = EFBIG;
			return -1;
		}
		ssize_t n = read(fd, buf + got, len - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			int e = errno;
			close(fd);
			errno = e;
			return -1;
		}
		if (n == 0)
			break;
		got += (size_t)n;
	}
	close(fd);
	return (long)got;
}

/* tmp file, fsync, rename over `name`, fsync the directory. */
static int
replace_file(int dirfd, const char *name, const char *data, size_t len)
{
	char tmp[64];
	int fd;

	snprintf(tmp, sizeof(tmp), "%s.tmp", name);
	fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0640);
	if (fd < 0)
		return -1;
	if (pwrite_all(fd, data, len, 0) < 0 || fsync(fd) < 0) {
		int e = errno;
		close(fd);
		unlinkat(dirfd, tmp, 0);
		errno = e;
		return -1;
	}
	if (close(fd) < 0 || renameat(dirfd, tmp, dirfd, name) < 0)
		return -1;
	return fsync(dirfd);
}

/*
 * The body of a signed note ends at its first empty line; this only
 * locates and parses it (the ledger holds no verifier key).
 */
static int
parse_note(const char *note, size_t len, struct pc_checkpoint *cp, struct pc_error *err)
{
	const char *blank = memmem(note, len, "\n\n", 2);

	if (blank == NULL)
		return pc_error_set(err, "no empty line after the checkpoint body");
	return pc_checkpoint_parse_body(note, (size_t)(blank - note) + 1, cp, err);
}

static void
leaf_of(const uint8_t *rec, size_t len, uint8_t out[PC_HASH_LEN])
{
	pc_merkle_leaf_hash(rec, len, out);
}

/* ---- opening ---- */

struct scan {
	uint64_t file_size;
	uint64_t good_end;     /* offset just past the last entry kept */
	uint64_t cp_size;      /* published checkpoint's size; UINT64_MAX if none */
	bool cp_root_seen;
	uint8_t cp_root_here[PC_HASH_LEN]; /* root of our tree at cp_size */
	const char *torn_why;  /* set when bytes after good_end are cut */
	bool corrupt;          /* a complete entry before the tail is bad */
	uint64_t corrupt_index;
	const char *corrupt_why;
	uint64_t hashes_fixed;
	uint64_t hashes_entries;  /* entries in the hashes file before the scan */
};

/*
 * Entry i cannot be read as a whole: a torn tail to cut, or damage. The
 * hashes file is synced only after an entry is durable in records, so an
 * entry it already holds was complete once: losing it is damage.
 */
static void
tail_problem(const struct pc_ledger *l, struct scan *s, uint64_t i, bool damage, const char *why)
{
	s->torn_why = why;
	if (l->ro || (!damage && i >= s->hashes_entries))
		return;
	s->corrupt = true;
	s->corrupt_index = i;
	s->corrupt_why = why;
}

/* 1 if the file holds only zero bytes from `off` to `end`, 0 if not, -1 on error. */
static int
zeros_from(int fd, uint64_t off, uint64_t end)
{
	uint8_t b[4096];

	while (off < end) {
		size_t n = end - off < sizeof(b) ? (size_t)(end - off) : sizeof(b);
		if (pread_all(fd, b, n, off) < 0)
			return -1;
		for (size_t i = 0; i < n; i++)
			if (b[i] != 0)
				return 0;
		off += n;
	}
	return 1;
}

/*
 * Walks the records file entry by entry, rebuilding the offset index and
 * the compact range. Read-write: compares each stored hash with the bytes
 * and repairs the hashes file. Read-only: takes the framing as it stands;
 * a verifier judges the bytes against the signed root, not this file.
 */
static int
scan_records(struct pc_ledger *l, struct scan *s, struct pc_error *err)
{
	uint8_t *buf = malloc(PC_RECORD_MAX + PC_HASH_LEN);
	uint64_t off = l->first_off, i = l->first;
	struct stat st;

	if (buf == NULL)
		return pc_error_set(err, "out of memory");
	if (fstat(l->recfd, &st) < 0) {
		pc_error_errno(err, "%s/records", l->dir);
		free(buf);
		return -1;
	}
	s->file_size = (uint64_t)st.st_size;
	if (!l->ro) {
		if (fstat(l->hashfd, &st) < 0) {
			pc_error_errno(err, "%s/hashes", l->dir);
			free(buf);
			return -1;
		}
		s->hashes_entries = (uint64_t)st.st_size / PC_HASH_LEN;
	}
	pc_merkle_range_init(&l->range);
	if (s->cp_size == 0) {
		pc_merkle_range_root(&l->range, s->cp_root_here);
		s->cp_root_seen = true;
	}
	while (off < s->file_size) {
		uint64_t remain = s->file_size - off;
		uint8_t hdr[4], h[PC_HASH_LEN], stored[PC_HASH_LEN];

		if (remain < 4) {
			tail_problem(l, s, i, false, "incomplete length field");
			break;
		}
		if (pread_all(l->recfd, hdr, 4, off) < 0)
			goto ioerr;
		uint32_t len = pc_load_be32(hdr);
		if (len == 0 || len > PC_RECORD_MAX) {
			/*
			 * An interrupted append leaves a prefix of the entry or
			 * zeros where the file grew; any other length is damage.
			 */
			int z = l->ro ? 1 : zeros_from(l->recfd, off, s->file_size);
			if (z < 0)
				goto ioerr;
			tail_problem(l, s, i, len != 0 || z == 0,
				     len != 0 ? "invalid length field" : "zero length field");
			break;
		}
		if (remain < (uint64_t)len + ENTRY_OVERHEAD) {
			tail_problem(l, s, i, false, "incomplete entry");
			break;
		}
		if (l->ro) {
			/*
			 * A reader judges the bytes itself (podcap-verify hashes
			 * every record): hashing them here too would double its
			 * work. Its tree is over the hashes stored with them.
			 */
			if (pread_all(l->recfd, h, PC_HASH_LEN, off + 4 + len) < 0)
				goto ioerr;
		} else {
			if (pread_all(l->recfd, buf, (size_t)len + PC_HASH_LEN, off + 4) < 0)
				goto ioerr;
			leaf_of(buf, len, h);
			memcpy(stored, buf + len, PC_HASH_LEN);
			if (memcmp(h, stored, PC_HASH_LEN) != 0) {
				tail_problem(l, s, i, remain > (uint64_t)len + ENTRY_OVERHEAD,
					     "record bytes do not match the hash stored with them");
				break;
			}
		}
		if (i >= MAX_RECORDS) {
			pc_error_set(err, "%s/records: more than %llu records", l->dir,
				(unsigned long long)MAX_RECORDS);
			free(buf);
			return -1;
		}
		if (!l->ro) {
			uint8_t have[PC_HASH_LEN];
			if (pread_all(l->hashfd, have, PC_HASH_LEN, i * PC_HASH_LEN) < 0 ||
			    memcmp(have, h, PC_HASH_LEN) != 0) {
				if (pwrite_all(l->hashfd, h, PC_HASH_LEN, i * PC_HASH_LEN) < 0) {
					pc_error_errno(err, "%s/hashes", l->dir);
					free(buf);
					return -1;
				}
				s->hashes_fixed++;
			}
		}
		off += (uint64_t)len + ENTRY_OVERHEAD;
		if (set_entry_end(l, i, off) < 0) {
			pc_error_set(err, "out of memory");
			free(buf);
			return -1;
		}
		if (l->first == 0)
			pc_merkle_range_append(&l->range, h);
		i++;
		if (i == s->cp_size) {
			pc_merkle_range_root(&l->range, s->cp_root_here);
			s->cp_root_seen = true;
		}
	}
	if (!l->ro && !s->corrupt && s->hashes_entries > i) {
		s->corrupt = true;
		s->corrupt_index = i;
		s->corrupt_why = "missing from records, though the hashes file holds it";
	}
	s->good_end = off;
	l->count = i;
	l->rec_end = off;
	free(buf);
	return 0;
ioerr:
	pc_error_errno(err, "%s/records", l->dir);
	free(buf);
	return -1;
}

static int
load_checkpoint(struct pc_ledger *l, struct scan *s, struct pc_error *err)
{
	struct pc_checkpoint cp;
	long n = read_small(l->dirfd, "checkpoint", l->sh->note, sizeof(l->sh->note));

	s->cp_size = UINT64_MAX;
	if (n < 0 && errno == ENOENT)
		return 0;
	if (n < 0)
		return pc_error_errno(err, "%s/checkpoint", l->dir);
	l->sh->note_len = (size_t)n;
	if (parse_note(l->sh->note, (size_t)n, &cp, err) < 0) {
		/* a verifier reports it; a writer must not sign on top of it */
		if (l->ro)
			return 0;
		return pc_error_prefix(err, "%s/checkpoint", l->dir);
	}
	if (strcmp(cp.origin, l->origin) != 0) {
		if (l->ro)
			return 0;
		return pc_error_set(err, "%s/checkpoint is for log '%s', not '%s'", l->dir,
			cp.origin, l->origin);
	}
	s->cp_size = cp.size;
	memcpy(s->cp_root_here, cp.root, PC_HASH_LEN); /* replaced by ours in the scan */
	l->published = cp.size;
	return 0;
}

static int
read_origin(struct pc_ledger *l, struct pc_error *err)
{
	char buf[PC_KEY_NAME_LEN + 2];
	long n = read_small(l->dirfd, "origin", buf, sizeof(buf) - 1);

	if (n < 0)
		return pc_error_errno(err, "%s/origin", l->dir);
	buf[n] = '\0';
	if (n > 0 && buf[n - 1] == '\n')
		buf[--n] = '\0';
	if (!origin_ok(buf))
		return pc_error_set(err, "%s/origin: not a valid log origin", l->dir);
	memcpy(l->origin, buf, (size_t)n + 1);
	return 0;
}

static struct pc_ledger *
ledger_alloc(const char *dir, bool ro, struct pc_error *err)
{
	struct pc_ledger *l = calloc(1, sizeof(*l));

	if (l == NULL || strlen(dir) >= sizeof(l->dir)) {
		pc_error_set(err, l == NULL ? "out of memory" : "ledger path too long");
		free(l);
		return NULL;
	}
	l->sh = calloc(1, sizeof(*l->sh));
	if (l->sh == NULL) {
		free(l);
		pc_error_set(err, "out of memory");
		return NULL;
	}
	pthread_mutex_init(&l->sh->mu, NULL);
	snprintf(l->dir, sizeof(l->dir), "%s", dir);
	l->ro = ro;
	l->dirfd = l->recfd = l->hashfd = -1;
	return l;
}

void
pc_ledger_close(struct pc_ledger *l)
{
	if (l == NULL)
		return;
	if (l->recfd >= 0)
		close(l->recfd);
	if (l->hashfd >= 0)
		close(l->hashfd);
	if (l->dirfd >= 0)
		close(l->dirfd);   /* drops the flock */
	for (unsigned c = 0; c < MAX_CHUNKS; c++)   /* a read from `first` leaves holes */
		free(l->ends[c]);
	pthread_mutex_destroy(&l->sh->mu);
	free(l->sh);
	free(l);
}

/* Creates the origin file of a new ledger, or checks the existing one. */
static int
claim_origin(struct pc_ledger *l, const char *origin, struct pc_error *err)
{
	struct stat st;
	char line[PC_KEY_NAME_LEN + 1];

	if (faccessat(l->dirfd, "origin", F_OK, 0) == 0) {
		if (read_origin(l, err) < 0)
			return -1;
		if (strcmp(l->origin, origin) != 0)
			return pc_error_set(err, "ledger %s belongs to log '%s', not '%s'", l->dir,
				l->origin, origin);
		return 0;
	}
	if (fstatat(l->dirfd, "records", &st, 0) == 0 && st.st_size > 0)
		return pc_error_set(err, "ledger %s has records but no origin file", l->dir);
	snprintf(line, sizeof(line), "%s\n", origin);
	if (replace_file(l->dirfd, "origin", line, strlen(line)) < 0)
		return pc_error_errno(err, "%s/origin", l->dir);
	snprintf(l->origin, sizeof(l->origin), "%s", origin);
	return 0;
}

static int
open_files(struct pc_ledger *l, struct pc_error *err)
{
	int flags = l->ro ? O_RDONLY : O_RDWR | O_CREAT;

	l->recfd = openat(l->dirfd, "records", flags | O_CLOEXEC, 0640);
	if (l->recfd < 0)
		return pc_error_errno(err, "%s/records", l->dir);
	l->hashfd = openat(l->dirfd, "hashes", flags | O_CLOEXEC, 0640);
	if (l->hashfd < 0 && !(l->ro && errno == ENOENT))
		return pc_error_errno(err, "%s/hashes", l->dir);
	return 0;
}

/* Refuses to continue a ledger whose signed history is not intact on disk. */
static int
check_against_checkpoint(struct pc_ledger *l, const struct scan *s, const uint8_t cp_root[PC_HASH_LEN],
			 struct pc_error *err)
{
	if (s->cp_size == UINT64_MAX)
		return 0;
	if (s->corrupt && s->corrupt_index < s->cp_size)
		return pc_error_set(err, "ledger %s: record %llu is corrupt (%s) and is covered by the "
			"signed checkpoint: the disk lost data or the ledger was altered",
			l->dir, (unsigned long long)s->corrupt_index, s->corrupt_why);
	if (l->count < s->cp_size)
		return pc_error_set(err, "ledger %s: the checkpoint covers %llu records but only %llu "
			"are intact on disk: records were lost or removed", l->dir,
			(unsigned long long)s->cp_size, (unsigned long long)l->count);
	if (!s->cp_root_seen || memcmp(s->cp_root_here, cp_root, PC_HASH_LEN) != 0)
		return pc_error_set(err, "ledger %s: the first %llu records do not hash to the root of "
			"the signed checkpoint: the ledger was altered or the disk lost data",
			l->dir, (unsigned long long)s->cp_size);
	return 0;
}

static int
cut_tail(struct pc_ledger *l, const struct scan *s, struct pc_error *err)
{
	if (s->good_end == s->file_size)
		return 0;
	fprintf(stderr, "podcap: ledger %s: cut %llu bytes of torn tail at offset %llu "
		"after record %llu (%s)\n", l->dir,
		(unsigned long long)(s->file_size - s->good_end), (unsigned long long)s->good_end,
		(unsigned long long)l->count, s->torn_why);
	if (ftruncate(l->recfd, (off_t)s->good_end) < 0 || fsync(l->recfd) < 0)
		return pc_error_errno(err, "%s/records", l->dir);
	return 0;
}

static int
fix_hashes(struct pc_ledger *l, const struct scan *s, struct pc_error *err)
{
	struct stat st;

	if (fstat(l->hashfd, &st) < 0)
		goto fail;
	if (s->hashes_fixed == 0 && (uint64_t)st.st_size == l->count * PC_HASH_LEN)
		return 0;
	if (s->hashes_fixed > 0)
		fprintf(stderr, "podcap: ledger %s: rewrote %llu entries of the hashes file\n",
			l->dir, (unsigned long long)s->hashes_fixed);
	if (ftruncate(l->hashfd, (off_t)(l->count * PC_HASH_LEN)) < 0 || fsync(l->hashfd) < 0)
		goto fail;
	return 0;
fail:
	return pc_error_errno(err, "%s/hashes", l->dir);
}

struct pc_ledger *
pc_ledger_open(const char *dir, const char *origin, struct pc_error *err)
{
	struct pc_ledger *l;
	struct scan s = { 0 };
	uint8_t cp_root[PC_HASH_LEN];

	if (origin == NULL || !origin_ok(origin)) {
		pc_error_set(err, "invalid log origin");
		return NULL;
	}
	l = ledger_alloc(dir, false, err);
	if (l == NULL)
		return NULL;
	if (mkdir(dir, 0750) < 0 && errno != EEXIST) {
		pc_error_errno(err, "%s", dir);
		goto fail;
	}
	l->dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (l->dirfd < 0) {
		pc_error_errno(err, "%s", dir);
		goto fail;
	}
	if (flock(l->dirfd, LOCK_EX | LOCK_NB) < 0) {
		pc_error_set(err, "ledger %s is in use by another process (%s)", dir,
			strerror(errno));
		goto fail;
	}
	if (claim_origin(l, origin, err) < 0 || open_files(l, err) < 0)
		goto fail;
	/*
	 * A writer that died before its fdatasync may have left records in the
	 * page cache only; they must be durable before the hashes file (which
	 * the scan repairs) can list them.
	 */
	if (fsync(l->recfd) < 0) {
		pc_error_errno(err, "%s/records", dir);
		goto fail;
	}
	unlinkat(l->dirfd, "checkpoint.tmp", 0);
	if (load_checkpoint(l, &s, err) < 0)
		goto fail;
	memcpy(cp_root, s.cp_root_here, PC_HASH_LEN);
	s.cp_root_seen = false;
	if (scan_records(l, &s, err) < 0 ||
	    check_against_checkpoint(l, &s, cp_root, err) < 0)
		goto fail;
	if (s.corrupt) {
		pc_error_set(err, "ledger %s: record %llu is corrupt (%s): refusing to cut it "
			"and what follows", dir, (unsigned long long)s.corrupt_index,
			s.corrupt_why);
		goto fail;
	}
	if (cut_tail(l, &s, err) < 0 || fix_hashes(l, &s, err) < 0)
		goto fail;
	if (fsync(l->dirfd) < 0) {
		pc_error_errno(err, "%s", dir);
		goto fail;
	}
	pc_merkle_range_root(&l->range, l->sh->root);
	return l;
fail:
	pc_ledger_close(l);
	return NULL;
}

struct pc_ledger *
pc_ledger_open_ro(const char *dir, struct pc_error *err)
{
	return pc_ledger_open_ro_from(dir, 0, 0, err);
}

struct pc_ledger *
pc_ledger_open_ro_from(const char *dir, uint64_t first, uint64_t bytes_before, struct pc_error *err)
{
	struct pc_ledger *l = ledger_alloc(dir, true, err);
	struct scan s = { 0 };
	struct stat st;

	if (l == NULL)
		return NULL;
	/* entries before `first` are their records' bytes plus a length and a hash each */
	if (first >= MAX_RECORDS || bytes_before > UINT64_MAX / 2 ||
	    (first > 0 && bytes_before < first)) {
		pc_error_set(err, "%s: cannot start at record %llu after %llu bytes", dir,
			(unsigned long long)first, (unsigned long long)bytes_before);
		goto fail;
	}
	l->first = first;
	l->first_off = bytes_before + first * ENTRY_OVERHEAD;
	l->dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (l->dirfd < 0) {
		pc_error_errno(err, "%s", dir);
		goto fail;
	}
	if (read_origin(l, err) < 0 || open_files(l, err) < 0 ||
	    load_checkpoint(l, &s, err) < 0)
		goto fail;
	s.cp_size = UINT64_MAX;
	if (scan_records(l, &s, err) < 0)
		goto fail;
	if (l->hashfd >= 0 && fstat(l->hashfd, &st) == 0)
		l->hashes_valid = (uint64_t)st.st_size / PC_HASH_LEN;
	pc_merkle_range_root(&l->range, l->sh->root);
	return l;
fail:
	pc_ledger_close(l);
	return NULL;
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
	leaf_of(rec, len, h);

	uint8_t *entry = malloc(len + ENTRY_OVERHEAD);
	if (entry == NULL)
		return -1;
	memcpy(entry, hdr, 4);
	memcpy(entry + 4, rec, len);
	memcpy(entry + 4 + len, h, PC_HASH_LEN);
	int rc = pwrite_all(l->recfd, entry, len + ENTRY_OVERHEAD, end);
	free(entry);
	uint64_t t1 = pc_mono_ns();
	if (rc < 0 || fdatasync(l->recfd) < 0) {
		int e = errno;
		undo_append(l, end);
		errno = e;
		return -1;
	}
	uint64_t t2 = pc_mono_ns();
	if (pwrite_all(l->hashfd, h, PC_HASH_LEN, i * PC_HASH_LEN) < 0)
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
	if (parse_note(note, len, &cp, err) < 0 || check_publish(l, &cp, err) < 0)
		return pc_error_prefix(err, "ledger %s: refusing to publish a checkpoint", l->dir);
	if (replace_file(l->dirfd, "checkpoint", note, len) < 0)
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
	if (pread_all(l->recfd, buf, n, start + 4) < 0)
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
		return pread_all(l->hashfd, out, PC_HASH_LEN, i * PC_HASH_LEN);

	/* a read-only open of a ledger whose hashes file lags: hash the bytes */
	uint8_t *buf = malloc(PC_RECORD_MAX);
	if (buf == NULL)
		return -1;
	long n = pc_ledger_record(l, i, buf, PC_RECORD_MAX);
	if (n >= 0)
		leaf_of(buf, (size_t)n, out);
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
