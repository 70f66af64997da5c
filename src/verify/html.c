/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The verifier's report as one HTML page for people: the verdict first,
 * then the summary tables (the JSON report's figures: counts as the JSON
 * has them, bytes, rates and durations rounded for people with every digit
 * in the cell's title), the indicators, and per pod and direction a plot
 * of its windows over time. Self-contained: inline CSS and SVG, no script,
 * nothing fetched, so it reads the same offline, archived or printed.
 * Every text that comes from the log or a file is escaped.
 *
 * The page is a list of sections (html_layout below): the verdict, the
 * log and the events are the page's own, the rest each check's part
 * (check.h, report), and a new check's section needs no line here.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "shape/classify.h"
#include "base/clock.h"
#include "shape/counters.h"
#include "base/hex.h"
#include "log/record.h"
#include "base/units.h"
#include "verify.h"

#include "limit.h"
#include "print.h"
#include "report.h"
#include "verify_impl.h"

/* ---- the page ---- */

static const char css[] =
    "body{font:14px/1.4 system-ui,-apple-system,'Segoe UI',sans-serif;margin:1.5em auto;"
    "max-width:1000px;color:#111;background:#fff;padding:0 1em}"
    "h1{font-size:1.5em;margin:.2em 0}h2{font-size:1.2em;border-bottom:1px solid #999;"
    "margin-top:1.6em}h3{font-size:1.05em;margin:1em 0 .3em}"
    "table{border-collapse:collapse;margin:.4em 0;font-size:12px}"
    "td,th{border:1px solid #bbb;padding:2px 6px;text-align:left;vertical-align:top}"
    "td.n{text-align:right;font-variant-numeric:tabular-nums}th{background:#eee}"
    ".verdict{padding:.8em 1em;border:3px solid;margin:1em 0}"
    ".verdict.ok{border-color:#1a7f37;background:#eaf7ee}"
    ".verdict.failed{border-color:#c0152f;background:#fdecee}"
    ".verdict .line{font-size:1.2em;font-weight:bold;word-break:break-all}"
    ".held{color:#1a7f37}.bad{color:#c0152f;font-weight:bold}.warn{color:#8a5a00}"
    ".note{color:#555;font-size:12px}code,.mono{font-family:ui-monospace,monospace;"
    "font-size:12px;word-break:break-all}"
    "svg.plot{width:100%;height:auto;display:block;margin:.3em 0 1em}"
    "svg text{font:10px sans-serif;fill:#333}"
    ".indicator{border-left:4px solid #8a5a00;padding-left:.6em}"
    "@media print{body{max-width:none;margin:0}section.pod{break-inside:avoid}"
    ".verdict{break-inside:avoid}h2{break-after:avoid}}";

void
pc_html_begin(FILE *f, const char *title)
{
	fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
	      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
	      /* nothing on this page may be fetched, whatever a log holds */
	      "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
	      "style-src 'unsafe-inline'; img-src data:\">\n<title>",
	      f);
	pc_html_escape(f, title);
	fprintf(f, "</title>\n<style>%s</style>\n</head>\n<body>\n<h1>", css);
	pc_html_escape(f, title);
	fputs("</h1>\n", f);
}

void
pc_html_end(FILE *f)
{
	fputs("<p class=\"note\">Written by podcap-verify from the signed log alone: the same "
	      "figures as its --json report. Indicators are not findings (docs/report.md).</p>\n"
	      "</body>\n</html>\n",
	      f);
}

/* ---- the verdict ---- */

static void
html_verdict(const struct pc_verify *v, FILE *f)
{
	char line[PC_VERIFY_MSG_LEN + 256];
	unsigned w = pc_verify_warnings(v);

	pcv_result_line(v, line, sizeof(line));
	fprintf(f,
		"<section id=\"verdict\" class=\"verdict %s\">\n<div class=\"line\" "
		"data-k=\"result\">",
		v->found.nfails == 0 ? "ok" : "failed");
	pc_html_escape(f, line);
	fputs("</div>\n", f);
	if (v->found.nfails > 0) {
		fputs("<table id=\"failed-checks\">\n<tr><th>check</th><th>failures</th><th>first "
		      "failure</th></tr>\n",
		      f);
		for (int c = 0; c < PC_VC_COUNT; c++) {
			const struct pc_verify_failure_sum *s = &v->found.failsum[c];

			if (s->count == 0)
				continue;
			fprintf(f,
				"<tr class=\"failed\" data-check=\"%s\"><td class=\"bad\">%s</td>",
				pc_verify_check_name((enum pc_verify_check)c),
				pc_verify_check_name((enum pc_verify_check)c));
			pcv_td_u64(f, "count", s->count);
			fputs("<td>", f);
			if (s->first.record >= 0)
				fprintf(f, "record %" PRId64 ": ", s->first.record);
			pc_html_escape(f, s->first.msg);
			fputs("</td></tr>\n", f);
		}
		fputs("</table>\n", f);
	}
	fputs("<p>Held:", f);
	for (int c = 0; c < PC_VC_COUNT; c++)
		if (v->found.failsum[c].count == 0)
			fprintf(f,
				" <span class=\"held\" data-check=\"%s\">&#10003;&nbsp;%s</span>",
				pc_verify_check_name((enum pc_verify_check)c),
				pc_verify_check_name((enum pc_verify_check)c));
	fputs("</p>\n", f);
	for (int i = 0; i < PC_VW_COUNT; i++)
		if (w & (1u << i)) {
			fputs("<p class=\"warn\">warning: ", f);
			pc_html_escape(f, pc_verify_warning_text((enum pc_verify_warning)i));
			fputs("</p>\n", f);
		}
	if (v->resumed)
		fprintf(f,
			"<p class=\"note\">Resumed from a saved state: records before %" PRIu64
			" were verified by an earlier run; the plots and indicators cover the "
			"records from there on.</p>\n",
			v->trusted.size);
	fputs("</section>\n", f);
}

/* ---- the log ---- */

static void
html_log(const struct pc_verify *v, FILE *f)
{
	char key[PC_KEY_NAME_LEN + 16], root[2 * PC_HASH_LEN + 1];

	snprintf(key, sizeof(key), "%s+%08" PRIx32, v->key.name, v->key.id);
	fputs("<section id=\"log\">\n<h2>The log</h2>\n<table>\n<tr><th>origin</th>", f);
	pcv_td_str(f, "origin", v->cp_ok ? v->cp.origin : "-");
	fputs("</tr>\n<tr><th>key</th>", f);
	pcv_td_str(f, "key", key);
	fputs("</tr>\n", f);
	if (v->cp_ok) {
		pc_hex(v->cp.root, PC_HASH_LEN, root);
		fputs("<tr><th>tree size</th>", f);
		pcv_td_u64(f, "tree_size", v->cp.size);
		fputs("</tr>\n<tr><th>root</th><td class=\"mono\" data-k=\"root\">", f);
		pc_html_escape(f, root);
		fputs("</td></tr>\n", f);
	}
	fputs("<tr><th>records</th>", f);
	pcv_td_u64(f, "records", v->nrec);
	fputs("</tr>\n<tr><th>windows</th>", f);
	pcv_td_u64(f, "windows", v->nwindows);
	fputs("</tr>\n<tr><th>time no window covers</th>", f);
	struct pcv_unaccounted u;
	pcv_unaccounted_parts(v, &u);
	pcv_td_duration(f, "unaccounted_ns", u.total_ns);
	fputs("</tr>\n</table>\n</section>\n", f);
}

/* ---- events ---- */

#define HTML_EVENTS_LISTED 200 /* rows of the events table; the plots mark every kept one */

static void
html_events(const struct pc_verify *v, FILE *f)
{
	uint64_t n = pcv_kept(v->found.nevents);

	fputs("<section id=\"events\">\n<h2>Events</h2>\n<table id=\"event-kinds\">\n<tr>"
	      "<th>kind</th><th>count</th><th>total time</th></tr>\n",
	      f);
	for (int k = 0; k < PC_VE_COUNT; k++) {
		fprintf(f, "<tr class=\"kind-row\" data-kind=\"%s\"><td>%s</td>",
			pcv_event_name((enum pc_verify_event_kind)k),
			pcv_event_name((enum pc_verify_event_kind)k));
		pcv_td_u64(f, "count", v->found.evsum[k].count);
		if (pcv_event_sized((enum pc_verify_event_kind)k))
			pcv_td_duration(f, "total_ns", v->found.evsum[k].total_ns);
		else
			fputs("<td></td>", f);
		fputs("</tr>\n", f);
	}
	fprintf(f,
		"</table>\n<table id=\"event-list\">\n<tr><th>record</th><th>event</th>"
		"<th>time</th></tr>\n");
	for (uint64_t i = 0; i < n && i < HTML_EVENTS_LISTED; i++) {
		const struct pc_verify_event *e = &v->found.events[i];

		fputs("<tr class=\"event-row\">", f);
		pcv_td_u64(f, "record", e->record);
		pcv_td_str(f, "event", pcv_event_name(e->kind));
		fputs("<td data-k=\"time\">", f);
		pcv_html_time(f, e->window_start_ns);
		fputs("</td></tr>\n", f);
	}
	fputs("</table>\n", f);
	fprintf(f, "<p class=\"note\">%" PRIu64 " events in all, %" PRIu64 " listed here.</p>\n",
		v->found.nevents, n < HTML_EVENTS_LISTED ? n : HTML_EVENTS_LISTED);
	fputs("</section>\n", f);
}

/* ---- the page, section by section: a check the layout does not name comes after the options' ---- */

static const struct pcv_part html_layout[] = {
	PCV_OWN(html_verdict), /* the verdict, failed and held checks */
	PCV_PART(PCV_WITNESS), /* witnesses */
	PCV_PART(PCV_ATTEST),  /* attestation */
	PCV_PART(PCV_DECLARE), /* declarations */
	PCV_PART(PCV_OTHERS),  /* a check named nowhere else */
	PCV_OWN(html_log),     /* the log */
	PCV_PART(PCV_TOTALS),  /* pods, drops, links */
	PCV_OWN(html_events),  /* events */
	PCV_PART(PCV_SERIES),  /* indicators, plots */
};

void
pc_verify_html_appliance(const struct pc_verify *v, FILE *f)
{
	fputs("<article class=\"appliance\" data-origin=\"", f);
	pc_html_escape(f, v->cp_ok ? v->cp.origin : "");
	fprintf(f, "\" data-ok=\"%s\">\n", v->found.nfails == 0 ? "true" : "false");
	pcv_report_parts(v, f, PCV_HTML, html_layout, PCV_PARTS(html_layout));
	fputs("</article>\n", f);
}

void
pc_verify_html_open(const struct pc_verify *v, FILE *f)
{
	char title[PC_NOTE_MAX + 64];

	snprintf(title, sizeof(title), "podcap verification: %s",
		 v->cp_ok ? v->cp.origin : "checkpoint not verified");
	pc_html_begin(f, title);
	pc_verify_html_appliance(v, f);
}

void
pc_verify_print_html(const struct pc_verify *v, FILE *f)
{
	pc_verify_html_open(v, f);
	pc_html_end(f);
}
