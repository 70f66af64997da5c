/* SPDX-License-Identifier: BSD-3-Clause */
#include <stdio.h>
#include <string.h>

#include "base/bytes.h"

#include "ptp_mgmt.h"

/*
 * The common header (IEEE 1588 13.3, 34 bytes) and the management fields
 * (15.4.1: targetPortIdentity, the boundary hops, the action): 48 bytes,
 * then the TLV.
 */
#define OFF_TSMT     0
#define OFF_VERSION  1
#define OFF_LENGTH   2
#define OFF_DOMAIN   4
#define OFF_SOURCE   20
#define OFF_SEQ      30
#define OFF_CONTROL  32
#define OFF_INTERVAL 33
#define OFF_TARGET   34
#define OFF_ACTION   46
#define OFF_TLV      48
#define TLV_HDR      4

#define MSG_MANAGEMENT 0xD
#define PTP_VERSION    2
#define CTL_MANAGEMENT 4
#define ACTION_GET     0
#define ACTION_RESP    2

#define TLV_MANAGEMENT   0x0001
#define TLV_ERROR_STATUS 0x0002

static void
load_port_id(const uint8_t *p, struct pc_ptp_port_id *id)
{
	memcpy(id->clock, p, 8);
	id->port = pc_load_be16(p + 8);
}

static void
store_port_id(uint8_t *p, const struct pc_ptp_port_id *id)
{
	memcpy(p, id->clock, 8);
	pc_store_be16(p + 8, id->port);
}

size_t
pc_ptp_encode_get(const struct pc_ptp_asker *a, uint16_t id, uint16_t seq, uint8_t *buf, size_t cap)
{
	if (cap < PC_PTP_GET_LEN)
		return 0;
	memset(buf, 0, PC_PTP_GET_LEN);
	buf[OFF_TSMT] = MSG_MANAGEMENT;
	buf[OFF_VERSION] = PTP_VERSION;
	pc_store_be16(buf + OFF_LENGTH, PC_PTP_GET_LEN);
	buf[OFF_DOMAIN] = a->domain;
	store_port_id(buf + OFF_SOURCE, &a->self);
	pc_store_be16(buf + OFF_SEQ, seq);
	buf[OFF_CONTROL] = CTL_MANAGEMENT;
	buf[OFF_INTERVAL] = 0x7f;
	/* every clock and every port of it; no boundary clock passes it on */
	memset(buf + OFF_TARGET, 0xff, 10);
	buf[OFF_ACTION] = ACTION_GET;
	/* a GET's data field is empty (IEEE 1588-2019 15.4.1.6); ptp4l takes it so */
	pc_store_be16(buf + OFF_TLV, TLV_MANAGEMENT);
	pc_store_be16(buf + OFF_TLV + 2, 2);
	pc_store_be16(buf + OFF_TLV + 4, id);
	return PC_PTP_GET_LEN;
}

static void
decode_dds(const uint8_t *d, struct pc_ptp_default_ds *o)
{
	o->two_step = d[0] & 1;
	o->slave_only = (d[0] >> 1) & 1;
	o->nports = pc_load_be16(d + 2);
	memcpy(o->clock, d + 10, 8);
	o->domain = d[18];
}

static void
decode_cds(const uint8_t *d, struct pc_ptp_current_ds *o)
{
	o->steps_removed = pc_load_be16(d);
	o->offset = (int64_t)pc_load_be64(d + 2);
	o->path_delay = (int64_t)pc_load_be64(d + 10);
}

static void
decode_pds(const uint8_t *d, struct pc_ptp_parent_ds *o)
{
	load_port_id(d, &o->parent);
	o->gm_priority1 = d[18];
	o->gm_class = d[19];
	o->gm_accuracy = d[20];
	o->gm_variance = pc_load_be16(d + 21);
	o->gm_priority2 = d[23];
	memcpy(o->gm, d + 24, 8);
}

static void
decode_port(const uint8_t *d, struct pc_ptp_port_ds *o)
{
	load_port_id(d, &o->port);
	o->state = d[10];
	o->peer_path_delay = (int64_t)pc_load_be64(d + 12);
	o->log_sync_interval = (int8_t)d[22];
	o->delay_mechanism = d[23];
}

static void
decode_ts(const uint8_t *d, struct pc_ptp_time_status *o)
{
	o->master_offset_ns = (int64_t)pc_load_be64(d);
	o->ingress_ns = (int64_t)pc_load_be64(d + 8);
	/* rate offsets, the time base indicator and the last phase change are not read */
	o->gm_present = pc_load_be32(d + 38) != 0;
	memcpy(o->gm, d + 42, 8);
}

/* The data field's length of each id podcap reads (IEEE 1588 15.5.3; linuxptp's tlv.h). */
static const struct {
	uint16_t id;
	uint16_t len;
	const char *name;
} ids[] = {
	{ PC_PTP_DEFAULT_DATA_SET, 20, "DEFAULT_DATA_SET" },
	{ PC_PTP_CURRENT_DATA_SET, 18, "CURRENT_DATA_SET" },
	{ PC_PTP_PARENT_DATA_SET, 32, "PARENT_DATA_SET" },
	{ PC_PTP_PORT_DATA_SET, 26, "PORT_DATA_SET" },
	{ PC_PTP_TIME_STATUS_NP, 50, "TIME_STATUS_NP" },
};

static int
find_id(uint16_t id)
{
	for (unsigned i = 0; i < sizeof(ids) / sizeof(ids[0]); i++)
		if (ids[i].id == id)
			return (int)i;
	return -1;
}

const char *
pc_ptp_id_name(uint16_t id)
{
	int i = find_id(id);

	return i < 0 ? "an unknown management id" : ids[i].name;
}

const char *
pc_ptp_error_name(uint16_t error)
{
	switch (error) {
	case 0x0001:
		return "RESPONSE_TOO_BIG";
	case 0x0002:
		return "NO_SUCH_ID";
	case 0x0003:
		return "WRONG_LENGTH";
	case 0x0004:
		return "WRONG_VALUE";
	case 0x0005:
		return "NOT_SETABLE";
	case 0x0006:
		return "NOT_SUPPORTED";
	case 0xFFFE:
		return "GENERAL_ERROR";
	default:
		return "an unknown error";
	}
}

const char *
pc_ptp_state_name(uint8_t state)
{
	static const char *const names[PC_PTP_STATE_MAX + 1] = {
		"(none)", "INITIALIZING", "FAULTY",       "DISABLED", "LISTENING",    "PRE_MASTER",
		"MASTER", "PASSIVE",      "UNCALIBRATED", "SLAVE",    "GRAND_MASTER",
	};

	return state <= PC_PTP_STATE_MAX ? names[state] : "(invalid)";
}

const char *
pc_ptp_identity_text(const uint8_t c[8], char *out)
{
	snprintf(out, PC_PTP_ID_TEXT, "%02x%02x%02x.%02x%02x.%02x%02x%02x", c[0], c[1], c[2], c[3],
		 c[4], c[5], c[6], c[7]);
	return out;
}

/* The common header and the management fields: a RESPONSE to a, of length len. */
static int
check_header(const uint8_t *b, size_t len, const struct pc_ptp_asker *a, struct pc_error *err)
{
	struct pc_ptp_port_id target;

	if (len < OFF_TLV + TLV_HDR)
		return pc_error_set(err, "%zu bytes, shorter than a management message", len);
	if (len > PC_PTP_MSG_MAX)
		return pc_error_set(err, "%zu bytes, longer than any answer read (%d)", len,
				    PC_PTP_MSG_MAX);
	if ((b[OFF_TSMT] & 0x0f) != MSG_MANAGEMENT)
		return pc_error_set(err, "message type %u, not management", b[OFF_TSMT] & 0x0f);
	/* the high nibble is 1588-2019's minor version: 2.0 and 2.1 read alike here */
	if ((b[OFF_VERSION] & 0x0f) != PTP_VERSION)
		return pc_error_set(err, "PTP version %u, not 2", b[OFF_VERSION] & 0x0f);
	if (pc_load_be16(b + OFF_LENGTH) != len)
		return pc_error_set(err, "messageLength %u in a datagram of %zu bytes",
				    pc_load_be16(b + OFF_LENGTH), len);
	if (b[OFF_DOMAIN] != a->domain)
		return pc_error_set(err, "domain %u, asked in domain %u", b[OFF_DOMAIN], a->domain);
	if ((b[OFF_ACTION] & 0x0f) != ACTION_RESP)
		return pc_error_set(err, "action %u, not RESPONSE", b[OFF_ACTION] & 0x0f);
	load_port_id(b + OFF_TARGET, &target);
	if (memcmp(target.clock, a->self.clock, 8) != 0 || target.port != a->self.port)
		return pc_error_set(
		    err, "addressed to port %u of another identity, not to podcap's", target.port);
	return 0;
}

/* MANAGEMENT_ERROR_STATUS (15.5.4): errorId, managementId, reserved, optional displayData. */
static int
decode_refusal(const uint8_t *v, size_t vlen, struct pc_ptp_answer *out, struct pc_error *err)
{
	if (vlen < 8)
		return pc_error_set(err, "MANAGEMENT_ERROR_STATUS of %zu bytes, shorter than 8",
				    vlen);
	out->refused = true;
	out->error = pc_load_be16(v);
	out->id = pc_load_be16(v + 2);
	if (vlen == 8)
		return 0;
	/* a PTPText: a length, that many bytes, a pad byte to an even length */
	size_t n = v[8];
	if (9 + n > vlen || vlen - (9 + n) > 1)
		return pc_error_set(err, "MANAGEMENT_ERROR_STATUS's text of %zu bytes in %zu", n,
				    vlen - 8);
	size_t keep = n < sizeof(out->error_text) ? n : sizeof(out->error_text) - 1;
	for (size_t i = 0; i < keep; i++)
		out->error_text[i] = v[9 + i] >= 0x20 && v[9 + i] < 0x7f ? (char)v[9 + i] : '?';
	out->error_text[keep] = '\0';
	return 0;
}

/* What the standard leaves no room for in a data set podcap reads. */
static int
check_values(const struct pc_ptp_answer *o, struct pc_error *err)
{
	switch (o->id) {
	case PC_PTP_DEFAULT_DATA_SET:
		if (o->u.dds.nports == 0)
			return pc_error_set(err, "DEFAULT_DATA_SET of a clock with no port");
		return 0;
	case PC_PTP_PORT_DATA_SET:
		if (o->u.port.state == 0 || o->u.port.state > PC_PTP_STATE_MAX)
			return pc_error_set(err, "PORT_DATA_SET with portState %u",
					    o->u.port.state);
		if (o->u.port.port.port == 0 || o->u.port.port.port == 0xffff)
			return pc_error_set(err, "PORT_DATA_SET of port number %u",
					    o->u.port.port.port);
		return 0;
	default:
		return 0;
	}
}

static int
decode_data(const uint8_t *d, size_t dlen, struct pc_ptp_answer *o, struct pc_error *err)
{
	int i = find_id(o->id);

	if (i < 0)
		return pc_error_set(
		    err, "an answer for management id 0x%04x, which podcap never asks for", o->id);
	if (dlen != ids[i].len)
		return pc_error_set(err, "%s of %zu bytes, not %u", ids[i].name, dlen, ids[i].len);
	switch (o->id) {
	case PC_PTP_DEFAULT_DATA_SET:
		decode_dds(d, &o->u.dds);
		break;
	case PC_PTP_CURRENT_DATA_SET:
		decode_cds(d, &o->u.cds);
		break;
	case PC_PTP_PARENT_DATA_SET:
		decode_pds(d, &o->u.pds);
		break;
	case PC_PTP_PORT_DATA_SET:
		decode_port(d, &o->u.port);
		break;
	case PC_PTP_TIME_STATUS_NP:
		if (pc_load_be32(d + 38) > 1)
			return pc_error_set(err, "TIME_STATUS_NP with gmPresent %u",
					    pc_load_be32(d + 38));
		decode_ts(d, &o->u.ts);
		break;
	}
	return check_values(o, err);
}

int
pc_ptp_decode(const uint8_t *buf, size_t len, const struct pc_ptp_asker *a,
	      struct pc_ptp_answer *out, struct pc_error *err)
{
	memset(out, 0, sizeof(*out));
	if (check_header(buf, len, a, err) != 0)
		return -1;
	out->seq = pc_load_be16(buf + OFF_SEQ);
	load_port_id(buf + OFF_SOURCE, &out->source);

	uint16_t type = pc_load_be16(buf + OFF_TLV);
	size_t vlen = pc_load_be16(buf + OFF_TLV + 2);
	const uint8_t *v = buf + OFF_TLV + TLV_HDR;
	/* one TLV, filling the message: no second one, no trailing bytes */
	if (OFF_TLV + TLV_HDR + vlen != len)
		return pc_error_set(err, "a TLV of %zu bytes in the %zu left", vlen,
				    len - OFF_TLV - TLV_HDR);
	if (type == TLV_ERROR_STATUS)
		return decode_refusal(v, vlen, out, err);
	if (type != TLV_MANAGEMENT)
		return pc_error_set(err, "TLV type 0x%04x, not a management TLV", type);
	if (vlen < 2)
		return pc_error_set(err, "a management TLV of %zu bytes, without its id", vlen);
	out->id = pc_load_be16(v);
	return decode_data(v + 2, vlen - 2, out, err);
}
