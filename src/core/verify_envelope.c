/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The cap envelope (docs/log-format.md, "Verifying", check 7): within a run
 * of windows under the same limits, every interval of a pod's traffic in a
 * direction must satisfy
 *
 *	8e9 x bytes passed <= 8e9 x burst_bytes + cap_bps x ns elapsed
 *
 * in exact integer arithmetic, checked in one pass per pod and direction.
 */
#include <inttypes.h>
#include <string.h>

#include "podcap/classify.h"
#include "podcap/clock.h"
#include "podcap/record.h"
#include "podcap/verify.h"

#include "verify_impl.h"

/* Saturating, so that a hostile log's sums stay ordered instead of wrapping. */
static i128
clamp(i128 x)
{
	if (x > SAT)
		return SAT;
	if (x < -SAT)
		return -SAT;
	return x;
}

static i128
mul_sat(uint64_t a, uint64_t b)
{
	u128 p = (u128)a * b;

	return p > (u128)SAT ? SAT : (i128)p;
}

/* The end of a run: its worst interval, if it broke the envelope. */
static void
env_close(struct pc_verify *v, const struct podsum *ps, int d)
{
	const struct env *e = &ps->env[d];
	char from[PC_UTC_LEN], to[PC_UTC_LEN], dur[DURATION_LEN], bytes[U128_LEN], over[U128_LEN];
	struct pc_record r = { .type = PC_REC_WINDOW };

	if (!e->active || !e->viol)
		return;
	u128 excess_scaled = (u128)(e->worst - (i128)8 * NS * e->burst_bytes);
	u128 excess = (excess_scaled + 8 * NS - 1) / (8 * NS);
	pc_utc_format(e->w_start_ns, from, sizeof(from));
	pc_utc_format(e->w_end_ns, to, sizeof(to));
	pcv_format_duration(e->w_end_ns - e->w_start_ns, dur, sizeof(dur));
	pcv_format_u128(e->w_bytes, bytes, sizeof(bytes));
	pcv_format_u128(excess, over, sizeof(over));
	r.window_start_ns = e->w_window_ns;
	pcv_fail(v, PC_VC_ENVELOPE, (int64_t)e->w_record, &r,
		 "pod %s %s: %s bytes passed from %s to %s (%s) exceed burst %" PRIu64
		 " bytes + cap %" PRIu64 " bit/s x %s by %s bytes (%" PRIu64 " window%s over)",
		 ps->id, pc_dir_name((enum pc_dir)d), bytes, from, to, dur, e->burst_bytes,
		 e->cap_bps, dur, over, e->over_windows, e->over_windows == 1 ? "" : "s");
}

/*
 * One window of one pod and direction. Intervals may span gaps and
 * restarts: the bucket keeps its level across them or starts empty
 * (include/podcap/bucket.h), so burst + cap x elapsed bounds them too. A
 * change of limits starts a new run.
 */
void
pcv_env_step(struct pc_verify *v, struct podsum *ps, int d, uint64_t index, uint64_t start,
	     uint64_t len, uint64_t bytes, uint64_t cap, uint64_t burst)
{
	struct env *e = &ps->env[d];
	i128 here = (i128)8 * NS * bytes - mul_sat(cap, len);
	i128 carry = 0;
	/* the time between windows is real time: a step of the wall clock grants nothing */
	uint64_t real_start = start - v->skipped_ns;

	if (e->active && (e->cap_bps != cap || e->burst_bytes != burst ||
			  start < e->last_end_ns)) {
		env_close(v, ps, d);
		memset(e, 0, sizeof(*e));
	}
	if (e->active)
		carry = clamp(e->excess - mul_sat(cap, real_start - e->last_real_end_ns));
	if (!e->active) {
		e->active = true;
		e->cap_bps = cap;
		e->burst_bytes = burst;
	}
	if (carry > 0) {
		e->excess = clamp(here + carry);
		e->seg_bytes += bytes;
	} else {
		e->excess = here;
		e->seg_start_ns = start;
		e->seg_bytes = bytes;
	}
	e->last_end_ns = start + len;
	e->last_real_end_ns = real_start + len;
	if (e->excess > (i128)8 * NS * burst) {
		e->over_windows++;
		if (!e->viol || e->excess > e->worst) {
			e->viol = true;
			e->worst = e->excess;
			e->w_start_ns = e->seg_start_ns;
			e->w_end_ns = start + len;
			e->w_window_ns = start;
			e->w_bytes = e->seg_bytes;
			e->w_record = index;
		}
	}
}

/* The runs still open at the end of the log are over: report their worst interval. */
void
pcv_env_finish(struct pc_verify *v)
{
	for (uint32_t i = 0; i < v->npods; i++)
		for (int d = 0; d < PC_DIR_COUNT; d++)
			env_close(v, &v->pods[i], d);
}
