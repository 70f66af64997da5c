/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * LINK (type 12), each port's link and LLDP neighbour: its exact layout
 * (docs/log-format.md, "LINK"), a round trip, every truncation, and the
 * refusals of what no reading of a port can give.
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

#define HEAD (107 + 4) /* the common fields of appliance "app1", the block counts included */

static struct pc_record_port ports[2];

/* up0's pod port went down at 3.5 s and up at 3.75 s of a 2 s span; its fabric port faces sw1. */
static struct pc_record
link_record(void)
{
	memset(ports, 0, sizeof(ports));
	struct pc_record_port *p = &ports[0];
	snprintf(p->uplink, sizeof(p->uplink), "up0");
	p->side = 0;
	p->now = (struct pc_record_link_change){ 3750, 1, 1, 100000 };
	p->down_ns = 250;
	p->changes = 2;
	p->nlisted = 2;
	p->listed[0] = (struct pc_record_link_change){ 3500, 0, 0, 0 };
	p->listed[1] = p->now;
	p->heard_ns = 0;
	p->silent_ns = 7000;
	struct pc_record_port *f = &ports[1];
	snprintf(f->uplink, sizeof(f->uplink), "up0");
	f->side = 1;
	f->now = (struct pc_record_link_change){ 1000, 1, 1, 25000 };
	f->neighbor = 1;
	f->heard_ns = 3900;
	f->silent_ns = 100;
	f->ttl = 120;
	f->chassis = (struct pc_lldp_id){ .subtype = 4, .len = 6, .value = { 2, 0, 0, 0, 0, 1 } };
	f->port = (struct pc_lldp_id){ .subtype = 5, .len = 4, .value = "swp1" };
	f->has_name = 1;
	f->name_len = 3;
	memcpy(f->name, "sw1", 3);
	return (struct pc_record){ .type = PC_REC_LINK,
				   .appliance_id = "app1",
				   .window_len_ns = 1000,
				   .window_start_ns = 4000,
				   .linkstate.kind = PC_LINK_WINDOW,
				   .linkstate.span_ns = 2000,
				   .linkstate.nports = 2,
				   .linkstate.ports = ports };
}

static void
expect_refused(const uint8_t *rec, size_t n)
{
	struct pc_record d;
	struct pc_error why;

	assert_int_equal(pc_record_decode(rec, n, &d, &why), -1);
	assert_true(why.msg[0] != '\0');
}

/* The pod port's block: name, side, now, down, changes, the two listed, no neighbour. */
#define POD_PORT    (1 + 3 + 1 + 14 + 8 + 4 + 1 + 2 * 14 + 1 + 8 + 8)
#define FABRIC_PORT (1 + 3 + 1 + 14 + 8 + 4 + 1 + 1 + 8 + 8 + 2 + (2 + 6) + (2 + 4) + 2 + 3)

static void
test_layout(void **state)
{
	struct pc_record r = link_record(), d;
	struct pc_error why;
	uint8_t out[1024], t[1024];

	(void)state;
	size_t n = pc_record_encode(&r, out, sizeof(out));
	assert_int_equal(n, HEAD + 1 + 8 + 4 + POD_PORT + FABRIC_PORT);
	assert_int_equal(out[1], 12);
	size_t off = HEAD;
	assert_int_equal(out[off], PC_LINK_WINDOW);
	assert_int_equal(pc_load_be64(out + off + 1), 2000);
	assert_int_equal(pc_load_be32(out + off + 9), 2);
	off += 13;
	assert_int_equal(out[off], 3);
	assert_memory_equal(out + off + 1, "up0", 3);
	assert_int_equal(out[off + 4], 0);                      /* the pod side */
	assert_int_equal(pc_load_be64(out + off + 5), 3750);    /* now: since */
	assert_int_equal(out[off + 13], 1);                     /* up */
	assert_int_equal(out[off + 14], 1);                     /* full duplex */
	assert_int_equal(pc_load_be32(out + off + 15), 100000); /* Mbit/s */
	assert_int_equal(pc_load_be64(out + off + 19), 250);    /* down */
	assert_int_equal(pc_load_be32(out + off + 27), 2);      /* changes */
	assert_int_equal(out[off + 31], 2);                     /* listed */
	assert_int_equal(pc_load_be64(out + off + 32), 3500);   /* first change: down */
	assert_int_equal(out[off + 32 + 8], 0);
	assert_int_equal(out[off + 32 + 28], 0);                   /* no neighbour */
	assert_int_equal(pc_load_be64(out + off + 32 + 37), 7000); /* silent */
	off += POD_PORT;
	size_t nb = off + 1 + 3 + 1 + 14 + 8 + 4 + 1;
	assert_int_equal(out[nb], 1);
	assert_int_equal(pc_load_be64(out + nb + 1), 3900);
	assert_int_equal(pc_load_be16(out + nb + 17), 120);
	assert_int_equal(out[nb + 19], 4);
	assert_int_equal(out[nb + 20], 6);
	assert_int_equal(out[nb + 27], 5);
	assert_int_equal(out[nb + 28], 4);
	assert_memory_equal(out + nb + 29, "swp1", 4);
	assert_int_equal(out[nb + 33], 1);
	assert_int_equal(out[nb + 34], 3);
	assert_memory_equal(out + nb + 35, "sw1", 3);
	assert_int_equal(nb + 38, n);

	assert_int_equal(pc_record_decode(out, n, &d, &why), 0);
	assert_int_equal(d.linkstate.nports, 2);
	assert_int_equal(d.linkstate.ports[0].listed[0].real_ns, 3500);
	assert_int_equal(d.linkstate.ports[1].port.len, 4);
	assert_int_equal(pc_record_encode(&d, t, sizeof(t)), n);
	assert_memory_equal(t, out, n);
	pc_record_free(&d);
	assert_null(d.linkstate.ports);
	for (size_t k = 0; k < n; k++)
		expect_refused(out, k);
	memcpy(t, out, n);
	t[n] = 0;
	expect_refused(t, n + 1);
	/* a port count past what the record holds */
	memcpy(t, out, n);
	pc_store_be32(t + HEAD + 9, 3);
	expect_refused(t, n);
	/* an unknown kind */
	memcpy(t, out, n);
	t[HEAD] = 4;
	expect_refused(t, n);
	/* a side that is neither */
	memcpy(t, out, n);
	t[HEAD + 13 + 4] = 2;
	expect_refused(t, n);
	/* a neighbour flag of 2 */
	memcpy(t, out, n);
	t[nb] = 2;
	expect_refused(t, n);
}

/* Each refusal, made by the encoder too: podcapd cannot sign what a verifier refuses. */
static void
test_refusals(void **state)
{
	uint8_t out[1024];
	struct pc_record r;

	(void)state;
	assert_string_equal(pc_record_type_name(PC_REC_LINK), "link");
#define REFUSED(edit)                                                        \
	do {                                                                 \
		r = link_record();                                           \
		edit;                                                        \
		assert_int_equal(pc_record_encode(&r, out, sizeof(out)), 0); \
	} while (0)
	r = link_record();
	assert_true(pc_record_encode(&r, out, sizeof(out)) > 0);
	REFUSED(r.window_count = 1);                          /* it covers no window itself */
	REFUSED(r.linkstate.span_ns = 0);                     /* a window's of no span */
	REFUSED(r.linkstate.kind = PC_LINK_AT_START);         /* a start's with a span */
	REFUSED(r.linkstate.span_ns = 2500);                  /* not whole windows */
	REFUSED(ports[0].down_ns = 2001);                     /* down longer than the span */
	REFUSED(ports[0].nlisted = 1);                        /* not the last changes */
	REFUSED(ports[0].listed[0].real_ns = 3800);           /* out of order */
	REFUSED(ports[0].listed[0] = ports[0].now);           /* not a change */
	REFUSED(ports[0].now.speed_mbps = 10);                /* not the last change */
	REFUSED(ports[0].listed[0].speed_mbps = 10);          /* down with a speed */
	REFUSED(ports[0].listed[0].up = 2);                   /* up is 0 or 1 */
	REFUSED(ports[1].down_ns = 5);                        /* down without a change, and up */
	REFUSED(ports[1].port.len = 0);                       /* an empty LLDP id */
	REFUSED(ports[1].has_name = 0);                       /* a name without its flag */
	REFUSED(ports[1].heard_ns = 0);                       /* a neighbour never heard */
	REFUSED(ports[1].side = 0);                           /* a port twice */
	REFUSED(snprintf(ports[1].uplink, PC_ID_LEN, "a b")); /* not an id */
	/* a link down all the span without a change is down the span */
	r = link_record();
	ports[1].now = (struct pc_record_link_change){ 1000, 0, 0, 0 };
	assert_int_equal(pc_record_encode(&r, out, sizeof(out)), 0);
	ports[1].down_ns = 2000;
	assert_true(pc_record_encode(&r, out, sizeof(out)) > 0);
	/* a start's: no span, nothing down */
	r = link_record();
	r.linkstate.kind = PC_LINK_AT_START;
	r.linkstate.span_ns = 0;
	ports[0].down_ns = 0;
	ports[0].changes = 0;
	ports[0].nlisted = 0;
	assert_true(pc_record_encode(&r, out, sizeof(out)) > 0);
	/* no pods or links */
	struct pc_record_pod pod = { .id = "p", .uplink = "u", .cap_bps = 1, .burst_bytes = 1 };
	REFUSED((r.npods = 1, r.pods = &pod));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_layout),
		cmocka_unit_test(test_refusals),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
