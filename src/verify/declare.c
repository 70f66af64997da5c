/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * DECLARE records and the auditor's declarations (src/verify/declare.h):
 * a DECLARE belongs to the START or RELOAD just before it (the two are one
 * act: the map and the declaration under which it runs), and puts that
 * declaration's validity in force for the windows after it. With auditor
 * keys given, every map in force must have come with a declaration the
 * verifier holds and that checks out.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "log/declaration.h"
#include "base/hex.h"
#include "declare.h"

#include "verify_impl.h"

struct decl_file {
	char *path;
	char *note;
	size_t len;
	uint8_t hash[PC_DIGEST_LEN];
};

struct pcv_audit {
	struct pc_verifier_key keys[PC_DECL_MAX_KEYS];
	size_t nkeys;
	struct decl_file *files;
	size_t nfiles;
	uint64_t max_age_ns;

	int64_t want; /* a START or RELOAD waiting for its DECLARE, -1: none */
	uint8_t want_type;
	bool on;                       /* a declaration is in force */
	struct pc_verify_declared cur; /* ... this one */
	bool cur_failed;               /* a window outside it was reported once */
	struct pc_verify_declared *seen;
	size_t nseen;
	uint8_t (*assigned)[PC_DIGEST_LEN]; /* the maps the revealed seeds produce */
	char **labels;
	size_t nassigned;
};

static struct pcv_audit *
audit_of(struct pc_verify *v)
{
	if (v->audit == NULL) {
		v->audit = calloc(1, sizeof(*v->audit));
		if (v->audit == NULL)
			abort();
		v->audit->want = -1;
		v->audit->max_age_ns = PC_VERIFY_UNLIMITED;
		v->audit->seen = calloc(PC_VERIFY_MAX_KEPT, sizeof(*v->audit->seen));
		if (v->audit->seen == NULL)
			abort();
	}
	return v->audit;
}

int
pc_verify_set_auditors(struct pc_verify *v, const struct pc_verifier_key *keys, size_t nkeys,
		       const struct pc_verify_declaration *decls, size_t ndecls,
		       uint64_t max_age_ns, struct pc_error *err)
{
	struct pcv_audit *a = audit_of(v);

	if (nkeys > PC_DECL_MAX_KEYS)
		return pc_error_set(err, "more than %d auditor keys", PC_DECL_MAX_KEYS);
	for (size_t i = 0; i < nkeys; i++) {
		if (!pc_declaration_key_ok(&keys[i]))
			return pc_error_set(err,
					    "key %s+%08x is not an auditor key (its name must "
					    "begin with " PC_DECL_KEY_PREFIX ")",
					    keys[i].name, (unsigned)keys[i].id);
		a->keys[i] = keys[i];
	}
	a->nkeys = nkeys;
	a->files = calloc(ndecls ? ndecls : 1, sizeof(*a->files));
	if (a->files == NULL)
		return pc_error_set(err, "out of memory");
	for (size_t i = 0; i < ndecls; i++) {
		struct decl_file *f = &a->files[i];

		f->path = strdup(decls[i].path);
		f->note = malloc(decls[i].len + 1);
		if (f->path == NULL || f->note == NULL)
			return pc_error_set(err, "out of memory");
		memcpy(f->note, decls[i].note, decls[i].len);
		f->note[decls[i].len] = '\0';
		f->len = decls[i].len;
		pc_declaration_hash(f->note, f->len, f->hash);
		a->nfiles = i + 1;
	}
	a->max_age_ns = max_age_ns;
	return 0;
}

int
pc_verify_set_assignments(struct pc_verify *v, const uint8_t (*digests)[32],
			  const char *const *labels, size_t n, struct pc_error *err)
{
	struct pcv_audit *a = audit_of(v);

	a->assigned = calloc(n ? n : 1, sizeof(*a->assigned));
	a->labels = calloc(n ? n : 1, sizeof(*a->labels));
	if (a->assigned == NULL || a->labels == NULL)
		return pc_error_set(err, "out of memory");
	for (size_t i = 0; i < n; i++) {
		memcpy(a->assigned[i], digests[i], PC_DIGEST_LEN);
		a->labels[i] = strdup(labels[i]);
		if (a->labels[i] == NULL)
			return pc_error_set(err, "out of memory");
		a->nassigned = i + 1;
	}
	return 0;
}

/* The seed whose map has this digest, or -1. */
static int
assignment_of(const struct pcv_audit *a, const uint8_t digest[PC_DIGEST_LEN])
{
	for (size_t i = 0; i < a->nassigned; i++)
		if (memcmp(a->assigned[i], digest, PC_DIGEST_LEN) == 0)
			return (int)i;
	return -1;
}

void
pcv_audit_free(struct pc_verify *v)
{
	struct pcv_audit *a = v->audit;

	if (a == NULL)
		return;
	for (size_t i = 0; i < a->nassigned; i++)
		free(a->labels[i]);
	free(a->labels);
	free(a->assigned);
	for (size_t i = 0; i < a->nfiles; i++) {
		free(a->files[i].path);
		free(a->files[i].note);
	}
	free(a->files);
	free(a->seen);
	free(a);
	v->audit = NULL;
}

bool
pcv_audit_full(const struct pc_verify *v)
{
	return v->audit != NULL && v->audit->nkeys > 0;
}

/* The START or RELOAD at `want` got no DECLARE: with auditor keys, that map ran undeclared. */
static void
missing(struct pc_verify *v, const struct pc_record *r)
{
	struct pcv_audit *a = v->audit;

	if (pcv_audit_full(v))
		pcv_fail(v, PC_VC_PODMAP, a->want, r,
			 "%s record is not followed by a declare "
			 "record: no auditor's declaration binds the pod map it puts in force",
			 pc_record_type_name(a->want_type));
	a->want = -1;
}

void
pcv_audit_record(struct pc_verify *v, uint64_t index, const struct pc_record *r)
{
	struct pcv_audit *a = v->audit;

	if (a == NULL && r->type != PC_REC_DECLARE && r->type != PC_REC_START &&
	    r->type != PC_REC_RELOAD)
		return;
	a = audit_of(v);
	if (a->want >= 0 && r->type != PC_REC_DECLARE)
		missing(v, NULL);
	if (r->type == PC_REC_START || r->type == PC_REC_RELOAD) {
		a->want = (int64_t)index;
		a->want_type = r->type;
		a->on = false;
		if (a->nassigned > 0 && assignment_of(a, r->podmap_digest) < 0) {
			char hex[2 * PC_DIGEST_LEN + 1];

			pc_hex(r->podmap_digest, PC_DIGEST_LEN, hex);
			pcv_fail(v, PC_VC_PODMAP, (int64_t)index, r,
				 "puts in force pod map %s, "
				 "which none of the revealed seeds produces (--assignment)",
				 hex);
		}
	}
}

/* The declaration file among those given whose hash the record names, or -1. */
static int
find_file(const struct pcv_audit *a, const uint8_t hash[PC_DIGEST_LEN])
{
	for (size_t i = 0; i < a->nfiles; i++)
		if (memcmp(a->files[i].hash, hash, PC_DIGEST_LEN) == 0)
			return (int)i;
	return -1;
}

/* With auditor keys: the declaration the record names is one given, and says what the record says. */
static void
check_file(struct pc_verify *v, uint64_t index, const struct pc_record *r, int file)
{
	struct pcv_audit *a = v->audit;
	struct pc_declaration d;
	struct pc_error err;
	char hex[2 * PC_DIGEST_LEN + 1];

	if (file < 0) {
		pc_hex(r->decl_hash, PC_DIGEST_LEN, hex);
		pcv_fail(v, PC_VC_PODMAP, (int64_t)index, r,
			 "names declaration %s, which is not "
			 "among the signed declarations given (--pod-maps)",
			 hex);
		return;
	}
	const struct decl_file *f = &a->files[file];
	if (pc_declaration_open(f->note, f->len, a->keys, a->nkeys, &d, NULL, &err) != 0) {
		pcv_fail(v, PC_VC_PODMAP, (int64_t)index, r, "declaration %s: %s", f->path,
			 err.msg);
		return;
	}
	/* validity is checked window by window below; appliance and map here */
	if (pc_declaration_check(&d, v->appliance, r->podmap_digest, d.not_before_ns, NULL, &err) !=
	    0) {
		pcv_fail(v, PC_VC_PODMAP, (int64_t)index, r, "declaration %s: %s", f->path,
			 err.msg);
		return;
	}
	if (d.not_before_ns != r->not_before_ns || d.not_after_ns != r->not_after_ns)
		pcv_fail(v, PC_VC_PODMAP, (int64_t)index, r,
			 "declaration %s is valid over another "
			 "time than the record says",
			 f->path);
}

static void
on_declare(struct pc_verify *v, uint64_t index, const struct pc_record *r)
{
	struct pcv_audit *a = audit_of(v);

	if (a->want < 0 || (uint64_t)a->want + 1 != index) {
		pcv_fail(v, PC_VC_SEQUENCE, (int64_t)index, r,
			 "declare record not right after a "
			 "start or reload record");
		return;
	}
	a->want = -1;
	if (r->window_start_ns != v->cursor_ns || r->window_len_ns != v->window_ns ||
	    memcmp(r->podmap_digest, v->digest, PC_DIGEST_LEN) != 0) {
		pcv_fail(v, PC_VC_SEQUENCE, (int64_t)index, r,
			 "declare record for another window "
			 "or pod map than the %s record before it",
			 pc_record_type_name(a->want_type));
		return;
	}
	int file = find_file(a, r->decl_hash);
	if (pcv_audit_full(v))
		check_file(v, index, r, file);
	a->on = true;
	a->cur_failed = false;
	a->cur = (struct pc_verify_declared){ .record = index,
					      .not_before_ns = r->not_before_ns,
					      .not_after_ns = r->not_after_ns,
					      .file = file,
					      .assignment = assignment_of(a, r->podmap_digest) };
	memcpy(a->cur.hash, r->decl_hash, PC_DIGEST_LEN);
	if (a->nseen < PC_VERIFY_MAX_KEPT)
		a->seen[a->nseen++] = a->cur;
}

void
pcv_audit_declare(struct pc_verify *v, uint64_t index, const struct pc_record *r)
{
	on_declare(v, index, r);
}

/* The first of the record's windows that starts at or after t, or its last when none does. */
static uint64_t
first_from(const struct pc_record *r, uint64_t t)
{
	uint64_t last = r->window_start_ns + (r->window_count - 1) * r->window_len_ns;

	if (t <= r->window_start_ns)
		return r->window_start_ns;
	if (t >= last)
		return last;
	uint64_t k = (t - r->window_start_ns + r->window_len_ns - 1) / r->window_len_ns;
	return r->window_start_ns + k * r->window_len_ns;
}

/*
 * Whether every window of the record starts within the declaration in
 * force, and not as old as --max-map-age: its first window at or after
 * not-before, its last before not-after (podcapd stops forwarding just
 * before not-after, in its last window, which may end after it). NULL
 * when they do; else why, and in *at the first window that does not.
 */
static const char *
window_outside(const struct pcv_audit *a, const struct pc_record *r, uint64_t *at)
{
	uint64_t last = r->window_start_ns + (r->window_count - 1) * r->window_len_ns;

	*at = r->window_start_ns;
	if (r->window_start_ns < a->cur.not_before_ns)
		return "before the declaration in force is valid";
	if (last >= a->cur.not_after_ns) {
		*at = first_from(r, a->cur.not_after_ns);
		return "after the declaration in force expired";
	}
	if (a->max_age_ns != PC_VERIFY_UNLIMITED && last - a->cur.not_before_ns >= a->max_age_ns) {
		*at = first_from(r, a->cur.not_before_ns + a->max_age_ns);
		return "under a declaration older than --max-map-age";
	}
	return NULL;
}

/* "window of T" and, for a record of several, which record it is part of. */
static void
window_name(const struct pc_record *r, uint64_t at, char *buf, size_t len)
{
	char t[PC_UTC_LEN], s[PC_UTC_LEN];

	pc_utc_format(at, t, sizeof(t));
	if (r->window_count == 1) {
		snprintf(buf, len, "window of %s", t);
		return;
	}
	pc_utc_format(r->window_start_ns, s, sizeof(s));
	snprintf(buf, len, "window of %s (of a record of %" PRIu64 " windows from %s)", t,
		 r->window_count, s);
}

void
pcv_audit_window(struct pc_verify *v, uint64_t index, const struct pc_record *r)
{
	struct pcv_audit *a = v->audit;
	char t[PC_UTC_LEN], nb[PC_UTC_LEN], na[PC_UTC_LEN];

	if (a == NULL)
		return;
	if (!a->on) {
		if (pcv_audit_full(v) && !a->cur_failed) {
			pc_utc_format(r->window_start_ns, t, sizeof(t));
			pcv_fail(v, PC_VC_PODMAP, (int64_t)index, r,
				 "window of %s runs under no "
				 "auditor's declaration",
				 t);
			a->cur_failed = true;
		}
		return;
	}
	uint64_t at;
	const char *why = window_outside(a, r, &at);
	if (why != NULL && !a->cur_failed) {
		char w[2 * PC_UTC_LEN + 64];

		window_name(r, at, w, sizeof(w));
		pc_utc_format(a->cur.not_before_ns, nb, sizeof(nb));
		pc_utc_format(a->cur.not_after_ns, na, sizeof(na));
		pcv_fail(v, PC_VC_PODMAP, (int64_t)index, r,
			 "%s %s (record %" PRIu64 ": valid from %s to %s)", w, why, a->cur.record,
			 nb, na);
		a->cur_failed = true;
	}
	struct pc_verify_declared *s = a->nseen > 0 ? &a->seen[a->nseen - 1] : NULL;
	if (s != NULL && s->record == a->cur.record) {
		if (s->windows == 0)
			s->first_window_ns = r->window_start_ns;
		s->windows += r->window_count;
		s->last_end_ns = r->window_start_ns + r->window_count * r->window_len_ns;
	}
}

void
pcv_audit_finish(struct pc_verify *v)
{
	if (v->audit != NULL && v->audit->want >= 0)
		missing(v, NULL);
}

size_t
pc_verify_ndeclared(const struct pc_verify *v)
{
	return v->audit != NULL ? v->audit->nseen : 0;
}

const struct pc_verify_declared *
pc_verify_declared_at(const struct pc_verify *v, size_t i)
{
	return i < pc_verify_ndeclared(v) ? &v->audit->seen[i] : NULL;
}

const char *
pc_verify_declaration_path(const struct pc_verify *v, int i)
{
	if (v->audit == NULL || i < 0 || (size_t)i >= v->audit->nfiles)
		return "-";
	return v->audit->files[i].path;
}

bool
pcv_audit_reported(const struct pc_verify *v)
{
	return v->audit != NULL && (v->audit->nseen > 0 || v->audit->nkeys > 0);
}

/* The report's "declarations:" section: only when there is something to say. */
void
pcv_audit_print_text(const struct pc_verify *v, FILE *f)
{
	char hex[2 * PC_DIGEST_LEN + 1], a[PC_UTC_LEN], b[PC_UTC_LEN], c[PC_UTC_LEN], e[PC_UTC_LEN];

	if (!pcv_audit_reported(v))
		return;
	fprintf(f, "\ndeclarations (the auditor's, in force after each DECLARE):\n");
	for (size_t i = 0; i < v->audit->nseen; i++) {
		const struct pc_verify_declared *d = &v->audit->seen[i];

		pc_hex(d->hash, PC_DIGEST_LEN, hex);
		pc_utc_format(d->not_before_ns, a, sizeof(a));
		pc_utc_format(d->not_after_ns, b, sizeof(b));
		if (d->windows > 0) {
			pc_utc_format(d->first_window_ns, c, sizeof(c));
			pc_utc_format(d->last_end_ns, e, sizeof(e));
		} else {
			snprintf(c, sizeof(c), "-");
			snprintf(e, sizeof(e), "-");
		}
		fprintf(f,
			"  record %" PRIu64 "  %.16s  valid %s to %s  windows %" PRIu64
			" from %s to %s  %s",
			d->record, hex, a, b, d->windows, c, e,
			pc_verify_declaration_path(v, d->file));
		if (d->assignment >= 0)
			fprintf(f, "  assigned by %s", v->audit->labels[d->assignment]);
		fputc('\n', f);
	}
	if (v->audit->nkeys == 0)
		fprintf(f,
			"(no --auditor-key: the declarations were not checked, only their "
			"validity against the windows)\n");
}
