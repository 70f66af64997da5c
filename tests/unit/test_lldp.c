/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The LLDP parser (shape/lldp.h): frames captured from Debian's lldpd
 * (tests/unit/lldp/), frames built here for every rejection, the rendering
 * of ids and names, the neighbour a port keeps and the rate that bounds
 * the control thread's work.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "shape/classify.h"
#include "shape/lldp.h"

#define NS 1000000000ull

struct frame {
	uint8_t b[2048];
	size_t len;
};

static void
load(const char *name, struct frame *f)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/tests/unit/lldp/%s", PC_SOURCE_ROOT, name);
	FILE *fp = fopen(path, "rb");
	assert_non_null(fp);
	f->len = fread(f->b, 1, sizeof(f->b), fp);
	fclose(fp);
	assert_true(f->len > 14);
}

static void
put(struct frame *f, const void *b, size_t n)
{
	assert_true(f->len + n <= sizeof(f->b));
	if (n == 0) /* an empty TLV's value: memcpy is not given NULL */
		return;
	memcpy(f->b + f->len, b, n);
	f->len += n;
}

/* The Ethernet header to the nearest-bridge group, with `tags` 802.1Q tags. */
static void
eth(struct frame *f, unsigned tags)
{
	static const uint8_t hdr[12] = { 0x01, 0x80, 0xc2, 0x00, 0x00, 0x0e,
					 0x02, 0x00, 0x00, 0xaa, 0x00, 0x01 };
	f->len = 0;
	put(f, hdr, sizeof(hdr));
	for (unsigned i = 0; i < tags; i++)
		put(f, (const uint8_t[]){ 0x81, 0x00, 0x00, 0x64 }, 4);
	put(f, (const uint8_t[]){ 0x88, 0xcc }, 2);
}

static void
tlv(struct frame *f, unsigned type, const void *val, size_t n)
{
	uint8_t h[2] = { (uint8_t)(type << 1 | n >> 8), (uint8_t)n };
	put(f, h, 2);
	put(f, val, n);
}

/* A chassis id (locally assigned "sw1"), port id (ifname "eth7") and TTL. */
static void
mandatory(struct frame *f, uint16_t ttl)
{
	tlv(f, 1, "\x07sw1", 4);
	tlv(f, 2,
	    "\x05"
	    "eth7",
	    5);
	tlv(f, 3, (const uint8_t[]){ (uint8_t)(ttl >> 8), (uint8_t)ttl }, 2);
}

static void
end(struct frame *f)
{
	tlv(f, 0, NULL, 0);
}

static int
parse(const struct frame *f, struct pc_lldp *l, struct pc_error *err)
{
	/* the parser must not read past len: give it a copy of exactly that */
	uint8_t *b = malloc(f->len);
	assert_non_null(b);
	memcpy(b, f->b, f->len);
	int rc = pc_lldp_parse_frame(b, f->len, l, err);
	free(b);
	return rc;
}

static void
expect_reject(const struct frame *f, const char *why)
{
	struct pc_lldp l;
	struct pc_error err;

	err.msg[0] = '\0';
	assert_int_equal(parse(f, &l, &err), -1);
	if (strstr(err.msg, why) == NULL)
		fail_msg("rejected as \"%s\", not for \"%s\"", err.msg, why);
}

static void
test_lldpd_mac(void **state)
{
	struct frame f;
	struct pc_lldp l;
	struct pc_error err;
	char text[PC_LLDP_TEXT_LEN];

	(void)state;
	load("lldpd-mac.bin", &f);
	assert_int_equal(parse(&f, &l, &err), 0);
	assert_int_equal(l.chassis.subtype, PC_LLDP_CHASSIS_MAC);
	assert_string_equal(pc_lldp_render_id(&l.chassis, false, text), "02:00:00:aa:00:01");
	assert_int_equal(l.port.subtype, PC_LLDP_PORT_MAC);
	assert_string_equal(pc_lldp_render_id(&l.port, true, text), "02:00:00:aa:00:01");
	assert_int_equal(l.ttl, 120);
	assert_true(l.has_name);
	assert_string_equal(pc_lldp_render_bytes(l.name, l.name_len, text), "leaf-sw01");
}

static void
test_lldpd_ifname(void **state)
{
	struct frame f;
	struct pc_lldp l;
	struct pc_error err;
	char text[PC_LLDP_TEXT_LEN];

	(void)state;
	load("lldpd-ifname.bin", &f);
	assert_int_equal(parse(&f, &l, &err), 0);
	assert_int_equal(l.port.subtype, 5);
	assert_string_equal(pc_lldp_render_id(&l.port, true, text), "vsw");
	assert_int_equal(l.ttl, 4);
	assert_string_equal(pc_lldp_render_bytes(l.name, l.name_len, text), "spine-02.fabric");
	/*
	 * Every cut of a real frame: parsed where it ends between two TLVs past
	 * the mandatory three (an LLDPDU may end without an End TLV), refused
	 * anywhere else, never read past its end (the copy in parse()).
	 */
	bool boundary[sizeof(f.b)] = { false };
	unsigned ntlv = 0;
	for (size_t off = 14; off + 2 <= f.len && ntlv < 64; ntlv++) {
		off += 2 + ((size_t)(f.b[off] & 1) << 8 | f.b[off + 1]);
		boundary[off] = ntlv >= 2;
	}
	for (size_t n = 14; n < f.len; n++) {
		struct frame cut = f;
		cut.len = n;
		struct pc_lldp c;
		if ((parse(&cut, &c, NULL) == 0) != boundary[n])
			fail_msg("the frame cut to %zu bytes: %s", n,
				 boundary[n] ? "refused" : "parsed");
	}
}

static void
test_lldpd_shutdown(void **state)
{
	struct frame f;
	struct pc_lldp l;

	(void)state;
	load("lldpd-shutdown.bin", &f);
	assert_int_equal(parse(&f, &l, NULL), 0);
	assert_int_equal(l.ttl, 0);
	assert_false(l.has_name);
}

static void
test_tagged_and_padded(void **state)
{
	struct frame f;
	struct pc_lldp l;
	char text[PC_LLDP_TEXT_LEN];

	(void)state;
	eth(&f, 2);
	mandatory(&f, 30);
	tlv(&f, 5, "tor-1", 5);
	end(&f);
	put(&f, "\0\0\0\0\0\0\0\0\0\0\0", 11); /* padding after the End TLV is not read */
	put(&f, "\xff\xff", 2);
	assert_int_equal(parse(&f, &l, NULL), 0);
	assert_string_equal(pc_lldp_render_id(&l.chassis, false, text), "sw1");
	assert_string_equal(pc_lldp_render_id(&l.port, true, text), "eth7");
	assert_int_equal(l.ttl, 30);
	assert_string_equal(pc_lldp_render_bytes(l.name, l.name_len, text), "tor-1");

	/* no End TLV: the LLDPDU ends with the frame */
	eth(&f, 0);
	mandatory(&f, 30);
	assert_int_equal(parse(&f, &l, NULL), 0);
	assert_false(l.has_name);
	/* five tags are more than the classifier takes: not an LLDP frame */
	eth(&f, 5);
	mandatory(&f, 30);
	expect_reject(&f, "not an LLDP frame");
}

static void
test_mandatory_rejected(void **state)
{
	struct frame f;

	(void)state;
	eth(&f, 0);
	expect_reject(&f, "no chassis id TLV");
	eth(&f, 0);
	tlv(&f, 2,
	    "\x05"
	    "eth7",
	    5);
	expect_reject(&f, "type 2 where the chassis id TLV must be");
	eth(&f, 0);
	tlv(&f, 1, "\x07sw1", 4);
	tlv(&f, 3, "\x00\x10", 2);
	expect_reject(&f, "type 3 where the port id TLV must be");
	eth(&f, 0);
	tlv(&f, 1, "\x07sw1", 4);
	tlv(&f, 2,
	    "\x05"
	    "eth7",
	    5);
	expect_reject(&f, "no time to live TLV");
	eth(&f, 0);
	tlv(&f, 1, "\x07sw1", 4);
	tlv(&f, 2,
	    "\x05"
	    "eth7",
	    5);
	tlv(&f, 3, "\x00\x10\x00", 3);
	expect_reject(&f, "time to live: 3 bytes");
	eth(&f, 0);
	tlv(&f, 1, "\x07sw1", 4);
	tlv(&f, 2,
	    "\x05"
	    "eth7",
	    5);
	tlv(&f, 3, "\x00", 1);
	expect_reject(&f, "time to live: 1 bytes");
	eth(&f, 0);
	end(&f);
	expect_reject(&f, "type 0 where the chassis id");
}

static void
test_id_bounds(void **state)
{
	struct frame f;
	struct pc_lldp l;
	uint8_t v[300];
	char text[PC_LLDP_TEXT_LEN];

	(void)state;
	memset(v, 'a', sizeof(v));
	v[0] = 7;
	/* a subtype and 255 bytes: the most an id holds */
	eth(&f, 0);
	tlv(&f, 1, v, 256);
	tlv(&f, 2, v, 256);
	tlv(&f, 3, "\x00\x10", 2);
	assert_int_equal(parse(&f, &l, NULL), 0);
	assert_int_equal(l.chassis.len, 255);
	assert_int_equal(strlen(pc_lldp_render_id(&l.chassis, false, text)), 255);
	/* one byte more, for either id */
	eth(&f, 0);
	tlv(&f, 1, v, 257);
	expect_reject(&f, "chassis id: 257 bytes");
	eth(&f, 0);
	tlv(&f, 1, v, 4);
	tlv(&f, 2, v, 257);
	expect_reject(&f, "port id: 257 bytes");
	/* a subtype without a value */
	eth(&f, 0);
	tlv(&f, 1, v, 1);
	expect_reject(&f, "chassis id: 1 bytes");
	eth(&f, 0);
	tlv(&f, 1, v, 0);
	expect_reject(&f, "chassis id: 0 bytes");
	/* a MAC address of 5 or 7 bytes */
	eth(&f, 0);
	tlv(&f, 1, "\x04\x02\x00\x00\xaa\x00", 6);
	expect_reject(&f, "chassis id: a MAC address of 5 bytes");
	eth(&f, 0);
	tlv(&f, 1, "\x07sw1", 4);
	tlv(&f, 2, "\x03\x02\x00\x00\xaa\x00\x01\x02", 8);
	expect_reject(&f, "port id: a MAC address of 7 bytes");
}

static void
test_tlv_past_end(void **state)
{
	struct frame f;

	(void)state;
	eth(&f, 0);
	mandatory(&f, 30);
	put(&f, (const uint8_t[]){ 5 << 1, 10, 'a', 'b' }, 4);
	expect_reject(&f, "8 bytes past the end");
	eth(&f, 0);
	mandatory(&f, 30);
	put(&f, (const uint8_t[]){ 5 << 1 }, 1);
	expect_reject(&f, "a TLV header cut short");
	/* a chassis id whose length runs past the frame */
	eth(&f, 0);
	put(&f, (const uint8_t[]){ 1 << 1, 200, 7, 's', 'w' }, 5);
	expect_reject(&f, "past the end");
	/* the 9-bit length: 511 bytes declared, fewer there */
	eth(&f, 0);
	mandatory(&f, 30);
	put(&f, (const uint8_t[]){ 127 << 1 | 1, 0xff }, 2);
	put(&f, "\0\0\0\0", 4);
	expect_reject(&f, "507 bytes past the end");
}

static void
test_optional_rejected(void **state)
{
	struct frame f;
	struct pc_lldp l;
	uint8_t big[300];

	(void)state;
	memset(big, 'n', sizeof(big));
	for (unsigned type = 1; type <= 3; type++) {
		eth(&f, 0);
		mandatory(&f, 30);
		tlv(&f, type, "\x07sw1", type == 3 ? 2 : 4);
		end(&f);
		expect_reject(&f, "a second TLV of type");
	}
	eth(&f, 0);
	mandatory(&f, 30);
	tlv(&f, 5, "a", 1);
	tlv(&f, 5, "b", 1);
	expect_reject(&f, "a second system name TLV");
	eth(&f, 0);
	mandatory(&f, 30);
	tlv(&f, 5, big, 256);
	expect_reject(&f, "system name: 256 bytes");
	eth(&f, 0);
	mandatory(&f, 30);
	tlv(&f, 0, "x", 1);
	expect_reject(&f, "an End TLV of 1 bytes");
	/* an empty name, unknown and organisation's TLVs: accepted, not kept */
	eth(&f, 0);
	mandatory(&f, 30);
	tlv(&f, 127, "\x00\x12\x0f\x01\x00\x80\x00\x36", 8);
	tlv(&f, 100, big, 300);
	tlv(&f, 5, "", 0);
	tlv(&f, 4, "uplink to pod 7", 15);
	end(&f);
	assert_int_equal(parse(&f, &l, NULL), 0);
	assert_true(l.has_name);
	assert_int_equal(l.name_len, 0);
	/* a frame of another ethertype is not read as LLDP */
	eth(&f, 0);
	f.b[12] = 0x08;
	f.b[13] = 0x00;
	mandatory(&f, 30);
	expect_reject(&f, "not an LLDP frame");
}

static void
test_render(void **state)
{
	struct pc_lldp_id id;
	char text[PC_LLDP_TEXT_LEN];
	uint8_t all[255];

	(void)state;
	id.subtype = PC_LLDP_CHASSIS_NETADDR;
	memcpy(id.value, "\x01\xc0\x00\x02\x07", 5);
	id.len = 5;
	assert_string_equal(pc_lldp_render_id(&id, false, text), "192.0.2.7");
	id.subtype = PC_LLDP_PORT_NETADDR;
	memcpy(id.value, "\x02\x20\x01\x0d\xb8\0\0\0\0\0\0\0\0\0\0\0\x01", 17);
	id.len = 17;
	assert_string_equal(pc_lldp_render_id(&id, true, text), "2001:db8::1");
	/* a network address of another family, or cut: its bytes */
	id.value[0] = 6;
	assert_string_equal(pc_lldp_render_id(&id, true, text),
			    "\\x06 \\x01\\x0d\\xb8\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00"
			    "\\x00\\x00\\x01");
	/* a chassis MAC subtype number is not a port's MAC subtype */
	id.subtype = PC_LLDP_CHASSIS_MAC;
	memcpy(id.value, "\x02\x00\x00\xaa\x00\x01", 6);
	id.len = 6;
	assert_string_equal(pc_lldp_render_id(&id, true, text), "\\x02\\x00\\x00\\xaa\\x00\\x01");
	/* text is kept, a backslash doubled, other bytes escaped: nothing is lost */
	assert_string_equal(pc_lldp_render_bytes((const uint8_t *)"a\\b\"c\n\x7f", 7, text),
			    "a\\\\b\"c\\x0a\\x7f");
	assert_string_equal(pc_lldp_render_bytes((const uint8_t *)"caf\xc3\xa9", 5, text),
			    "caf\\xc3\\xa9");
	memset(all, 0xff, sizeof(all));
	assert_int_equal(strlen(pc_lldp_render_bytes(all, sizeof(all), text)), 4 * 255);
}

static struct pc_lldp
neighbor(const char *chassis, const char *port, uint16_t ttl)
{
	struct pc_lldp l;

	memset(&l, 0, sizeof(l));
	l.chassis.subtype = 7;
	l.chassis.len = (uint8_t)strlen(chassis);
	memcpy(l.chassis.value, chassis, l.chassis.len);
	l.port.subtype = 5;
	l.port.len = (uint8_t)strlen(port);
	memcpy(l.port.value, port, l.port.len);
	l.ttl = ttl;
	return l;
}

static void
test_neighbor(void **state)
{
	struct pc_lldp_neighbor n;
	struct pc_lldp a = neighbor("sw1", "eth7", 120), b = neighbor("sw1", "eth8", 4);

	(void)state;
	memset(&n, 0, sizeof(n));
	assert_true(pc_lldp_neighbor_heard(&n, &a, 10 * NS, 1000 * NS));
	assert_true(n.present);
	assert_int_equal(n.changes, 1);
	/* the same chassis and port: refreshed, not a change */
	a.has_name = true;
	assert_false(pc_lldp_neighbor_heard(&n, &a, 40 * NS, 1030 * NS));
	assert_int_equal(n.changes, 1);
	assert_true(n.lldp.has_name);
	assert_int_equal(n.first_mono_ns, 10 * NS);
	assert_int_equal(n.last_mono_ns, 40 * NS);
	assert_int_equal(n.last_real_ns, 1030 * NS);
	/* not expired one ns before its TTL runs out, expired at it */
	assert_false(pc_lldp_neighbor_expire(&n, 160 * NS - 1));
	assert_true(pc_lldp_neighbor_expire(&n, 160 * NS));
	assert_false(n.present);
	assert_int_equal(n.changes, 2);
	assert_false(pc_lldp_neighbor_expire(&n, 500 * NS));
	/* another port of the same switch: a change, first seen anew */
	assert_true(pc_lldp_neighbor_heard(&n, &a, 600 * NS, 1600 * NS));
	assert_true(pc_lldp_neighbor_heard(&n, &b, 610 * NS, 1610 * NS));
	assert_int_equal(n.changes, 4);
	assert_int_equal(n.first_mono_ns, 610 * NS);
	/* a shutdown of another neighbour leaves this one; its own removes it */
	a.ttl = 0;
	assert_false(pc_lldp_neighbor_heard(&n, &a, 611 * NS, 1611 * NS));
	assert_true(n.present);
	b.ttl = 0;
	assert_true(pc_lldp_neighbor_heard(&n, &b, 612 * NS, 1612 * NS));
	assert_false(n.present);
	assert_int_equal(n.changes, 5);
	assert_false(pc_lldp_neighbor_heard(&n, &b, 613 * NS, 1613 * NS));
}

static void
test_rate(void **state)
{
	struct pc_lldp_rate r;
	unsigned taken = 0;

	(void)state;
	pc_lldp_rate_init(&r, 4, NS / 10, 0);
	for (unsigned i = 0; i < 10; i++)
		taken += pc_lldp_rate_take(&r, 0);
	assert_int_equal(taken, 4);
	/* one token per 100 ms: a flood over 10 s parses at most 4 + 100 */
	taken = 0;
	for (uint64_t t = 0; t <= 10 * NS; t += NS / 1000)
		taken += pc_lldp_rate_take(&r, t);
	assert_int_equal(taken, 100);
	/* idle for long: the burst again, not more */
	taken = 0;
	for (unsigned i = 0; i < 10; i++)
		taken += pc_lldp_rate_take(&r, 1000 * NS);
	assert_int_equal(taken, 4);
	/* a clock that reads earlier earns nothing */
	assert_false(pc_lldp_rate_take(&r, 999 * NS));
}

/* The classifier names LLDP frames, tagged or not, and nothing else as LLDP. */
static void
test_classify_lldp(void **state)
{
	struct frame f;
	struct pc_frame_key key;

	(void)state;
	for (unsigned tags = 0; tags <= 4; tags++) {
		eth(&f, tags);
		assert_int_equal(pc_classify(f.b, (uint32_t)f.len, PC_DIR_UP, &key), PC_CLASS_LLDP);
		assert_int_equal(key.l3_offset, 14 + 4 * tags);
	}
	eth(&f, 0);
	f.b[13] = 0xcd;
	assert_int_equal(pc_classify(f.b, (uint32_t)f.len, PC_DIR_DOWN, &key), PC_CLASS_OTHER);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lldpd_mac),
		cmocka_unit_test(test_lldpd_ifname),
		cmocka_unit_test(test_lldpd_shutdown),
		cmocka_unit_test(test_tagged_and_padded),
		cmocka_unit_test(test_mandatory_rejected),
		cmocka_unit_test(test_id_bounds),
		cmocka_unit_test(test_tlv_past_end),
		cmocka_unit_test(test_optional_rejected),
		cmocka_unit_test(test_render),
		cmocka_unit_test(test_neighbor),
		cmocka_unit_test(test_rate),
		cmocka_unit_test(test_classify_lldp),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
