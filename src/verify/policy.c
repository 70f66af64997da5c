/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What the verifier is given besides the log: its policy (its now, the
 * clock skew it allows, its limits and the build ids it pins) and the pod
 * maps it declares; what a run without some of them could not check; and
 * the saved state's record of them, since a state saved under another
 * policy proves nothing about the records under this one. The checks
 * that use each are verify/time.c, limit.c, freshness.c, build.c and
 * podmap.c.
 */
#include <inttypes.h>
#include <string.h>

#include "verify.h"

#include "lines.h"
#include "verify_impl.h"

void
pc_verify_policy_init(struct pc_verify_policy *p)
{
	memset(p, 0, sizeof(*p));
	p->clock_skew_ns = PC_VERIFY_DEFAULT_SKEW_NS;
	p->max_unaccounted_ns = PC_VERIFY_UNLIMITED;
	p->max_gap_ns = PC_VERIFY_UNLIMITED;
	p->max_checkpoint_age_ns = PC_VERIFY_UNLIMITED;
	p->max_merged_windows = PC_VERIFY_UNLIMITED;
	p->max_clock_offset_ns = PC_VERIFY_DEFAULT_CLOCK_OFFSET_NS;
	p->max_link_down_ns = PC_VERIFY_UNLIMITED;
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

/* ---- the saved state: what the records were checked against ---- */

void
pcv_policy_save(const struct pc_verify *v, FILE *f)
{
	const struct pc_verify_policy *p = &v->policy;

	fprintf(f, "policy %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 " %zu\n", p->clock_skew_ns,
		p->max_unaccounted_ns, p->max_gap_ns, p->max_merged_windows, p->nbuild_ids);
	for (size_t i = 0; i < p->nbuild_ids; i++) {
		fputs("pin", f);
		pcv_put_hex(f, p->build_ids[i], 32);
		fputc('\n', f);
	}
	fprintf(f, "podmaps %zu\n", v->nmaps);
	for (size_t i = 0; i < v->nmaps; i++) {
		fputs("podmap", f);
		pcv_put_hex(f, v->map_digest[i], PC_DIGEST_LEN);
		fputc('\n', f);
	}
}

int
pcv_policy_load(const struct pc_verify *v, struct pcv_lines *ls, struct pc_error *err)
{
	const struct pc_verify_policy *p = &v->policy;
	char *s;
	uint64_t skew, unacc, gap, merged, npins, nmaps;
	uint8_t id[32];
	bool same;

	if (!pcv_line_is(ls, "policy", &s) || !pcv_get_u64(&s, &skew) || !pcv_get_u64(&s, &unacc) ||
	    !pcv_get_u64(&s, &gap) || !pcv_get_u64(&s, &merged) || !pcv_get_u64(&s, &npins) ||
	    *s != '\0' || npins > PC_VERIFY_MAX_BUILD_IDS)
		return pcv_lines_bad(ls, err);
	same = skew == p->clock_skew_ns && unacc == p->max_unaccounted_ns && gap == p->max_gap_ns &&
	    merged == p->max_merged_windows && npins == p->nbuild_ids;
	for (uint64_t i = 0; i < npins; i++) {
		if (!pcv_line_is(ls, "pin", &s) || !pcv_get_hex(&s, id, 32) || *s != '\0')
			return pcv_lines_bad(ls, err);
		same = same && memcmp(id, p->build_ids[i], 32) == 0;
	}
	if (!pcv_line_is(ls, "podmaps", &s) || !pcv_get_u64(&s, &nmaps) || *s != '\0' ||
	    nmaps > UINT32_MAX)
		return pcv_lines_bad(ls, err);
	same = same && nmaps == v->nmaps;
	for (uint64_t i = 0; i < nmaps; i++) {
		if (!pcv_line_is(ls, "podmap", &s) || !pcv_get_hex(&s, id, PC_DIGEST_LEN) ||
		    *s != '\0')
			return pcv_lines_bad(ls, err);
		same = same && memcmp(id, v->map_digest[i], PC_DIGEST_LEN) == 0;
	}
	return same ? 1 : 0;
}
