/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Opening a ledger directory (docs/log-format.md, "Ledger directory"): for
 * the writer, claim the origin, take the lock and recover what a crash left
 * (a torn tail is cut, a stale hashes file rebuilt, damage under a signed
 * checkpoint refused); for a reader, map what is there as it stands.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/bytes.h"
#include "base/fileio.h"
#include "record.h"

#include "ledger_impl.h"

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
		if (pc_pread_all(fd, b, n, off) < 0)
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
		if (pc_pread_all(l->recfd, hdr, 4, off) < 0)
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
			if (pc_pread_all(l->recfd, h, PC_HASH_LEN, off + 4 + len) < 0)
				goto ioerr;
		} else {
			if (pc_pread_all(l->recfd, buf, (size_t)len + PC_HASH_LEN, off + 4) < 0)
				goto ioerr;
			pc_merkle_leaf_hash(buf, len, h);
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
			if (pc_pread_all(l->hashfd, have, PC_HASH_LEN, i * PC_HASH_LEN) < 0 ||
			    memcmp(have, h, PC_HASH_LEN) != 0) {
				if (pc_pwrite_all(l->hashfd, h, PC_HASH_LEN, i * PC_HASH_LEN) < 0) {
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
	long n = pc_read_small_at(l->dirfd, "checkpoint", l->sh->note, sizeof(l->sh->note));

	s->cp_size = UINT64_MAX;
	if (n < 0 && errno == ENOENT)
		return 0;
	if (n < 0)
		return pc_error_errno(err, "%s/checkpoint", l->dir);
	l->sh->note_len = (size_t)n;
	if (pc_ledger_parse_note(l->sh->note, (size_t)n, &cp, err) < 0) {
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
	long n = pc_read_small_at(l->dirfd, "origin", buf, sizeof(buf) - 1);

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

/*
 * Whether the ledger is origin's: 0 when its origin file says so, 1 when it
 * has none and may be given one (no records yet), -1 with err otherwise.
 */
static int
origin_state(struct pc_ledger *l, const char *origin, struct pc_error *err)
{
	struct stat st;

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
	return 1;
}

/* Creates the origin file of a new ledger, or checks the existing one. */
static int
claim_origin(struct pc_ledger *l, const char *origin, struct pc_error *err)
{
	char line[PC_KEY_NAME_LEN + 1];
	int state = origin_state(l, origin, err);

	if (state <= 0)
		return state;
	snprintf(line, sizeof(line), "%s\n", origin);
	if (pc_replace_file_at(l->dirfd, "origin", line, strlen(line), 0640) < 0)
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

/* errno's message for path, as mkdir and open would give it at start */
static int
path_fails(const char *path, int e, struct pc_error *err)
{
	errno = e;
	return pc_error_errno(err, "%s", path);
}

/* A directory the writer could make: its parent is one it can write in. */
static int
check_creatable(const char *dir, struct pc_error *err)
{
	char parent[PC_PATH_LEN];
	struct stat st;

	if (strlen(dir) >= sizeof(parent))
		return pc_error_set(err, "ledger path too long");
	size_t n = (size_t)snprintf(parent, sizeof(parent), "%s", dir);
	while (n > 1 && parent[n - 1] == '/')
		parent[--n] = '\0'; /* mkdir("a/b/") makes b */
	char *slash = strrchr(parent, '/');
	if (slash == NULL)
		snprintf(parent, sizeof(parent), ".");
	else
		slash[slash == parent ? 1 : 0] = '\0';
	if (stat(parent, &st) < 0)
		return path_fails(dir, errno, err);
	if (!S_ISDIR(st.st_mode))
		return path_fails(dir, ENOTDIR, err);
	if (access(parent, W_OK | X_OK) < 0)
		return path_fails(dir, errno, err);
	return 0;
}

int
pc_ledger_check(const char *dir, const char *origin, struct pc_error *err)
{
	struct stat st;

	if (origin == NULL || !origin_ok(origin))
		return pc_error_set(err, "invalid log origin");
	if (stat(dir, &st) < 0)
		return errno == ENOENT ? check_creatable(dir, err) : path_fails(dir, errno, err);
	if (!S_ISDIR(st.st_mode))
		return path_fails(dir, ENOTDIR, err);
	if (access(dir, W_OK | X_OK) < 0)
		return path_fails(dir, errno, err);
	struct pc_ledger *l = ledger_alloc(dir, true, err);
	if (l == NULL)
		return -1;
	l->dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int rc = l->dirfd < 0 ? path_fails(dir, errno, err) : origin_state(l, origin, err);
	pc_ledger_close(l);
	return rc < 0 ? -1 : 0;
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
