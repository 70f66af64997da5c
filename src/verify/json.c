/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The verifier's report as one JSON object, for programs: the same figures
 * as the text report (verify/report.c), with every list's total beside
 * what it lists, so that nothing is left out without a count. Its layout
 * places each check's part (check.h, report) among the report's own.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "shape/classify.h"
#include "base/clock.h"
#include "shape/counters.h"
#include "base/hex.h"
#include "log/record.h"
#include "verify.h"

#include "attest.h"
#include "limit.h"
#include "clock.h"
#include "link.h"
#include "print.h"
#include "report.h"
#include "verify_impl.h"

static void
json_event_obj(FILE *f, const struct pc_verify_event *e)
{
	fprintf(f, "{\"event\": \"%s\", \"record\": %" PRIu64 ", \"time\": ", pcv_event_name(e->kind),
		e->record);
	pcv_json_time(f, e->window_start_ns);
	switch (e->kind) {
	case PC_VE_RESTART:
		fprintf(f, ", \"clean\": %s, \"down_from\": ", e->clean ? "true" : "false");
		pcv_json_time(f, e->from_ns);
		fprintf(f, ", \"down_ns\": %" PRIu64 ", \"windows\": %" PRIu64,
			pc_verify_event_size(e), e->windows);
		/* fall through */
	case PC_VE_START:
		fprintf(f, ", \"window_ns\": %" PRIu64 ", \"podmap\": ", e->window_len_ns);
		pcv_json_hex(f, e->podmap_digest, PC_DIGEST_LEN);
		fprintf(f, ", \"build\": ");
		pcv_json_hex(f, e->build_id, 32);
		break;
	case PC_VE_RELOAD:
		fprintf(f, ", \"window_ns\": %" PRIu64 ", \"podmap\": ", e->window_len_ns);
		pcv_json_hex(f, e->podmap_digest, PC_DIGEST_LEN);
		break;
	case PC_VE_GAP:
		fprintf(f, ", \"windows\": %" PRIu64 ", \"window_ns\": %" PRIu64, e->windows,
			e->window_len_ns);
		break;
	case PC_VE_CLOCK:
		fprintf(f, ", \"step_ns\": %" PRId64 ", \"from\": ", e->step_ns);
		pcv_json_time(f, e->from_ns);
		fprintf(f, ", \"labels_ns\": %" PRIu64 ", \"elapsed_ns\": %" PRIu64,
			e->window_start_ns - e->from_ns, e->elapsed_ns);
		break;
	default:
		break;
	}
	fputc('}', f);
}

static void
json_event(FILE *f, const struct pc_verify *v, uint64_t i)
{
	json_event_obj(f, &v->found.events[i]);
}

/* Item k of event_kinds: the totals of kind k. */
static void
json_event_kind(FILE *f, const struct pc_verify *v, uint64_t k)
{
	const struct pc_verify_event_sum *es = &v->found.evsum[k];
	bool sized = pcv_event_sized((enum pc_verify_event_kind)k);

	fprintf(f, "{\"kind\": \"%s\", \"count\": %" PRIu64 ", \"total_ns\": ",
		pcv_event_name((enum pc_verify_event_kind)k), es->count);
	if (sized)
		pcv_print_u128(f, es->total_ns);
	else
		fputs("null", f);
	fprintf(f, ", \"longest\": ");
	if (sized && es->count > 0)
		json_event_obj(f, &es->worst[0]);
	else
		fputs("null", f);
	fputc('}', f);
}

static void
json_unlisted_worst(FILE *f, const struct pc_verify *v, uint64_t i)
{
	json_event_obj(f, pcv_unlisted_worst(&v->found, i));
}

static bool
has_unlisted_worst(const struct pc_verify *v, uint64_t i)
{
	return pcv_unlisted_worst(&v->found, i) != NULL;
}

static void
json_failure_obj(FILE *f, const struct pc_verify_failure *x)
{
	fprintf(f, "{\"check\": \"%s\", \"record\": ", pc_verify_check_name(x->check));
	if (x->record < 0) {
		fputs("null, \"type\": null, \"time\": null", f);
	} else if (x->type == 0) {
		fprintf(f, "%" PRId64 ", \"type\": null, \"time\": null", x->record);
	} else {
		fprintf(f, "%" PRId64 ", \"type\": \"%s\", \"time\": ", x->record,
			pc_record_type_name(x->type));
		pcv_json_time(f, x->window_start_ns);
	}
	fprintf(f, ", \"message\": ");
	pc_json_string(f, x->msg);
	fputc('}', f);
}

static void
json_failure(FILE *f, const struct pc_verify *v, uint64_t i)
{
	json_failure_obj(f, &v->found.fails[i]);
}

static void
json_unlisted_first(FILE *f, const struct pc_verify *v, uint64_t i)
{
	json_failure_obj(f, pcv_unlisted_first(&v->found, i));
}

static bool
has_unlisted_first(const struct pc_verify *v, uint64_t i)
{
	return pcv_unlisted_first(&v->found, i) != NULL;
}

/* The length of a list that has item i while has(v, i). */
static uint64_t
count_while(const struct pc_verify *v, bool (*has)(const struct pc_verify *, uint64_t))
{
	uint64_t n = 0;

	while (has(v, n))
		n++;
	return n;
}

/* Per kind, the time not accounted for, the first events, and the worst of those left out. */
static void
json_events(const struct pc_verify *v, FILE *f)
{
	pcv_json_counts(f, "events", v->found.nevents);
	pcv_json_list(f, "event_kinds", v, PC_VE_COUNT, json_event_kind);
	/*
	 * One notion of time not accounted for in the whole report: the
	 * policy's (gaps, downtime and the real time across clock steps), here
	 * as in "unaccounted" below; see pcv_unaccounted_parts.
	 */
	struct pcv_unaccounted u;
	pcv_unaccounted_parts(v, &u);
	fprintf(f, "  \"unaccounted_ns\": %" PRIu64 ",\n", u.total_ns);
	pcv_json_list(f, "events", v, pcv_kept(v->found.nevents), json_event);
	pcv_json_list(f, "events_worst", v, count_while(v, has_unlisted_worst),
		      json_unlisted_worst);
}

/* Per check, the first failures, and the first of each check among those left out. */
static void
json_failures(const struct pc_verify *v, FILE *f)
{
	struct pc_verify_attest_summary s;

	pcv_json_counts(f, "failures", v->found.nfails);
	fprintf(f, "  \"failure_checks\": {");
	for (int c = 0; c < PC_VC_COUNT; c++)
		/*
		 * attest is a check only under --attest, clock only where a log has
		 * readings or its map declares them, link likewise for LINK records
		 * or --max-link-down: reports without them stay as they were
		 */
		if ((c != PC_VC_ATTEST || pc_verify_attest_summary(v, &s) == 0) &&
		    (c != PC_VC_CLOCK || pcv_clock_reported(v)) &&
		    (c != PC_VC_LINK || pcv_link_reported(v)))
			fprintf(f, "%s\"%s\": %" PRIu64, c ? ", " : "",
				pc_verify_check_name((enum pc_verify_check)c),
				v->found.failsum[c].count);
	fprintf(f, "},\n");
	pcv_json_list(f, "failures", v, pcv_kept(v->found.nfails), json_failure);
	pcv_json_list(f, "failures_first", v, count_while(v, has_unlisted_first),
		      json_unlisted_first);
}

static const char *const warning_names[PC_VW_COUNT] = {
	[PC_VW_NO_PODMAP] = "no_pod_map",
	[PC_VW_ANY_BUILD] = "any_build",
	[PC_VW_NO_TRUSTED] = "no_trusted",
};

/* What the run could not check: [{"warning": name, "text": sentence}, ...]. */
static void
json_warnings(const struct pc_verify *v, FILE *f)
{
	unsigned w = pc_verify_warnings(v);
	bool any = false;

	fprintf(f, "  \"warnings\": [");
	for (int i = 0; i < PC_VW_COUNT; i++) {
		if (!(w & (1u << i)))
			continue;
		fprintf(f, "%s{\"warning\": \"%s\", \"text\": ", any ? ",\n    " : "\n    ",
			warning_names[i]);
		pc_json_string(f, pc_verify_warning_text((enum pc_verify_warning)i));
		fputc('}', f);
		any = true;
	}
	fprintf(f, "%s],\n", any ? "\n  " : "");
}

static void
json_head(const struct pc_verify *v, FILE *f)
{
	char key[PC_KEY_NAME_LEN + 16];

	fprintf(f, "{\n  \"origin\": ");
	if (v->cp_ok)
		pc_json_string(f, v->cp.origin);
	else
		fputs("null", f);
	snprintf(key, sizeof(key), "%s+%08" PRIx32, v->key.name, v->key.id);
	fprintf(f, ",\n  \"key\": ");
	pc_json_string(f, key);
	if (v->cp_ok) {
		fprintf(f, ",\n  \"tree_size\": %" PRIu64 ",\n  \"root\": ", v->cp.size);
		pcv_json_hex(f, v->cp.root, PC_HASH_LEN);
	} else {
		fprintf(f, ",\n  \"tree_size\": null,\n  \"root\": null");
	}
	fprintf(f, ",\n  \"records\": %" PRIu64 ",\n  \"windows\": %" PRIu64 ",\n", v->nrec,
		v->nwindows);
	fprintf(f, "  \"resumed_from\": %" PRIu64 ",\n", v->resumed ? v->trusted.size : 0);
}

static void
json_tail(const struct pc_verify *v, FILE *f)
{
	char line[PC_VERIFY_MSG_LEN + 256];

	pcv_result_line(v, line, sizeof(line));
	fprintf(f, "  \"ok\": %s,\n  \"result\": ", v->found.nfails == 0 ? "true" : "false");
	pc_json_string(f, line);
	fprintf(f, "\n}\n");
}

/* The JSON report, part by part: a check the layout does not name reports before "ok". */
static const struct pcv_part json_layout[] = {
	PCV_OWN(json_head),      /* origin ... resumed_from */
	PCV_PART(PCV_TOTALS),    /* pods, links */
	PCV_OWN(json_events),    /* events_total ... events_worst */
	PCV_PART(PCV_BUILD),     /* builds */
	PCV_PART(PCV_PODMAP),    /* pod_maps */
	PCV_PART(PCV_LIMIT),     /* unaccounted, merged_windows_* */
	PCV_PART(PCV_FRESHNESS), /* freshness */
	PCV_OWN(json_failures),  /* failures_total ... failures_first */
	PCV_OWN(json_warnings),  /* warnings */
	PCV_PART(PCV_SERIES),    /* indicators */
	PCV_PART(PCV_WITNESS),   /* witnesses */
	PCV_PART(PCV_ATTEST),    /* attestation */
	PCV_PART(PCV_DECLARE),   /* declarations_total, declarations */
	PCV_PART(PCV_OTHERS),    /* a check named nowhere above */
	PCV_OWN(json_tail),      /* ok, result */
};

void
pc_verify_print_json(const struct pc_verify *v, FILE *f)
{
	pcv_report_parts(v, f, PCV_JSON, json_layout, PCV_PARTS(json_layout));
}
