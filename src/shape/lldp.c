/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * LLDPDU parsing (lldp.h). The frame comes from whoever is on the wire:
 * every length is checked against what is left before it is used, and
 * nothing is copied that its bounded field cannot hold.
 */
#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>

#include "classify.h"
#include "lldp.h"

#define TLV_END         0
#define TLV_CHASSIS     1
#define TLV_PORT        2
#define TLV_TTL         3
#define TLV_PORT_DESC   4
#define TLV_SYSTEM_NAME 5
#define TLV_SYSTEM_DESC 6
#define TLV_HDR         2
#define MAC_LEN         6

/* The next TLV of pdu[*off..len): its type, and its value and length. */
static int
next_tlv(const uint8_t *pdu, size_t len, size_t *off, unsigned *type, const uint8_t **val,
	 size_t *vlen, struct pc_error *err)
{
	if (len - *off < TLV_HDR)
		return pc_error_set(err, "a TLV header cut short at byte %zu", *off);
	*type = pdu[*off] >> 1;
	*vlen = (size_t)(pdu[*off] & 1) << 8 | pdu[*off + 1];
	if (len - *off - TLV_HDR < *vlen)
		return pc_error_set(err, "a TLV of type %u at byte %zu: %zu bytes past the end",
				    *type, *off, *vlen - (len - *off - TLV_HDR));
	*val = pdu + *off + TLV_HDR;
	*off += TLV_HDR + *vlen;
	return 0;
}

/* A chassis or port id TLV's value: a subtype and 1..255 bytes. */
static int
read_id(const uint8_t *val, size_t vlen, bool is_port, struct pc_lldp_id *id, struct pc_error *err)
{
	const char *what = is_port ? "port id" : "chassis id";

	if (vlen < 2 || vlen > 1 + PC_LLDP_ID_MAX)
		return pc_error_set(err, "%s: %zu bytes, not a subtype and 1 to 255 bytes", what,
				    vlen);
	id->subtype = val[0];
	id->len = (uint8_t)(vlen - 1);
	memcpy(id->value, val + 1, id->len);
	if (id->subtype == (is_port ? PC_LLDP_PORT_MAC : PC_LLDP_CHASSIS_MAC) && id->len != MAC_LEN)
		return pc_error_set(err, "%s: a MAC address of %u bytes", what, id->len);
	return 0;
}

/* The three mandatory TLVs, first and in order (802.1AB 8.2). */
static int
read_mandatory(const uint8_t *pdu, size_t len, size_t *off, struct pc_lldp *out,
	       struct pc_error *err)
{
	static const char *const names[] = { "chassis id", "port id", "time to live" };
	const uint8_t *val;
	unsigned type;
	size_t vlen;

	for (unsigned want = TLV_CHASSIS; want <= TLV_TTL; want++) {
		if (*off == len)
			return pc_error_set(err, "no %s TLV", names[want - 1]);
		if (next_tlv(pdu, len, off, &type, &val, &vlen, err) != 0)
			return -1;
		if (type != want)
			return pc_error_set(err, "a TLV of type %u where the %s TLV must be", type,
					    names[want - 1]);
		if (want == TLV_TTL && vlen != 2)
			return pc_error_set(err, "time to live: %zu bytes, not 2", vlen);
		if (want == TLV_TTL)
			out->ttl = (uint16_t)(val[0] << 8 | val[1]);
		else if (read_id(val, vlen, want == TLV_PORT,
				 want == TLV_PORT ? &out->port : &out->chassis, err) != 0)
			return -1;
	}
	return 0;
}

/* One optional TLV; *end set at the End TLV. */
static int
read_optional(unsigned type, const uint8_t *val, size_t vlen, struct pc_lldp *out, bool *end,
	      struct pc_error *err)
{
	switch (type) {
	case TLV_END:
		if (vlen != 0)
			return pc_error_set(err, "an End TLV of %zu bytes", vlen);
		*end = true;
		return 0;
	case TLV_CHASSIS:
	case TLV_PORT:
	case TLV_TTL:
		return pc_error_set(err, "a second TLV of type %u", type);
	case TLV_SYSTEM_NAME:
		if (out->has_name)
			return pc_error_set(err, "a second system name TLV");
		if (vlen > PC_LLDP_NAME_MAX)
			return pc_error_set(err, "system name: %zu bytes, more than 255", vlen);
		out->has_name = true;
		out->name_len = (uint8_t)vlen;
		memcpy(out->name, val, vlen);
		return 0;
	default:
		/* other TLVs (descriptions, capabilities, organisation's) are not kept */
		return 0;
	}
}

int
pc_lldp_parse(const uint8_t *pdu, size_t len, struct pc_lldp *out, struct pc_error *err)
{
	size_t off = 0;
	bool end = false;

	memset(out, 0, sizeof(*out));
	if (read_mandatory(pdu, len, &off, out, err) != 0)
		return -1;
	while (!end && off < len) {
		const uint8_t *val;
		unsigned type;
		size_t vlen;

		if (next_tlv(pdu, len, &off, &type, &val, &vlen, err) != 0 ||
		    read_optional(type, val, vlen, out, &end, err) != 0)
			return -1;
	}
	return 0;
}

int
pc_lldp_parse_frame(const uint8_t *frame, size_t len, struct pc_lldp *out, struct pc_error *err)
{
	struct pc_frame_key key;

	if (len > UINT32_MAX || pc_classify(frame, (uint32_t)len, PC_DIR_UP, &key) != PC_CLASS_LLDP)
		return pc_error_set(err, "not an LLDP frame");
	if (pc_lldp_parse(frame + key.l3_offset, len - key.l3_offset, out, err) != 0)
		return pc_error_prefix(err, "LLDPDU");
	return 0;
}

const char *
pc_lldp_render_bytes(const uint8_t *b, size_t n, char *out)
{
	size_t o = 0;

	if (n > PC_LLDP_ID_MAX)
		n = PC_LLDP_ID_MAX;
	for (size_t i = 0; i < n; i++) {
		if (b[i] == '\\') {
			out[o++] = '\\';
			out[o++] = '\\';
		} else if (b[i] >= 0x20 && b[i] <= 0x7e) {
			out[o++] = (char)b[i];
		} else {
			snprintf(out + o, 5, "\\x%02x", b[i]);
			o += 4;
		}
	}
	out[o] = '\0';
	return out;
}

/* A network address id (IANA family, then the address): IPv4 and IPv6 as text. */
static bool
render_netaddr(const struct pc_lldp_id *id, char *out)
{
	if (id->len == 1 + 4 && id->value[0] == 1)
		return inet_ntop(AF_INET, id->value + 1, out, PC_LLDP_TEXT_LEN) != NULL;
	if (id->len == 1 + 16 && id->value[0] == 2)
		return inet_ntop(AF_INET6, id->value + 1, out, PC_LLDP_TEXT_LEN) != NULL;
	return false;
}

const char *
pc_lldp_render_id(const struct pc_lldp_id *id, bool is_port, char *out)
{
	uint8_t mac = is_port ? PC_LLDP_PORT_MAC : PC_LLDP_CHASSIS_MAC;
	uint8_t net = is_port ? PC_LLDP_PORT_NETADDR : PC_LLDP_CHASSIS_NETADDR;
	const uint8_t *v = id->value;

	if (id->subtype == mac && id->len == MAC_LEN) {
		snprintf(out, PC_LLDP_TEXT_LEN, "%02x:%02x:%02x:%02x:%02x:%02x", v[0], v[1], v[2],
			 v[3], v[4], v[5]);
		return out;
	}
	if (id->subtype == net && render_netaddr(id, out))
		return out;
	return pc_lldp_render_bytes(v, id->len, out);
}

static bool
same_id(const struct pc_lldp_id *a, const struct pc_lldp_id *b)
{
	return a->subtype == b->subtype && a->len == b->len &&
	    memcmp(a->value, b->value, a->len) == 0;
}

bool
pc_lldp_neighbor_heard(struct pc_lldp_neighbor *n, const struct pc_lldp *l, uint64_t mono_ns,
		       uint64_t real_ns)
{
	bool same = n->present && same_id(&n->lldp.chassis, &l->chassis) &&
	    same_id(&n->lldp.port, &l->port);
	if (l->ttl == 0) {
		/* a shutdown LLDPDU: that neighbour leaves; another's says nothing of ours */
		if (!same)
			return false;
		n->present = false;
		n->changes++;
		return true;
	}
	if (!same) {
		n->first_mono_ns = mono_ns;
		n->first_real_ns = real_ns;
		n->changes++;
	}
	n->present = true;
	n->lldp = *l;
	n->last_mono_ns = mono_ns;
	n->last_real_ns = real_ns;
	return !same;
}

bool
pc_lldp_neighbor_expire(struct pc_lldp_neighbor *n, uint64_t mono_ns)
{
	if (!n->present || mono_ns - n->last_mono_ns < (uint64_t)n->lldp.ttl * 1000000000ull)
		return false;
	n->present = false;
	n->changes++;
	return true;
}

void
pc_lldp_rate_init(struct pc_lldp_rate *r, uint32_t burst, uint64_t every_ns, uint64_t now_ns)
{
	r->burst = burst;
	r->every_ns = every_ns;
	r->tokens = burst;
	r->last_ns = now_ns;
}

bool
pc_lldp_rate_take(struct pc_lldp_rate *r, uint64_t now_ns)
{
	if (now_ns > r->last_ns && r->every_ns != 0) {
		uint64_t earned = (now_ns - r->last_ns) / r->every_ns;
		if (earned >= r->burst - r->tokens) {
			r->tokens = r->burst;
			r->last_ns = now_ns;
		} else {
			r->tokens += (uint32_t)earned;
			r->last_ns += earned * r->every_ns;
		}
	}
	if (r->tokens == 0)
		return false;
	r->tokens--;
	return true;
}

/* One TLV of type and n bytes at buf[*off], after the checks of pc_lldp_build_frame. */
static void
put_tlv(uint8_t *buf, size_t *off, unsigned type, const void *head, size_t nhead, const void *val,
	size_t n)
{
	size_t vlen = nhead + n;

	buf[*off] = (uint8_t)(type << 1 | (vlen >> 8 & 1));
	buf[*off + 1] = (uint8_t)(vlen & 0xff);
	*off += TLV_HDR;
	if (nhead > 0)
		memcpy(buf + *off, head, nhead);
	*off += nhead;
	if (n > 0)
		memcpy(buf + *off, val, n);
	*off += n;
}

static int
text_ok(const char *what, const char *s, size_t min, struct pc_error *err)
{
	size_t n = s == NULL ? 0 : strlen(s);

	if (n < min || n > PC_LLDP_NAME_MAX)
		return pc_error_set(err, "%s: %zu bytes, not %zu to 255", what, n, min);
	return 0;
}

int
pc_lldp_build_frame(const struct pc_lldp_announce *a, uint8_t *buf, size_t cap, size_t *len,
		    struct pc_error *err)
{
	static const uint8_t group[MAC_LEN] = { 0x01, 0x80, 0xc2, 0x00, 0x00, 0x0e };
	const uint8_t ttl[2] = { (uint8_t)(a->ttl >> 8), (uint8_t)a->ttl };
	const uint8_t sub_mac = PC_LLDP_CHASSIS_MAC, sub_ifname = PC_LLDP_PORT_IFNAME;
	const char *texts[] = { a->port_desc, a->system_name, a->system_desc };
	size_t off = 0;

	if (text_ok("port id", a->port_id, 1, err) != 0 ||
	    text_ok("port description", a->port_desc, 0, err) != 0 ||
	    text_ok("system name", a->system_name, 0, err) != 0 ||
	    text_ok("system description", a->system_desc, 0, err) != 0)
		return -1;
	size_t need =
	    14 + TLV_HDR + 1 + MAC_LEN + TLV_HDR + 1 + strlen(a->port_id) + TLV_HDR + 2 + TLV_HDR;
	for (unsigned i = 0; i < 3; i++)
		need += TLV_HDR + (texts[i] == NULL ? 0 : strlen(texts[i]));
	size_t framed = need < 60 ? 60 : need;
	if (cap < framed)
		return pc_error_set(err, "an LLDPDU of %zu bytes in %zu", framed, cap);
	memcpy(buf, group, MAC_LEN);
	memcpy(buf + MAC_LEN, a->src_mac, MAC_LEN);
	buf[12] = PC_LLDP_ETHERTYPE >> 8;
	buf[13] = PC_LLDP_ETHERTYPE & 0xff;
	off = 14;
	put_tlv(buf, &off, TLV_CHASSIS, &sub_mac, 1, a->chassis_mac, MAC_LEN);
	put_tlv(buf, &off, TLV_PORT, &sub_ifname, 1, a->port_id, strlen(a->port_id));
	put_tlv(buf, &off, TLV_TTL, NULL, 0, ttl, 2);
	put_tlv(buf, &off, TLV_PORT_DESC, NULL, 0, a->port_desc,
		a->port_desc == NULL ? 0 : strlen(a->port_desc));
	put_tlv(buf, &off, TLV_SYSTEM_NAME, NULL, 0, a->system_name,
		a->system_name == NULL ? 0 : strlen(a->system_name));
	put_tlv(buf, &off, TLV_SYSTEM_DESC, NULL, 0, a->system_desc,
		a->system_desc == NULL ? 0 : strlen(a->system_desc));
	put_tlv(buf, &off, TLV_END, NULL, 0, NULL, 0);
	/* the padding to Ethernet's shortest frame: after End, never read */
	memset(buf + off, 0, framed - off);
	*len = framed;
	return 0;
}
