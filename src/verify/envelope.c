/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The cap envelope (docs/verify.md, check 7). For each
 * pod and direction the verifier carries, from record to record, a bound on
 * what the pod's token bucket can hold, the way the bucket carries its
 * level (docs/bucket.md, "What the verifier checks"): it refills at the cap
 * in force over real time, is clamped to the burst in force, keeps across a
 * RELOAD that leaves the pod on its uplink (clamped to the new burst), and
 * is a new bucket otherwise. A window breaks the envelope when it passed
 * more than the bound plus what the window earned: then some interval of
 * windows passed more than the bucket could have held at its start plus
 * what it earned over it. Exact integer arithmetic in bit-ns (8e9 per
 * byte, cap_bps per ns), O(1) per pod and window. Each pod's bound in each
 * direction is its state of the pod; the saved state carries them all.
 */
#include <inttypes.h>
#include <string.h>

#include "shape/classify.h"
#include "base/clock.h"
#include "log/record.h"
#include "verify.h"

#include "envelope.h"
#include "lines.h"
#include "verify_impl.h"

/*
 * Envelope of one pod and direction (docs/bucket.md, "What the verifier
 * checks"): a bound on what its token bucket can hold, carried from record
 * to record as the bucket carries its level. At real time at_real_ns
 * (label at_ns) the bucket holds at most min(level, 8e9 x burst_bytes)
 * bit-ns; the clamp is applied lazily, when the next record needs it.
 * level below zero means the pod passed more than any bucket could have:
 * -level is the excess of the worst interval ending there, the one from
 * anchor_ns, where the bucket held at most anchor_tokens and from which it
 * earned `earned` while the pod passed `bytes`.
 */
struct env {
	bool active;
	uint64_t cap_bps, burst_bytes;
	char uplink[PC_ID_LEN]; /* a pod moved to another uplink gets a new bucket */
	uint64_t listed;        /* the START or RELOAD that last put it in force */
	i128 level;
	uint64_t at_ns;
	uint64_t at_real_ns; /* the same in real time: labels less the time clock steps skipped */
	uint64_t anchor_ns;
	i128 anchor_tokens;
	i128 earned;
	u128 bytes;
	bool mixed;            /* the cap or burst changed since the anchor */
	uint64_t over_windows; /* windows at which some interval broke the envelope */
	bool viol;
	i128 worst;
	uint64_t w_start_ns, w_end_ns, w_window_ns, w_record;
	u128 w_bytes;
	i128 w_tokens, w_earned;
	bool w_mixed;
};

/* What the envelope needs of the records between windows. */
struct envelope {
	bool declared;           /* a START or RELOAD put pods in force ... */
	uint64_t inforce;        /* ... this one */
	bool window_seen;        /* a window was accounted for ... */
	uint64_t window_real_ns; /* ... its record's last starting here, in real time */
};

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
env_close(struct pc_verify *v, const char *id, const struct env *e, int d)
{
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
			 " bytes + cap %" PRIu64 " bit/s x %s by %s bytes (%" PRIu64
			 " window%s over)",
			 id, pc_dir_name((enum pc_dir)d), bytes, from, to, dur, e->burst_bytes,
			 e->cap_bps, dur, over, e->over_windows, e->over_windows == 1 ? "" : "s");
		return;
	}
	/* the limits changed within the interval, or the bucket held less than a burst at its start */
	pcv_format_u128(bytes_of(e->w_tokens), held, sizeof(held));
	pcv_format_u128(bytes_of(e->w_earned), earned, sizeof(earned));
	pcv_fail(v, PC_VC_ENVELOPE, (int64_t)e->w_record, &r,
		 "pod %s %s: %s bytes passed from %s to %s (%s) exceed the %s bytes its bucket "
		 "could hold at the start + the %s bytes it earned since by %s bytes (%" PRIu64
		 " window%s over)",
		 id, pc_dir_name((enum pc_dir)d), bytes, from, to, dur, held, earned, over,
		 e->over_windows, e->over_windows == 1 ? "" : "s");
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
new_bucket(struct pc_verify *v, const char *id, struct env *e, int d, const struct pc_record_pod *p,
	   uint64_t t, uint64_t t_real, i128 most)
{
	env_close(v, id, e, d);
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
declare_reload(struct pc_verify *v, const struct envelope *ev, const char *id, struct env *e, int d,
	       const struct pc_record_pod *p, uint64_t t, uint64_t t_real)
{
	bool kept = e->active && ev->declared && e->listed == ev->inforce &&
	    strcmp(e->uplink, p->uplink) == 0;

	if (!kept) {
		new_bucket(v, id, e, d, p, t, t_real, BYTE * p->burst_bytes);
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
declare_start(struct pc_verify *v, const struct envelope *ev, const char *id, struct env *e, int d,
	      const struct pc_record_pod *p, uint64_t t, uint64_t t_real)
{
	i128 most = BYTE * p->burst_bytes;

	if (ev->window_seen) {
		i128 since = mul_sat(p->cap_bps, sub0(t_real, ev->window_real_ns));

		most = since < most ? since : most;
	}
	if (!e->active || e->cap_bps != p->cap_bps || e->burst_bytes != p->burst_bytes) {
		new_bucket(v, id, e, d, p, t, t_real, most);
		return;
	}
	refill(e, t, t_real);
	hold_at_most(e, most, t);
}

/* A START or RELOAD in its place: the buckets of the pods it puts in force. */
static void
envelope_declare(struct pc_verify *v, void *st, uint64_t index, const struct pc_record *r)
{
	struct envelope *ev = st;
	uint64_t t = r->window_start_ns, t_real = sub0(t, v->skipped_ns);

	for (uint32_t i = 0; i < r->npods; i++) {
		const struct pc_record_pod *p = &r->pods[i];
		uint32_t pod = v->inforce_sum[i];
		struct env *e = pcv_pod_state(v, PCV_ENVELOPE, pod);

		for (int d = 0; d < PC_DIR_COUNT; d++) {
			if (r->type == PC_REC_START)
				declare_start(v, ev, v->pods[pod].id, &e[d], d, p, t, t_real);
			else
				declare_reload(v, ev, v->pods[pod].id, &e[d], d, p, t, t_real);
			e[d].listed = index;
			memcpy(e[d].uplink, p->uplink, PC_ID_LEN);
		}
	}
	ev->declared = true;
	ev->inforce = index;
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
static void
envelope_pod(struct pc_verify *v, void *st, void *podst, uint64_t index, const struct pc_record *r,
	     const struct pc_record_pod *p, uint32_t pod, int d)
{
	struct env *e = &((struct env *)podst)[d];
	uint64_t start = r->window_start_ns, len = r->window_len_ns * r->window_count;
	uint64_t bytes = p->dir[d].pass_bytes, cap = p->cap_bps, burst = p->burst_bytes;
	/* the time between windows is real time: a step of the wall clock grants nothing */
	uint64_t real_start = sub0(start, v->skipped_ns);
	i128 earned = mul_sat(cap, len);

	(void)st;
	if (!e->active || e->cap_bps != cap || e->burst_bytes != burst) {
		/* limits no START or RELOAD put in force (the sequence says so): assume a full bucket */
		struct pc_record_pod q = { .cap_bps = cap, .burst_bytes = burst };

		new_bucket(v, v->pods[pod].id, e, d, &q, start, real_start, BYTE * burst);
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

/* A WINDOW in its place: the real start of its last window, for the next START's buckets. */
static void
envelope_window(struct pc_verify *v, void *st, uint64_t index, const struct pc_record *r)
{
	struct envelope *ev = st;
	uint64_t last = r->window_start_ns + (r->window_count - 1) * r->window_len_ns;

	(void)index;
	/* a record of several windows: podcapd ran into the last, the one a START counts from */
	ev->window_seen = true;
	ev->window_real_ns = sub0(last, v->skipped_ns);
}

/* The runs still open at the end of the log are over: report their worst interval. */
static void
envelope_finish(struct pc_verify *v, void *st)
{
	(void)st;
	for (uint32_t i = 0; i < v->npods; i++)
		for (int d = 0; d < PC_DIR_COUNT; d++)
			env_close(v, v->pods[i].id,
				  &((struct env *)pcv_pod_state(v, PCV_ENVELOPE, i))[d], d);
}

i128
pcv_envelope_level(const struct pc_verify *v, uint32_t pod, int d)
{
	const struct env *e = pcv_pod_state(v, PCV_ENVELOPE, pod);

	return e[d].level;
}

/* ---- the saved state: the last START or RELOAD and window, each pod's bound ---- */

static void
save_envelope(const struct pc_verify *v, const void *st, FILE *f)
{
	const struct envelope *ev = st;

	(void)v;
	fprintf(f, "envelope %d %" PRIu64 " %d %" PRIu64 "\n", ev->declared ? 1 : 0, ev->inforce,
		ev->window_seen ? 1 : 0, ev->window_real_ns);
}

static int
load_envelope(struct pc_verify *v, void *st, struct pcv_lines *ls, struct pc_error *err)
{
	struct envelope *ev = st;
	char *s;
	uint64_t declared, seen;

	if (!pcv_line_is(ls, "envelope", &s) || !pcv_get_u64(&s, &declared) || declared > 1 ||
	    !pcv_get_u64(&s, &ev->inforce) || !pcv_get_u64(&s, &seen) || seen > 1 ||
	    !pcv_get_u64(&s, &ev->window_real_ns) || *s != '\0' ||
	    (declared == 1 && ev->inforce >= v->trusted.size))
		return pcv_lines_bad(ls, err);
	ev->declared = declared == 1;
	ev->window_seen = seen == 1;
	return 0;
}

/* A saved run never broke the envelope (it would have failed): no worst interval. */
static void
save_pod(const struct pc_verify *v, const void *podst, int d, FILE *f)
{
	const struct env *e = &((const struct env *)podst)[d];

	(void)v;
	fprintf(f, "env %d %d %" PRIu64 " %" PRIu64 " %s %" PRIu64, d, e->active ? 1 : 0,
		e->cap_bps, e->burst_bytes, e->active ? e->uplink : "-", e->listed);
	pcv_put_i128(f, e->level);
	fprintf(f, " %" PRIu64 " %" PRIu64 " %" PRIu64, e->at_ns, e->at_real_ns, e->anchor_ns);
	pcv_put_i128(f, e->anchor_tokens);
	pcv_put_i128(f, e->earned);
	pcv_put_u128(f, e->bytes);
	fprintf(f, " %d\n", e->mixed ? 1 : 0);
}

static int
load_pod(struct pc_verify *v, void *podst, int d, struct pcv_lines *ls, struct pc_error *err)
{
	struct env *e = &((struct env *)podst)[d];
	char *s, up[PC_ID_LEN];
	uint64_t dd, act, mixed;

	(void)v;
	if (!pcv_line_is(ls, "env", &s) || !pcv_get_u64(&s, &dd) || dd != (uint64_t)d ||
	    !pcv_get_u64(&s, &act) || act > 1 || !pcv_get_u64(&s, &e->cap_bps) ||
	    !pcv_get_u64(&s, &e->burst_bytes) || !pcv_get_id(&s, up) ||
	    !pcv_get_u64(&s, &e->listed) || !pcv_get_i128(&s, &e->level) ||
	    !pcv_get_u64(&s, &e->at_ns) || !pcv_get_u64(&s, &e->at_real_ns) ||
	    !pcv_get_u64(&s, &e->anchor_ns) || !pcv_get_i128(&s, &e->anchor_tokens) ||
	    !pcv_get_i128(&s, &e->earned) || !pcv_get_u128(&s, &e->bytes) ||
	    !pcv_get_u64(&s, &mixed) || mixed > 1 || *s != '\0')
		return pcv_lines_bad(ls, err);
	/* a run of a saved state never broke the envelope: a bound below zero is damage */
	if (e->level < 0 || (act == 1 && !pc_id_valid(up)))
		return pcv_lines_bad(ls, err);
	e->active = act == 1;
	e->mixed = mixed == 1;
	memcpy(e->uplink, up, PC_ID_LEN);
	return 0;
}

const struct pcv_check pcv_envelope_check = {
	.name = "envelope",
	.size = sizeof(struct envelope),
	.pod_size = PC_DIR_COUNT * sizeof(struct env),
	.on[PC_REC_START] = envelope_declare,
	.on[PC_REC_RELOAD] = envelope_declare,
	.on[PC_REC_WINDOW] = envelope_window,
	.pod = envelope_pod,
	.finish = envelope_finish,
	.sections =
	    (const struct pcv_section[]){ { "envelope", save_envelope, load_envelope }, { NULL } },
	.save_pod = save_pod,
	.load_pod = load_pod,
};
