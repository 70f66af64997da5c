/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The checkpoint's age (docs/verify.md, check 11): with
 * --max-checkpoint-age, the newest window may not end longer than that
 * before the verifier's now, or the operator stopped publishing. The
 * reports state the age only from a now the caller gave: they read no
 * clock. Stateless: where the log ends is the sequence's.
 */
#include <inttypes.h>

#include "base/clock.h"
#include "verify.h"

#include "print.h"
#include "verify_impl.h"

void
pc_verify_freshness(const struct pc_verify *v, uint64_t *now_ns, uint64_t *newest_end_ns,
		    uint64_t *age_ns)
{
	*now_ns = v->policy.now_ns;
	*newest_end_ns = v->started ? v->cursor_ns : 0;
	*age_ns = *newest_end_ns != 0 && *now_ns > *newest_end_ns ? *now_ns - *newest_end_ns : 0;
}

/* At the end of a log whose checkpoint verified: the checkpoint's age. */
static void
freshness_finish(struct pc_verify *v, void *st)
{
	char end[PC_UTC_LEN], age[DURATION_LEN], max[DURATION_LEN];
	uint64_t now, newest, a;

	(void)st;
	if (!v->cp_ok)
		return;
	pc_verify_freshness(v, &now, &newest, &a);
	if (!v->started || a <= v->policy.max_checkpoint_age_ns)
		return;
	pc_utc_format(newest, end, sizeof(end));
	pcv_format_duration(a, age, sizeof(age));
	pcv_format_duration(v->policy.max_checkpoint_age_ns, max, sizeof(max));
	pcv_fail(v, PC_VC_LIMIT, v->nrec > 0 ? (int64_t)v->nrec - 1 : -1, NULL,
		 "the newest window "
		 "ends at %s, %s before the verifier's now, older than the %s it accepts "
		 "(--max-checkpoint-age): the log is stale",
		 end, age, max);
}

static void
freshness_text(const struct pc_verify *v, const void *st, FILE *f)
{
	uint64_t now, newest, age;
	char a[PC_UTC_LEN], b[PC_UTC_LEN], d[DURATION_LEN];

	(void)st;
	if (!v->cp_ok)
		return;
	pc_verify_freshness(v, &now, &newest, &age);
	if (newest == 0)
		fprintf(f, "newest window: none");
	else
		pc_utc_format(newest, a, sizeof(a)), fprintf(f, "newest window ends %s", a);
	if (v->now_given) {
		pc_utc_format(now, b, sizeof(b));
		pcv_format_duration(age, d, sizeof(d));
		if (newest == 0)
			fprintf(f, "; the verifier's now is %s\n", b);
		else
			fprintf(f, "; checkpoint age %s at the verifier's now %s\n", d, b);
	} else {
		fprintf(f, "; checkpoint age not stated: the verifier was given no now (--now)\n");
	}
}

static void
freshness_json(const struct pc_verify *v, const void *st, FILE *f)
{
	uint64_t now, newest, age;

	(void)st;
	/* the age only from a now the caller gave: the report reads no clock */
	pc_verify_freshness(v, &now, &newest, &age);
	fprintf(f, "  \"freshness\": {\"now\": ");
	pcv_json_time_or_null(f, now, v->now_given);
	fprintf(f, ", \"newest_end\": ");
	pcv_json_time_or_null(f, newest, newest != 0);
	fprintf(f, ", \"age_ns\": ");
	if (v->now_given && newest != 0)
		fprintf(f, "%" PRIu64, age);
	else
		fputs("null", f);
	fprintf(f, "},\n");
}

const struct pcv_check pcv_freshness_check = {
	.name = "freshness",
	.finish = freshness_finish,
	.report[PCV_TEXT] = freshness_text,
	.report[PCV_JSON] = freshness_json,
};
