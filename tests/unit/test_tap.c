/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Reconciliation (src/verify/tap*.c) against a brute force: frames at
 * random times pass a token bucket held exactly to cap and burst (an
 * honest shaper), the shaper counts each in the window of its own clock, a
 * fabric-side tap in the window of its clock, offset from the shaper's by
 * up to the bound and jittered per frame. Then: an honest run never
 * disagrees (the bound is tight enough never to fail), with no offset they
 * agree exactly, and any lie larger than twice the bound is caught in the
 * window it was told (sound). Windows the tap did not fully see are
 * unreconciled, never agreement.
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
#define NWIN  8
#define T0    (1704067200ull * W_NS)
#define CAP   80000000ull /* 80 Mbit/s: 10 MB a window */
#define BURST 200000ull
#define MAXF  1522u

struct frame {
	uint64_t t_ns; /* true time, from T0 */
	uint32_t len;
};

/*
 * xorshift64*, seeded once from libsodium and printed: the brute force draws
 * millions of numbers, and randombytes_random() is a system call each.
 */
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

/* A pod's limits in one window: those of a reload in force from it. */
struct limits {
	uint64_t cap, burst;
};

static struct limits
limits_at(const struct limits *lim, uint64_t k)
{
	return lim != NULL ? lim[k < NWIN ? k : NWIN - 1] : (struct limits){ CAP, BURST };
}

/*
 * Offered frames, sorted by time, no closer than the line rate lets them
 * (line_bps 0: any closer); those an exact token bucket passes are marked.
 * The bucket earns at the cap of the window it is in and holds at most that
 * window's burst: a reload carries its level, clamped to the new depth.
 */
static size_t
offer_at(struct frame *f, size_t max, bool *passed, const struct limits *lim, uint64_t line_bps)
{
	size_t n = 0;
	uint64_t t = 0;

	while (n < max) {
		/* bursts of back-to-back frames and pauses, crowding the boundaries */
		uint64_t gap = rnd(2000) == 0 ? rnd(W_NS / 4) : rnd(20000);
		uint64_t wire = n > 0 && line_bps
		    ? (f[n - 1].len * 8000000000ull + line_bps - 1) / line_bps
		    : 0;
		t += gap > wire ? gap : wire;
		if (t >= NWIN * W_NS)
			break;
		f[n].t_ns = t;
		f[n].len = 60 + (uint32_t)rnd(MAXF - 60 + 1);
		n++;
	}
	/* tokens in bytes x 8e9, so that cap x ns adds exactly */
	unsigned __int128 tok = (unsigned __int128)limits_at(lim, 0).burst * 8000000000ull;
	uint64_t last = 0;
	for (size_t i = 0; i < n; i++) {
		while (last < f[i].t_ns) {
			struct limits l = limits_at(lim, last / W_NS);
			uint64_t to = (last / W_NS + 1) * W_NS;
			to = to < f[i].t_ns ? to : f[i].t_ns;
			unsigned __int128 full = (unsigned __int128)l.burst * 8000000000ull;
			tok += (unsigned __int128)l.cap * (to - last);
			tok = tok < full ? tok : full;
			last = to;
		}
		unsigned __int128 full =
		    (unsigned __int128)limits_at(lim, last / W_NS).burst * 8000000000ull;
		tok = tok < full ? tok : full;
		unsigned __int128 need = (unsigned __int128)f[i].len * 8000000000ull;
		passed[i] = tok >= need;
		if (passed[i])
			tok -= need;
	}
	return n;
}

static size_t
offer(struct frame *f, size_t max, bool *passed)
{
	return offer_at(f, max, passed, NULL, 0);
}

struct counts {
	uint64_t bytes[NWIN + 2], frames[NWIN + 2];
};

/* Counts frames by the window of t + shift (clamped into the windows logged). */
static void
count(const struct frame *f, const bool *passed, size_t n, int64_t offset, int64_t jitter,
      struct counts *c)
{
	memset(c, 0, sizeof(*c));
	for (size_t i = 0; i < n; i++) {
		if (!passed[i])
			continue;
		int64_t j = jitter ? (int64_t)rnd(2 * (uint64_t)jitter + 1) - jitter : 0;
		int64_t t = (int64_t)f[i].t_ns + offset + j;
		uint64_t k = t < 0 ? 0 : (uint64_t)t / W_NS;
		if (k >= NWIN)
			k = NWIN - 1;
		c->bytes[k] += f[i].len;
		c->frames[k]++;
	}
}

/* One reconciliation: the policy, and what the two logs hold besides the counts. */
/* What one log declares besides its limits. */
struct decl {
	const char *uplink;          /* its pod's uplink; NULL: up0 */
	bool two_links;              /* its uplinks are up0 and up1, not its pod's alone */
	uint64_t cap;                /* its pod's cap, when not the window's (0) */
	const struct pc_config *map; /* the declared map its records name, or NULL */
};

struct scenario {
	uint64_t offset_ns;
	uint64_t line_bps;        /* --tap-line-rate; 0: 100 Gbit/s */
	const struct limits *lim; /* each window's limits; NULL: CAP and BURST throughout */
	uint64_t lie_at, lie;     /* the shaper's window lie_at told lie bytes short (NWIN: none) */
	uint64_t lost_at;         /* the tap's ports lost frames in this window (NWIN: none) */
	bool interleave;          /* ATTEST, RELOAD and DECLARE records among the tap's windows */
	struct decl shaper, tap;  /* what each log declares */
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

/*
 * A record of the tap's that says nothing of what it saw, with the cursor
 * at window k: a quote, a reload (of the same limits) or its declaration.
 */
static void
feed_other(struct pc_reconcile *rc, int tap, uint8_t type, uint64_t k, struct limits lim)
{
	struct pc_record_pod pod = { .id = "pod-a",
				     .uplink = "up0",
				     .cap_bps = lim.cap,
				     .burst_bytes = lim.burst,
				     .mode = PC_MODE_POLICE };
	static struct pc_record_attest a = { .key_kind = PC_KEY_FILE,
					     .quote_len = 1,
					     .sig_len = 1,
					     .pcr_alg = PC_TPM_ALG_SHA256,
					     .pcr_mask = 1 };
	struct pc_record r = { .type = type,
			       .appliance_id = "t",
			       .window_len_ns = W_NS,
			       .window_start_ns = T0 + k * W_NS };

	if (type == PC_REC_ATTEST)
		r.attest = &a;
	if (type == PC_REC_RELOAD) {
		r.npods = 1;
		r.pods = &pod;
	}
	if (type == PC_REC_DECLARE) {
		r.declare.not_before_ns = T0;
		r.declare.not_after_ns = T0 + NWIN * W_NS;
	}
	feed(rc, tap, &r);
}

/*
 * Window k of the shaper (tap < 0) or of the tap, then the tap's OBSERVE of
 * it; `between` is a record the tap logs before that OBSERVE (0: none).
 */
static void
feed_window(struct pc_reconcile *rc, int tap, uint64_t k, uint64_t bytes, uint64_t frames,
	    uint64_t lost, uint8_t between, struct limits lim, const struct decl *dc)
{
	const char *up = dc->uplink != NULL ? dc->uplink : "up0";
	struct pc_record_pod pod = { .id = "pod-a",
				     .cap_bps = dc->cap ? dc->cap : lim.cap,
				     .burst_bytes = lim.burst,
				     .mode = PC_MODE_POLICE };
	struct pc_record_link links[2];
	struct pc_record_seen seen = { .missed = { lost, 0 } };
	struct pc_record r = { .type = PC_REC_WINDOW,
			       .appliance_id = "x",
			       .window_len_ns = W_NS,
			       .window_start_ns = T0 + k * W_NS,
			       .window_count = 1,
			       .npods = 1,
			       .pods = &pod,
			       .nlinks = dc->two_links ? 2 : 1,
			       .links = links };

	memset(links, 0, sizeof(links));
	snprintf(pod.uplink, sizeof(pod.uplink), "%s", up);
	snprintf(links[0].name, sizeof(links[0].name), "%s", dc->two_links ? "up0" : up);
	snprintf(links[1].name, sizeof(links[1].name), "up1");
	snprintf(seen.name, sizeof(seen.name), "%s", links[0].name);
	if (dc->map != NULL)
		pc_config_digest(dc->map, r.podmap_digest);
	pod.dir[PC_DIR_UP].pass_bytes = bytes;
	pod.dir[PC_DIR_UP].pass_frames = frames;
	feed(rc, tap, &r);
	if (tap < 0)
		return;
	if (between != 0)
		feed_other(rc, tap, between, k + 1, lim);
	struct pc_record o = { .type = PC_REC_OBSERVE,
			       .appliance_id = "t",
			       .window_len_ns = W_NS,
			       .window_start_ns = T0 + k * W_NS,
			       .window_count = 1,
			       .observe.side = PC_ROLE_FABRIC_TAP,
			       .observe.nseen = 1,
			       .observe.seen = &seen };
	feed(rc, tap, &o);
}

/*
 * The records an attested tap whose map was reloaded logs after window k:
 * a quote after windows 1 and 5, and between window 6 and its OBSERVE (the
 * ledger thread appends a quote once the WINDOW is in a checkpoint, which
 * may be before the OBSERVE is queued); a reload and its declaration after
 * window 3.
 */
static void
feed_tap_others(struct pc_reconcile *rc, int tap, uint64_t k, struct limits lim)
{
	if (k == 1 || k == 5)
		feed_other(rc, tap, PC_REC_ATTEST, k + 1, lim);
	if (k == 3) {
		feed_other(rc, tap, PC_REC_RELOAD, k + 1, lim);
		feed_other(rc, tap, PC_REC_DECLARE, k + 1, lim);
	}
}

struct outcome {
	uint64_t disagree;
	bool refused; /* the tap was found no tap of this shaper's */
	char text[16384];
};

/* Reconciles shaper counts s with tap counts t as sc says. */
static void
run(const struct counts *s, const struct counts *t, const struct scenario *sc, struct outcome *out)
{
	struct pc_reconcile_policy p = { .offset_ns = sc->offset_ns,
					 .line_bps =
					     sc->line_bps ? sc->line_bps : 100000000000ull };
	const struct pc_config *maps[2];
	size_t nmaps = 0;

	if (sc->shaper.map != NULL)
		maps[nmaps++] = sc->shaper.map;
	if (sc->tap.map != NULL)
		maps[nmaps++] = sc->tap.map;
	struct pc_reconcile *rc = pc_reconcile_new(&p, maps, nmaps);
	assert_non_null(rc);
	for (uint64_t k = 0; k < NWIN; k++) {
		uint64_t b = s->bytes[k] - (k == sc->lie_at ? sc->lie : 0);
		feed_window(rc, -1, k, b, s->frames[k], 0, 0, limits_at(sc->lim, k), &sc->shaper);
	}
	int tap = pc_reconcile_tap(rc, "brute-force");
	assert_int_equal(tap, 0);
	for (uint64_t k = 0; k < NWIN; k++) {
		uint8_t between = sc->interleave && k == 6 ? PC_REC_ATTEST : 0;
		feed_window(rc, tap, k, t->bytes[k], t->frames[k], k == sc->lost_at ? 3 : 0,
			    between, limits_at(sc->lim, k), &sc->tap);
		if (sc->interleave)
			feed_tap_others(rc, tap, k, limits_at(sc->lim, k + 1));
	}
	/* as podcap-verify does: a tap that is not this shaper's is refused, not compared */
	struct pc_error err;
	out->refused = pc_reconcile_tap_pairs(rc, tap, &err) < 0;
	if (out->refused)
		pc_reconcile_tap_refuse(rc, tap, err.msg);
	out->disagree = pc_reconcile_finish(rc);
	FILE *f = fmemopen(out->text, sizeof(out->text), "w");
	assert_non_null(f);
	pc_reconcile_print_text(rc, f);
	fclose(f);
	pc_reconcile_free(rc);
}

/*
 * Reconciles shaper counts s (window `lie_at` told `lie` bytes short) with
 * tap counts t; the tap lost frames in window `lost_at` (none if NWIN).
 */
static void
reconcile(const struct counts *s, const struct counts *t, uint64_t offset_ns, uint64_t lie_at,
	  uint64_t lie, uint64_t lost_at, struct outcome *out)
{
	struct scenario sc = {
		.offset_ns = offset_ns, .lie_at = lie_at, .lie = lie, .lost_at = lost_at
	};

	run(s, t, &sc, out);
}

static struct frame frames[200000];
static bool passed[200000];

/* Honest runs with random offsets within the bound never disagree; with none they agree exactly. */
static void
test_honest(void **state)
{
	struct counts s, t;
	struct outcome out;

	(void)state;
	for (int run = 0; run < 40; run++) {
		size_t n = offer(frames, sizeof(frames) / sizeof(frames[0]), passed);
		uint64_t bound = 1 + rnd(50000000); /* up to 50 ms */
		int64_t off = (int64_t)rnd(bound + 1) * (rnd(2) ? 1 : -1);
		int64_t jitter = (int64_t)(bound - (uint64_t)(off < 0 ? -off : off)) / 2;
		count(frames, passed, n, 0, 0, &s);
		count(frames, passed, n, off, jitter, &t);
		reconcile(&s, &t, bound, NWIN, 0, NWIN, &out);
		if (out.disagree != 0)
			fail_msg("offset %lld ns (bound %llu): %s", (long long)off,
				 (unsigned long long)bound, out.text);
		/* window 0 is the tap's first: never evidence */
		assert_non_null(strstr(out.text, "the tap started in it"));
		assert_non_null(strstr(out.text, "7 windows agree"));
	}
	size_t n = offer(frames, sizeof(frames) / sizeof(frames[0]), passed);
	count(frames, passed, n, 0, 0, &s);
	count(frames, passed, n, 0, 0, &t);
	reconcile(&s, &t, 0, NWIN, 0, NWIN, &out);
	assert_int_equal(out.disagree, 0);
	assert_non_null(strstr(out.text, "largest difference 0 B"));
	/* and with no offset allowed, one byte hidden is caught */
	reconcile(&s, &t, 0, 3, 1, NWIN, &out);
	assert_int_equal(out.disagree, 1);
	assert_non_null(strstr(out.text, "pod pod-a up window 2024-01-01T00:00:03Z"));
	assert_non_null(
	    strstr(out.text, "the tap saw 1 B more than the shaper says passed (+0 frames)"));
}

/* A lie of more than twice the bound in one window is caught there, named and sized. */
static void
test_lies_caught(void **state)
{
	struct counts s, t;
	struct outcome out;
	char want[128];

	(void)state;
	for (int run = 0; run < 40; run++) {
		size_t n = offer(frames, sizeof(frames) / sizeof(frames[0]), passed);
		uint64_t bound = 1 + rnd(20000000);
		int64_t off = (int64_t)rnd(bound + 1) * (rnd(2) ? 1 : -1);
		count(frames, passed, n, 0, 0, &s);
		count(frames, passed, n, off, 0, &t);
		uint64_t e = pc_reconcile_boundary_bytes(CAP, BURST, bound, 16384);
		uint64_t k = 1 + rnd(NWIN - 1);
		uint64_t lie = 4 * e + 1 + rnd(1000);
		if (lie > s.bytes[k])
			continue; /* a window too quiet to hide that much */
		reconcile(&s, &t, bound, k, lie, NWIN, &out);
		if (out.disagree == 0)
			fail_msg("a lie of %llu B in window %llu went unnoticed: %s",
				 (unsigned long long)lie, (unsigned long long)k, out.text);
		snprintf(want, sizeof(want),
			 "reconcile: tap 1: pod pod-a up window 2024-01-01T00:00:0%lluZ",
			 (unsigned long long)k);
		if (strstr(out.text, want) == NULL)
			fail_msg("no failure names window %llu: %s", (unsigned long long)k,
				 out.text);
		assert_non_null(strstr(out.text, "more than the shaper says passed"));
		assert_non_null(strstr(out.text, "RECONCILE FAILED"));
	}
}

/* A window whose OBSERVE, or the one before's, records a loss is unreconciled, not a lie. */
static void
test_unseen_windows(void **state)
{
	struct counts s, t;
	struct outcome out;

	(void)state;
	size_t n = offer(frames, sizeof(frames) / sizeof(frames[0]), passed);
	count(frames, passed, n, 0, 0, &s);
	count(frames, passed, n, 0, 0, &t);
	/* the tap lost frames in window 4 and saw far less there */
	t.bytes[4] /= 2;
	t.frames[4] /= 2;
	reconcile(&s, &t, 0, NWIN, 0, 4, &out);
	assert_int_equal(out.disagree, 0);
	assert_non_null(strstr(out.text, "its ports lost frames"));
	/* window 5 too: a loss read at its start may be one of its frames */
	assert_non_null(strstr(out.text, "the window before it was not fully seen"));
	assert_non_null(strstr(out.text, "5 windows agree"));
	assert_non_null(strstr(out.text, "3 unreconciled"));
}

/* A tap that saw less than the shaper says (a lossy mirror) makes the window unreconciled, not a lie. */
static void
test_tap_short(void **state)
{
	struct counts s, t;
	struct outcome out;

	(void)state;
	size_t n = offer(frames, sizeof(frames) / sizeof(frames[0]), passed);
	count(frames, passed, n, 0, 0, &s);
	count(frames, passed, n, 0, 0, &t);
	t.bytes[3] -= 1000;
	t.frames[3] -= 1;
	reconcile(&s, &t, 0, NWIN, 0, NWIN, &out);
	assert_int_equal(out.disagree, 0);
	assert_non_null(strstr(out.text,
			       "unreconciled: tap 1: pod pod-a up window "
			       "2024-01-01T00:00:03Z: the tap saw 1000 B less"));
	assert_non_null(strstr(out.text, "6 windows agree"));
}

/*
 * A tap's quotes, reloads and declarations say nothing of what it saw: an
 * attested tap whose map was reloaded reconciles every window but its
 * first, and a lie of 2 tau + 1 in any of them, the windows right after
 * those records included, is caught there.
 */
static void
test_other_records(void **state)
{
	struct counts s, t;
	struct outcome out;
	char want[128];

	(void)state;
	for (int r = 0; r < 20; r++) {
		size_t n = offer(frames, sizeof(frames) / sizeof(frames[0]), passed);
		uint64_t bound = 1 + rnd(20000000);
		int64_t off = (int64_t)rnd(bound + 1) * (rnd(2) ? 1 : -1);
		count(frames, passed, n, 0, 0, &s);
		count(frames, passed, n, off, 0, &t);
		struct scenario sc = {
			.offset_ns = bound, .lie_at = NWIN, .lost_at = NWIN, .interleave = true
		};
		run(&s, &t, &sc, &out);
		if (out.disagree != 0 || strstr(out.text, "7 windows agree") == NULL)
			fail_msg("offset %lld ns (bound %llu): %s", (long long)off,
				 (unsigned long long)bound, out.text);
		/* tau = 2E at each window: E at both of its boundaries */
		uint64_t e = pc_reconcile_boundary_bytes(CAP, BURST, bound, 16384);
		static const uint64_t after[] = { 2, 4, 6, 7 };
		sc.lie_at = after[rnd(4)];
		sc.lie = 4 * e + 1;
		if (sc.lie > s.bytes[sc.lie_at])
			continue; /* a window too quiet to hide that much */
		run(&s, &t, &sc, &out);
		snprintf(want, sizeof(want),
			 "reconcile: tap 1: pod pod-a up window 2024-01-01T00:00:0%lluZ",
			 (unsigned long long)sc.lie_at);
		if (out.disagree == 0 || strstr(out.text, want) == NULL)
			fail_msg("a lie of %llu B in window %llu went unnoticed: %s",
				 (unsigned long long)sc.lie, (unsigned long long)sc.lie_at,
				 out.text);
	}
}

#define LINE      1000000000ull /* a 1 Gbit/s line: 1.25 MB in 10 ms */
#define BIG_BURST 20000000ull   /* more than the line carries within any offset tried */

static const struct limits big_burst[NWIN] = {
	{ CAP, BIG_BURST }, { CAP, BIG_BURST }, { CAP, BIG_BURST }, { CAP, BIG_BURST },
	{ CAP, BIG_BURST }, { CAP, BIG_BURST }, { CAP, BIG_BURST }, { CAP, BIG_BURST },
};

/*
 * What the shaper passes within D of a boundary is held by its bucket and
 * by the line: E = min(burst + cap x D, line x D) + max_frame. An honest
 * pair at that bound agrees (a window 2E over, between two E under: the
 * burst crossed both its boundaries late), one byte more is a lie.
 */
static void
test_line_bound(void **state)
{
	struct counts s, t;
	struct outcome out;
	char want[256];
	/* the line's 1.25 MB and one largest frame; the bucket would allow 20.1 MB */
	const uint64_t e = 1250000 + 16384;

	(void)state;
	assert_int_equal(pc_reconcile_boundary_bytes(LINE, 0, 10000000, 16384), e);
	for (int k = 0; k < NWIN; k++) {
		s.bytes[k] = t.bytes[k] = 5000000;
		s.frames[k] = t.frames[k] = 5000;
	}
	t.bytes[3] -= e;
	t.bytes[4] += 2 * e;
	t.bytes[5] -= e;
	struct scenario sc = { .offset_ns = 10000000,
			       .line_bps = LINE,
			       .lim = big_burst,
			       .lie_at = NWIN,
			       .lost_at = NWIN };
	run(&s, &t, &sc, &out);
	if (out.disagree != 0 || strstr(out.text, "7 windows agree") == NULL)
		fail_msg("an honest pair at the bound: %s", out.text);
	snprintf(want, sizeof(want), "largest difference %llu B, %llu B allowed",
		 (unsigned long long)(2 * e), (unsigned long long)(2 * e));
	assert_non_null(strstr(out.text, want));
	sc.lie_at = 4;
	sc.lie = 1;
	run(&s, &t, &sc, &out);
	assert_int_equal(out.disagree, 1);
	snprintf(want, sizeof(want),
		 "reconcile: tap 1: pod pod-a up window 2024-01-01T00:00:04Z: the tap saw %llu B "
		 "more than the shaper says passed (+0 frames), more than the %llu B the clocks "
		 "allow",
		 (unsigned long long)(2 * e + 1), (unsigned long long)(2 * e));
	if (strstr(out.text, want) == NULL)
		fail_msg("one byte over the bound: %s", out.text);
}

/*
 * The brute force with the line the binding limit: frames no closer than
 * 1 Gbit/s lets them, a bucket deeper than the line carries within the
 * offset. Honest pairs never disagree; lies of 2 tau + 1, tau of the line,
 * are caught.
 */
static void
test_line_honest(void **state)
{
	struct counts s, t;
	struct outcome out;

	(void)state;
	for (int r = 0; r < 30; r++) {
		size_t n =
		    offer_at(frames, sizeof(frames) / sizeof(frames[0]), passed, big_burst, LINE);
		uint64_t bound = 1 + rnd(20000000);
		int64_t off = (int64_t)rnd(bound + 1) * (rnd(2) ? 1 : -1);
		int64_t jitter = (int64_t)(bound - (uint64_t)(off < 0 ? -off : off)) / 2;
		count(frames, passed, n, 0, 0, &s);
		count(frames, passed, n, off, jitter, &t);
		struct scenario sc = { .offset_ns = bound,
				       .line_bps = LINE,
				       .lim = big_burst,
				       .lie_at = NWIN,
				       .lost_at = NWIN };
		run(&s, &t, &sc, &out);
		if (out.disagree != 0)
			fail_msg("offset %lld ns (bound %llu): %s", (long long)off,
				 (unsigned long long)bound, out.text);
		uint64_t e = pc_reconcile_boundary_bytes(LINE, 0, bound, 16384);
		sc.lie_at = 1 + rnd(NWIN - 1);
		sc.lie = 4 * e + 1;
		if (sc.lie > s.bytes[sc.lie_at])
			continue;
		run(&s, &t, &sc, &out);
		if (out.disagree == 0)
			fail_msg("a lie of %llu B in window %llu went unnoticed: %s",
				 (unsigned long long)sc.lie, (unsigned long long)sc.lie_at,
				 out.text);
	}
}

#define FAST       800000000ull /* 800 Mbit/s: 100 MB a window, 1 MB in 10 ms */
#define FAST_BURST 2000000ull

/* A reload that lowers the limits from window 4 on, in force in the shaper and the tap alike. */
static const struct limits lowered[NWIN] = {
	{ FAST, FAST_BURST }, { FAST, FAST_BURST }, { FAST, FAST_BURST }, { FAST, FAST_BURST },
	{ CAP, BURST },       { CAP, BURST },       { CAP, BURST },       { CAP, BURST },
};

/*
 * The tap's envelope across a reload that lowers the limits. Its window 4
 * counts what the shaper passed in the offset before it, under the old
 * limits (the old burst and the old cap for D), then the new cap over the
 * window and the offset after it: 2 MB + 1 MB + 10 MB + 100 kB and two
 * largest frames is honest; one byte more did not pass any bucket.
 */
static void
test_reload_envelope(void **state)
{
	struct counts s, t;
	struct outcome out;
	const uint64_t most = FAST_BURST + 1000000 + 10000000 + 100000 + 2 * 16384;

	(void)state;
	memset(&s, 0, sizeof(s));
	s.bytes[4] = most;
	s.frames[4] = most / 1000;
	t = s;
	struct scenario sc = {
		.offset_ns = 10000000, .lim = lowered, .lie_at = NWIN, .lost_at = NWIN
	};
	run(&s, &t, &sc, &out);
	if (out.disagree != 0)
		fail_msg("an honest tap across a reload: %s", out.text);
	s.bytes[4] = t.bytes[4] = most + 1;
	run(&s, &t, &sc, &out);
	assert_int_equal(out.disagree, 1);
	if (strstr(out.text,
		   "reconcile: tap 1: pod pod-a up: the tap saw 13132769 B pass from "
		   "2024-01-01T00:00:04Z to 2024-01-01T00:00:05Z, more than the "
		   "13132768 B") == NULL ||
	    strstr(out.text, "the cap did not hold") == NULL)
		fail_msg("one byte over the envelope: %s", out.text);
}

/*
 * Honest pairs whose limits change at random boundaries (a bucket's level
 * carried, clamped to the new depth) never fail.
 */
static void
test_reload_honest(void **state)
{
	/* caps the offered traffic holds to: the buckets run empty and full again */
	static const struct limits choice[] = {
		{ CAP, FAST_BURST }, { CAP / 10, BURST }, { CAP / 2, 500000 }, { CAP / 10, 1000000 }
	};
	struct limits lim[NWIN];
	struct counts s, t;
	struct outcome out;

	(void)state;
	for (int r = 0; r < 40; r++) {
		for (int k = 0; k < NWIN; k++)
			lim[k] = choice[rnd(4)];
		size_t n = offer_at(frames, sizeof(frames) / sizeof(frames[0]), passed, lim, 0);
		uint64_t bound = 1 + rnd(50000000);
		int64_t off = (int64_t)rnd(bound + 1) * (rnd(2) ? 1 : -1);
		int64_t jitter = (int64_t)(bound - (uint64_t)(off < 0 ? -off : off)) / 2;
		count(frames, passed, n, 0, 0, &s);
		count(frames, passed, n, off, jitter, &t);
		struct scenario sc = {
			.offset_ns = bound, .lim = lim, .lie_at = NWIN, .lost_at = NWIN
		};
		run(&s, &t, &sc, &out);
		if (out.disagree != 0)
			fail_msg("offset %lld ns (bound %llu): %s", (long long)off,
				 (unsigned long long)bound, out.text);
	}
}

/* A pod map of pod-a on up0, police, as the brute force's records say. */
static const char *const PAIR_MAP =
    "appliance:\n  id: %s\n%s"
    "window: 1s\n"
    "defaults:\n  cap: 80Mbps\n  burst: 200000B\n  mode: police\n"
    "uplinks:\n"
    "  - name: up0\n    pod_port: %s\n    fabric_port: 0000:3b:00.1\n"
    "pods:\n  - id: pod-a\n    uplink: up0\n    prefixes: [%s]\n";

static void
pair_map(struct pc_config *c, const char *id, const char *role, const char *port,
	 const char *prefix)
{
	char text[1024];

	snprintf(text, sizeof(text), PAIR_MAP, id, role, port, prefix);
	pc_test_load_map(c, text, id);
}

/* Idle windows, declared as sc says: refused with want, or reconciled when want is NULL. */
static void
expect_pairing(struct scenario *sc, const char *want)
{
	struct counts s, t;
	struct outcome out;

	memset(&s, 0, sizeof(s));
	memset(&t, 0, sizeof(t));
	sc->offset_ns = 10000000;
	sc->lie_at = sc->lost_at = NWIN;
	run(&s, &t, sc, &out);
	if (want == NULL) {
		if (out.refused || strstr(out.text, "\nreconciled: 14 windows agree") == NULL)
			fail_msg("the shaper's own tap: %s", out.text);
		return;
	}
	if (!out.refused || strstr(out.text, want) == NULL ||
	    strstr(out.text, "\nRECONCILE FAILED: 0 windows agree") == NULL)
		fail_msg("wanted \"%s\": %s", want, out.text);
}

/*
 * A tap is the shaper's only if it declares the shaper's uplinks and pods,
 * each on its uplink with its limits, and (maps known) the shaper's map
 * but for the appliance's own lines. Another appliance's tap whose pod has
 * the same id would agree over every idle window: it is refused, naming
 * what differs.
 */
static void
test_pairing(void **state)
{
	struct pc_config shaper, tap, other;

	(void)state;
	expect_pairing(&(struct scenario){ .tap = { .uplink = NULL } }, NULL);
	expect_pairing(&(struct scenario){ .tap = { .uplink = "up1" } },
		       "tap 1: brute-force, refused: window 2024-01-01T00:00:00Z: its uplinks are "
		       "up1, the shaper's up0");
	expect_pairing(&(struct scenario){ .shaper = { .two_links = true },
					   .tap = { .uplink = "up1", .two_links = true } },
		       "refused: window 2024-01-01T00:00:00Z: pod pod-a is on uplink up1 in the "
		       "tap's log, on up0 in the shaper's");
	expect_pairing(&(struct scenario){ .tap = { .cap = 2 * CAP } },
		       "refused: window 2024-01-01T00:00:00Z: pod pod-a has cap 160000000 bit/s, "
		       "burst 200000 B, police in the tap's log, cap 80000000 bit/s, burst 200000 "
		       "B, police in the shaper's");
	/* the maps: the tap's own id, role and ports, the shaper's pods */
	pair_map(&shaper, "sh", "", "0000:3b:00.0", "10.0.0.0/24");
	pair_map(&tap, "tap", "  role: fabric-tap\n", "net_pcap0,iface=t0", "10.0.0.0/24");
	expect_pairing(&(struct scenario){ .shaper = { .map = &shaper }, .tap = { .map = &tap } },
		       NULL);
	pair_map(&other, "other", "  role: fabric-tap\n", "0000:3b:00.0", "10.0.1.0/24");
	expect_pairing(&(struct scenario){ .shaper = { .map = &shaper }, .tap = { .map = &other } },
		       "refused: window 2024-01-01T00:00:00Z: its pod map (appliance other) is not "
		       "the shaper's (appliance sh): 'prefix 10.0.1.0/24' where the shaper's has "
		       "'prefix 10.0.0.0/24' (pod pod-a)");
	pc_config_free(&other);
	pair_map(&other, "other", "  role: pod-tap\n", "0000:3b:00.0", "10.0.0.0/24");
	expect_pairing(&(struct scenario){ .shaper = { .map = &shaper }, .tap = { .map = &other } },
		       "its pod map (appliance other) has appliance.role pod-tap, its OBSERVE "
		       "records are a fabric-tap's");
	expect_pairing(&(struct scenario){ .shaper = { .map = &tap }, .tap = { .map = &tap } },
		       "the shaper's pod map (appliance tap) has appliance.role fabric-tap");
	pc_config_free(&other);
	/* the cables each declares are its own: the shaper's neighbours are not the tap's */
	pc_config_free(&shaper);
	pair_map(&shaper, "sh", "",
		 "0000:3b:00.0\n    pod_neighbor: {chassis_id: sw-1, port_id: p1}\n"
		 "    fabric_neighbor: {chassis_id: leaf-1, port_id: swp7}\n"
		 "    lldp_max_silence: 90s",
		 "10.0.0.0/24");
	expect_pairing(&(struct scenario){ .shaper = { .map = &shaper }, .tap = { .map = &tap } },
		       NULL);
	pc_config_free(&tap);
	pc_config_free(&shaper);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_honest),         cmocka_unit_test(test_lies_caught),
		cmocka_unit_test(test_unseen_windows), cmocka_unit_test(test_tap_short),
		cmocka_unit_test(test_other_records),  cmocka_unit_test(test_line_bound),
		cmocka_unit_test(test_line_honest),    cmocka_unit_test(test_reload_envelope),
		cmocka_unit_test(test_reload_honest),  cmocka_unit_test(test_pairing),
	};
	if (sodium_init() < 0)
		return 1;
	rng_seed();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
