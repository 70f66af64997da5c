/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The verifier's witness policy: a quorum of cosignatures, and their time
 * as the bound of the log's windows (src/verify/witness.h). The judgement
 * is the caller's to make (it holds the cosigned note); this check only
 * keeps it for the JSON and HTML reports, which state it.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "base/clock.h"
#include "log/cosig.h"
#include "witness.h"

#include "print.h"
#include "verify_impl.h"

static void finding(struct pc_witness_report *r, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void
finding(struct pc_witness_report *r, const char *fmt, ...)
{
	va_list ap;

	if (r->nfail == sizeof(r->fail) / sizeof(r->fail[0]))
		return;
	va_start(ap, fmt);
	vsnprintf(r->fail[r->nfail++], sizeof(r->fail[0]), fmt, ap);
	va_end(ap);
}

int
pc_witness_judge(const struct pc_witness_policy *p, const char *note, size_t len,
		 uint64_t newest_end_ns, struct pc_witness_report *r)
{
	char end[PC_UTC_LEN], at[PC_UTC_LEN];
	struct pc_error why;
	uint64_t first_ns;

	memset(r, 0, sizeof(*r));
	r->first = -1;
	r->quorum = p->quorum != 0 ? p->quorum : (unsigned)p->nkeys;
	for (size_t i = 0; i < p->nkeys; i++) {
		struct pc_witness_seen *s = &r->seen[i];

		if (pc_cosig_verify(note, len, &p->keys[i], &s->t, &why) != 0) {
			snprintf(s->why, sizeof(s->why), "%s", why.msg);
			continue;
		}
		s->valid = 1;
		r->nvalid++;
		if (r->first < 0 || s->t < r->seen[r->first].t)
			r->first = (int)i;
	}
	if (r->nvalid < r->quorum)
		finding(r, "the checkpoint carries %u valid cosignatures of the %u required",
			r->nvalid, r->quorum);
	if (r->first < 0 || newest_end_ns == 0)
		return r->nfail == 0 ? 0 : -1;
	first_ns = r->seen[r->first].t * NS;
	pc_utc_format(newest_end_ns, end, sizeof(end));
	pc_utc_format(first_ns, at, sizeof(at));
	if (newest_end_ns > first_ns + NS + p->skew_ns)
		finding(r,
			"the newest window ends at %s, after %s first cosigned it at %s: its label "
			"ran ahead of the witnesses' time",
			end, p->keys[r->first].name, at);
	else if (first_ns > newest_end_ns && first_ns - newest_end_ns > p->max_delay_ns)
		finding(r,
			"the newest window, ending at %s, was first cosigned at %s by %s, %" PRIu64
			" s after it ended (more than --max-witness-delay, %" PRIu64
			" s): written or "
			"shown to witnesses after the fact",
			end, at, p->keys[r->first].name, (first_ns - newest_end_ns) / NS,
			p->max_delay_ns / NS);
	return r->nfail == 0 ? 0 : -1;
}

void
pc_witness_report_print(const struct pc_witness_policy *p, const struct pc_witness_report *r,
			FILE *f)
{
	char at[PC_UTC_LEN];

	fprintf(f, "witnesses: %u of %zu cosigned the checkpoint, %u required\n", r->nvalid,
		p->nkeys, r->quorum);
	for (size_t i = 0; i < p->nkeys; i++) {
		if (r->seen[i].valid) {
			pc_utc_format(r->seen[i].t * NS, at, sizeof(at));
			fprintf(f, "  %s+%08x: cosigned at %s\n", p->keys[i].name,
				(unsigned)p->keys[i].id, at);
		} else {
			fprintf(f, "  %s+%08x: %s\n", p->keys[i].name, (unsigned)p->keys[i].id,
				r->seen[i].why);
		}
	}
	for (unsigned i = 0; i < r->nfail; i++)
		fprintf(f, "  FAIL %s\n", r->fail[i]);
}

/* ---- the judgement in the reports ---- */

struct witness {
	const struct pc_witness_policy *policy; /* NULL until given */
	const struct pc_witness_report *report;
};

void
pc_verify_set_witness_result(struct pc_verify *v, const struct pc_witness_policy *p,
			     const struct pc_witness_report *r)
{
	struct witness *w = pcv_state(v, PCV_WITNESS);

	w->policy = p;
	w->report = r;
}

static void
key_text(char *out, size_t n, const struct pc_verifier_key *k)
{
	snprintf(out, n, "%s+%08" PRIx32, k->name, k->id);
}

static void
witness_json(const struct pc_verify *v, const void *st, FILE *f)
{
	const struct pc_witness_policy *p = ((const struct witness *)st)->policy;
	const struct pc_witness_report *r = ((const struct witness *)st)->report;
	char key[PC_KEY_NAME_LEN + 16];

	(void)v;
	if (r == NULL)
		return;
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
		pcv_json_time_or_null(f, r->seen[i].t * PC_NS_PER_SEC, r->seen[i].valid);
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
witness_html(const struct pc_verify *v, const void *st, FILE *f)
{
	const struct pc_witness_policy *p = ((const struct witness *)st)->policy;
	const struct pc_witness_report *r = ((const struct witness *)st)->report;
	char key[PC_KEY_NAME_LEN + 16];

	(void)v;
	if (r == NULL)
		return;
	fprintf(f,
		"<section id=\"witnesses\" class=\"%s\">\n<h2>Witnesses</h2>\n<table "
		"id=\"witness-summary\">\n",
		r->nfail == 0 ? "ok" : "failed");
	pcv_tr_u64(f, "cosigned", "cosigned", r->nvalid);
	pcv_tr_u64(f, "required", "required", r->quorum);
	pcv_tr_u64(f, "witnesses", "keys_total", p->nkeys);
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
		pcv_td_str(f, "key", key);
		pcv_td_time(f, "at", r->seen[i].t * PC_NS_PER_SEC, r->seen[i].valid);
		pcv_td_str(f, "why", r->seen[i].valid ? "" : r->seen[i].why);
		fputs("</tr>\n", f);
	}
	fputs("</table>\n</section>\n", f);
}

const struct pcv_check pcv_witness_check = {
	.name = "witness",
	.size = sizeof(struct witness),
	.report[PCV_JSON] = witness_json,
	.report[PCV_HTML] = witness_html,
};
