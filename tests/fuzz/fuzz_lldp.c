/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target for the LLDP parser (src/shape/lldp.h): any bytes as a
 * frame. tools/fuzz lldp SECONDS runs it; the unit suite replays
 * tests/fuzz/lldp/.
 *
 * Besides memory errors under the sanitizers, it aborts where a result
 * breaks lldp.h's contract: ids of 1..255 bytes, a MAC subtype of 6, a
 * rendering that is printable and within PC_LLDP_TEXT_LEN, a refusal with
 * no reason, and a neighbour that is not the one just heard.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "shape/lldp.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
check_text(const char *s)
{
	size_t n = strlen(s);

	if (n >= PC_LLDP_TEXT_LEN)
		abort();
	for (size_t i = 0; i < n; i++)
		if (s[i] < 0x20 || s[i] > 0x7e)
			abort();
}

static void
check_id(const struct pc_lldp_id *id, bool is_port)
{
	char text[PC_LLDP_TEXT_LEN];

	if (id->len < 1)
		abort();
	if (id->subtype == (is_port ? PC_LLDP_PORT_MAC : PC_LLDP_CHASSIS_MAC) && id->len != 6)
		abort();
	check_text(pc_lldp_render_id(id, is_port, text));
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pc_lldp l;
	struct pc_error err;
	char text[PC_LLDP_TEXT_LEN];

	err.msg[0] = '\0';
	if (pc_lldp_parse_frame(data, size, &l, &err) != 0) {
		if (err.msg[0] == '\0')
			abort();
		return 0;
	}
	check_id(&l.chassis, false);
	check_id(&l.port, true);
	if (!l.has_name && l.name_len != 0)
		abort();
	check_text(pc_lldp_render_bytes(l.name, l.name_len, text));

	struct pc_lldp_neighbor n;
	memset(&n, 0, sizeof(n));
	bool changed = pc_lldp_neighbor_heard(&n, &l, 1, 1);
	if (changed != (l.ttl != 0) || n.present != (l.ttl != 0))
		abort();
	return 0;
}
