/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What the verifier knows besides the log (docs/log-format.md, "Verifying",
 * checks 9 to 12): its own now and the times of its earlier pulls, the
 * limits it sets on time no window covers, on the checkpoint's age and on
 * merged windows, the build ids it pins and the pod maps it declares. The
 * key holder can sign anything; these checks refuse the lies that this
 * knowledge exposes, and keep the figures the report states.
 */
#include <inttypes.h>
#include <string.h>

#include "base/clock.h"
#include "podmap/config.h"
#include "base/hex.h"
#include "log/record.h"
#include "log/origin.h"
#include "verify.h"

#include "verify_impl.h"

#define ID_HEX_LEN (2 * 32 + 1)

void
pc_verify_policy_init(struct pc_verify_policy *p)
{
	memset(p, 0, sizeof(*p));
	p->clock_skew_ns = PC_VERIFY_DEFAULT_SKEW_NS;
	p->max_unaccounted_ns = PC_VERIFY_UNLIMITED;
	p->max_gap_ns = PC_VERIFY_UNLIMITED;
	p->max_checkpoint_age_ns = PC_VERIFY_UNLIMITED;
	p->max_merged_windows = PC_VERIFY_UNLIMITED;
}

void
pc_verify_set_policy(struct pc_verify *v, const struct pc_verify_policy *p)
{
	v->policy = *p;
	if (v->policy.nbuild_ids > PC_VERIFY_MAX_BUILD_IDS)
		v->policy.nbuild_ids = PC_VERIFY_MAX_BUILD_IDS;
	v->now_given = p->now_ns != 0;
}

const struct pc_verify_policy *
pc_verify_policy_of(const struct pc_verify *v)
{
	return &v->policy;
}

static uint64_t
add_sat(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

/* The latest a record of an honest appliance can end: now, and the clocks' disagreement. */
static uint64_t
latest(const struct pc_verify *v)
{
	return add_sat(v->policy.now_ns, v->policy.clock_skew_ns);
}

/* ---- the verifier's now and its pulls ---- */

void
pcv_policy_begin(struct pc_verify *v)
{
	char now[PC_UTC_LEN], then[PC_UTC_LEN];

	if (v->policy.now_ns == 0)
		v->policy.now_ns = pc_now_ns();
	for (size_t i = 0; i < v->nmaps; i++) {
		char origin[PC_ORIGIN_LEN];

		if (strcmp(v->maps[i]->appliance_id, v->appliance) != 0)
			pcv_fail(v, PC_VC_APPLIANCE, -1, NULL,
				 "pod map %s declares appliance '%s', "
				 "the log is %s",
				 v->maps[i]->path, v->maps[i]->appliance_id, v->cp.origin);
		else if (strcmp(pc_config_origin(v->maps[i], origin, sizeof(origin)),
				v->cp.origin) != 0)
			pcv_fail(v, PC_VC_APPLIANCE, -1, NULL,
				 "pod map %s declares the log '%s', "
				 "the checkpoint is of '%s'",
				 v->maps[i]->path, origin, v->cp.origin);
	}
	/* a pull the state records is a time the verifier already lived through */
	if (v->npulls > 0 && v->pulls[v->npulls - 1].now_ns > latest(v)) {
		pc_utc_format(v->policy.now_ns, now, sizeof(now));
		pc_utc_format(v->pulls[v->npulls - 1].now_ns, then, sizeof(then));
		pcv_fail(v, PC_VC_TIME, -1, NULL, "the verifier's now, %s, is before its own last "
			 "pull at %s: --now or its clock is wrong", now, then);
	}
}

void
pcv_time_record(struct pc_verify *v, uint64_t index, const struct pc_record *r)
{
	char at[PC_UTC_LEN], now[PC_UTC_LEN], skew[DURATION_LEN];
	/* a record ends where the windows it covers end (WINDOW, GAP and OBSERVE; others cover none) */
	uint64_t end = r->window_start_ns + r->window_count * r->window_len_ns; /* decoded */
	if (end <= latest(v) && r->time_ns <= latest(v))
		return;
	pc_utc_format(end > latest(v) ? end : r->time_ns, at, sizeof(at));
	pc_utc_format(v->policy.now_ns, now, sizeof(now));
	pcv_format_duration(v->policy.clock_skew_ns, skew, sizeof(skew));
	pcv_fail(v, PC_VC_TIME, (int64_t)index, r, "%s at %s, after the verifier's now %s and "
		 "the %s of clock skew it allows", end > latest(v) ? "its window ends" :
		 "it was made", at, now, skew);
}

size_t
pc_verify_npulls(const struct pc_verify *v)
{
	return v->npulls;
}

const struct pc_verify_pull *
pc_verify_pull_at(const struct pc_verify *v, size_t i)
{
	return i < v->npulls ? &v->pulls[i] : NULL;
}

/* ---- limits ---- */

void
pcv_unaccounted(struct pc_verify *v, uint64_t index, const struct pc_record *r, uint64_t ns)
{
	char a[DURATION_LEN], b[DURATION_LEN];

	if (ns == 0)
		return;
	/* contiguous stretches add up: a long hole cut into many short GAPs is still one */
	v->unacc_total_ns = add_sat(v->unacc_total_ns, ns);
	v->unacc_run_ns = add_sat(v->unacc_run_ns, ns);
	if (v->unacc_run_ns > v->unacc_longest_ns) {
		v->unacc_longest_ns = v->unacc_run_ns;
		v->unacc_longest_record = (int64_t)index;
	}
	if (!v->unacc_total_reported && v->unacc_total_ns > v->policy.max_unaccounted_ns) {
		pcv_format_duration(v->unacc_total_ns, a, sizeof(a));
		pcv_format_duration(v->policy.max_unaccounted_ns, b, sizeof(b));
		pcv_fail(v, PC_VC_LIMIT, (int64_t)index, r, "time no window covers adds up to %s "
			 "here, more than the %s the verifier allows (--max-unaccounted)", a, b);
		v->unacc_total_reported = true;
	}
	if (!v->unacc_run_reported && v->unacc_run_ns > v->policy.max_gap_ns) {
		pcv_format_duration(v->unacc_run_ns, a, sizeof(a));
		pcv_format_duration(v->policy.max_gap_ns, b, sizeof(b));
		pcv_fail(v, PC_VC_LIMIT, (int64_t)index, r, "%s without a window up to here, longer "
			 "than the %s the verifier allows (--max-gap)", a, b);
		v->unacc_run_reported = true;
	}
}

void
pc_verify_unaccounted(const struct pc_verify *v, uint64_t *total_ns, uint64_t *longest_ns,
		      int64_t *longest_record)
{
	*total_ns = v->unacc_total_ns;
	*longest_ns = v->unacc_longest_ns;
	*longest_record = v->unacc_longest_record;
}

static void
check_merged(struct pc_verify *v, uint64_t index, const struct pc_record *r)
{
	if (r->window_count > v->merged_most) {
		v->merged_most = r->window_count;
		v->merged_record = (int64_t)index;
	}
	if (r->window_count > v->policy.max_merged_windows)
		pcv_fail(v, PC_VC_LIMIT, (int64_t)index, r, "one record covers %" PRIu64 " windows, "
			 "the verifier accepts at most %" PRIu64 " (--max-merged-windows): the "
			 "control thread fell behind, or windows were merged to average a burst away",
			 r->window_count, v->policy.max_merged_windows);
}

void
pc_verify_merged(const struct pc_verify *v, uint64_t *windows, int64_t *record)
{
	*windows = v->merged_most;
	*record = v->merged_record;
}

void
pcv_policy_finish(struct pc_verify *v)
{
	char end[PC_UTC_LEN], age[DURATION_LEN], max[DURATION_LEN];
	uint64_t now, newest, a;

	pc_verify_freshness(v, &now, &newest, &a);
	if (!v->started || a <= v->policy.max_checkpoint_age_ns)
		return;
	pc_utc_format(newest, end, sizeof(end));
	pcv_format_duration(a, age, sizeof(age));
	pcv_format_duration(v->policy.max_checkpoint_age_ns, max, sizeof(max));
	pcv_fail(v, PC_VC_LIMIT, v->nrec > 0 ? (int64_t)v->nrec - 1 : -1, NULL, "the newest window "
		 "ends at %s, %s before the verifier's now, older than the %s it accepts "
		 "(--max-checkpoint-age): the log is stale", end, age, max);
}

void
pc_verify_freshness(const struct pc_verify *v, uint64_t *now_ns, uint64_t *newest_end_ns,
		    uint64_t *age_ns)
{
	*now_ns = v->policy.now_ns;
	*newest_end_ns = v->started ? v->cursor_ns : 0;
	*age_ns = *newest_end_ns != 0 && *now_ns > *newest_end_ns ? *now_ns - *newest_end_ns : 0;
}

/* ---- build ids and pod maps, and the windows under each ---- */

void
pcv_use_begin(struct uses *u, const uint8_t id[32], uint64_t index, int map)
{
	for (uint64_t i = 0; i < pcv_kept(u->n); i++)
		if (memcmp(u->u[i].id, id, 32) == 0) {
			u->inforce = (int64_t)i;
			return;
		}
	if (u->n++ >= PC_VERIFY_MAX_KEPT) {
		u->inforce = -1;
		return;
	}
	struct pc_verify_use *e = &u->u[u->n - 1];
	memset(e, 0, sizeof(*e));
	memcpy(e->id, id, 32);
	e->first_record = index;
	e->map = map;
	u->inforce = (int64_t)u->n - 1;
}

static void
use_window(struct uses *u, const struct pc_record *r)
{
	if (u->inforce < 0)
		return;
	struct pc_verify_use *e = &u->u[u->inforce];
	if (e->windows == 0)
		e->first_window_ns = r->window_start_ns;
	e->last_end_ns = r->window_start_ns + r->window_count * r->window_len_ns;
	e->windows += r->window_count;
}

uint64_t
pc_verify_nbuilds(const struct pc_verify *v)
{
	return v->builds.n;
}

static const struct pc_verify_use *
use_at(const struct uses *u, size_t i)
{
	return i < pcv_kept(u->n) ? &u->u[i] : NULL;
}

const struct pc_verify_use *
pc_verify_build_at(const struct pc_verify *v, size_t i)
{
	return use_at(&v->builds, i);
}

uint64_t
pc_verify_nmaps_used(const struct pc_verify *v)
{
	return v->mapuse.n;
}

const struct pc_verify_use *
pc_verify_map_used_at(const struct pc_verify *v, size_t i)
{
	return use_at(&v->mapuse, i);
}

size_t
pc_verify_nmaps(const struct pc_verify *v)
{
	return v->nmaps;
}

const struct pc_config *
pc_verify_map_at(const struct pc_verify *v, size_t i)
{
	return i < v->nmaps ? v->maps[i] : NULL;
}

static bool
pinned(const struct pc_verify *v, const uint8_t id[32])
{
	if (v->policy.nbuild_ids == 0)
		return true;
	for (size_t i = 0; i < v->policy.nbuild_ids; i++)
		if (memcmp(v->policy.build_ids[i], id, 32) == 0)
			return true;
	return false;
}

/* A START: its build is in force from here on, if the verifier accepts it. */
static void
start_build(struct pc_verify *v, uint64_t index, const struct pc_record *r)
{
	char a[ID_HEX_LEN];

	pc_hex(r->build_id, 32, a);
	if (!pinned(v, r->build_id))
		pcv_fail(v, PC_VC_BUILD, (int64_t)index, r, "build %s is none of the %zu the "
			 "verifier accepts (--build-id)", a, v->policy.nbuild_ids);
	memcpy(v->build, r->build_id, 32);
	v->build_record = index;
	pcv_use_begin(&v->builds, r->build_id, index, -1);
}

static void
wrong_build(struct pc_verify *v, uint64_t index, const struct pc_record *r, const uint8_t *id)
{
	char a[ID_HEX_LEN], b[ID_HEX_LEN];

	pc_hex(id, 32, a);
	pc_hex(v->build, 32, b);
	pcv_fail(v, PC_VC_BUILD, (int64_t)index, r, "%s of build %s, the start in force (record %"
		 PRIu64 ") is of build %s: a build changes only at a start",
		 pc_record_type_name(r->type), a, v->build_record, b);
}

/*
 * A build changes only at a START. The GAP that a new podcapd writes for
 * its downtime comes just before its START, with the new build: a GAP of
 * another build waits for a START of that build.
 */
void
pcv_build_record(struct pc_verify *v, uint64_t index, const struct pc_record *r)
{
	if (r->type == PC_REC_START) {
		if (v->gap_build_record >= 0 && memcmp(v->gap_build, r->build_id, 32) != 0) {
			struct pc_record g = { .type = PC_REC_GAP };
			wrong_build(v, (uint64_t)v->gap_build_record, &g, v->gap_build);
		}
		v->gap_build_record = -1;
		start_build(v, index, r);
		return;
	}
	if (!v->started)
		return;   /* the sequence refuses it */
	if (v->gap_build_record >= 0) {
		if (r->type == PC_REC_GAP && memcmp(r->build_id, v->gap_build, 32) == 0)
			return;
		struct pc_record g = { .type = PC_REC_GAP };
		wrong_build(v, (uint64_t)v->gap_build_record, &g, v->gap_build);
		v->gap_build_record = -1;
	}
	if (memcmp(r->build_id, v->build, 32) == 0)
		return;
	if (r->type == PC_REC_GAP) {
		v->gap_build_record = (int64_t)index;
		memcpy(v->gap_build, r->build_id, 32);
		return;
	}
	wrong_build(v, index, r, r->build_id);
}

int
pcv_declared_map(struct pc_verify *v, uint64_t index, const struct pc_record *r)
{
	char a[2 * PC_DIGEST_LEN + 1], b[2 * PC_DIGEST_LEN + 1];

	if (v->nmaps == 0)
		return -1;
	for (size_t i = 0; i < v->nmaps; i++)
		if (memcmp(r->podmap_digest, v->map_digest[i], PC_DIGEST_LEN) == 0)
			return (int)i;
	pc_hex(r->podmap_digest, PC_DIGEST_LEN, a);
	pc_hex(v->map_digest[0], PC_DIGEST_LEN, b);
	pcv_fail(v, PC_VC_PODMAP, (int64_t)index, r, "%s under pod map %s, none of the %zu "
		 "declared (%s%s)", pc_record_type_name(r->type), a, v->nmaps, b,
		 v->nmaps > 1 ? ", ..." : "");
	return -1;
}

void
pcv_policy_window(struct pc_verify *v, uint64_t index, const struct pc_record *r)
{
	v->unacc_run_ns = 0;
	v->unacc_run_reported = false;
	check_merged(v, index, r);
	use_window(&v->builds, r);
	use_window(&v->mapuse, r);
}

/* ---- what the run could not check ---- */

static const char *const warning_text[PC_VW_COUNT] = {
	[PC_VW_NO_PODMAP] = "no --pod-map: the pods, caps and bursts checked are the log's own "
			    "claims",
	[PC_VW_ANY_BUILD] = "no --build-id: windows of any podcapd build were accepted",
	[PC_VW_NO_TRUSTED] = "no trusted checkpoint (--state): a rewritten log signed with the "
			     "same key would go unseen",
};

unsigned
pc_verify_warnings(const struct pc_verify *v)
{
	unsigned w = 0;

	if (v->nmaps == 0)
		w |= 1u << PC_VW_NO_PODMAP;
	if (v->policy.nbuild_ids == 0)
		w |= 1u << PC_VW_ANY_BUILD;
	if (!v->have_trusted)
		w |= 1u << PC_VW_NO_TRUSTED;
	return w;
}

const char *
pc_verify_warning_text(enum pc_verify_warning w)
{
	return (unsigned)w < PC_VW_COUNT ? warning_text[w] : "unknown";
}
