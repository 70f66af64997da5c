/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * One poll of a ptp4l socket with podcapd's client (src/discipline/ptp4l.h),
 * printed as "key value" lines for test_ptp.py to hold against what
 * `pmc -u` prints for the same socket:
 *
 *   ptp4l_probe SOCKET [DOMAIN]
 *
 * Exit 0 after a reading, 1 with "result NAME" and the reason otherwise.
 */
#include <stdio.h>
#include <stdlib.h>

#include "discipline/ptp4l.h"

static void
print_reading(const struct pc_clock_reading *r)
{
	char id[PC_PTP_ID_TEXT];

	printf("result ok\n");
	/* as pmc prints them: TimeIntervals in ns with one decimal */
	printf("offsetFromMaster %.1f\n", (double)r->offset / 65536.0);
	printf("meanPathDelay %.1f\n", (double)r->path_delay / 65536.0);
	printf("offset_scaled %lld\n", (long long)r->offset);
	printf("stepsRemoved %u\n", r->steps_removed);
	printf("clockIdentity %s\n", pc_ptp_identity_text(r->clock, id));
	printf("grandmasterIdentity %s\n", pc_ptp_identity_text(r->gm, id));
	printf("gmPresent %s\n", r->gm_present ? "true" : "false");
	printf("ingress_time %lld\n", (long long)r->ingress_ns);
	for (unsigned p = 0; p < r->nports; p++)
		printf("portState %u %s\n", p + 1, pc_ptp_state_name(r->port_states[p]));
	printf("port %u %s\n", r->port, pc_ptp_state_name(r->port_state));
	if (r->bounded)
		printf("bound_ns %llu\n", (unsigned long long)r->bound_ns);
	else
		printf("bound_ns none\n");
	printf("read_ns %llu\n", (unsigned long long)r->read_ns);
}

int
main(int argc, char **argv)
{
	struct pc_clock_reading r;
	struct pc_error err = { .msg = "" };
	struct pc_ptp4l c;

	if (argc < 2 || argc > 3) {
		fprintf(stderr, "usage: ptp4l_probe SOCKET [DOMAIN]\n");
		return 2;
	}
	if (pc_ptp4l_open(&c, argv[1], argc == 3 ? (uint8_t)atoi(argv[2]) : 0, &err) != 0) {
		fprintf(stderr, "ptp4l_probe: %s\n", err.msg);
		return 2;
	}
	enum pc_clock_result res = pc_ptp4l_poll(&c, 250000000u, &r, &err);
	pc_ptp4l_close(&c);
	if (res != PC_CLOCK_OK) {
		printf("result %s\nwhy %s\n", pc_clock_result_name(res), err.msg);
		return 1;
	}
	print_reading(&r);
	return 0;
}
