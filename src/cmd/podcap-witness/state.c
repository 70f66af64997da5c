/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The witness's memory of each log: the size and root it last cosigned,
 * and the note it cosigned there for monitors, in a file of its own under
 * the state directory:
 *
 *   podcap-witness log v2
 *   <the checkpoint's signed note: body, the log's signature lines, and
 *    the witness's cosignature line>
 *
 * replaced whole (written, fsynced, renamed, directory fsynced) before a
 * cosignature leaves, so that after a crash or kill -9 the witness holds
 * either the old checkpoint or the new, never less than it cosigned. A file
 * that does not read back is an error, never "no state": starting from zero
 * would let a log roll back. The v1 files of earlier versions, four lines
 * (the header "podcap-witness log v1", the origin, the size, the base64
 * root) without a note, are still read: their log has no note to serve
 * until the next cosignature.
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

#include "base/fileio.h"
#include "base/hex.h"
#include "log/note.h"

#include "witness.h"

#define STATE_V1  "podcap-witness log v1\n"
#define STATE_V2  "podcap-witness log v2\n"
#define HEAD_LEN  (sizeof(STATE_V2) - 1) /* both headers' */
#define STATE_MAX (HEAD_LEN + WITNESS_NOTE_MAX)

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

void
witness_origin_hash(const char *origin, char hex[65])
{
	uint8_t h[crypto_hash_sha256_BYTES];

	crypto_hash_sha256(h, (const uint8_t *)origin, strlen(origin));
	pc_hex(h, sizeof(h), hex);
}

static void
state_name(const char *origin, char name[70])
{
	memcpy(name, "log-", 4);
	witness_origin_hash(origin, name + 4);
}

/* v1: a body of three lines after the header, and no note. */
static int
read_v1(const char *text, size_t len, struct pc_checkpoint *cp)
{
	return pc_checkpoint_parse_body(text, len, cp, NULL) != 0 || cp->extra[0] != '\0' ? -1 : 0;
}

static int
no_line(void *ctx, const struct pc_note_sig *s)
{
	(void)ctx;
	(void)s;
	return 0;
}

/* v2: a signed note whose body is the checkpoint held. */
static int
read_v2(const char *text, size_t len, struct pc_checkpoint *cp)
{
	size_t blen;

	if (len >= WITNESS_NOTE_MAX || pc_note_each_sig(text, len, &blen, no_line, NULL, NULL) != 0)
		return -1;
	return pc_checkpoint_parse_body(text, blen, cp, NULL);
}

int
witness_state_load(struct witness *w, struct pc_witness_log *l, struct witness_note *note,
		   struct pc_error *err)
{
	char name[70], buf[STATE_MAX];
	struct pc_checkpoint cp;
	long n;
	int v2;

	note->len = 0;
	state_name(l->origin, name);
	n = pc_read_small_at(w->dirfd, name, buf, sizeof(buf));
	if (n < 0 && errno == ENOENT) {
		l->size = 0;
		memset(l->root, 0, sizeof(l->root));
		return 0;
	}
	if (n < 0)
		return pc_error_errno(err, "state of %s (%s)", l->origin, name);
	v2 = (size_t)n >= HEAD_LEN && memcmp(buf, STATE_V2, HEAD_LEN) == 0;
	if ((size_t)n < HEAD_LEN || (!v2 && memcmp(buf, STATE_V1, HEAD_LEN) != 0) ||
	    (v2 ? read_v2 : read_v1)(buf + HEAD_LEN, (size_t)n - HEAD_LEN, &cp) != 0)
		return pc_error_set(err,
				    "state of %s (%s) is damaged; refusing to start from nothing",
				    l->origin, name);
	if (strcmp(cp.origin, l->origin) != 0)
		return pc_error_set(err, "state file %s is for origin \"%s\", not \"%s\"", name,
				    cp.origin, l->origin);
	l->size = cp.size;
	memcpy(l->root, cp.root, sizeof(l->root));
	if (v2) {
		note->len = (size_t)n - HEAD_LEN;
		memcpy(note->text, buf + HEAD_LEN, note->len);
		note->text[note->len] = '\0';
	}
	return 0;
}

int
witness_state_store(struct witness *w, const struct pc_witness_log *l, const char *note,
		    size_t note_len, struct pc_error *err)
{
	char name[70], buf[STATE_MAX];

	state_name(l->origin, name);
	if (note_len >= WITNESS_NOTE_MAX)
		return pc_error_set(err, "state of %s does not fit", l->origin);
	memcpy(buf, STATE_V2, HEAD_LEN);
	memcpy(buf + HEAD_LEN, note, note_len);
	if (pc_replace_file_at(w->dirfd, name, buf, HEAD_LEN + note_len, 0600) != 0)
		return pc_error_errno(err, "writing the state of %s (%s)", l->origin, name);
	return 0;
}
