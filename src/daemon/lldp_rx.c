/* SPDX-License-Identifier: BSD-3-Clause */
/* The rings of lldp_rx.h: made before the workers start, drained and freed after they stop. */
#include <stdio.h>

#include <rte_errno.h>
#include <rte_lcore.h>

#include "lldp_rx.h"
#include "log.h"

struct pc_lldp_rx pc_lldp_rx;

/* The ring of uplink u, direction d, queue q; NULL (and why, logged) if none. */
static struct rte_ring *
ring_create(unsigned u, unsigned d, unsigned q)
{
	char name[RTE_RING_NAMESIZE];
	int n = snprintf(name, sizeof(name), "pc_lldp_%u_%u_%u", u, d, q);
	struct rte_ring *r;

	if (n < 0 || (size_t)n >= sizeof(name)) {
		PC_LOG(ERR, "no ring name for uplink %u queue %u\n", u, q);
		return NULL;
	}
	r = rte_ring_create(name, PC_LLDP_RING_SLOTS, (int)rte_socket_id(),
			    RING_F_SP_ENQ | RING_F_SC_DEQ);
	if (r == NULL)
		PC_LOG(ERR, "cannot create ring %s: %s\n", name, rte_strerror(rte_errno));
	return r;
}

int
pc_lldp_rx_create(const struct pc_config *cfg)
{
	pc_lldp_rx.nuplinks = cfg->nuplinks;
	for (unsigned u = 0; u < cfg->nuplinks; u++) {
		pc_lldp_rx.nqueues[u] = cfg->uplinks[u].workers;
		for (unsigned d = 0; d < PC_DIR_COUNT; d++)
			for (unsigned q = 0; q < cfg->uplinks[u].workers; q++) {
				struct rte_ring *r = ring_create(u, d, q);

				if (r == NULL)
					return -1;
				pc_lldp_rx.q[u][d][q].ring = r;
			}
	}
	return 0;
}

void
pc_lldp_rx_free(void)
{
	for (unsigned u = 0; u < pc_lldp_rx.nuplinks; u++)
		for (unsigned d = 0; d < PC_DIR_COUNT; d++)
			for (unsigned q = 0; q < pc_lldp_rx.nqueues[u]; q++) {
				struct pc_lldp_rx_queue *rq = &pc_lldp_rx.q[u][d][q];
				struct rte_mbuf *m;
				if (rq->ring == NULL)
					continue;
				while (rte_ring_sc_dequeue(rq->ring, (void **)&m) == 0)
					rte_pktmbuf_free(m);
				rte_ring_free(rq->ring);
				rq->ring = NULL;
			}
}
