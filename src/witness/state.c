/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The witness's memory of each log: the size and root it last cosigned, in
 * a file of its own under the state directory, four lines:
 *
 *   podcap-witness log v1
 *   <origin>
 *   <size, decimal>
 *   <base64 root>
 *
 * replaced whole (written, fsynced, renamed, directory fsynced) before a
 * cosignature leaves, so that after a crash or kill -9 the witness holds
 * either the old checkpoint or the new, never less than it cosigned. A file
 * that does not read back is an error, never "no state": starting from zero
 * would let a log roll back.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sodium.h>

#include "podcap/fileio.h"
#include "podcap/hex.h"
#include "podcap/note.h"

#include "witness.h"

#define STATE_HEADER "podcap-witness log v1\n"
#define STATE_MAX    1024

int
witness_state_open(struct witness *w, const char *dir, struct pc_error *err)
{
	if (mkdir(dir, 0700) != 0 && errno != EEXIST)
		return pc_error_errno(err, "%s", dir);
	w->dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (w->dirfd < 0)
		return pc_error_errno(err, "%s", dir);
	/* One witness per directory: a second would answer from a stale copy. */
	if (flock(w->dirfd, LOCK_EX | LOCK_NB) != 0) {
		pc_error_errno(err, "%s: cannot lock the state directory (another podcap-witness?)",
			       dir);
		close(w->dirfd);
		w->dirfd = -1;
		return -1;
	}
	return 0;
}

static void
state_name(const char *origin, char name[70])
{
	uint8_t h[crypto_hash_sha256_BYTES];

	crypto_hash_sha256(h, (const uint8_t *)origin, strlen(origin));
	memcpy(name, "log-", 4);
	pc_hex(h, sizeof(h), name + 4);
}

/* The same checkpoint body form as the log's, after the header line. */
static size_t
state_text(const struct pc_witness_log *l, char *buf, size_t len)
{
	struct pc_checkpoint cp;
	size_t n, hl = sizeof(STATE_HEADER) - 1;

	memset(&cp, 0, sizeof(cp));
	memcpy(cp.origin, l->origin, sizeof(cp.origin));
	cp.size = l->size;
	memcpy(cp.root, l->root, sizeof(cp.root));
	if (len < hl)
		return 0;
	memcpy(buf, STATE_HEADER, hl);
	n = pc_checkpoint_body(&cp, buf + hl, len - hl);
	return n == 0 ? 0 : hl + n;
}

int
witness_state_load(struct witness *w, struct pc_witness_log *l, struct pc_error *err)
{
	char name[70], buf[STATE_MAX];
	const size_t hl = sizeof(STATE_HEADER) - 1;
	struct pc_checkpoint cp;
	struct pc_error why;
	long n;

	state_name(l->origin, name);
	n = pc_read_small_at(w->dirfd, name, buf, sizeof(buf));
	if (n < 0 && errno == ENOENT) {
		l->size = 0;
		memset(l->root, 0, sizeof(l->root));
		return 0;
	}
	if (n < 0)
		return pc_error_errno(err, "state of %s (%s)", l->origin, name);
	if ((size_t)n < hl || memcmp(buf, STATE_HEADER, hl) != 0 ||
	    pc_checkpoint_parse_body(buf + hl, (size_t)n - hl, &cp, &why) != 0 ||
	    cp.extra[0] != '\0')
		return pc_error_set(err,
				    "state of %s (%s) is damaged; refusing to start from nothing",
				    l->origin, name);
	if (strcmp(cp.origin, l->origin) != 0)
		return pc_error_set(err, "state file %s is for origin \"%s\", not \"%s\"", name,
				    cp.origin, l->origin);
	l->size = cp.size;
	memcpy(l->root, cp.root, sizeof(l->root));
	return 0;
}

int
witness_state_store(struct witness *w, const struct pc_witness_log *l, struct pc_error *err)
{
	char name[70], buf[STATE_MAX];
	size_t n;

	state_name(l->origin, name);
	n = state_text(l, buf, sizeof(buf));
	if (n == 0)
		return pc_error_set(err, "state of %s does not fit", l->origin);
	if (pc_replace_file_at(w->dirfd, name, buf, n, 0600) != 0)
		return pc_error_errno(err, "writing the state of %s (%s)", l->origin, name);
	return 0;
}
