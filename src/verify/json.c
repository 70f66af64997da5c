/*
 * The verifier's report as one JSON object, for programs: the same figures
 * as the text report (verify/report.c), with every list's total beside
 * what it lists, so that nothing is left out without a count.
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

#include "verify_impl.h"
#include "series.h"

/* A JSON string: the short escapes where JSON has them, \u00XX for other controls. */
static void
json_str(FILE *f, const char *s)
{
	static const char plain[] = "\"\\\n\t\r", escaped[] = "\"\\ntr";

	fputc('"', f);
	for (const unsigned char *p = (const unsigned char *)s; *p != '\0'; p++) {
		const char *k = strchr(plain, *p);

		if (k != NULL)
			fprintf(f, "\\%c", escaped[k - plain]);
		else if (*p < 0x20 || *p == 0x7f)
			fprintf(f, "\\u%04x", *p);
		else
			fputc(*p, f);
	}
	fputc('"', f);
}

void
pc_json_string(FILE *f, const char *s)
{
	json_str(f, s);
}

static void
json_time(FILE *f, uint64_t ns)
{
	char t[PC_UTC_LEN];

	pc_utc_format(ns, t, sizeof(t));
	json_str(f, t);
}

static void
json_hex(FILE *f, const uint8_t *b, size_t n)
{
	char h[2 * 64 + 1];

	pc_hex(b, n, h);
	json_str(f, h);
}

/* A count of drops: {"frames": F, "bytes": B}. */
static void
json_drops(FILE *f, u128 frames, u128 bytes)
{
	fprintf(f, "{\"frames\": ");
	pcv_print_u128(f, frames);
	fprintf(f, ", \"bytes\": ");
	pcv_print_u128(f, bytes);
	fputc('}', f);
}

/* Item i of the pods list: pod i / 2, direction i % 2. */
static void
json_pod(FILE *f, const struct pc_verify *v, uint64_t i)
{
	const struct podsum *ps = &v->pods[i / PC_DIR_COUNT];
	int d = (int)(i % PC_DIR_COUNT);
	const struct pc_verify_totals *t = &ps->t[d];

	fprintf(f, "{\"pod\": ");
	json_str(f, ps->id);
	fprintf(f, ", \"dir\": \"%s\", \"windows\": %" PRIu64 ", \"bytes\": ",
		pc_dir_name((enum pc_dir)d), t->windows);
	pcv_print_u128(f, t->bytes);
	fprintf(f, ", \"frames\": ");
	pcv_print_u128(f, t->frames);
	fprintf(f, ", \"peak_bytes\": %" PRIu64 ", \"peak_window\": ", t->peak_bytes);
	if (t->windows > 0)
		json_time(f, t->peak_window_start_ns);
	else
		fputs("null", f);
	fprintf(f, ", \"peak_permille\": ");
	if (t->windows > 0 && t->peak_permille != UINT64_MAX)
		fprintf(f, "%" PRIu64, t->peak_permille);
	else
		fputs("null", f);
	fprintf(f, ", \"windows_at_cap\": %" PRIu64 ", \"drops\": {", t->at_cap);
	for (int k = 0; k < PC_POD_DROP_COUNT; k++) {
		fprintf(f, "%s\"%s\": ", k ? ", " : "", pc_pod_drop_name((enum pc_pod_drop)k));
		json_drops(f, t->drop_frames[k], t->drop_bytes[k]);
	}
	fprintf(f, "}, \"promises\": [");
	if (ps->promises & PROMISE_ENVELOPE)
		fprintf(f, "\"envelope\"%s", ps->promises & PROMISE_WINDOW ? ", " : "");
	if (ps->promises & PROMISE_WINDOW)
		fprintf(f, "\"window\"");
	fprintf(f, "]}");
}

static void
json_link(FILE *f, const struct pc_verify *v, uint64_t i)
{
	const struct linksum *ls = &v->links[i / PC_DIR_COUNT];
	int d = (int)(i % PC_DIR_COUNT);

	fprintf(f, "{\"link\": ");
	json_str(f, ls->name);
	fprintf(f, ", \"dir\": \"%s\"", pc_dir_name((enum pc_dir)d));
	for (int k = 0; k < PC_LINK_DROP_COUNT; k++) {
		fprintf(f, ", \"%s\": ", pc_link_drop_name((enum pc_link_drop)k));
		json_drops(f, ls->frames[d][k], ls->bytes[d][k]);
	}
	fputc('}', f);
}

static void
json_event_obj(FILE *f, const struct pc_verify_event *e)
{
	fprintf(f, "{\"event\": \"%s\", \"record\": %" PRIu64 ", \"time\": ", pcv_event_name(e->kind),
		e->record);
	json_time(f, e->window_start_ns);
	switch (e->kind) {
	case PC_VE_RESTART:
		fprintf(f, ", \"clean\": %s, \"down_from\": ", e->clean ? "true" : "false");
		json_time(f, e->from_ns);
		fprintf(f, ", \"down_ns\": %" PRIu64 ", \"windows\": %" PRIu64,
			pc_verify_event_size(e), e->windows);
		/* fall through */
	case PC_VE_START:
		fprintf(f, ", \"window_ns\": %" PRIu64 ", \"podmap\": ", e->window_len_ns);
		json_hex(f, e->podmap_digest, PC_DIGEST_LEN);
		fprintf(f, ", \"build\": ");
		json_hex(f, e->build_id, 32);
		break;
	case PC_VE_RELOAD:
		fprintf(f, ", \"window_ns\": %" PRIu64 ", \"podmap\": ", e->window_len_ns);
		json_hex(f, e->podmap_digest, PC_DIGEST_LEN);
		break;
	case PC_VE_GAP:
		fprintf(f, ", \"windows\": %" PRIu64 ", \"window_ns\": %" PRIu64, e->windows,
			e->window_len_ns);
		break;
	case PC_VE_CLOCK:
		fprintf(f, ", \"step_ns\": %" PRId64 ", \"from\": ", e->step_ns);
		json_time(f, e->from_ns);
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
		pcv_kind_label((int)k), es->count);
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
		json_time(f, x->window_start_ns);
	}
	fprintf(f, ", \"message\": ");
	json_str(f, x->msg);
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

/* "name": [item 0, ..., item n - 1], each item on a line of its own. */
static void
json_list(FILE *f, const char *name, const struct pc_verify *v, uint64_t n,
	  void (*item)(FILE *, const struct pc_verify *, uint64_t))
{
	fprintf(f, "  \"%s\": [", name);
	for (uint64_t i = 0; i < n; i++) {
		fputs(i == 0 ? "\n    " : ",\n    ", f);
		item(f, v, i);
	}
	fprintf(f, "%s],\n", n == 0 ? "" : "\n  ");
}

/* "WHAT_total", "WHAT_listed", "WHAT_truncated": whether the list that follows has them all. */
static void
json_counts(FILE *f, const char *what, uint64_t total)
{
	fprintf(f, "  \"%s_total\": %" PRIu64 ",\n  \"%s_listed\": %" PRIu64 ",\n"
		"  \"%s_truncated\": %s,\n", what, total, what, pcv_kept(total), what,
		total > pcv_kept(total) ? "true" : "false");
}

/* Per kind, the time not accounted for, the first events, and the worst of those left out. */
static void
json_events(FILE *f, const struct pc_verify *v)
{
	json_counts(f, "events", v->found.nevents);
	json_list(f, "event_kinds", v, PC_VE_COUNT, json_event_kind);
	/*
	 * One notion of time not accounted for in the whole report: the
	 * policy's (gaps, downtime and the real time across clock steps), here
	 * as in "unaccounted" below; see pcv_unaccounted_parts.
	 */
	struct pcv_unaccounted u;
	pcv_unaccounted_parts(v, &u);
	fprintf(f, "  \"unaccounted_ns\": %" PRIu64 ",\n", u.total_ns);
	json_list(f, "events", v, pcv_kept(v->found.nevents), json_event);
	json_list(f, "events_worst", v, count_while(v, has_unlisted_worst), json_unlisted_worst);
}

/* Per check, the first failures, and the first of each check among those left out. */
static void
json_failures(FILE *f, const struct pc_verify *v)
{
	json_counts(f, "failures", v->found.nfails);
	fprintf(f, "  \"failure_checks\": {");
	for (int c = 0; c < PC_VC_COUNT; c++)
		/* attest is a check only under --attest: reports without it stay as they were */
		if (c != PC_VC_ATTEST || v->attest != NULL)
			fprintf(f, "%s\"%s\": %" PRIu64, c ? ", " : "", pcv_check_label(c),
				v->found.failsum[c].count);
	fprintf(f, "},\n");
	json_list(f, "failures", v, pcv_kept(v->found.nfails), json_failure);
	json_list(f, "failures_first", v, count_while(v, has_unlisted_first), json_unlisted_first);
}

/* The windows under a build or a map, and the record that first put it in force. */
static void
json_use_fields(FILE *f, const struct pc_verify_use *u)
{
	fprintf(f, ", \"first_record\": %" PRIu64 ", \"first_window\": ", u->first_record);
	if (u->windows > 0)
		json_time(f, u->first_window_ns);
	else
		fputs("null", f);
	fprintf(f, ", \"last_end\": ");
	if (u->windows > 0)
		json_time(f, u->last_end_ns);
	else
		fputs("null", f);
	fprintf(f, ", \"windows\": %" PRIu64, u->windows);
}

static void
json_build(FILE *f, const struct pc_verify *v, uint64_t i)
{
	const struct pc_verify_use *u = pc_verify_build_at(v, i);

	fprintf(f, "{\"build\": ");
	json_hex(f, u->id, 32);
	json_use_fields(f, u);
	fprintf(f, ", \"pinned\": %s}", pcv_build_pinned(v, u->id) ? "true" : "false");
}

static void
json_map_used(FILE *f, const struct pc_verify *v, uint64_t i)
{
	const struct pc_verify_use *u = pc_verify_map_used_at(v, i);

	fprintf(f, "{\"digest\": ");
	json_hex(f, u->id, PC_DIGEST_LEN);
	fprintf(f, ", \"path\": ");
	if (pcv_map_path(v, u) != NULL)
		json_str(f, pcv_map_path(v, u));
	else
		fputs("null", f);
	json_use_fields(f, u);
	fputc('}', f);
}

/* Every build id and pod map in force, and the policy's figures. */
static void
json_policy(FILE *f, const struct pc_verify *v)
{
	struct pcv_unaccounted u;
	uint64_t most, now, newest, age;
	int64_t record;

	json_counts(f, "builds", pc_verify_nbuilds(v));
	json_list(f, "builds", v, pcv_kept(pc_verify_nbuilds(v)), json_build);
	json_counts(f, "pod_maps", pc_verify_nmaps_used(v));
	json_list(f, "pod_maps", v, pcv_kept(pc_verify_nmaps_used(v)), json_map_used);

	pcv_unaccounted_parts(v, &u);
	fprintf(f, "  \"unaccounted\": {\"total_ns\": %" PRIu64 ", \"saturated\": %s, "
		"\"gaps_ns\": ", u.total_ns, u.saturated ? "true" : "false");
	pcv_print_u128(f, u.gaps_ns);
	fprintf(f, ", \"down_ns\": ");
	pcv_print_u128(f, u.down_ns);
	fprintf(f, ", \"clock_ns\": ");
	if (u.clock_known)
		fprintf(f, "%" PRIu64, u.clock_ns);
	else
		fputs("null", f);
	fprintf(f, ", \"longest_ns\": %" PRIu64 ", \"longest_record\": ", u.longest_ns);
	if (u.longest_record >= 0)
		fprintf(f, "%" PRId64, u.longest_record);
	else
		fputs("null", f);
	fprintf(f, "},\n");

	pc_verify_merged(v, &most, &record);
	fprintf(f, "  \"merged_windows_max\": %" PRIu64 ",\n  \"merged_windows_record\": ", most);
	if (record >= 0)
		fprintf(f, "%" PRId64, record);
	else
		fputs("null", f);
	fprintf(f, ",\n");

	/* the age only from a now the caller gave: the report reads no clock */
	pc_verify_freshness(v, &now, &newest, &age);
	fprintf(f, "  \"freshness\": {\"now\": ");
	if (pcv_age_stated(v))
		json_time(f, now);
	else
		fputs("null", f);
	fprintf(f, ", \"newest_end\": ");
	if (newest != 0)
		json_time(f, newest);
	else
		fputs("null", f);
	fprintf(f, ", \"age_ns\": ");
	if (pcv_age_stated(v) && newest != 0)
		fprintf(f, "%" PRIu64, age);
	else
		fputs("null", f);
	fprintf(f, "},\n");
}

static const char *const warning_names[PC_VW_COUNT] = {
	[PC_VW_NO_PODMAP] = "no_pod_map",
	[PC_VW_ANY_BUILD] = "any_build",
	[PC_VW_NO_TRUSTED] = "no_trusted",
};

/* What the run could not check: [{"warning": name, "text": sentence}, ...]. */
static void
json_warnings(FILE *f, const struct pc_verify *v)
{
	unsigned w = pc_verify_warnings(v);
	bool any = false;

	fprintf(f, "  \"warnings\": [");
	for (int i = 0; i < PC_VW_COUNT; i++) {
		if (!(w & (1u << i)))
			continue;
		fprintf(f, "%s{\"warning\": \"%s\", \"text\": ", any ? ",\n    " : "\n    ",
			warning_names[i]);
		json_str(f, pc_verify_warning_text((enum pc_verify_warning)i));
		fputc('}', f);
		any = true;
	}
	fprintf(f, "%s],\n", any ? "\n  " : "");
}

void
pc_verify_print_json(const struct pc_verify *v, FILE *f)
{
	char line[PC_VERIFY_MSG_LEN + 256], key[PC_KEY_NAME_LEN + 16];

	fprintf(f, "{\n  \"origin\": ");
	if (v->cp_ok)
		json_str(f, v->cp.origin);
	else
		fputs("null", f);
	snprintf(key, sizeof(key), "%s+%08" PRIx32, v->key.name, v->key.id);
	fprintf(f, ",\n  \"key\": ");
	json_str(f, key);
	if (v->cp_ok) {
		fprintf(f, ",\n  \"tree_size\": %" PRIu64 ",\n  \"root\": ", v->cp.size);
		json_hex(f, v->cp.root, PC_HASH_LEN);
	} else {
		fprintf(f, ",\n  \"tree_size\": null,\n  \"root\": null");
	}
	fprintf(f, ",\n  \"records\": %" PRIu64 ",\n  \"windows\": %" PRIu64 ",\n", v->nrec,
		v->nwindows);
	fprintf(f, "  \"resumed_from\": %" PRIu64 ",\n", v->resumed ? v->trusted.size : 0);
	json_list(f, "pods", v, (uint64_t)v->npods * PC_DIR_COUNT, json_pod);
	json_list(f, "links", v, (uint64_t)v->nlinks * PC_DIR_COUNT, json_link);
	json_events(f, v);
	json_policy(f, v);
	json_failures(f, v);
	json_warnings(f, v);
	if (v->series != NULL)
		pcv_json_indicators(v, f);
	pcv_json_sections(v, f);
	pcv_result_line(v, line, sizeof(line));
	fprintf(f, "  \"ok\": %s,\n  \"result\": ", v->found.nfails == 0 ? "true" : "false");
	json_str(f, line);
	fprintf(f, "\n}\n");
}

