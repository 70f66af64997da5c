/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Window counters: sums, reason names, and single-writer publication read
 * concurrently by another thread.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "shape/counters.h"

static void
test_drop_names(void **state)
{
	(void)state;
	assert_string_equal(pc_pod_drop_name(PC_DROP_OVER_CAP), "over_cap");
	assert_string_equal(pc_pod_drop_name(PC_DROP_QUEUE_FULL), "queue_full");
	assert_string_equal(pc_pod_drop_name(PC_DROP_TX_FULL), "tx_full");
	assert_string_equal(pc_pod_drop_name(PC_POD_DROP_COUNT), "unknown");
	assert_string_equal(pc_pod_drop_name((enum pc_pod_drop)-1), "unknown");
	assert_string_equal(pc_link_drop_name(PC_DROP_UNMAPPED), "unmapped");
	assert_string_equal(pc_link_drop_name(PC_DROP_MALFORMED), "malformed");
	assert_string_equal(pc_link_drop_name(PC_LINK_DROP_COUNT), "unknown");
	assert_string_equal(pc_link_drop_name((enum pc_link_drop)1000), "unknown");
}

static void
fill_pod(struct pc_pod_ctr *c, uint64_t base)
{
	c->pass_frames = base + 1;
	c->pass_bytes = base + 2;
	for (unsigned i = 0; i < PC_POD_DROP_COUNT; i++) {
		c->drop_frames[i] = base + 10 + i;
		c->drop_bytes[i] = base + 20 + i;
	}
}

static void
test_pod_accumulate(void **state)
{
	(void)state;
	struct pc_pod_ctr dst, src, copy;

	fill_pod(&dst, 1000);
	fill_pod(&src, 5000000000ULL);
	copy = src;
	pc_pod_ctr_accumulate(&dst, &src);
	assert_int_equal(dst.pass_frames, 1001 + 5000000001ULL);
	assert_int_equal(dst.pass_bytes, 1002 + 5000000002ULL);
	for (unsigned i = 0; i < PC_POD_DROP_COUNT; i++) {
		assert_int_equal(dst.drop_frames[i], 1010 + i + 5000000010ULL + i);
		assert_int_equal(dst.drop_bytes[i], 1020 + i + 5000000020ULL + i);
	}
	/* the source is only read */
	assert_memory_equal(&src, &copy, sizeof(src));

	/* summing banks of several workers */
	struct pc_pod_ctr total;
	memset(&total, 0, sizeof(total));
	for (uint64_t w = 1; w <= 4; w++) {
		fill_pod(&src, w * 100);
		pc_pod_ctr_accumulate(&total, &src);
	}
	assert_int_equal(total.pass_frames, 1000 + 4 * 1);
	assert_int_equal(total.pass_bytes, 1000 + 4 * 2);
	assert_int_equal(total.drop_frames[PC_DROP_TX_FULL], 1000 + 4 * (10 + PC_DROP_TX_FULL));
	assert_int_equal(total.drop_bytes[PC_DROP_OVER_CAP], 1000 + 4 * 20);
}

static void
test_link_accumulate(void **state)
{
	(void)state;
	struct pc_link_ctr dst = {
		.drop_frames = { 1, 2 },
		.drop_bytes = { 64, 128 },
	};
	struct pc_link_ctr src = {
		.drop_frames = { 10, 20 },
		.drop_bytes = { 640, 1280 },
	};

	pc_link_ctr_accumulate(&dst, &src);
	pc_link_ctr_accumulate(&dst, &src);
	assert_int_equal(dst.drop_frames[PC_DROP_UNMAPPED], 21);
	assert_int_equal(dst.drop_frames[PC_DROP_MALFORMED], 42);
	assert_int_equal(dst.drop_bytes[PC_DROP_UNMAPPED], 1344);
	assert_int_equal(dst.drop_bytes[PC_DROP_MALFORMED], 2688);
	assert_int_equal(src.drop_frames[PC_DROP_UNMAPPED], 10);
}

static void
test_ctr_add(void **state)
{
	(void)state;
	uint64_t c = 0;

	pc_ctr_add(&c, 1522);
	pc_ctr_add(&c, 64);
	assert_int_equal(pc_ctr_read(&c), 1586);
	/* counters wrap modulo 2^64 like any unsigned sum; readers subtract */
	c = UINT64_MAX - 1;
	pc_ctr_add(&c, 3);
	assert_int_equal(pc_ctr_read(&c), 1);
}

/*
 * One writer thread, the test thread reading. Every add is 0x100000001, so
 * the two 32-bit halves of the counter stay equal (until 2^32 adds, which
 * the writer never reaches): a read that mixed an old half with a new one
 * would break hi == lo. The writer runs until the reader has seen enough
 * values change under it, so the two really overlap even on a busy machine.
 */
#define STEP        0x100000001ULL
#define MAX_WRITES  (1ULL << 31)
#define WANT_CHANGES 100000
#define MAX_READ_NS 2000000000LL

struct shared {
	struct pc_pod_ctr bank;
	uint64_t plain;
	uint64_t written;
	int stop;
};

static void *
writer(void *arg)
{
	struct shared *s = arg;
	uint64_t i;

	for (i = 0; i < MAX_WRITES && !__atomic_load_n(&s->stop, __ATOMIC_RELAXED); i++) {
		pc_ctr_add(&s->plain, STEP);
		pc_ctr_add(&s->bank.drop_bytes[PC_DROP_TX_FULL], STEP);
		pc_ctr_add(&s->bank.pass_frames, 1);
	}
	__atomic_store_n(&s->written, i, __ATOMIC_RELEASE);
	return NULL;
}

static void
check_halves(uint64_t v, uint64_t *prev)
{
	if ((v >> 32) != (v & 0xffffffffULL))
		fail_msg("torn read: 0x%016" PRIx64, v);
	if (v < *prev)
		fail_msg("went backwards: 0x%016" PRIx64 " after 0x%016" PRIx64, v, *prev);
	*prev = v;
}

static int64_t
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void
test_concurrent_reads(void **state)
{
	(void)state;
	static struct shared s;
	pthread_t th;
	uint64_t prev = 0, prev_bank = 0, prev_frames = 0, reads = 0, changes = 0;
	int64_t t0 = now_ns();

	memset(&s, 0, sizeof(s));
	assert_int_equal(pthread_create(&th, NULL, writer, &s), 0);
	while (changes < WANT_CHANGES) {
		uint64_t before = prev;
		struct pc_pod_ctr snap;

		check_halves(pc_ctr_read(&s.plain), &prev);
		memset(&snap, 0, sizeof(snap));
		pc_pod_ctr_accumulate(&snap, &s.bank);
		check_halves(snap.drop_bytes[PC_DROP_TX_FULL], &prev_bank);
		if (snap.pass_frames < prev_frames)
			fail_msg("frames went backwards");
		prev_frames = snap.pass_frames;
		reads++;
		changes += prev != before;
		if ((reads & 1023) == 0 && now_ns() - t0 > MAX_READ_NS)
			break;
	}
	__atomic_store_n(&s.stop, 1, __ATOMIC_RELAXED);
	assert_int_equal(pthread_join(th, NULL), 0);
	uint64_t n = __atomic_load_n(&s.written, __ATOMIC_ACQUIRE);

	print_message("  %" PRIu64 " adds, %" PRIu64 " concurrent reads, %" PRIu64
		      " of them saw a new value\n", n, reads, changes);
	/* the writer's stores became visible while it ran */
	assert_true(changes > 0);
	/* after the join every add is visible, none lost */
	assert_int_equal(pc_ctr_read(&s.plain), n * STEP);
	assert_int_equal(pc_ctr_read(&s.bank.drop_bytes[PC_DROP_TX_FULL]), n * STEP);
	assert_int_equal(pc_ctr_read(&s.bank.pass_frames), n);
	check_halves(pc_ctr_read(&s.plain), &prev);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_drop_names),
		cmocka_unit_test(test_pod_accumulate),
		cmocka_unit_test(test_link_accumulate),
		cmocka_unit_test(test_ctr_add),
		cmocka_unit_test(test_concurrent_reads),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
