/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target for what podcapd reads from ptp4l's management socket
 * (src/discipline/): whatever a process behind that socket sends. The
 * input is tried as each of:
 *
 *  - a datagram: it decodes, or is refused with a reason; what decodes
 *    holds only values the standard defines, and a refusal's text is
 *    printable;
 *  - the TLV of an answer behind a valid header (so that the fuzzer need
 *    not find the header first): the same;
 *  - a reading's offset, path delay, states and flags: the bound, when
 *    there is one, covers |offset| + |delay| and exceeds it by less than
 *    a ns;
 *  - polls and window cuts: every poll is taken by exactly one window,
 *    and a window's worst offset is at least every offset it took.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/bytes.h"
#include "discipline/ptp_mgmt.h"
#include "discipline/reading.h"
#include "discipline/window.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const struct pc_ptp_asker asker = { .self = { .port = 0x1234 }, .domain = 0 };

/* A RESPONSE's 48 bytes to asker, as ptp4l 3.1.1 sends them */
static const uint8_t header[48] = {
	0x0d, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x76, 0xa3, 0x2e, 0xff,
	0xfe, 0x87, 0xd8, 0xa2, 0x00, 0x00, 0x00, 0x02, 0x04, 0x7f, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x12, 0x34, 0x00, 0x00, 0x02, 0x00,
};

static void
check_answer(const uint8_t *buf, size_t len)
{
	struct pc_ptp_answer a;
	struct pc_error err;

	err.msg[0] = '\0';
	if (pc_ptp_decode(buf, len, &asker, &a, &err) != 0) {
		if (err.msg[0] == '\0')
			abort();
		return;
	}
	if (len != pc_load_be16(buf + 2) || len > PC_PTP_MSG_MAX)
		abort();
	if (a.refused) {
		for (const char *c = a.error_text; *c != '\0'; c++)
			if (*c < 0x20 || *c > 0x7e)
				abort();
		return;
	}
	if (a.id == PC_PTP_PORT_DATA_SET &&
	    (a.u.port.state == 0 || a.u.port.state > PC_PTP_STATE_MAX || a.u.port.port.port == 0))
		abort();
	if (a.id == PC_PTP_DEFAULT_DATA_SET && a.u.dds.nports == 0)
		abort();
	if (strcmp(pc_ptp_id_name(a.id), "an unknown management id") == 0)
		abort();
}

static void
check_tlv(const uint8_t *data, size_t size)
{
	uint8_t *buf;

	if (size + sizeof(header) > 0xffff)
		return;
	buf = malloc(size + sizeof(header));
	if (buf == NULL)
		abort();
	memcpy(buf, header, sizeof(header));
	memcpy(buf + sizeof(header), data, size);
	pc_store_be16(buf + 2, (uint16_t)(size + sizeof(header)));
	check_answer(buf, size + sizeof(header));
	free(buf);
}

static void
check_bound(const uint8_t *data, size_t size)
{
	struct pc_clock_reading r;

	if (size < 21)
		return;
	memset(&r, 0, sizeof(r));
	r.offset = (int64_t)pc_load_be64(data);
	r.path_delay = (int64_t)pc_load_be64(data + 8);
	r.gm_present = data[16] & 1;
	r.steps_removed = data[16] >> 1 & 3;
	r.ingress_ns = data[16] >> 3 & 1;
	r.nports = data[17] % (PC_CLOCK_MAX_PORTS + 1);
	for (unsigned p = 0; p < PC_CLOCK_MAX_PORTS; p++)
		r.port_states[p] = data[18 + p % 3] % (PC_PTP_STATE_MAX + 1);
	pc_clock_bound(&r);
	if (r.port < 1 || r.port > PC_CLOCK_MAX_PORTS)
		abort();
	if (!r.bounded)
		return;
	uint64_t a = pc_clock_magnitude(r.offset), b = pc_clock_magnitude(r.path_delay);
	if (!r.gm_present || r.steps_removed == 0 || r.path_delay == 0 ||
	    (r.port_state != PC_PTP_SLAVE && r.port_state != PC_PTP_UNCALIBRATED))
		abort();
	if (a <= UINT64_MAX - b) {
		/* covers the sum, by less than one ns */
		unsigned __int128 ns = (unsigned __int128)r.bound_ns << 16;
		if (ns < (unsigned __int128)(a + b) || ns >= (unsigned __int128)(a + b) + 65536)
			abort();
	} else if (r.bound_ns != (UINT64_MAX >> 16) + 1) {
		abort();
	}
}

/*
 * Each 3 bytes: a step of time, a result, an offset; a result byte of 0xff
 * cuts a window just after the last poll, so that it takes every poll not
 * taken yet.
 */
static void
check_windows(const uint8_t *data, size_t size)
{
	static struct pc_clock_acc acc;
	struct pc_clock_window w;
	uint64_t t = 0, added = 0, taken = 0, worst_since = 0;
	struct pc_clock_reading r;

	pc_clock_acc_init(&acc);
	memset(&r, 0, sizeof(r));
	for (size_t i = 0; i + 3 <= size; i += 3) {
		if (data[i + 1] == 0xff) {
			pc_clock_acc_take(&acc, t + 1, &w);
			if (w.polls != added - taken)
				abort();
			taken += w.polls;
			if (w.results[PC_CLOCK_OK] > 0 &&
			    pc_clock_magnitude(w.worst_offset) != worst_since)
				abort();
			worst_since = 0;
			continue;
		}
		t += data[i] + 1u;
		enum pc_clock_result res = (enum pc_clock_result)(data[i + 1] % PC_CLOCK_RESULTS);
		r.offset = (int8_t)data[i + 2];
		pc_clock_acc_add(&acc, t, res, &r);
		added++;
		if (res == PC_CLOCK_OK && pc_clock_magnitude(r.offset) > worst_since)
			worst_since = pc_clock_magnitude(r.offset);
	}
	pc_clock_acc_take(&acc, UINT64_MAX, &w);
	taken += w.polls;
	if (taken != added)
		abort();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	check_answer(data, size);
	check_tlv(data, size);
	check_bound(data, size);
	check_windows(data, size);
	return 0;
}
