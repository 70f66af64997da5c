/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What podcapd observes of each port's link, for the operator now and for
 * the signed log later: the link's state (up, speed, duplex) and its
 * changes, and the LLDP neighbour on the other end of the cable.
 *
 * The control thread owns it (pc_links_poll between its sleeps): it drains
 * the workers' LLDP rings (lldp_rx.h), parses what the rate allows
 * (shape/lldp.h), lets neighbours whose TTL ran out go, and reads each
 * link once a second and at once after a link-state-change interrupt
 * (pc_links_lsc_event, from DPDK's interrupt thread, only sets a flag).
 * Readers (metrics, and the recorder's LINK records, link_record.h) take a copy with
 * pc_links_snapshot under the module's own lock, which the workers never
 * take. Nothing here runs per frame on a worker.
 */
#ifndef PODCAPD_LINKS_H
#define PODCAPD_LINKS_H

#include <stdbool.h>
#include <stdint.h>

#include <rte_ethdev.h>

#include "podmap/config.h"
#include "shape/classify.h"
#include "shape/lldp.h"

/* The last changes of a link kept per port (the recorder reads those of a window). */
#define PC_LINK_HISTORY 16

/* What became of the LLDP frames a port received. */
enum pc_lldp_result {
	PC_LLDP_OK = 0,       /* parsed: the neighbour is refreshed, replaced or gone */
	PC_LLDP_MALFORMED,    /* refused by pc_lldp_parse_frame */
	PC_LLDP_RATE_LIMITED, /* beyond what the control thread parses a second: freed unread */
	PC_LLDP_QUEUE_FULL,   /* the worker's ring had no room: freed by the worker */
	PC_LLDP_RESULT_COUNT,
};

const char *pc_lldp_result_name(enum pc_lldp_result r); /* "ok", "malformed", ... */

/* A link as it was read, and since when. */
struct pc_link_change {
	uint64_t mono_ns, real_ns; /* when it was read so (CLOCK_MONOTONIC, CLOCK_REALTIME) */
	bool up;
	bool full_duplex;
	uint32_t speed_mbps; /* RTE_ETH_SPEED_NUM_*, 0 when down or unknown */
};

struct pc_link_state {
	bool known;                /* read at least once */
	bool lsc;                  /* the driver interrupts on a change (RTE_ETH_EVENT_INTR_LSC) */
	bool kernel_carrier;       /* net_af_packet: up is the kernel interface's carrier */
	struct pc_link_change now; /* the state since the last change (or the first reading) */
	struct pc_link_change first; /* the first reading: the state before the first change */
	/* changes after the first reading; the last PC_LINK_HISTORY at [i % PC_LINK_HISTORY] */
	uint64_t changes;
	struct pc_link_change history[PC_LINK_HISTORY];
};

/* One port: its link, its neighbour, its LLDP frames by result. */
struct pc_port_obs {
	struct pc_link_state link;
	struct pc_lldp_neighbor neighbor;
	uint64_t lldp[PC_LLDP_RESULT_COUNT];
};

/*
 * Every port of every uplink at one instant. This is what a window's
 * LINK/NEIGHBOR record will carry: per port whether the link was up, at
 * which speed, the changes within the window (history, by count), and
 * which switch chassis and port it faced.
 */
struct pc_links_snapshot {
	uint64_t mono_ns, real_ns; /* when it was taken */
	unsigned nuplinks;
	char uplink[PC_MAX_UPLINKS][PC_ID_LEN];
	struct pc_port_obs port[PC_MAX_UPLINKS][PC_DIR_COUNT]; /* [PC_DIR_UP]: the pod side */
};

/* After the ports started: the first reading of each link. 0, or -1 with a log line. */
int pc_links_start(const struct pc_config *cfg, const uint16_t (*ports)[PC_DIR_COUNT]);
/* Control thread, between its sleeps. */
void pc_links_poll(void);
/* After the workers stopped: what the rings hold is freed. */
void pc_links_stop(void);
/* Any thread: a copy of the state. 0, or -1 before pc_links_start. */
int pc_links_snapshot(struct pc_links_snapshot *out);

/* DPDK's callback for RTE_ETH_EVENT_INTR_LSC (interrupt thread): the port is read at the next poll. */
int pc_links_lsc_event(uint16_t port, enum rte_eth_event_type type, void *arg, void *out);

/* "pod" for PC_DIR_UP's port, "fabric" for PC_DIR_DOWN's. */
const char *pc_links_side_name(enum pc_dir d);

#endif /* PODCAPD_LINKS_H */
