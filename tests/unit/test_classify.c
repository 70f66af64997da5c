/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Frame classifier tests. Frames are built byte by byte and handed to the
 * classifier in a heap buffer of exactly the frame's length, so that a
 * sanitizer build catches any read past the end.
 */
#include <setjmp.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <sodium.h>

#include "shape/classify.h"

#define ETH_IPV4	0x0800
#define ETH_ARP		0x0806
#define ETH_IPV6	0x86dd
#define ETH_VLAN	0x8100
#define ETH_QINQ	0x88a8
#define ETH_QINQ_OLD	0x9100
#define ETH_LLDP	0x88cc

#define PROTO_HOPOPTS	0
#define PROTO_TCP	6
#define PROTO_UDP	17
#define PROTO_ROUTING	43
#define PROTO_FRAGMENT	44
#define PROTO_ICMPV6	58
#define PROTO_DSTOPTS	60

#define ND_NS		135
#define ND_NA		136

struct frame {
	uint8_t b[512];
	size_t len;
};

static const uint8_t v4_pod[4] = { 10, 1, 2, 3 };
static const uint8_t v4_fabric[4] = { 192, 0, 2, 9 };

static const uint8_t v6_pod[16] = {
	0x20, 0x01, 0x0d, 0xb8, 0x00, 0x0a, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x05 };
static const uint8_t v6_fabric[16] = {
	0x20, 0x01, 0x0d, 0xb8, 0xff, 0xff, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x01 };
static const uint8_t v6_link_local[16] = {
	0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x01 };
static const uint8_t v6_solicited[16] = {
	0xff, 0x02, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x01, 0xff, 0, 0, 0x05 };
static const uint8_t v6_all_nodes[16] = {
	0xff, 0x02, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x01 };
static const uint8_t v6_unspec[16];

static const uint8_t zero16[16];

/* Frame builder */

static void
put8(struct frame *f, uint8_t v)
{
	assert_true(f->len < sizeof(f->b));
	f->b[f->len++] = v;
}

static void
put16(struct frame *f, uint16_t v)
{
	put8(f, (uint8_t)(v >> 8));
	put8(f, (uint8_t)v);
}

static void
put_bytes(struct frame *f, const uint8_t *p, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		put8(f, p[i]);
}

static void
put_fill(struct frame *f, uint8_t v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		put8(f, v);
}

static void
set16(struct frame *f, size_t off, uint16_t v)
{
	assert_true(off + 2 <= f->len);
	f->b[off] = (uint8_t)(v >> 8);
	f->b[off + 1] = (uint8_t)v;
}

/* Destination and source MAC, then the outer type (ethertype or TPID). */
static void
eth_hdr(struct frame *f, uint16_t type)
{
	static const uint8_t dst[6] = { 0x02, 0, 0, 0, 0, 0x01 };
	static const uint8_t src[6] = { 0x02, 0, 0, 0, 0, 0x02 };

	f->len = 0;
	put_bytes(f, dst, sizeof(dst));
	put_bytes(f, src, sizeof(src));
	put16(f, type);
}

/* The rest of a tag after its TPID: TCI, then the next type. */
static void
vlan_tag(struct frame *f, uint16_t vid, uint16_t next_type)
{
	put16(f, vid & 0x0fff);
	put16(f, next_type);
}

/* Returns the offset of the header in the frame. */
static size_t
ipv4_hdr(struct frame *f, uint8_t proto, const uint8_t *src,
    const uint8_t *dst, uint16_t payload_len)
{
	size_t off = f->len;

	put8(f, 0x45);
	put8(f, 0);
	put16(f, (uint16_t)(20 + payload_len));
	put16(f, 0x1234);		/* id */
	put16(f, 0x4000);		/* DF */
	put8(f, 64);
	put8(f, proto);
	put16(f, 0);			/* checksum is not checked */
	put_bytes(f, src, 4);
	put_bytes(f, dst, 4);
	return off;
}

static size_t
ipv6_hdr(struct frame *f, uint8_t next, const uint8_t *src,
    const uint8_t *dst, uint16_t payload_len)
{
	size_t off = f->len;

	put8(f, 0x60);
	put8(f, 0);
	put16(f, 0);
	put16(f, payload_len);
	put8(f, next);
	put8(f, 64);
	put_bytes(f, src, 16);
	put_bytes(f, dst, 16);
	return off;
}

static void
tcp_hdr(struct frame *f)
{
	put16(f, 40000);
	put16(f, 443);
	put16(f, 0);
	put16(f, 1);			/* seq */
	put16(f, 0);
	put16(f, 0);			/* ack */
	put8(f, 0x50);			/* data offset 5 */
	put8(f, 0x02);			/* SYN */
	put16(f, 65535);
	put16(f, 0);
	put16(f, 0);
}

static void
udp_hdr(struct frame *f, uint16_t payload_len)
{
	put16(f, 5000);
	put16(f, 53);
	put16(f, (uint16_t)(8 + payload_len));
	put16(f, 0);
}

/* ICMPv6 NS/NA without options: 24 bytes. */
static void
nd_msg(struct frame *f, uint8_t type, const uint8_t *target)
{
	put8(f, type);
	put8(f, 0);
	put16(f, 0);
	put8(f, type == ND_NA ? 0x60 : 0);	/* solicited, override */
	put_fill(f, 0, 3);
	put_bytes(f, target, 16);
}

static void
arp_msg(struct frame *f, uint16_t htype, uint16_t ptype, uint8_t hlen,
    uint8_t plen, uint16_t op, const uint8_t *spa, const uint8_t *tpa)
{
	put16(f, htype);
	put16(f, ptype);
	put8(f, hlen);
	put8(f, plen);
	put16(f, op);
	put_fill(f, 0xaa, hlen);	/* sender hardware address */
	put_bytes(f, spa, plen);
	put_fill(f, op == 1 ? 0 : 0xbb, hlen);
	put_bytes(f, tpa, plen);
}

/* Classification helpers */

/*
 * The inline fast path (pc_classify_ipv4_plain) against the full parser on
 * the same bytes: where it decides, pc_classify says IPv4 at offset 14 with
 * the same address; an untagged IPv4 frame with a 20-byte header that
 * pc_classify accepts, it decides too. Returns 1 when it decided. Every
 * frame of these tests goes through it (classify_len).
 */
static int
check_plain(const uint8_t *b, size_t len, enum pc_dir dir, const struct pc_frame_key *key,
	    enum pc_class cls)
{
	uint32_t addr = 0;
	bool plain = pc_classify_ipv4_plain(b, (uint32_t)len, dir, &addr);

	if (plain) {
		uint8_t be[4] = { (uint8_t)(addr >> 24), (uint8_t)(addr >> 16),
				  (uint8_t)(addr >> 8), (uint8_t)addr };
		assert_int_equal(cls, PC_CLASS_IPV4);
		assert_int_equal(key->ethertype, ETH_IPV4);
		assert_int_equal(key->l3_offset, 14);
		assert_memory_equal(key->addr, be, 4);
		/* burst.c takes such a frame as untagged without asking pc_classify */
		assert_int_equal(key->vlan, PC_VLAN_NONE);
		return 1;
	}
	assert_false(cls == PC_CLASS_IPV4 && key->ethertype == ETH_IPV4 && key->l3_offset == 14 &&
		     b[14] == 0x45);
	return 0;
}

/*
 * Classifies the first len bytes of f from an exactly sized heap copy, with
 * the key pre-filled with garbage so stale fields are caught.
 */
static enum pc_class
classify_len(const struct frame *f, size_t len, enum pc_dir dir,
    struct pc_frame_key *key)
{
	enum pc_class cls;
	uint8_t *buf;

	assert_true(len <= f->len);
	buf = malloc(len > 0 ? len : 1);
	assert_non_null(buf);
	memcpy(buf, f->b, len);
	memset(key, 0xa5, sizeof(*key));
	cls = pc_classify(buf, (uint32_t)len, dir, key);
	check_plain(buf, len, dir, key, cls);
	free(buf);
	return cls;
}

static enum pc_class
classify(const struct frame *f, enum pc_dir dir, struct pc_frame_key *key)
{
	return classify_len(f, f->len, dir, key);
}

static void
expect_v4(const struct frame *f, enum pc_dir dir, const uint8_t *addr,
    uint16_t ethertype, uint16_t l3_offset)
{
	struct pc_frame_key key;

	assert_int_equal(classify(f, dir, &key), PC_CLASS_IPV4);
	assert_memory_equal(key.addr, addr, 4);
	assert_memory_equal(key.addr + 4, zero16, 12);
	assert_int_equal(key.ethertype, ethertype);
	assert_int_equal(key.l3_offset, l3_offset);
}

static void
expect_v6(const struct frame *f, enum pc_dir dir, const uint8_t *addr,
    uint16_t l3_offset)
{
	struct pc_frame_key key;

	assert_int_equal(classify(f, dir, &key), PC_CLASS_IPV6);
	assert_memory_equal(key.addr, addr, 16);
	assert_int_equal(key.ethertype, ETH_IPV6);
	assert_int_equal(key.l3_offset, l3_offset);
}

static void
expect_class(const struct frame *f, enum pc_class want)
{
	struct pc_frame_key key;
	int d;

	for (d = PC_DIR_UP; d < PC_DIR_COUNT; d++) {
		assert_int_equal(classify(f, (enum pc_dir)d, &key), want);
		if (want == PC_CLASS_OTHER || want == PC_CLASS_MALFORMED || want == PC_CLASS_LLDP)
			assert_memory_equal(key.addr, zero16, 16);
	}
}

static void
build_ipv4_tcp(struct frame *f)
{
	eth_hdr(f, ETH_IPV4);
	ipv4_hdr(f, PROTO_TCP, v4_pod, v4_fabric, 20);
	tcp_hdr(f);
}

static void
build_ipv6_tcp(struct frame *f)
{
	eth_hdr(f, ETH_IPV6);
	ipv6_hdr(f, PROTO_TCP, v6_pod, v6_fabric, 20);
	tcp_hdr(f);
}

/* Plain IP */

static void
test_ipv4_up_down(void **state)
{
	struct frame f;

	(void)state;
	build_ipv4_tcp(&f);
	assert_int_equal(f.len, 54);
	expect_v4(&f, PC_DIR_UP, v4_pod, ETH_IPV4, 14);
	expect_v4(&f, PC_DIR_DOWN, v4_fabric, ETH_IPV4, 14);
}

static void
test_ipv6_up_down(void **state)
{
	struct frame f;

	(void)state;
	build_ipv6_tcp(&f);
	assert_int_equal(f.len, 74);
	expect_v6(&f, PC_DIR_UP, v6_pod, 14);
	expect_v6(&f, PC_DIR_DOWN, v6_fabric, 14);
}

static void
test_ipv4_options(void **state)
{
	struct frame f;
	size_t ip;

	(void)state;
	/* IHL 6: one 4-byte option word (NOP padding) before UDP */
	eth_hdr(&f, ETH_IPV4);
	ip = ipv4_hdr(&f, PROTO_UDP, v4_pod, v4_fabric, 4 + 8);
	f.b[ip] = 0x46;
	put_fill(&f, 0x01, 4);
	udp_hdr(&f, 0);
	expect_v4(&f, PC_DIR_UP, v4_pod, ETH_IPV4, 14);
	expect_v4(&f, PC_DIR_DOWN, v4_fabric, ETH_IPV4, 14);
}

static void
test_ipv4_bad_ihl(void **state)
{
	struct frame f;
	uint8_t ihl;

	(void)state;
	for (ihl = 0; ihl < 5; ihl++) {
		build_ipv4_tcp(&f);
		f.b[14] = (uint8_t)(0x40 | ihl);
		expect_class(&f, PC_CLASS_MALFORMED);
	}
	/* IHL 15 (60 bytes) is longer than the 40 bytes of IP in the frame. */
	build_ipv4_tcp(&f);
	f.b[14] = 0x4f;
	expect_class(&f, PC_CLASS_MALFORMED);
	/* IHL 11 fits the frame, but total_length (40) is shorter than it. */
	build_ipv4_tcp(&f);
	f.b[14] = 0x4b;
	put_fill(&f, 0, 20);
	expect_class(&f, PC_CLASS_MALFORMED);
	/* The same with total_length covering the header is fine. */
	set16(&f, 16, 60);
	expect_v4(&f, PC_DIR_UP, v4_pod, ETH_IPV4, 14);
}

static void
test_bad_version(void **state)
{
	struct frame f;
	uint8_t v;

	(void)state;
	for (v = 0; v < 16; v++) {
		if (v == 4)
			continue;
		build_ipv4_tcp(&f);
		f.b[14] = (uint8_t)(v << 4 | 5);
		expect_class(&f, PC_CLASS_MALFORMED);
	}
	for (v = 0; v < 16; v++) {
		if (v == 6)
			continue;
		build_ipv6_tcp(&f);
		f.b[14] = (uint8_t)(v << 4);
		expect_class(&f, PC_CLASS_MALFORMED);
	}
	/* An IPv6 packet under the IPv4 ethertype, and the reverse. */
	build_ipv6_tcp(&f);
	set16(&f, 12, ETH_IPV4);
	expect_class(&f, PC_CLASS_MALFORMED);
	build_ipv4_tcp(&f);
	put_fill(&f, 0, 20);
	set16(&f, 12, ETH_IPV6);
	expect_class(&f, PC_CLASS_MALFORMED);
}

static void
test_ipv4_total_length(void **state)
{
	struct frame f;

	(void)state;
	build_ipv4_tcp(&f);
	set16(&f, 16, 41);		/* one byte more than the frame holds */
	expect_class(&f, PC_CLASS_MALFORMED);
	set16(&f, 16, 0xffff);
	expect_class(&f, PC_CLASS_MALFORMED);
	set16(&f, 16, 19);		/* shorter than the header */
	expect_class(&f, PC_CLASS_MALFORMED);
	set16(&f, 16, 0);
	expect_class(&f, PC_CLASS_MALFORMED);
	set16(&f, 16, 20);		/* header only, TCP is then padding */
	expect_v4(&f, PC_DIR_UP, v4_pod, ETH_IPV4, 14);
}

static void
test_ethernet_padding(void **state)
{
	struct frame f;

	(void)state;
	/* 28-byte IPv4/UDP packet padded to the 60-byte Ethernet minimum */
	eth_hdr(&f, ETH_IPV4);
	ipv4_hdr(&f, PROTO_UDP, v4_pod, v4_fabric, 8);
	udp_hdr(&f, 0);
	put_fill(&f, 0, 60 - f.len);
	assert_int_equal(f.len, 60);
	expect_v4(&f, PC_DIR_UP, v4_pod, ETH_IPV4, 14);
	expect_v4(&f, PC_DIR_DOWN, v4_fabric, ETH_IPV4, 14);

	/* IPv6 with trailing bytes beyond payload_length */
	eth_hdr(&f, ETH_IPV6);
	ipv6_hdr(&f, PROTO_UDP, v6_pod, v6_fabric, 8);
	udp_hdr(&f, 0);
	put_fill(&f, 0, 6);
	expect_v6(&f, PC_DIR_UP, v6_pod, 14);
	expect_v6(&f, PC_DIR_DOWN, v6_fabric, 14);
}

static void
test_ipv6_payload_length(void **state)
{
	struct frame f;

	(void)state;
	build_ipv6_tcp(&f);
	set16(&f, 18, 21);
	expect_class(&f, PC_CLASS_MALFORMED);
	set16(&f, 18, 0xffff);
	expect_class(&f, PC_CLASS_MALFORMED);
	set16(&f, 18, 0);		/* the TCP bytes are then padding */
	expect_v6(&f, PC_DIR_UP, v6_pod, 14);
}

/* VLAN tags */

static void
test_vlan_single(void **state)
{
	struct frame f;

	(void)state;
	eth_hdr(&f, ETH_VLAN);
	vlan_tag(&f, 100, ETH_IPV4);
	ipv4_hdr(&f, PROTO_TCP, v4_pod, v4_fabric, 20);
	tcp_hdr(&f);
	expect_v4(&f, PC_DIR_UP, v4_pod, ETH_IPV4, 18);
	expect_v4(&f, PC_DIR_DOWN, v4_fabric, ETH_IPV4, 18);
}

static void
test_vlan_qinq(void **state)
{
	struct frame f;

	(void)state;
	eth_hdr(&f, ETH_QINQ);
	vlan_tag(&f, 10, ETH_VLAN);
	vlan_tag(&f, 200, ETH_IPV6);
	ipv6_hdr(&f, PROTO_TCP, v6_pod, v6_fabric, 20);
	tcp_hdr(&f);
	expect_v6(&f, PC_DIR_UP, v6_pod, 22);
	expect_v6(&f, PC_DIR_DOWN, v6_fabric, 22);

	eth_hdr(&f, ETH_QINQ);
	vlan_tag(&f, 10, ETH_VLAN);
	vlan_tag(&f, 200, ETH_IPV4);
	ipv4_hdr(&f, PROTO_TCP, v4_pod, v4_fabric, 20);
	tcp_hdr(&f);
	expect_v4(&f, PC_DIR_UP, v4_pod, ETH_IPV4, 22);
	expect_v4(&f, PC_DIR_DOWN, v4_fabric, ETH_IPV4, 22);
}

static void
test_vlan_9100(void **state)
{
	struct frame f;

	(void)state;
	eth_hdr(&f, ETH_QINQ_OLD);
	vlan_tag(&f, 7, ETH_IPV4);
	ipv4_hdr(&f, PROTO_TCP, v4_pod, v4_fabric, 20);
	tcp_hdr(&f);
	expect_v4(&f, PC_DIR_UP, v4_pod, ETH_IPV4, 18);
	expect_v4(&f, PC_DIR_DOWN, v4_fabric, ETH_IPV4, 18);
}

static void
build_tagged(struct frame *f, unsigned int ntags)
{
	static const uint16_t tpids[3] = { ETH_QINQ, ETH_VLAN, ETH_QINQ_OLD };
	unsigned int i;

	eth_hdr(f, ntags > 0 ? tpids[0] : ETH_IPV4);
	for (i = 0; i < ntags; i++)
		vlan_tag(f, (uint16_t)(i + 1),
		    i + 1 < ntags ? tpids[(i + 1) % 3] : ETH_IPV4);
	ipv4_hdr(f, PROTO_TCP, v4_pod, v4_fabric, 20);
	tcp_hdr(f);
}

static void
test_vlan_tag_limit(void **state)
{
	struct frame f;
	unsigned int n;

	(void)state;
	for (n = 0; n <= 4; n++) {
		build_tagged(&f, n);
		expect_v4(&f, PC_DIR_UP, v4_pod, ETH_IPV4,
		    (uint16_t)(14 + 4 * n));
		expect_v4(&f, PC_DIR_DOWN, v4_fabric, ETH_IPV4,
		    (uint16_t)(14 + 4 * n));
	}
	for (n = 5; n <= 8; n++) {
		build_tagged(&f, n);
		expect_class(&f, PC_CLASS_MALFORMED);
	}
}

static void
test_vlan_truncated(void **state)
{
	struct frame f;
	struct pc_frame_key key;
	size_t len;

	(void)state;
	/* 14..17 bytes: the tag or the inner type field is cut off. */
	eth_hdr(&f, ETH_VLAN);
	vlan_tag(&f, 100, ETH_LLDP);
	for (len = 0; len < f.len; len++)
		assert_int_equal(classify_len(&f, len, PC_DIR_UP, &key),
		    PC_CLASS_MALFORMED);
	/* With the inner type present the frame is a (payload-less) LLDP. */
	assert_int_equal(classify(&f, PC_DIR_UP, &key), PC_CLASS_LLDP);
	assert_int_equal(key.ethertype, ETH_LLDP);
	assert_int_equal(key.l3_offset, 18);
}

/* The tag stack (pods[].vlan) */

/* A tag with its whole TCI: priority and DEI bits besides the VLAN id. */
static void
tci_tag(struct frame *f, uint16_t tci, uint16_t next_type)
{
	put16(f, tci);
	put16(f, next_type);
}

/* An IPv4 frame behind tags tpid[0..n) of VLAN ids vid[0..n). */
static void
build_stack(struct frame *f, const uint16_t *tpid, const uint16_t *vid, unsigned n)
{
	eth_hdr(f, n > 0 ? tpid[0] : ETH_IPV4);
	for (unsigned i = 0; i < n; i++)
		tci_tag(f, (uint16_t)(0xa000 | vid[i]), i + 1 < n ? tpid[i + 1] : ETH_IPV4);
	ipv4_hdr(f, PROTO_TCP, v4_pod, v4_fabric, 20);
	tcp_hdr(f);
}

static uint32_t
stack_of(const uint16_t *tpid, const uint16_t *vid, unsigned n)
{
	struct frame f;
	struct pc_frame_key key;

	build_stack(&f, tpid, vid, n);
	assert_int_equal(classify(&f, PC_DIR_UP, &key), PC_CLASS_IPV4);
	assert_memory_equal(key.addr, v4_pod, 4);
	uint32_t up = key.vlan;
	assert_int_equal(classify(&f, PC_DIR_DOWN, &key), PC_CLASS_IPV4);
	assert_int_equal(key.vlan, up);
	return up;
}

static void
test_vlan_stack(void **state)
{
	static const uint16_t q[] = { ETH_VLAN, ETH_VLAN, ETH_VLAN };
	static const uint16_t ad[] = { ETH_QINQ, ETH_VLAN };
	static const uint16_t vid[] = { 100, 200, 300 };

	(void)state;
	assert_int_equal(stack_of(q, vid, 0), PC_VLAN_NONE);
	/* the priority bits (0xa000 in every tag here) are not the pod's */
	assert_int_equal(stack_of(q, vid, 1), pc_vlan_one(100));
	assert_int_equal(stack_of(ad, vid, 2), pc_vlan_two(100, 200));
	/* an outer 802.1Q tag as switches configured for double 802.1Q send */
	assert_int_equal(stack_of(q, vid, 2), pc_vlan_two(100, 200));
	assert_int_not_equal(pc_vlan_two(100, 200), pc_vlan_two(200, 100));
	assert_int_not_equal(pc_vlan_one(100), pc_vlan_two(0, 100));
	/* stacks no pod can have: three tags, an S-tag alone or inside, 0x9100 */
	assert_int_equal(stack_of(q, vid, 3), PC_VLAN_OTHER);
	assert_int_equal(stack_of(ad, vid, 1), PC_VLAN_OTHER);
	static const uint16_t ad_in[] = { ETH_VLAN, ETH_QINQ };
	assert_int_equal(stack_of(ad_in, vid, 2), PC_VLAN_OTHER);
	static const uint16_t old[] = { ETH_QINQ_OLD, ETH_VLAN };
	assert_int_equal(stack_of(old, vid, 1), PC_VLAN_OTHER);
	assert_int_equal(stack_of(old, vid, 2), PC_VLAN_OTHER);
	/* a priority tag (VLAN id 0) names no VLAN a pod may have */
	static const uint16_t zero[] = { 0 };
	uint32_t prio = stack_of(q, zero, 1);
	for (uint16_t v = 1; v <= PC_VLAN_ID_MAX; v++)
		assert_int_not_equal(prio, pc_vlan_one(v));
}

/* A frame whose tags are cut short has no stack a pod could own. */
static void
test_vlan_stack_truncated(void **state)
{
	static const uint16_t ad[] = { ETH_QINQ, ETH_VLAN };
	static const uint16_t vid[] = { 100, 200 };
	struct frame f;
	struct pc_frame_key key;

	(void)state;
	build_stack(&f, ad, vid, 2);
	for (size_t len = 14; len < 22; len++) {
		assert_int_equal(classify_len(&f, len, PC_DIR_UP, &key), PC_CLASS_MALFORMED);
		assert_int_equal(key.vlan, PC_VLAN_OTHER);
	}
	for (size_t len = 0; len < 14; len++) {
		assert_int_equal(classify_len(&f, len, PC_DIR_UP, &key), PC_CLASS_MALFORMED);
		assert_int_equal(key.vlan, PC_VLAN_NONE);
	}
	/* whole tags, cut inside the IPv4 header: malformed, of its stack */
	assert_int_equal(classify_len(&f, 30, PC_DIR_UP, &key), PC_CLASS_MALFORMED);
	assert_int_equal(key.vlan, pc_vlan_two(100, 200));
	/* more than four tags */
	build_tagged(&f, 5);
	assert_int_equal(classify(&f, PC_DIR_UP, &key), PC_CLASS_MALFORMED);
	assert_int_equal(key.vlan, PC_VLAN_OTHER);
}

/* Whose frame a pod of pods[].vlan may be: exactly its stack's; any for a pod without. */
static void
test_vlan_admits(void **state)
{
	const uint32_t frames[] = {
		PC_VLAN_NONE,         pc_vlan_one(100),     pc_vlan_one(101),
		pc_vlan_two(10, 100), pc_vlan_two(100, 10), PC_VLAN_OTHER,
	};
	const uint32_t pods[] = { pc_vlan_one(100), pc_vlan_two(10, 100) };

	(void)state;
	for (size_t i = 0; i < sizeof(frames) / sizeof(frames[0]); i++) {
		assert_true(pc_vlan_admits(PC_VLAN_NONE, frames[i]));
		for (size_t p = 0; p < sizeof(pods) / sizeof(pods[0]); p++)
			assert_int_equal(pc_vlan_admits(pods[p], frames[i]), pods[p] == frames[i]);
	}
	assert_true(pc_vlan_admits(pods[0], frames[1]));
	assert_true(pc_vlan_admits(pods[1], frames[3]));
	assert_int_equal(pc_vlan_tags(PC_VLAN_NONE), 0);
	assert_int_equal(pc_vlan_tags(pods[0]), 1);
	assert_int_equal(pc_vlan_tags(pods[1]), 2);
}

/* ARP */

static void
test_arp_request_reply(void **state)
{
	struct frame f;

	(void)state;
	/* The pod host asks for its gateway. */
	eth_hdr(&f, ETH_ARP);
	arp_msg(&f, 1, ETH_IPV4, 6, 4, 1, v4_pod, v4_fabric);
	assert_int_equal(f.len, 42);
	expect_v4(&f, PC_DIR_UP, v4_pod, ETH_ARP, 14);
	expect_v4(&f, PC_DIR_DOWN, v4_fabric, ETH_ARP, 14);

	/* The gateway answers (sender and target swap). */
	eth_hdr(&f, ETH_ARP);
	arp_msg(&f, 1, ETH_IPV4, 6, 4, 2, v4_fabric, v4_pod);
	put_fill(&f, 0, 18);		/* Ethernet padding */
	expect_v4(&f, PC_DIR_UP, v4_fabric, ETH_ARP, 14);
	expect_v4(&f, PC_DIR_DOWN, v4_pod, ETH_ARP, 14);

	/* The gateway asks the pod host, behind a VLAN tag. */
	eth_hdr(&f, ETH_VLAN);
	vlan_tag(&f, 5, ETH_ARP);
	arp_msg(&f, 1, ETH_IPV4, 6, 4, 1, v4_fabric, v4_pod);
	expect_v4(&f, PC_DIR_UP, v4_fabric, ETH_ARP, 18);
	expect_v4(&f, PC_DIR_DOWN, v4_pod, ETH_ARP, 18);
}

static void
test_arp_truncated(void **state)
{
	struct frame f;
	struct pc_frame_key key;
	size_t len;

	(void)state;
	eth_hdr(&f, ETH_ARP);
	arp_msg(&f, 1, ETH_IPV4, 6, 4, 1, v4_pod, v4_fabric);
	for (len = 0; len < f.len; len++) {
		assert_int_equal(classify_len(&f, len, PC_DIR_UP, &key),
		    PC_CLASS_MALFORMED);
		assert_int_equal(classify_len(&f, len, PC_DIR_DOWN, &key),
		    PC_CLASS_MALFORMED);
	}
	assert_int_equal(classify_len(&f, f.len, PC_DIR_DOWN, &key),
	    PC_CLASS_IPV4);
}

static void
test_arp_not_ethernet_ipv4(void **state)
{
	static const uint8_t v6spa[16] = { 0xfe, 0x80 };
	struct frame f;
	struct pc_frame_key key;

	(void)state;
	/* IEEE 802 hardware type */
	eth_hdr(&f, ETH_ARP);
	arp_msg(&f, 6, ETH_IPV4, 6, 4, 1, v4_pod, v4_fabric);
	expect_class(&f, PC_CLASS_OTHER);
	assert_int_equal(classify(&f, PC_DIR_UP, &key), PC_CLASS_OTHER);
	assert_int_equal(key.ethertype, ETH_ARP);
	assert_int_equal(key.l3_offset, 14);

	/* Protocol type other than IPv4 */
	eth_hdr(&f, ETH_ARP);
	arp_msg(&f, 1, ETH_IPV6, 6, 16, 1, v6spa, v6spa);
	expect_class(&f, PC_CLASS_OTHER);

	/* Right types, wrong address lengths */
	eth_hdr(&f, ETH_ARP);
	arp_msg(&f, 1, ETH_IPV4, 8, 4, 1, v4_pod, v4_fabric);
	expect_class(&f, PC_CLASS_OTHER);
	eth_hdr(&f, ETH_ARP);
	arp_msg(&f, 1, ETH_IPV4, 6, 4, 1, v4_pod, v4_fabric);
	f.b[14 + 5] = 6;
	expect_class(&f, PC_CLASS_OTHER);
}

/* IPv6 neighbour discovery */

static void
test_nd_solicitation(void **state)
{
	struct frame f;

	(void)state;
	/* A pod host resolves another address from its own source address. */
	eth_hdr(&f, ETH_IPV6);
	ipv6_hdr(&f, PROTO_ICMPV6, v6_pod, v6_solicited, 24);
	nd_msg(&f, ND_NS, v6_fabric);
	expect_v6(&f, PC_DIR_UP, v6_pod, 14);
	expect_v6(&f, PC_DIR_DOWN, v6_fabric, 14);

	/* The router resolves a pod address: down is the target. */
	eth_hdr(&f, ETH_IPV6);
	ipv6_hdr(&f, PROTO_ICMPV6, v6_link_local, v6_solicited, 24);
	nd_msg(&f, ND_NS, v6_pod);
	expect_v6(&f, PC_DIR_UP, v6_link_local, 14);
	expect_v6(&f, PC_DIR_DOWN, v6_pod, 14);

	/* With a source link-layer address option after the message */
	eth_hdr(&f, ETH_IPV6);
	ipv6_hdr(&f, PROTO_ICMPV6, v6_link_local, v6_solicited, 32);
	nd_msg(&f, ND_NS, v6_pod);
	put8(&f, 1);
	put8(&f, 1);
	put_fill(&f, 0x02, 6);
	expect_v6(&f, PC_DIR_DOWN, v6_pod, 14);
}

static void
test_nd_solicitation_dad(void **state)
{
	struct frame f;

	(void)state;
	/* Duplicate address detection: source ::, the target names the pod. */
	eth_hdr(&f, ETH_IPV6);
	ipv6_hdr(&f, PROTO_ICMPV6, v6_unspec, v6_solicited, 24);
	nd_msg(&f, ND_NS, v6_pod);
	expect_v6(&f, PC_DIR_UP, v6_pod, 14);
	expect_v6(&f, PC_DIR_DOWN, v6_pod, 14);

	/* A source differing from :: only in its last byte is not DAD. */
	eth_hdr(&f, ETH_IPV6);
	ipv6_hdr(&f, PROTO_ICMPV6, v6_unspec, v6_solicited, 24);
	f.b[14 + 8 + 15] = 1;
	nd_msg(&f, ND_NS, v6_pod);
	expect_v6(&f, PC_DIR_UP, f.b + 14 + 8, 14);
	/* ... nor one differing in its first byte. */
	f.b[14 + 8 + 15] = 0;
	f.b[14 + 8] = 0x80;
	expect_v6(&f, PC_DIR_UP, f.b + 14 + 8, 14);
}

static void
test_nd_advertisement(void **state)
{
	struct frame f;

	(void)state;
	/* Unsolicited NA from a pod host to all nodes: up is the target. */
	eth_hdr(&f, ETH_IPV6);
	ipv6_hdr(&f, PROTO_ICMPV6, v6_link_local, v6_all_nodes, 24);
	nd_msg(&f, ND_NA, v6_pod);
	expect_v6(&f, PC_DIR_UP, v6_pod, 14);

	/* The router answers a pod host's NS: down is the destination. */
	eth_hdr(&f, ETH_IPV6);
	ipv6_hdr(&f, PROTO_ICMPV6, v6_fabric, v6_pod, 24);
	nd_msg(&f, ND_NA, v6_fabric);
	expect_v6(&f, PC_DIR_UP, v6_fabric, 14);
	expect_v6(&f, PC_DIR_DOWN, v6_pod, 14);

	/* Behind QinQ */
	eth_hdr(&f, ETH_QINQ);
	vlan_tag(&f, 1, ETH_VLAN);
	vlan_tag(&f, 2, ETH_IPV6);
	ipv6_hdr(&f, PROTO_ICMPV6, v6_link_local, v6_all_nodes, 24);
	nd_msg(&f, ND_NA, v6_pod);
	expect_v6(&f, PC_DIR_UP, v6_pod, 22);
	expect_v6(&f, PC_DIR_DOWN, v6_all_nodes, 22);
}

static void
test_nd_truncated(void **state)
{
	struct frame f;
	uint16_t plen;

	(void)state;
	/* payload_length shorter than an NS/NA message, frame still full */
	for (plen = 1; plen < 24; plen++) {
		eth_hdr(&f, ETH_IPV6);
		ipv6_hdr(&f, PROTO_ICMPV6, v6_link_local, v6_solicited, plen);
		nd_msg(&f, ND_NS, v6_pod);
		expect_class(&f, PC_CLASS_MALFORMED);
		eth_hdr(&f, ETH_IPV6);
		ipv6_hdr(&f, PROTO_ICMPV6, v6_link_local, v6_all_nodes, plen);
		nd_msg(&f, ND_NA, v6_pod);
		expect_class(&f, PC_CLASS_MALFORMED);
	}
	/*
	 * An ICMPv6 packet without even a type byte cannot be ND; it is
	 * classified by its addresses like any other IPv6 packet.
	 */
	eth_hdr(&f, ETH_IPV6);
	ipv6_hdr(&f, PROTO_ICMPV6, v6_pod, v6_fabric, 0);
	nd_msg(&f, ND_NS, v6_link_local);
	expect_v6(&f, PC_DIR_UP, v6_pod, 14);
	expect_v6(&f, PC_DIR_DOWN, v6_fabric, 14);
}

static void
test_icmpv6_other(void **state)
{
	/* Echo, router solicitation/advertisement, redirect, unreachable */
	static const uint8_t types[] = { 128, 129, 133, 134, 137, 1 };
	struct frame f;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(types); i++) {
		eth_hdr(&f, ETH_IPV6);
		ipv6_hdr(&f, PROTO_ICMPV6, v6_pod, v6_fabric, 24);
		nd_msg(&f, types[i], v6_link_local);
		expect_v6(&f, PC_DIR_UP, v6_pod, 14);
		expect_v6(&f, PC_DIR_DOWN, v6_fabric, 14);
	}

	/* NS behind a hop-by-hop header is not treated as ND. */
	eth_hdr(&f, ETH_IPV6);
	ipv6_hdr(&f, PROTO_HOPOPTS, v6_pod, v6_fabric, 8 + 24);
	put8(&f, PROTO_ICMPV6);
	put8(&f, 0);
	put_fill(&f, 0, 6);
	nd_msg(&f, ND_NS, v6_link_local);
	expect_v6(&f, PC_DIR_UP, v6_pod, 14);
	expect_v6(&f, PC_DIR_DOWN, v6_fabric, 14);

	/* Type 135 under UDP is just a UDP payload byte. */
	eth_hdr(&f, ETH_IPV6);
	ipv6_hdr(&f, PROTO_UDP, v6_pod, v6_fabric, 24);
	nd_msg(&f, ND_NS, v6_link_local);
	expect_v6(&f, PC_DIR_UP, v6_pod, 14);
	expect_v6(&f, PC_DIR_DOWN, v6_fabric, 14);
}

/*
 * Extension headers: only the fixed header's addresses name the pod, so a
 * chain is neither walked nor checked, whatever it claims; its bytes are
 * counted with the frame.
 */
static void
test_ipv6_extension_headers(void **state)
{
	struct frame f;
	size_t ip;
	int i;

	(void)state;
	/* hop-by-hop, routing (final segment: a pod address), fragment, UDP */
	eth_hdr(&f, ETH_IPV6);
	ipv6_hdr(&f, PROTO_HOPOPTS, v6_fabric, v6_link_local, 8 + 24 + 8 + 8);
	put8(&f, PROTO_ROUTING);
	put8(&f, 0);
	put8(&f, 1);			/* PadN */
	put8(&f, 4);
	put_fill(&f, 0, 4);
	put8(&f, PROTO_FRAGMENT);
	put8(&f, 2);
	put8(&f, 4);			/* segment routing */
	put8(&f, 1);
	put_fill(&f, 0, 4);
	put_bytes(&f, v6_pod, 16);
	put8(&f, PROTO_UDP);
	put8(&f, 0);
	put16(&f, 0x0001);		/* offset 0, more fragments */
	put_fill(&f, 0, 4);
	udp_hdr(&f, 0);
	expect_v6(&f, PC_DIR_UP, v6_fabric, 14);
	expect_v6(&f, PC_DIR_DOWN, v6_link_local, 14);

	/* a long chain of destination options */
	eth_hdr(&f, ETH_IPV6);
	ipv6_hdr(&f, PROTO_DSTOPTS, v6_pod, v6_fabric, 40 * 8 + 8);
	for (i = 0; i < 40; i++) {
		put8(&f, i < 39 ? PROTO_DSTOPTS : PROTO_UDP);
		put_fill(&f, 0, 7);
	}
	udp_hdr(&f, 0);
	expect_v6(&f, PC_DIR_UP, v6_pod, 14);
	expect_v6(&f, PC_DIR_DOWN, v6_fabric, 14);

	/* a header whose length runs past the payload: still the pod's bytes */
	eth_hdr(&f, ETH_IPV6);
	ipv6_hdr(&f, PROTO_HOPOPTS, v6_pod, v6_fabric, 8);
	put8(&f, PROTO_UDP);
	put8(&f, 200);
	put_fill(&f, 0, 6);
	expect_v6(&f, PC_DIR_UP, v6_pod, 14);

	/* a jumbogram: payload length 0, the frame carries more */
	eth_hdr(&f, ETH_IPV6);
	ip = ipv6_hdr(&f, PROTO_HOPOPTS, v6_pod, v6_fabric, 0);
	put8(&f, PROTO_UDP);
	put8(&f, 0);
	put8(&f, 0xc2);
	put8(&f, 4);
	put16(&f, 0);
	put16(&f, 8 + 8);
	udp_hdr(&f, 0);
	assert_int_equal(f.b[ip + 4] << 8 | f.b[ip + 5], 0);
	expect_v6(&f, PC_DIR_UP, v6_pod, 14);
	expect_v6(&f, PC_DIR_DOWN, v6_fabric, 14);
}

/* Fragments carry the whole IP header: first or not, the address decides. */
static void
test_fragments(void **state)
{
	struct frame f;
	size_t ip;

	(void)state;
	eth_hdr(&f, ETH_IPV4);
	ip = ipv4_hdr(&f, PROTO_UDP, v4_pod, v4_fabric, 16);
	set16(&f, ip + 6, 0x2000 | 185);	/* more fragments, offset 1480 */
	put_fill(&f, 0xee, 16);
	expect_v4(&f, PC_DIR_UP, v4_pod, ETH_IPV4, 14);
	expect_v4(&f, PC_DIR_DOWN, v4_fabric, ETH_IPV4, 14);
	set16(&f, ip + 6, 370);			/* the last one */
	expect_v4(&f, PC_DIR_UP, v4_pod, ETH_IPV4, 14);

	/* an IPv6 non-first fragment whose data looks like an NS */
	eth_hdr(&f, ETH_IPV6);
	ipv6_hdr(&f, PROTO_FRAGMENT, v6_pod, v6_fabric, 8 + 24);
	put8(&f, PROTO_ICMPV6);
	put8(&f, 0);
	put16(&f, 181 << 3);
	put_fill(&f, 0, 4);
	nd_msg(&f, ND_NS, v6_link_local);
	expect_v6(&f, PC_DIR_UP, v6_pod, 14);
	expect_v6(&f, PC_DIR_DOWN, v6_fabric, 14);
}

/* Other frames */

static void
test_lldp_other(void **state)
{
	struct frame f;
	struct pc_frame_key key;

	(void)state;
	/* LLDP has a class of its own, whatever its payload (shape/lldp.h parses it) */
	eth_hdr(&f, ETH_LLDP);
	put_fill(&f, 0x02, 46);
	expect_class(&f, PC_CLASS_LLDP);
	assert_int_equal(classify(&f, PC_DIR_DOWN, &key), PC_CLASS_LLDP);
	assert_int_equal(key.ethertype, ETH_LLDP);
	assert_int_equal(key.l3_offset, 14);

	/* Header only, and an 802.3 length field instead of an ethertype */
	eth_hdr(&f, 0x88e5);
	expect_class(&f, PC_CLASS_OTHER);
	eth_hdr(&f, 46);
	put_fill(&f, 0x42, 46);
	expect_class(&f, PC_CLASS_OTHER);
	assert_int_equal(classify(&f, PC_DIR_UP, &key), PC_CLASS_OTHER);
	assert_int_equal(key.ethertype, 46);
}

static void
test_runt(void **state)
{
	struct frame f;
	struct pc_frame_key key;
	size_t len;

	(void)state;
	build_ipv4_tcp(&f);
	for (len = 0; len < 14; len++) {
		assert_int_equal(classify_len(&f, len, PC_DIR_UP, &key),
		    PC_CLASS_MALFORMED);
		assert_memory_equal(key.addr, zero16, 16);
		assert_int_equal(key.ethertype, 0);
		assert_int_equal(key.l3_offset, 0);
		assert_int_equal(classify_len(&f, len, PC_DIR_DOWN, &key),
		    PC_CLASS_MALFORMED);
	}
	/* 14 bytes: a whole Ethernet header, but no IPv4 header */
	assert_int_equal(classify_len(&f, 14, PC_DIR_UP, &key),
	    PC_CLASS_MALFORMED);
	assert_int_equal(key.ethertype, ETH_IPV4);
	assert_int_equal(key.l3_offset, 14);
}

/*
 * Every proper prefix of a frame whose L3 length field covers the whole
 * frame is truncated, so all of them must be malformed.
 */
static void
check_all_truncations(const struct frame *f)
{
	struct pc_frame_key key;
	size_t len;

	for (len = 0; len < f->len; len++) {
		assert_int_equal(classify_len(f, len, PC_DIR_UP, &key),
		    PC_CLASS_MALFORMED);
		assert_memory_equal(key.addr, zero16, 16);
		assert_int_equal(classify_len(f, len, PC_DIR_DOWN, &key),
		    PC_CLASS_MALFORMED);
		assert_memory_equal(key.addr, zero16, 16);
	}
	assert_int_not_equal(classify_len(f, f->len, PC_DIR_UP, &key),
	    PC_CLASS_MALFORMED);
}

static void
test_truncation_ipv4(void **state)
{
	struct frame f;

	(void)state;
	build_ipv4_tcp(&f);
	check_all_truncations(&f);
	build_tagged(&f, 4);
	check_all_truncations(&f);
}

static void
test_truncation_ipv6(void **state)
{
	struct frame f;

	(void)state;
	build_ipv6_tcp(&f);
	check_all_truncations(&f);

	eth_hdr(&f, ETH_VLAN);
	vlan_tag(&f, 9, ETH_IPV6);
	ipv6_hdr(&f, PROTO_ICMPV6, v6_unspec, v6_solicited, 24);
	nd_msg(&f, ND_NS, v6_pod);
	check_all_truncations(&f);

	eth_hdr(&f, ETH_IPV6);
	ipv6_hdr(&f, PROTO_ICMPV6, v6_link_local, v6_all_nodes, 24);
	nd_msg(&f, ND_NA, v6_pod);
	check_all_truncations(&f);
}

static void
test_dir_name(void **state)
{
	(void)state;
	assert_string_equal(pc_dir_name(PC_DIR_UP), "up");
	assert_string_equal(pc_dir_name(PC_DIR_DOWN), "down");
}

/*
 * Random frames. Most get a real ethertype (sometimes behind tags) and a
 * plausible IP version nibble so that the parsers past Ethernet are reached.
 * Whatever the result, the key must be consistent with the bytes.
 */
#define FUZZ_ROUNDS	200000
#define FUZZ_MAXLEN	256

static const uint16_t fuzz_types[] = {
	ETH_IPV4, ETH_IPV6, ETH_ARP, ETH_VLAN, ETH_QINQ, ETH_QINQ_OLD, ETH_LLDP,
};

static void
fuzz_put16(uint8_t *b, size_t cap, size_t off, uint16_t v)
{
	if (off + 2 <= cap) {
		b[off] = (uint8_t)(v >> 8);
		b[off + 1] = (uint8_t)v;
	}
}

/* Random length field value, usually within the bytes that follow. */
static uint16_t
fuzz_length(const uint8_t *rnd, size_t avail)
{
	if (rnd[0] % 4 == 0)
		return (uint16_t)(rnd[1] << 8 | rnd[2]);
	return (uint16_t)((rnd[1] << 8 | rnd[2]) % (avail + 1));
}

static void
fuzz_shape(uint8_t *b, size_t cap, const uint8_t *rnd)
{
	size_t off = 12;
	unsigned int i, ntags = rnd[0] % 4 == 0 ? rnd[1] % 7 : 0;
	uint16_t type;

	if (rnd[2] % 8 == 0)
		return;			/* leave fully random */
	for (i = 0; i < ntags; i++, off += 4)
		fuzz_put16(b, cap, off, fuzz_types[3 + rnd[3 + i] % 3]);
	type = fuzz_types[rnd[10] % 7];
	fuzz_put16(b, cap, off, type);
	off += 2;
	if (off >= cap || rnd[11] % 8 == 0)
		return;			/* random L3 header */

	switch (type) {
	case ETH_IPV4:
		b[off] = (uint8_t)(0x45 + rnd[12] % 3);
		fuzz_put16(b, cap, off + 2, fuzz_length(rnd + 13, cap - off));
		break;
	case ETH_IPV6:
		b[off] = 0x60;
		fuzz_put16(b, cap, off + 4, fuzz_length(rnd + 13,
		    cap - off > 40 ? cap - off - 40 : 0));
		if (off + 41 > cap || rnd[16] % 4 == 0)
			break;
		b[off + 6] = PROTO_ICMPV6;
		b[off + 40] = rnd[17] & 1 ? ND_NS : ND_NA;
		if (rnd[18] % 2 == 0)
			memset(b + off + 8, 0, 16);	/* DAD */
		break;
	case ETH_ARP:
		fuzz_put16(b, cap, off, 1);
		fuzz_put16(b, cap, off + 2, ETH_IPV4);
		fuzz_put16(b, cap, off + 4, 0x0604);
		break;
	default:
		break;
	}
}

static void
fuzz_check(const uint8_t *b, size_t len, enum pc_dir dir,
    const struct pc_frame_key *key, enum pc_class cls)
{
	const uint8_t *p, *end;
	int found = 0;

	assert_in_range(cls, PC_CLASS_IPV4, PC_CLASS_LLDP);
	if (cls == PC_CLASS_MALFORMED || cls == PC_CLASS_OTHER || cls == PC_CLASS_LLDP) {
		assert_memory_equal(key->addr, zero16, 16);
		if (cls == PC_CLASS_MALFORMED)
			return;
	}
	assert_true(len >= 14);
	assert_true(key->l3_offset >= 14 && key->l3_offset <= 30);
	assert_int_equal((key->l3_offset - 14) % 4, 0);
	assert_true(key->l3_offset <= len);
	assert_int_equal(key->ethertype,
	    b[key->l3_offset - 2] << 8 | b[key->l3_offset - 1]);
	assert_int_equal(cls == PC_CLASS_LLDP, key->ethertype == ETH_LLDP);
	if (cls == PC_CLASS_OTHER || cls == PC_CLASS_LLDP)
		return;

	if (cls == PC_CLASS_IPV4) {
		assert_true(key->ethertype == ETH_IPV4 ||
		    key->ethertype == ETH_ARP);
		assert_memory_equal(key->addr + 4, zero16, 12);
	} else {
		assert_int_equal(key->ethertype, ETH_IPV6);
	}
	/* The address is copied from the frame at a rule-given offset. */
	p = b + key->l3_offset;
	end = b + len;
	if (key->ethertype == ETH_IPV4) {
		found = !memcmp(key->addr, p + (dir == PC_DIR_UP ? 12 : 16), 4);
	} else if (key->ethertype == ETH_ARP) {
		found = !memcmp(key->addr, p + (dir == PC_DIR_UP ? 14 : 24), 4);
	} else {
		found = !memcmp(key->addr, p + (dir == PC_DIR_UP ? 8 : 24), 16);
		if (!found && p + 64 <= end && p[6] == PROTO_ICMPV6)
			found = !memcmp(key->addr, p + 48, 16);
	}
	assert_true(found);
}

static void
test_fuzz_random(void **state)
{
	uint8_t seed[randombytes_SEEDBYTES];
	uint8_t pool[FUZZ_MAXLEN + 32];
	struct pc_frame_key key;
	enum pc_class cls;
	unsigned int counts[PC_CLASS_LLDP + 1] = { 0 }, fast = 0;
	uint32_t i;
	size_t len;
	uint8_t *buf;
	int d;

	(void)state;
	assert_true(sodium_init() >= 0);
	memset(seed, 0, sizeof(seed));
	for (i = 0; i < FUZZ_ROUNDS; i++) {
		memcpy(seed, &i, sizeof(i));
		randombytes_buf_deterministic(pool, sizeof(pool), seed);
		len = (pool[0] | pool[1] << 8) % (FUZZ_MAXLEN + 1);
		buf = malloc(len > 0 ? len : 1);
		assert_non_null(buf);
		memcpy(buf, pool + 32, len);
		fuzz_shape(buf, len, pool + 2);
		for (d = PC_DIR_UP; d < PC_DIR_COUNT; d++) {
			memset(&key, 0xa5, sizeof(key));
			cls = pc_classify(buf, (uint32_t)len, (enum pc_dir)d,
			    &key);
			fuzz_check(buf, len, (enum pc_dir)d, &key, cls);
			assert_true((unsigned)cls <= PC_CLASS_LLDP);
			counts[cls]++;
			fast += check_plain(buf, len, (enum pc_dir)d, &key, cls);
		}
		free(buf);
	}
	/* The shaping must actually reach every outcome it shapes for (not LLDP). */
	for (d = 0; d <= PC_CLASS_MALFORMED; d++)
		assert_true(counts[d] > 1000);
	assert_true(fast > 1000);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ipv4_up_down),
		cmocka_unit_test(test_ipv6_up_down),
		cmocka_unit_test(test_ipv4_options),
		cmocka_unit_test(test_ipv4_bad_ihl),
		cmocka_unit_test(test_bad_version),
		cmocka_unit_test(test_ipv4_total_length),
		cmocka_unit_test(test_ethernet_padding),
		cmocka_unit_test(test_ipv6_payload_length),
		cmocka_unit_test(test_vlan_single),
		cmocka_unit_test(test_vlan_qinq),
		cmocka_unit_test(test_vlan_9100),
		cmocka_unit_test(test_vlan_tag_limit),
		cmocka_unit_test(test_vlan_truncated),
		cmocka_unit_test(test_vlan_stack),
		cmocka_unit_test(test_vlan_stack_truncated),
		cmocka_unit_test(test_vlan_admits),
		cmocka_unit_test(test_arp_request_reply),
		cmocka_unit_test(test_arp_truncated),
		cmocka_unit_test(test_arp_not_ethernet_ipv4),
		cmocka_unit_test(test_nd_solicitation),
		cmocka_unit_test(test_nd_solicitation_dad),
		cmocka_unit_test(test_nd_advertisement),
		cmocka_unit_test(test_nd_truncated),
		cmocka_unit_test(test_icmpv6_other),
		cmocka_unit_test(test_ipv6_extension_headers),
		cmocka_unit_test(test_fragments),
		cmocka_unit_test(test_lldp_other),
		cmocka_unit_test(test_runt),
		cmocka_unit_test(test_truncation_ipv4),
		cmocka_unit_test(test_truncation_ipv6),
		cmocka_unit_test(test_dir_name),
		cmocka_unit_test(test_fuzz_random),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
