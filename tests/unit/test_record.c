/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Record encoding: round trips of every type with random values, and the
 * decoder's refusals (every truncation, a trailing byte, bad enums, bad
 * ids, counts that do not fit, type rules).
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

static const char id_chars[] =
	"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-";

/*
 * Test randomness from a seed (printed, so a failure can be replayed with
 * PC_TEST_SEED=hex): a pool refilled with randombytes_buf_deterministic.
 */
static uint8_t seed[randombytes_SEEDBYTES];
static uint8_t pool[1 << 16];
static size_t pool_off = sizeof(pool);
static uint64_t refills;

static void
rnd_bytes(void *out, size_t n)
{
	uint8_t *p = out;

	while (n > 0) {
		if (pool_off == sizeof(pool)) {
			uint8_t s[randombytes_SEEDBYTES];

			memcpy(s, seed, sizeof(s));
			for (size_t i = 0; i < sizeof(refills); i++)
				s[i] ^= (uint8_t)(refills >> (8 * i));
			refills++;
			randombytes_buf_deterministic(pool, sizeof(pool), s);
			pool_off = 0;
		}
		size_t k = sizeof(pool) - pool_off < n ? sizeof(pool) - pool_off : n;
		memcpy(p, pool + pool_off, k);
		pool_off += k;
		p += k;
		n -= k;
	}
}

static uint64_t
rnd64(void)
{
	uint64_t v;

	rnd_bytes(&v, sizeof(v));
	return v;
}

static uint32_t
rnd_below(uint32_t n)
{
	return (uint32_t)(rnd64() % n);
}

static void
rnd_id(char out[PC_ID_LEN])
{
	uint32_t n = 1 + rnd_below(PC_ID_LEN - 1);

	for (uint32_t i = 0; i < n; i++)
		out[i] = id_chars[rnd_below(sizeof(id_chars) - 1)];
	out[n] = '\0';
}

static void
rnd_pod_ctr(struct pc_pod_ctr *c)
{
	c->pass_frames = rnd64();
	c->pass_bytes = rnd64();
	for (int k = 0; k < PC_POD_DROP_COUNT; k++) {
		c->drop_frames[k] = rnd64();
		c->drop_bytes[k] = rnd64();
	}
}

/* A random valid record of `type`; pods and links are malloc'd. */
static void
rnd_record(struct pc_record *r, uint8_t type)
{
	memset(r, 0, sizeof(*r));
	r->type = type;
	rnd_id(r->appliance_id);
	r->time_ns = rnd64();
	r->window_len_ns = 1 + rnd64() % (3600ULL * 1000000000ULL);
	/* room for window_count windows after the start */
	r->window_start_ns = (rnd64() % (UINT64_MAX / r->window_len_ns - 1000)) * r->window_len_ns;
	r->window_count = type == PC_REC_WINDOW ? 1 + rnd64() % 3 :
	    type == PC_REC_GAP ? 1 + rnd64() % 999 : 0;
	rnd_bytes(r->podmap_digest, sizeof(r->podmap_digest));
	rnd_bytes(r->build_id, sizeof(r->build_id));
	if (type == PC_REC_START || type == PC_REC_WINDOW || type == PC_REC_RELOAD) {
		r->npods = rnd_below(20);
		r->pods = calloc(r->npods + 1, sizeof(*r->pods));
		for (uint32_t i = 0; i < r->npods; i++) {
			struct pc_record_pod *p = &r->pods[i];

			rnd_id(p->id);
			rnd_id(p->uplink);
			p->cap_bps = rnd64();
			p->burst_bytes = rnd64();
			p->mode = (uint8_t)rnd_below(2);
			if (type == PC_REC_WINDOW)
				for (int d = 0; d < PC_DIR_COUNT; d++)
					rnd_pod_ctr(&p->dir[d]);
		}
	}
	if (type == PC_REC_WINDOW) {
		r->nlinks = rnd_below(6);
		r->links = calloc(r->nlinks + 1, sizeof(*r->links));
		for (uint32_t i = 0; i < r->nlinks; i++) {
			rnd_id(r->links[i].name);
			for (int d = 0; d < PC_DIR_COUNT; d++)
				for (int k = 0; k < PC_LINK_DROP_COUNT; k++) {
					r->links[i].dir[d].drop_frames[k] = rnd64();
					r->links[i].dir[d].drop_bytes[k] = rnd64();
				}
		}
	}
}

static void
assert_same_record(const struct pc_record *a, const struct pc_record *b)
{
	assert_int_equal(a->type, b->type);
	assert_string_equal(a->appliance_id, b->appliance_id);
	assert_true(a->time_ns == b->time_ns);
	assert_true(a->window_start_ns == b->window_start_ns);
	assert_true(a->window_len_ns == b->window_len_ns);
	assert_true(a->window_count == b->window_count);
	assert_memory_equal(a->podmap_digest, b->podmap_digest, PC_DIGEST_LEN);
	assert_memory_equal(a->build_id, b->build_id, sizeof(a->build_id));
	assert_int_equal(a->npods, b->npods);
	for (uint32_t i = 0; i < a->npods; i++) {
		const struct pc_record_pod *p = &a->pods[i], *q = &b->pods[i];

		assert_string_equal(p->id, q->id);
		assert_string_equal(p->uplink, q->uplink);
		assert_true(p->cap_bps == q->cap_bps);
		assert_true(p->burst_bytes == q->burst_bytes);
		assert_int_equal(p->mode, q->mode);
		assert_memory_equal(p->dir, q->dir, sizeof(p->dir));
	}
	assert_int_equal(a->nlinks, b->nlinks);
	for (uint32_t i = 0; i < a->nlinks; i++) {
		assert_string_equal(a->links[i].name, b->links[i].name);
		assert_memory_equal(a->links[i].dir, b->links[i].dir, sizeof(a->links[i].dir));
	}
}

static uint8_t buf[PC_RECORD_MAX + 16];

static void
test_round_trip(void **state)
{
	(void)state;
	for (int iter = 0; iter < 200; iter++) {
		for (uint8_t type = PC_REC_START; type <= PC_REC_STOP; type++) {
			struct pc_record r, d;
			struct pc_error why;

			rnd_record(&r, type);
			size_t n = pc_record_encode(&r, buf, sizeof(buf));
			assert_true(n > 0);
			assert_int_equal(buf[0], 1);          /* format version */
			assert_int_equal(buf[1], type);
			assert_int_equal(pc_record_decode(buf, n, &d, &why), 0);
			assert_same_record(&r, &d);

			/* exactly one encoding: re-encoding gives the same bytes */
			static uint8_t again[PC_RECORD_MAX];
			assert_int_equal(pc_record_encode(&d, again, sizeof(again)), n);
			assert_memory_equal(buf, again, n);
			pc_record_free(&d);
			free(r.pods);
			free(r.links);
		}
	}
}

static void
test_encode_buffer_too_small(void **state)
{
	struct pc_record r;

	(void)state;
	rnd_record(&r, PC_REC_WINDOW);
	size_t n = pc_record_encode(&r, buf, sizeof(buf));
	assert_true(n > 0);
	for (size_t len = 0; len < n; len++)
		assert_int_equal(pc_record_encode(&r, buf, len), 0);
	assert_int_equal(pc_record_encode(&r, buf, n), n);
	free(r.pods);
	free(r.links);
}

static void
test_every_truncation(void **state)
{
	(void)state;
	for (uint8_t type = PC_REC_START; type <= PC_REC_STOP; type++) {
		struct pc_record r, d;
		struct pc_error why;

		rnd_record(&r, type);
		size_t n = pc_record_encode(&r, buf, sizeof(buf));
		assert_true(n > 0);
		for (size_t len = 0; len < n; len++) {
			why.msg[0] = '\0';
			assert_int_equal(pc_record_decode(buf, len, &d, &why), -1);
			assert_true(why.msg[0] != '\0');
			assert_null(d.pods);
			assert_null(d.links);
		}
		/* one byte more than the record is refused as well */
		buf[n] = (uint8_t)rnd64();
		assert_int_equal(pc_record_decode(buf, n + 1, &d, &why), -1);
		assert_string_equal(why.msg, "trailing bytes after the record");
		free(r.pods);
		free(r.links);
	}
}

/* A window record with one pod and one link, ids of known length. */
static size_t
sample_window(uint8_t *out, size_t outlen)
{
	struct pc_record_pod pod = { .id = "pod-a", .uplink = "up0", .cap_bps = 1000000000,
				     .burst_bytes = 1 << 20, .mode = PC_MODE_POLICE };
	struct pc_record_link link = { .name = "up0" };
	struct pc_record r = {
		.type = PC_REC_WINDOW, .appliance_id = "app1", .time_ns = 5,
		.window_start_ns = 120000000000ULL, .window_len_ns = 60000000000ULL,
		.window_count = 1, .npods = 1, .pods = &pod, .nlinks = 1, .links = &link,
	};

	pod.dir[PC_DIR_UP].pass_bytes = 77;
	return pc_record_encode(&r, out, outlen);
}

/* Offsets in sample_window()'s encoding. */
#define OFF_VERSION 0
#define OFF_TYPE 1
#define OFF_APP_LEN 2
#define OFF_APP 3                               /* "app1" */
#define OFF_WSTART (OFF_APP + 4 + 8)
#define OFF_WLEN (OFF_WSTART + 8)
#define OFF_WCOUNT (OFF_WLEN + 8)
#define OFF_NPODS (OFF_WCOUNT + 8 + 32 + 32)
#define OFF_POD_ID_LEN (OFF_NPODS + 4)
#define OFF_POD_ID (OFF_POD_ID_LEN + 1)         /* "pod-a" */
#define OFF_UPLINK (OFF_POD_ID + 5 + 1)         /* "up0" */
#define OFF_MODE (OFF_UPLINK + 3 + 8 + 8)
#define OFF_NLINKS (OFF_MODE + 1 + 2 * 64)
#define OFF_LINK_NAME (OFF_NLINKS + 4 + 1)

static void
expect_refused(const uint8_t *rec, size_t n, const char *want)
{
	struct pc_record d;
	struct pc_error why;

	assert_int_equal(pc_record_decode(rec, n, &d, &why), -1);
	assert_true(why.msg[0] != '\0');
	if (want != NULL)
		assert_string_equal(why.msg, want);
}

static void
test_layout_and_bad_fields(void **state)
{
	uint8_t rec[512], t[512];
	struct pc_record d;
	struct pc_error why;

	(void)state;
	size_t n = sample_window(rec, sizeof(rec));
	assert_int_equal(n, OFF_LINK_NAME + 3 + 2 * 32);
	/* the offsets above are right: the decoder agrees with them */
	assert_int_equal(rec[OFF_APP_LEN], 4);
	assert_memory_equal(rec + OFF_APP, "app1", 4);
	assert_memory_equal(rec + OFF_POD_ID, "pod-a", 5);
	assert_int_equal(rec[OFF_MODE], PC_MODE_POLICE);
	assert_int_equal(pc_record_decode(rec, n, &d, &why), 0);
	assert_true(d.pods[0].dir[PC_DIR_UP].pass_bytes == 77);
	pc_record_free(&d);

#define MUTATE(off, val, want) do { \
		memcpy(t, rec, n); t[(off)] = (uint8_t)(val); expect_refused(t, n, (want)); \
	} while (0)
	MUTATE(OFF_VERSION, 0, "unknown record format version");
	MUTATE(OFF_VERSION, 2, "unknown record format version");
	MUTATE(OFF_TYPE, 0, "unknown record type");
	MUTATE(OFF_TYPE, PC_REC_NEWEST + 1, "unknown record type");
	/* a window record read as a clock record: the clock fields are missing */
	MUTATE(OFF_TYPE, PC_REC_CLOCK, NULL);
	MUTATE(OFF_TYPE, 0xff, "unknown record type");
	MUTATE(OFF_MODE, 4, "unknown pod mode bits");
	MUTATE(OFF_MODE, 0x80, "unknown pod mode bits");
	MUTATE(OFF_MODE, PC_POD_MODE_POLICE | PC_POD_MODE_WINDOW | 8, "unknown pod mode bits");
	MUTATE(OFF_APP + 1, '/', "appliance id is not [A-Za-z0-9._-]{1,63}");
	MUTATE(OFF_APP + 1, ' ', "appliance id is not [A-Za-z0-9._-]{1,63}");
	MUTATE(OFF_APP + 1, 0, "appliance id is not [A-Za-z0-9._-]{1,63}");
	MUTATE(OFF_APP + 1, 0xc3, "appliance id is not [A-Za-z0-9._-]{1,63}");
	MUTATE(OFF_POD_ID, ':', "pod id is not [A-Za-z0-9._-]{1,63}");
	MUTATE(OFF_UPLINK, '\n', "uplink name is not [A-Za-z0-9._-]{1,63}");
	MUTATE(OFF_LINK_NAME, '*', "link name is not [A-Za-z0-9._-]{1,63}");
	/* a zero-length id */
	MUTATE(OFF_APP_LEN, 0, NULL);
	MUTATE(OFF_POD_ID_LEN, 0, NULL);
	/* a length of 64 or more is refused even with bytes to back it */
	MUTATE(OFF_APP_LEN, 64, NULL);
	/* window count: 1 in a window record */
	MUTATE(OFF_WCOUNT + 7, 0, "window record of zero windows");
	MUTATE(OFF_WCOUNT, 0x40, "windows run past the end of time");
	/* several windows in one record (the control thread fell behind): accepted */
	memcpy(t, rec, n);
	t[OFF_WCOUNT + 7] = 3;
	assert_int_equal(pc_record_decode(t, n, &d, &why), 0);
	assert_true(d.window_count == 3);
	pc_record_free(&d);
	/* window start not a multiple of the length */
	MUTATE(OFF_WSTART + 7, 1, "window start is not a multiple of the window length");
	/* zero window length */
	memcpy(t, rec, n);
	memset(t + OFF_WLEN, 0, 8);
	expect_refused(t, n, "window length is zero");
	/* a pod count the bytes cannot hold: refused before anything is allocated */
	memcpy(t, rec, n);
	t[OFF_NPODS + 3] = 2;
	expect_refused(t, n, NULL);
	memcpy(t, rec, n);
	t[OFF_NPODS] = 0xff;
	expect_refused(t, n, "more pods than PC_MAX_PODS");
	memcpy(t, rec, n);
	t[OFF_NPODS + 2] = (PC_MAX_PODS + 1) >> 8;
	t[OFF_NPODS + 3] = (PC_MAX_PODS + 1) & 0xff;
	expect_refused(t, n, "more pods than PC_MAX_PODS");
	memcpy(t, rec, n);
	t[OFF_NLINKS + 3] = PC_MAX_UPLINKS + 1;
	expect_refused(t, n, "more links than PC_MAX_UPLINKS");
	/* pods in a gap record, links in a start record */
	MUTATE(OFF_TYPE, PC_REC_GAP, NULL);
	MUTATE(OFF_TYPE, PC_REC_START, NULL);
#undef MUTATE
}

static void
test_type_rules(void **state)
{
	struct pc_record_pod pod = { .id = "p", .uplink = "u", .cap_bps = 1, .burst_bytes = 1 };
	struct pc_record_link link = { .name = "u" };
	struct pc_record r = { .type = PC_REC_START, .appliance_id = "a", .window_len_ns = 10,
			       .window_start_ns = 20 };
	uint8_t out[1024];

	(void)state;
	assert_true(pc_record_encode(&r, out, sizeof(out)) > 0);
	/* START, RELOAD, STOP carry no window count; GAP needs one */
	r.window_count = 1;
	assert_int_equal(pc_record_encode(&r, out, sizeof(out)), 0);
	r.type = PC_REC_GAP;
	assert_true(pc_record_encode(&r, out, sizeof(out)) > 0);
	r.window_count = 0;
	assert_int_equal(pc_record_encode(&r, out, sizeof(out)), 0);
	/* pods only in START, WINDOW, RELOAD */
	r.type = PC_REC_STOP;
	r.npods = 1;
	r.pods = &pod;
	assert_int_equal(pc_record_encode(&r, out, sizeof(out)), 0);
	r.type = PC_REC_RELOAD;
	assert_true(pc_record_encode(&r, out, sizeof(out)) > 0);
	/* counters only in WINDOW */
	pod.dir[PC_DIR_DOWN].drop_bytes[PC_DROP_TX_FULL] = 1;
	assert_int_equal(pc_record_encode(&r, out, sizeof(out)), 0);
	r.type = PC_REC_WINDOW;
	r.window_count = 1;
	assert_true(pc_record_encode(&r, out, sizeof(out)) > 0);
	/* links only in WINDOW */
	r.nlinks = 1;
	r.links = &link;
	assert_true(pc_record_encode(&r, out, sizeof(out)) > 0);
	r.type = PC_REC_RELOAD;
	r.window_count = 0;
	memset(&pod.dir, 0, sizeof(pod.dir));
	assert_int_equal(pc_record_encode(&r, out, sizeof(out)), 0);
	/* ids: empty, too long, bad character */
	r.type = PC_REC_WINDOW;
	r.window_count = 1;
	snprintf(pod.id, sizeof(pod.id), "has space");
	assert_int_equal(pc_record_encode(&r, out, sizeof(out)), 0);
	pod.id[0] = '\0';
	assert_int_equal(pc_record_encode(&r, out, sizeof(out)), 0);
	memset(pod.id, 'x', sizeof(pod.id));  /* no NUL within PC_ID_LEN */
	assert_int_equal(pc_record_encode(&r, out, sizeof(out)), 0);
	memset(pod.id, 'x', PC_ID_LEN - 1);
	pod.id[PC_ID_LEN - 1] = '\0';
	assert_true(pc_record_encode(&r, out, sizeof(out)) > 0);
	pod.mode = 7;
	assert_int_equal(pc_record_encode(&r, out, sizeof(out)), 0);
}

/*
 * CLOCK: the common fields, then elapsed_ns and step_ns (two's complement),
 * and nothing else; the clock fields belong to no other type.
 */
static void
test_clock_record(void **state)
{
	struct pc_record r = { .type = PC_REC_CLOCK,
			       .appliance_id = "app1",
			       .window_len_ns = 1000000000,
			       .window_start_ns = 5000000000,
			       .clock.elapsed_ns = 0,
			       .clock.step_ns = -300000000000ll };
	struct pc_record d;
	struct pc_record_pod pod = { .id = "p", .uplink = "u", .cap_bps = 1, .burst_bytes = 1 };
	struct pc_error why;
	uint8_t out[512], t[512];

	(void)state;
	size_t n = pc_record_encode(&r, out, sizeof(out));
	/* 107 bytes plus the appliance id, and the two clock fields */
	assert_int_equal(n, 107 + 4 + 16);
	assert_int_equal(out[OFF_TYPE], 6);
	/* step -300 s, big-endian two's complement, last */
	static const uint8_t step[8] = { 0xff, 0xff, 0xff, 0xba, 0x26, 0x9b, 0x48, 0x00 };
	assert_memory_equal(out + n - 8, step, 8);
	assert_int_equal(pc_record_decode(out, n, &d, &why), 0);
	assert_int_equal(d.type, PC_REC_CLOCK);
	assert_true(d.clock.step_ns == -300000000000ll);
	assert_true(d.clock.elapsed_ns == 0);
	assert_true(d.window_start_ns == 5000000000ull);
	/* re-encodes to the same bytes */
	assert_int_equal(pc_record_encode(&d, t, sizeof(t)), n);
	assert_memory_equal(t, out, n);
	pc_record_free(&d);
	r.clock.elapsed_ns = 7;
	r.clock.step_ns = 600000000000ll;
	n = pc_record_encode(&r, out, sizeof(out));
	assert_int_equal(pc_record_decode(out, n, &d, &why), 0);
	assert_true(d.clock.elapsed_ns == 7 && d.clock.step_ns == 600000000000ll);
	pc_record_free(&d);
	/* every truncation, and a trailing byte, are refused */
	for (size_t k = 0; k < n; k++)
		expect_refused(out, k, NULL);
	memcpy(t, out, n);
	t[n] = 0;
	expect_refused(t, n + 1, "trailing bytes after the record");
	/* no window count, no pods, no links */
	r.window_count = 1;
	assert_int_equal(pc_record_encode(&r, out, sizeof(out)), 0);
	r.window_count = 0;
	r.npods = 1;
	r.pods = &pod;
	assert_int_equal(pc_record_encode(&r, out, sizeof(out)), 0);
	r.npods = 0;
	r.clock.step_ns = INT64_MIN;
	assert_int_equal(pc_record_encode(&r, out, sizeof(out)), 0);
	/* the clock fields are CLOCK's: a STOP is its common fields, whatever its union holds */
	r.type = PC_REC_STOP;
	r.clock.step_ns = 1;
	r.clock.elapsed_ns = 1;
	n = pc_record_encode(&r, out, sizeof(out));
	assert_int_equal(n, 107 + 4);
	/* a stop record read as a clock record is too short */
	out[OFF_TYPE] = PC_REC_CLOCK;
	expect_refused(out, n, "record is truncated");
}

/*
 * A type added after this version (docs/log-format.md, "Types added
 * later"), framed as version 1 frames every type: pc_record_decode()
 * refuses it as unknown, pc_record_decode_unknown() reads its common fields
 * and blocks as strictly as any type's and leaves its own fields unread.
 */
static void
test_unknown_type(void **state)
{
	uint8_t rec[512], t[512];
	struct pc_record d;
	struct pc_error why;

	(void)state;
	size_t n = sample_window(rec, sizeof(rec));
	memcpy(t, rec, n);
	t[OFF_TYPE] = 200;
	memcpy(t + n, "own", 3); /* its own fields, after the links */
	expect_refused(t, n + 3, "unknown record type");
	assert_int_equal(pc_record_decode_unknown(t, n + 3, &d, &why), 0);
	assert_int_equal(d.type, 200);
	assert_string_equal(pc_record_type_name(d.type), "unknown");
	assert_string_equal(d.appliance_id, "app1");
	assert_true(d.window_start_ns == 120000000000ULL && d.window_len_ns == 60000000000ULL);
	assert_true(d.window_count == 1);
	assert_int_equal(d.npods, 1);
	assert_string_equal(d.pods[0].id, "pod-a");
	assert_true(d.pods[0].dir[PC_DIR_UP].pass_bytes == 77);
	assert_int_equal(d.nlinks, 1);
	assert_string_equal(d.links[0].name, "up0");
	pc_record_free(&d);
	assert_null(d.pods);
	assert_null(d.links);
	/* fields of its own or none, and any window count: those are its rules */
	t[OFF_WCOUNT + 7] = 0;
	assert_int_equal(pc_record_decode_unknown(t, n, &d, &why), 0);
	pc_record_free(&d);
	/* a cut inside the common fields or blocks is refused, and leaves nothing allocated */
	for (size_t len = 0; len < n; len++) {
		why.msg[0] = '\0';
		assert_int_equal(pc_record_decode_unknown(t, len, &d, &why), -1);
		assert_true(why.msg[0] != '\0');
		assert_null(d.pods);
		assert_null(d.links);
	}
	/* its common fields and blocks are held to what every type's are */
#define UNKNOWN_REFUSED(off, val, want)                                         \
	do {                                                                    \
		memcpy(t, rec, n);                                              \
		t[OFF_TYPE] = 200;                                              \
		t[(off)] = (uint8_t)(val);                                      \
		assert_int_equal(pc_record_decode_unknown(t, n, &d, &why), -1); \
		assert_string_equal(why.msg, (want));                           \
	} while (0)
	UNKNOWN_REFUSED(OFF_APP + 1, '/', "appliance id is not [A-Za-z0-9._-]{1,63}");
	UNKNOWN_REFUSED(OFF_WSTART + 7, 1, "window start is not a multiple of the window length");
	UNKNOWN_REFUSED(OFF_WCOUNT, 0x40, "windows run past the end of time");
	UNKNOWN_REFUSED(OFF_MODE, 4, "unknown pod mode bits");
	UNKNOWN_REFUSED(OFF_NPODS, 0xff, "more pods than PC_MAX_PODS");
	UNKNOWN_REFUSED(OFF_LINK_NAME, '*', "link name is not [A-Za-z0-9._-]{1,63}");
	UNKNOWN_REFUSED(OFF_VERSION, 2, "unknown record format version");
#undef UNKNOWN_REFUSED
	/* a type this version knows is pc_record_decode()'s, even with bytes after its links */
	memcpy(t, rec, n);
	t[n] = 0;
	assert_int_equal(pc_record_decode_unknown(t, n + 1, &d, &why), -1);
	assert_string_equal(why.msg, "record type 2 is one this version knows");
	assert_null(d.pods);
	/* and podcapd never writes a type it does not know */
	struct pc_record u = { .type = 200, .appliance_id = "app1", .window_len_ns = 10 };
	assert_int_equal(pc_record_encode(&u, t, sizeof(t)), 0);
}

/* The largest record the pod map allows fits in PC_RECORD_MAX. */
static void
test_largest_record_fits(void **state)
{
	struct pc_record r = { .type = PC_REC_WINDOW, .window_len_ns = 1, .window_count = 1,
			       .npods = PC_MAX_PODS, .nlinks = PC_MAX_UPLINKS };
	struct pc_record d;
	struct pc_error why;
	uint8_t *out = malloc(PC_RECORD_MAX);

	(void)state;
	memset(r.appliance_id, 'a', PC_ID_LEN - 1);
	r.pods = calloc(PC_MAX_PODS, sizeof(*r.pods));
	r.links = calloc(PC_MAX_UPLINKS, sizeof(*r.links));
	for (uint32_t i = 0; i < PC_MAX_PODS; i++) {
		snprintf(r.pods[i].id, PC_ID_LEN, "%063u", i);
		memset(r.pods[i].uplink, 'u', PC_ID_LEN - 1);
		rnd_pod_ctr(&r.pods[i].dir[0]);
	}
	for (uint32_t i = 0; i < PC_MAX_UPLINKS; i++)
		snprintf(r.links[i].name, PC_ID_LEN, "%063u", i);
	size_t n = pc_record_encode(&r, out, PC_RECORD_MAX);
	assert_true(n > PC_RECORD_MAX / 2);
	assert_true(n <= PC_RECORD_MAX);
	assert_int_equal(pc_record_decode(out, n, &d, &why), 0);
	assert_same_record(&r, &d);
	pc_record_free(&d);
	free(r.pods);
	free(r.links);
	free(out);
}

/* Random bytes never crash the decoder, and what it accepts re-encodes identically. */
static void
test_random_mutations(void **state)
{
	uint8_t rec[4096], t[4096], again[4096];

	(void)state;
	for (int iter = 0; iter < 20000; iter++) {
		struct pc_record r, d;
		struct pc_error why;

		rnd_record(&r, (uint8_t)(PC_REC_START + rnd_below(5)));
		size_t n = pc_record_encode(&r, rec, sizeof(rec));
		free(r.pods);
		free(r.links);
		if (n == 0)
			continue;
		memcpy(t, rec, n);
		t[rnd_below((uint32_t)n)] ^= (uint8_t)(1 + rnd_below(255));
		if (pc_record_decode(t, n, &d, &why) == 0) {
			assert_int_equal(pc_record_encode(&d, again, sizeof(again)), n);
			assert_memory_equal(t, again, n);
			pc_record_free(&d);
		}
	}
}

static void
test_type_names(void **state)
{
	(void)state;
	assert_string_equal(pc_record_type_name(PC_REC_START), "start");
	assert_string_equal(pc_record_type_name(PC_REC_WINDOW), "window");
	assert_string_equal(pc_record_type_name(PC_REC_GAP), "gap");
	assert_string_equal(pc_record_type_name(PC_REC_RELOAD), "reload");
	assert_string_equal(pc_record_type_name(PC_REC_STOP), "stop");
	assert_string_equal(pc_record_type_name(PC_REC_CLOCK), "clock");
	assert_string_equal(pc_record_type_name(0), "unknown");
	assert_string_equal(pc_record_type_name(PC_REC_ATTEST), "attest");
	assert_string_equal(pc_record_type_name(PC_REC_OBSERVE_SLICES), "observe-slices");
	assert_string_equal(pc_record_type_name(PC_REC_LINK), "link");
	assert_string_equal(pc_record_type_name(PC_REC_SYNC), "sync");
	assert_string_equal(pc_record_type_name(PC_REC_NEWEST + 1), "unknown");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_encode_buffer_too_small),
		cmocka_unit_test(test_every_truncation),
		cmocka_unit_test(test_layout_and_bad_fields),
		cmocka_unit_test(test_type_rules),
		cmocka_unit_test(test_clock_record),
		cmocka_unit_test(test_unknown_type),
		cmocka_unit_test(test_largest_record_fits),
		cmocka_unit_test(test_random_mutations),
		cmocka_unit_test(test_type_names),
	};

	const char *env = getenv("PC_TEST_SEED");
	char hex[2 * sizeof(seed) + 1];

	if (sodium_init() < 0)
		return 1;
	if (env == NULL || sodium_hex2bin(seed, sizeof(seed), env, strlen(env), NULL, NULL,
					   NULL) != 0)
		randombytes_buf(seed, sizeof(seed));
	sodium_bin2hex(hex, sizeof(hex), seed, sizeof(seed));
	printf("PC_TEST_SEED=%s\n", hex);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
