/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The table of the verifier's checks and the loops over it
 * (verify/check.h): every hook of every row, in table order. The order is
 * the checks' contract with each other: a check sees a record after those
 * above it, and its findings come after theirs.
 */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "verify_impl.h"

const struct pcv_check *const pcv_checks[PCV_CHECK_COUNT] = {
	[PCV_TREE] = &pcv_tree_check,           /* checks 2, 3, 8 */
	[PCV_TIME] = &pcv_time_check,           /* check 9 */
	[PCV_SEQUENCE] = &pcv_sequence_check,   /* check 5: its rules let records through */
	[PCV_BUILD] = &pcv_build_check,         /* check 12 */
	[PCV_COUNTERS] = &pcv_counters_check,   /* check 13 */
	[PCV_LIMIT] = &pcv_limit_check,         /* checks 10, 11 */
	[PCV_TOTALS] = &pcv_totals_check,       /* the report's totals */
	[PCV_ENVELOPE] = &pcv_envelope_check,   /* check 7 */
	[PCV_WINDOW] = &pcv_window_check,       /* check 14 */
	[PCV_SERIES] = &pcv_series_check,       /* the plots and indicators: after the envelope */
	[PCV_PODMAP] = &pcv_podmap_check,       /* check 6 */
	[PCV_DECLARE] = &pcv_declare_check,     /* check 6a */
	[PCV_ATTEST] = &pcv_attest_check,       /* --attest */
	[PCV_FRESHNESS] = &pcv_freshness_check, /* check 11 */
	[PCV_WITNESS] = &pcv_witness_check,     /* --witness, for the reports */
	[PCV_CLOCK] = &pcv_clock_check,         /* check 15 */
	[PCV_LINK] = &pcv_link_check,           /* check 16 */
};

int
pcv_checks_new(struct pc_verify *v)
{
	for (int id = 0; id < PCV_CHECK_COUNT; id++) {
		const struct pcv_check *c = pcv_checks[id];

		v->state[id] = calloc(1, c->size ? c->size : 1);
		if (v->state[id] == NULL || (c->init != NULL && c->init(v, v->state[id]) < 0))
			return -1;
	}
	return 0;
}

void
pcv_checks_free(struct pc_verify *v)
{
	for (int id = 0; id < PCV_CHECK_COUNT; id++) {
		if (v->state[id] != NULL && pcv_checks[id]->free != NULL)
			pcv_checks[id]->free(v->state[id]);
		free(v->state[id]);
		free(v->pod_state[id]);
	}
}

void
pcv_checks_begin(struct pc_verify *v)
{
	for (int id = 0; id < PCV_CHECK_COUNT; id++)
		if (pcv_checks[id]->begin != NULL)
			pcv_checks[id]->begin(v, v->state[id]);
}

void
pcv_checks_bytes(struct pc_verify *v, uint64_t index, const uint8_t *rec, size_t len,
		 const uint8_t *stored_leaf)
{
	for (int id = 0; id < PCV_CHECK_COUNT; id++)
		if (pcv_checks[id]->bytes != NULL)
			pcv_checks[id]->bytes(v, v->state[id], index, rec, len, stored_leaf);
}

void
pcv_checks_undecodable(struct pc_verify *v, uint64_t index)
{
	for (int id = 0; id < PCV_CHECK_COUNT; id++)
		if (pcv_checks[id]->undecodable != NULL)
			pcv_checks[id]->undecodable(v, v->state[id], index);
}

void
pcv_tell_unaccounted(struct pc_verify *v, uint64_t index, const struct pc_record *r, uint64_t ns)
{
	for (int id = 0; id < PCV_CHECK_COUNT; id++)
		if (pcv_checks[id]->unaccounted != NULL)
			pcv_checks[id]->unaccounted(v, v->state[id], index, r, ns);
}

/* Whether every check's rules let the record through. */
static bool
rules(struct pc_verify *v, uint64_t index, const struct pc_record *r)
{
	for (int id = 0; id < PCV_CHECK_COUNT; id++)
		if (pcv_checks[id]->rules != NULL &&
		    !pcv_checks[id]->rules(v, v->state[id], index, r))
			return false;
	return true;
}

/* Each pod of a WINDOW in its place, direction by direction, check by check. */
static void
pods(struct pc_verify *v, uint64_t index, const struct pc_record *r)
{
	for (uint32_t i = 0; i < r->npods; i++)
		for (int d = 0; d < PC_DIR_COUNT; d++)
			for (int id = 0; id < PCV_CHECK_COUNT; id++) {
				const struct pcv_check *c = pcv_checks[id];
				uint32_t pod = v->inforce_sum[i];

				if (c->pod != NULL)
					c->pod(v, v->state[id], pcv_pod_state(v, id, pod), index, r,
					       &r->pods[i], pod, d);
			}
}

void
pcv_checks_record(struct pc_verify *v, uint64_t index, const struct pc_record *r)
{
	for (int id = 0; id < PCV_CHECK_COUNT; id++)
		if (pcv_checks[id]->record != NULL)
			pcv_checks[id]->record(v, v->state[id], index, r);
	if (r->type < PCV_REC_TYPES && rules(v, index, r)) {
		for (int id = 0; id < PCV_CHECK_COUNT; id++)
			if (pcv_checks[id]->on[r->type] != NULL)
				pcv_checks[id]->on[r->type](v, v->state[id], index, r);
		if (r->type == PC_REC_WINDOW)
			pods(v, index, r);
	}
	for (int id = 0; id < PCV_CHECK_COUNT; id++)
		if (pcv_checks[id]->after != NULL)
			pcv_checks[id]->after(v, v->state[id], index, r);
}

void
pcv_checks_finish(struct pc_verify *v)
{
	for (int id = 0; id < PCV_CHECK_COUNT; id++)
		if (pcv_checks[id]->finish != NULL)
			pcv_checks[id]->finish(v, v->state[id]);
}

bool
pcv_checks_reread(const struct pc_verify *v)
{
	for (int id = 0; id < PCV_CHECK_COUNT; id++)
		if (pcv_checks[id]->rereads != NULL && pcv_checks[id]->rereads(v, v->state[id]))
			return true;
	return false;
}

void
pcv_checks_resume(struct pc_verify *v)
{
	for (int id = 0; id < PCV_CHECK_COUNT; id++)
		if (pcv_checks[id]->resume != NULL)
			pcv_checks[id]->resume(v, v->state[id]);
}

const struct pcv_section *
pcv_check_section(enum pcv_check_id id, const char *tag)
{
	const struct pcv_section *s = pcv_checks[id]->sections;

	for (; s != NULL && s->tag != NULL; s++)
		if (strcmp(s->tag, tag) == 0)
			return s;
	return NULL;
}

/* ---- the reports ---- */

static void
check_part(const struct pc_verify *v, FILE *f, enum pcv_report which, int id)
{
	if (pcv_checks[id]->report[which] != NULL)
		pcv_checks[id]->report[which](v, v->state[id], f);
}

/* Whether the layout names check id. */
static bool
named(const struct pcv_part *layout, size_t n, int id)
{
	for (size_t i = 0; i < n; i++)
		if (layout[i].own == NULL && layout[i].check == id)
			return true;
	return false;
}

void
pcv_report_parts(const struct pc_verify *v, FILE *f, enum pcv_report which,
		 const struct pcv_part *layout, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (layout[i].own != NULL)
			layout[i].own(v, f);
		else if (layout[i].check != PCV_OTHERS)
			check_part(v, f, which, layout[i].check);
		else
			for (int id = 0; id < PCV_CHECK_COUNT; id++)
				if (!named(layout, n, id))
					check_part(v, f, which, id);
	}
}
