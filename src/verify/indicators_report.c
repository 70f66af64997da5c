/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The indicators (verify/indicators.c) as the text, JSON and HTML reports
 * state them, in the same number forms so that the page's figures read
 * exactly as the JSON's.
 */
#include <inttypes.h>
#include <string.h>

#include "shape/classify.h"
#include "base/clock.h"
#include "base/units.h"
#include "verify.h"

#include "print.h"
#include "series.h"
#include "verify_impl.h"

void
pcv_format_ratio(double x, char *buf, size_t len)
{
	snprintf(buf, len, "%.3f", x);
}

void
pcv_format_seconds(double s, char *buf, size_t len)
{
	if (s < 0)
		snprintf(buf, len, "null");
	else
		snprintf(buf, len, "%.1f", s);
}

void
pcv_format_bps(double bps, char *buf, size_t len)
{
	snprintf(buf, len, "%.0f", bps);
}

static void
json_dir(FILE *f, const struct pcv_dir_ind *d)
{
	char cv[32], r[32], mean[32];
	const struct pc_periodicity *p = &d->period;

	pcv_format_ratio(p->cv, cv, sizeof(cv));
	pcv_format_ratio(p->r, r, sizeof(r));
	pcv_format_bps(d->mean_bps, mean, sizeof(mean));
	fprintf(f,
		"{\"windows\": %" PRIu64 ", \"windows_near_cap\": %" PRIu64
		", \"longest_near_cap_run\": %" PRIu64 ", \"run_from\": ",
		d->records, d->hot, d->longest_run);
	pcv_json_time_or_null(f, d->run_start_ns, d->longest_run > 0);
	fprintf(f, ", \"run_to\": ");
	pcv_json_time_or_null(f, d->run_end_ns, d->longest_run > 0);
	fprintf(f,
		", \"cap_bps\": %" PRIu64 ", \"mean_bps\": %s, \"peak_bps\": %" PRIu64
		", \"periodicity\": {\"windows\": %zu, \"cv\": %s, \"lag_windows\": ",
		d->cap_bps, mean, d->peak_bps, p->n, cv);
	if (p->lag > 0)
		fprintf(f, "%zu, \"period_ns\": %" PRIu64 ", \"r\": %s", p->lag,
			(uint64_t)p->lag * d->window_ns, r);
	else
		fputs("null, \"period_ns\": null, \"r\": null", f);
	fprintf(f, ", \"periodic\": %s}}", p->periodic ? "true" : "false");
}

static void
json_pod(FILE *f, const struct pc_verify *v, uint32_t i)
{
	struct pcv_pod_ind ind;
	char sym[32], t[32];
	uint64_t model = pcv_model_bytes(v);
	const struct pcv_dir_ind *up = &ind.dir[PC_DIR_UP];

	pcv_indicators(v, i, &ind);
	pcv_format_ratio(ind.symmetry, sym, sizeof(sym));
	fprintf(f, "{\"pod\": \"%s\", \"up\": ", ind.id); /* ids are [A-Za-z0-9._-] */
	json_dir(f, up);
	fprintf(f, ", \"down\": ");
	json_dir(f, &ind.dir[PC_DIR_DOWN]);
	fprintf(f, ", \"symmetry\": %s, \"exfiltration\": {\"passed_up_bytes\": ", sym);
	pcv_print_u128(f, ind.passed_up);
	fprintf(f,
		", \"unaccounted_ns\": %" PRIu64 ", \"unlogged_stretches\": %" PRIu64
		", \"unlogged_allowance_bytes\": ",
		ind.unaccounted_ns, ind.stretches);
	if (ind.bounded)
		pcv_print_u128(f, ind.unlogged);
	else
		fputs("null", f);
	fprintf(f, ", \"bound_bytes\": ");
	if (ind.bounded)
		pcv_print_u128(f, ind.bound);
	else
		fputs("null", f);
	fprintf(f, "}, \"model_transfer_s\": ");
	if (model == 0) {
		fputs("null}", f);
		return;
	}
	pcv_format_seconds(pcv_transfer_s(model, up->mean_bps), t, sizeof(t));
	fprintf(f, "{\"mean_rate\": %s", t);
	pcv_format_seconds(pcv_transfer_s(model, (double)up->peak_bps), t, sizeof(t));
	fprintf(f, ", \"peak_rate\": %s", t);
	pcv_format_seconds(pcv_transfer_s(model, (double)up->cap_bps), t, sizeof(t));
	fprintf(f, ", \"cap\": %s}}", t);
}

void
pcv_json_indicators(const struct pc_verify *v, FILE *f)
{
	fprintf(f, "  \"indicators\": {\"model_size_bytes\": ");
	if (pcv_model_bytes(v) > 0)
		fprintf(f, "%" PRIu64, pcv_model_bytes(v));
	else
		fputs("null", f);
	fprintf(f, ", \"pods_total\": %" PRIu32 ", \"pods\": [", v->npods);
	for (uint32_t i = 0; i < v->npods; i++) {
		fputs(i == 0 ? "\n    " : ",\n    ", f);
		json_pod(f, v, i);
	}
	fprintf(f, "%s]},\n", v->npods == 0 ? "" : "\n  ");
}

static void
text_pod(const struct pc_verify *v, uint32_t i, FILE *f)
{
	struct pcv_pod_ind ind;
	char sym[32], bound[U128_LEN], passed[U128_LEN], t[3][32], r[32];
	uint64_t model = pcv_model_bytes(v);

	pcv_indicators(v, i, &ind);
	pcv_format_ratio(ind.symmetry, sym, sizeof(sym));
	for (int d = 0; d < PC_DIR_COUNT; d++) {
		const struct pcv_dir_ind *di = &ind.dir[d];
		const struct pc_periodicity *p = &di->period;

		pcv_format_ratio(p->r, r, sizeof(r));
		fprintf(f,
			"  %s %s: %" PRIu64 " of %" PRIu64 " windows at >= 90%% of the cap, "
			"longest run %" PRIu64 "; ",
			ind.id, pc_dir_name((enum pc_dir)d), di->hot, di->records, di->longest_run);
		if (p->lag > 0)
			fprintf(f, "repeats every %zu windows (r %s)%s\n", p->lag, r,
				p->periodic ? ": PERIODIC" : "");
		else
			fprintf(f, "no repeating period\n");
	}
	pcv_format_u128(ind.passed_up, passed, sizeof(passed));
	if (ind.bounded)
		pcv_format_u128(ind.bound, bound, sizeof(bound));
	else
		snprintf(bound, sizeof(bound), "unbounded");
	fprintf(f,
		"  %s: up/down symmetry %s; %s bytes left in its windows, at most %s bytes "
		"over the period\n",
		ind.id, sym, passed, bound);
	if (model == 0)
		return;
	pcv_format_seconds(pcv_transfer_s(model, ind.dir[PC_DIR_UP].mean_bps), t[0], sizeof(t[0]));
	pcv_format_seconds(pcv_transfer_s(model, (double)ind.dir[PC_DIR_UP].peak_bps), t[1],
			   sizeof(t[1]));
	pcv_format_seconds(pcv_transfer_s(model, (double)ind.dir[PC_DIR_UP].cap_bps), t[2],
			   sizeof(t[2]));
	fprintf(f,
		"  %s: %" PRIu64 " bytes take %s s at its mean rate up, %s s at its peak, "
		"%s s at the cap\n",
		ind.id, model, t[0], t[1], t[2]);
}

void
pcv_text_indicators(const struct pc_verify *v, FILE *f)
{
	fprintf(f, "\nindicators (not findings; docs/report.md):\n");
	for (uint32_t i = 0; i < v->npods; i++)
		text_pod(v, i, f);
}

/* ---- the HTML page ---- */

/* The mean rate rounded for people, and as the JSON has it ("1234.5") in bit/s for its title. */
static void
mean_rate(double bps, char human[HUMAN_LEN], char exact[48])
{
	char j[32];

	pcv_format_bps(bps, j, sizeof(j));
	snprintf(exact, 48, "%s bit/s", j);
	/* a log's figures can make any rate: beyond 10^36 bit/s is only a number */
	pcv_human_rate(bps < 0 ? 0 : bps > 1e36 ? (u128)1e36 : (u128)(bps + 0.5), human, HUMAN_LEN);
}

/* A model's transfer time: "9 min 20 s", the JSON's seconds in the title; "never" at rate 0. */
static void
td_transfer(FILE *f, const char *key, double s)
{
	char human[HUMAN_LEN], exact[48], j[40];

	if (s < 0) {
		pcv_td_str(f, key, "never");
		return;
	}
	pcv_format_seconds(s, j, sizeof(j));
	snprintf(exact, sizeof(exact), "%s s", j);
	/* far beyond 2^64 ns is beyond any reading anyway */
	pcv_human_duration(s >= 1e19 ? (u128)1e19 * NS : (u128)(s * 1e9 + 0.5), human, HUMAN_LEN);
	pcv_td_human(f, key, human, exact);
}

void
pcv_html_indicators(const struct pc_verify *v, FILE *f)
{
	uint64_t model = pcv_model_bytes(v);

	fputs(
	    "<section id=\"indicators\" class=\"indicator\">\n<h2>Indicators (not findings)</h2>\n"
	    "<p class=\"note\">Patterns that training across pods or weights leaving would "
	    "show, and that other work shows too; none is proof, none fails the verification "
	    "(docs/report.md).</p>\n<table id=\"indicator-table\">\n<tr><th>pod</th><th>dir</th>"
	    "<th>windows at &ge; 90% of cap</th><th>longest run</th><th>period (windows)</th>"
	    "<th>autocorrelation</th><th>periodic</th><th>mean rate</th><th>peak rate</th>"
	    "</tr>\n",
	    f);
	for (uint32_t i = 0; i < v->npods; i++) {
		struct pcv_pod_ind ind;

		pcv_indicators(v, i, &ind);
		for (int d = 0; d < PC_DIR_COUNT; d++) {
			const struct pcv_dir_ind *di = &ind.dir[d];
			char r[32], human[HUMAN_LEN], exact[48];

			pcv_format_ratio(di->period.r, r, sizeof(r));
			mean_rate(di->mean_bps, human, exact);
			fputs("<tr class=\"ind-row\" data-pod=\"", f);
			pc_html_escape(f, ind.id);
			fprintf(f, "\" data-dir=\"%s\">", pc_dir_name((enum pc_dir)d));
			pcv_td_str(f, "pod", ind.id);
			pcv_td_str(f, "dir", pc_dir_name((enum pc_dir)d));
			pcv_td_u64(f, "windows_near_cap", di->hot);
			pcv_td_u64(f, "longest_near_cap_run", di->longest_run);
			if (di->period.lag > 0) {
				pcv_td_u64(f, "periodicity.lag_windows", di->period.lag);
				pcv_td_str(f, "periodicity.r", r);
			} else {
				fputs("<td data-k=\"periodicity.lag_windows\">none</td><td></td>",
				      f);
			}
			fprintf(f, "<td data-k=\"periodicity.periodic\" class=\"%s\">%s</td>",
				di->period.periodic ? "bad" : "held",
				di->period.periodic ? "yes" : "no");
			pcv_td_human(f, "mean_bps", human, exact);
			pcv_td_rate(f, "peak_bps", di->peak_bps);
			fputs("</tr>\n", f);
		}
	}
	fputs("</table>\n<h3>Exfiltration bound (up: pod to fabric)</h3>\n<table "
	      "id=\"exfil-table\">\n<tr><th>pod</th><th>up/down symmetry</th><th>passed up</th>"
	      "<th>time unlogged</th><th>allowance unlogged</th>"
	      "<th>most that could have left</th>",
	      f);
	if (model > 0) {
		fputs("<th>", f);
		pcv_html_size(f, model);
		fputs(" at mean rate</th><th>at peak rate</th><th>at the cap</th>", f);
	}
	fputs("</tr>\n", f);
	for (uint32_t i = 0; i < v->npods; i++) {
		struct pcv_pod_ind ind;
		char s[32];

		pcv_indicators(v, i, &ind);
		pcv_format_ratio(ind.symmetry, s, sizeof(s));
		fputs("<tr class=\"exfil-row\" data-pod=\"", f);
		pc_html_escape(f, ind.id);
		fputs("\">", f);
		pcv_td_str(f, "pod", ind.id);
		pcv_td_str(f, "symmetry", s);
		pcv_td_bytes(f, "exfiltration.passed_up_bytes", ind.passed_up);
		pcv_td_duration(f, "exfiltration.unaccounted_ns", ind.unaccounted_ns);
		if (ind.bounded) {
			pcv_td_bytes(f, "exfiltration.unlogged_allowance_bytes", ind.unlogged);
			pcv_td_bytes(f, "exfiltration.bound_bytes", ind.bound);
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

			for (int k = 0; k < 3; k++)
				td_transfer(f, keys[k], t[k]);
		}
		fputs("</tr>\n", f);
	}
	fputs(
	    "</table>\n<p class=\"note\">The bound counts what the verified windows passed, and "
	    "for the time no window covers what the cap allows plus a full burst per stretch: "
	    "it assumes the appliance enforced the cap while it logged nothing.</p>\n</section>\n",
	    f);
}
