/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The LLDPDUs podcapd sends of itself (--lldp-tx), so that the switch on
 * each side of a bump in the wire lists the appliance, and which of its
 * ports faces it, among its neighbours.
 *
 * The control thread sends them, every interval on every port of every
 * uplink, between its sleeps (pc_lldp_tx_poll), and a shutdown LLDPDU (TTL
 * 0) on each at a stop. A DPDK TX queue is not thread-safe, so they never
 * go out on a worker's queue: the port is given one queue more than its
 * workers use (ports.c), which only the control thread transmits on, with
 * mbufs from a small pool of its own. net_af_packet ties each TX queue to
 * an RX queue in the kernel's fanout group (qpairs): an extra pair would
 * take a share of the received flows away from the workers. There the
 * frames go out on a kernel packet socket of their own on the port's
 * interface instead, past the qdisc, so that the workers' sockets do not
 * receive them back. Nothing here runs on a worker, and the frames are the
 * appliance's own: no pod's bucket or counters ever sees them.
 */
#ifndef PODCAPD_LLDP_TX_H
#define PODCAPD_LLDP_TX_H

#include <stdbool.h>
#include <stdint.h>

#include "podmap/config.h"
#include "shape/classify.h"

#define PC_LLDP_TX_DEFAULT_S 30   /* 802.1AB's msgTxInterval */
#define PC_LLDP_TX_MAX_S     3600 /* and its largest */
#define PC_LLDP_TX_HOLD      4    /* msgTxHold: TTL = 4 x interval */
#define PC_LLDP_TX_DESC      64   /* descriptors of the control thread's TX queue */

enum pc_lldp_tx_result {
	PC_LLDP_TX_SENT = 0, /* handed to the port */
	PC_LLDP_TX_FAILED,   /* no mbuf, or the port took none */
	PC_LLDP_TX_RESULT_COUNT,
};

/* What was sent, per port: readers of any thread. */
struct pc_lldp_tx_counts {
	unsigned nuplinks; /* 0: --lldp-tx is off */
	char uplink[PC_MAX_UPLINKS][PC_ID_LEN];
	uint64_t n[PC_MAX_UPLINKS][PC_DIR_COUNT][PC_LLDP_TX_RESULT_COUNT];
};

/* "sent", "failed". */
const char *pc_lldp_tx_result_name(enum pc_lldp_tx_result r);

/* --lldp-tx=SECONDS: 1 to PC_LLDP_TX_MAX_S, decimal, nothing after. 0, or -1. */
int pc_lldp_tx_parse_interval(const char *s, unsigned *out);

/* Before the ports start: frames every interval_s from pc_lldp_tx_start on. */
void pc_lldp_tx_enable(unsigned interval_s);
bool pc_lldp_tx_enabled(void);

/*
 * After the ports started: each port's frames built, its way out chosen.
 * A no-op when not enabled. 0, or -1 with a log line (a port with neither
 * a queue of its own nor a kernel interface).
 */
int pc_lldp_tx_start(const struct pc_config *cfg, const uint16_t (*ports)[PC_DIR_COUNT]);
/* Control thread, between its sleeps: the frames that are due. */
void pc_lldp_tx_poll(void);
/* Before the ports stop: the shutdown LLDPDU on every port, then everything freed. */
void pc_lldp_tx_stop(void);
/* Any thread. */
void pc_lldp_tx_counts(struct pc_lldp_tx_counts *out);

#endif /* PODCAPD_LLDP_TX_H */
