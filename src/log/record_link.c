/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A LINK record's own fields after its links (docs/log-format.md, "LINK"):
 * its kind and span, then per port of the appliance its uplink and side,
 * the link now, the time it was down in the span, its changes, and the
 * LLDP neighbour it faces. Decoding refuses what no reading of a port can
 * give: a down link with a speed, more down time than span, changes out
 * of order or not ending in the state now, and ids LLDP does not allow.
 */
#include <stdlib.h>

#include "record_impl.h"

/* A change: real_ns, up, full_duplex, speed. */
#define CHANGE_BYTES (8 + 1 + 1 + 4)
/* A port without its name's characters, its changes and its neighbour. */
#define PORT_FIXED_BYTES (1 + 1 + CHANGE_BYTES + 8 + 4 + 1 + 1 + 8 + 8)
#define PORT_MIN_BYTES   (PORT_FIXED_BYTES + 1)
/* A neighbour's fields: ttl, the ids' subtype and length, has_name and name_len. */
#define NEIGHBOR_FIXED_BYTES (2 + 2 + 2 + 1 + 1)

static size_t
port_size(const struct pc_record_port *p)
{
	size_t n = PORT_FIXED_BYTES + strnlen(p->uplink, PC_ID_LEN) + p->nlisted * CHANGE_BYTES;

	if (p->neighbor)
		n += NEIGHBOR_FIXED_BYTES + p->chassis.len + p->port.len + p->name_len;
	return n;
}

static size_t
link_size(const struct pc_record *r)
{
	const struct pc_record_linkstate *l = &r->linkstate;
	size_t n = 1 + 8 + 4;

	for (uint32_t i = 0; i < l->nports; i++)
		n += port_size(&l->ports[i]);
	return n;
}

static void
put_change(struct rec_wr *w, const struct pc_record_link_change *c)
{
	rec_put_u64(w, c->real_ns);
	rec_put_u8(w, c->up);
	rec_put_u8(w, c->full_duplex);
	rec_put_u32(w, c->speed_mbps);
}

static void
put_id(struct rec_wr *w, const struct pc_lldp_id *id)
{
	rec_put_u8(w, id->subtype);
	rec_put_u8(w, id->len);
	rec_put_bytes(w, id->value, id->len);
}

static void
put_port(struct rec_wr *w, const struct pc_record_port *p)
{
	rec_put_str(w, p->uplink);
	rec_put_u8(w, p->side);
	put_change(w, &p->now);
	rec_put_u64(w, p->down_ns);
	rec_put_u32(w, p->changes);
	rec_put_u8(w, p->nlisted);
	for (unsigned k = 0; k < p->nlisted; k++)
		put_change(w, &p->listed[k]);
	rec_put_u8(w, p->neighbor);
	rec_put_u64(w, p->heard_ns);
	rec_put_u64(w, p->silent_ns);
	if (!p->neighbor)
		return;
	pc_store_be16(w->p + w->off, p->ttl);
	w->off += 2;
	put_id(w, &p->chassis);
	put_id(w, &p->port);
	rec_put_u8(w, p->has_name);
	rec_put_u8(w, p->name_len);
	rec_put_bytes(w, p->name, p->name_len);
}

static void
link_put(struct rec_wr *w, const struct pc_record *r)
{
	const struct pc_record_linkstate *l = &r->linkstate;

	rec_put_u8(w, l->kind);
	rec_put_u64(w, l->span_ns);
	rec_put_u32(w, l->nports);
	for (uint32_t i = 0; i < l->nports; i++)
		put_port(w, &l->ports[i]);
}

static void
get_change(struct rec_rd *rd, struct pc_record_link_change *c)
{
	c->real_ns = rec_get_u64(rd);
	c->up = rec_get_u8(rd);
	c->full_duplex = rec_get_u8(rd);
	c->speed_mbps = rec_get_u32(rd);
}

/* Lengths are checked before any bytes are read, so a hostile one reads nothing. */
static void
get_id(struct rec_rd *rd, struct pc_lldp_id *id)
{
	id->subtype = rec_get_u8(rd);
	id->len = rec_get_u8(rd);
	rec_get_bytes(rd, id->value, id->len);
}

static void
get_port(struct rec_rd *rd, struct pc_record_port *p)
{
	rec_get_str(rd, p->uplink, "uplink name is not [A-Za-z0-9._-]{1,63}");
	p->side = rec_get_u8(rd);
	get_change(rd, &p->now);
	p->down_ns = rec_get_u64(rd);
	p->changes = rec_get_u32(rd);
	p->nlisted = rec_get_u8(rd);
	if (p->nlisted > PC_LINK_CHANGES_MAX && rd->why == NULL)
		rd->why = "more link changes listed than PC_LINK_CHANGES_MAX";
	for (unsigned k = 0; k < p->nlisted && rd->why == NULL; k++)
		get_change(rd, &p->listed[k]);
	p->neighbor = rec_get_u8(rd);
	p->heard_ns = rec_get_u64(rd);
	p->silent_ns = rec_get_u64(rd);
	if (p->neighbor != 1)
		return;
	uint8_t hi = rec_get_u8(rd), lo = rec_get_u8(rd);
	p->ttl = (uint16_t)(hi << 8 | lo);
	get_id(rd, &p->chassis);
	get_id(rd, &p->port);
	p->has_name = rec_get_u8(rd);
	p->name_len = rec_get_u8(rd);
	rec_get_bytes(rd, p->name, p->name_len);
}

static void
link_get(struct rec_rd *rd, struct pc_record *r)
{
	struct pc_record_linkstate *l = &r->linkstate;

	l->kind = rec_get_u8(rd);
	l->span_ns = rec_get_u64(rd);
	l->ports =
	    rec_get_array(rd, &l->nports, PC_LINK_PORTS_MAX, "more ports than PC_LINK_PORTS_MAX",
			  PORT_MIN_BYTES, sizeof(*l->ports));
	for (uint32_t i = 0; l->ports != NULL && i < l->nports && rd->why == NULL; i++)
		get_port(rd, &l->ports[i]);
}

/* A reading of a link: up or down, and a down link has no speed or duplex. */
static int
change_check(const struct pc_record_link_change *c, struct pc_error *err)
{
	if (c->up > 1 || c->full_duplex > 1)
		return pc_error_set(err, "link state other than 0 or 1");
	if (!c->up && (c->full_duplex || c->speed_mbps != 0))
		return pc_error_set(err, "a link down with a speed or duplex");
	return 0;
}

static bool
same_state(const struct pc_record_link_change *a, const struct pc_record_link_change *b)
{
	return a->up == b->up && a->full_duplex == b->full_duplex && a->speed_mbps == b->speed_mbps;
}

/* The changes of a port: in time order, each a change, the last the state now. */
static int
changes_check(const struct pc_record_port *p, uint64_t span_ns, struct pc_error *err)
{
	unsigned want = p->changes < PC_LINK_CHANGES_MAX ? p->changes : PC_LINK_CHANGES_MAX;

	if (p->nlisted != want)
		return pc_error_set(err, "link changes listed are not the last of the span's");
	for (unsigned k = 0; k < p->nlisted; k++) {
		if (change_check(&p->listed[k], err) < 0)
			return -1;
		if (k > 0 &&
		    (p->listed[k].real_ns < p->listed[k - 1].real_ns ||
		     same_state(&p->listed[k], &p->listed[k - 1])))
			return pc_error_set(err, "link changes out of order or not changes");
	}
	if (p->nlisted > 0 && !same_state(&p->listed[p->nlisted - 1], &p->now))
		return pc_error_set(err, "the last link change is not the state now");
	if (p->down_ns > span_ns)
		return pc_error_set(err, "a link down longer than the record's span");
	/* without a change the link was as it is now the whole span */
	if (p->changes == 0 && p->down_ns != (p->now.up ? 0 : span_ns))
		return pc_error_set(err, "link down time other than the span's without a change");
	return 0;
}

static int
neighbor_check(const struct pc_record_port *p, struct pc_error *err)
{
	if (p->neighbor > 1)
		return pc_error_set(err, "neighbour flag other than 0 or 1");
	if (!p->neighbor)
		return 0;
	if (p->chassis.len == 0 || p->port.len == 0)
		return pc_error_set(err, "an LLDP chassis or port id of 0 bytes");
	if (p->has_name > 1 || (!p->has_name && p->name_len != 0))
		return pc_error_set(err,
				    "a system name flag other than 0 or 1, or a name without it");
	if (p->heard_ns == 0)
		return pc_error_set(err, "a neighbour never heard");
	return 0;
}

static int
port_check(const struct pc_record_port *p, uint64_t span_ns, struct pc_error *err)
{
	if (!pc_id_valid(p->uplink))
		return pc_error_set(err, "uplink name is not [A-Za-z0-9._-]{1,63}");
	if (p->side >= PC_DIR_COUNT)
		return pc_error_set(err, "port side other than pod or fabric");
	if (change_check(&p->now, err) < 0 || changes_check(p, span_ns, err) < 0)
		return -1;
	return neighbor_check(p, err);
}

static int
kind_check(const struct pc_record_linkstate *l, uint64_t window_len_ns, struct pc_error *err)
{
	if (l->kind != PC_LINK_AT_START && l->kind != PC_LINK_AT_RELOAD &&
	    l->kind != PC_LINK_WINDOW)
		return pc_error_set(err, "link record of an unknown kind");
	if ((l->kind == PC_LINK_WINDOW) != (l->span_ns != 0))
		return pc_error_set(err, "link record whose span does not fit its kind");
	if (l->span_ns % window_len_ns != 0)
		return pc_error_set(err, "link record's span is not whole windows");
	return 0;
}

static int
link_check(const struct pc_record *r, struct pc_error *err)
{
	const struct pc_record_linkstate *l = &r->linkstate;

	if (kind_check(l, r->window_len_ns, err) < 0)
		return -1;
	if (l->nports > PC_LINK_PORTS_MAX)
		return pc_error_set(err, "more ports than PC_LINK_PORTS_MAX");
	if (l->nports > 0 && l->ports == NULL)
		return pc_error_set(err, "missing port array");
	for (uint32_t i = 0; i < l->nports; i++) {
		if (port_check(&l->ports[i], l->span_ns, err) < 0)
			return -1;
		for (uint32_t j = 0; j < i; j++)
			if (l->ports[j].side == l->ports[i].side &&
			    strcmp(l->ports[j].uplink, l->ports[i].uplink) == 0)
				return pc_error_set(err, "a port listed twice in a link record");
	}
	return 0;
}

static void
link_free(struct pc_record *r)
{
	free(r->linkstate.ports);
	r->linkstate.ports = NULL;
	r->linkstate.nports = 0;
}

const struct rec_tail rec_link_tail = {
	.size = link_size,
	.put = link_put,
	.get = link_get,
	.check = link_check,
	.free = link_free,
};
