/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The LLDPDU podcapd sends of itself (shape/lldp.h, pc_lldp_build_frame):
 * each TLV byte by byte, the frame read back by podcap's own parser, the
 * shutdown LLDPDU, the padding and every refusal.
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

#include "shape/lldp.h"

static const struct pc_lldp_announce base = {
	.src_mac = { 0x02, 0x00, 0x00, 0x00, 0x00, 0x01 },
	.chassis_mac = { 0x02, 0x00, 0x00, 0x00, 0x00, 0xaa },
	.port_id = "uplink0/pod",
	.port_desc = "podcap e2e uplink0, pod side",
	.system_name = "rack7-shaper-1",
	.system_desc = "podcapd 1.2.3",
	.ttl = 120,
};

/* The TLV at *off: its type and length as the header says, the value at *val. */
static void
tlv(const uint8_t *f, size_t *off, unsigned *type, size_t *len, const uint8_t **val)
{
	*type = f[*off] >> 1;
	*len = (size_t)(f[*off] & 1) << 8 | f[*off + 1];
	*val = f + *off + 2;
	*off += 2 + *len;
}

static void
expect_text(const uint8_t *f, size_t *off, unsigned want_type, const char *want)
{
	const uint8_t *val;
	unsigned type;
	size_t len;

	tlv(f, off, &type, &len, &val);
	assert_int_equal(type, want_type);
	assert_int_equal(len, strlen(want));
	assert_memory_equal(val, want, len);
}

static void
test_bytes(void **state)
{
	uint8_t f[PC_LLDP_FRAME_MAX];
	const uint8_t *val;
	unsigned type;
	size_t len, n, off = 0;
	(void)state;

	assert_int_equal(pc_lldp_build_frame(&base, f, sizeof(f), &n, NULL), 0);
	/* the nearest-bridge group, the port's address, 0x88cc */
	assert_memory_equal(f, ((const uint8_t[]){ 0x01, 0x80, 0xc2, 0x00, 0x00, 0x0e }), 6);
	assert_memory_equal(f + 6, base.src_mac, 6);
	assert_int_equal(f[12], 0x88);
	assert_int_equal(f[13], 0xcc);
	off = 14;
	/* chassis id: type 1, 7 bytes, subtype 4 (MAC address) */
	assert_memory_equal(f + off, ((const uint8_t[]){ 0x02, 0x07, 0x04 }), 3);
	assert_memory_equal(f + off + 3, base.chassis_mac, 6);
	off += 9;
	/* port id: type 2, 12 bytes, subtype 5 (interface name) */
	assert_memory_equal(f + off, ((const uint8_t[]){ 0x04, 0x0c, 0x05 }), 3);
	assert_memory_equal(f + off + 3, "uplink0/pod", 11);
	off += 14;
	/* time to live: type 3, 2 bytes, 120 */
	assert_memory_equal(f + off, ((const uint8_t[]){ 0x06, 0x02, 0x00, 0x78 }), 4);
	off += 4;
	expect_text(f, &off, 4, base.port_desc);
	expect_text(f, &off, 5, base.system_name);
	expect_text(f, &off, 6, base.system_desc);
	tlv(f, &off, &type, &len, &val);
	assert_int_equal(type, 0);
	assert_int_equal(len, 0);
	assert_int_equal(n, off); /* longer than 60: no padding */
	assert_true(n > 60);
}

static void
test_parsed_back(void **state)
{
	uint8_t f[PC_LLDP_FRAME_MAX];
	struct pc_error err;
	struct pc_lldp l;
	size_t n;
	(void)state;

	assert_int_equal(pc_lldp_build_frame(&base, f, sizeof(f), &n, NULL), 0);
	assert_int_equal(pc_lldp_parse_frame(f, n, &l, &err), 0);
	assert_int_equal(l.chassis.subtype, PC_LLDP_CHASSIS_MAC);
	assert_int_equal(l.chassis.len, 6);
	assert_memory_equal(l.chassis.value, base.chassis_mac, 6);
	assert_int_equal(l.port.subtype, PC_LLDP_PORT_IFNAME);
	assert_int_equal(l.port.len, strlen(base.port_id));
	assert_memory_equal(l.port.value, base.port_id, l.port.len);
	assert_int_equal(l.ttl, 120);
	assert_true(l.has_name);
	assert_int_equal(l.name_len, strlen(base.system_name));
	assert_memory_equal(l.name, base.system_name, l.name_len);

	char text[PC_LLDP_TEXT_LEN];
	assert_string_equal(pc_lldp_render_id(&l.chassis, false, text), "02:00:00:00:00:aa");
	assert_string_equal(pc_lldp_render_id(&l.port, true, text), "uplink0/pod");
}

/* The shutdown LLDPDU, with texts so short that the frame is padded to 60 bytes. */
static void
test_shutdown_padded(void **state)
{
	struct pc_lldp_announce a = base;
	uint8_t f[PC_LLDP_FRAME_MAX];
	struct pc_lldp l;
	size_t n;
	(void)state;

	a.ttl = 0;
	a.port_id = "p";
	a.port_desc = "";
	a.system_name = "s";
	a.system_desc = NULL;
	memset(f, 0xff, sizeof(f));
	assert_int_equal(pc_lldp_build_frame(&a, f, sizeof(f), &n, NULL), 0);
	assert_int_equal(n, 60);
	/* 14 + chassis 9 + port 4 + ttl 4 + three texts 2 + 3 + 2 + end 2 = 42, then zeros */
	assert_memory_equal(f + 27, ((const uint8_t[]){ 0x06, 0x02, 0x00, 0x00 }), 4);
	assert_memory_equal(f + 31, ((const uint8_t[]){ 0x08, 0x00, 0x0a, 0x01, 's', 0x0c, 0x00 }),
			    7);
	assert_memory_equal(f + 38, ((const uint8_t[]){ 0x00, 0x00 }), 2);
	for (size_t i = 40; i < 60; i++)
		assert_int_equal(f[i], 0);
	assert_int_equal(pc_lldp_parse_frame(f, n, &l, NULL), 0);
	assert_int_equal(l.ttl, 0);

	/* a neighbour that heard the appliance forgets it at the shutdown LLDPDU */
	struct pc_lldp_neighbor nb = { 0 };
	struct pc_lldp up = l;
	up.ttl = 120;
	assert_true(pc_lldp_neighbor_heard(&nb, &up, 1, 1));
	assert_true(nb.present);
	assert_true(pc_lldp_neighbor_heard(&nb, &l, 2, 2));
	assert_false(nb.present);
}

/* Every TLV at its largest fits PC_LLDP_FRAME_MAX, and the parser takes it. */
static void
test_largest(void **state)
{
	char big[256];
	struct pc_lldp_announce a = base;
	uint8_t f[PC_LLDP_FRAME_MAX];
	struct pc_lldp l;
	size_t n;
	(void)state;

	memset(big, 'x', 255);
	big[255] = '\0';
	a.port_id = a.port_desc = a.system_name = a.system_desc = big;
	assert_int_equal(pc_lldp_build_frame(&a, f, sizeof(f), &n, NULL), 0);
	assert_int_equal(n, PC_LLDP_FRAME_MAX);
	assert_int_equal(pc_lldp_parse_frame(f, n, &l, NULL), 0);
	assert_int_equal(l.port.len, 255);
	assert_int_equal(l.name_len, 255);
}

static void
expect_refused(const struct pc_lldp_announce *a, size_t cap, const char *msg)
{
	uint8_t f[PC_LLDP_FRAME_MAX];
	struct pc_error err;
	size_t n = 12345;

	assert_int_equal(pc_lldp_build_frame(a, f, cap, &n, &err), -1);
	assert_string_equal(err.msg, msg);
	assert_int_equal(n, 12345);
}

static void
test_refused(void **state)
{
	char big[257];
	struct pc_lldp_announce a = base;
	(void)state;

	memset(big, 'x', 256);
	big[256] = '\0';
	a.port_id = "";
	expect_refused(&a, PC_LLDP_FRAME_MAX, "port id: 0 bytes, not 1 to 255");
	a.port_id = NULL;
	expect_refused(&a, PC_LLDP_FRAME_MAX, "port id: 0 bytes, not 1 to 255");
	a.port_id = big;
	expect_refused(&a, PC_LLDP_FRAME_MAX, "port id: 256 bytes, not 1 to 255");
	a = base;
	a.system_name = big;
	expect_refused(&a, PC_LLDP_FRAME_MAX, "system name: 256 bytes, not 0 to 255");
	a = base;
	a.port_desc = big;
	expect_refused(&a, PC_LLDP_FRAME_MAX, "port description: 256 bytes, not 0 to 255");
	a = base;
	a.system_desc = big;
	expect_refused(&a, PC_LLDP_FRAME_MAX, "system description: 256 bytes, not 0 to 255");
	expect_refused(&base, 59, "an LLDPDU of 104 bytes in 59");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bytes),           cmocka_unit_test(test_parsed_back),
		cmocka_unit_test(test_shutdown_padded), cmocka_unit_test(test_largest),
		cmocka_unit_test(test_refused),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
