/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * OBSERVE (type 8), a tap's account of what its ports could not deliver:
 * its exact layout (docs/log-format.md), a round trip, every truncation,
 * and the rules that keep its fields out of every other type; the same of
 * OBSERVE_SLICES (type 10), which adds the tap's boundary slices. Then the
 * verifier's rule: either must cover the windows just logged.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/bytes.h"
#include "log/record.h"
#include "verify/verify.h"

#include "testutil.h"

static struct pc_record_seen seen[2] = {
	{ .name = "up0", .missed = { 1, 2 }, .nombuf = { 3, 4 }, .errors = { 5, 6 } },
	{ .name = "uplink-1", .missed = { 0, 0 }, .nombuf = { 0, 0 }, .errors = { 0, 9 } },
};

static struct pc_record
observe(void)
{
	return (struct pc_record){ .type = PC_REC_OBSERVE,
				   .appliance_id = "tap1",
				   .window_len_ns = 1000,
				   .window_start_ns = 3000,
				   .window_count = 2,
				   .observe.side = PC_ROLE_FABRIC_TAP,
				   .observe.nseen = 2,
				   .observe.seen = seen };
}

static void
expect_refused(const uint8_t *rec, size_t n)
{
	struct pc_record d;
	struct pc_error why;

	assert_int_equal(pc_record_decode(rec, n, &d, &why), -1);
	assert_true(why.msg[0] != '\0');
}

static void
test_layout(void **state)
{
	struct pc_record r = observe(), d;
	struct pc_error why;
	uint8_t out[512], t[512];

	(void)state;
	size_t n = pc_record_encode(&r, out, sizeof(out));
	/* 107 + id, side and count, per uplink its name and 2 x 3 counters */
	assert_int_equal(n, 107 + 4 + 1 + 4 + (1 + 3 + 48) + (1 + 8 + 48));
	assert_int_equal(out[1], 8);
	size_t off = 107 + 4;
	assert_int_equal(pc_load_be32(out + off - 8), 0); /* npods */
	assert_int_equal(pc_load_be32(out + off - 4), 0); /* nlinks */
	assert_int_equal(out[off], 2);                    /* fabric side */
	assert_int_equal(pc_load_be32(out + off + 1), 2);
	off += 5;
	assert_int_equal(out[off], 3);
	assert_memory_equal(out + off + 1, "up0", 3);
	off += 4;
	/* up: missed, nombuf, errors; then down */
	static const uint64_t want[6] = { 1, 3, 5, 2, 4, 6 };
	for (int k = 0; k < 6; k++)
		assert_int_equal(pc_load_be64(out + off + 8 * k), want[k]);
	assert_int_equal(pc_record_decode(out, n, &d, &why), 0);
	assert_int_equal(d.observe.side, PC_ROLE_FABRIC_TAP);
	assert_int_equal(d.observe.nseen, 2);
	assert_string_equal(d.observe.seen[1].name, "uplink-1");
	assert_int_equal(d.observe.seen[1].errors[PC_DIR_DOWN], 9);
	assert_int_equal(pc_record_encode(&d, t, sizeof(t)), n);
	assert_memory_equal(t, out, n);
	pc_record_free(&d);
	assert_null(d.observe.seen);
	for (size_t k = 0; k < n; k++)
		expect_refused(out, k);
	memcpy(t, out, n);
	t[n] = 0;
	expect_refused(t, n + 1);
	/* a side that is no tap's */
	memcpy(t, out, n);
	t[107 + 4] = 0;
	expect_refused(t, n);
	t[107 + 4] = 3;
	expect_refused(t, n);
	/* an uplink count past what the record holds */
	memcpy(t, out, n);
	pc_store_be32(t + 107 + 4 + 1, 3);
	expect_refused(t, n);
}

static struct pc_record_slice slices[2] = {
	{ .pod = "pod-a",
	  .first_bytes = { 100, 200 },
	  .first_frames = { 1, 2 },
	  .last_bytes = { 300, 400 },
	  .last_frames = { 3, 4 } },
	{ .pod = "b", .last_bytes = { 0, 9000 }, .last_frames = { 0, 6 } },
};

static struct pc_record
observe_slices(void)
{
	struct pc_record r = observe();

	r.type = PC_REC_OBSERVE_SLICES;
	r.observe.slice_ns = 10000000;
	r.observe.slice_flags = PC_SLICE_LAST_SHORT;
	r.observe.nslices = 2;
	r.observe.slices = slices;
	return r;
}

/* OBSERVE's fields, then the slice, its flags and a block per pod: first and last, per direction. */
static void
test_slices_layout(void **state)
{
	struct pc_record r = observe_slices(), d;
	struct pc_error why;
	uint8_t out[1024], t[1024];

	(void)state;
	assert_string_equal(pc_record_type_name(PC_REC_OBSERVE_SLICES), "observe-slices");
	size_t n = pc_record_encode(&r, out, sizeof(out));
	size_t off = 107 + 4 + 1 + 4 + (1 + 3 + 48) + (1 + 8 + 48);
	assert_int_equal(n, off + 8 + 1 + 4 + (1 + 5 + 64) + (1 + 1 + 64));
	assert_int_equal(out[1], 10);
	assert_int_equal(pc_load_be64(out + off), 10000000);
	assert_int_equal(out[off + 8], PC_SLICE_LAST_SHORT);
	assert_int_equal(pc_load_be32(out + off + 9), 2);
	off += 13;
	assert_int_equal(out[off], 5);
	assert_memory_equal(out + off + 1, "pod-a", 5);
	off += 6;
	/* up: first bytes, first frames, last bytes, last frames; then down */
	static const uint64_t want[8] = { 100, 1, 300, 3, 200, 2, 400, 4 };
	for (int k = 0; k < 8; k++)
		assert_int_equal(pc_load_be64(out + off + 8 * k), want[k]);
	assert_int_equal(pc_record_decode(out, n, &d, &why), 0);
	assert_int_equal(d.observe.nseen, 2);
	assert_int_equal(d.observe.slice_ns, 10000000);
	assert_int_equal(d.observe.slice_flags, PC_SLICE_LAST_SHORT);
	assert_int_equal(d.observe.nslices, 2);
	assert_string_equal(d.observe.slices[1].pod, "b");
	assert_int_equal(d.observe.slices[1].last_bytes[PC_DIR_DOWN], 9000);
	assert_int_equal(pc_record_encode(&d, t, sizeof(t)), n);
	assert_memory_equal(t, out, n);
	pc_record_free(&d);
	assert_null(d.observe.slices);
	assert_null(d.observe.seen);
	for (size_t k = 0; k < n; k++)
		expect_refused(out, k);
	memcpy(t, out, n);
	t[n] = 0;
	expect_refused(t, n + 1);
	/* a slice of no length, an unknown flag, a pod count past what the record holds */
	size_t at = 107 + 4 + 1 + 4 + (1 + 3 + 48) + (1 + 8 + 48);
	memcpy(t, out, n);
	pc_store_be64(t + at, 0);
	expect_refused(t, n);
	memcpy(t, out, n);
	t[at + 8] = 0x02;
	expect_refused(t, n);
	memcpy(t, out, n);
	pc_store_be32(t + at + 9, 3);
	expect_refused(t, n);
	/* and a bad pod id is not encoded */
	snprintf(slices[1].pod, sizeof(slices[1].pod), "bad id");
	assert_int_equal(pc_record_encode(&r, out, sizeof(out)), 0);
	snprintf(slices[1].pod, sizeof(slices[1].pod), "b");
	/* no slices: a tap that counted nothing near the boundaries */
	r.observe.nslices = 0;
	n = pc_record_encode(&r, out, sizeof(out));
	assert_int_equal(pc_record_decode(out, n, &d, &why), 0);
	assert_int_equal(d.observe.nslices, 0);
	pc_record_free(&d);
}

static void
test_type_rules(void **state)
{
	struct pc_record r = observe();
	struct pc_record_pod pod = { .id = "p", .uplink = "u", .cap_bps = 1, .burst_bytes = 1 };
	uint8_t out[512];

	(void)state;
	assert_string_equal(pc_record_type_name(PC_REC_OBSERVE), "observe");
	/* of at least one window, like the WINDOW it follows */
	r.window_count = 0;
	assert_int_equal(pc_record_encode(&r, out, sizeof(out)), 0);
	r.window_count = 1;
	/* no pods, no links */
	r.npods = 1;
	r.pods = &pod;
	assert_int_equal(pc_record_encode(&r, out, sizeof(out)), 0);
	r.npods = 0;
	r.observe.side = PC_ROLE_SHAPER;
	assert_int_equal(pc_record_encode(&r, out, sizeof(out)), 0);
	r.observe.side = PC_ROLE_POD_TAP;
	snprintf(seen[0].name, sizeof(seen[0].name), "bad name");
	assert_int_equal(pc_record_encode(&r, out, sizeof(out)), 0);
	snprintf(seen[0].name, sizeof(seen[0].name), "up0");
	assert_true(pc_record_encode(&r, out, sizeof(out)) > 0);
	/* a tap's fields are OBSERVE's: a GAP is its common fields, whatever its union holds */
	r.type = PC_REC_GAP;
	assert_int_equal(pc_record_encode(&r, out, sizeof(out)), 107 + 4);
	/* type 7 is not an observe record */
	out[1] = 7;
	expect_refused(out, 107 + 4);
}

/* A tap's log: START, then each WINDOW followed by its OBSERVE. */
static void
tap_log_of(struct pc_test_log *lg, int windows, uint8_t type)
{
	struct pc_record_pod pod = { .id = "p",
				     .uplink = "up0",
				     .cap_bps = 1000000000,
				     .burst_bytes = 100000,
				     .mode = PC_MODE_POLICE };
	struct pc_record_link link = { .name = "up0" };
	struct pc_record r = { .type = PC_REC_START,
			       .appliance_id = "tap1",
			       .window_len_ns = 1000000000,
			       .window_start_ns = 5000000000,
			       .npods = 1,
			       .pods = &pod };

	memset(lg, 0, sizeof(*lg));
	pc_test_log_push(lg, &r);
	for (int k = 0; k < windows; k++) {
		r = (struct pc_record){ .type = PC_REC_WINDOW,
					.appliance_id = "tap1",
					.window_len_ns = 1000000000,
					.window_start_ns = 5000000000ull + k * 1000000000ull,
					.window_count = 1,
					.npods = 1,
					.pods = &pod,
					.nlinks = 1,
					.links = &link };
		pod.dir[PC_DIR_UP].pass_frames = 10;
		pod.dir[PC_DIR_UP].pass_bytes = 1000;
		pc_test_log_push(lg, &r);
		struct pc_record o = type == PC_REC_OBSERVE ? observe() : observe_slices();
		o.window_start_ns = r.window_start_ns;
		o.window_len_ns = r.window_len_ns;
		o.window_count = 1;
		o.observe.nseen = 1;
		pc_test_log_push(lg, &o);
		memset(pod.dir, 0, sizeof(pod.dir));
	}
}

static void
tap_log(struct pc_test_log *lg, int windows)
{
	tap_log_of(lg, windows, PC_REC_OBSERVE);
}

/* The verifier takes an OBSERVE over the windows just logged, and refuses one over others. */
static void
test_verifier_rule(void **state)
{
	struct pc_verifier_key vk;
	struct pc_signer_key *k = pc_test_key("podcap/tap1", &vk);
	struct pc_test_run o = { .vk = &vk };
	struct pc_test_log lg;

	(void)state;
	tap_log(&lg, 3);
	struct pc_verify *v = pc_test_verify_signed(&o, k, &lg);
	assert_int_equal(pc_verify_nfailures(v), 0);
	pc_verify_free(v);
	/* the OBSERVE of window 1 moved after window 2: it covers windows not just logged */
	pc_test_log_move(&lg, 4, 5);
	v = pc_test_verify_signed(&o, k, &lg);
	assert_true(pc_verify_nfailures(v) >= 1);
	const struct pc_verify_failure *f = pc_verify_failure_at(v, 0);
	assert_int_equal(f->check, PC_VC_SEQUENCE);
	assert_int_equal(f->record, 5);
	assert_non_null(
	    strstr(f->msg, "observe record of windows other than the ones just logged"));
	pc_verify_free(v);
	pc_test_log_free(&lg);
	/* with slices, the same rule */
	tap_log_of(&lg, 3, PC_REC_OBSERVE_SLICES);
	v = pc_test_verify_signed(&o, k, &lg);
	if (pc_verify_nfailures(v) != 0)
		pc_test_print_failures(v);
	assert_int_equal(pc_verify_nfailures(v), 0);
	pc_verify_free(v);
	pc_test_log_move(&lg, 4, 5);
	v = pc_test_verify_signed(&o, k, &lg);
	f = pc_verify_find(v, PC_VC_SEQUENCE);
	assert_non_null(f);
	assert_int_equal(f->record, 5);
	assert_non_null(
	    strstr(f->msg, "observe record of windows other than the ones just logged"));
	pc_verify_free(v);
	pc_test_log_free(&lg);
	pc_signer_key_free(k);
}

/* Record i of lg becomes r. */
static void
replace(struct pc_test_log *lg, size_t i, const struct pc_record *r)
{
	struct pc_test_log one = { 0 };

	pc_test_log_push(&one, r);
	free(lg->rec[i]);
	lg->rec[i] = one.rec[0];
	lg->len[i] = one.len[0];
}

/* An OBSERVE of `count` windows from window `w` of the tap log. */
static struct pc_record
observe_of(uint64_t w, uint64_t count)
{
	struct pc_record o = observe();

	o.window_start_ns = 5000000000ull + w * 1000000000ull;
	o.window_len_ns = 1000000000;
	o.window_count = count;
	o.observe.nseen = 1;
	return o;
}

static void
expect_observe_refused(const struct pc_verify *v, int64_t record)
{
	const struct pc_verify_failure *f = pc_verify_find(v, PC_VC_SEQUENCE);

	if (f == NULL || f->record != record ||
	    strstr(f->msg, "observe record of windows other than the ones just logged") == NULL) {
		pc_test_print_failures(v);
		fail_msg("expected the observe record %lld refused", (long long)record);
	}
}

static void
no_failures(const struct pc_verify *full, const struct pc_verify *inc, size_t n)
{
	(void)full;
	if (pc_verify_nfailures(inc) != 0) {
		pc_test_print_failures(inc);
		fail_msg("resumed at record %zu, the honest tap log fails", n);
	}
}

/*
 * An OBSERVE is its WINDOW's: the same start, count and length, not just
 * the same end. Only an ATTEST may come between them (the ledger thread
 * appends a quote once the WINDOW is in a checkpoint), also across a
 * resumed run's first record.
 */
static void
test_observe_is_its_window(void **state)
{
	struct pc_verifier_key vk;
	struct pc_signer_key *k = pc_test_key("podcap/tap1", &vk);
	struct pc_test_run o = { .vk = &vk };
	struct pc_test_log lg;
	struct pc_record r;
	struct pc_record_attest att;

	(void)state;
	/* window 1's OBSERVE claims windows 0 and 1: it ends at the cursor, yet is not its window's */
	tap_log(&lg, 2);
	r = observe_of(0, 2);
	replace(&lg, 4, &r);
	struct pc_verify *v = pc_test_verify_signed(&o, k, &lg);
	expect_observe_refused(v, 4);
	pc_verify_free(v);
	/* ... nor may one WINDOW have two */
	r = observe_of(1, 1);
	replace(&lg, 4, &r);
	pc_test_log_push(&lg, &r);
	v = pc_test_verify_signed(&o, k, &lg);
	expect_observe_refused(v, 5);
	assert_int_equal(pc_verify_nfailures(v), 1);
	pc_verify_free(v);
	pc_test_log_free(&lg);

	/* a quote between a WINDOW and its OBSERVE: the log holds, from every split point */
	tap_log(&lg, 3);
	r = (struct pc_record){ .appliance_id = "tap1",
				.window_len_ns = 1000000000,
				.window_start_ns = 7000000000 };
	pc_test_attest(&r, &att);
	pc_test_log_push(&lg, &r);
	pc_test_log_move(&lg, lg.n - 1, 4);
	v = pc_test_verify_signed(&o, k, &lg);
	assert_int_equal(pc_verify_nfailures(v), 0);
	pc_verify_free(v);
	pc_test_every_split(&o, k, &lg, no_failures);
	pc_test_log_free(&lg);
	pc_signer_key_free(k);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_layout),
		cmocka_unit_test(test_slices_layout),
		cmocka_unit_test(test_type_rules),
		cmocka_unit_test(test_verifier_rule),
		cmocka_unit_test(test_observe_is_its_window),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
