/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What the monitor keeps of each appliance besides the verifier's own
 * state (<name>.state, written by podcap-verify's run): <name>.monitor,
 * one "key value" line per field, replaced atomically after every pull
 * (written, fsync'ed, renamed, the directory fsync'ed), so that a crash
 * or a kill -9 loses at most the pull in flight. Read back at start; a
 * field it does not hold, or does not read as a number, starts at zero,
 * as for an appliance never pulled.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/fileio.h"

#include "monitor.h"

#define STORE_MAX (64u << 10)

/* One field: a number of one of the widths the struct holds. */
struct field {
	char name[40];
	uint64_t *u64;
	unsigned *u;
	bool *b;
	int *i;
};

/* The fields of app, named as the file names them; their count. */
static size_t
fields(struct mon_app *app, struct field *f, size_t max)
{
	struct vf_outcome *o = &app->last;
	size_t k = 0;
#define ADD(n, member, ptr)                                                \
	do {                                                               \
		if (k < max) {                                             \
			f[k] = (struct field){ .member = (ptr) };          \
			snprintf(f[k].name, sizeof(f[k].name), "%s", (n)); \
			k++;                                               \
		}                                                          \
	} while (0)
	ADD("verdict", u, (unsigned *)&app->verdict);
	ADD("verified_once", b, &app->verified_once);
	ADD("stalled", b, &app->stalled);
	ADD("size", u64, &app->size);
	ADD("verified_at_ns", u64, &app->verified_at_ns);
	ADD("grew_at_ns", u64, &app->grew_at_ns);
	ADD("pulled_at_ns", u64, &app->pulled_at_ns);
	ADD("errors", u64, &app->errors);
	ADD("backoff_ns", u64, &app->backoff_ns);
	ADD("have_last", b, &app->have_last);
	ADD("last.rc", i, &o->rc);
	ADD("last.size", u64, &o->size);
	ADD("last.resumed_at", u64, &o->resumed_at);
	ADD("last.records", u64, &o->records);
	ADD("last.newest_end_ns", u64, &o->newest_end_ns);
	ADD("last.age_ns", u64, &o->age_ns);
	ADD("last.witnessed", b, &o->witnessed);
	ADD("last.witness_keys", u, &o->witness_keys);
	ADD("last.witnesses_valid", u, &o->witnesses_valid);
	ADD("last.witness_quorum", u, &o->witness_quorum);
	ADD("last.attest", b, &o->attest);
	ADD("last.windows_attested", u64, &o->windows_attested);
	ADD("last.windows_unattested", u64, &o->windows_unattested);
	ADD("last.taps", u, &o->taps);
	ADD("last.taps_agree", b, &o->taps_agree);
	ADD("last.peak_permille", u64, &o->peak_permille);
	for (int c = 0; c < PC_VC_COUNT && k < max; c++) {
		f[k] = (struct field){ .u64 = &o->failures[c] };
		snprintf(f[k].name, sizeof(f[k].name), "last.failures.%s",
			 pc_verify_check_name((enum pc_verify_check)c));
		k++;
	}
#undef ADD
	return k;
}

static uint64_t
get(const struct field *f)
{
	if (f->u64 != NULL)
		return *f->u64;
	if (f->u != NULL)
		return *f->u;
	if (f->b != NULL)
		return *f->b;
	return (uint64_t)(int64_t)*f->i;
}

static void
set(const struct field *f, uint64_t v)
{
	if (f->u64 != NULL)
		*f->u64 = v;
	else if (f->u != NULL)
		*f->u = (unsigned)v;
	else if (f->b != NULL)
		*f->b = v != 0;
	else
		*f->i = (int)(int64_t)v;
}

/* One line "key value" into the field of that name, if there is one. */
static void
read_line(const char *line, struct field *f, size_t n)
{
	char name[64];
	uint64_t v;
	char end;

	if (sscanf(line, "%63s %" SCNu64 "%c", name, &v, &end) != 3 || end != '\n')
		return;
	for (size_t i = 0; i < n; i++)
		if (strcmp(f[i].name, name) == 0)
			set(&f[i], v);
}

void
mon_store_load(const struct mon *m, struct mon_app *app)
{
	struct field f[64];
	char path[PC_PATH_LEN];
	size_t len, n = fields(app, f, 64);

	mon_path(m, app, ".monitor", path, sizeof(path));
	char *text = pc_read_file(path, STORE_MAX, &len);
	if (text == NULL) {
		if (errno != ENOENT)
			mon_log("%s: %s: %s; starting as never pulled", app->a->name, path,
				strerror(errno));
		return;
	}
	for (char *line = text; line < text + len;) {
		char *nl = memchr(line, '\n', (size_t)(text + len - line));
		if (nl == NULL)
			break;
		char save = nl[1];
		nl[1] = '\0';
		read_line(line, f, n);
		nl[1] = save;
		line = nl + 1;
	}
	free(text);
	if (app->verdict > MON_UNREACHABLE)
		app->verdict = MON_PENDING;
}

int
mon_store_save(const struct mon *m, const struct mon_app *app)
{
	struct field f[64];
	char *text = NULL, name[PC_PATH_LEN];
	size_t len = 0;
	/* fields() hands out pointers into app: nothing is written through them here */
	size_t n = fields((struct mon_app *)(uintptr_t)app, f, 64);
	FILE *out = open_memstream(&text, &len);

	if (out == NULL)
		return -1;
	for (size_t i = 0; i < n; i++)
		fprintf(out, "%s %" PRIu64 "\n", f[i].name, get(&f[i]));
	if (fclose(out) != 0) {
		free(text);
		return -1;
	}
	snprintf(name, sizeof(name), "%s.monitor", app->a->name);
	int dfd = open(m->state_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int rc = dfd < 0 ? -1 : pc_replace_file_at(dfd, name, text, len, 0600);
	int e = errno;
	if (dfd >= 0)
		close(dfd);
	free(text);
	errno = e;
	return rc;
}
