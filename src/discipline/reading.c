/* SPDX-License-Identifier: BSD-3-Clause */
#include "ptp_mgmt.h"
#include "reading.h"

static const char *const result_names[PC_CLOCK_RESULTS] = {
	"ok", "down", "timeout", "malformed", "refused", "error",
};

const char *
pc_clock_result_name(enum pc_clock_result res)
{
	return (unsigned)res < PC_CLOCK_RESULTS ? result_names[res] : "unknown";
}

static bool
follows_master(uint8_t state)
{
	return state == PC_PTP_SLAVE || state == PC_PTP_UNCALIBRATED;
}

static void
pick_port(struct pc_clock_reading *r)
{
	unsigned pick = 0;

	for (unsigned i = 0; i < r->nports && i < PC_CLOCK_MAX_PORTS; i++) {
		if (r->port_states[i] == PC_PTP_SLAVE) {
			pick = i;
			break;
		}
		if (r->port_states[i] == PC_PTP_UNCALIBRATED &&
		    !follows_master(r->port_states[pick]))
			pick = i;
	}
	r->port = (uint16_t)(pick + 1);
	r->port_state = r->nports > 0 ? r->port_states[pick] : 0;
}

void
pc_clock_bound(struct pc_clock_reading *r)
{
	pick_port(r);
	r->bounded = false;
	r->bound_ns = 0;
	/* no delay measured yet: ptp4l has not computed an offset either, 0 is no reading */
	if (!r->gm_present || !follows_master(r->port_state) || r->steps_removed == 0 ||
	    r->ingress_ns == 0 || r->path_delay == 0)
		return;
	uint64_t a = pc_clock_magnitude(r->offset), b = pc_clock_magnitude(r->path_delay);
	/* in 2^-16 ns, saturating: two magnitudes of 2^63 do not fit */
	uint64_t sum = a > UINT64_MAX - b ? UINT64_MAX : a + b;
	r->bound_ns = (sum >> 16) + ((sum & 0xffff) != 0);
	r->bounded = true;
}
