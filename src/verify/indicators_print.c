/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The indicators (verify/indicators.c) as the text and JSON reports state
 * them, with the number forms the HTML report shares so that its figures
 * read exactly as the JSON's.
 */
#include <inttypes.h>
#include <string.h>

#include "shape/classify.h"
#include "base/clock.h"
#include "base/units.h"
#include "verify.h"

#include "verify_impl.h"
#include "series.h"

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
json_time_or_null(FILE *f, bool have, uint64_t ns)
{
	char t[PC_UTC_LEN];

	if (!have) {
		fputs("null", f);
		return;
	}
	pc_utc_format(ns, t, sizeof(t));
	fprintf(f, "\"%s\"", t);
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
	json_time_or_null(f, d->longest_run > 0, d->run_start_ns);
	fprintf(f, ", \"run_to\": ");
	json_time_or_null(f, d->longest_run > 0, d->run_end_ns);
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
