/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * LINK records' ports from the links' snapshot (link_record.h).
 */
#include <stdio.h>
#include <string.h>

#include "link_record.h"

/*
 * When a change was read, on the wall clock of the snapshot: its monotonic
 * time moved by the snapshot's wall-minus-monotonic (shift). A wall clock
 * stepped between two changes (NTP, an operator's date) then moves neither
 * out of order nor out of the span, which is measured the same way back
 * from the snapshot's wall time.
 */
static uint64_t
at_wall(const struct pc_link_change *c, uint64_t shift)
{
	return c->mono_ns + shift;
}

static struct pc_record_link_change
recorded(const struct pc_link_change *c, uint64_t shift)
{
	return (struct pc_record_link_change){ .real_ns = at_wall(c, shift),
					       .up = c->up,
					       .full_duplex = c->full_duplex,
					       .speed_mbps = c->speed_mbps };
}

/* Change k (0 the first after the first reading), when the ring still holds it. */
static const struct pc_link_change *
change_at(const struct pc_link_state *s, uint64_t k)
{
	if (k >= s->changes || s->changes - k > PC_LINK_HISTORY)
		return NULL;
	return &s->history[k % PC_LINK_HISTORY];
}

/*
 * The state before change k: the change before it, or the first reading.
 * Past what the ring holds, the opposite of change k's up: the time down
 * is then an estimate, as it only can be after more than
 * PC_LINK_HISTORY changes in one span.
 */
static bool
up_before(const struct pc_link_state *s, uint64_t k)
{
	if (k == 0)
		return s->first.up;
	const struct pc_link_change *c = change_at(s, k - 1);
	return c != NULL ? c->up : !change_at(s, k)->up;
}

/*
 * The first change of the span from `from`: the changes after `counted`
 * (those the previous record had) from `from` on. Where the ring no
 * longer holds one, the changes since the previous record count as the
 * span's: spans follow each other.
 */
static uint64_t
first_in_span(const struct pc_link_state *s, uint64_t from, uint64_t counted, uint64_t shift)
{
	uint64_t k = s->changes;

	while (k > counted) {
		const struct pc_link_change *c = change_at(s, k - 1);
		if (c != NULL && at_wall(c, shift) < from)
			break;
		k--;
	}
	return k;
}

static void
fill_link(const struct pc_link_state *s, uint64_t from, uint64_t to, uint64_t counted,
	  uint64_t shift, struct pc_record_port *out)
{
	uint64_t k0 = first_in_span(s, from, counted, shift), span = to - from;
	uint64_t n = s->changes - k0, at = from, down = 0;
	/* the state as the span began: before its first change, or the state now */
	bool up = k0 < s->changes ? up_before(s, k0) : s->now.up;

	/* past the ring, the state before the oldest change it holds */
	if (k0 < s->changes && change_at(s, k0) == NULL)
		up = up_before(s, s->changes - PC_LINK_HISTORY);

	out->now = recorded(&s->now, shift);
	out->changes = n > UINT32_MAX ? UINT32_MAX : (uint32_t)n;
	out->nlisted = (uint8_t)(n < PC_LINK_CHANGES_MAX ? n : PC_LINK_CHANGES_MAX);
	for (uint64_t k = k0; k < s->changes; k++) {
		const struct pc_link_change *c = change_at(s, k);
		if (c == NULL)
			continue; /* out of the ring: counted, its time unknown */
		uint64_t w = at_wall(c, shift), t = w < at ? at : w > to ? to : w;
		if (!up)
			down += t - at;
		at = t;
		up = c->up;
		if (s->changes - k <= out->nlisted)
			out->listed[out->nlisted - (s->changes - k)] = recorded(c, shift);
	}
	if (!up)
		down += to - at;
	out->down_ns = down > span ? span : down;
}

static void
fill_neighbor(const struct pc_port_obs *o, uint64_t mono_ns, uint64_t shift,
	      struct pc_record_port *out)
{
	const struct pc_lldp_neighbor *n = &o->neighbor;
	uint64_t since = n->last_mono_ns != 0 ? n->last_mono_ns : o->link.first.mono_ns;

	/* on the snapshot's wall clock, as the changes are */
	out->heard_ns = n->last_mono_ns != 0 ? n->last_mono_ns + shift : n->last_real_ns;
	out->silent_ns = mono_ns > since ? mono_ns - since : 0;
	out->neighbor = n->present && n->last_real_ns != 0;
	if (!out->neighbor)
		return;
	out->ttl = n->lldp.ttl;
	out->chassis = n->lldp.chassis;
	out->port = n->lldp.port;
	out->has_name = n->lldp.has_name;
	out->name_len = n->lldp.has_name ? n->lldp.name_len : 0;
	memcpy(out->name, n->lldp.name, out->name_len);
}

void
pc_link_record_port(const struct pc_links_snapshot *s, unsigned u, unsigned d, uint64_t span_ns,
		    uint64_t counted, struct pc_record_port *out)
{
	const struct pc_port_obs *o = &s->port[u][d];
	uint64_t to = s->real_ns, from = span_ns < to ? to - span_ns : 0;

	memset(out, 0, sizeof(*out));
	snprintf(out->uplink, sizeof(out->uplink), "%s", s->uplink[u]);
	out->side = (uint8_t)d;
	fill_link(&o->link, from, to, counted, s->real_ns - s->mono_ns, out);
	fill_neighbor(o, s->mono_ns, s->real_ns - s->mono_ns, out);
}

int
pc_link_record_fill(struct pc_record_linkstate *l, uint8_t kind, uint64_t span_ns,
		    struct pc_record_port *ports)
{
	static struct pc_links_snapshot snap; /* a few hundred KiB: not on the stack */
	/* each port's changes up to the previous record: control thread only */
	static uint64_t counted[PC_MAX_UPLINKS][PC_DIR_COUNT];

	if (pc_links_snapshot(&snap) != 0 || snap.nuplinks == 0)
		return -1;
	memset(l, 0, sizeof(*l));
	l->kind = kind;
	l->span_ns = span_ns;
	for (unsigned u = 0; u < snap.nuplinks; u++)
		for (unsigned d = 0; d < PC_DIR_COUNT; d++) {
			uint64_t *c = &counted[u][d];
			/* a START or RELOAD's span is 0: what came before is no record's */
			if (kind != PC_LINK_WINDOW || *c > snap.port[u][d].link.changes)
				*c = snap.port[u][d].link.changes;
			pc_link_record_port(&snap, u, d, span_ns, *c, &ports[l->nports++]);
			*c = snap.port[u][d].link.changes;
		}
	l->ports = ports;
	return 0;
}
