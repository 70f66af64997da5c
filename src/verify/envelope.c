/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The cap envelope (docs/log-format.md, "Verifying", check 7). For each
 * pod and direction the verifier carries, from record to record, a bound on
 * what the pod's token bucket can hold, the way the bucket carries its
 * level (docs/bucket.md, "What the verifier checks"): it refills at the cap
 * in force over real time, is clamped to the burst in force, keeps across a
 * RELOAD that leaves the pod on its uplink (clamped to the new burst), and
 * is a new bucket otherwise. A window breaks the envelope when it passed
 * more than the bound plus what the window earned: then some interval of
 * windows passed more than the bucket could have held at its start plus
 * what it earned over it. Exact integer arithmetic in bit-ns (8e9 per
 * byte, cap_bps per ns), O(1) per pod and window.
 */
#include <inttypes.h>
#include <string.h>

#include "shape/classify.h"
#include "base/clock.h"
#include "log/record.h"
#include "verify.h"
#include "shape/window_budget.h"

#include "verify_impl.h"

/* Bit-ns in a byte: 8 bits over 1e9 ns per second. */
#define BYTE ((i128)8 * NS)

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

static uint64_t
sub0(uint64_t a, uint64_t b)
{
	return a > b ? a - b : 0;
}

/* Bytes, rounded down, of a count of bit-ns that is not negative. */
static u128
bytes_of(i128 x)
{
	return x <= 0 ? 0 : (u128)x / (u128)BYTE;
}

/* The end of a bucket's run: its worst interval, if it broke the envelope. */
static void
env_close(struct pc_verify *v, const struct podsum *ps, int d)
{
	const struct env *e = &ps->env[d];
	char from[PC_UTC_LEN], to[PC_UTC_LEN], dur[DURATION_LEN], bytes[U128_LEN], over[U128_LEN];
	char held[U128_LEN], earned[U128_LEN];
	struct pc_record r = { .type = PC_REC_WINDOW };

	if (!e->active || !e->viol)
		return;
	pc_utc_format(e->w_start_ns, from, sizeof(from));
	pc_utc_format(e->w_end_ns, to, sizeof(to));
	pcv_format_duration(e->w_end_ns - e->w_start_ns, dur, sizeof(dur));
	pcv_format_u128(e->w_bytes, bytes, sizeof(bytes));
	pcv_format_u128(((u128)e->worst + (u128)BYTE - 1) / (u128)BYTE, over, sizeof(over));
	r.window_start_ns = e->w_window_ns;
	if (!e->w_mixed && e->w_tokens == BYTE * e->burst_bytes) {
		pcv_fail(v, PC_VC_ENVELOPE, (int64_t)e->w_record, &r,
			 "pod %s %s: %s bytes passed from %s to %s (%s) exceed burst %" PRIu64
			 " bytes + cap %" PRIu64 " bit/s x %s by %s bytes (%" PRIu64 " window%s over)",
			 ps->id, pc_dir_name((enum pc_dir)d), bytes, from, to, dur, e->burst_bytes,
			 e->cap_bps, dur, over, e->over_windows, e->over_windows == 1 ? "" : "s");
		return;
	}
	/* the limits changed within the interval, or the bucket held less than a burst at its start */
	pcv_format_u128(bytes_of(e->w_tokens), held, sizeof(held));
	pcv_format_u128(bytes_of(e->w_earned), earned, sizeof(earned));
	pcv_fail(v, PC_VC_ENVELOPE, (int64_t)e->w_record, &r,
		 "pod %s %s: %s bytes passed from %s to %s (%s) exceed the %s bytes its bucket "
		 "could hold at the start + the %s bytes it earned since by %s bytes (%" PRIu64
		 " window%s over)", ps->id, pc_dir_name((enum pc_dir)d), bytes, from, to, dur, held,
		 earned, over, e->over_windows, e->over_windows == 1 ? "" : "s");
}

/* The bucket earns at the cap in force from the last time the bound was stated up to t. */
static void
refill(struct env *e, uint64_t t, uint64_t t_real)
{
	if (t_real > e->at_real_ns) {
		i128 add = mul_sat(e->cap_bps, t_real - e->at_real_ns);

		e->level = clamp(e->level + add);
		e->earned = clamp(e->earned + add);
		e->at_real_ns = t_real;
	}
	e->at_ns = t;
}

/*
 * The bucket holds at most `most` at label t (its depth, or less). When that
 * is the tighter bound, the worst interval ending later starts here.
 */
static void
hold_at_most(struct env *e, i128 most, uint64_t t)
{
	if (e->level < most)
		return;
	e->level = most;
	e->anchor_ns = t;
	e->anchor_tokens = most;
	e->earned = 0;
	e->bytes = 0;
	e->mixed = false;
}

/* A new bucket from label t on, holding at most `most`: the old one's run is over. */
static void
new_bucket(struct pc_verify *v, struct podsum *ps, int d, const struct pc_record_pod *p,
	   uint64_t t, uint64_t t_real, i128 most)
{
	struct env *e = &ps->env[d];

	env_close(v, ps, d);
	memset(e, 0, sizeof(*e));
	e->active = true;
	e->cap_bps = p->cap_bps;
	e->burst_bytes = p->burst_bytes;
	e->level = most;
	e->at_real_ns = t_real;
	e->at_ns = t;
	e->anchor_ns = t;
	e->anchor_tokens = most;
}

/*
 * RELOAD: podcapd reconfigures the bucket of a pod that stays on its uplink
 * at the boundary (pc_bucket_reconfigure): refilled at the old cap and held
 * to the old burst up to it (a larger burst grants nothing at once), then
 * the new limits; the clamp to a smaller burst is the next window's. Any
 * other pod gets a bucket created when the reload was prepared, before the
 * boundary: by then it may hold a burst.
 */
static void
declare_reload(struct pc_verify *v, struct podsum *ps, int d, const struct pc_record_pod *p,
	       uint64_t t, uint64_t t_real)
{
	struct env *e = &ps->env[d];
	bool kept = e->active && v->env_declared && e->listed == v->env_inforce &&
	    strcmp(e->uplink, p->uplink) == 0;

	if (!kept) {
		new_bucket(v, ps, d, p, t, t_real, BYTE * p->burst_bytes);
		return;
	}
	refill(e, t, t_real);
	hold_at_most(e, BYTE * e->burst_bytes, t);
	e->mixed |= e->cap_bps != p->cap_bps || e->burst_bytes != p->burst_bytes;
	e->cap_bps = p->cap_bps;
	e->burst_bytes = p->burst_bytes;
}

/*
 * START: a new podcapd, new buckets. Each was created empty before podcapd
 * waited for the window the ledger already covers to end, and after the
 * last podcapd exited (it held the ledger until then), which was after the
 * last window logged began: at most what the cap earns since then. With
 * the limits unchanged it holds no more than the old bucket would have,
 * running on through the time down (docs/bucket.md, "Start empty").
 */
static void
declare_start(struct pc_verify *v, struct podsum *ps, int d, const struct pc_record_pod *p,
	      uint64_t t, uint64_t t_real)
{
	struct env *e = &ps->env[d];
	i128 most = BYTE * p->burst_bytes;

	if (v->env_window_seen) {
		i128 since = mul_sat(p->cap_bps, sub0(t_real, v->env_window_real_ns));

		most = since < most ? since : most;
	}
	if (!e->active || e->cap_bps != p->cap_bps || e->burst_bytes != p->burst_bytes) {
		new_bucket(v, ps, d, p, t, t_real, most);
		return;
	}
	refill(e, t, t_real);
	hold_at_most(e, most, t);
}

void
pcv_env_declare(struct pc_verify *v, uint64_t index, const struct pc_record *r)
{
	uint64_t t = r->window_start_ns, t_real = sub0(t, v->skipped_ns);

	for (uint32_t i = 0; i < r->npods; i++) {
		const struct pc_record_pod *p = &r->pods[i];
		struct podsum *ps = &v->pods[v->inforce_sum[i]];

		for (int d = 0; d < PC_DIR_COUNT; d++) {
			if (r->type == PC_REC_START)
				declare_start(v, ps, d, p, t, t_real);
			else
				declare_reload(v, ps, d, p, t, t_real);
			ps->env[d].listed = index;
			memcpy(ps->env[d].uplink, p->uplink, PC_ID_LEN);
		}
	}
	v->env_declared = true;
	v->env_inforce = index;
}

/* Window `index` ends an interval over the envelope: the worst one of the run is kept. */
static void
note_over(struct env *e, uint64_t index, uint64_t start, uint64_t end)
{
	e->over_windows++;
	if (e->viol && -e->level <= e->worst)
		return;
	e->viol = true;
	e->worst = -e->level;
	e->w_start_ns = e->anchor_ns;
	e->w_end_ns = end;
	e->w_window_ns = start;
	e->w_bytes = e->bytes;
	e->w_tokens = e->anchor_tokens;
	e->w_earned = e->earned;
	e->w_mixed = e->mixed;
	e->w_record = index;
}

/*
 * One window of one pod and direction. The time since the bound was last
 * stated (gaps, time down, the real time of clock steps) refilled the
 * bucket at the cap in force; the window then earned cap x len and passed
 * `bytes`, which it could only take from the bucket.
 */
void
pcv_env_step(struct pc_verify *v, struct podsum *ps, int d, uint64_t index, uint64_t start,
	     uint64_t len, uint64_t bytes, uint64_t cap, uint64_t burst)
{
	struct env *e = &ps->env[d];
	/* the time between windows is real time: a step of the wall clock grants nothing */
	uint64_t real_start = sub0(start, v->skipped_ns);
	i128 earned = mul_sat(cap, len);

	if (!e->active || e->cap_bps != cap || e->burst_bytes != burst) {
		/* limits no START or RELOAD put in force (the sequence says so): assume a full bucket */
		struct pc_record_pod p = { .cap_bps = cap, .burst_bytes = burst };

		new_bucket(v, ps, d, &p, start, real_start, BYTE * burst);
	}
	refill(e, start, real_start);
	hold_at_most(e, BYTE * burst, start);
	e->level = clamp(e->level + earned - BYTE * bytes);
	e->earned = clamp(e->earned + earned);
	e->bytes += bytes;
	e->at_ns = start + len;
	e->at_real_ns = real_start + len;
	if (e->level < 0)
		note_over(e, index, start, start + len);
}

void
pcv_env_window(struct pc_verify *v, const struct pc_record *r)
{
	uint64_t last = r->window_start_ns + (r->window_count - 1) * r->window_len_ns;

	/* a record of several windows: podcapd ran into the last, the one a START counts from */
	v->env_window_seen = true;
	v->env_window_real_ns = sub0(last, v->skipped_ns);
}

/* The runs still open at the end of the log are over: report their worst interval. */
void
pcv_env_finish(struct pc_verify *v)
{
	for (uint32_t i = 0; i < v->npods; i++)
		for (int d = 0; d < PC_DIR_COUNT; d++)
			env_close(v, &v->pods[i], d);
}

/*
 * The window promise (docs/bucket.md, "The two promises"): at most
 * cap x window in every interval of one window. Of those intervals the
 * log shows the windows themselves, so each WINDOW record of a pod held
 * to it may carry at most window_count x the budget of one; the intervals
 * across a boundary between windows are podcapd's claim. The same budget,
 * rounded down to whole bytes, as podcapd's limiter.
 */
void
pcv_window_check(struct pc_verify *v, uint64_t index, const struct pc_record *r,
		 const struct pc_record_pod *p, int d)
{
	uint64_t one = pc_wb_budget_bytes(p->cap_bps, r->window_len_ns);
	u128 most = (u128)one * r->window_count;
	uint64_t bytes = p->dir[d].pass_bytes;
	char len[DURATION_LEN], over[U128_LEN], all[U128_LEN];

	if (!(p->mode & PC_POD_MODE_WINDOW) || bytes <= most)
		return;
	pcv_format_duration(r->window_len_ns, len, sizeof(len));
	pcv_format_u128(most, all, sizeof(all));
	pcv_format_u128(bytes - most, over, sizeof(over));
	pcv_fail(v, PC_VC_WINDOW, (int64_t)index, r,
		 "pod %s %s: %" PRIu64 " bytes passed in %" PRIu64 " window%s of %s exceed the "
		 "window promise, cap %" PRIu64 " bit/s x %s = %" PRIu64 " bytes a window (%s in "
		 "all), by %s bytes",
		 p->id, pc_dir_name((enum pc_dir)d), bytes, r->window_count,
		 r->window_count == 1 ? "" : "s", len, p->cap_bps, len, one, all, over);
}
