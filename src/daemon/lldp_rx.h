/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The LLDP frames the workers hand to the control thread.
 *
 * LLDP is link-local (802.1AB): a bump in the wire never forwards it
 * across. A worker that receives one counts it as today (unmapped, in its
 * bank) and offers it here: one ring of PC_LLDP_RING_SLOTS mbufs per port
 * and queue, whose one producer is the worker that reads that queue and
 * whose one consumer is the control thread (links.c). A full ring drops
 * the frame and counts it; the worker takes no lock, allocates nothing and
 * makes no system call.
 */
#ifndef PODCAPD_LLDP_RX_H
#define PODCAPD_LLDP_RX_H

#include <stdint.h>

#include <rte_branch_prediction.h>
#include <rte_mbuf.h>
#include <rte_ring.h>

#include "podmap/config.h"
#include "shape/classify.h"
#include "shape/counters.h"

/* A ring of 8 holds 7: a few frames between two polls of the control thread. */
#define PC_LLDP_RING_SLOTS 8

struct pc_lldp_rx_queue {
	/* set at start (pc_lldp_rx_create), before the workers; read-only after */
	struct rte_ring *ring;
	/* the frames the ring had no room for: its worker wo (relaxed), readers ro (relaxed) */
	uint64_t queue_full;
} __rte_cache_aligned;

struct pc_lldp_rx {
	unsigned nuplinks;                /* set at start; read-only after */
	unsigned nqueues[PC_MAX_UPLINKS]; /* likewise */
	struct pc_lldp_rx_queue q[PC_MAX_UPLINKS][PC_DIR_COUNT][PC_MAX_UPLINK_WORKERS];
};

extern struct pc_lldp_rx pc_lldp_rx;

/* The rings of every port and queue of cfg's uplinks; 0, or -1 with a log line. */
int pc_lldp_rx_create(const struct pc_config *cfg);
/* Frees what the rings still hold, and the rings; the workers have stopped. */
void pc_lldp_rx_free(void);

/* Worker: frame m, received on queue q of uplink u's port of direction d, is taken or freed. */
static inline void
pc_lldp_rx_offer(unsigned u, enum pc_dir d, unsigned q, struct rte_mbuf *m)
{
	struct pc_lldp_rx_queue *rq = &pc_lldp_rx.q[u][d][q];

	if (likely(rq->ring != NULL && rte_ring_sp_enqueue(rq->ring, m) == 0))
		return;
	pc_ctr_add(&rq->queue_full, 1);
	rte_pktmbuf_free(m);
}

#endif /* PODCAPD_LLDP_RX_H */
