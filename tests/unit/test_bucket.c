/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Token bucket: exact arithmetic, the burst + cap x T envelope under random
 * arrivals, long-run accuracy, extreme rates and clocks, shaping semantics
 * and reconfiguration.
 *
 * Time is injected: ticks at hz = 1e9 (ns), 2.9e9 (a TSC) and 1e9 + 7 (a
 * frequency that divides nothing evenly). Random runs print their seed;
 * PODCAP_TEST_SEED=<n> repeats one.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "shape/bucket.h"
#include "base/units.h"

typedef __int128 pc_i128;

#define HZ_NS   1000000000ULL
#define HZ_TSC  2900000000ULL
#define HZ_ODD  1000000007ULL

#define KBPS    1000ULL
#define MBPS    1000000ULL
#define GBPS    1000000000ULL
#define TBPS    1000000000000ULL

#define MIN_FRAME 64u
#define MAX_FRAME 1522u

static const uint64_t all_hz[] = { HZ_NS, HZ_TSC, HZ_ODD };
#define N_HZ (sizeof(all_hz) / sizeof(all_hz[0]))

static uint64_t seed;

/* ---- utilities -------------------------------------------------------- */

static char *
u128_str(pc_u128 v, char *buf, size_t len)
{
	char tmp[48];
	size_t n = 0;

	do {
		tmp[n++] = (char)('0' + (int)(v % 10));
		v /= 10;
	} while (v != 0 && n < sizeof(tmp));
	if (n >= len)
		n = len - 1;
	for (size_t i = 0; i < n; i++)
		buf[i] = tmp[n - 1 - i];
	buf[n] = '\0';
	return buf;
}

static void
check_u128_eq(pc_u128 a, pc_u128 b, const char *what, int line)
{
	char sa[48], sb[48];

	if (a == b)
		return;
	fail_msg("line %d: %s: %s != %s", line, what, u128_str(a, sa, sizeof(sa)),
		 u128_str(b, sb, sizeof(sb)));
}
#define assert_u128_eq(a, b) check_u128_eq((a), (b), #a " == " #b, __LINE__)

static struct pc_limits
limits(uint64_t cap_bps, uint64_t burst_bytes, enum pc_mode mode,
       uint64_t queue_delay_ns)
{
	struct pc_limits l = {
		.cap_bps = cap_bps,
		.burst_bytes = burst_bytes,
		.mode = mode,
		.queue_delay_ns = queue_delay_ns,
	};
	return l;
}

static uint64_t
secs(double s, uint64_t hz)
{
	return (uint64_t)(s * (double)hz);
}

/* Smallest tick count after which rate_bps has paid for `bytes`. */
static uint64_t
ticks_to_pay(uint64_t bytes, uint64_t rate_bps, uint64_t hz)
{
	pc_u128 cost = (pc_u128)bytes * 8u * hz;

	return (uint64_t)((cost + rate_bps - 1) / rate_bps);
}

/* xorshift64* */
static uint64_t
rnd(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 0x2545F4914F6CDD1DULL;
}

static uint64_t
rnd_range(uint64_t *s, uint64_t lo, uint64_t hi)
{
	return lo + rnd(s) % (hi - lo + 1);
}

/* Natural log without libm: exponent times ln 2 plus an atanh series. */
static double
ln(double x)
{
	int e = 0;
	double s, s2, term, sum = 0.0;

	while (x >= 2.0) {
		x /= 2.0;
		e++;
	}
	while (x < 1.0) {
		x *= 2.0;
		e--;
	}
	s = (x - 1.0) / (x + 1.0);
	s2 = s * s;
	term = s;
	for (int k = 1; k < 40; k += 2) {
		sum += term / k;
		term *= s2;
	}
	return e * 0.69314718055994530942 + 2.0 * sum;
}

/* Exponentially distributed gap of the given mean, in ticks (>= 1). */
static uint64_t
rnd_exp(uint64_t *s, double mean)
{
	double u = ((double)(rnd(s) >> 11) + 1.0) / 9007199254740993.0;
	double g = -ln(u) * mean;

	return g < 1.0 ? 1 : (uint64_t)g;
}

/* ---- arrivals ------------------------------------------------------------ */

enum pattern {
	PAT_POISSON,  /* exponential gaps, offered load above the cap */
	PAT_BURSTY,   /* idle (often long enough to fill the bucket), then a train at line rate */
};

struct frame {
	uint64_t t;      /* arrival tick */
	uint64_t bytes;
};

struct arrivals {
	struct frame *f;
	size_t n;
};

static void
gen_arrivals(struct arrivals *a, size_t n, enum pattern pat, uint64_t t0,
	     uint64_t hz, uint64_t cap_bps, uint64_t burst_bytes, uint64_t *rs)
{
	const uint64_t line_bps = 100 * GBPS;
	const double mean_bytes = (MIN_FRAME + MAX_FRAME) / 2.0;
	uint64_t t = t0;
	size_t train = 0;

	a->f = calloc(n, sizeof(*a->f));
	assert_non_null(a->f);
	a->n = n;
	for (size_t i = 0; i < n; i++) {
		uint64_t bytes = rnd_range(rs, MIN_FRAME, MAX_FRAME);

		if (pat == PAT_POISSON) {
			/* 1.3 x the cap on average */
			double mean = mean_bytes * 8.0 * (double)hz / (1.3 * (double)cap_bps);
			t += rnd_exp(rs, mean);
		} else if (train > 0) {
			t += ticks_to_pay(bytes, line_bps, hz);
			train--;
		} else {
			/* idle around two bucket-fill times, then up to 3 bursts' worth */
			double fill = (double)burst_bytes * 8.0 * (double)hz / (double)cap_bps;
			t += rnd_exp(rs, 2.0 * fill);
			train = (size_t)rnd_range(rs, 1, 3 * burst_bytes / (uint64_t)mean_bytes);
		}
		a->f[i].t = t;
		a->f[i].bytes = bytes;
	}
}

/* ---- the envelope --------------------------------------------------------- */

struct pass {
	uint64_t t;
	uint64_t bytes;
	uint64_t id;     /* arrival order */
};

struct passes {
	struct pass *p;
	size_t n, cap;
};

static void
record_pass(struct passes *ps, uint64_t t, uint64_t bytes, uint64_t id)
{
	if (ps->n == ps->cap) {
		ps->cap = ps->cap ? 2 * ps->cap : 4096;
		ps->p = realloc(ps->p, ps->cap * sizeof(*ps->p));
		assert_non_null(ps->p);
	}
	ps->p[ps->n].t = t;
	ps->p[ps->n].bytes = bytes;
	ps->p[ps->n].id = id;
	ps->n++;
}

/*
 * max over every interval [t_i, t_j] of pass events (i <= j, both ends
 * included) of 8 x hz x bytes - rate x (t_j - t_i), in bit-ticks. The
 * envelope holds iff it is <= depth. With prefix sums S (S_-1 = 0) the
 * interval value is (S_j - rate t_j) - (S_{i-1} - rate t_i): keep the
 * running minimum of the second term, O(n).
 */
static pc_i128
max_excess(const struct pass *p, size_t n, uint64_t hz, uint64_t rate)
{
	pc_i128 s = 0, lo = 0, best = 0;
	bool first = true;

	for (size_t j = 0; j < n; j++) {
		pc_i128 start = s - (pc_i128)rate * p[j].t;

		if (first || start < lo)
			lo = start;
		s += (pc_i128)p[j].bytes * 8 * hz;
		pc_i128 v = s - (pc_i128)rate * p[j].t - lo;
		if (first || v > best)
			best = v;
		first = false;
	}
	return best;
}

/* The same, by brute force over every pair: checks max_excess itself. */
static pc_i128
max_excess_slow(const struct pass *p, size_t n, uint64_t hz, uint64_t rate)
{
	pc_i128 best = 0;

	for (size_t i = 0; i < n; i++) {
		pc_i128 bits = 0;

		for (size_t j = i; j < n; j++) {
			bits += (pc_i128)p[j].bytes * 8 * hz;
			pc_i128 v = bits - (pc_i128)rate * (p[j].t - p[i].t);
			if ((i == 0 && j == 0) || v > best)
				best = v;
		}
	}
	return best;
}

/* Since a start-empty bucket was created at t0: bytes <= cap x (t - t0), no burst. */
static pc_i128
max_excess_since(const struct pass *p, size_t n, uint64_t hz, uint64_t rate,
		 uint64_t t0)
{
	pc_i128 s = 0, best = 0;

	for (size_t j = 0; j < n; j++) {
		s += (pc_i128)p[j].bytes * 8 * hz;
		pc_i128 v = s - (pc_i128)rate * (p[j].t - t0);
		if (j == 0 || v > best)
			best = v;
	}
	return best;
}

static void
test_envelope_checker(void **state)
{
	(void)state;
	uint64_t rs = (seed ^ 0x5eed) | 1;
	struct pass p[600];
	uint64_t t = 1000;

	for (size_t i = 0; i < 600; i++) {
		t += rnd_range(&rs, 0, 20000);
		p[i].t = t;
		p[i].bytes = rnd_range(&rs, MIN_FRAME, MAX_FRAME);
		p[i].id = i;
	}
	for (size_t k = 0; k < N_HZ; k++) {
		pc_i128 fast = max_excess(p, 600, all_hz[k], GBPS);
		pc_i128 slow = max_excess_slow(p, 600, all_hz[k], GBPS);
		assert_true(fast == slow);
	}
	/* a single frame: 8 x hz x bytes exactly */
	assert_true(max_excess(p, 1, HZ_NS, GBPS) == (pc_i128)p[0].bytes * 8 * HZ_NS);
	/* two frames at one instant add up, whatever the rate */
	struct pass two[2] = { { 5, 100, 0 }, { 5, 200, 1 } };
	assert_true(max_excess(two, 2, HZ_NS, 1) == (pc_i128)300 * 8 * HZ_NS);
}

/* ---- simulations ------------------------------------------------------------ */

struct sim_cfg {
	uint64_t hz;
	uint64_t cap_bps;
	uint64_t burst_bytes;
	uint64_t queue_delay_ns;
	enum pc_mode mode;
	enum pattern pat;
	size_t nframes;
	size_t ring;      /* shape: frames the simulated queue can hold */
	uint64_t poll_ns; /* shape: the worker's loop period */
};

struct sim_out {
	struct passes ps;
	uint64_t t0, t_end;
	uint64_t pass_bytes, offered_bytes;
	size_t over_cap, queue_full, queued;
	uint64_t max_wait;
};

/*
 * Would the queue in `b` (sizes q[0..n)) be fully released by `deadline`,
 * polling every dt from `now`? Works on copies. No tokens are lost to the
 * depth clamp as long as depth >= max frame + rate x dt, which the runs
 * below respect, so the answer is exact at the deadline.
 */
static bool
drains_by(const struct pc_bucket *b, const uint64_t *q, size_t n, uint64_t now,
	  uint64_t deadline, uint64_t dt)
{
	struct pc_bucket c = *b;
	size_t i = 0;
	uint64_t u = now;

	for (;;) {
		while (i < n && pc_bucket_release(&c, u, q[i]))
			i++;
		if (i == n)
			return true;
		if (u >= deadline)
			return false;
		u = deadline - u > dt ? u + dt : deadline;
	}
}

static void
sim_police(const struct sim_cfg *cfg, const struct arrivals *a, struct sim_out *o)
{
	struct pc_limits lim = limits(cfg->cap_bps, cfg->burst_bytes, cfg->mode,
				      cfg->queue_delay_ns);
	struct pc_bucket b;

	pc_bucket_init(&b, &lim, cfg->hz, o->t0);
	for (size_t i = 0; i < a->n; i++) {
		enum pc_verdict v = pc_bucket_admit(&b, a->f[i].t, a->f[i].bytes);

		o->offered_bytes += a->f[i].bytes;
		assert_int_not_equal(v, PC_VERDICT_QUEUE);
		if (v == PC_VERDICT_PASS) {
			record_pass(&o->ps, a->f[i].t, a->f[i].bytes, i);
			o->pass_bytes += a->f[i].bytes;
		} else {
			o->over_cap++;
		}
		assert_true(b.level <= b.depth);
		assert_int_equal(b.backlog_frames, 0);
		assert_int_equal(b.backlog_bytes, 0);
	}
	o->t_end = a->f[a->n - 1].t;
}

struct qent {
	uint64_t id, bytes, arrive;
};

static void
sim_shape(const struct sim_cfg *cfg, const struct arrivals *a, struct sim_out *o)
{
	struct pc_limits lim = limits(cfg->cap_bps, cfg->burst_bytes, cfg->mode,
				      cfg->queue_delay_ns);
	const uint64_t dt = cfg->poll_ns * cfg->hz / HZ_NS;
	const uint64_t delay_ticks = (uint64_t)((pc_u128)cfg->queue_delay_ns * cfg->hz / HZ_NS);
	struct qent *q = calloc(cfg->ring, sizeof(*q));
	uint64_t *sizes = calloc(cfg->ring + 1, sizeof(*sizes));
	size_t head = 0, len = 0, next = 0;
	uint64_t qbytes = 0, t = o->t0, last_id = 0;
	bool any = false;
	struct pc_bucket b;

	assert_non_null(q);
	assert_non_null(sizes);
	/* no token may be lost to the clamp while frames wait (see drains_by) */
	assert_true((pc_u128)cfg->burst_bytes * 8 * cfg->hz >=
		    (pc_u128)MAX_FRAME * 8 * cfg->hz + (pc_u128)cfg->cap_bps * dt);
	pc_bucket_init(&b, &lim, cfg->hz, o->t0);
	while (next < a->n || len > 0) {
		t += dt;
		while (len > 0 && pc_bucket_release(&b, t, q[head].bytes)) {
			struct qent *e = &q[head];
			uint64_t wait = t - e->arrive;

			/* leaves within queue_delay, give or take one loop period */
			assert_true(wait <= delay_ticks + dt - 1);
			if (wait > o->max_wait)
				o->max_wait = wait;
			assert_true(!any || e->id > last_id);
			last_id = e->id;
			any = true;
			record_pass(&o->ps, t, e->bytes, e->id);
			o->pass_bytes += e->bytes;
			qbytes -= e->bytes;
			head = (head + 1) % cfg->ring;
			len--;
		}
		for (; next < a->n && a->f[next].t <= t; next++) {
			uint64_t bytes = a->f[next].bytes;
			enum pc_verdict v;

			o->offered_bytes += bytes;
			v = pc_bucket_admit(&b, t, bytes);
			if (v == PC_VERDICT_PASS) {
				/* nothing overtakes the queue */
				assert_int_equal(len, 0);
				assert_true(!any || next > last_id);
				last_id = next;
				any = true;
				record_pass(&o->ps, t, bytes, next);
				o->pass_bytes += bytes;
				continue;
			}
			for (size_t k = 0; k < len; k++)
				sizes[k] = q[(head + k) % cfg->ring].bytes;
			sizes[len] = bytes;
			if (v == PC_VERDICT_DROP) {
				/* it would indeed have waited longer than queue_delay */
				struct pc_bucket c = b;
				c.backlog_bytes += bytes;
				c.backlog_frames++;
				assert_false(drains_by(&c, sizes, len + 1, t,
						       t + delay_ticks, dt));
				o->over_cap++;
				continue;
			}
			assert_int_equal(v, PC_VERDICT_QUEUE);
			if (len == cfg->ring) {
				pc_bucket_unqueue(&b, bytes);
				o->queue_full++;
				continue;
			}
			/* and what queues would leave by the deadline, exactly */
			assert_true(drains_by(&b, sizes, len + 1, t, t + delay_ticks, dt));
			q[(head + len) % cfg->ring] = (struct qent){ next, bytes, t };
			len++;
			qbytes += bytes;
			o->queued++;
		}
		assert_int_equal(b.backlog_frames, len);
		assert_int_equal(b.backlog_bytes, qbytes);
		assert_true(b.level <= b.depth);
	}
	o->t_end = t;
	free(q);
	free(sizes);
}

static void
run_envelope(const struct sim_cfg *cfg, uint64_t run_seed)
{
	uint64_t rs = run_seed | 1;
	struct arrivals a;
	struct sim_out o = { 0 };
	pc_i128 depth = (pc_i128)cfg->burst_bytes * 8 * cfg->hz;
	pc_i128 frame = (pc_i128)MAX_FRAME * 8 * cfg->hz;

	o.t0 = rnd(&rs) >> 8;  /* an arbitrary TSC value */
	gen_arrivals(&a, cfg->nframes, cfg->pat, o.t0, cfg->hz, cfg->cap_bps,
		     cfg->burst_bytes, &rs);
	if (cfg->mode == PC_MODE_POLICE)
		sim_police(cfg, &a, &o);
	else
		sim_shape(cfg, &a, &o);

	pc_i128 worst = max_excess(o.ps.p, o.ps.n, cfg->hz, cfg->cap_bps);
	pc_i128 since = max_excess_since(o.ps.p, o.ps.n, cfg->hz, cfg->cap_bps, o.t0);
	size_t nslow = o.ps.n < 2500 ? o.ps.n : 2500;

	print_message("  %-6s %-7s hz=%-10" PRIu64 " passes=%zu over_cap=%zu queued=%zu "
		      "queue_full=%zu max_wait=%" PRIu64 " ticks, worst interval = %.4f burst\n",
		      cfg->mode == PC_MODE_POLICE ? "police" : "shape",
		      cfg->pat == PAT_POISSON ? "poisson" : "bursty", cfg->hz, o.ps.n,
		      o.over_cap, o.queued, o.queue_full, o.max_wait,
		      (double)worst / (double)depth);

	/* the envelope, strictly: not one extra frame over any interval */
	assert_true(worst <= depth);
	/* since the (empty) start: no burst at all */
	assert_true(since <= 0);
	/* the fast checker agrees with brute force on a prefix */
	assert_true(max_excess(o.ps.p, nslow, cfg->hz, cfg->cap_bps) ==
		    max_excess_slow(o.ps.p, nslow, cfg->hz, cfg->cap_bps));

	/* and the bucket is not timid: it grants close to the whole burst */
	if (cfg->pat == PAT_BURSTY)
		assert_true(worst > depth - 2 * frame);
	/* over-offered, the long-run throughput reaches the cap */
	if (cfg->pat == PAT_POISSON) {
		double span = (double)(o.t_end - o.t0) / (double)cfg->hz;
		assert_true((double)o.pass_bytes * 8.0 >= 0.9 * (double)cfg->cap_bps * span);
	}
	/* the cap did bite: refused by the bucket, or (a small ring) by the queue */
	assert_true(o.over_cap + o.queue_full > 0);
	if (cfg->mode == PC_MODE_SHAPE) {
		assert_true(o.queued > 0);
		if (cfg->ring < 16)
			assert_true(o.queue_full > 0);
	}
	free(a.f);
	free(o.ps.p);
}

static void
test_envelope_random(void **state)
{
	(void)state;
	static const enum pattern pats[] = { PAT_POISSON, PAT_BURSTY };
	static const enum pc_mode modes[] = { PC_MODE_POLICE, PC_MODE_SHAPE };
	uint64_t n = 0;

	for (size_t h = 0; h < N_HZ; h++)
		for (size_t m = 0; m < 2; m++)
			for (size_t p = 0; p < 2; p++) {
				struct sim_cfg cfg = {
					.hz = all_hz[h],
					.cap_bps = GBPS,
					.burst_bytes = 64 * 1024,
					.queue_delay_ns = 200000,
					.mode = modes[m],
					.pat = pats[p],
					.nframes = 60000,
					.ring = (h % 2) ? 8 : 256,
					.poll_ns = 1000,
				};
				run_envelope(&cfg, seed + 1000003 * ++n);
			}
	/* a slow link with a small burst, where one frame is a large part of it */
	for (size_t m = 0; m < 2; m++) {
		struct sim_cfg cfg = {
			.hz = HZ_ODD,
			.cap_bps = 10 * MBPS,
			.burst_bytes = 4 * MAX_FRAME,
			.queue_delay_ns = 5000000,
			.mode = modes[m],
			.pat = PAT_BURSTY,
			.nframes = 20000,
			.ring = 4,
			.poll_ns = 10000,
		};
		run_envelope(&cfg, seed + 1000003 * ++n);
	}
}

/* ---- long-run accuracy under saturation --------------------------------------- */

struct sat_cfg {
	uint64_t hz;
	uint64_t cap_bps;
	uint64_t burst_bytes;
	enum pc_mode mode;
	uint64_t idle_ticks;    /* before the load starts: fills the bucket */
	uint64_t run_ticks;
	uint64_t step_ticks;
	uint64_t frame;
};

/*
 * Offers more than the cap at every step: police admits until a drop;
 * shape keeps a 64-frame queue topped up. Then checks the accounting to
 * the bit-tick: level_at_start + rate x T == 8 x hz x passed + level_now,
 * with level_now below one frame, i.e. every token earned was spent.
 */
static void
run_saturated(const struct sat_cfg *c)
{
	struct pc_limits lim = limits(c->cap_bps, c->burst_bytes, c->mode, 1000000000);
	struct pc_bucket b;
	uint64_t t0 = 123456789, t, end, passed = 0;
	uint32_t q = 0;
	pc_u128 start_level, cost = (pc_u128)c->frame * 8 * c->hz;

	assert_true((pc_u128)c->cap_bps * c->step_ticks + cost <= (pc_u128)c->burst_bytes * 8 * c->hz);
	pc_bucket_init(&b, &lim, c->hz, t0);
	t = t0 + c->idle_ticks;
	/* a refill at the start of the load */
	(void)pc_bucket_admit(&b, t, 0);
	start_level = b.level;
	if (c->idle_ticks >= ticks_to_pay(c->burst_bytes, c->cap_bps, c->hz))
		assert_u128_eq(start_level, b.depth);
	end = t + c->run_ticks;
	/* offer at the start too, so a full bucket is spent before it could overflow */
	for (;; t = end - t > c->step_ticks ? t + c->step_ticks : end) {
		if (c->mode == PC_MODE_POLICE) {
			while (pc_bucket_admit(&b, t, c->frame) == PC_VERDICT_PASS)
				passed += c->frame;
			if (t == end)
				break;
			continue;
		}
		while (q > 0 && pc_bucket_release(&b, t, c->frame)) {
			passed += c->frame;
			q--;
		}
		while (q < 64) {
			enum pc_verdict v = pc_bucket_admit(&b, t, c->frame);
			if (v == PC_VERDICT_PASS)
				passed += c->frame;
			else if (v == PC_VERDICT_QUEUE)
				q++;
			else
				break;
		}
		assert_int_equal(b.backlog_frames, q);
		if (t == end)
			break;
	}

	pc_u128 earned = start_level + (pc_u128)c->cap_bps * c->run_ticks;
	pc_u128 spent = (pc_u128)passed * 8 * c->hz;
	double secs_run = (double)c->run_ticks / (double)c->hz;
	double ideal = ((double)c->cap_bps * secs_run + (double)start_level / (double)c->hz) / 8.0;
	double err = ((double)passed - ideal) / ideal;

	print_message("  %-6s cap=%" PRIu64 " bps hz=%" PRIu64 " %g s: passed %" PRIu64
		      " B, ideal %.1f B, error %.2e (short by %.3f frame)\n",
		      c->mode == PC_MODE_POLICE ? "police" : "shape", c->cap_bps, c->hz,
		      secs_run, passed, ideal, err,
		      (double)(earned - spent) / (double)cost);
	assert_true(spent <= earned);
	assert_u128_eq(earned - spent, b.level);
	assert_true(b.level < cost);
	assert_true(err <= 0.0 && err > -1e-3);
}

static void
test_long_run_accuracy(void **state)
{
	(void)state;
	static const enum pc_mode modes[] = { PC_MODE_POLICE, PC_MODE_SHAPE };

	for (size_t m = 0; m < 2; m++) {
		/* 1000 s at 1 Mbit/s, 60 s burst */
		struct sat_cfg slow = {
			.hz = HZ_ODD, .cap_bps = MBPS, .burst_bytes = 60 * MBPS / 8,
			.mode = modes[m], .idle_ticks = 0, .run_ticks = secs(1000, HZ_ODD),
			.step_ticks = secs(0.001, HZ_ODD), .frame = MAX_FRAME,
		};
		/* 10 s at 400 Gbit/s */
		struct sat_cfg fast = {
			.hz = HZ_TSC, .cap_bps = 400 * GBPS, .burst_bytes = 60 * 400 * GBPS / 8,
			.mode = modes[m], .idle_ticks = 0, .run_ticks = secs(10, HZ_TSC),
			.step_ticks = secs(0.00001, HZ_TSC), .frame = MAX_FRAME,
		};
		/* 100 s at 1 Gbit/s after 60 s idle: the full 60 s burst, then the cap */
		struct sat_cfg burst = {
			.hz = HZ_NS, .cap_bps = GBPS, .burst_bytes = 60 * GBPS / 8,
			.mode = modes[m], .idle_ticks = secs(60, HZ_NS), .run_ticks = secs(100, HZ_NS),
			.step_ticks = secs(0.0001, HZ_NS), .frame = 1500,
		};
		run_saturated(&slow);
		run_saturated(&fast);
		run_saturated(&burst);
	}
	/* 1.6 Tbit/s at an awkward clock, jumbo frames */
	struct sat_cfg tera = {
		.hz = HZ_ODD, .cap_bps = 1600 * GBPS, .burst_bytes = 60 * 1600 * GBPS / 8,
		.mode = PC_MODE_POLICE, .idle_ticks = 0, .run_ticks = secs(2, HZ_ODD),
		.step_ticks = secs(0.00001, HZ_ODD), .frame = 9000,
	};
	run_saturated(&tera);
}

/* ---- exact arithmetic ------------------------------------------------------------ */

static void
test_init_exact(void **state)
{
	(void)state;
	struct pc_limits lim = limits(GBPS, 1000, PC_MODE_SHAPE, 1000000);
	struct pc_bucket b;

	memset(&b, 0xa5, sizeof(b));
	pc_bucket_init(&b, &lim, HZ_NS, 777);
	assert_u128_eq(b.level, 0);
	assert_u128_eq(b.depth, (pc_u128)8000 * HZ_NS);
	/* 1 ms = 1e6 ticks, x 1e9 bit/s */
	assert_u128_eq(b.delay_budget, (pc_u128)1000000 * 1000000000);
	assert_int_equal(b.last, 777);
	assert_int_equal(b.backlog_bytes, 0);
	assert_int_equal(b.backlog_frames, 0);
	assert_int_equal(b.rate_bps, GBPS);
	assert_int_equal(b.hz, HZ_NS);
	assert_int_equal(b.mode, PC_MODE_SHAPE);
	assert_int_equal(pc_bucket_level_bytes(&b), 0);

	/* 1 ms at 2.9 GHz is 2 900 000 ticks */
	pc_bucket_init(&b, &lim, HZ_TSC, 0);
	assert_u128_eq(b.delay_budget, (pc_u128)2900000 * 1000000000);
	assert_u128_eq(b.depth, (pc_u128)8000 * HZ_TSC);
	/* 1 ms at 1 000 000 007 Hz is 1 000 000.007 ticks: rounded down */
	pc_bucket_init(&b, &lim, HZ_ODD, 0);
	assert_u128_eq(b.delay_budget, (pc_u128)1000000 * 1000000000);

	/* queue_delay x hz overflows 64 bits: 1 h at 2.9 GHz, 400 Gbit/s */
	lim = limits(400 * GBPS, 1000, PC_MODE_SHAPE, 3600 * PC_NS_PER_SEC);
	pc_bucket_init(&b, &lim, HZ_TSC, 0);
	assert_u128_eq(b.delay_budget, (pc_u128)3600 * HZ_TSC * (400 * GBPS));

	/* absurd inputs saturate instead of wrapping */
	lim = limits(UINT64_MAX, 1000, PC_MODE_SHAPE, UINT64_MAX);
	pc_bucket_init(&b, &lim, HZ_TSC, 0);
	assert_u128_eq(b.delay_budget, ~(pc_u128)0);
}

static void
test_starts_empty(void **state)
{
	(void)state;

	for (size_t h = 0; h < N_HZ; h++) {
		struct pc_limits lim = limits(GBPS, 1 << 20, PC_MODE_POLICE, 0);
		struct pc_bucket b;

		pc_bucket_init(&b, &lim, all_hz[h], 5000);
		assert_int_equal(pc_bucket_admit(&b, 5000, MIN_FRAME), PC_VERDICT_DROP);
		/* a "restart": a fresh bucket on a full one's clock grants nothing either */
		pc_bucket_init(&b, &lim, all_hz[h], UINT64_MAX - 10);
		assert_int_equal(pc_bucket_admit(&b, UINT64_MAX - 10, 1), PC_VERDICT_DROP);
		assert_u128_eq(b.level, 0);
	}
}

/* A frame passes at exactly the tick its cost is earned, not one before. */
static void
test_first_pass_exact_tick(void **state)
{
	(void)state;
	static const uint64_t rates[] = {
		1, 999, 1 * MBPS, 7 * MBPS + 3, GBPS, 400 * GBPS, 1600 * GBPS,
	};
	static const uint64_t sizes[] = { 1, MIN_FRAME, 1001, MAX_FRAME, 9000 };

	for (size_t h = 0; h < N_HZ; h++)
		for (size_t r = 0; r < sizeof(rates) / sizeof(rates[0]); r++)
			for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
				uint64_t hz = all_hz[h], t0 = 1ULL << 40;
				struct pc_limits lim = limits(rates[r], 10000, PC_MODE_POLICE, 0);
				struct pc_bucket b;
				uint64_t need = ticks_to_pay(sizes[s], rates[r], hz);

				pc_bucket_init(&b, &lim, hz, t0);
				assert_int_equal(pc_bucket_admit(&b, t0 + need - 1, sizes[s]),
						 PC_VERDICT_DROP);
				assert_int_equal(pc_bucket_admit(&b, t0 + need, sizes[s]),
						 PC_VERDICT_PASS);
				/* the rounding remainder stays in the bucket: less than one tick's worth */
				assert_u128_eq(b.level, (pc_u128)rates[r] * need -
					       (pc_u128)sizes[s] * 8 * hz);
				assert_true(b.level < rates[r]);
			}
	/* 1 bit/s: a 64-byte frame needs 512 s, to the tick */
	struct pc_limits lim = limits(1, MIN_FRAME, PC_MODE_POLICE, 0);
	struct pc_bucket b;

	pc_bucket_init(&b, &lim, HZ_NS, 0);
	assert_int_equal(pc_bucket_admit(&b, 512 * HZ_NS - 1, MIN_FRAME), PC_VERDICT_DROP);
	assert_int_equal(pc_bucket_admit(&b, 512 * HZ_NS, MIN_FRAME), PC_VERDICT_PASS);
	assert_u128_eq(b.level, 0);
}

static void
test_level_bytes(void **state)
{
	(void)state;
	struct pc_limits lim = limits(GBPS, 100, PC_MODE_POLICE, 0);
	struct pc_bucket b;

	pc_bucket_init(&b, &lim, HZ_TSC, 0);
	b.level = (pc_u128)10 * 8 * HZ_TSC - 1;
	assert_int_equal(pc_bucket_level_bytes(&b), 9);
	b.level += 1;
	assert_int_equal(pc_bucket_level_bytes(&b), 10);
	(void)pc_bucket_admit(&b, UINT64_MAX, 0);
	assert_int_equal(pc_bucket_level_bytes(&b), 100);
}

/* ---- extremes: rates, idle, clocks ------------------------------------------------ */

static void
test_extreme_rates_60s_burst(void **state)
{
	(void)state;
	static const uint64_t rates[] = { 8, 1000, MBPS, GBPS, 400 * GBPS, 1600 * GBPS };

	for (size_t h = 0; h < N_HZ; h++)
		for (size_t r = 0; r < sizeof(rates) / sizeof(rates[0]); r++) {
			uint64_t hz = all_hz[h], rate = rates[r];
			uint64_t burst = rate * 60 / 8;  /* 60 s at the cap */
			struct pc_limits lim = limits(rate, burst, PC_MODE_POLICE, 0);
			struct pc_bucket b;
			uint64_t t = 42;

			pc_bucket_init(&b, &lim, hz, t);
			assert_u128_eq(b.depth, (pc_u128)burst * 8 * hz);
			assert_u128_eq(b.depth / 8 / hz, burst);
			if (burst == 0)
				continue;
			/* after 59 s idle: 59 s worth */
			t += secs(59, hz);
			assert_int_equal(pc_bucket_admit(&b, t, burst), PC_VERDICT_DROP);
			assert_u128_eq(b.level, (pc_u128)rate * secs(59, hz));
			/* a day of idle: exactly full, not more */
			t += secs(86400, hz);
			assert_int_equal(pc_bucket_admit(&b, t, burst + 1), PC_VERDICT_DROP);
			assert_u128_eq(b.level, b.depth);
			assert_int_equal(pc_bucket_level_bytes(&b), burst);
			assert_int_equal(pc_bucket_admit(&b, t, burst), PC_VERDICT_PASS);
			assert_int_equal(pc_bucket_admit(&b, t, 1), PC_VERDICT_DROP);
			assert_u128_eq(b.level, 0);
		}
	/* 1.6 Tbit/s x 60 s x 2.9 GHz needs 78 bits: past 64, far from 128 */
	struct pc_limits lim = limits(1600 * GBPS, 1600 * GBPS * 60 / 8, PC_MODE_POLICE, 0);
	struct pc_bucket b;

	pc_bucket_init(&b, &lim, HZ_TSC, 0);
	assert_true(b.depth > (pc_u128)UINT64_MAX);
	assert_true(b.depth < ((pc_u128)1 << 80));
}

static void
test_idle_clamps_at_depth(void **state)
{
	(void)state;
	static const uint64_t idles[] = {
		3600ULL * HZ_TSC,           /* an hour */
		30ULL * 86400 * HZ_TSC,     /* a month */
		UINT64_MAX - 1,             /* the whole clock */
	};

	for (size_t i = 0; i < sizeof(idles) / sizeof(idles[0]); i++) {
		/* the largest product the refill can see: 64-bit rate x 64-bit ticks */
		struct pc_limits lim = limits(UINT64_MAX, 1ULL << 40, PC_MODE_SHAPE, 1000);
		struct pc_bucket b;

		pc_bucket_init(&b, &lim, HZ_TSC, 1);
		assert_int_equal(pc_bucket_admit(&b, 1 + idles[i], 1ULL << 40), PC_VERDICT_PASS);
		assert_u128_eq(b.level, 0);
		assert_int_equal(pc_bucket_admit(&b, 1 + idles[i], 1), PC_VERDICT_QUEUE);

		lim = limits(GBPS, 1 << 20, PC_MODE_POLICE, 0);
		pc_bucket_init(&b, &lim, HZ_TSC, 1);
		b.level = b.depth - 1;
		(void)pc_bucket_admit(&b, 1 + idles[i], 0);
		assert_u128_eq(b.level, b.depth);
	}
}

static void
test_clock_stalls(void **state)
{
	(void)state;
	struct pc_limits lim = limits(GBPS, 10 * MAX_FRAME, PC_MODE_POLICE, 0);
	struct pc_bucket b;
	uint64_t t = secs(1, HZ_ODD);

	pc_bucket_init(&b, &lim, HZ_ODD, 0);
	for (int i = 0; i < 10; i++)
		assert_int_equal(pc_bucket_admit(&b, t, MAX_FRAME), PC_VERDICT_PASS);
	/* the same instant, a million times: nothing accrues */
	for (int i = 0; i < 1000000; i++)
		assert_int_equal(pc_bucket_admit(&b, t, 1), PC_VERDICT_DROP);
	assert_u128_eq(b.level, 0);
	assert_int_equal(b.last, t);
	/* one tick later, one tick's worth */
	(void)pc_bucket_admit(&b, t + 1, 0);
	assert_u128_eq(b.level, GBPS);
}

static void
test_clock_backwards(void **state)
{
	(void)state;

	for (size_t h = 0; h < N_HZ; h++) {
		uint64_t hz = all_hz[h], t = secs(1000, hz);
		struct pc_limits lim = limits(GBPS, 1 << 20, PC_MODE_POLICE, 0);
		struct pc_bucket b;

		pc_bucket_init(&b, &lim, hz, t - secs(0.001, hz));
		(void)pc_bucket_admit(&b, t, 0);
		pc_u128 before = b.level;

		assert_u128_eq(before, (pc_u128)GBPS * secs(0.001, hz));
		/* a step back of 500 s creates nothing, and does not move `last` back */
		(void)pc_bucket_admit(&b, t - secs(500, hz), 0);
		assert_u128_eq(b.level, before);
		assert_int_equal(b.last, t);
		/* returning to t + 1 is worth one tick, not 500 s */
		(void)pc_bucket_admit(&b, t + 1, 0);
		assert_u128_eq(b.level, before + GBPS);
		/* spending works at a stale time; a refund does not appear later */
		assert_int_equal(pc_bucket_admit(&b, t - 5, MIN_FRAME), PC_VERDICT_PASS);
		(void)pc_bucket_admit(&b, t + 1, 0);
		assert_u128_eq(b.level, before + GBPS - (pc_u128)MIN_FRAME * 8 * hz);
	}

	/* shape: the wait is measured on the clock, so ticks before `last` count */
	struct pc_limits lim = limits(GBPS, 1 << 20, PC_MODE_SHAPE, 10000);
	struct pc_bucket b;

	pc_bucket_init(&b, &lim, HZ_NS, 1000000);
	/* 125 bytes: 1000 ns from `last`; but `now` is 9500 ns before it */
	assert_int_equal(pc_bucket_admit(&b, 1000000 - 9500, 125), PC_VERDICT_DROP);
	assert_int_equal(pc_bucket_admit(&b, 1000000 - 9000, 125), PC_VERDICT_QUEUE);
	assert_int_equal(b.backlog_bytes, 125);
}

/* A clock almost 2^64 ticks behind `last`, at a 64-bit rate: saturates, no wrap. */
static void
test_admit_far_behind_no_wrap(void **state)
{
	(void)state;
	struct pc_limits lim = limits(UINT64_MAX, 1ULL << 40, PC_MODE_SHAPE, PC_NS_PER_SEC);
	struct pc_bucket b;

	pc_bucket_init(&b, &lim, HZ_TSC, UINT64_MAX);
	assert_int_equal(pc_bucket_admit(&b, UINT64_MAX, 1ULL << 36), PC_VERDICT_QUEUE);
	/* (2^64 - 1)^2 bit-ticks of idle plus the backlog exceed 2^128 */
	assert_int_equal(pc_bucket_admit(&b, 0, 1), PC_VERDICT_DROP);
	assert_int_equal(b.backlog_bytes, 1ULL << 36);
	assert_int_equal(b.last, UINT64_MAX);
}

/* ---- shaping semantics -------------------------------------------------------------- */

static void
test_shape_delay_boundary(void **state)
{
	(void)state;
	/* 1 Gbit/s at 1 GHz: one bit per tick; 10 us = 1250 bytes of waiting */
	struct pc_limits lim = limits(GBPS, 64 * 1024, PC_MODE_SHAPE, 10000);
	struct pc_bucket b;
	uint64_t t0 = 5000;

	pc_bucket_init(&b, &lim, HZ_NS, t0);
	assert_int_equal(pc_bucket_admit(&b, t0, 1250), PC_VERDICT_QUEUE);
	/* one byte more than queue_delay can pay for */
	assert_int_equal(pc_bucket_admit(&b, t0, 1), PC_VERDICT_DROP);
	assert_int_equal(b.backlog_bytes, 1250);
	assert_int_equal(b.backlog_frames, 1);
	/* and it leaves exactly at the deadline */
	assert_false(pc_bucket_release(&b, t0 + 9999, 1250));
	assert_true(pc_bucket_release(&b, t0 + 10000, 1250));
	assert_int_equal(b.backlog_bytes, 0);
	assert_int_equal(b.backlog_frames, 0);
	assert_u128_eq(b.level, 0);

	/*
	 * At 1 000 000 007 Hz, 10 us is 10 000.07 ticks, so 10 000 ticks may
	 * be waited; 1250 bytes need 10 000.07 of them: refused. 1249 fit.
	 */
	pc_bucket_init(&b, &lim, HZ_ODD, t0);
	assert_int_equal(pc_bucket_admit(&b, t0, 1250), PC_VERDICT_DROP);
	assert_int_equal(pc_bucket_admit(&b, t0, 1249), PC_VERDICT_QUEUE);
	assert_false(pc_bucket_release(&b, t0 + ticks_to_pay(1249, GBPS, HZ_ODD) - 1, 1249));
	assert_true(pc_bucket_release(&b, t0 + ticks_to_pay(1249, GBPS, HZ_ODD), 1249));
	assert_true(ticks_to_pay(1249, GBPS, HZ_ODD) <= 10000);
}

static void
test_shape_fifo(void **state)
{
	(void)state;
	struct pc_limits lim = limits(GBPS, 64 * 1024, PC_MODE_SHAPE, 1000000);
	struct pc_bucket b;

	pc_bucket_init(&b, &lim, HZ_NS, 0);
	/* 1000 ns in: 125 bytes of tokens */
	assert_int_equal(pc_bucket_admit(&b, 1000, 1000), PC_VERDICT_QUEUE);
	/* a small frame the bucket could pay for must still wait its turn */
	assert_int_equal(pc_bucket_admit(&b, 1000, MIN_FRAME), PC_VERDICT_QUEUE);
	assert_u128_eq(b.level, (pc_u128)125 * 8 * HZ_NS);
	assert_int_equal(b.backlog_frames, 2);
	assert_int_equal(b.backlog_bytes, 1000 + MIN_FRAME);
	/* the head leaves at 8000 ns, the second 512 ns later */
	assert_false(pc_bucket_release(&b, 7999, 1000));
	assert_true(pc_bucket_release(&b, 8000, 1000));
	assert_false(pc_bucket_release(&b, 8511, MIN_FRAME));
	assert_true(pc_bucket_release(&b, 8512, MIN_FRAME));
	/* an empty queue: straight through again */
	(void)pc_bucket_admit(&b, 20000, 0);
	assert_int_equal(pc_bucket_admit(&b, 20000, MIN_FRAME), PC_VERDICT_PASS);
}

static void
test_shape_unqueue(void **state)
{
	(void)state;
	/* 10 us of queue = 1250 bytes at 1 Gbit/s, 1 GHz */
	struct pc_limits lim = limits(GBPS, 64 * 1024, PC_MODE_SHAPE, 10000);
	struct pc_bucket b;

	pc_bucket_init(&b, &lim, HZ_NS, 0);
	assert_int_equal(pc_bucket_admit(&b, 0, 1000), PC_VERDICT_QUEUE);
	assert_int_equal(pc_bucket_admit(&b, 0, 250), PC_VERDICT_QUEUE);
	assert_int_equal(pc_bucket_admit(&b, 0, 1), PC_VERDICT_DROP);
	/* the caller had no room for the 250: given back, room for them again */
	pc_bucket_unqueue(&b, 250);
	assert_int_equal(b.backlog_bytes, 1000);
	assert_int_equal(b.backlog_frames, 1);
	assert_int_equal(pc_bucket_admit(&b, 0, 250), PC_VERDICT_QUEUE);
	assert_u128_eq(b.level, 0);
}

static void
test_police_never_queues(void **state)
{
	(void)state;
	struct pc_limits lim = limits(MBPS, 4 * MAX_FRAME, PC_MODE_POLICE, 1000000000);
	struct pc_bucket b;
	uint64_t rs = (seed ^ 0x901ce) | 1, t = 0, passed = 0, dropped = 0;

	pc_bucket_init(&b, &lim, HZ_TSC, 0);
	for (int i = 0; i < 200000; i++) {
		t += rnd_range(&rs, 0, 2 * secs(0.0001, HZ_TSC));
		enum pc_verdict v = pc_bucket_admit(&b, t, rnd_range(&rs, MIN_FRAME, MAX_FRAME));
		assert_int_not_equal(v, PC_VERDICT_QUEUE);
		passed += v == PC_VERDICT_PASS;
		dropped += v == PC_VERDICT_DROP;
	}
	assert_int_equal(b.backlog_frames, 0);
	assert_int_equal(b.backlog_bytes, 0);
	assert_true(passed > 0 && dropped > 0);
}

static void
test_shape_oversized_frame(void **state)
{
	(void)state;
	struct pc_limits lim = limits(GBPS, 1000, PC_MODE_SHAPE, PC_NS_PER_SEC);
	struct pc_bucket b;

	pc_bucket_init(&b, &lim, HZ_NS, 0);
	/* deeper than the bucket: it could never be paid for, so it never queues */
	assert_int_equal(pc_bucket_admit(&b, 0, 1001), PC_VERDICT_DROP);
	assert_int_equal(b.backlog_frames, 0);
	/* even with the bucket full */
	assert_int_equal(pc_bucket_admit(&b, PC_NS_PER_SEC, 1001), PC_VERDICT_DROP);
	assert_int_equal(pc_bucket_admit(&b, PC_NS_PER_SEC, 1000), PC_VERDICT_PASS);
	/* police: the same frame is simply over the cap */
	lim.mode = PC_MODE_POLICE;
	pc_bucket_init(&b, &lim, HZ_NS, 0);
	assert_int_equal(pc_bucket_admit(&b, PC_NS_PER_SEC, 1001), PC_VERDICT_DROP);
}

/* ---- reconfiguration ---------------------------------------------------------------- */

static void
test_reconfigure_clamps_level(void **state)
{
	(void)state;
	struct pc_limits big = limits(GBPS, 1 << 20, PC_MODE_POLICE, 0);
	struct pc_limits small = limits(GBPS, 4096, PC_MODE_POLICE, 0);
	struct pc_bucket b;
	uint64_t t = secs(10, HZ_TSC);

	pc_bucket_init(&b, &big, HZ_TSC, 0);
	(void)pc_bucket_admit(&b, t, 0);
	assert_u128_eq(b.level, b.depth);
	pc_bucket_reconfigure(&b, &small, t);
	assert_u128_eq(b.depth, (pc_u128)4096 * 8 * HZ_TSC);
	assert_u128_eq(b.level, b.depth);
	assert_int_equal(pc_bucket_level_bytes(&b), 4096);
	assert_int_equal(pc_bucket_admit(&b, t, 4097), PC_VERDICT_DROP);
	assert_int_equal(pc_bucket_admit(&b, t, 4096), PC_VERDICT_PASS);
	/* growing the burst back grants nothing at once */
	pc_bucket_reconfigure(&b, &big, t);
	assert_u128_eq(b.level, 0);
	assert_u128_eq(b.depth, (pc_u128)(1 << 20) * 8 * HZ_TSC);
}

static void
test_reconfigure_rate_from_now(void **state)
{
	(void)state;

	for (size_t h = 0; h < N_HZ; h++) {
		uint64_t hz = all_hz[h], t1 = 1000 + secs(0.001, hz), t2 = t1 + secs(0.002, hz);
		struct pc_limits fast = limits(GBPS, 1 << 20, PC_MODE_POLICE, 0);
		struct pc_limits slow = limits(10 * MBPS, 1 << 20, PC_MODE_SHAPE, 50000);
		struct pc_bucket b;

		pc_bucket_init(&b, &fast, hz, 1000);
		pc_bucket_reconfigure(&b, &slow, t1);
		/* tokens up to t1 were earned at the old rate */
		pc_u128 at_t1 = (pc_u128)GBPS * (t1 - 1000);
		assert_u128_eq(b.level, at_t1);
		assert_int_equal(b.last, t1);
		assert_int_equal(b.rate_bps, 10 * MBPS);
		assert_int_equal(b.mode, PC_MODE_SHAPE);
		assert_u128_eq(b.delay_budget,
			       (pc_u128)(50000 * (pc_u128)hz / HZ_NS) * (10 * MBPS));
		/* and after it at the new one */
		(void)pc_bucket_admit(&b, t2, 0);
		assert_u128_eq(b.level, at_t1 + (pc_u128)(10 * MBPS) * (t2 - t1));

		/* the first frame the old tokens cannot cover passes at the new rate's tick */
		uint64_t owned = pc_bucket_level_bytes(&b);
		uint64_t frame = owned + 100;
		pc_u128 missing = (pc_u128)frame * 8 * hz - b.level;
		uint64_t need = (uint64_t)((missing + 10 * MBPS - 1) / (10 * MBPS));

		assert_int_equal(pc_bucket_admit(&b, t2 + need - 1, frame), PC_VERDICT_QUEUE);
		assert_false(pc_bucket_release(&b, t2 + need - 1, frame));
		assert_true(pc_bucket_release(&b, t2 + need, frame));
	}
}

static void
test_reconfigure_keeps_backlog(void **state)
{
	(void)state;
	struct pc_limits a = limits(GBPS, 64 * 1024, PC_MODE_SHAPE, 100000);
	struct pc_limits half = limits(GBPS / 2, 64 * 1024, PC_MODE_SHAPE, 100000);
	struct pc_bucket b;

	pc_bucket_init(&b, &a, HZ_NS, 0);
	for (int i = 0; i < 3; i++)
		assert_int_equal(pc_bucket_admit(&b, 0, 1000), PC_VERDICT_QUEUE);
	/* 4000 ns in: half the head is paid (4000 bits) */
	pc_bucket_reconfigure(&b, &half, 4000);
	assert_int_equal(b.backlog_frames, 3);
	assert_int_equal(b.backlog_bytes, 3000);
	assert_u128_eq(b.level, (pc_u128)4000 * GBPS);
	/* the other 4000 bits at 0.5 bit/ns: 8000 ns more */
	assert_false(pc_bucket_release(&b, 11999, 1000));
	assert_true(pc_bucket_release(&b, 12000, 1000));
	assert_false(pc_bucket_release(&b, 27999, 1000));
	assert_true(pc_bucket_release(&b, 28000, 1000));
	assert_int_equal(b.backlog_frames, 1);
	/* police from now on: what is queued still drains, nothing new queues */
	half.mode = PC_MODE_POLICE;
	pc_bucket_reconfigure(&b, &half, 28000);
	assert_int_equal(pc_bucket_admit(&b, 1000000, MIN_FRAME), PC_VERDICT_DROP);
	assert_true(pc_bucket_release(&b, 1000000, 1000));
	assert_int_equal(b.backlog_frames, 0);
	assert_int_equal(pc_bucket_admit(&b, 1000000, MIN_FRAME), PC_VERDICT_PASS);
}

/*
 * The burst shrinks under a queued frame: it leaves once the bucket is full
 * and the rest of its cost is paid by ticks that earn nothing afterwards,
 * so the long run still pays every bit.
 */
static void
test_reconfigure_shrinks_under_queued_frame(void **state)
{
	(void)state;
	struct pc_limits a = limits(GBPS, 64 * 1024, PC_MODE_SHAPE, 100000);
	struct pc_limits tiny = limits(GBPS, 1000, PC_MODE_SHAPE, 100000);
	struct pc_bucket b;

	pc_bucket_init(&b, &a, HZ_NS, 0);
	assert_int_equal(pc_bucket_admit(&b, 0, 1500), PC_VERDICT_QUEUE);
	pc_bucket_reconfigure(&b, &tiny, 10);
	assert_u128_eq(b.level, (pc_u128)10 * GBPS);
	/* full at 8000 ns: not before */
	assert_false(pc_bucket_release(&b, 7999, 1500));
	assert_true(pc_bucket_release(&b, 8000, 1500));
	assert_int_equal(b.backlog_frames, 0);
	assert_u128_eq(b.level, 0);
	/* 500 bytes owed = 4000 ns during which nothing accrues */
	assert_int_equal(b.last, 12000);
	(void)pc_bucket_admit(&b, 11000, 0);
	assert_u128_eq(b.level, 0);
	/* and a new frame's wait counts the debt: 100 bytes at 12 800 ns */
	assert_int_equal(pc_bucket_admit(&b, 11000, 100), PC_VERDICT_QUEUE);
	assert_false(pc_bucket_release(&b, 12799, 100));
	assert_true(pc_bucket_release(&b, 12800, 100));
	/* in all, 1600 bytes by 12 800 ns at 1 bit/ns: every bit paid */
	assert_u128_eq(b.level, 0);
}

/* ---- a run of frames decided at once ---------------------------------------- */

static void
assert_same_bucket(const struct pc_bucket *a, const struct pc_bucket *b)
{
	assert_u128_eq(a->level, b->level);
	assert_int_equal(a->last, b->last);
	assert_int_equal(a->backlog_frames, b->backlog_frames);
	assert_int_equal(a->backlog_bytes, b->backlog_bytes);
}

/*
 * pc_bucket_admit_run on a run of frames of one arrival time, falling back
 * to one by one when it refuses (as the worker does), against the same
 * frames admitted one by one: the same frames pass and the buckets stay
 * identical to the bit-tick, in police and shape mode, with the backlog
 * drained now and then. A run it passes is a run every frame of which
 * would have passed.
 */
static void
test_admit_run_matches_one_by_one(void **state)
{
	(void)state;
	static const enum pc_mode modes[] = { PC_MODE_POLICE, PC_MODE_SHAPE };
	uint64_t rs = (seed ^ 0x2a11) | 1;
	unsigned whole = 0, split = 0;

	for (size_t h = 0; h < N_HZ; h++)
		for (size_t m = 0; m < 2; m++) {
			struct pc_limits lim = limits(GBPS, 16 * 1024, modes[m], 100000);
			struct pc_bucket run, one;
			uint64_t t = 1000;
			uint32_t len[32], fifo[4096];
			unsigned head = 0, tail = 0;

			pc_bucket_init(&run, &lim, all_hz[h], t);
			pc_bucket_init(&one, &lim, all_hz[h], t);
			for (unsigned r = 0; r < 20000; r++) {
				unsigned n = (unsigned)rnd_range(&rs, 1, 32);
				uint64_t bytes = 0;
				bool all_pass = true;
				t += all_hz[h] / 1000000 * rnd_range(&rs, 0, 40);
				for (unsigned k = 0; k < n; k++) {
					len[k] = (uint32_t)rnd_range(&rs, MIN_FRAME, MAX_FRAME);
					bytes += len[k];
				}
				bool passed = pc_bucket_admit_run(&run, t, bytes);
				for (unsigned k = 0; k < n; k++) {
					enum pc_verdict v = pc_bucket_admit(&one, t, len[k]);
					all_pass = all_pass && v == PC_VERDICT_PASS;
					if (v == PC_VERDICT_QUEUE)
						fifo[tail++ % 4096] = len[k];
					if (!passed)
						assert_int_equal(pc_bucket_admit(&run, t, len[k]),
								 v);
				}
				assert_true(!passed || all_pass);
				whole += passed;
				split += !passed;
				/* the shaping queue's head leaves when it is paid for */
				assert_int_equal(tail - head, one.backlog_frames);
				while (head != tail && rnd_range(&rs, 0, 3) != 0) {
					uint32_t l = fifo[head % 4096];
					bool out = pc_bucket_release(&one, t, l);
					assert_int_equal(pc_bucket_release(&run, t, l), out);
					if (!out)
						break;
					head++;
				}
				assert_same_bucket(&run, &one);
			}
		}
	/* at the edge: a level of exactly the run's cost passes it, one byte more does not */
	struct pc_limits lim = limits(GBPS, 16 * 1024, PC_MODE_POLICE, 0);
	struct pc_bucket b;
	pc_bucket_init(&b, &lim, HZ_NS, 0);
	assert_false(pc_bucket_admit_run(&b, 3000 * 8, 3001));
	assert_u128_eq(b.level, (pc_u128)3000 * 8 * HZ_NS);
	assert_true(pc_bucket_admit_run(&b, 3000 * 8, 3000));
	assert_u128_eq(b.level, 0);
	print_message("  %u runs passed whole, %u one by one\n", whole, split);
	/* both ways were taken, or the comparison proved nothing */
	assert_true(whole > 1000 && split > 1000);
}

int
main(void)
{
	const char *env = getenv("PODCAP_TEST_SEED");
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_init_exact),
		cmocka_unit_test(test_starts_empty),
		cmocka_unit_test(test_first_pass_exact_tick),
		cmocka_unit_test(test_level_bytes),
		cmocka_unit_test(test_extreme_rates_60s_burst),
		cmocka_unit_test(test_idle_clamps_at_depth),
		cmocka_unit_test(test_clock_stalls),
		cmocka_unit_test(test_clock_backwards),
		cmocka_unit_test(test_admit_far_behind_no_wrap),
		cmocka_unit_test(test_shape_delay_boundary),
		cmocka_unit_test(test_shape_fifo),
		cmocka_unit_test(test_shape_unqueue),
		cmocka_unit_test(test_police_never_queues),
		cmocka_unit_test(test_shape_oversized_frame),
		cmocka_unit_test(test_reconfigure_clamps_level),
		cmocka_unit_test(test_reconfigure_rate_from_now),
		cmocka_unit_test(test_reconfigure_keeps_backlog),
		cmocka_unit_test(test_reconfigure_shrinks_under_queued_frame),
		cmocka_unit_test(test_envelope_checker),
		cmocka_unit_test(test_envelope_random),
		cmocka_unit_test(test_long_run_accuracy),
		cmocka_unit_test(test_admit_run_matches_one_by_one),
	};

	seed = env ? strtoull(env, NULL, 0) : (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32);
	if (seed == 0)
		seed = 1;
	print_message("seed %" PRIu64 " (PODCAP_TEST_SEED=%" PRIu64 " repeats this run)\n",
		      seed, seed);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
