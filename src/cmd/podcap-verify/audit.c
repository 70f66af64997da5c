/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What podcap-verify is told of the auditor (verify/declare.h): the auditor
 * keys and the declarations of --pod-maps DIR, and with --assignment DIR the
 * maps the revealed seeds produce for this appliance (src/podmap/assign.h),
 * recomputed from the draw's published inputs.
 *
 *   DIR/pods.txt, DIR/uplinks.txt, DIR/template.yaml   as for podcap-audit assign
 *   DIR/constraints.txt                                 optional, its --constraints
 *   DIR/NAME.seed                                       each a revealed seed, 64 hex digits
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "podmap/assign.h"
#include "podmap/config.h"
#include "log/declaration.h"
#include "log/origin.h"
#include "base/fileio.h"
#include "base/hex.h"
#include "log/note.h"
#include "verify/declare.h"

#include "audit.h"

#define INPUT_MAX_BYTES  (16u << 20)
#define MAX_SEEDS        64
#define MAX_DECLARATIONS 512

static void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

/* As every I/O error of podcap-verify: exit 2, the log unread. */
static void
fail(const char *fmt, ...)
{
	va_list ap;

	fputs("podcap-verify: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(2);
}

/* DIR/name, whole and NUL-terminated; NULL only for an optional file that is not there. */
static char *
input(const char *dir, const char *name, bool optional)
{
	char path[PC_PATH_LEN], *buf = malloc(INPUT_MAX_BYTES);
	long n;

	if (buf == NULL)
		fail("out of memory");
	if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, name) >= sizeof(path))
		fail("%s/%s: path too long", dir, name);
	n = pc_read_small_at(AT_FDCWD, path, buf, INPUT_MAX_BYTES);
	if (n < 0 && errno == ENOENT && optional) {
		free(buf);
		return NULL;
	}
	if (n < 0)
		fail("%s: %s", path, strerror(errno));
	buf[n] = '\0';
	return buf;
}

struct draw {
	const char *dir, *app, *tmpl;
	struct pc_assign_pod *pods;
	size_t np;
	struct pc_assign_uplink *ups;
	size_t nu;
	struct pc_assign_rules rules;
};

/* The digest of the map the seed in file `name` gives this appliance. */
static void
digest_of(const struct draw *d, const char *name, uint8_t digest[PC_DIGEST_LEN])
{
	uint8_t seed[PC_ASSIGN_SEED_LEN];
	struct pc_config cfg;
	struct pc_error err;
	char *hex = input(d->dir, name, false);
	uint32_t *up = calloc(d->np, sizeof(*up));

	hex[strcspn(hex, "\n")] = '\0';
	if (up == NULL || !pc_unhex(hex, strlen(hex), seed, sizeof(seed)))
		fail("%s/%s: not a seed (64 hex digits)", d->dir, name);
	if (pc_assign(seed, d->pods, d->np, d->nu, &d->rules, up, &err) != 0)
		fail("%s/%s: %s", d->dir, name, err.msg);
	char *text = pc_assign_map_text(d->tmpl, d->app, d->ups, d->nu, d->pods, d->np, up);
	if (text == NULL)
		fail("out of memory");
	if (pc_config_load_buffer(name, text, strlen(text), &cfg, &err) != 0)
		fail("%s/%s: the map it gives %s does not load: %s", d->dir, name, d->app, err.msg);
	pc_config_digest(&cfg, digest);
	pc_config_free(&cfg);
	free(text);
	free(up);
	free(hex);
}

static int
seed_entry(const struct dirent *e)
{
	size_t n = strlen(e->d_name);

	return e->d_name[0] != '.' && n > 5 && strcmp(e->d_name + n - 5, ".seed") == 0;
}

static void
parse_inputs(struct draw *d, char *pt, char *ut, char *ct)
{
	struct pc_error err;
	long np = pc_assign_parse_pods("pods.txt", pt, &d->pods, &err), nu = -1;

	if (np >= 0)
		nu = pc_assign_parse_uplinks("uplinks.txt", ut, &d->ups, &err);
	if (np < 0 || nu < 0 ||
	    (ct != NULL && pc_assign_parse_rules("constraints.txt", ct, &d->rules, &err) != 0)) {
		fprintf(stderr, "podcap-verify: %s/", d->dir);
		pc_error_print(&err, stderr);
		exit(2);
	}
	d->np = (size_t)np;
	d->nu = (size_t)nu;
}

void
vf_load_assignment(struct pc_verify *v, const char *dir, const struct pc_verifier_key *key)
{
	static uint8_t digests[MAX_SEEDS][PC_DIGEST_LEN];
	static char labels[MAX_SEEDS][PC_PATH_LEN];
	const char *label_ptr[MAX_SEEDS];
	struct draw d = { .dir = dir };
	struct dirent **names;
	struct pc_error err;
	char *pt = input(dir, "pods.txt", false), *ut = input(dir, "uplinks.txt", false),
	     *ct = input(dir, "constraints.txt", true), *tmpl = input(dir, "template.yaml", false);

	/* the appliance is the log's: the last element of its origin */
	static char app[PC_ID_LEN];
	if (pc_origin_parse(key->name, app, &err) < 0)
		fail("%s: %s", dir, err.msg);
	d.app = app;
	d.tmpl = tmpl;
	parse_inputs(&d, pt, ut, ct);
	int n = scandir(dir, &names, seed_entry, alphasort);
	if (n <= 0)
		fail("%s: no revealed seed (*.seed) in it", dir);
	if (n > MAX_SEEDS)
		fail("%s: more than %d seeds", dir, MAX_SEEDS);
	for (int i = 0; i < n; i++) {
		digest_of(&d, names[i]->d_name, digests[i]);
		snprintf(labels[i], PC_PATH_LEN, "%s/%s", dir, names[i]->d_name);
		label_ptr[i] = labels[i];
		free(names[i]);
	}
	free(names);
	if (pc_verify_set_assignments(v, (const uint8_t(*)[32])digests, label_ptr, (size_t)n,
				      &err) != 0)
		fail("%s", err.msg);
	free(d.pods);
	free(d.ups);
	free(pt);
	free(ut);
	free(ct);
	free(tmpl);
}

static int
sig_entry(const struct dirent *e)
{
	size_t n = strlen(e->d_name);

	return e->d_name[0] != '.' && n > 4 && strcmp(e->d_name + n - 4, PC_DECL_SUFFIX) == 0;
}

/* The auditor keys and every declaration (*.sig) in dir, given to v. */
void
vf_load_auditing(struct pc_verify *v, const char *dir, const char *const *key_files, size_t nkeys,
		 uint64_t max_age_ns)
{
	static struct pc_verify_declaration decls[MAX_DECLARATIONS];
	struct pc_verifier_key keys[PC_DECL_MAX_KEYS];
	static char notes[MAX_DECLARATIONS][PC_NOTE_MAX];
	static char paths[MAX_DECLARATIONS][PC_PATH_LEN];
	struct dirent **names;
	struct pc_error err;
	size_t nd = 0;

	for (size_t i = 0; i < nkeys; i++)
		if (pc_verifier_key_load(key_files[i], &keys[i], &err) < 0)
			fail("%s", err.msg);
	int n = scandir(dir, &names, sig_entry, alphasort);
	if (n < 0)
		fail("%s: %s", dir, strerror(errno));
	for (int i = 0; i < n; i++) {
		if (nd == sizeof(decls) / sizeof(decls[0]))
			fail("%s: more than %zu declarations", dir, nd);
		if ((size_t)snprintf(paths[nd], PC_PATH_LEN, "%s/%s", dir, names[i]->d_name) >=
		    PC_PATH_LEN)
			fail("%s/%s: path too long", dir, names[i]->d_name);
		long len = pc_declaration_read(paths[nd], notes[nd], &err);
		if (len < 0)
			fail("%s", err.msg);
		decls[nd] = (struct pc_verify_declaration){ paths[nd], notes[nd], (size_t)len };
		nd++;
		free(names[i]);
	}
	free(names);
	if (pc_verify_set_auditors(v, keys, nkeys, decls, nd, max_age_ns, &err) < 0)
		fail("%s", err.msg);
}
