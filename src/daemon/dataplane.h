/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What the control thread and the worker lcores share, and how.
 *
 * The control thread arms the next window boundary ahead of time: the TSC
 * at which it begins, its epoch and, for a reload, the table in force from
 * then. Each worker compares the TSC it reads for every burst with it, and at
 * the first burst at or after it switches to its other counter bank (and
 * the new table) and acknowledges. Only after every worker has acknowledged
 * does the control thread read the closed bank, free a replaced table and
 * arm the next boundary. Workers never wait for anything.
 */
#ifndef PODCAPD_DATAPLANE_H
#define PODCAPD_DATAPLANE_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include <rte_branch_prediction.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include "shape/counters.h"
#include "table.h"

#define PC_BURST 32
#define PC_TX_STAGE 64

/* What a tap's receive port reported it could not deliver (tap.c). */
struct pc_seen_ctr {
	uint64_t missed; /* imissed */
	uint64_t nombuf; /* rx_nombuf */
	uint64_t errors; /* ierrors */
};

/* What a tap counted of a pod in the first and the last slice of a window (tap.c). */
struct pc_slice_ctr {
	uint64_t first_bytes, first_frames;
	uint64_t last_bytes, last_frames;
};

/* One window's counters of one worker; indexed by the table in force. */
struct pc_bank {
	struct pc_pod_ctr pod[PC_MAX_PODS][PC_DIR_COUNT];
	struct pc_link_ctr link[PC_MAX_UPLINKS][PC_DIR_COUNT];
	struct pc_seen_ctr seen[PC_MAX_UPLINKS][PC_DIR_COUNT]; /* a tap's only; zero in a shaper */
	/* a tap's with appliance.slice only; zero in a shaper */
	struct pc_slice_ctr slice[PC_MAX_PODS][PC_DIR_COUNT];
	bool last_short; /* its worker saw the window's end armed less than a slice ahead */
};

struct pc_tx_stage {
	uint16_t n;
	uint32_t pod[PC_TX_STAGE];
	uint32_t len[PC_TX_STAGE];
	struct rte_mbuf *pkts[PC_TX_STAGE];
};

/*
 * Who writes and who reads each field. "control" is the control thread
 * (the main lcore), "readers" telemetry and metrics (control-plane threads
 * that hold pc_dp.lock); "set at start" means before the worker is
 * launched, which orders it for the worker. At stop, once the worker's
 * lcore has returned, the control thread may finish its switch for it
 * (pc_control_switch_stopped) and so write its private fields too.
 */
struct pc_worker {
	unsigned index;                /* set at start; read-only after */
	unsigned lcore;                /* set at start; read-only after */
	/*
	 * The pointers are set at start. The counters: the worker stores into
	 * the bank it counts in (bank, below; relaxed, pc_ctr_add). The control
	 * thread reads and zeroes the other one, under lock, only once the worker
	 * has acknowledged the boundary that left it. Readers load both, relaxed.
	 */
	struct pc_bank *banks[2];
	uint64_t acked_epoch;          /* the last switch taken: worker wo (release), control ro (acquire) */
	/*
	 * Worker wo (relaxed) every loop; control ro (relaxed) at start and at
	 * each watchdog check (run.c): a counter that stopped is a wedged worker.
	 */
	uint64_t loops;

	/* below: private to the worker */
	uint64_t epoch;                /* the window it counts in */
	struct pc_bank *bank;          /* banks[0] or banks[1]: the one it counts in */
	struct pc_table *table;        /* the table it enforces */
	uint64_t next_publish;         /* tsc of the next telemetry snapshot */
	uint32_t nactive;
	uint32_t *active;              /* shaper indices with a backlog */
	int8_t queue[PC_MAX_UPLINKS];  /* the queue it reads on each uplink of its table, or -1 */
	struct pc_lease *leases;       /* its leases of the table's budgets, [pod * 2 + dir] */
	struct pc_tx_stage tx[PC_MAX_UPLINKS][PC_DIR_COUNT];
} __rte_cache_aligned;

/* Set in switch_table by the first worker past the boundary: its table is final. */
#define PC_SWITCH_TAKEN ((uintptr_t)1)

struct pc_dataplane {
	/*
	 * The armed boundary, control -> workers: at TSC switch_tsc window
	 * switch_epoch begins (switch_tsc is stored before switch_epoch, with
	 * release, and read again after it). switch_table is the table in force
	 * from then, 0 if it stays, and PC_SWITCH_TAKEN once a worker took it.
	 * The next boundary is armed only after every worker has taken this
	 * one and its bank is collected: a worker never switches into a bank
	 * that holds a window not yet recorded.
	 */
	uint64_t switch_tsc;           /* control wo (relaxed, under lock); workers ro every burst (relaxed) */
	uint64_t switch_epoch;         /* control wo (release, under lock); workers ro past switch_tsc (acquire) */
	/*
	 * control: stored when arming, compare-and-swap to attach or detach a
	 * reload (under lock); workers: fetch-or PC_SWITCH_TAKEN (acq_rel) once
	 * per boundary, the first one seals the table; readers: ro (relaxed),
	 * whose pointer part only changes under lock.
	 */
	uintptr_t switch_table;
	/*
	 * The bank of the window the control thread closes next, flipped when
	 * it does (under lock); the workers count in the other one once they
	 * have passed the armed boundary. Control rw, readers ro, both under
	 * lock; workers never read it (each follows its own bank).
	 */
	unsigned bank;
	/*
	 * The table in force. Control wo: before the workers start, then (release,
	 * under lock) at the close that brings a reload, once every worker has
	 * taken it; workers ro once at start (acquire); readers ro under lock.
	 */
	struct pc_table *table;
	bool stop;                     /* control wo once (relaxed); workers ro every loop (relaxed) */
	uint64_t hz;                   /* TSC frequency: set at start, read-only after */
	unsigned nworkers;             /* set at start, read-only after */
	struct pc_worker *workers[RTE_MAX_LCORE]; /* set at start, read-only after */
	struct rte_mempool *pool;      /* set at start, read-only after */
	/*
	 * Serialises control-plane readers (telemetry, metrics) with table
	 * swaps and bank collection. The workers never take it.
	 */
	pthread_mutex_t lock;
};

int pc_worker_main(void *arg);   /* lcore entry; arg is struct pc_worker * */
int pc_tap_main(void *arg);      /* a tap's lcore entry (tap.c), the same arg */
void pc_worker_switch(struct pc_worker *w, uint64_t epoch, struct pc_table *nt);
struct pc_worker *pc_worker_create(unsigned index, unsigned lcore);
void pc_worker_free(struct pc_worker *w);

extern struct pc_dataplane pc_dp;

/*
 * Called when this burst's TSC is at or past the armed boundary. Until the
 * control thread has collected the last window and armed the next boundary
 * the worker stays where it is, however many boundaries pass. The first
 * worker to take a boundary seals the table that comes with it, so that all
 * take the same one even if a reload is attached just then.
 */
static inline void
pc_worker_take_boundary(struct pc_worker *w, uint64_t now)
{
	uint64_t epoch = __atomic_load_n(&pc_dp.switch_epoch, __ATOMIC_ACQUIRE);
	if (epoch == w->epoch || now < __atomic_load_n(&pc_dp.switch_tsc, __ATOMIC_RELAXED))
		return;
	uintptr_t nt = __atomic_fetch_or(&pc_dp.switch_table, PC_SWITCH_TAKEN, __ATOMIC_ACQ_REL);
	pc_worker_switch(w, epoch, (struct pc_table *)(nt & ~PC_SWITCH_TAKEN));
}

/*
 * The worker's side of a window boundary, once per burst with the TSC read
 * for that burst (the one its frames are counted and its buckets run with):
 * one compare, and the switch at the first burst at or past the boundary.
 * It takes the TSC rather than reading it so that it can be driven with
 * any (tests/daemon).
 */
static inline void
pc_worker_boundary(struct pc_worker *w, uint64_t now)
{
	if (unlikely(now >= __atomic_load_n(&pc_dp.switch_tsc, __ATOMIC_RELAXED)))
		pc_worker_take_boundary(w, now);
}

#endif /* PODCAPD_DATAPLANE_H */
