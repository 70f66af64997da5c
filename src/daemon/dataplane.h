/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What the control thread and the worker lcores share, and how.
 *
 * The control thread publishes the table in force and the current window
 * (the epoch) with release stores; each worker picks them up with an acquire
 * load once per loop, switches to the epoch's counter bank and acknowledges.
 * Only after every worker has acknowledged does the control thread read the
 * closed bank and free a replaced table. Workers never wait for anything.
 */
#ifndef PODCAPD_DATAPLANE_H
#define PODCAPD_DATAPLANE_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include "podcap/counters.h"
#include "table.h"

#define PC_BURST 32
#define PC_TX_STAGE 64

/* One window's counters of one worker; indexed by the table in force. */
struct pc_bank {
	struct pc_pod_ctr pod[PC_MAX_PODS][PC_DIR_COUNT];
	struct pc_link_ctr link[PC_MAX_UPLINKS][PC_DIR_COUNT];
};

struct pc_tx_stage {
	uint16_t n;
	uint32_t pod[PC_TX_STAGE];
	uint32_t len[PC_TX_STAGE];
	struct rte_mbuf *pkts[PC_TX_STAGE];
};

struct pc_worker {
	unsigned index;
	unsigned lcore;
	struct pc_bank *banks[2];
	uint64_t acked_epoch;          /* written by the worker (release), read by control */
	uint64_t loops;                /* written by the worker, for liveness */

	/* below: private to the worker */
	uint64_t epoch;
	struct pc_bank *bank;
	struct pc_table *table;
	uint64_t next_publish;         /* tsc of the next telemetry snapshot */
	uint32_t nactive;
	uint32_t *active;              /* shaper indices with a backlog */
	struct pc_tx_stage tx[PC_MAX_UPLINKS][PC_DIR_COUNT];
} __rte_cache_aligned;

struct pc_dataplane {
	uint64_t epoch;                /* window index, control -> workers */
	/*
	 * The bank the current window is counted in, flipped at every switch
	 * (stored before epoch, read after it). Not epoch & 1: when the control
	 * thread was held up and moves on two windows at once, the bank it
	 * closes and the one the workers move to must still differ.
	 */
	unsigned bank;
	struct pc_table *table;        /* table in force, control -> workers */
	bool stop;
	uint64_t hz;
	unsigned nworkers;
	struct pc_worker *workers[RTE_MAX_LCORE];
	struct rte_mempool *pool;
	/* serialises control-plane readers (telemetry, metrics) with table swaps */
	pthread_mutex_t lock;
};

int pc_worker_main(void *arg);   /* lcore entry; arg is struct pc_worker * */
struct pc_worker *pc_worker_create(unsigned index, unsigned lcore);
void pc_worker_free(struct pc_worker *w);

extern struct pc_dataplane pc_dp;

#endif /* PODCAPD_DATAPLANE_H */
