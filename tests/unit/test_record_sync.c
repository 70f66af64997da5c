/* SPDX-License-Identifier: BSD-3-Clause */
/* SYNC records (type 11): layout, round trip, every truncation, every rule refused. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/bytes.h"
#include "log/record.h"

#define COMMON    (107 + 4) /* the common fields with the id "app1", no pods or links */
#define SYNC_SIZE 59

static struct pc_record
sync_record(void)
{
	struct pc_record r = { .type = PC_REC_SYNC,
			       .appliance_id = "app1",
			       .window_len_ns = 1000000000,
			       .window_start_ns = 5000000000,
			       .window_count = 2 };
	struct pc_record_sync *s = &r.sync;

	s->discipline = PC_SYNC_PTP4L;
	s->flags = PC_SYNC_LOCKED | PC_SYNC_GM;
	s->polls = 3;
	s->readings = 3;
	s->bounded = 3;
	s->offset = -(1500 << 16);
	s->path_delay = 700 << 16;
	s->bound_ns = 2200;
	memset(s->clock, 0x11, 8);
	memset(s->gm, 0x22, 8);
	s->port = 1;
	s->port_state = 9;
	s->steps_removed = 1;
	return r;
}

static void
test_layout(void **state)
{
	struct pc_record r = sync_record(), d;
	struct pc_error why;
	uint8_t out[512], again[512];

	(void)state;
	size_t n = pc_record_encode(&r, out, sizeof(out));
	assert_int_equal(n, COMMON + SYNC_SIZE);
	assert_int_equal(out[1], 11);
	const uint8_t *t = out + COMMON;
	assert_int_equal(t[0], PC_SYNC_PTP4L);
	assert_int_equal(t[1], PC_SYNC_LOCKED | PC_SYNC_GM);
	assert_int_equal(pc_load_be32(t + 2), 3);
	assert_int_equal(pc_load_be32(t + 6), 3);
	assert_int_equal(pc_load_be32(t + 10), 3);
	assert_true((int64_t)pc_load_be64(t + 14) == -(1500 << 16));
	assert_true(pc_load_be64(t + 22) == 700 << 16);
	assert_true(pc_load_be64(t + 30) == 2200);
	assert_int_equal(t[38], 0x11);
	assert_int_equal(t[46], 0x22);
	assert_int_equal(pc_load_be16(t + 54), 1);
	assert_int_equal(t[56], 9);
	assert_int_equal(pc_load_be16(t + 57), 1);

	assert_int_equal(pc_record_decode(out, n, &d, &why), 0);
	assert_int_equal(d.type, PC_REC_SYNC);
	assert_true(d.sync.offset == -(1500 << 16) && d.sync.bound_ns == 2200);
	assert_memory_equal(d.sync.gm, r.sync.gm, 8);
	assert_int_equal(pc_record_encode(&d, again, sizeof(again)), n);
	assert_memory_equal(again, out, n);
	assert_string_equal(pc_record_type_name(PC_REC_SYNC), "sync");
	pc_record_free(&d);

	for (size_t k = 0; k < n; k++)
		assert_int_equal(pc_record_decode(out, k, &d, &why), -1);
	out[n] = 0;
	assert_int_equal(pc_record_decode(out, n + 1, &d, &why), -1);
	assert_string_equal(why.msg, "trailing bytes after the record");
}

/* r encoded with its own fields as they are: the decoder's word on them. */
static void
expect_refused(struct pc_record r, const char *want)
{
	struct pc_record d;
	struct pc_error why;
	uint8_t out[512];

	/* the encoder writes nothing the decoder would refuse: patch the bytes */
	struct pc_record ok = sync_record();
	ok.window_count = r.window_count == 0 ? 1 : r.window_count;
	size_t n = pc_record_encode(&ok, out, sizeof(out));
	assert_int_equal(n, COMMON + SYNC_SIZE);
	uint8_t *t = out + COMMON;
	t[0] = r.sync.discipline;
	t[1] = r.sync.flags;
	pc_store_be32(t + 2, r.sync.polls);
	pc_store_be32(t + 6, r.sync.readings);
	pc_store_be32(t + 10, r.sync.bounded);
	pc_store_be64(t + 14, (uint64_t)r.sync.offset);
	pc_store_be64(t + 22, (uint64_t)r.sync.path_delay);
	pc_store_be64(t + 30, r.sync.bound_ns);
	assert_int_equal(pc_record_decode(out, n, &d, &why), -1);
	assert_string_equal(why.msg, want);
	assert_int_equal(pc_record_encode(&r, out, sizeof(out)), 0);
}

static void
test_refused(void **state)
{
	struct pc_record r;

	(void)state;
	r = sync_record(), r.sync.discipline = 2;
	expect_refused(r, "unknown clock discipline 2");
	r = sync_record(), r.sync.flags |= 0x04;
	expect_refused(r, "unknown sync flags 0x07");
	r = sync_record(), r.sync.offset = INT64_MIN;
	expect_refused(r, "sync offset out of range");
	r = sync_record(), r.sync.path_delay = INT64_MIN;
	expect_refused(r, "sync offset out of range");
	r = sync_record(), r.sync.readings = 4;
	expect_refused(r, "sync counts more readings than polls");
	r = sync_record(), r.sync.bounded = 2, r.sync.readings = 1;
	expect_refused(r, "sync counts more readings than polls");
	/* locked is every poll bounded, no more and no less */
	r = sync_record(), r.sync.bounded = 2;
	expect_refused(r, "sync locked flag disagrees with its counts");
	r = sync_record(), r.sync.flags = 0;
	expect_refused(r, "sync locked flag disagrees with its counts");
	r = sync_record(), r.sync.polls = r.sync.readings = r.sync.bounded = 0;
	r.sync.flags = PC_SYNC_LOCKED;
	expect_refused(r, "sync locked flag disagrees with its counts");
	r = sync_record(), r.sync.bounded = 0, r.sync.flags = 0;
	expect_refused(r, "sync bound without a bounded reading");
	r = sync_record(), r.sync.bounded = r.sync.readings = 0, r.sync.flags = 0,
	r.sync.bound_ns = 0;
	expect_refused(r, "sync offset without a reading");
}

/* It covers windows, as the WINDOW it follows; it carries no pods or links. */
static void
test_blocks(void **state)
{
	struct pc_record r = sync_record();
	struct pc_record_pod pod = { .id = "p", .uplink = "u" };
	uint8_t out[512];

	(void)state;
	r.window_count = 0;
	assert_int_equal(pc_record_encode(&r, out, sizeof(out)), 0);
	r = sync_record();
	r.npods = 1;
	r.pods = &pod;
	assert_int_equal(pc_record_encode(&r, out, sizeof(out)), 0);
	/* a window without a reading: no figures, the source unknown */
	r = sync_record();
	memset(&r.sync, 0, sizeof(r.sync));
	r.sync.discipline = PC_SYNC_PTP4L;
	r.sync.polls = 5;
	assert_int_equal(pc_record_encode(&r, out, sizeof(out)), COMMON + SYNC_SIZE);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_layout),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_blocks),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
