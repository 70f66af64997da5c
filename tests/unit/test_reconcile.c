/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The tap's boundary slices (docs/reconcile.md, "Boundary slices") against
 * a brute force: frames at random times, idle before boundaries and in
 * bursts across them, pass a token bucket held exactly to cap and burst (an
 * honest shaper, which counts each in the window of its own clock); a tap
 * counts each in the window of its clock, offset from the shaper's by up
 * to the bound and jittered per frame, and also in the slice of that
 * window's start or end it falls in. Then: no honest pair disagrees,
 * whatever the offset within the slice; every lie larger than what the
 * slices allow (the new 2τ, computed here from the counts alone) is caught
 * in the window it was told; a slice shorter than the offset, or one the
 * tap says began late, is not used (an honest pair still agrees); and the
 * bound is tighter than the one without slices.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <sodium.h>

#include "verify/tap.h"
#include "log/record.h"

#include "testutil.h"

#define W_NS  1000000000ull /* 1 s windows */
#define NWIN  10
#define T0    (1704067200ull * W_NS)
#define CAP   80000000ull /* 80 Mbit/s: 10 MB a window, 100 kB in 10 ms */
#define BURST 400000ull
#define MAXF  1522u
#define ANYF  16384u /* the verifier's max_frame without a pod map */
#define LINE  100000000000ull

struct frame {
	int64_t t_ns; /* true time, from T0 */
	uint32_t len;
	bool passed;
};

/* xorshift64*, seeded once from libsodium and printed (PC_TEST_SEED repeats a run). */
static uint64_t rng_state;

static void
rng_seed(void)
{
	const char *fixed = getenv("PC_TEST_SEED");

	rng_state = fixed != NULL ? strtoull(fixed, NULL, 0)
				  : (uint64_t)randombytes_random() << 32 | randombytes_random();
	if (rng_state == 0)
		rng_state = 1;
	printf("seed %llu (PC_TEST_SEED)\n", (unsigned long long)rng_state);
}

static uint64_t
rnd(uint64_t n)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return n ? (rng_state * 0x2545f4914f6cdd1dull) % n : 0;
}

static struct frame frames[400000];

/*
 * Offered frames in time order: random gaps, and before some boundaries a
 * pause long enough to fill the bucket, then back-to-back frames across
 * the boundary (the worst case for the bound without slices). Those an
 * exact token bucket passes are marked.
 */
static size_t
offer(uint64_t spread_ns)
{
	size_t n = 0, max = sizeof(frames) / sizeof(frames[0]);
	uint64_t t = 0;

	while (n < max) {
		/* about 17 MB/s offered against the cap's 10 */
		uint64_t gap = rnd(3) == 0 ? rnd(200000) : rnd(40000);
		uint64_t k = t / W_NS + 1, to_b = k * W_NS - t;
		/* idle until just before the boundary, then a burst across it */
		if (to_b > spread_ns && to_b < spread_ns + 100000 && rnd(2) == 0)
			gap = to_b - rnd(spread_ns + 1);
		t += gap;
		if (t >= NWIN * W_NS)
			break;
		frames[n].t_ns = (int64_t)t;
		frames[n].len = 60 + (uint32_t)rnd(MAXF - 60 + 1);
		n++;
	}
	/* tokens in bytes x 8e9, so that cap x ns adds exactly */
	unsigned __int128 full = (unsigned __int128)BURST * 8000000000ull, tok = full;
	int64_t last = 0;
	for (size_t i = 0; i < n; i++) {
		tok += (unsigned __int128)CAP * (uint64_t)(frames[i].t_ns - last);
		tok = tok < full ? tok : full;
		last = frames[i].t_ns;
		unsigned __int128 need = (unsigned __int128)frames[i].len * 8000000000ull;
		frames[i].passed = tok >= need;
		if (frames[i].passed)
			tok -= need;
	}
	return n;
}

/* What one observer counted per window, and (a tap) in each window's first and last slice. */
struct counts {
	uint64_t bytes[NWIN], frames[NWIN];
	uint64_t first_bytes[NWIN], first_frames[NWIN];
	uint64_t last_bytes[NWIN], last_frames[NWIN];
};

/*
 * Counts the frames passed (or all offered) by the window of t + offset +
 * jitter, clamped into the windows logged, and the slices of slice_ns at
 * each end of a window, as the tap's workers do: the first from the
 * window's start, the last up to its end.
 */
static void
count(size_t n, bool offered, int64_t offset, int64_t jitter, uint64_t slice_ns, struct counts *c)
{
	memset(c, 0, sizeof(*c));
	for (size_t i = 0; i < n; i++) {
		if (!offered && !frames[i].passed)
			continue;
		int64_t j = jitter ? (int64_t)rnd(2 * (uint64_t)jitter + 1) - jitter : 0;
		int64_t t = frames[i].t_ns + offset + j;
		uint64_t k = t < 0 ? 0 : (uint64_t)t / W_NS;
		if (k >= NWIN)
			k = NWIN - 1;
		c->bytes[k] += frames[i].len;
		c->frames[k]++;
		if (t >= 0 && (uint64_t)t - k * W_NS < slice_ns) {
			c->first_bytes[k] += frames[i].len;
			c->first_frames[k]++;
		}
		if ((int64_t)((k + 1) * W_NS) - t <= (int64_t)slice_ns) {
			c->last_bytes[k] += frames[i].len;
			c->last_frames[k]++;
		}
	}
}

struct scenario {
	uint64_t offset_ns, slice_ns; /* the verifier's offset; the tap's slices (0: none) */
	uint8_t side;                 /* PC_ROLE_FABRIC_TAP (sees passed) or PC_ROLE_POD_TAP */
	uint64_t lie_at, lie;         /* the shaper's window lie_at told lie bytes short */
	uint64_t short_at; /* the tap flags this window's last slice short (NWIN: none) */
	uint64_t plain_at; /* the tap writes this window's OBSERVE without slices */
};

static void
feed(struct pc_reconcile *rc, int tap, const struct pc_record *r)
{
	uint8_t buf[1024];
	size_t n = pc_record_encode(r, buf, sizeof(buf));

	assert_true(n > 0);
	if (tap < 0)
		pc_reconcile_shaper(rc, buf, n);
	else
		pc_reconcile_tap_record(rc, tap, buf, n);
}

/* The tap's OBSERVE of window k: with its slices of pod-a up unless sc says not. */
static void
feed_observe(struct pc_reconcile *rc, int tap, uint64_t k, const struct counts *t,
	     const struct scenario *sc)
{
	struct pc_record_seen seen = { .name = "up0" };
	struct pc_record_slice sl = { .pod = "pod-a" };
	struct pc_record o = { .type = PC_REC_OBSERVE,
			       .appliance_id = "t",
			       .window_len_ns = W_NS,
			       .window_start_ns = T0 + k * W_NS,
			       .window_count = 1,
			       .observe.side = sc->side,
			       .observe.nseen = 1,
			       .observe.seen = &seen };

	if (sc->slice_ns != 0 && k != sc->plain_at) {
		o.type = PC_REC_OBSERVE_SLICES;
		o.observe.slice_ns = sc->slice_ns;
		o.observe.slice_flags = k == sc->short_at ? PC_SLICE_LAST_SHORT : 0;
		sl.first_bytes[PC_DIR_UP] = t->first_bytes[k];
		sl.first_frames[PC_DIR_UP] = t->first_frames[k];
		sl.last_bytes[PC_DIR_UP] = t->last_bytes[k];
		sl.last_frames[PC_DIR_UP] = t->last_frames[k];
		/* a worker that saw the end armed late counted less than crossed in it */
		if (k == sc->short_at)
			sl.last_bytes[PC_DIR_UP] = sl.last_frames[PC_DIR_UP] = 0;
		o.observe.nslices = 1;
		o.observe.slices = &sl;
	}
	feed(rc, tap, &o);
}

/* Window k of the shaper (tap < 0: what it says passed, and dropped) or of the tap. */
static void
feed_window(struct pc_reconcile *rc, int tap, uint64_t k, uint64_t bytes, uint64_t frames_n,
	    uint64_t drop_bytes, uint64_t drop_frames)
{
	struct pc_record_pod pod = { .id = "pod-a",
				     .uplink = "up0",
				     .cap_bps = CAP,
				     .burst_bytes = BURST,
				     .mode = PC_MODE_POLICE };
	struct pc_record_link link = { .name = "up0" };
	struct pc_record r = { .type = PC_REC_WINDOW,
			       .appliance_id = "x",
			       .window_len_ns = W_NS,
			       .window_start_ns = T0 + k * W_NS,
			       .window_count = 1,
			       .npods = 1,
			       .pods = &pod,
			       .nlinks = 1,
			       .links = &link };

	pod.dir[PC_DIR_UP].pass_bytes = bytes;
	pod.dir[PC_DIR_UP].pass_frames = frames_n;
	pod.dir[PC_DIR_UP].drop_bytes[0] = drop_bytes;
	pod.dir[PC_DIR_UP].drop_frames[0] = drop_frames;
	feed(rc, tap, &r);
}

struct outcome {
	uint64_t disagree;
	char text[16384];
};

/*
 * Reconciles: the shaper says s passed of what was offered (o; NULL when
 * it dropped nothing), the tap saw t.
 */
static void
run(const struct counts *s, const struct counts *o, const struct counts *t,
    const struct scenario *sc, struct outcome *out)
{
	struct pc_reconcile_policy p = { .offset_ns = sc->offset_ns, .line_bps = LINE };
	struct pc_reconcile *rc = pc_reconcile_new(&p, NULL, 0);

	assert_non_null(rc);
	for (uint64_t k = 0; k < NWIN; k++) {
		uint64_t lie = k == sc->lie_at ? sc->lie : 0;
		uint64_t db = o != NULL ? o->bytes[k] - s->bytes[k] : 0;
		uint64_t df = o != NULL ? o->frames[k] - s->frames[k] : 0;
		/* a pod-side tap sees what was offered: the lie hides drops */
		if (sc->side == PC_ROLE_POD_TAP)
			feed_window(rc, -1, k, s->bytes[k], s->frames[k], db - lie, df);
		else
			feed_window(rc, -1, k, s->bytes[k] - lie, s->frames[k], db, df);
	}
	int tap = pc_reconcile_tap(rc, "brute-force");
	assert_int_equal(tap, 0);
	for (uint64_t k = 0; k < NWIN; k++) {
		feed_window(rc, tap, k, t->bytes[k], t->frames[k], 0, 0);
		feed_observe(rc, tap, k, t, sc);
	}
	out->disagree = pc_reconcile_finish(rc);
	FILE *f = fmemopen(out->text, sizeof(out->text), "w");
	assert_non_null(f);
	pc_reconcile_print_text(rc, f);
	fclose(f);
	pc_reconcile_free(rc);
}

static uint64_t
min_u64(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

/* What crosses within the offset of a boundary, for the side's direction, without slices. */
static uint64_t
old_bound(const struct scenario *sc)
{
	uint64_t line = pc_reconcile_boundary_bytes(LINE, 0, sc->offset_ns, ANYF);

	if (sc->side == PC_ROLE_POD_TAP)
		return line; /* what was offered: only the line holds it (police: no queue) */
	return min_u64(pc_reconcile_boundary_bytes(CAP, BURST, sc->offset_ns, ANYF), line);
}

/*
 * The largest lie window k can hide, from the tap's counts alone (the
 * rule restated, not the verifier's code): above, the tap's own first and
 * last slices; below, the last slice of the window before and the first of
 * the one after; each no more than the bound without slices.
 */
static uint64_t
new_threshold(const struct counts *t, uint64_t k, const struct scenario *sc)
{
	uint64_t e = old_bound(sc);

	return min_u64(e, t->first_bytes[k]) + min_u64(e, t->last_bytes[k]) +
	    min_u64(e, t->last_bytes[k - 1]) + min_u64(e, t->first_bytes[k + 1]);
}

/* The offset drawn within the bound, and the jitter that keeps offset + jitter within it. */
static void
draw_offset(uint64_t bound, int64_t *off, int64_t *jitter)
{
	*off = (int64_t)rnd(bound + 1) * (rnd(2) ? 1 : -1);
	*jitter = (int64_t)(bound - (uint64_t)(*off < 0 ? -*off : *off)) / 2;
}

/* Honest pairs never disagree, whatever the offset within a slice at least as long. */
static void
test_honest(void **state)
{
	struct counts s, o, t;
	struct outcome out;

	(void)state;
	for (int r = 0; r < 60; r++) {
		uint64_t bound = 1 + rnd(20000000); /* up to 20 ms */
		struct scenario sc = { .offset_ns = bound,
				       .slice_ns = bound + rnd(2) * rnd(bound),
				       .side = r % 3 == 2 ? PC_ROLE_POD_TAP : PC_ROLE_FABRIC_TAP,
				       .lie_at = NWIN,
				       .short_at = NWIN,
				       .plain_at = NWIN };
		int64_t off, jitter;
		size_t n = offer(bound);
		draw_offset(bound, &off, &jitter);
		bool offered = sc.side == PC_ROLE_POD_TAP;
		count(n, false, 0, 0, 0, &s);
		count(n, true, 0, 0, 0, &o);
		count(n, offered, off, jitter, sc.slice_ns, &t);
		run(&s, &o, &t, &sc, &out);
		if (out.disagree != 0)
			fail_msg("offset %lld ns, jitter %lld, bound %llu, slice %llu: %s",
				 (long long)off, (long long)jitter, (unsigned long long)bound,
				 (unsigned long long)sc.slice_ns, out.text);
		assert_non_null(strstr(out.text, "9 windows agree"));
	}
}

/*
 * Every lie above what the slices allow is caught in its window, and that
 * is less than the bound without slices allows (which lets the same lie
 * pass once it is below 2τ of the old rule).
 */
static void
test_lies_caught(void **state)
{
	struct counts s, o, t;
	struct outcome out;
	char want[128];
	int tighter = 0;

	(void)state;
	for (int r = 0; r < 60; r++) {
		uint64_t bound = 1 + rnd(20000000);
		struct scenario sc = { .offset_ns = bound,
				       .slice_ns = bound,
				       .side = r % 3 == 2 ? PC_ROLE_POD_TAP : PC_ROLE_FABRIC_TAP,
				       .short_at = NWIN,
				       .plain_at = NWIN };
		int64_t off, jitter;
		size_t n = offer(bound);
		draw_offset(bound, &off, &jitter);
		bool offered = sc.side == PC_ROLE_POD_TAP;
		count(n, false, 0, 0, 0, &s);
		count(n, true, 0, 0, 0, &o);
		count(n, offered, off, jitter, sc.slice_ns, &t);
		/* window 1's neighbour before is the tap's first, never evidence: from 2 */
		sc.lie_at = 2 + rnd(NWIN - 3);
		uint64_t x = new_threshold(&t, sc.lie_at, &sc);
		sc.lie = x + 1 + rnd(1000);
		uint64_t room =
		    offered ? o.bytes[sc.lie_at] - s.bytes[sc.lie_at] : s.bytes[sc.lie_at];
		if (sc.lie > room)
			continue; /* a window too quiet to hide that much */
		run(&s, &o, &t, &sc, &out);
		snprintf(want, sizeof(want),
			 "reconcile: tap 1: pod pod-a up window 2024-01-01T00:00:0%lluZ",
			 (unsigned long long)sc.lie_at);
		if (out.disagree == 0 || strstr(out.text, want) == NULL)
			fail_msg("a lie of %llu B in window %llu (slices allow %llu) went "
				 "unnoticed: %s",
				 (unsigned long long)sc.lie, (unsigned long long)sc.lie_at,
				 (unsigned long long)x, out.text);
		/* without slices a lie is certain to be caught only above 2τ = 4E */
		if (2 * x < 4 * old_bound(&sc))
			tighter++;
	}
	/* most windows' slices allow less than half of that */
	assert_true(tighter > 30);
}

/*
 * The rule at its edge, the tap exactly at the slices: window 3's tap
 * count over the shaper's by all of its own slices, and windows 2 and 4
 * under by the slices beside them. One byte more is caught.
 */
static void
test_slice_bound(void **state)
{
	struct counts s, t;
	struct outcome out;
	struct scenario sc = { .offset_ns = 10000000,
			       .slice_ns = 10000000,
			       .side = PC_ROLE_FABRIC_TAP,
			       .lie_at = NWIN,
			       .short_at = NWIN,
			       .plain_at = NWIN };

	(void)state;
	memset(&s, 0, sizeof(s));
	for (int k = 0; k < NWIN; k++) {
		s.bytes[k] = 5000000;
		s.frames[k] = 5000;
	}
	t = s;
	for (int k = 0; k < NWIN; k++) {
		t.first_bytes[k] = t.last_bytes[k] = 20000;
		t.first_frames[k] = t.last_frames[k] = 20;
	}
	/* 40 kB the tap counted in window 3's slices crossed in windows 2 and 4 for the shaper */
	t.bytes[3] += 40000;
	t.frames[3] += 40;
	t.bytes[2] -= 20000;
	t.frames[2] -= 20;
	t.bytes[4] -= 20000;
	t.frames[4] -= 20;
	run(&s, NULL, &t, &sc, &out);
	if (out.disagree != 0)
		fail_msg("%s", out.text);
	/*
	 * The report's largest lie that could have hidden: window 1's, whose
	 * neighbour before is the tap's first (never evidence), so the bound
	 * there is the bucket's 516384 B; its other sides are slices of 20 kB.
	 */
	if (strstr(out.text,
		   "a lie of more than 576384 B (5.764 % of cap x window) would have "
		   "been caught in any of them (9 bounded by the tap's slices)") == NULL)
		fail_msg("%s", out.text);
	/* ... and one byte more than its slices hold is a lie */
	t.bytes[3]++;
	run(&s, NULL, &t, &sc, &out);
	assert_int_equal(out.disagree, 1);
	assert_non_null(strstr(out.text, "window 2024-01-01T00:00:03Z: the tap saw 40001 B more"));
	assert_non_null(strstr(out.text, "more than the 40000 B the clocks allow"));
	/* without slices the same pair agrees: the bound is the bucket's */
	sc.slice_ns = 0;
	run(&s, NULL, &t, &sc, &out);
	assert_int_equal(out.disagree, 0);
}

/*
 * Slices the verifier must not trust: shorter than the offset it is told
 * (a frame may cross outside them), or a last slice the tap says began
 * late. The rule without slices holds there, so honest pairs still agree.
 */
static void
test_slices_unused(void **state)
{
	struct counts s, t;
	struct outcome out;

	(void)state;
	for (int r = 0; r < 30; r++) {
		uint64_t bound = 2000000 + rnd(18000000);
		struct scenario sc = { .offset_ns = bound,
				       .slice_ns = bound / 4,
				       .side = PC_ROLE_FABRIC_TAP,
				       .lie_at = NWIN,
				       .short_at = NWIN,
				       .plain_at = NWIN };
		size_t n = offer(bound);
		/* the tap a whole offset late: what it counted early in a window is beyond its slice */
		count(n, false, 0, 0, 0, &s);
		count(n, false, (int64_t)bound, 0, sc.slice_ns, &t);
		run(&s, NULL, &t, &sc, &out);
		if (out.disagree != 0)
			fail_msg("slice %llu of offset %llu used: %s",
				 (unsigned long long)sc.slice_ns, (unsigned long long)bound,
				 out.text);
		/* a last slice the tap says began late (here: counted empty) */
		sc.slice_ns = bound;
		sc.short_at = 1 + rnd(NWIN - 2);
		count(n, false, -(int64_t)bound, 0, sc.slice_ns, &t);
		run(&s, NULL, &t, &sc, &out);
		if (out.disagree != 0)
			fail_msg("a short slice in window %llu used: %s",
				 (unsigned long long)sc.short_at, out.text);
		/* older taps' windows, among windows with slices, keep the rule without them */
		sc.short_at = NWIN;
		sc.plain_at = 1 + rnd(NWIN - 2);
		run(&s, NULL, &t, &sc, &out);
		assert_int_equal(out.disagree, 0);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_honest),
		cmocka_unit_test(test_lies_caught),
		cmocka_unit_test(test_slice_bound),
		cmocka_unit_test(test_slices_unused),
	};

	rng_seed();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
