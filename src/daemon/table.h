/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The enforcement table built from one pod map: ports, prefix lookup and
 * one shaper (bucket + queue) per pod and direction. A table is immutable
 * for the data path except the shapers, which belong to the worker lcore
 * that owns the pod's uplink.
 */
#ifndef PODCAPD_TABLE_H
#define PODCAPD_TABLE_H

#include <stdbool.h>
#include <stdint.h>

#include <rte_lpm.h>
#include <rte_lpm6.h>
#include <rte_mbuf.h>
#include <rte_ring.h>

#include "shape/bucket.h"
#include "shape/classify.h"
#include "podmap/config.h"
#include "shape/lease.h"
#include "shape/window_budget.h"

#include "declared.h"

struct pc_shaper {
	struct pc_bucket bucket;
	struct pc_window_budget *window; /* the window promise's budget, or NULL (envelope) */
	struct rte_ring *queue;    /* shape mode: frames waiting for tokens (SP/SC) */
	struct rte_mbuf *head;     /* the frame at the front, taken off the ring */
	uint32_t active_slot;      /* index in the worker's active list, or UINT32_MAX */
	/* snapshots for the operator, refreshed by the owning worker every few ms */
	uint64_t pub_level_bytes;
	uint64_t pub_queue_bytes;
	uint32_t pub_queue_frames;
} __rte_cache_aligned;

struct pc_table_uplink {
	uint16_t port[PC_DIR_COUNT];   /* rx port of each direction: up = pod port, down = fabric port */
	int32_t only_pod;              /* pod assigned by uplink (one pod, no prefixes), or -1 */
	unsigned worker; /* index of the worker lcore that owns it: it reads queue 0 */
	/*
	 * Some pod on it is held to the window promise. Read with the port ids
	 * for every frame, so that a frame of an uplink with none never reads
	 * pc_shaper.window, which lies on another cache line than the bucket.
	 */
	bool windowed;
	/* Some pod on it has pods[].vlan: a frame's tag stack is compared (burst.c). */
	bool vlans;
	/*
	 * RX/TX queues on both ports (uplinks[].workers): queue q is read by
	 * worker (worker + q) % nworkers. With more than one, its pods pass
	 * by the shared budgets, and `worker` keeps what is one worker's
	 * (snapshots; the unused buckets and queues).
	 */
	unsigned nqueues;
};

struct pc_table {
	struct pc_config cfg;          /* owned copy */
	uint8_t digest[PC_DIGEST_LEN];
	unsigned generation;
	struct pc_declared decl; /* the auditor's declaration it runs under (declared.h) */
	struct rte_lpm *lpm4;
	struct rte_lpm6 *lpm6;
	struct pc_table_uplink uplinks[PC_MAX_UPLINKS];
	struct pc_shaper *shapers;     /* npods * PC_DIR_COUNT, [pod * 2 + dir] */
	struct pc_window_budget *windows; /* those of the pods held to the window promise */
	/*
	 * The pods of uplinks of several queues: one budget each, [pod * 2 +
	 * dir], shared by the uplink's workers (lease.h); held until the first
	 * of them takes the table. NULL when every uplink has one queue.
	 */
	struct pc_budget *budgets;
	unsigned nworkers;
	/*
	 * Each pod's uplink, as in cfg.pods[p].uplink, packed: the worker reads
	 * it for every frame, and a pc_pod is almost 2 KiB (its prefixes), so
	 * with thousands of pods cfg.pods costs a cache and TLB miss a frame.
	 */
	uint8_t *pod_uplink;
	/* Each pod's pods[].vlan (cfg.pods[p].vlan), packed for the same reason. */
	uint32_t *pod_vlan;
	/*
	 * For a table that replaces another (reload): the index of each pod in
	 * the previous table when it persists on the same uplink, else -1. Its
	 * worker carries the bucket and the queue over.
	 */
	struct pc_table *prev;
	int32_t *prev_index;
};

/* The queue of uplink u that worker w reads, or -1 if it reads none. */
static inline int
pc_table_queue_of(const struct pc_table *t, unsigned u, unsigned w)
{
	const struct pc_table_uplink *tu = &t->uplinks[u];
	unsigned q = (w + t->nworkers - tu->worker) % t->nworkers;
	return q < tu->nqueues ? (int)q : -1;
}

/* Links t to the table it replaces (fills prev/prev_index). 0 or -1. */
int pc_table_link_prev(struct pc_table *t, struct pc_table *prev);

/*
 * Builds a table for cfg (taking ownership of its arrays: cfg is zeroed).
 * Port ids come from the already-probed ports. Returns NULL with a log line.
 */
struct pc_table *pc_table_create(struct pc_config *cfg, const uint16_t (*ports)[PC_DIR_COUNT],
				 unsigned nworkers, uint64_t hz, unsigned generation);
void pc_table_free(struct pc_table *t);

/* Number of frames a pod-direction's shaping queue may hold. */
unsigned pc_table_queue_frames(const struct pc_limits *lim);

#endif /* PODCAPD_TABLE_H */
