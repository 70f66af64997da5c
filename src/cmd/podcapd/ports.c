/* SPDX-License-Identifier: BSD-3-Clause */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>

#include "eal.h"
#include "daemon/lldp_rx.h"
#include "daemon/lldp_tx.h"
#include "daemon/log.h"
#include "ports.h"

#define RX_DESC 1024
#define TX_DESC 1024

unsigned
pd_ports_mbufs(const struct pc_config *cfg)
{
	unsigned queues = 0;

	for (unsigned u = 0; u < cfg->nuplinks; u++)
		queues += cfg->uplinks[u].workers;
	/* and what the LLDP rings of each port and queue hold for the control thread */
	return queues * 2 * (RX_DESC + TX_DESC + PC_LLDP_RING_SLOTS);
}

/*
 * Several queues: RSS over the IP addresses and ports of a frame, so that
 * a flow stays on one queue (its frames in order) while a pod's flows
 * spread. A device without RSS (net_pcap with one file per queue) is taken
 * as it is: its queues are filled by whatever feeds them.
 */
static int
queues_conf(uint16_t port, const char *what, const struct rte_eth_dev_info *info, uint16_t nq,
	    struct rte_eth_conf *conf)
{
	if (nq > info->max_rx_queues || nq > info->max_tx_queues) {
		PC_LOG(ERR, "%s: %u workers need %u RX and TX queues, the device has %u and %u\n",
		       what, nq, nq, info->max_rx_queues, info->max_tx_queues);
		return -EINVAL;
	}
	uint64_t hf =
	    (RTE_ETH_RSS_IP | RTE_ETH_RSS_TCP | RTE_ETH_RSS_UDP) & info->flow_type_rss_offloads;
	if (nq == 1 || hf == 0) {
		if (nq > 1)
			PC_LOG(NOTICE,
			       "port %u (%s): no RSS; its %u queues are read as they fill\n", port,
			       what, nq);
		return 0;
	}
	conf->rxmode.mq_mode = RTE_ETH_MQ_RX_RSS;
	conf->rx_adv_conf.rss_conf.rss_key = NULL; /* the device's own key */
	conf->rx_adv_conf.rss_conf.rss_hf = hf;
	return 0;
}

/*
 * A tap's port receives only: it has no transmit queue to send on. With
 * --lldp-tx, a port that can have one more TX queue than its workers gets
 * it, for the control thread alone (daemon/lldp_tx.h).
 */
static int
port_start(uint16_t port, const char *what, struct rte_mempool *pool, uint32_t max_frame,
	   uint16_t nq, bool rx_only)
{
	struct rte_eth_dev_info info;
	struct rte_eth_conf conf;
	uint16_t nrx = RX_DESC, ntx = TX_DESC;
	int rc;

	memset(&conf, 0, sizeof(conf));
	rc = rte_eth_dev_info_get(port, &info);
	if (rc != 0)
		return rc;
	/* max_frame counts the Ethernet header and one VLAN tag, not the FCS */
	uint32_t mtu = max_frame > RTE_ETHER_HDR_LEN + 4 ? max_frame - RTE_ETHER_HDR_LEN - 4 : 0;
	if (mtu >= info.min_mtu && mtu <= info.max_mtu)
		conf.rxmode.mtu = mtu;
	rc = queues_conf(port, what, &info, nq, &conf);
	if (rc != 0)
		return rc;
	/* a link change is read at once where the driver interrupts for it (links.c) */
	if (info.dev_flags != NULL && (*info.dev_flags & RTE_ETH_DEV_INTR_LSC))
		conf.intr_conf.lsc = 1;
	uint16_t ntxq = rx_only ? 0 : nq;
	if (!rx_only && pc_lldp_tx_enabled() && info.max_tx_queues > nq)
		ntxq = nq + 1;
	rc = rte_eth_dev_configure(port, nq, ntxq, &conf);
	if (rc == -EINVAL && conf.rxmode.mtu != 0) {
		/* the device takes smaller frames than max_frame: it cannot receive larger ones either */
		PC_LOG(WARNING, "%s: frames of %u bytes are larger than the device takes (%u); "
		       "using its default MTU\n", what, max_frame, info.max_rx_pktlen);
		conf.rxmode.mtu = 0;
		rc = rte_eth_dev_configure(port, nq, ntxq, &conf);
	}
	if (rc != 0)
		return rc;
	rc = rte_eth_dev_adjust_nb_rx_tx_desc(port, &nrx, &ntx);
	if (rc != 0)
		return rc;
	int socket = rte_eth_dev_socket_id(port);
	for (uint16_t q = 0; q < nq; q++) {
		rc = rte_eth_rx_queue_setup(port, q, nrx, socket, NULL, pool);
		if (rc != 0)
			return rc;
		rc = rx_only ? 0 : rte_eth_tx_queue_setup(port, q, ntx, socket, NULL);
		if (rc != 0)
			return rc;
	}
	if (ntxq > nq) {
		uint16_t nlldp = PC_LLDP_TX_DESC;
		rc = rte_eth_dev_adjust_nb_rx_tx_desc(port, NULL, &nlldp);
		if (rc == 0)
			rc = rte_eth_tx_queue_setup(port, nq, nlldp, socket, NULL);
		if (rc != 0)
			return rc;
	}
	rc = rte_eth_dev_start(port);
	if (rc != 0)
		return rc;
	rc = rte_eth_promiscuous_enable(port);
	if (rc != 0 && rc != -ENOTSUP)
		PC_LOG(WARNING, "%s: cannot enable promiscuous mode: %s\n", what, rte_strerror(-rc));
	return 0;
}

int
pd_ports_start(const struct pc_config *cfg, struct rte_mempool *pool,
	       uint16_t (*ports)[PC_DIR_COUNT])
{
	for (unsigned u = 0; u < cfg->nuplinks; u++) {
		const struct pc_uplink *up = &cfg->uplinks[u];
		const char *devs[PC_DIR_COUNT] = { up->pod_port, up->fabric_port };
		for (unsigned d = 0; d < PC_DIR_COUNT; d++) {
			int port = pd_eal_port_of(devs[d]);
			if (port < 0) {
				PC_LOG(ERR, "uplink %s: no DPDK port for device '%s'\n", up->name, devs[d]);
				return -1;
			}
			int rc = port_start((uint16_t)port, devs[d], pool, cfg->max_frame,
					    (uint16_t)up->workers, cfg->role != PC_ROLE_SHAPER);
			if (rc != 0) {
				PC_LOG(ERR, "uplink %s: cannot start port %d (%s): %s\n", up->name, port,
				       devs[d], rte_strerror(-rc));
				return -1;
			}
			ports[u][d] = (uint16_t)port;
		}
	}
	for (unsigned u = 0; u < cfg->nuplinks; u++) {
		for (unsigned d = 0; d < PC_DIR_COUNT; d++) {
			struct rte_eth_link link;
			if (rte_eth_link_get_nowait(ports[u][d], &link) == 0)
				PC_LOG(INFO, "uplink %s %s port %u: link %s, %u Mbit/s\n",
				       cfg->uplinks[u].name, d == PC_DIR_UP ? "pod" : "fabric",
				       ports[u][d], link.link_status ? "up" : "down", link.link_speed);
		}
	}
	return 0;
}

/*
 * What each port moved over the whole run, logged once the workers are done:
 * the counters of the closed windows can then be checked against the ports.
 */
static void
log_port_totals(uint16_t port)
{
	char name[RTE_ETH_NAME_MAX_LEN];
	struct rte_eth_stats st;

	if (rte_eth_dev_get_name_by_port(port, name) != 0 || rte_eth_stats_get(port, &st) != 0)
		return;
	PC_LOG(INFO, "port %u (%s) totals: rx %lu frames %lu bytes, tx %lu frames %lu bytes, "
	       "missed %lu, rx errors %lu, tx errors %lu\n", port, name,
	       (unsigned long)st.ipackets, (unsigned long)st.ibytes, (unsigned long)st.opackets,
	       (unsigned long)st.obytes, (unsigned long)st.imissed, (unsigned long)st.ierrors,
	       (unsigned long)st.oerrors);
}

void
pd_ports_stop(unsigned nuplinks, const uint16_t (*ports)[PC_DIR_COUNT])
{
	for (unsigned u = 0; u < nuplinks; u++)
		for (unsigned d = 0; d < PC_DIR_COUNT; d++) {
			log_port_totals(ports[u][d]);
			rte_eth_dev_stop(ports[u][d]);
			rte_eth_dev_close(ports[u][d]);
		}
}
