/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The attestation check (src/verify/attest.h; docs/attestation.md), with
 * --attest: every ATTEST record's quote valid (verify/attest_quote.c), and
 * every window attested: a valid quote of the same run lies within
 * max-windows windows of it, before or after. The quote before shows the
 * measured state podcapd started in, the one after shows, through IMA's
 * cumulative list, everything that ran until then. The windows since the
 * last valid quote wait in `pending` until the next one (or the run's end)
 * decides them. Without --attest, the reports say how many ATTEST records
 * no one checked.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "verify.h"

#include "attest.h"
#include "attest_quote.h"
#include "print.h"
#include "tree.h"
#include "verify_impl.h"

struct pending {
	uint64_t index; /* the WINDOW record */
	uint64_t count; /* its windows */
	uint64_t end;   /* windows since the last valid quote, up to its last */
};

/* Under --attest. */
struct checking {
	struct pc_attest_policy policy;
	void *ak;
	uint8_t root_before[PC_HASH_LEN]; /* the tree of the records before this one */
	bool have_quote;                  /* a valid quote earlier in this run */
	uint64_t quote_record;
	struct pending *pending;
	size_t npending, cap;
	uint64_t since; /* windows since the last valid quote (or the run's start) */
	struct pc_verify_attest_summary sum;
};

struct attest {
	uint64_t nattest; /* ATTEST records read in this run, checked or not */
	bool on;          /* --attest */
	struct checking c;
};

static void
attest_free(void *st)
{
	struct attest *a = st;

	pcv_attest_key_free(a->c.ak);
	free(a->c.pending);
}

int
pc_verify_set_attest(struct pc_verify *v, const struct pc_attest_policy *p, struct pc_error *err)
{
	struct attest *a = pcv_state(v, PCV_ATTEST);
	void *ak = pcv_attest_key(p->ak_pem, err);

	if (ak == NULL)
		return -1;
	attest_free(a);
	memset(&a->c, 0, sizeof(a->c));
	a->on = true;
	a->c.policy = *p;
	a->c.ak = ak;
	a->c.sum.last_quote = -1;
	pcv_tree_root(v, a->c.root_before);
	return 0;
}

int
pc_verify_attest_summary(const struct pc_verify *v, struct pc_verify_attest_summary *s)
{
	const struct attest *a = pcv_state(v, PCV_ATTEST);

	if (!a->on)
		return -1;
	*s = a->c.sum;
	return 0;
}

/* ---- the windows ---- */

/*
 * Decides the pending windows: `next` says whether a valid quote now
 * follows them, at the end of the stretch. Each run of unattested windows
 * is one finding, at its first record.
 */
static void
decide(struct pc_verify *v, struct checking *a, bool next, uint64_t next_record)
{
	uint64_t max = a->policy.max_windows, total = a->since;
	int64_t first = -1;
	uint64_t bad = 0;

	for (size_t i = 0; i < a->npending; i++) {
		const struct pending *p = &a->pending[i];
		bool before = a->have_quote && p->end <= max;
		bool after = next && total - (p->end - p->count) <= max;
		if (before || after) {
			a->sum.windows_attested += p->count;
			continue;
		}
		a->sum.windows_unattested += p->count;
		if (first < 0)
			first = (int64_t)p->index;
		bad += p->count;
	}
	if (first >= 0) {
		char prev[48] = "none in this run", nxt[48] = "none in this run";
		if (a->have_quote)
			snprintf(prev, sizeof(prev), "record %" PRIu64, a->quote_record);
		if (next)
			snprintf(nxt, sizeof(nxt), "record %" PRIu64, next_record);
		pcv_fail(v, PC_VC_ATTEST, first, NULL,
			 "%" PRIu64 " windows from here lie further than max-windows %" PRIu64
			 " from a valid quote (before: %s; after: %s): not attested",
			 bad, max, prev, nxt);
	}
	a->npending = 0;
	a->since = 0;
}

/* Each record first: an ATTEST is counted; a START begins another run of quotes and windows. */
static void
attest_record(struct pc_verify *v, void *st, uint64_t index, const struct pc_record *r)
{
	struct attest *a = st;

	(void)index;
	if (r->type == PC_REC_ATTEST)
		a->nattest++;
	if (r->type != PC_REC_START || !a->on)
		return;
	decide(v, &a->c, false, 0);
	a->c.have_quote = false;
}

static void
pending_window(struct pc_verify *v, struct checking *a, uint64_t index, const struct pc_record *r)
{
	if (a->npending == a->cap) {
		size_t cap = a->cap ? 2 * a->cap : 64;
		struct pending *np = realloc(a->pending, cap * sizeof(*np));
		if (np == NULL) {
			pcv_fail(v, PC_VC_ATTEST, (int64_t)index, r, "out of memory");
			return;
		}
		a->pending = np;
		a->cap = cap;
	}
	a->since += r->window_count;
	a->pending[a->npending++] = (struct pending){ index, r->window_count, a->since };
}

/* After each record: a WINDOW (in its place or not) awaits a quote; the tree before the next. */
static void
attest_after(struct pc_verify *v, void *st, uint64_t index, const struct pc_record *r)
{
	struct attest *a = st;

	if (!a->on)
		return;
	if (r->type == PC_REC_WINDOW)
		pending_window(v, &a->c, index, r);
	pcv_tree_root(v, a->c.root_before);
}

static void
attest_finish(struct pc_verify *v, void *st)
{
	struct attest *a = st;

	if (a->on)
		decide(v, &a->c, false, 0);
}

/* ---- one quote ---- */

/* An ATTEST in a run: the sequence (check 5) saw to it, and to its label. */
static void
attest_quote(struct pc_verify *v, void *st, uint64_t index, const struct pc_record *r)
{
	struct attest *at = st;
	struct checking *a = &at->c;
	char why[PCV_WHY_LEN];
	struct pcv_quote_ctx q = { &a->policy, a->ak, &v->key, a->root_before, v->digest };

	if (!at->on)
		return;
	if (pcv_attest_quote(&q, index, r, why) != 0) {
		a->sum.quotes_refused++;
		pcv_fail(v, PC_VC_ATTEST, (int64_t)index, r, "%s", why);
		return;
	}
	a->sum.quotes_ok++;
	a->sum.last_quote = (int64_t)index;
	a->sum.key_kind = r->attest->key_kind;
	decide(v, a, true, index);
	a->have_quote = true;
	a->quote_record = index;
}

/* ---- the reports: the quotes and windows under --attest, else the records not checked ---- */

static const char *
signing_key_name(uint8_t kind)
{
	return kind == PC_KEY_SEALED ? "sealed" : "file";
}

/* The ATTEST records this run read that no --attest policy checked: 0 under --attest. */
static uint64_t
unchecked(const struct attest *a)
{
	return a->on ? 0 : a->nattest;
}

static void
attest_text(const struct pc_verify *v, const void *st, FILE *f)
{
	uint64_t n = unchecked(st);

	(void)v;
	if (n > 0)
		fprintf(f, "\nattestation: %" PRIu64 " ATTEST record%s not checked (no --attest)\n",
			n, n == 1 ? "" : "s");
}

static void
attest_json(const struct pc_verify *v, const void *st, FILE *f)
{
	const struct attest *a = st;
	const struct pc_verify_attest_summary *s = &a->c.sum;

	(void)v;
	if (!a->on) {
		/* quotes in the log that no policy was given to check: said, not failed */
		if (unchecked(a) > 0)
			fprintf(
			    f,
			    "  \"attestation\": {\"checked\": false, \"attest_records\": %" PRIu64
			    "},\n",
			    unchecked(a));
		return;
	}
	fprintf(f,
		"  \"attestation\": {\"quotes_ok\": %" PRIu64 ", \"quotes_refused\": %" PRIu64
		", \"windows_attested\": %" PRIu64 ", \"windows_unattested\": %" PRIu64
		", \"last_quote\": ",
		s->quotes_ok, s->quotes_refused, s->windows_attested, s->windows_unattested);
	if (s->last_quote >= 0)
		fprintf(f, "%" PRId64 ", \"signing_key\": \"%s\"},\n", s->last_quote,
			signing_key_name(s->key_kind));
	else
		fputs("null, \"signing_key\": null},\n", f);
}

static void
html_unchecked(uint64_t n, FILE *f)
{
	if (n == 0)
		return;
	fprintf(f,
		"<section id=\"attestation\" class=\"unchecked\">\n<h2>Attestation</h2>\n<p "
		"class=\"warn\"><span data-k=\"attest_records\">%" PRIu64
		"</span> ATTEST record%s not checked (no --attest).</p>\n</section>\n",
		n, n == 1 ? "" : "s");
}

static void
attest_html(const struct pc_verify *v, const void *st, FILE *f)
{
	const struct attest *a = st;
	const struct pc_verify_attest_summary *s = &a->c.sum;

	if (!a->on) {
		html_unchecked(unchecked(a), f);
		return;
	}
	fprintf(f,
		"<section id=\"attestation\" class=\"%s\">\n<h2>Attestation</h2>\n<table "
		"id=\"attest-summary\">\n",
		v->found.failsum[PC_VC_ATTEST].count == 0 ? "ok" : "failed");
	pcv_tr_u64(f, "quotes verified", "quotes_ok", s->quotes_ok);
	pcv_tr_u64(f, "quotes refused", "quotes_refused", s->quotes_refused);
	pcv_tr_u64(f, "windows attested", "windows_attested", s->windows_attested);
	pcv_tr_u64(f, "windows not attested", "windows_unattested", s->windows_unattested);
	if (s->last_quote >= 0) {
		pcv_tr_u64(f, "newest valid quote (record)", "last_quote", (uint64_t)s->last_quote);
		fputs("<tr><th>signing key</th>", f);
		pcv_td_str(f, "signing_key", signing_key_name(s->key_kind));
		fputs("</tr>\n", f);
	}
	fputs("</table>\n</section>\n", f);
}

const struct pcv_check pcv_attest_check = {
	.name = "attest",
	.size = sizeof(struct attest),
	.free = attest_free,
	.record = attest_record,
	.on[PC_REC_ATTEST] = attest_quote,
	.after = attest_after,
	.finish = attest_finish,
	.report[PCV_TEXT] = attest_text,
	.report[PCV_JSON] = attest_json,
	.report[PCV_HTML] = attest_html,
};
