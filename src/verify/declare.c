/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * DECLARE records and the auditor's declarations (src/verify/declare.h;
 * docs/verify.md, check 6a): a DECLARE belongs to the START or RELOAD just
 * before it (the two are one act: the map and the declaration under which
 * it runs), and puts that declaration's validity in force for the windows
 * after it. With auditor keys given, every map in force must have come
 * with a declaration the verifier holds and that checks out, and a
 * resumed run reads every record again: what it checks is not saved.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "log/declaration.h"
#include "base/hex.h"
#include "declare.h"

#include "print.h"
#include "verify_impl.h"

struct decl_file {
	char *path;
	char *note;
	size_t len;
	uint8_t hash[PC_DIGEST_LEN];
};

struct declare {
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

static int
declare_init(struct pc_verify *v, void *st)
{
	struct declare *a = st;

	(void)v;
	a->want = -1;
	a->max_age_ns = PC_VERIFY_UNLIMITED;
	a->seen = calloc(PC_VERIFY_MAX_KEPT, sizeof(*a->seen));
	return a->seen == NULL ? -1 : 0;
}

static struct declare *
declare_of(const struct pc_verify *v)
{
	return pcv_state(v, PCV_DECLARE);
}

int
pc_verify_set_auditors(struct pc_verify *v, const struct pc_verifier_key *keys, size_t nkeys,
		       const struct pc_verify_declaration *decls, size_t ndecls,
		       uint64_t max_age_ns, struct pc_error *err)
{
	struct declare *a = declare_of(v);

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
	struct declare *a = declare_of(v);

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
assignment_of(const struct declare *a, const uint8_t digest[PC_DIGEST_LEN])
{
	for (size_t i = 0; i < a->nassigned; i++)
		if (memcmp(a->assigned[i], digest, PC_DIGEST_LEN) == 0)
			return (int)i;
	return -1;
}

static void
declare_free(void *st)
{
	struct declare *a = st;

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
}

/* Whether the auditor's keys were given: then every map in force must be declared. */
static bool
full(const struct pc_verify *v)
{
	return declare_of(v)->nkeys > 0;
}

static bool
declare_rereads(const struct pc_verify *v, const void *st)
{
	(void)st;
	return full(v);
}

/* The START or RELOAD at `want` got no DECLARE: with auditor keys, that map ran undeclared. */
static void
missing(struct pc_verify *v, const struct pc_record *r)
{
	struct declare *a = declare_of(v);

	if (full(v))
		pcv_fail(v, PC_VC_PODMAP, a->want, r,
			 "%s record is not followed by a declare "
			 "record: no auditor's declaration binds the pod map it puts in force",
			 pc_record_type_name(a->want_type));
	a->want = -1;
}

/* Each record first: a START or RELOAD awaits its DECLARE, which must come next. */
static void
declare_record(struct pc_verify *v, void *st, uint64_t index, const struct pc_record *r)
{
	struct declare *a = st;

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
find_file(const struct declare *a, const uint8_t hash[PC_DIGEST_LEN])
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
	struct declare *a = declare_of(v);
	struct pc_declaration d;
	struct pc_error err;
	char hex[2 * PC_DIGEST_LEN + 1];

	if (file < 0) {
		pc_hex(r->declare.hash, PC_DIGEST_LEN, hex);
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
	if (d.not_before_ns != r->declare.not_before_ns ||
	    d.not_after_ns != r->declare.not_after_ns)
		pcv_fail(v, PC_VC_PODMAP, (int64_t)index, r,
			 "declaration %s is valid over another "
			 "time than the record says",
			 f->path);
}

/* A DECLARE: right after its START or RELOAD, for its window and map; its declaration in force. */
static void
declare_declare(struct pc_verify *v, void *st, uint64_t index, const struct pc_record *r)
{
	struct declare *a = st;

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
	int file = find_file(a, r->declare.hash);
	if (full(v))
		check_file(v, index, r, file);
	a->on = true;
	a->cur_failed = false;
	a->cur = (struct pc_verify_declared){ .record = index,
					      .not_before_ns = r->declare.not_before_ns,
					      .not_after_ns = r->declare.not_after_ns,
					      .file = file,
					      .assignment = assignment_of(a, r->podmap_digest) };
	memcpy(a->cur.hash, r->declare.hash, PC_DIGEST_LEN);
	if (a->nseen < PC_VERIFY_MAX_KEPT)
		a->seen[a->nseen++] = a->cur;
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
window_outside(const struct declare *a, const struct pc_record *r, uint64_t *at)
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

/* A WINDOW in its place: every window of it within the declaration in force. */
static void
declare_window(struct pc_verify *v, void *st, uint64_t index, const struct pc_record *r)
{
	struct declare *a = st;
	char t[PC_UTC_LEN], nb[PC_UTC_LEN], na[PC_UTC_LEN];

	if (!a->on) {
		if (full(v) && !a->cur_failed) {
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

static void
declare_finish(struct pc_verify *v, void *st)
{
	if (((struct declare *)st)->want >= 0)
		missing(v, NULL);
}

size_t
pc_verify_ndeclared(const struct pc_verify *v)
{
	return declare_of(v)->nseen;
}

const struct pc_verify_declared *
pc_verify_declared_at(const struct pc_verify *v, size_t i)
{
	return i < pc_verify_ndeclared(v) ? &declare_of(v)->seen[i] : NULL;
}

const char *
pc_verify_declaration_path(const struct pc_verify *v, int i)
{
	const struct declare *a = declare_of(v);

	if (i < 0 || (size_t)i >= a->nfiles)
		return "-";
	return a->files[i].path;
}

/* ---- the reports: a declarations section when a DECLARE was seen or --auditor-key given ---- */

static bool
reported(const struct declare *a)
{
	return a->nseen > 0 || a->nkeys > 0;
}

static void
declare_text(const struct pc_verify *v, const void *st, FILE *f)
{
	const struct declare *da = st;
	char hex[2 * PC_DIGEST_LEN + 1], a[PC_UTC_LEN], b[PC_UTC_LEN], c[PC_UTC_LEN], e[PC_UTC_LEN];

	if (!reported(da))
		return;
	fprintf(f, "\ndeclarations (the auditor's, in force after each DECLARE):\n");
	for (size_t i = 0; i < da->nseen; i++) {
		const struct pc_verify_declared *d = &da->seen[i];

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
			fprintf(f, "  assigned by %s", da->labels[d->assignment]);
		fputc('\n', f);
	}
	if (da->nkeys == 0)
		fprintf(f,
			"(no --auditor-key: the declarations were not checked, only their "
			"validity against the windows)\n");
}

static void
json_declaration(const struct pc_verify *v, const struct pc_verify_declared *d, FILE *f)
{
	char hex[2 * PC_DIGEST_LEN + 1];

	pc_hex(d->hash, PC_DIGEST_LEN, hex);
	fprintf(f, "{\"record\": %" PRIu64 ", \"hash\": \"%s\", \"not_before\": ", d->record, hex);
	pcv_json_time_or_null(f, d->not_before_ns, true);
	fputs(", \"not_after\": ", f);
	pcv_json_time_or_null(f, d->not_after_ns, true);
	fprintf(f, ", \"windows\": %" PRIu64 ", \"first_window\": ", d->windows);
	pcv_json_time_or_null(f, d->first_window_ns, d->windows > 0);
	fputs(", \"last_end\": ", f);
	pcv_json_time_or_null(f, d->last_end_ns, d->windows > 0);
	fputs(", \"file\": ", f);
	if (d->file >= 0)
		pc_json_string(f, pc_verify_declaration_path(v, d->file));
	else
		fputs("null", f);
	fputs(", \"assignment\": ", f);
	if (d->assignment >= 0)
		fprintf(f, "%d}", d->assignment);
	else
		fputs("null}", f);
}

static void
declare_json(const struct pc_verify *v, const void *st, FILE *f)
{
	size_t n = pc_verify_ndeclared(v);

	if (!reported(st))
		return;
	fprintf(f, "  \"declarations_total\": %zu,\n  \"declarations\": [", n);
	for (size_t i = 0; i < n; i++) {
		fputs(i ? ",\n    " : "\n    ", f);
		json_declaration(v, pc_verify_declared_at(v, i), f);
	}
	fprintf(f, "%s],\n", n ? "\n  " : "");
}

static void
declare_html(const struct pc_verify *v, const void *st, FILE *f)
{
	char hex[2 * PC_DIGEST_LEN + 1];
	size_t n = pc_verify_ndeclared(v);

	if (!reported(st))
		return;
	fputs("<section id=\"declarations\">\n<h2>The auditor's declarations</h2>\n", f);
	fprintf(f,
		"<p><span data-k=\"declarations_total\">%zu</span> in force after a DECLARE "
		"record.</p>\n",
		n);
	fputs("<table id=\"declaration-list\">\n<tr><th>record</th><th>hash</th><th>not "
	      "before</th><th>not after</th><th>windows</th><th>first window</th><th>last "
	      "end</th><th>file</th></tr>\n",
	      f);
	for (size_t i = 0; i < n; i++) {
		const struct pc_verify_declared *d = pc_verify_declared_at(v, i);

		pc_hex(d->hash, PC_DIGEST_LEN, hex);
		fputs("<tr class=\"declaration-row\">", f);
		pcv_td_u64(f, "record", d->record);
		pcv_td_str(f, "hash", hex);
		pcv_td_time(f, "not_before", d->not_before_ns, true);
		pcv_td_time(f, "not_after", d->not_after_ns, true);
		pcv_td_u64(f, "windows", d->windows);
		pcv_td_time(f, "first_window", d->first_window_ns, d->windows > 0);
		pcv_td_time(f, "last_end", d->last_end_ns, d->windows > 0);
		pcv_td_str(f, "file", d->file >= 0 ? pc_verify_declaration_path(v, d->file) : "-");
		fputs("</tr>\n", f);
	}
	fputs("</table>\n</section>\n", f);
}

const struct pcv_check pcv_declare_check = {
	.name = "declare",
	.size = sizeof(struct declare),
	.init = declare_init,
	.free = declare_free,
	.record = declare_record,
	.on[PC_REC_DECLARE] = declare_declare,
	.on[PC_REC_WINDOW] = declare_window,
	.finish = declare_finish,
	.rereads = declare_rereads,
	.report[PCV_TEXT] = declare_text,
	.report[PCV_JSON] = declare_json,
	.report[PCV_HTML] = declare_html,
};
