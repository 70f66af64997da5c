/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The clock discipline as podcap reads it (src/discipline/): the IEEE 1588
 * management messages against answers Debian's ptp4l 3.1.1 sent to a GET
 * (captured over its management socket) and against every way of breaking
 * them; the bound a reading supports; the polls of a window; and the
 * client against a fake ptp4l on a thread of the test: every answer, none,
 * late ones, wrong ones, no socket at all, each within the poll's deadline.
 */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/bytes.h"
#include "base/clock.h"
#include "discipline/ptp4l.h"
#include "discipline/ptp_mgmt.h"
#include "discipline/window.h"

/* ptp4l 3.1.1's answers to GETs from port 0x1234 of clock identity 0, domain 0 */
static const char *const HEX_DDS =
    "0d02004a0000000000000000000000000000000076a32efffe87d8a200000000047f000000000000"
    "00001234000002000001001620000300000180fffeffff8076a32efffe87d8a20000";
static const char *const HEX_TS =
    "0d0200680000000000000000000000000000000076a32efffe87d8a200000001047f000000000000"
    "000012340000020000010034c000fffffffffffffe9718ed4a64e4c9a695000000000000000000000000"
    "0000000000000000000000000001ba0ae5fffe6d6601";
static const char *const HEX_CDS =
    "0d0200480000000000000000000000000000000076a32efffe87d8a200000002047f000000000000"
    "00001234000002000001001420010001fffffffffe9700000000000009fa0000";
static const char *const HEX_PDS =
    "0d0200560000000000000000000000000000000076a32efffe87d8a200000003047f000000000000"
    "0000123400000200000100222002ba0ae5fffe6d660100010000ffff7fffffff01f8feffff80ba0ae5"
    "fffe6d6601";
static const char *const HEX_PORT =
    "0d0200500000000000000000000000000000000076a32efffe87d8a200010004047f000000000000"
    "00001234000002000001001c200476a32efffe87d8a2000108000000000000000000ff0300010002";
static const char *const HEX_NOSUCH =
    "0d02003c0000000000000000000000000000000076a32efffe87d8a200010006047f000000000000"
    "0000123400000200000200080002123400000000";

static const struct pc_ptp_asker ASKER = { .self = { .port = 0x1234 }, .domain = 0 };
static const uint8_t CLOCK[8] = { 0x76, 0xa3, 0x2e, 0xff, 0xfe, 0x87, 0xd8, 0xa2 };
static const uint8_t GM[8] = { 0xba, 0x0a, 0xe5, 0xff, 0xfe, 0x6d, 0x66, 0x01 };

static size_t
unhex(const char *hex, uint8_t *out, size_t cap)
{
	size_t n = strlen(hex) / 2;

	assert_true(n <= cap);
	for (size_t i = 0; i < n; i++) {
		unsigned v;
		assert_int_equal(sscanf(hex + 2 * i, "%2x", &v), 1);
		out[i] = (uint8_t)v;
	}
	return n;
}

/* Decodes buf[0..len) as ASKER's answer, expecting a refusal of the message whose reason holds `why`. */
static void
refused_because(const uint8_t *buf, size_t len, const char *why)
{
	struct pc_ptp_answer a;
	struct pc_error err = { .msg = "" };

	assert_int_equal(pc_ptp_decode(buf, len, &ASKER, &a, &err), -1);
	if (strstr(err.msg, why) == NULL)
		fail_msg("refused for \"%s\", expected \"%s\"", err.msg, why);
}

static void
test_encode_get(void **state)
{
	const struct pc_ptp_asker a = {
		.self = { .clock = { 1, 2, 3, 4, 5, 6, 7, 8 }, .port = 0xbeef }, .domain = 24
	};
	uint8_t buf[PC_PTP_GET_LEN + 8], want[PC_PTP_GET_LEN];
	(void)state;

	unhex("0d020036180000000000000000000000000000000102030405060708beef0102047f"
	      "ffffffffffffffffffff0000000000010002c000",
	      want, sizeof(want));
	assert_int_equal(pc_ptp_encode_get(&a, PC_PTP_TIME_STATUS_NP, 0x0102, buf, sizeof(buf)),
			 PC_PTP_GET_LEN);
	assert_memory_equal(buf, want, PC_PTP_GET_LEN);
	assert_int_equal(pc_ptp_encode_get(&a, PC_PTP_TIME_STATUS_NP, 1, buf, PC_PTP_GET_LEN - 1),
			 0);
}

static void
test_decode_ptp4l(void **state)
{
	uint8_t buf[256];
	struct pc_ptp_answer a;
	struct pc_error err;
	size_t n;
	(void)state;

	n = unhex(HEX_DDS, buf, sizeof(buf));
	assert_int_equal(pc_ptp_decode(buf, n, &ASKER, &a, &err), 0);
	assert_int_equal(a.id, PC_PTP_DEFAULT_DATA_SET);
	assert_int_equal(a.seq, 0);
	assert_false(a.refused);
	assert_int_equal(a.u.dds.nports, 1);
	assert_true(a.u.dds.two_step && a.u.dds.slave_only);
	assert_memory_equal(a.u.dds.clock, CLOCK, 8);
	assert_memory_equal(a.source.clock, CLOCK, 8);
	assert_int_equal(a.source.port, 0);

	n = unhex(HEX_TS, buf, sizeof(buf));
	assert_int_equal(pc_ptp_decode(buf, n, &ASKER, &a, &err), 0);
	assert_int_equal(a.id, PC_PTP_TIME_STATUS_NP);
	assert_int_equal(a.u.ts.master_offset_ns, -361);
	assert_int_equal(a.u.ts.ingress_ns, 0x18ed4a64e4c9a695);
	assert_true(a.u.ts.gm_present);
	assert_memory_equal(a.u.ts.gm, GM, 8);

	n = unhex(HEX_CDS, buf, sizeof(buf));
	assert_int_equal(pc_ptp_decode(buf, n, &ASKER, &a, &err), 0);
	assert_int_equal(a.u.cds.steps_removed, 1);
	assert_int_equal(a.u.cds.offset, -361 * 65536);
	assert_int_equal(a.u.cds.path_delay, 2554 * 65536);

	n = unhex(HEX_PDS, buf, sizeof(buf));
	assert_int_equal(pc_ptp_decode(buf, n, &ASKER, &a, &err), 0);
	assert_memory_equal(a.u.pds.gm, GM, 8);
	assert_memory_equal(a.u.pds.parent.clock, GM, 8);
	assert_int_equal(a.u.pds.parent.port, 1);
	assert_int_equal(a.u.pds.gm_priority1, 1);
	assert_int_equal(a.u.pds.gm_class, 248);

	n = unhex(HEX_PORT, buf, sizeof(buf));
	assert_int_equal(pc_ptp_decode(buf, n, &ASKER, &a, &err), 0);
	assert_int_equal(a.u.port.port.port, 1);
	assert_memory_equal(a.u.port.port.clock, CLOCK, 8);
	assert_int_equal(a.u.port.state, PC_PTP_UNCALIBRATED);
	assert_int_equal(a.source.port, 1);

	n = unhex(HEX_NOSUCH, buf, sizeof(buf));
	assert_int_equal(pc_ptp_decode(buf, n, &ASKER, &a, &err), 0);
	assert_true(a.refused);
	assert_int_equal(a.error, 2);
	assert_string_equal(pc_ptp_error_name(a.error), "NO_SUCH_ID");
	assert_int_equal(a.id, 0x1234);
	assert_string_equal(a.error_text, "");
}

/* Every prefix and every one-byte extension of each answer is refused. */
static void
test_decode_cut_and_extended(void **state)
{
	const char *const all[] = { HEX_DDS, HEX_TS, HEX_CDS, HEX_PDS, HEX_PORT, HEX_NOSUCH };
	uint8_t buf[256];
	(void)state;

	for (size_t f = 0; f < sizeof(all) / sizeof(all[0]); f++) {
		size_t n = unhex(all[f], buf, sizeof(buf));
		for (size_t len = 0; len < n; len++)
			refused_because(buf, len, len < 52 ? "shorter than" : "messageLength");
		buf[n] = 0;
		refused_because(buf, n + 1, "messageLength");
		/* and with messageLength saying so: a trailing byte is no TLV */
		pc_store_be16(buf + 2, (uint16_t)(n + 1));
		refused_because(buf, n + 1, "a TLV of");
	}
}

static void
test_decode_header_refusals(void **state)
{
	uint8_t buf[256], big[PC_PTP_MSG_MAX + 1];
	struct pc_ptp_answer a;
	struct pc_error err;
	size_t n;
	(void)state;

	n = unhex(HEX_CDS, buf, sizeof(buf));
	buf[0] = 0x0c; /* signaling */
	refused_because(buf, n, "message type 12");
	buf[0] = 0x1d; /* transportSpecific is ptp4l's to set */
	assert_int_equal(pc_ptp_decode(buf, n, &ASKER, &a, &err), 0);
	buf[0] = 0x0d;
	buf[1] = 0x01;
	refused_because(buf, n, "PTP version 1");
	buf[1] = 0x12; /* 1588-2019's minor version 1 */
	assert_int_equal(pc_ptp_decode(buf, n, &ASKER, &a, &err), 0);
	buf[1] = 0x02;
	buf[4] = 1;
	refused_because(buf, n, "domain 1");
	buf[4] = 0;
	buf[46] = 0x00; /* a GET, not its answer */
	refused_because(buf, n, "action 0");
	buf[46] = 0x04;
	refused_because(buf, n, "action 4");
	buf[46] = 0x02;
	buf[43] = 0x35; /* to port 0x1235 */
	refused_because(buf, n, "another identity");
	buf[43] = 0x34;
	buf[34] = 1;
	refused_because(buf, n, "another identity");
	buf[34] = 0;
	assert_int_equal(pc_ptp_decode(buf, n, &ASKER, &a, &err), 0);

	memcpy(big, buf, n);
	memset(big + n, 0, sizeof(big) - n);
	refused_because(big, sizeof(big), "longer than");
}

static void
test_decode_tlv_refusals(void **state)
{
	uint8_t buf[256];
	size_t n;
	(void)state;

	n = unhex(HEX_CDS, buf, sizeof(buf));
	pc_store_be16(buf + 48, 0x0003);
	refused_because(buf, n, "TLV type 0x0003");
	pc_store_be16(buf + 48, 0x0001);
	pc_store_be16(buf + 50, 22);
	refused_because(buf, n, "a TLV of 22 bytes in the 20 left");
	pc_store_be16(buf + 50, 18);
	refused_because(buf, n, "a TLV of 18 bytes in the 20 left");
	/* the message cut to a TLV of 18 bytes: CURRENT_DATA_SET of 16 */
	pc_store_be16(buf + 2, (uint16_t)(n - 2));
	refused_because(buf, n - 2, "CURRENT_DATA_SET of 16 bytes, not 18");
	/* just the id */
	pc_store_be16(buf + 2, 54);
	pc_store_be16(buf + 50, 2);
	refused_because(buf, 54, "CURRENT_DATA_SET of 0 bytes, not 18");
	/* not even that */
	pc_store_be16(buf + 2, 53);
	pc_store_be16(buf + 50, 1);
	refused_because(buf, 53, "without its id");

	/* CLOCK_ACCURACY: ptp4l's answer, but podcap never asks for it */
	n = unhex("0d0200380000000000000000000000000000000076a32efffe87d8a200000005047f0000"
		  "000000000000123400000200000100042010fe00",
		  buf, sizeof(buf));
	refused_because(buf, n, "management id 0x2010");
}

static void
test_decode_value_refusals(void **state)
{
	uint8_t buf[256];
	size_t n;
	(void)state;

	n = unhex(HEX_TS, buf, sizeof(buf));
	pc_store_be32(buf + 54 + 38, 2);
	refused_because(buf, n, "gmPresent 2");
	pc_store_be32(buf + 54 + 38, 0xffffffff);
	refused_because(buf, n, "gmPresent");

	n = unhex(HEX_PORT, buf, sizeof(buf));
	buf[54 + 10] = 0;
	refused_because(buf, n, "portState 0");
	buf[54 + 10] = 11;
	refused_because(buf, n, "portState 11");
	buf[54 + 10] = 9;
	pc_store_be16(buf + 54 + 8, 0);
	refused_because(buf, n, "port number 0");
	pc_store_be16(buf + 54 + 8, 0xffff);
	refused_because(buf, n, "port number 65535");

	n = unhex(HEX_DDS, buf, sizeof(buf));
	pc_store_be16(buf + 54 + 2, 0);
	refused_because(buf, n, "no port");
}

static void
test_decode_error_status(void **state)
{
	uint8_t buf[256];
	struct pc_ptp_answer a;
	struct pc_error err;
	size_t n;
	(void)state;

	n = unhex(HEX_NOSUCH, buf, sizeof(buf));
	/* shorter than its fixed fields */
	pc_store_be16(buf + 2, (uint16_t)(n - 2));
	pc_store_be16(buf + 50, 6);
	refused_because(buf, n - 2, "shorter than 8");

	/* displayData "no\x01" and a pad byte: 8 + 1 + 3 + 0 = 12 */
	n = unhex(HEX_NOSUCH, buf, sizeof(buf));
	memcpy(buf + n, "\x03no\x01", 4);
	pc_store_be16(buf + 2, (uint16_t)(n + 4));
	pc_store_be16(buf + 50, 12);
	assert_int_equal(pc_ptp_decode(buf, n + 4, &ASKER, &a, &err), 0);
	assert_true(a.refused);
	assert_string_equal(a.error_text, "no?");
	/* a text running past the TLV */
	buf[n] = 4;
	refused_because(buf, n + 4, "text of 4 bytes in 4");
	/* a text followed by more than one pad byte */
	buf[n] = 1;
	refused_because(buf, n + 4, "text of 1 bytes in 4");
}

static void
test_names(void **state)
{
	char id[PC_PTP_ID_TEXT];
	(void)state;

	assert_string_equal(pc_ptp_identity_text(CLOCK, id), "76a32e.fffe.87d8a2");
	assert_string_equal(pc_ptp_state_name(PC_PTP_SLAVE), "SLAVE");
	assert_string_equal(pc_ptp_state_name(10), "GRAND_MASTER");
	assert_string_equal(pc_ptp_state_name(11), "(invalid)");
	assert_string_equal(pc_ptp_id_name(PC_PTP_PORT_DATA_SET), "PORT_DATA_SET");
	assert_string_equal(pc_clock_result_name(PC_CLOCK_TIMEOUT), "timeout");
}

/* A reading that supports a bound: a slave port, a grandmaster, a measured Sync and delay. */
static struct pc_clock_reading
slave_reading(int64_t offset, int64_t delay)
{
	struct pc_clock_reading r = { .offset = offset,
				      .path_delay = delay,
				      .steps_removed = 1,
				      .ingress_ns = 1,
				      .gm_present = true,
				      .nports = 1 };

	r.port_states[0] = PC_PTP_SLAVE;
	return r;
}

static void
test_bound_rule(void **state)
{
	struct pc_clock_reading r;
	(void)state;

	r = slave_reading(-361 * 65536, 2554 * 65536);
	pc_clock_bound(&r);
	assert_true(r.bounded);
	assert_int_equal(r.bound_ns, 361 + 2554);
	assert_int_equal(r.port, 1);
	assert_int_equal(r.port_state, PC_PTP_SLAVE);
	/* rounded up to the ns: 10 ns and 2^-16 of one, and 5 */
	r = slave_reading(10 * 65536 + 1, 5 * 65536);
	pc_clock_bound(&r);
	assert_int_equal(r.bound_ns, 16);
	/* a negative mean path delay counts by its magnitude */
	r = slave_reading(100 * 65536, -30 * 65536);
	pc_clock_bound(&r);
	assert_int_equal(r.bound_ns, 130);
	/* two magnitudes of 2^63 saturate */
	r = slave_reading(INT64_MIN, INT64_MIN);
	pc_clock_bound(&r);
	assert_true(r.bounded);
	assert_int_equal(r.bound_ns, (UINT64_MAX >> 16) + 1);
	r = slave_reading(INT64_MAX, INT64_MAX);
	pc_clock_bound(&r);
	assert_int_equal(r.bound_ns, (UINT64_MAX >> 16) + 1);
	/* UNCALIBRATED follows the master too (the servo not locked, or free running) */
	r = slave_reading(0, 7 * 65536);
	r.port_states[0] = PC_PTP_UNCALIBRATED;
	pc_clock_bound(&r);
	assert_true(r.bounded);
	assert_int_equal(r.bound_ns, 7);
}

static void
test_bound_refused(void **state)
{
	struct pc_clock_reading r;
	(void)state;

	r = slave_reading(1, 65536);
	r.gm_present = false;
	pc_clock_bound(&r);
	assert_false(r.bounded);
	r = slave_reading(1, 65536);
	r.port_states[0] = 6; /* MASTER */
	pc_clock_bound(&r);
	assert_false(r.bounded);
	assert_int_equal(r.port_state, 6);
	r = slave_reading(1, 65536);
	r.port_states[0] = 4; /* LISTENING */
	pc_clock_bound(&r);
	assert_false(r.bounded);
	r = slave_reading(1, 65536);
	r.steps_removed = 0;
	pc_clock_bound(&r);
	assert_false(r.bounded);
	r = slave_reading(1, 65536);
	r.ingress_ns = 0;
	pc_clock_bound(&r);
	assert_false(r.bounded);
	/* ptp4l's 0 before its first delay measurement is no measurement */
	r = slave_reading(0, 0);
	pc_clock_bound(&r);
	assert_false(r.bounded);
	assert_int_equal(r.bound_ns, 0);
}

static void
test_bound_port_pick(void **state)
{
	struct pc_clock_reading r = slave_reading(0, 65536);
	(void)state;

	r.nports = 3;
	r.port_states[0] = 6;
	r.port_states[1] = PC_PTP_UNCALIBRATED;
	r.port_states[2] = PC_PTP_SLAVE;
	pc_clock_bound(&r);
	assert_int_equal(r.port, 3);
	assert_true(r.bounded);
	r.port_states[2] = 6;
	pc_clock_bound(&r);
	assert_int_equal(r.port, 2);
	assert_int_equal(r.port_state, PC_PTP_UNCALIBRATED);
	r.port_states[1] = 7; /* PASSIVE */
	pc_clock_bound(&r);
	assert_int_equal(r.port, 1);
	assert_int_equal(r.port_state, 6);
	assert_false(r.bounded);
	r.nports = 0;
	pc_clock_bound(&r);
	assert_int_equal(r.port_state, 0);
	assert_false(r.bounded);
}

static struct pc_clock_acc acc;

static void
add_ok(uint64_t t, int64_t offset, uint64_t bound)
{
	struct pc_clock_reading r = slave_reading(offset, 65536);

	r.read_mono_ns = t;
	r.bounded = bound != 0;
	r.bound_ns = bound;
	pc_clock_acc_add(&acc, t, PC_CLOCK_OK, &r);
}

static void
test_window_cut(void **state)
{
	struct pc_clock_window w;
	(void)state;

	pc_clock_acc_init(&acc);
	pc_clock_acc_take(&acc, 100, &w);
	assert_int_equal(w.polls, 0);
	assert_false(w.have_latest);

	add_ok(10, 5, 50);
	add_ok(20, -9, 90);
	pc_clock_acc_add(&acc, 30, PC_CLOCK_TIMEOUT, NULL);
	add_ok(40, 7, 0);
	add_ok(50, 1, 20);
	/* the window ends at 35: what came after is the next one's */
	pc_clock_acc_take(&acc, 35, &w);
	assert_int_equal(w.polls, 3);
	assert_int_equal(w.results[PC_CLOCK_OK], 2);
	assert_int_equal(w.results[PC_CLOCK_TIMEOUT], 1);
	assert_int_equal(w.bounded, 2);
	assert_int_equal(w.worst_offset, -9);
	assert_int_equal(w.worst_bound_ns, 90);
	assert_true(w.have_latest);
	assert_int_equal(w.latest.read_mono_ns, 20);

	pc_clock_acc_take(&acc, 60, &w);
	assert_int_equal(w.polls, 2);
	assert_int_equal(w.bounded, 1);
	assert_int_equal(w.worst_offset, 7);
	assert_int_equal(w.worst_bound_ns, 20);
	assert_int_equal(w.latest.read_mono_ns, 50);

	/* a window of failed polls only: the latest reading is the last window's */
	pc_clock_acc_add(&acc, 70, PC_CLOCK_DOWN, NULL);
	pc_clock_acc_take(&acc, 80, &w);
	assert_int_equal(w.polls, 1);
	assert_int_equal(w.results[PC_CLOCK_DOWN], 1);
	assert_int_equal(w.bounded, 0);
	assert_int_equal(w.worst_bound_ns, 0);
	assert_true(w.have_latest);
	assert_int_equal(w.latest.read_mono_ns, 50);
}

/* More polls than the ring holds before a window is taken: none is lost. */
static void
test_window_ring_overflow(void **state)
{
	struct pc_clock_window w;
	unsigned n = PC_CLOCK_RING + 44;
	(void)state;

	pc_clock_acc_init(&acc);
	for (unsigned i = 0; i < n; i++)
		add_ok(1000 + i, i == 3 ? -5000 : (int64_t)i, i == 7 ? 9999 : 1);
	/* taken late: the oldest 44 left the ring, the cut keeps the newest 150 */
	pc_clock_acc_take(&acc, 1000 + n - 150, &w);
	assert_int_equal(w.polls, n - 150);
	assert_int_equal(w.worst_offset, -5000);
	assert_int_equal(w.worst_bound_ns, 9999);
	assert_int_equal(w.latest.read_mono_ns, 1000 + n - 151);
	pc_clock_acc_take(&acc, UINT64_MAX, &w);
	assert_int_equal(w.polls, 150);
	assert_int_equal(w.worst_offset, n - 1);
	assert_int_equal(w.worst_bound_ns, 1);
	assert_int_equal(w.latest.read_mono_ns, 1000 + n - 1);
}

/* The worst offset among the ring's polls and those that left it, by magnitude. */
static void
test_window_worst_across_overflow(void **state)
{
	struct pc_clock_window w;
	(void)state;

	pc_clock_acc_init(&acc);
	add_ok(1, -3, 1);
	for (unsigned i = 0; i < PC_CLOCK_RING; i++)
		add_ok(2 + i, 2, 1);
	pc_clock_acc_take(&acc, UINT64_MAX, &w);
	assert_int_equal(w.polls, PC_CLOCK_RING + 1);
	assert_int_equal(w.worst_offset, -3);

	add_ok(1000, 1, 1);
	for (unsigned i = 0; i < PC_CLOCK_RING; i++)
		add_ok(1001 + i, i == 100 ? -8 : 0, 1);
	pc_clock_acc_take(&acc, UINT64_MAX, &w);
	assert_int_equal(w.worst_offset, -8);
}

/* A fake ptp4l on a thread: answers each GET as `mode` says, from the captured answers. */
enum fake_mode {
	FAKE_ANSWER,   /* as ptp4l did */
	FAKE_SILENT,   /* reads and never answers (a stopped ptp4l) */
	FAKE_LATE,     /* first an answer to an earlier GET, then the right one */
	FAKE_REFUSE,   /* NOT_SUPPORTED to TIME_STATUS_NP */
	FAKE_GARBAGE,  /* a datagram of noise for PARENT_DATA_SET */
	FAKE_STRANGER, /* PORT_DATA_SET of a port of another clock */
	FAKE_TWICE,    /* PORT_DATA_SET of port 1 twice for a clock of two ports */
	FAKE_SLOW,     /* the first answer 50 ms late, the others at once */
};

static struct {
	int fd;
	enum fake_mode mode;
	char dir[64], path[96];
	pthread_t thread;
	unsigned requests;
	unsigned undelivered; /* answers whose asker's socket was gone */
} fake;

/* ptp4l's answer to a GET of id */
static const char *
captured(uint16_t id)
{
	switch (id) {
	case PC_PTP_DEFAULT_DATA_SET:
		return HEX_DDS;
	case PC_PTP_TIME_STATUS_NP:
		return HEX_TS;
	case PC_PTP_CURRENT_DATA_SET:
		return HEX_CDS;
	case PC_PTP_PARENT_DATA_SET:
		return HEX_PDS;
	default:
		return HEX_PORT;
	}
}

static size_t
fake_answer(const uint8_t *req, uint8_t *out)
{
	uint16_t id = pc_load_be16(req + 52);
	size_t n = unhex(captured(id), out, 256);

	/* to whoever asked, as the sequence it asked with */
	memcpy(out + 34, req + 20, 10);
	memcpy(out + 30, req + 30, 2);
	if (fake.mode == FAKE_REFUSE && id == PC_PTP_TIME_STATUS_NP) {
		n = unhex(HEX_NOSUCH, out, 256);
		memcpy(out + 34, req + 20, 10);
		memcpy(out + 30, req + 30, 2);
		pc_store_be16(out + 52, 0x0006);
		pc_store_be16(out + 54, id);
	}
	if (fake.mode == FAKE_TWICE && id == PC_PTP_DEFAULT_DATA_SET)
		pc_store_be16(out + 54 + 2, 2);
	if (fake.mode == FAKE_STRANGER && id == PC_PTP_PORT_DATA_SET)
		out[54] ^= 0xff;
	return n;
}

static void
fake_send(int fd, const uint8_t *buf, size_t n, const struct sockaddr_un *to, socklen_t tolen)
{
	if (sendto(fd, buf, n, 0, (const struct sockaddr *)to, tolen) != (ssize_t)n)
		fake.undelivered++;
}

static void *
fake_main(void *arg)
{
	uint8_t req[256], out[256];
	(void)arg;

	for (;;) {
		struct sockaddr_un from;
		socklen_t fromlen = sizeof(from);
		ssize_t n =
		    recvfrom(fake.fd, req, sizeof(req), 0, (struct sockaddr *)&from, &fromlen);
		if (n <= 0)
			return NULL;
		if (n == 1)
			return NULL; /* the test's stop */
		fake.requests++;
		if (fake.mode == FAKE_SILENT)
			continue;
		if (fake.mode == FAKE_SLOW && fake.requests == 1)
			nanosleep(&(struct timespec){ .tv_nsec = 50000000 }, NULL);
		uint16_t id = pc_load_be16(req + 52);
		size_t len = fake_answer(req, out);
		if (fake.mode == FAKE_LATE) {
			uint16_t seq = pc_load_be16(req + 30);
			pc_store_be16(out + 30, (uint16_t)(seq - 1));
			fake_send(fake.fd, out, len, &from, fromlen);
			pc_store_be16(out + 30, seq);
		}
		if (fake.mode == FAKE_GARBAGE && id == PC_PTP_PARENT_DATA_SET)
			memset(out + 48, 0xee, len - 48);
		fake_send(fake.fd, out, len, &from, fromlen);
		if (fake.mode == FAKE_TWICE && id == PC_PTP_PORT_DATA_SET)
			fake_send(fake.fd, out, len, &from, fromlen);
	}
}

static void
fake_start(enum fake_mode mode)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };

	snprintf(fake.dir, sizeof(fake.dir), "/tmp/podcap-ptp4l-XXXXXX");
	assert_non_null(mkdtemp(fake.dir));
	snprintf(fake.path, sizeof(fake.path), "%s/ptp4l", fake.dir);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", fake.path);
	fake.fd = socket(AF_UNIX, SOCK_DGRAM, 0);
	assert_true(fake.fd >= 0);
	assert_int_equal(bind(fake.fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	fake.mode = mode;
	fake.requests = 0;
	fake.undelivered = 0;
	assert_int_equal(pthread_create(&fake.thread, NULL, fake_main, NULL), 0);
}

static void
fake_stop(void)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_DGRAM, 0);

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", fake.path);
	assert_int_equal(sendto(fd, "x", 1, 0, (struct sockaddr *)&sa, sizeof(sa)), 1);
	close(fd);
	pthread_join(fake.thread, NULL);
	close(fake.fd);
	unlink(fake.path);
	assert_int_equal(rmdir(fake.dir), 0);
}

/* One poll of the fake with a client opened for it: the result, *r, err. */
static enum pc_clock_result
poll_fake(uint64_t timeout_ns, struct pc_clock_reading *r, struct pc_error *err, uint64_t *took)
{
	struct pc_ptp4l c;

	assert_int_equal(pc_ptp4l_open(&c, fake.path, 0, err), 0);
	/* the fake answers to the identity it was captured for */
	c.asker.self.port = 0x1234;
	uint64_t t0 = pc_mono_ns();
	enum pc_clock_result res = pc_ptp4l_poll(&c, timeout_ns, r, err);
	*took = pc_mono_ns() - t0;
	pc_ptp4l_close(&c);
	return res;
}

static void
test_client_reads(void **state)
{
	struct pc_clock_reading r;
	struct pc_error err = { .msg = "" };
	uint64_t took;
	(void)state;

	/* as ptp4l answers; and with a late answer to an earlier GET before each */
	static const enum fake_mode modes[] = { FAKE_ANSWER, FAKE_LATE };

	for (size_t m = 0; m < sizeof(modes) / sizeof(modes[0]); m++) {
		fake_start(modes[m]);
		assert_int_equal(poll_fake(250000000, &r, &err, &took), PC_CLOCK_OK);
		fake_stop();
		assert_int_equal(fake.requests, 5);
		assert_int_equal(r.offset, -361 * 65536);
		assert_int_equal(r.path_delay, 2554 * 65536);
		assert_int_equal(r.steps_removed, 1);
		assert_memory_equal(r.clock, CLOCK, 8);
		assert_memory_equal(r.gm, GM, 8);
		assert_true(r.gm_present);
		assert_int_equal(r.ingress_ns, 0x18ed4a64e4c9a695);
		assert_int_equal(r.nports, 1);
		assert_int_equal(r.port, 1);
		assert_int_equal(r.port_state, PC_PTP_UNCALIBRATED);
		assert_true(r.bounded);
		assert_int_equal(r.bound_ns, 361 + 2554);
		assert_true(r.read_ns > 0 && r.read_mono_ns > 0);
	}
}

/* Each failure in its class, with its reason, within the deadline. */
static void
test_client_failures(void **state)
{
	static const struct {
		enum fake_mode mode;
		enum pc_clock_result res;
		const char *why;
	} cases[] = {
		{ FAKE_SILENT, PC_CLOCK_TIMEOUT, "no answer in time" },
		{ FAKE_REFUSE, PC_CLOCK_REFUSED, "refused GET TIME_STATUS_NP: NOT_SUPPORTED" },
		{ FAKE_GARBAGE, PC_CLOCK_MALFORMED, "a TLV of 61166 bytes in the 34 left" },
		{ FAKE_STRANGER, PC_CLOCK_MALFORMED, "a port of clock 89a32e.fffe.87d8a2" },
		{ FAKE_TWICE, PC_CLOCK_MALFORMED, "port 1 twice" },
	};
	struct pc_clock_reading r;
	uint64_t took;
	(void)state;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct pc_error err = { .msg = "" };

		fake_start(cases[i].mode);
		assert_int_equal(poll_fake(100000000, &r, &err, &took), cases[i].res);
		fake_stop();
		if (strstr(err.msg, cases[i].why) == NULL)
			fail_msg("case %zu: \"%s\", expected \"%s\"", i, err.msg, cases[i].why);
		/* 100 ms and what a loaded machine adds: never a blocked poll */
		assert_true(took < 600000000);
		if (cases[i].mode == FAKE_SILENT)
			assert_true(took >= 100000000);
	}
}

static void
test_client_down(void **state)
{
	struct pc_clock_reading r;
	struct pc_error err = { .msg = "" };
	struct pc_ptp4l c;
	uint64_t took;
	(void)state;

	/* no socket at all */
	fake_start(FAKE_ANSWER);
	fake_stop();
	assert_int_equal(mkdir(fake.dir, 0700), 0);
	assert_int_equal(poll_fake(100000000, &r, &err, &took), PC_CLOCK_DOWN);
	assert_non_null(strstr(err.msg, "No such file"));
	assert_true(took < 50000000);
	/* a socket left behind by a ptp4l that is gone */
	int fd = socket(AF_UNIX, SOCK_DGRAM, 0);
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", fake.path);
	assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	close(fd);
	assert_int_equal(poll_fake(100000000, &r, &err, &took), PC_CLOCK_DOWN);
	assert_non_null(strstr(err.msg, "refused"));
	unlink(fake.path);
	assert_int_equal(rmdir(fake.dir), 0);

	/* paths that cannot be a unix socket's */
	char longpath[200];
	memset(longpath, 'a', sizeof(longpath) - 1);
	longpath[sizeof(longpath) - 1] = '\0';
	assert_int_equal(pc_ptp4l_open(&c, longpath, 0, &err), -1);
	assert_non_null(strstr(err.msg, "not a unix socket path"));
	assert_int_equal(pc_ptp4l_open(&c, "", 0, &err), -1);
	assert_int_equal(pc_ptp4l_open(&c, "/nonexistent-podcap-dir/ptp4l", 0, &err), -1);
	assert_non_null(strstr(err.msg, "binding /nonexistent-podcap-dir/podcap."));
}

/*
 * After a poll that failed the client asks from a new socket: the answer
 * ptp4l still owes the old one goes nowhere, instead of into a queue that
 * could fill and hold ptp4l's blocking send.
 */
static void
test_client_rebinds(void **state)
{
	struct pc_clock_reading r;
	struct pc_error err = { .msg = "" };
	struct pc_ptp4l c;
	(void)state;

	fake_start(FAKE_SLOW);
	assert_int_equal(pc_ptp4l_open(&c, fake.path, 0, &err), 0);
	c.asker.self.port = 0x1234;
	assert_int_equal(pc_ptp4l_poll(&c, 20000000, &r, &err), PC_CLOCK_TIMEOUT);
	assert_true(c.rebind);
	assert_int_equal(pc_ptp4l_poll(&c, 500000000, &r, &err), PC_CLOCK_OK);
	assert_false(c.rebind);
	pc_ptp4l_close(&c);
	fake_stop();
	assert_int_equal(fake.requests, 1 + 5);
	assert_int_equal(fake.undelivered, 1);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_encode_get),
		cmocka_unit_test(test_decode_ptp4l),
		cmocka_unit_test(test_decode_cut_and_extended),
		cmocka_unit_test(test_decode_header_refusals),
		cmocka_unit_test(test_decode_tlv_refusals),
		cmocka_unit_test(test_decode_value_refusals),
		cmocka_unit_test(test_decode_error_status),
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_bound_rule),
		cmocka_unit_test(test_bound_refused),
		cmocka_unit_test(test_bound_port_pick),
		cmocka_unit_test(test_window_cut),
		cmocka_unit_test(test_window_ring_overflow),
		cmocka_unit_test(test_window_worst_across_overflow),
		cmocka_unit_test(test_client_reads),
		cmocka_unit_test(test_client_failures),
		cmocka_unit_test(test_client_down),
		cmocka_unit_test(test_client_rebinds),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
