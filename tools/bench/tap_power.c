/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What a tap proves (docs/reconcile.md, "Boundary slices"), measured with
 * the verifier's own reconciliation: a shaper and a fabric-side tap that
 * both saw steady traffic at the cap, the tap's clock the whole offset
 * late; the smallest lie the verifier refuses, hidden in one window, and
 * spread thinly over every window of a run, with the tap's slices and
 * without them (an older tap's OBSERVE).
 *
 *	podcap-bench-tap-power [--quick]
 *
 * prints one line per setting and figure: name=value pairs.
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log/record.h"
#include "verify/tap.h"

#define T0   (1704067200ull * 1000000000ull)
#define MAXF 1522u

struct setting {
	const char *name;
	uint64_t cap_bps, window_ns, burst_bytes, offset_ns;
};

static const struct setting settings[] = {
	{ "demo", 100000000ull, 2000000000ull, 12500000ull, 10000000ull },
	{ "default", 1000000000ull, 60000000000ull, 7500000000ull, 10000000ull },
};

static void
feed(struct pc_reconcile *rc, int tap, const struct pc_record *r)
{
	static uint8_t buf[4096];
	size_t n = pc_record_encode(r, buf, sizeof(buf));

	if (n == 0)
		abort();
	if (tap < 0)
		pc_reconcile_shaper(rc, buf, n);
	else
		pc_reconcile_tap_record(rc, tap, buf, n);
}

static void
feed_window(struct pc_reconcile *rc, int tap, const struct setting *s, uint64_t k, uint64_t bytes)
{
	struct pc_record_pod pod = { .id = "pod-a",
				     .uplink = "up0",
				     .cap_bps = s->cap_bps,
				     .burst_bytes = s->burst_bytes,
				     .mode = PC_MODE_POLICE };
	struct pc_record_link link = { .name = "up0" };
	struct pc_record r = { .type = PC_REC_WINDOW,
			       .appliance_id = "x",
			       .window_len_ns = s->window_ns,
			       .window_start_ns = T0 + k * s->window_ns,
			       .window_count = 1,
			       .npods = 1,
			       .pods = &pod,
			       .nlinks = 1,
			       .links = &link };

	pod.dir[PC_DIR_UP].pass_bytes = bytes;
	pod.dir[PC_DIR_UP].pass_frames = bytes / MAXF;
	feed(rc, tap, &r);
}

/* The tap's OBSERVE of window k: what crosses at the cap in a slice of the offset, at each end. */
static void
feed_observe(struct pc_reconcile *rc, int tap, const struct setting *s, uint64_t k, bool sliced)
{
	struct pc_record_seen seen = { .name = "up0" };
	uint64_t slice = (uint64_t)((unsigned __int128)s->cap_bps * s->offset_ns / 8000000000ull);
	struct pc_record_slice sl = { .pod = "pod-a",
				      .first_bytes = { slice, 0 },
				      .first_frames = { slice / MAXF + 1, 0 },
				      .last_bytes = { slice, 0 },
				      .last_frames = { slice / MAXF + 1, 0 } };
	struct pc_record o = { .type = sliced ? PC_REC_OBSERVE_SLICES : PC_REC_OBSERVE,
			       .appliance_id = "t",
			       .window_len_ns = s->window_ns,
			       .window_start_ns = T0 + k * s->window_ns,
			       .window_count = 1,
			       .observe.side = PC_ROLE_FABRIC_TAP,
			       .observe.nseen = 1,
			       .observe.seen = &seen };

	if (sliced) {
		o.observe.slice_ns = s->offset_ns;
		o.observe.nslices = 1;
		o.observe.slices = &sl;
	}
	feed(rc, tap, &o);
}

/*
 * Whether the verifier refuses a run of n windows (the tap's first is never
 * evidence: n + 1 are logged) in which the shaper hid `lie` bytes in
 * window `at` (0: in every window but the first).
 */
static bool
refused(const struct setting *s, uint64_t n, uint64_t at, uint64_t lie, bool sliced)
{
	struct pc_reconcile_policy p = { .offset_ns = s->offset_ns,
					 .line_bps = PC_RECONCILE_DEFAULT_LINE_BPS };
	struct pc_reconcile *rc = pc_reconcile_new(&p, NULL, 0);
	uint64_t bytes = (uint64_t)((unsigned __int128)s->cap_bps * s->window_ns / 8000000000ull);

	if (rc == NULL)
		abort();
	for (uint64_t k = 0; k <= n; k++)
		feed_window(rc, -1, s, k, bytes - ((at == 0 ? k > 0 : k == at) ? lie : 0));
	int tap = pc_reconcile_tap(rc, "bench");
	for (uint64_t k = 0; k <= n; k++) {
		feed_window(rc, tap, s, k, bytes);
		feed_observe(rc, tap, s, k, sliced);
	}
	bool no = pc_reconcile_finish(rc) != 0;
	pc_reconcile_free(rc);
	return no;
}

/* The smallest lie refused, by bisection: lies only grow T − S, so refusal is monotone. */
static uint64_t
threshold(const struct setting *s, uint64_t n, uint64_t at, bool sliced)
{
	uint64_t lo = 0,
		 hi = (uint64_t)((unsigned __int128)s->cap_bps * s->window_ns / 8000000000ull);

	if (!refused(s, n, at, hi, sliced))
		return UINT64_MAX;
	while (hi - lo > 1) {
		uint64_t mid = lo + (hi - lo) / 2;
		if (refused(s, n, at, mid, sliced))
			hi = mid;
		else
			lo = mid;
	}
	return hi;
}

static void
print(const struct setting *s, const char *what, uint64_t runs, uint64_t x, bool sliced)
{
	double cw = (double)s->cap_bps * (double)s->window_ns / 8e9;

	if (x == UINT64_MAX)
		printf("setting=%s figure=%s windows=%" PRIu64 " slices=%s refused_above=none\n",
		       s->name, what, runs, sliced ? "yes" : "no");
	else
		printf("setting=%s figure=%s windows=%" PRIu64 " slices=%s refused_from=%" PRIu64
		       " percent_of_cap_window=%.4f\n",
		       s->name, what, runs, sliced ? "yes" : "no", x, 100.0 * (double)x / cw);
}

int
main(int argc, char **argv)
{
	bool quick = argc > 1 && strcmp(argv[1], "--quick") == 0;
	static const uint64_t runs[] = { 60, 1440 };

	for (size_t i = 0; i < sizeof(settings) / sizeof(settings[0]); i++) {
		const struct setting *s = &settings[i];
		printf("setting=%s cap_bps=%" PRIu64 " window_ns=%" PRIu64 " burst_bytes=%" PRIu64
		       " offset_ns=%" PRIu64 " slice_ns=%" PRIu64 "\n",
		       s->name, s->cap_bps, s->window_ns, s->burst_bytes, s->offset_ns,
		       s->offset_ns);
		for (int sl = 0; sl < 2; sl++) {
			print(s, "one-window", 1, threshold(s, 4, 2, sl), sl);
			for (size_t r = 0; r < (quick ? 1 : 2); r++)
				print(s, "thin-per-window", runs[r], threshold(s, runs[r], 0, sl),
				      sl);
		}
	}
	return 0;
}
