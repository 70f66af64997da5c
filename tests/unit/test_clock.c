/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The clock evidence (verify/clock.c, check 15) on forged logs: each
 * WINDOW answered by a SYNC whose readings bound the offset within the
 * verifier's D; a window over D, one not locked throughout, one without a
 * bound and one without a SYNC where the map declares the clock are
 * refused, each named; the report's worst offset and grandmaster.
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

#include "log/record.h"
#include "verify/clock.h"
#include "verify/verify.h"

#include "testutil.h"

#define APP    "clk-app"
#define WIN_NS 1000000000ull
#define T0     (1704067200ull * 1000000000ull)
#define US     (1000ll << 16) /* a microsecond as a TimeInterval */

static const char map_text[] =
    "appliance:\n"
    "  id: " APP "\n"
    "  clock: {ptp4l: /run/ptp4l}\n"
    "window: 1s\n"
    "defaults: {cap: 1Gbps, burst: 100MB, mode: police}\n"
    "uplinks:\n"
    "  - {name: up0, pod_port: 0000:3b:00.0, fabric_port: 0000:3b:00.1}\n"
    "pods:\n"
    "  - {id: pod-a, uplink: up0}\n";

static struct pc_config map;
static uint8_t digest[PC_DIGEST_LEN];
static struct pc_signer_key *key;
static struct pc_verifier_key vk;

static struct pc_record_pod pod = { .id = "pod-a",
				    .uplink = "up0",
				    .cap_bps = 1000000000,
				    .burst_bytes = 100000000,
				    .mode = PC_POD_MODE_POLICE };
static struct pc_record_link link = { .name = "up0" };

static struct pc_record
base(uint8_t type, uint64_t w, uint64_t count)
{
	struct pc_record r = { .type = type,
			       .appliance_id = APP,
			       .window_len_ns = WIN_NS,
			       .window_start_ns = T0 + w * WIN_NS,
			       .window_count = count };

	memcpy(r.podmap_digest, digest, PC_DIGEST_LEN);
	return r;
}

/* A SYNC of window w: 3 polls, all bounded, offset off and bound bound_ns. */
static struct pc_record
sync_of(uint64_t w, int64_t off, uint64_t bound_ns)
{
	struct pc_record r = base(PC_REC_SYNC, w, 1);

	r.sync.discipline = PC_SYNC_PTP4L;
	r.sync.flags = PC_SYNC_LOCKED | PC_SYNC_GM;
	r.sync.polls = r.sync.readings = r.sync.bounded = 3;
	r.sync.offset = off;
	r.sync.path_delay = 2 * US;
	r.sync.bound_ns = bound_ns;
	memset(r.sync.gm, 0xa1, 8);
	r.sync.port = 1;
	r.sync.port_state = 9;
	r.sync.steps_removed = 1;
	return r;
}

/* START, then for each window its WINDOW and, unless it is `skip`, its SYNC; offsets in us. */
static void
make_log(struct pc_test_log *lg, int windows, const int64_t *off_us, int skip)
{
	struct pc_record r = base(PC_REC_START, 0, 0);

	memset(lg, 0, sizeof(*lg));
	r.npods = 1;
	r.pods = &pod;
	pc_test_log_push(lg, &r);
	for (int w = 0; w < windows; w++) {
		r = base(PC_REC_WINDOW, (uint64_t)w, 1);
		r.npods = 1;
		r.pods = &pod;
		r.nlinks = 1;
		r.links = &link;
		pc_test_log_push(lg, &r);
		if (w == skip)
			continue;
		/* the bound is |offset| + the 2 us path delay */
		int64_t o = off_us[w] * US;
		uint64_t b = (uint64_t)(off_us[w] < 0 ? -off_us[w] : off_us[w]) * 1000 + 2000;
		struct pc_record s = sync_of((uint64_t)w, o, b);
		pc_test_log_push(lg, &s);
	}
}

static struct pc_verify *
run(const struct pc_test_log *lg, uint64_t d_ns, bool with_map)
{
	struct pc_verify_policy p;

	pc_verify_policy_init(&p);
	p.max_clock_offset_ns = d_ns;
	struct pc_test_run o = { .vk = &vk, .podmap = with_map ? &map : NULL, .policy = &p };
	return pc_test_verify_signed(&o, key, lg);
}

static void
expect_clean(const struct pc_verify *v)
{
	if (pc_verify_nfailures(v) != 0) {
		pc_test_print_failures(v);
		fail_msg("an honest log's readings were refused");
	}
}

/* The first clock failure: at record `record`, its message holding `want`. */
static void
expect_clock_failure(const struct pc_verify *v, int64_t record, const char *want)
{
	const struct pc_verify_failure *f = pc_verify_find(v, PC_VC_CLOCK);

	if (f == NULL || f->record != record || strstr(f->msg, want) == NULL) {
		pc_test_print_failures(v);
		fail_msg("expected a clock failure at record %lld saying '%s'", (long long)record,
			 want);
	}
}

static void
test_within(void **state)
{
	static const int64_t off[3] = { 3, -7, 1 };
	struct pc_test_log lg;

	(void)state;
	make_log(&lg, 3, off, -1);
	/* the worst bound is 7 us + 2 us: 9 us is enough, with or without the map */
	struct pc_verify *v = run(&lg, 9000, true);
	expect_clean(v);
	const struct pcv_clock_summary *m = pcv_clock_summary(v);
	assert_int_equal(m->windows, 3);
	assert_int_equal(m->locked, 3);
	assert_int_equal(m->max_offset_ns, 7000);
	assert_true(m->max_offset_at_ns == T0 + WIN_NS);
	assert_int_equal(m->max_bound_ns, 9000);
	char gm[PCV_CLOCK_ID_TEXT];
	pcv_clock_gm_text(m, gm);
	assert_string_equal(gm, "a1a1a1.a1a1.a1a1a1");
	pc_verify_free(v);
	v = run(&lg, 9000, false);
	expect_clean(v);
	pc_verify_free(v);
	pc_test_log_free(&lg);
}

static void
test_over(void **state)
{
	static const int64_t off[3] = { 3, -7, 1 };
	struct pc_test_log lg;

	(void)state;
	make_log(&lg, 3, off, -1);
	/* D one ns below window 1's bound: its SYNC, record 4, is refused, and only it */
	struct pc_verify *v = run(&lg, 8999, false);
	expect_clock_failure(v, 4, "clock offset 7000 ns, bound 9000 ns: over the");
	assert_int_equal(pc_verify_nfailures(v), 1);
	assert_true(pc_verify_find(v, PC_VC_CLOCK)->window_start_ns == T0 + WIN_NS);
	pc_verify_free(v);
	pc_test_log_free(&lg);
}

static void
test_not_locked_or_unbounded(void **state)
{
	static const int64_t off[2] = { 1, 1 };
	struct pc_test_log lg;
	struct pc_record s;

	(void)state;
	make_log(&lg, 2, off, 1);
	/* window 1's SYNC: one of its three polls read no bound */
	s = sync_of(1, US, 3000);
	s.sync.bounded = 2;
	s.sync.flags = PC_SYNC_GM;
	pc_test_log_push(&lg, &s);
	struct pc_verify *v = run(&lg, 1000000, false);
	expect_clock_failure(v, 4, "not locked throughout: 2 of 3 polls");
	pc_verify_free(v);
	/* and none did */
	pc_test_log_free(&lg);
	make_log(&lg, 2, off, 1);
	s = sync_of(1, 0, 0);
	s.sync.bounded = 0;
	s.sync.readings = 0;
	s.sync.flags = 0;
	pc_test_log_push(&lg, &s);
	v = run(&lg, 1000000, false);
	expect_clock_failure(v, 4, "no reading bounds the clock's offset");
	pc_verify_free(v);
	pc_test_log_free(&lg);
}

static void
test_missing(void **state)
{
	static const int64_t off[3] = { 1, 1, 1 };
	struct pc_test_log lg;

	(void)state;
	/* window 1 (record 3) has no SYNC: the map declares the clock */
	make_log(&lg, 3, off, 1);
	struct pc_verify *v = run(&lg, 1000000, true);
	expect_clock_failure(v, 3, "has no sync record");
	assert_non_null(strstr(pc_verify_find(v, PC_VC_CLOCK)->msg, "declares appliance.clock"));
	pc_verify_free(v);
	/* without the map: the run's earlier windows had readings, so this one owes them */
	v = run(&lg, 1000000, false);
	expect_clock_failure(v, 3, "the run's earlier windows carried readings");
	pc_verify_free(v);
	pc_test_log_free(&lg);
	/* the first window without: only the map says it owes one */
	make_log(&lg, 2, off, 0);
	v = run(&lg, 1000000, true);
	expect_clock_failure(v, 1, "has no sync record");
	pc_verify_free(v);
	v = run(&lg, 1000000, false);
	expect_clean(v);
	pc_verify_free(v);
	pc_test_log_free(&lg);
}

static void
test_other_windows(void **state)
{
	static const int64_t off[2] = { 1, 1 };
	struct pc_test_log lg;

	(void)state;
	make_log(&lg, 2, off, -1);
	/* window 0's SYNC moved after window 1's: it covers windows not just logged */
	pc_test_log_move(&lg, 2, 4);
	struct pc_verify *v = run(&lg, 1000000, false);
	assert_non_null(pc_verify_find(v, PC_VC_SEQUENCE));
	pc_verify_free(v);
	pc_test_log_free(&lg);
}

static int
setup(void **state)
{
	struct pc_error e;

	(void)state;
	if (sodium_init() < 0)
		return -1;
	if (pc_config_load_buffer("clock.yaml", map_text, strlen(map_text), &map, &e) != 0)
		return -1;
	pc_config_digest(&map, digest);
	key = pc_test_key("podcap/" APP, &vk);
	return 0;
}

static int
teardown(void **state)
{
	(void)state;
	pc_signer_key_free(key);
	pc_config_free(&map);
	return 0;
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_within),
		cmocka_unit_test(test_over),
		cmocka_unit_test(test_not_locked_or_unbounded),
		cmocka_unit_test(test_missing),
		cmocka_unit_test(test_other_windows),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
