/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A bypass a fabric-side tap shows (verify/link_bypass.c, docs/verify.md):
 * forged logs of a shaper, each WINDOW followed by its LINK, and of a
 * fabric-side tap that counts what the shaper says it passed. Window 2's
 * LINK says the pod side was down: the whole window, part of it, or not
 * at all. The tap seeing pod-a's frames in a window down all of it is a
 * failure naming the window, the pod and the uplink; the same frames in a
 * window down part of it, or no frames in one down all of it, are not; a
 * pod-side tap says nothing of it.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "log/record.h"
#include "verify/tap.h"

#define W_NS (1000000000ull)
#define T0   (1704067200ull * W_NS)
#define NWIN 4
#define DOWN 2 /* the window whose LINK says the pod side was down */

struct scenario {
	uint64_t down_ns;     /* of window DOWN, its pod side's time down */
	uint64_t frames_down; /* what both logs count of pod-a in window DOWN */
	uint8_t side;         /* the tap's */
};

static void
feed(struct pc_reconcile *rc, int tap, const struct pc_record *r)
{
	static uint8_t buf[4096];
	size_t n = pc_record_encode(r, buf, sizeof(buf));

	assert_true(n > 0);
	if (tap < 0)
		pc_reconcile_shaper(rc, buf, n);
	else
		pc_reconcile_tap_record(rc, tap, buf, n);
}

static void
feed_window(struct pc_reconcile *rc, int tap, uint64_t k, uint64_t frames)
{
	struct pc_record_pod pod = { .id = "pod-a",
				     .uplink = "up0",
				     .cap_bps = 1000000000ull,
				     .burst_bytes = 1000000ull,
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

	for (int d = 0; d < PC_DIR_COUNT; d++) {
		pod.dir[d].pass_frames = frames;
		pod.dir[d].pass_bytes = frames * 100;
	}
	feed(rc, tap, &r);
}

/* The shaper's LINK after window k: both ports of up0, the pod side down down_ns. */
static void
feed_link(struct pc_reconcile *rc, uint64_t k, uint64_t down_ns)
{
	struct pc_record_port ports[2];
	struct pc_record r = { .type = PC_REC_LINK,
			       .appliance_id = "x",
			       .window_len_ns = W_NS,
			       .window_start_ns = T0 + (k + 1) * W_NS,
			       .linkstate = { PC_LINK_WINDOW, W_NS, 2, ports } };
	uint64_t end = T0 + (k + 1) * W_NS;

	memset(ports, 0, sizeof(ports));
	for (unsigned d = 0; d < 2; d++) {
		snprintf(ports[d].uplink, sizeof(ports[d].uplink), "up0");
		ports[d].side = (uint8_t)d;
		ports[d].now = (struct pc_record_link_change){ T0, 1, 1, 10000 };
	}
	struct pc_record_port *p = &ports[PC_DIR_UP];
	if (down_ns == W_NS) {
		p->now = (struct pc_record_link_change){ T0, 0, 0, 0 };
		p->down_ns = W_NS;
	} else if (down_ns != 0) {
		/* down from the window's start, up again down_ns later */
		p->changes = p->nlisted = 2;
		p->listed[0] = (struct pc_record_link_change){ end - W_NS, 0, 0, 0 };
		p->listed[1] = (struct pc_record_link_change){ end - W_NS + down_ns, 1, 1, 10000 };
		p->now = p->listed[1];
		p->down_ns = down_ns;
	}
	feed(rc, -1, &r);
}

static uint64_t
run(const struct scenario *sc, char *text, size_t len)
{
	struct pc_reconcile_policy pol = { .offset_ns = 1000000, .line_bps = 100000000000ull };
	struct pc_reconcile *rc = pc_reconcile_new(&pol, NULL, 0);
	struct pc_record_seen seen = { .name = "up0" };

	assert_non_null(rc);
	for (uint64_t k = 0; k < NWIN; k++) {
		feed_window(rc, -1, k, k == DOWN ? sc->frames_down : 10);
		feed_link(rc, k, k == DOWN ? sc->down_ns : 0);
	}
	int tap = pc_reconcile_tap(rc, "fabric");
	for (uint64_t k = 0; k < NWIN; k++) {
		struct pc_record o = { .type = PC_REC_OBSERVE,
				       .appliance_id = "t",
				       .window_len_ns = W_NS,
				       .window_start_ns = T0 + k * W_NS,
				       .window_count = 1,
				       .observe = { .side = sc->side, .nseen = 1, .seen = &seen } };
		feed_window(rc, tap, k, k == DOWN ? sc->frames_down : 10);
		feed(rc, tap, &o);
	}
	uint64_t fails = pc_reconcile_finish(rc);
	FILE *f = fmemopen(text, len, "w");
	assert_non_null(f);
	pc_reconcile_print_text(rc, f);
	fclose(f);
	pc_reconcile_free(rc);
	return fails;
}

static char text[65536];

/* Down all of window 2, and the fabric-side tap saw the pod's frames in it: a bypass. */
static void
test_bypass(void **state)
{
	struct scenario sc = { W_NS, 7, PC_ROLE_FABRIC_TAP };

	(void)state;
	assert_int_equal(run(&sc, text, sizeof(text)), 1);
	assert_non_null(strstr(text,
			       "pod pod-a window 2024-01-01T00:00:02Z: bypass: uplink up0's "
			       "pod-side link was down all of the window"));
	assert_non_null(strstr(text, "saw 14 frames of the pod"));
}

/* Down all of window 2, the pod silent in it: nothing went around. */
static void
test_down_quiet(void **state)
{
	struct scenario sc = { W_NS, 0, PC_ROLE_FABRIC_TAP };

	(void)state;
	assert_int_equal(run(&sc, text, sizeof(text)), 0);
	assert_null(strstr(text, "bypass"));
}

/* Down half of window 2: its frames may have crossed while it was up. */
static void
test_down_part(void **state)
{
	struct scenario sc = { W_NS / 2, 7, PC_ROLE_FABRIC_TAP };

	(void)state;
	assert_int_equal(run(&sc, text, sizeof(text)), 0);
	assert_null(strstr(text, "bypass"));
}

/* Up all along, the pod's frames in every window: reconciled. */
static void
test_up(void **state)
{
	struct scenario sc = { 0, 7, PC_ROLE_FABRIC_TAP };

	(void)state;
	assert_int_equal(run(&sc, text, sizeof(text)), 0);
}

/* A pod-side tap stands between the pod and the appliance: it says nothing of a bypass. */
static void
test_pod_tap(void **state)
{
	struct scenario sc = { W_NS, 7, PC_ROLE_POD_TAP };

	(void)state;
	assert_int_equal(run(&sc, text, sizeof(text)), 0);
	assert_null(strstr(text, "bypass"));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bypass),    cmocka_unit_test(test_down_quiet),
		cmocka_unit_test(test_down_part), cmocka_unit_test(test_up),
		cmocka_unit_test(test_pod_tap),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
