/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef PODCAPD_PORTS_H
#define PODCAPD_PORTS_H

#include <stdint.h>

#include <rte_mempool.h>

#include "shape/classify.h"
#include "podmap/config.h"

/*
 * Finds, configures and starts the two ports of every uplink (one RX and one
 * TX queue each, promiscuous: a bump in the wire forwards every frame).
 * ports[u][PC_DIR_UP] is uplink u's pod port, [PC_DIR_DOWN] its fabric port.
 */
int pd_ports_start(const struct pc_config *cfg, struct rte_mempool *pool,
		   uint16_t (*ports)[PC_DIR_COUNT]);
void pd_ports_stop(unsigned nuplinks, const uint16_t (*ports)[PC_DIR_COUNT]);
/* Mbufs the ports need for their rings. */
unsigned pd_ports_mbufs(const struct pc_config *cfg);

#endif /* PODCAPD_PORTS_H */
