/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A LINK record's ports from the links' state (daemon/link_record.c): the
 * changes of the span and only those, the last PC_LINK_CHANGES_MAX listed
 * oldest first, the time down within the span, and the neighbour with its
 * silence. Each record must also pass the decoder's own rules.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "daemon/link_record.h"
#include "log/record.h"

#define S   1000000000ull
#define T0  (1704067200ull * S) /* realtime of the first reading */
#define M0  (1000 * S)          /* its monotonic time */
#define WIN (10 * S)

static struct pc_links_snapshot snap;

/* up0's pod port, read first at T0 up, then changing at each of at[] (seconds after T0). */
static void
port_with(const double *at, unsigned n, uint64_t now_s)
{
	struct pc_link_state *s = &snap.port[0][PC_DIR_UP].link;

	memset(&snap, 0, sizeof(snap));
	snap.nuplinks = 1;
	snprintf(snap.uplink[0], PC_ID_LEN, "up0");
	snap.real_ns = T0 + now_s * S;
	snap.mono_ns = M0 + now_s * S;
	s->known = true;
	s->first = (struct pc_link_change){ M0, T0, true, true, 25000 };
	s->now = s->first;
	for (unsigned k = 0; k < n; k++) {
		bool up = k % 2 == 1;
		uint64_t t = (uint64_t)(at[k] * S);
		struct pc_link_change c = { M0 + t, T0 + t, up, up, up ? 25000 : 0 };
		s->history[k % PC_LINK_HISTORY] = c;
		s->changes++;
		s->now = c;
	}
}

static void
record(struct pc_record_port *p, uint64_t span_ns)
{
	struct pc_record r = { .type = PC_REC_LINK, .appliance_id = "a", .window_len_ns = WIN };
	static uint8_t buf[PC_RECORD_MAX];
	struct pc_record back;
	struct pc_error err;

	pc_link_record_port(&snap, 0, PC_DIR_UP, span_ns, 0, p);
	r.window_start_ns = T0 - T0 % WIN;
	r.linkstate = (struct pc_record_linkstate){ span_ns ? PC_LINK_WINDOW : PC_LINK_AT_START,
						    span_ns, 1, p };
	size_t len = pc_record_encode(&r, buf, sizeof(buf));
	assert_true(len > 0);
	assert_int_equal(pc_record_decode(buf, len, &back, &err), 0);
	pc_record_free(&back);
}

/* Down from 12.5 s to 15 s in the window [10 s, 20 s): 2.5 s, two changes listed. */
static void
test_down_within(void **state)
{
	static const double at[] = { 12.5, 15 };
	struct pc_record_port p;

	(void)state;
	port_with(at, 2, 20);
	record(&p, WIN);
	assert_int_equal(p.down_ns, 2500000000ull);
	assert_int_equal(p.changes, 2);
	assert_int_equal(p.nlisted, 2);
	assert_int_equal(p.listed[0].real_ns, T0 + 12500000000ull);
	assert_false(p.listed[0].up);
	assert_true(p.listed[1].up);
	assert_true(p.now.up);
}

/* A change before the span is not the span's; the link down since then is down all of it. */
static void
test_down_before(void **state)
{
	static const double at[] = { 5 };
	struct pc_record_port p;

	(void)state;
	port_with(at, 1, 20);
	record(&p, WIN);
	assert_int_equal(p.changes, 0);
	assert_int_equal(p.nlisted, 0);
	assert_int_equal(p.down_ns, WIN);
	assert_false(p.now.up);
}

/* Down at 18 s and still down at the end: 2 s. */
static void
test_down_at_end(void **state)
{
	static const double at[] = { 1, 2, 18 };
	struct pc_record_port p;

	(void)state;
	port_with(at, 3, 20);
	record(&p, WIN);
	assert_int_equal(p.changes, 1);
	assert_int_equal(p.down_ns, 2 * S);
}

/*
 * 20 changes in the span: all counted, the last 16 listed, oldest first;
 * the time down of those the ring no longer holds is not known.
 */
static void
test_many_changes(void **state)
{
	double at[20];
	struct pc_record_port p;

	(void)state;
	for (unsigned k = 0; k < 20; k++)
		at[k] = 10.25 + 0.25 * k;
	port_with(at, 20, 20);
	record(&p, WIN);
	assert_int_equal(p.changes, 20);
	assert_int_equal(p.nlisted, PC_LINK_CHANGES_MAX);
	assert_int_equal(p.listed[0].real_ns, T0 + (uint64_t)(at[4] * S));
	assert_int_equal(p.listed[15].real_ns, T0 + (uint64_t)(at[19] * S));
	/* down from each even change to the next the ring holds: 8 × 0.25 s (of 10) */
	assert_int_equal(p.down_ns, 2 * S);
}

/*
 * The wall clock stepped back 30 s between the two changes (and forward
 * again before the record): the changes keep their monotonic order and
 * place in the span, and the record still passes the decoder.
 */
static void
test_wall_clock_stepped(void **state)
{
	static const double at[] = { 12.5, 15 };
	struct pc_link_state *s = &snap.port[0][PC_DIR_UP].link;
	struct pc_record_port p;

	(void)state;
	port_with(at, 2, 20);
	s->history[1].real_ns -= 30 * S;
	s->now.real_ns -= 30 * S;
	record(&p, WIN);
	assert_int_equal(p.nlisted, 2);
	assert_int_equal(p.listed[0].real_ns, T0 + 12500000000ull);
	assert_int_equal(p.listed[1].real_ns, T0 + 15 * S);
	assert_int_equal(p.down_ns, 2500000000ull);
	/* a snapshot taken while the wall clock is 5 s slow: the whole span moves with it */
	snap.real_ns -= 5 * S;
	record(&p, WIN);
	assert_int_equal(p.listed[0].real_ns, T0 + 7500000000ull);
	assert_int_equal(p.down_ns, 2500000000ull);
}

/* The neighbour heard 4 s ago is in the record; without one, silence since the first reading. */
static void
test_neighbor(void **state)
{
	struct pc_lldp_neighbor *n = &snap.port[0][PC_DIR_UP].neighbor;
	struct pc_record_port p;

	(void)state;
	port_with(NULL, 0, 20);
	record(&p, 0);
	assert_int_equal(p.neighbor, 0);
	assert_int_equal(p.silent_ns, 20 * S);
	n->present = true;
	n->last_mono_ns = M0 + 16 * S;
	n->last_real_ns = T0 + 16 * S;
	n->lldp.ttl = 120;
	n->lldp.chassis = (struct pc_lldp_id){ .subtype = 7, .len = 4, .value = "sw-1" };
	n->lldp.port = (struct pc_lldp_id){ .subtype = 5, .len = 2, .value = "p1" };
	record(&p, 0);
	assert_int_equal(p.neighbor, 1);
	assert_int_equal(p.heard_ns, T0 + 16 * S);
	assert_int_equal(p.silent_ns, 4 * S);
	assert_memory_equal(p.chassis.value, "sw-1", 4);
	assert_int_equal(p.has_name, 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_down_within),        cmocka_unit_test(test_down_before),
		cmocka_unit_test(test_down_at_end),        cmocka_unit_test(test_many_changes),
		cmocka_unit_test(test_wall_clock_stepped), cmocka_unit_test(test_neighbor),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
