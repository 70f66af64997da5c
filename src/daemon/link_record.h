/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A LINK record's own fields (docs/log-format.md, "LINK") from what
 * links.h observed: each port's link now, its changes and time down over
 * the span of real time just ended, and the LLDP neighbour it faces. The
 * recorder writes one at a START, at a RELOAD and after each WINDOW; it
 * reads the links' snapshot then, never per frame.
 */
#ifndef PODCAPD_LINK_RECORD_H
#define PODCAPD_LINK_RECORD_H

#include <stdint.h>

#include "log/record.h"

#include "links.h"

/*
 * Port (u, d) of a snapshot taken at s->real_ns, over the span_ns of real
 * time before it: its changes within the span (none of the first
 * `counted`, the previous record's), the last PC_LINK_CHANGES_MAX of
 * them listed, and the time it was down. Pure: the state is only read.
 */
void pc_link_record_port(const struct pc_links_snapshot *s, unsigned u, unsigned d,
			 uint64_t span_ns, uint64_t counted, struct pc_record_port *out);

/*
 * l filled from a snapshot of the links taken now, its ports in the
 * static array ports (PC_LINK_PORTS_MAX). -1 when the links are not
 * observed (no ports started): then no LINK is written.
 */
int pc_link_record_fill(struct pc_record_linkstate *l, uint8_t kind, uint64_t span_ns,
			struct pc_record_port *ports);

#endif /* PODCAPD_LINK_RECORD_H */
