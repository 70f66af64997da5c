/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The reconciliation's verdict and its reports (docs/reconcile.md): the
 * last line, the text report, the JSON object and the HTML page's "taps"
 * section, each with every tap, pod and direction compared and every
 * finding kept.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>

#include "tap.h"
#include "verify.h"

#include "tap_impl.h"

static bool
verdict_ok(const struct pc_reconcile *rc)
{
	return rc->total_fail == 0 && rc->nrefused == 0 && !rc->shaper_failed;
}

static void __attribute__((format(printf, 4, 5)))
append(char *buf, size_t len, size_t *at, const char *fmt, ...)
{
	va_list ap;

	if (*at >= len)
		return;
	va_start(ap, fmt);
	int n = vsnprintf(buf + *at, len - *at, fmt, ap);
	va_end(ap);
	*at = n < 0 ? len : *at + (size_t)n;
}

void
pc_reconcile_result_line(const struct pc_reconcile *rc, char *buf, size_t len)
{
	size_t at = 0;

	append(buf, len, &at,
	       "%s: %" PRIu64 " windows agree, %" PRIu64 " unreconciled, %" PRIu64 " disagree",
	       verdict_ok(rc) ? "reconciled" : "RECONCILE FAILED", rc->total_agree, rc->total_unrec,
	       rc->total_fail);
	for (int t = 0; t < rc->ntaps; t++)
		if (rc->taps[t].refused[0] != '\0') {
			append(buf, len, &at, "; tap %d refused: %s", t + 1, rc->taps[t].refused);
			if (rc->nrefused > 1)
				append(buf, len, &at, " (and %d more tap%s refused)",
				       rc->nrefused - 1, rc->nrefused == 2 ? "" : "s");
			break;
		}
	if (rc->shaper_failed)
		append(buf, len, &at, "; the shaper's log failed verification (its report above)");
}

static const char *
side_name(uint8_t side)
{
	return side == PC_ROLE_POD_TAP   ? "pod side"
	    : side == PC_ROLE_FABRIC_TAP ? "fabric side"
					 : "side unknown";
}

/* What was compared for tap t, pod p and direction d; NULL when nothing was. */
static const struct tally *
row(const struct pc_reconcile *rc, int t, uint32_t p, int d)
{
	const struct tally *y = &rc->tally[((size_t)t * rc->nids + p) * PC_DIR_COUNT + (size_t)d];

	return y->agree + y->unreconciled + y->disagree == 0 ? NULL : y;
}

/* The largest lie a compared window could have hidden, in % of its cap x window. */
static double
power_share(const struct tally *y)
{
	return y->caught_of ? 100.0 * (double)y->caught / (double)y->caught_of : 0;
}

/* What the compared windows prove (docs/reconcile.md, "Boundary slices"). */
static void
print_power(FILE *f, const struct tally *y)
{
	if (y->agree == 0)
		return;
	fprintf(f,
		"    a lie of more than %" PRIu64 " B (%.3f %% of cap x window) would have been "
		"caught in any of them (%" PRIu64 " bounded by the tap's slices)\n",
		y->caught, power_share(y), y->sliced);
}

void
pc_reconcile_print_text(const struct pc_reconcile *rc, FILE *f)
{
	char line[2 * PC_RECONCILE_WHY_LEN];

	fprintf(f, "\nreconciliation (clock offset %" PRIu64 " ns, line rate %" PRIu64 " bit/s)\n",
		rc->policy.offset_ns, rc->policy.line_bps);
	for (int t = 0; t < rc->ntaps; t++) {
		if (rc->taps[t].refused[0] != '\0')
			fprintf(f, "tap %d: %s, refused: %s\n", t + 1, rc->taps[t].source,
				rc->taps[t].refused);
		else
			fprintf(f, "tap %d: %s, %s\n", t + 1, rc->taps[t].source,
				side_name(rc->taps[t].side));
		for (uint32_t p = 0; p < rc->nids; p++)
			for (int d = 0; d < PC_DIR_COUNT; d++) {
				const struct tally *y = row(rc, t, p, d);
				if (y == NULL)
					continue;
				fprintf(f,
					"  %s %s (%s): %" PRIu64
					" windows agree (largest difference %" PRIu64 " B, %" PRIu64
					" B allowed), %" PRIu64 " unreconciled, %" PRIu64
					" disagree\n",
					rc->ids[p], pc_dir_name((enum pc_dir)d),
					pcv_tap_sees_passed(rc->taps[t].side, (enum pc_dir)d)
					    ? "passed"
					    : "offered",
					y->agree, y->worst_diff, y->worst_tol, y->unreconciled,
					y->disagree);
				print_power(f, y);
			}
	}
	for (uint64_t i = 0; i < rc->nkept; i++)
		fprintf(f, "%s: %s\n", rc->found[i].failure ? "reconcile" : "unreconciled",
			rc->found[i].msg);
	if (rc->nfound_fail + rc->nfound_unrec > rc->nkept)
		fprintf(f, "(%" PRIu64 " more findings not listed)\n",
			rc->nfound_fail + rc->nfound_unrec - rc->nkept);
	pc_reconcile_result_line(rc, line, sizeof(line));
	fprintf(f, "%s\n", line);
}

void
pc_reconcile_print_json(const struct pc_reconcile *rc, FILE *f)
{
	fprintf(f, "{\"offset_ns\":%" PRIu64 ",\"line_bps\":%" PRIu64 ",\"taps\":[",
		rc->policy.offset_ns, rc->policy.line_bps);
	for (int t = 0; t < rc->ntaps; t++) {
		fprintf(f, "%s{\"source\":", t ? "," : "");
		pc_json_string(f, rc->taps[t].source);
		fprintf(f, ",\"side\":\"%s\",\"pods\":[", side_name(rc->taps[t].side));
		bool first = true;
		for (uint32_t p = 0; p < rc->nids; p++)
			for (int d = 0; d < PC_DIR_COUNT; d++) {
				const struct tally *y = row(rc, t, p, d);
				if (y == NULL)
					continue;
				fprintf(f, "%s{\"pod\":", first ? "" : ",");
				pc_json_string(f, rc->ids[p]);
				fprintf(f,
					",\"dir\":\"%s\",\"agree\":%" PRIu64
					",\"unreconciled\":%" PRIu64 ",\"disagree\":%" PRIu64
					",\"largest_difference\":%" PRIu64 ",\"allowed\":%" PRIu64
					",\"lie_caught_above\":%" PRIu64
					",\"lie_caught_percent\":%.6f,\"sliced\":%" PRIu64 "}",
					pc_dir_name((enum pc_dir)d), y->agree, y->unreconciled,
					y->disagree, y->worst_diff, y->worst_tol, y->caught,
					power_share(y), y->sliced);
				first = false;
			}
		fprintf(f, "]}");
	}
	fprintf(f, "],\"findings\":[");
	for (uint64_t i = 0; i < rc->nkept; i++) {
		fprintf(f, "%s{\"failure\":%s,\"message\":", i ? "," : "",
			rc->found[i].failure ? "true" : "false");
		pc_json_string(f, rc->found[i].msg);
		fputc('}', f);
	}
	fprintf(f,
		"],\"agree\":%" PRIu64 ",\"unreconciled\":%" PRIu64 ",\"disagree\":%" PRIu64
		",\"refused_total\":%d,\"refused\":[",
		rc->total_agree, rc->total_unrec, rc->total_fail, rc->nrefused);
	bool first = true;
	for (int t = 0; t < rc->ntaps; t++) {
		if (rc->taps[t].refused[0] == '\0')
			continue;
		fprintf(f, "%s{\"tap\":%d,\"source\":", first ? "" : ",", t + 1);
		pc_json_string(f, rc->taps[t].source);
		fputs(",\"reason\":", f);
		pc_json_string(f, rc->taps[t].refused);
		fputc('}', f);
		first = false;
	}
	char line[2 * PC_RECONCILE_WHY_LEN];
	pc_reconcile_result_line(rc, line, sizeof(line));
	fprintf(f, "],\"shaper_verified\":%s,\"ok\":%s,\"result\":",
		rc->shaper_failed ? "false" : "true", verdict_ok(rc) ? "true" : "false");
	pc_json_string(f, line);
	fputc('}', f);
}

static void
html_n(FILE *f, const char *key, uint64_t x)
{
	fprintf(f, "<td class=\"n\" data-k=\"%s\">%" PRIu64 "</td>", key, x);
}

/* The page's "taps" section: the JSON's reconciliation, cell by cell. */
void
pc_reconcile_print_html(const struct pc_reconcile *rc, FILE *f)
{
	fprintf(f,
		"<section id=\"taps\" class=\"%s\">\n<h2>Taps</h2>\n<table id=\"tap-summary\">\n",
		verdict_ok(rc) ? "ok" : "failed");
	fputs("<tr><th>windows that agree</th>", f);
	html_n(f, "agree", rc->total_agree);
	fputs("</tr>\n<tr><th>not reconciled</th>", f);
	html_n(f, "unreconciled", rc->total_unrec);
	fputs("</tr>\n<tr><th>disagree</th>", f);
	html_n(f, "disagree", rc->total_fail);
	fputs("</tr>\n<tr><th>taps refused</th>", f);
	html_n(f, "refused", (uint64_t)rc->nrefused);
	fputs("</tr>\n</table>\n", f);
	for (int t = 0; t < rc->ntaps; t++) {
		if (rc->taps[t].refused[0] == '\0')
			continue;
		fprintf(f, "<p class=\"bad\" data-k=\"refused_reason\">tap %d (", t + 1);
		pc_html_escape(f, rc->taps[t].source);
		fputs(") refused: ", f);
		pc_html_escape(f, rc->taps[t].refused);
		fputs("</p>\n", f);
	}
	for (uint64_t i = 0; i < rc->nkept; i++) {
		fprintf(f, "<p class=\"%s\" data-k=\"message\">",
			rc->found[i].failure ? "bad" : "warn");
		pc_html_escape(f, rc->found[i].msg);
		fputs("</p>\n", f);
	}
	fputs("<table id=\"tap-list\">\n<tr><th>tap</th><th>side</th><th>pod</th><th>dir</th>"
	      "<th>agree</th><th>not reconciled</th><th>disagree</th><th>largest difference</th>"
	      "<th>allowed</th><th>a lie caught above</th><th>% of cap × window</th></tr>\n",
	      f);
	for (int t = 0; t < rc->ntaps; t++)
		for (uint32_t p = 0; p < rc->nids; p++)
			for (int d = 0; d < PC_DIR_COUNT; d++) {
				const struct tally *y = row(rc, t, p, d);

				if (y == NULL)
					continue;
				fputs("<tr class=\"tap-row\"><td data-k=\"source\">", f);
				pc_html_escape(f, rc->taps[t].source);
				fprintf(f, "</td><td data-k=\"side\">%s</td><td data-k=\"pod\">",
					side_name(rc->taps[t].side));
				pc_html_escape(f, rc->ids[p]);
				fprintf(f, "</td><td data-k=\"dir\">%s</td>",
					pc_dir_name((enum pc_dir)d));
				html_n(f, "agree", y->agree);
				html_n(f, "unreconciled", y->unreconciled);
				html_n(f, "disagree", y->disagree);
				html_n(f, "largest_difference", y->worst_diff);
				html_n(f, "allowed", y->worst_tol);
				html_n(f, "lie_caught_above", y->caught);
				fprintf(f,
					"<td class=\"n\" data-k=\"lie_caught_percent\">%.3f</td>",
					power_share(y));
				fputs("</tr>\n", f);
			}
	fputs("</table>\n</section>\n", f);
}
