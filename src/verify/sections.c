/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The report's sections of the checks an option turns on: witnesses
 * (--witness), attestation (--attest) and the auditor's declarations
 * (--pod-maps). Each is written once for the JSON report and once for the
 * HTML page from the same results, and only when its option was given, so
 * a report without them is byte for byte what it was. Without --attest,
 * a log's ATTEST records are said to be unchecked, in all three reports.
 */
#include <inttypes.h>
#include <string.h>

#include "base/clock.h"
#include "base/hex.h"
#include "base/units.h"
#include "verify.h"
#include "attest.h"
#include "declare.h"
#include "witness.h"

#include "verify_impl.h"

void
pc_verify_set_witness_result(struct pc_verify *v, const struct pc_witness_policy *p,
			     const struct pc_witness_report *r)
{
	v->witness_policy = p;
	v->witness = r;
}

static void
key_text(char *out, size_t n, const struct pc_verifier_key *k)
{
	snprintf(out, n, "%s+%08" PRIx32, k->name, k->id);
}

static const char *
signing_key_name(uint8_t kind)
{
	return kind == PC_KEY_SEALED ? "sealed" : "file";
}

/* ---- JSON ---- */

static void
json_time_or_null(FILE *f, uint64_t ns, bool known)
{
	char t[PC_UTC_LEN];

	if (!known) {
		fputs("null", f);
		return;
	}
	pc_utc_format(ns, t, sizeof(t));
	pc_json_string(f, t);
}

static void
json_witnesses(const struct pc_verify *v, FILE *f)
{
	const struct pc_witness_policy *p = v->witness_policy;
	const struct pc_witness_report *r = v->witness;
	char key[PC_KEY_NAME_LEN + 16];

	fprintf(f,
		"  \"witnesses\": {\"ok\": %s, \"cosigned\": %u, \"required\": %u, "
		"\"keys_total\": %zu, \"keys\": [",
		r->nfail == 0 ? "true" : "false", r->nvalid, r->quorum, p->nkeys);
	for (size_t i = 0; i < p->nkeys; i++) {
		key_text(key, sizeof(key), &p->keys[i]);
		fputs(i ? ",\n    " : "\n    ", f);
		fputs("{\"key\": ", f);
		pc_json_string(f, key);
		fprintf(f, ", \"cosigned\": %s, \"at\": ", r->seen[i].valid ? "true" : "false");
		json_time_or_null(f, r->seen[i].t * PC_NS_PER_SEC, r->seen[i].valid);
		fputs(", \"why\": ", f);
		if (r->seen[i].valid)
			fputs("null", f);
		else
			pc_json_string(f, r->seen[i].why);
		fputc('}', f);
	}
	fprintf(f, "%s], \"failures_total\": %u, \"failures\": [", p->nkeys ? "\n  " : "",
		r->nfail);
	for (unsigned i = 0; i < r->nfail; i++) {
		fputs(i ? ", " : "", f);
		pc_json_string(f, r->fail[i]);
	}
	fputs("]},\n", f);
}

static void
json_attest(const struct pc_verify *v, FILE *f)
{
	struct pc_verify_attest_summary s;

	if (pc_verify_attest_summary(v, &s) != 0)
		return;
	fprintf(f,
		"  \"attestation\": {\"quotes_ok\": %" PRIu64 ", \"quotes_refused\": %" PRIu64
		", \"windows_attested\": %" PRIu64 ", \"windows_unattested\": %" PRIu64
		", \"last_quote\": ",
		s.quotes_ok, s.quotes_refused, s.windows_attested, s.windows_unattested);
	if (s.last_quote >= 0)
		fprintf(f, "%" PRId64 ", \"signing_key\": \"%s\"},\n", s.last_quote,
			signing_key_name(s.key_kind));
	else
		fputs("null, \"signing_key\": null},\n", f);
}

uint64_t
pcv_attest_unchecked(const struct pc_verify *v)
{
	return v->attest == NULL ? v->nattest : 0;
}

/* Quotes in the log that no policy was given to check: said, not failed. */
static void
json_attest_unchecked(const struct pc_verify *v, FILE *f)
{
	fprintf(f, "  \"attestation\": {\"checked\": false, \"attest_records\": %" PRIu64 "},\n",
		pcv_attest_unchecked(v));
}

void
pcv_text_attest_unchecked(const struct pc_verify *v, FILE *f)
{
	uint64_t n = pcv_attest_unchecked(v);

	if (n > 0)
		fprintf(f, "\nattestation: %" PRIu64 " ATTEST record%s not checked (no --attest)\n",
			n, n == 1 ? "" : "s");
}

static void
json_declaration(const struct pc_verify *v, const struct pc_verify_declared *d, FILE *f)
{
	char hex[2 * PC_DIGEST_LEN + 1];

	pc_hex(d->hash, PC_DIGEST_LEN, hex);
	fprintf(f, "{\"record\": %" PRIu64 ", \"hash\": \"%s\", \"not_before\": ", d->record, hex);
	json_time_or_null(f, d->not_before_ns, true);
	fputs(", \"not_after\": ", f);
	json_time_or_null(f, d->not_after_ns, true);
	fprintf(f, ", \"windows\": %" PRIu64 ", \"first_window\": ", d->windows);
	json_time_or_null(f, d->first_window_ns, d->windows > 0);
	fputs(", \"last_end\": ", f);
	json_time_or_null(f, d->last_end_ns, d->windows > 0);
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
json_declarations(const struct pc_verify *v, FILE *f)
{
	size_t n = pc_verify_ndeclared(v);

	fprintf(f, "  \"declarations_total\": %zu,\n  \"declarations\": [", n);
	for (size_t i = 0; i < n; i++) {
		fputs(i ? ",\n    " : "\n    ", f);
		json_declaration(v, pc_verify_declared_at(v, i), f);
	}
	fprintf(f, "%s],\n", n ? "\n  " : "");
}

void
pcv_json_sections(const struct pc_verify *v, FILE *f)
{
	if (v->witness != NULL)
		json_witnesses(v, f);
	if (v->attest != NULL)
		json_attest(v, f);
	else if (pcv_attest_unchecked(v) > 0)
		json_attest_unchecked(v, f);
	if (pcv_audit_reported(v))
		json_declarations(v, f);
}

/* ---- HTML ---- */

static void
cell(FILE *f, const char *key, const char *s)
{
	fprintf(f, "<td data-k=\"%s\">", key);
	pc_html_escape(f, s);
	fputs("</td>", f);
}

static void
cell_n(FILE *f, const char *key, uint64_t x)
{
	fprintf(f, "<td class=\"n\" data-k=\"%s\">%" PRIu64 "</td>", key, x);
}

static void
cell_time(FILE *f, const char *key, uint64_t ns, bool known)
{
	char t[PC_UTC_LEN];

	if (known)
		pc_utc_format(ns, t, sizeof(t));
	cell(f, key, known ? t : "-");
}

static void
row_n(FILE *f, const char *label, const char *key, uint64_t x)
{
	fprintf(f, "<tr><th>%s</th>", label);
	cell_n(f, key, x);
	fputs("</tr>\n", f);
}

void
pcv_html_witnesses(const struct pc_verify *v, FILE *f)
{
	const struct pc_witness_policy *p = v->witness_policy;
	const struct pc_witness_report *r = v->witness;
	char key[PC_KEY_NAME_LEN + 16];

	if (r == NULL)
		return;
	fprintf(f,
		"<section id=\"witnesses\" class=\"%s\">\n<h2>Witnesses</h2>\n<table "
		"id=\"witness-summary\">\n",
		r->nfail == 0 ? "ok" : "failed");
	row_n(f, "cosigned", "cosigned", r->nvalid);
	row_n(f, "required", "required", r->quorum);
	row_n(f, "witnesses", "keys_total", p->nkeys);
	fputs("</table>\n", f);
	for (unsigned i = 0; i < r->nfail; i++) {
		fputs("<p class=\"bad\" data-k=\"failure\">", f);
		pc_html_escape(f, r->fail[i]);
		fputs("</p>\n", f);
	}
	fputs("<table id=\"witness-list\">\n<tr><th>witness</th><th>cosigned at</th><th>or "
	      "why not</th></tr>\n",
	      f);
	for (size_t i = 0; i < p->nkeys; i++) {
		key_text(key, sizeof(key), &p->keys[i]);
		fprintf(f, "<tr class=\"witness-row\" data-cosigned=\"%s\">",
			r->seen[i].valid ? "true" : "false");
		cell(f, "key", key);
		cell_time(f, "at", r->seen[i].t * PC_NS_PER_SEC, r->seen[i].valid);
		cell(f, "why", r->seen[i].valid ? "" : r->seen[i].why);
		fputs("</tr>\n", f);
	}
	fputs("</table>\n</section>\n", f);
}

static void
html_attest_unchecked(const struct pc_verify *v, FILE *f)
{
	uint64_t n = pcv_attest_unchecked(v);

	if (n == 0)
		return;
	fprintf(f,
		"<section id=\"attestation\" class=\"unchecked\">\n<h2>Attestation</h2>\n<p "
		"class=\"warn\"><span data-k=\"attest_records\">%" PRIu64
		"</span> ATTEST record%s not checked (no --attest).</p>\n</section>\n",
		n, n == 1 ? "" : "s");
}

void
pcv_html_attest(const struct pc_verify *v, FILE *f)
{
	struct pc_verify_attest_summary s;

	if (pc_verify_attest_summary(v, &s) != 0) {
		html_attest_unchecked(v, f);
		return;
	}
	fprintf(f,
		"<section id=\"attestation\" class=\"%s\">\n<h2>Attestation</h2>\n<table "
		"id=\"attest-summary\">\n",
		v->found.failsum[PC_VC_ATTEST].count == 0 ? "ok" : "failed");
	row_n(f, "quotes verified", "quotes_ok", s.quotes_ok);
	row_n(f, "quotes refused", "quotes_refused", s.quotes_refused);
	row_n(f, "windows attested", "windows_attested", s.windows_attested);
	row_n(f, "windows not attested", "windows_unattested", s.windows_unattested);
	if (s.last_quote >= 0) {
		row_n(f, "newest valid quote (record)", "last_quote", (uint64_t)s.last_quote);
		fputs("<tr><th>signing key</th>", f);
		cell(f, "signing_key", signing_key_name(s.key_kind));
		fputs("</tr>\n", f);
	}
	fputs("</table>\n</section>\n", f);
}

void
pcv_html_declarations(const struct pc_verify *v, FILE *f)
{
	char hex[2 * PC_DIGEST_LEN + 1];
	size_t n = pc_verify_ndeclared(v);

	if (!pcv_audit_reported(v))
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
		cell_n(f, "record", d->record);
		cell(f, "hash", hex);
		cell_time(f, "not_before", d->not_before_ns, true);
		cell_time(f, "not_after", d->not_after_ns, true);
		cell_n(f, "windows", d->windows);
		cell_time(f, "first_window", d->first_window_ns, d->windows > 0);
		cell_time(f, "last_end", d->last_end_ns, d->windows > 0);
		cell(f, "file", d->file >= 0 ? pc_verify_declaration_path(v, d->file) : "-");
		fputs("</tr>\n", f);
	}
	fputs("</table>\n</section>\n", f);
}
