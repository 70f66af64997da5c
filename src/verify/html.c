/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The verifier's report as one HTML page for people: the verdict first,
 * then the summary tables (the JSON report's figures, in the JSON's number
 * forms), the indicators, and per pod and direction a plot of its windows
 * over time. Self-contained: inline CSS and SVG, no script, nothing
 * fetched, so it reads the same offline, archived or printed. Every text
 * that comes from the log or a file is escaped.
 *
 * The page is a list of sections, each one function of the verifier's
 * results (html_sections below): a new check adds its section there.
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

#include "verify_impl.h"
#include "series.h"

/* ---- text ---- */

/* s with &, <, >, " and ' escaped: safe in element text and in quoted attributes. */
void
pc_html_escape(FILE *f, const char *s)
{
	for (const char *p = s; *p != '\0'; p++) {
		switch (*p) {
		case '&':
			fputs("&amp;", f);
			break;
		case '<':
			fputs("&lt;", f);
			break;
		case '>':
			fputs("&gt;", f);
			break;
		case '"':
			fputs("&quot;", f);
			break;
		case '\'':
			fputs("&#39;", f);
			break;
		default:
			fputc(*p, f);
		}
	}
}

static void
esc(FILE *f, const char *s)
{
	pc_html_escape(f, s);
}

static void
time_text(FILE *f, uint64_t ns)
{
	char t[PC_UTC_LEN];

	pc_utc_format(ns, t, sizeof(t));
	esc(f, t);
}

static void
u128_text(FILE *f, u128 x)
{
	pcv_print_u128(f, x);
}

/* A cell: <td data-k="key">...</td>, the key naming the JSON field it equals. */
static void
td_u64(FILE *f, const char *key, uint64_t x)
{
	fprintf(f, "<td class=\"n\" data-k=\"%s\">%" PRIu64 "</td>", key, x);
}

static void
td_u128(FILE *f, const char *key, u128 x)
{
	fprintf(f, "<td class=\"n\" data-k=\"%s\">", key);
	u128_text(f, x);
	fputs("</td>", f);
}

static void
td_str(FILE *f, const char *key, const char *s)
{
	fprintf(f, "<td data-k=\"%s\">", key);
	esc(f, s);
	fputs("</td>", f);
}

static void
size_text(FILE *f, uint64_t bytes)
{
	char b[64];

	pc_format_size(b, sizeof(b), bytes);
	esc(f, b);
}

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
	esc(f, title);
	fprintf(f, "</title>\n<style>%s</style>\n</head>\n<body>\n<h1>", css);
	esc(f, title);
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
	esc(f, line);
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
				pcv_check_label(c), pcv_check_label(c));
			td_u64(f, "count", s->count);
			fputs("<td>", f);
			if (s->first.record >= 0)
				fprintf(f, "record %" PRId64 ": ", s->first.record);
			esc(f, s->first.msg);
			fputs("</td></tr>\n", f);
		}
		fputs("</table>\n", f);
	}
	fputs("<p>Held:", f);
	for (int c = 0; c < PC_VC_COUNT; c++)
		if (v->found.failsum[c].count == 0)
			fprintf(f,
				" <span class=\"held\" data-check=\"%s\">&#10003;&nbsp;%s</span>",
				pcv_check_label(c), pcv_check_label(c));
	fputs("</p>\n", f);
	for (int i = 0; i < PC_VW_COUNT; i++)
		if (w & (1u << i)) {
			fputs("<p class=\"warn\">warning: ", f);
			esc(f, pc_verify_warning_text((enum pc_verify_warning)i));
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
	td_str(f, "origin", v->cp_ok ? v->cp.origin : "-");
	fputs("</tr>\n<tr><th>key</th>", f);
	td_str(f, "key", key);
	fputs("</tr>\n", f);
	if (v->cp_ok) {
		pc_hex(v->cp.root, PC_HASH_LEN, root);
		fputs("<tr><th>tree size</th>", f);
		td_u64(f, "tree_size", v->cp.size);
		fputs("</tr>\n<tr><th>root</th><td class=\"mono\" data-k=\"root\">", f);
		esc(f, root);
		fputs("</td></tr>\n", f);
	}
	fputs("<tr><th>records</th>", f);
	td_u64(f, "records", v->nrec);
	fputs("</tr>\n<tr><th>windows</th>", f);
	td_u64(f, "windows", v->nwindows);
	fputs("</tr>\n<tr><th>time no window covers</th>", f);
	struct pcv_unaccounted u;
	pcv_unaccounted_parts(v, &u);
	td_u64(f, "unaccounted_ns", u.total_ns);
	fputs("</tr>\n</table>\n</section>\n", f);
}

/* ---- the pods ---- */

static void
html_pods(const struct pc_verify *v, FILE *f)
{
	fputs("<section id=\"pods\">\n<h2>Pods</h2>\n<table id=\"pod-table\">\n<tr><th>pod</th>"
	      "<th>dir</th><th>windows</th><th>bytes</th><th>frames</th><th>peak bytes</th>"
	      "<th>peak window</th><th>peak &permil; of cap</th><th>windows at cap</th>"
	      "<th>promise</th></tr>\n",
	      f);
	for (uint32_t i = 0; i < v->npods; i++)
		for (int d = 0; d < PC_DIR_COUNT; d++) {
			const struct pc_verify_totals *t = &v->pods[i].t[d];

			fputs("<tr class=\"pod-row\" data-pod=\"", f);
			esc(f, v->pods[i].id);
			fprintf(f, "\" data-dir=\"%s\">", pc_dir_name((enum pc_dir)d));
			td_str(f, "pod", v->pods[i].id);
			td_str(f, "dir", pc_dir_name((enum pc_dir)d));
			td_u64(f, "windows", t->windows);
			td_u128(f, "bytes", t->bytes);
			td_u128(f, "frames", t->frames);
			td_u64(f, "peak_bytes", t->peak_bytes);
			fputs("<td data-k=\"peak_window\">", f);
			if (t->windows > 0)
				time_text(f, t->peak_window_start_ns);
			fputs("</td>", f);
			if (t->windows > 0 && t->peak_permille != UINT64_MAX)
				td_u64(f, "peak_permille", t->peak_permille);
			else
				fputs("<td data-k=\"peak_permille\"></td>", f);
			td_u64(f, "windows_at_cap", t->at_cap);
			td_str(f, "promise", pcv_promises_label(v->pods[i].promises));
			fputs("</tr>\n", f);
		}
	fputs("</table>\n<h3>Drops by reason</h3>\n<table id=\"drop-table\">\n<tr><th>pod</th>"
	      "<th>dir</th>",
	      f);
	for (int k = 0; k < PC_POD_DROP_COUNT; k++)
		fprintf(f, "<th>%s frames</th><th>%s bytes</th>",
			pc_pod_drop_name((enum pc_pod_drop)k),
			pc_pod_drop_name((enum pc_pod_drop)k));
	fputs("</tr>\n", f);
	for (uint32_t i = 0; i < v->npods; i++)
		for (int d = 0; d < PC_DIR_COUNT; d++) {
			const struct pc_verify_totals *t = &v->pods[i].t[d];
			char key[64];

			fputs("<tr class=\"drop-row\" data-pod=\"", f);
			esc(f, v->pods[i].id);
			fprintf(f, "\" data-dir=\"%s\">", pc_dir_name((enum pc_dir)d));
			td_str(f, "pod", v->pods[i].id);
			td_str(f, "dir", pc_dir_name((enum pc_dir)d));
			for (int k = 0; k < PC_POD_DROP_COUNT; k++) {
				snprintf(key, sizeof(key), "drops.%s.frames",
					 pc_pod_drop_name((enum pc_pod_drop)k));
				td_u128(f, key, t->drop_frames[k]);
				snprintf(key, sizeof(key), "drops.%s.bytes",
					 pc_pod_drop_name((enum pc_pod_drop)k));
				td_u128(f, key, t->drop_bytes[k]);
			}
			fputs("</tr>\n", f);
		}
	fputs("</table>\n", f);
	if (v->nlinks > 0) {
		fputs("<h3>Frames of no pod, per uplink</h3>\n<table id=\"link-table\">\n<tr>"
		      "<th>link</th><th>dir</th>",
		      f);
		for (int k = 0; k < PC_LINK_DROP_COUNT; k++)
			fprintf(f, "<th>%s frames</th><th>%s bytes</th>",
				pc_link_drop_name((enum pc_link_drop)k),
				pc_link_drop_name((enum pc_link_drop)k));
		fputs("</tr>\n", f);
		for (uint32_t i = 0; i < v->nlinks; i++)
			for (int d = 0; d < PC_DIR_COUNT; d++) {
				char key[64];

				fputs("<tr class=\"link-row\">", f);
				td_str(f, "link", v->links[i].name);
				td_str(f, "dir", pc_dir_name((enum pc_dir)d));
				for (int k = 0; k < PC_LINK_DROP_COUNT; k++) {
					const char *n = pc_link_drop_name((enum pc_link_drop)k);
					snprintf(key, sizeof(key), "%s.frames", n);
					td_u128(f, key, v->links[i].frames[d][k]);
					snprintf(key, sizeof(key), "%s.bytes", n);
					td_u128(f, key, v->links[i].bytes[d][k]);
				}
				fputs("</tr>\n", f);
			}
		fputs("</table>\n", f);
	}
	fputs("</section>\n", f);
}

/* ---- events ---- */

#define HTML_EVENTS_LISTED 200 /* rows of the events table; the plots mark every kept one */

static void
html_events(const struct pc_verify *v, FILE *f)
{
	uint64_t n = pcv_kept(v->found.nevents);

	fputs("<section id=\"events\">\n<h2>Events</h2>\n<table id=\"event-kinds\">\n<tr>"
	      "<th>kind</th><th>count</th><th>total time (ns)</th></tr>\n",
	      f);
	for (int k = 0; k < PC_VE_COUNT; k++) {
		fprintf(f, "<tr class=\"kind-row\" data-kind=\"%s\"><td>%s</td>", pcv_kind_label(k),
			pcv_kind_label(k));
		td_u64(f, "count", v->found.evsum[k].count);
		if (pcv_event_sized((enum pc_verify_event_kind)k))
			td_u128(f, "total_ns", v->found.evsum[k].total_ns);
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
		td_u64(f, "record", e->record);
		td_str(f, "event", pcv_event_name(e->kind));
		fputs("<td data-k=\"time\">", f);
		time_text(f, e->window_start_ns);
		fputs("</td></tr>\n", f);
	}
	fputs("</table>\n", f);
	fprintf(f, "<p class=\"note\">%" PRIu64 " events in all, %" PRIu64 " listed here.</p>\n",
		v->found.nevents, n < HTML_EVENTS_LISTED ? n : HTML_EVENTS_LISTED);
	fputs("</section>\n", f);
}

/* ---- the indicators ---- */

static void
html_indicators(const struct pc_verify *v, FILE *f)
{
	uint64_t model = pcv_model_bytes(v);

	fputs(
	    "<section id=\"indicators\" class=\"indicator\">\n<h2>Indicators (not findings)</h2>\n"
	    "<p class=\"note\">Patterns that training across pods or weights leaving would "
	    "show, and that other work shows too; none is proof, none fails the verification "
	    "(docs/report.md).</p>\n<table id=\"indicator-table\">\n<tr><th>pod</th><th>dir</th>"
	    "<th>windows at &ge; 90% of cap</th><th>longest run</th><th>period (windows)</th>"
	    "<th>autocorrelation</th><th>periodic</th><th>mean bit/s</th><th>peak bit/s</th>"
	    "</tr>\n",
	    f);
	for (uint32_t i = 0; i < v->npods; i++) {
		struct pcv_pod_ind ind;

		pcv_indicators(v, i, &ind);
		for (int d = 0; d < PC_DIR_COUNT; d++) {
			const struct pcv_dir_ind *di = &ind.dir[d];
			char r[32], mean[32];

			pcv_format_ratio(di->period.r, r, sizeof(r));
			pcv_format_bps(di->mean_bps, mean, sizeof(mean));
			fputs("<tr class=\"ind-row\" data-pod=\"", f);
			esc(f, ind.id);
			fprintf(f, "\" data-dir=\"%s\">", pc_dir_name((enum pc_dir)d));
			td_str(f, "pod", ind.id);
			td_str(f, "dir", pc_dir_name((enum pc_dir)d));
			td_u64(f, "windows_near_cap", di->hot);
			td_u64(f, "longest_near_cap_run", di->longest_run);
			if (di->period.lag > 0) {
				td_u64(f, "periodicity.lag_windows", di->period.lag);
				td_str(f, "periodicity.r", r);
			} else {
				fputs("<td data-k=\"periodicity.lag_windows\">none</td><td></td>",
				      f);
			}
			fprintf(f, "<td data-k=\"periodicity.periodic\" class=\"%s\">%s</td>",
				di->period.periodic ? "bad" : "held",
				di->period.periodic ? "yes" : "no");
			td_str(f, "mean_bps", mean);
			td_u64(f, "peak_bps", di->peak_bps);
			fputs("</tr>\n", f);
		}
	}
	fputs("</table>\n<h3>Exfiltration bound (up: pod to fabric)</h3>\n<table "
	      "id=\"exfil-table\">\n<tr><th>pod</th><th>up/down symmetry</th><th>passed up "
	      "(bytes)</th><th>time unlogged (ns)</th><th>allowance unlogged (bytes)</th>"
	      "<th>most that could have left (bytes)</th>",
	      f);
	if (model > 0) {
		fputs("<th>", f);
		size_text(f, model);
		fputs(" at mean rate (s)</th><th>at peak rate (s)</th><th>at the cap (s)</th>", f);
	}
	fputs("</tr>\n", f);
	for (uint32_t i = 0; i < v->npods; i++) {
		struct pcv_pod_ind ind;
		char s[32];

		pcv_indicators(v, i, &ind);
		pcv_format_ratio(ind.symmetry, s, sizeof(s));
		fputs("<tr class=\"exfil-row\" data-pod=\"", f);
		esc(f, ind.id);
		fputs("\">", f);
		td_str(f, "pod", ind.id);
		td_str(f, "symmetry", s);
		td_u128(f, "exfiltration.passed_up_bytes", ind.passed_up);
		td_u64(f, "exfiltration.unaccounted_ns", ind.unaccounted_ns);
		if (ind.bounded) {
			td_u128(f, "exfiltration.unlogged_allowance_bytes", ind.unlogged);
			td_u128(f, "exfiltration.bound_bytes", ind.bound);
		} else {
			fputs("<td>unbounded</td><td class=\"bad\">unbounded</td>", f);
		}
		if (model > 0) {
			const struct pcv_dir_ind *up = &ind.dir[PC_DIR_UP];
			double t[3] = { pcv_transfer_s(model, up->mean_bps),
					pcv_transfer_s(model, (double)up->peak_bps),
					pcv_transfer_s(model, (double)up->cap_bps) };
			static const char *const keys[3] = { "model_transfer_s.mean_rate",
							     "model_transfer_s.peak_rate",
							     "model_transfer_s.cap" };

			for (int k = 0; k < 3; k++) {
				pcv_format_seconds(t[k], s, sizeof(s));
				td_str(f, keys[k], t[k] < 0 ? "never" : s);
			}
		}
		fputs("</tr>\n", f);
	}
	fputs(
	    "</table>\n<p class=\"note\">The bound counts what the verified windows passed, and "
	    "for the time no window covers what the cap allows plus a full burst per stretch: "
	    "it assumes the appliance enforced the cap while it logged nothing.</p>\n</section>\n",
	    f);
}

/* ---- the plots ---- */

#define PW      960.0 /* width of the drawing */
#define PL      70.0  /* left margin, for the axis labels */
#define PR      10.0
#define H_EV    16.0 /* the events strip */
#define H_BYTES 150.0
#define H_HEAD  60.0
#define H_DROP  50.0
#define GAP     16.0

struct axis {
	uint64_t t0, t1;
};

static double
xt(const struct axis *a, uint64_t t)
{
	double span = a->t1 > a->t0 ? (double)(a->t1 - a->t0) : 1;

	return PL + (t < a->t0 ? 0 : (double)(t - a->t0)) / span * (PW - PL - PR);
}

/* The time every plot shares: the first window any pod has to the last one's end. */
static bool
time_axis(const struct pc_verify *v, struct axis *a)
{
	bool any = false;

	a->t0 = UINT64_MAX;
	a->t1 = 0;
	for (uint32_t i = 0; i < v->npods; i++)
		for (int d = 0; d < PC_DIR_COUNT; d++) {
			const struct pcv_track *t = pcv_series_track(v, i, d);

			if (t == NULL || t->n == 0)
				continue;
			any = true;
			if (t->pt[0].t0 < a->t0)
				a->t0 = t->pt[0].t0;
			if (t->pt[t->n - 1].t1 > a->t1)
				a->t1 = t->pt[t->n - 1].t1;
		}
	return any;
}

static const char *const event_colour[PC_VE_COUNT] = {
	[PC_VE_START] = "#1a7f37", [PC_VE_RESTART] = "#0a58ca", [PC_VE_STOP] = "#555",
	[PC_VE_GAP] = "#c0152f",   [PC_VE_RELOAD] = "#6f42c1",  [PC_VE_CLOCK] = "#d97706",
};

/* Each kept event as a line across the panels, from y0 to y1, named in its tooltip. */
static void
plot_events(const struct pc_verify *v, FILE *f, const struct axis *a, double y0, double y1)
{
	uint64_t n = pcv_kept(v->found.nevents);

	for (uint64_t i = 0; i < n; i++) {
		const struct pc_verify_event *e = &v->found.events[i];
		double x = xt(a, e->window_start_ns), w = 1;

		if (e->window_start_ns < a->t0 || e->window_start_ns > a->t1)
			continue;
		if (e->kind == PC_VE_GAP)
			w = xt(a, e->window_start_ns + e->windows * e->window_len_ns) - x;
		fprintf(
		    f,
		    "<rect class=\"ev ev-%s\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" "
		    "height=\"%.1f\" fill=\"%s\" fill-opacity=\"%s\"><title>record %" PRIu64 " %s ",
		    pcv_event_name(e->kind), x, y0, w < 1 ? 1 : w, y1 - y0, event_colour[e->kind],
		    e->kind == PC_VE_GAP ? "0.25" : "0.8", e->record, pcv_event_name(e->kind));
		time_text(f, e->window_start_ns);
		fputs("</title></rect>\n", f);
	}
	fprintf(f, "<text x=\"2\" y=\"%.1f\">events</text>\n", y0 + 11);
}

static void
axis_label(FILE *f, double y, uint64_t bytes)
{
	fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">", PL - 4, y + 3);
	size_text(f, bytes);
	fputs("</text>\n", f);
}

/* A step line is broken where the log is: across gaps and time down. */
static char
move_or_line(const struct pcv_track *t, uint32_t i)
{
	return i == 0 || t->pt[i].t0 != t->pt[i - 1].t1 ? 'M' : 'L';
}

/* Bytes per window, the peak of each point, against what the cap allows in a window. */
static void
plot_bytes(FILE *f, const struct pcv_track *t, const struct axis *a, double top)
{
	uint64_t most = 1;
	double base = top + H_BYTES;

	for (uint32_t i = 0; i < t->n; i++) {
		if (t->pt[i].peak_bytes > most)
			most = t->pt[i].peak_bytes;
		if (t->pt[i].cap_bytes > most)
			most = t->pt[i].cap_bytes;
	}
	most += most / 20;
#define YB(b) (base - (double)(b) / (double)most * H_BYTES)
	fprintf(f,
		"<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"none\" "
		"stroke=\"#ccc\"/>\n",
		PL, top, PW - PL - PR, H_BYTES);
	fputs("<path class=\"bytes\" fill=\"#3b82f6\" d=\"", f);
	for (uint32_t i = 0; i < t->n; i++) {
		double x0 = xt(a, t->pt[i].t0), x1 = xt(a, t->pt[i].t1);

		if (x1 - x0 < 0.5)
			x1 = x0 + 0.5;
		fprintf(f, "M%.1f %.1fV%.1fH%.1fV%.1fZ", x0, base, YB(t->pt[i].peak_bytes), x1,
			base);
	}
	fputs(
	    "\"/>\n<path class=\"cap\" fill=\"none\" stroke=\"#c0152f\" stroke-width=\"1.5\" d=\"",
	    f);
	for (uint32_t i = 0; i < t->n; i++)
		fprintf(f, "%c%.1f %.1fH%.1f", move_or_line(t, i), xt(a, t->pt[i].t0),
			YB(t->pt[i].cap_bytes), xt(a, t->pt[i].t1));
	fputs("\"/>\n<path class=\"near-cap\" fill=\"none\" stroke=\"#c0152f\" "
	      "stroke-dasharray=\"3 3\" d=\"",
	      f);
	for (uint32_t i = 0; i < t->n; i++)
		fprintf(f, "%c%.1f %.1fH%.1f", move_or_line(t, i), xt(a, t->pt[i].t0),
			YB(t->pt[i].cap_bytes / 10 * 9), xt(a, t->pt[i].t1));
	fputs("\"/>\n", f);
	axis_label(f, top, most);
	axis_label(f, base, 0);
	fprintf(f,
		"<text x=\"%.1f\" y=\"%.1f\">bytes per window (peak of each of %" PRIu32
		" points, %" PRIu64 " record%s each); red: the cap, dashed: 90%%</text>\n",
		PL + 4, top + 11, t->n, t->width, t->width == 1 ? "" : "s");
#undef YB
}

/* The envelope's headroom after each window, the least of each point, in % of what it allowed. */
static void
plot_headroom(FILE *f, const struct pcv_track *t, const struct axis *a, double top)
{
	double lo = 0, base = top + H_HEAD;

	for (uint32_t i = 0; i < t->n; i++)
		if (100 * t->pt[i].headroom < lo)
			lo = 100 * t->pt[i].headroom < -100 ? -100 : 100 * t->pt[i].headroom;
#define YH(p) (base - ((p)-lo) / (100 - lo) * H_HEAD)
	fprintf(f,
		"<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"none\" "
		"stroke=\"#ccc\"/>\n",
		PL, top, PW - PL - PR, H_HEAD);
	fprintf(f, "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#c0152f\"/>\n",
		PL, PW - PR, YH(0), YH(0));
	fputs("<path class=\"headroom\" fill=\"none\" stroke=\"#1a7f37\" stroke-width=\"1.2\" d=\"",
	      f);
	for (uint32_t i = 0; i < t->n; i++) {
		double pc = 100 * t->pt[i].headroom;

		pc = pc < -100 ? -100 : pc;
		fprintf(f, "%c%.1f %.1fH%.1f", move_or_line(t, i), xt(a, t->pt[i].t0), YH(pc),
			xt(a, t->pt[i].t1));
	}
	fputs("\"/>\n", f);
	fprintf(f,
		"<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">100%%</text>\n<text x=\"%.1f\" "
		"y=\"%.1f\" text-anchor=\"end\">0</text>\n",
		PL - 4, top + 3, PL - 4, YH(0) + 3);
	fprintf(
	    f,
	    "<text x=\"%.1f\" y=\"%.1f\">envelope headroom: what a window could still have "
	    "passed, %% of its most (least of each point; below the red line it broke)</text>\n",
	    PL + 4, top + 11);
#undef YH
}

static const char *const drop_colour[PC_POD_DROP_COUNT] = { "#c0152f", "#d97706", "#6f42c1" };

/* Frames dropped in one window, the most of each point, per reason. */
static void
plot_drops(FILE *f, const struct pcv_track *t, const struct axis *a, double top)
{
	uint64_t most = 1;
	double base = top + H_DROP;

	for (uint32_t i = 0; i < t->n; i++)
		for (int k = 0; k < PC_POD_DROP_COUNT; k++)
			if (t->pt[i].drop_frames[k] > most)
				most = t->pt[i].drop_frames[k];
	fprintf(f,
		"<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"none\" "
		"stroke=\"#ccc\"/>\n",
		PL, top, PW - PL - PR, H_DROP);
	for (int k = 0; k < PC_POD_DROP_COUNT; k++) {
		fprintf(f, "<path class=\"drops drops-%s\" fill=\"none\" stroke=\"%s\" d=\"",
			pc_pod_drop_name((enum pc_pod_drop)k), drop_colour[k % 3]);
		for (uint32_t i = 0; i < t->n; i++)
			fprintf(f, "%c%.1f %.1fH%.1f", move_or_line(t, i), xt(a, t->pt[i].t0),
				base - (double)t->pt[i].drop_frames[k] / (double)most * H_DROP,
				xt(a, t->pt[i].t1));
		fputs("\"/>\n", f);
	}
	fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%" PRIu64 "</text>\n", PL - 4,
		top + 3, most);
	fprintf(f, "<text x=\"%.1f\" y=\"%.1f\">frames dropped per window (most of each point):",
		PL + 4, top + 11);
	for (int k = 0; k < PC_POD_DROP_COUNT; k++)
		fprintf(f, " <tspan fill=\"%s\">%s</tspan>", drop_colour[k % 3],
			pc_pod_drop_name((enum pc_pod_drop)k));
	fputs("</text>\n", f);
}

static void
plot_time_labels(FILE *f, const struct axis *a, double y)
{
	for (int i = 0; i <= 4; i++) {
		uint64_t t = a->t0 + (uint64_t)((double)(a->t1 - a->t0) * i / 4);
		const char *anchor = i == 0 ? "start" : i == 4 ? "end" : "middle";

		fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\">", xt(a, t), y, anchor);
		time_text(f, t);
		fputs("</text>\n", f);
	}
}

static void
plot_one(const struct pc_verify *v, FILE *f, uint32_t pod, int d, const struct axis *a)
{
	const struct pcv_track *t = pcv_series_track(v, pod, d);
	double y_bytes = H_EV + 4, y_head = y_bytes + H_BYTES + GAP, y_drop = y_head + H_HEAD + GAP;
	double h = y_drop + H_DROP + 18;

	if (t == NULL || t->n == 0)
		return;
	fputs("<h3>", f);
	esc(f, v->pods[pod].id);
	fprintf(f,
		" %s</h3>\n<svg class=\"plot\" xmlns=\"http://www.w3.org/2000/svg\" "
		"viewBox=\"0 0 %.0f %.0f\" role=\"img\" data-pod=\"",
		pc_dir_name((enum pc_dir)d), PW, h);
	esc(f, v->pods[pod].id);
	fprintf(f, "\" data-dir=\"%s\" data-points=\"%" PRIu32 "\"><title>pod ",
		pc_dir_name((enum pc_dir)d), t->n);
	esc(f, v->pods[pod].id);
	fprintf(f, " %s: bytes per window against the cap</title>\n", pc_dir_name((enum pc_dir)d));
	plot_events(v, f, a, 0, y_drop + H_DROP);
	plot_bytes(f, t, a, y_bytes);
	plot_headroom(f, t, a, y_head);
	plot_drops(f, t, a, y_drop);
	plot_time_labels(f, a, h - 4);
	fputs("</svg>\n", f);
}

static void
html_plots(const struct pc_verify *v, FILE *f)
{
	struct axis a;

	fputs("<section id=\"plots\">\n<h2>Each pod over time</h2>\n", f);
	if (!time_axis(v, &a)) {
		fputs("<p>No window to plot.</p>\n</section>\n", f);
		return;
	}
	fputs("<p class=\"note\">One time axis for every plot. Events:", f);
	for (int k = 0; k < PC_VE_COUNT; k++)
		fprintf(f, " <span style=\"color:%s\">&#9632; %s</span>", event_colour[k],
			pcv_event_name((enum pc_verify_event_kind)k));
	fputs(". Long logs are downsampled keeping each point's worst record.</p>\n", f);
	for (uint32_t i = 0; i < v->npods; i++) {
		fputs("<section class=\"pod\" data-pod=\"", f);
		esc(f, v->pods[i].id);
		fputs("\">\n", f);
		for (int d = 0; d < PC_DIR_COUNT; d++)
			plot_one(v, f, i, d, &a);
		fputs("</section>\n", f);
	}
	fputs("</section>\n", f);
}

/* ---- the sections, in the order of the page ---- */

static void (*const html_sections[])(const struct pc_verify *, FILE *) = {
	html_verdict,          pcv_html_witnesses, pcv_html_attest,
	pcv_html_declarations, html_log,           html_pods,
	html_events,           html_indicators,    html_plots,
};

void
pc_verify_html_appliance(const struct pc_verify *v, FILE *f)
{
	fputs("<article class=\"appliance\" data-origin=\"", f);
	esc(f, v->cp_ok ? v->cp.origin : "");
	fprintf(f, "\" data-ok=\"%s\">\n", v->found.nfails == 0 ? "true" : "false");
	for (size_t i = 0; i < sizeof(html_sections) / sizeof(html_sections[0]); i++)
		html_sections[i](v, f);
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
