/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The data path: receive a burst, classify it (burst.c), pass the bucket,
 * count, transmit; LLDP frames go to the control thread (lldp_rx.h), never
 * across.
 * No locks, no allocation, no system calls per frame.
 */
#include <stdlib.h>
#include <string.h>

#include <rte_branch_prediction.h>
#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>
#include <rte_ring.h>

#include "shape/bucket.h"
#include "shape/classify.h"
#include "shape/counters.h"
#include "shape/window_budget.h"

#include "burst.h"
#include "dataplane.h"
#include "lldp_rx.h"
#include "log.h"

#define PUBLISH_INTERVAL_MS 10

struct pc_dataplane pc_dp = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
};

/* frames passed of one pod, counted once for the run */
static inline void
count_pass_run(struct pc_worker *w, uint32_t pod, enum pc_dir d, uint64_t frames, uint64_t bytes)
{
	struct pc_pod_ctr *c = &w->bank->pod[pod][d];
	pc_ctr_add(&c->pass_frames, frames);
	pc_ctr_add(&c->pass_bytes, bytes);
}

static inline void
count_pod_drop(struct pc_worker *w, uint32_t pod, enum pc_dir d, enum pc_pod_drop reason,
	       uint64_t bytes)
{
	struct pc_pod_ctr *c = &w->bank->pod[pod][d];
	pc_ctr_add(&c->drop_frames[reason], 1);
	pc_ctr_add(&c->drop_bytes[reason], bytes);
}

static inline void
count_link_drop(struct pc_worker *w, unsigned u, enum pc_dir d, enum pc_link_drop reason,
		uint64_t bytes)
{
	pc_link_ctr_drop(&w->bank->link[u][d], reason, bytes);
}

static inline uint16_t
tx_port(const struct pc_table *t, unsigned u, enum pc_dir d)
{
	return t->uplinks[u].port[d == PC_DIR_UP ? PC_DIR_DOWN : PC_DIR_UP];
}

/*
 * Sends pkts[0..n), frame i of pod[i] and len[i] bytes, on queue q of port,
 * and counts them: a frame counts as passed only once the port has taken it;
 * what the port refuses was still charged to the bucket and is counted as
 * dropped with reason tx_full.
 */
static inline void
send_counted(struct pc_worker *w, enum pc_dir d, uint16_t port, uint16_t q, struct rte_mbuf **pkts,
	     const uint32_t *pod, const uint32_t *len, uint16_t n)
{
	uint16_t sent = rte_eth_tx_burst(port, q, pkts, n);
	if (unlikely(sent < n))
		sent += rte_eth_tx_burst(port, q, pkts + sent, n - sent);
	/* one counter update per run of one pod's frames */
	for (uint16_t i = 0; i < sent;) {
		uint32_t p = pod[i];
		uint64_t bytes = 0;
		uint16_t j = i;
		do
			bytes += len[j++];
		while (j < sent && pod[j] == p);
		count_pass_run(w, p, d, j - i, bytes);
		i = j;
	}
	for (uint16_t i = sent; i < n; i++) {
		count_pod_drop(w, pod[i], d, PC_DROP_TX_FULL, len[i]);
		rte_pktmbuf_free(pkts[i]);
	}
}

/* Sends what is staged for uplink u in direction d (send_counted). */
static void
tx_flush(struct pc_worker *w, const struct pc_table *t, unsigned u, enum pc_dir d)
{
	struct pc_tx_stage *st = &w->tx[u][d];
	if (st->n == 0)
		return;
	send_counted(w, d, tx_port(t, u, d), (uint16_t)w->queue[u], st->pkts, st->pod, st->len,
		     st->n);
	st->n = 0;
}

static inline void
tx_stage(struct pc_worker *w, const struct pc_table *t, unsigned u, enum pc_dir d,
	 uint32_t pod, struct rte_mbuf *m, uint32_t len)
{
	struct pc_tx_stage *st = &w->tx[u][d];
	if (unlikely(st->n == PC_TX_STAGE))
		tx_flush(w, t, u, d);
	st->pod[st->n] = pod;
	st->len[st->n] = len;
	st->pkts[st->n] = m;
	st->n++;
}

static inline void
activate(struct pc_worker *w, struct pc_shaper *s, uint32_t idx)
{
	if (s->active_slot != UINT32_MAX)
		return;
	s->active_slot = w->nactive;
	w->active[w->nactive++] = idx;
}

static inline void
deactivate(struct pc_worker *w, const struct pc_table *t, struct pc_shaper *s)
{
	uint32_t slot = s->active_slot;
	uint32_t last = w->active[--w->nactive];
	w->active[slot] = last;
	t->shapers[last].active_slot = slot;
	s->active_slot = UINT32_MAX;
}

/* Frame m of `len` bytes, classified by pc_burst_classify as pod (or why). */
static void
admit(struct pc_worker *w, const struct pc_table *t, unsigned u, enum pc_dir d, struct rte_mbuf *m,
      uint32_t len, int32_t pod, enum pc_link_drop why, uint64_t now)
{
	if (pod < 0) {
		count_link_drop(w, u, d, why, len);
		rte_pktmbuf_free(m);
		return;
	}
	uint32_t idx = (uint32_t)pod * PC_DIR_COUNT + d;
	struct pc_shaper *s = &t->shapers[idx];
	enum pc_verdict v = !t->uplinks[u].windowed || s->window == NULL
	    ? pc_bucket_admit(&s->bucket, now, len)
	    : pc_wb_admit(s->window, &s->bucket, now, len);
	switch (v) {
	case PC_VERDICT_PASS:
		tx_stage(w, t, u, d, (uint32_t)pod, m, len);
		return;
	case PC_VERDICT_QUEUE:
		if (s->head == NULL) {
			s->head = m;
			activate(w, s, idx);
			return;
		}
		if (likely(s->queue != NULL && rte_ring_sp_enqueue(s->queue, m) == 0))
			return;
		pc_bucket_unqueue(&s->bucket, len);
		count_pod_drop(w, (uint32_t)pod, d, PC_DROP_QUEUE_FULL, len);
		break;
	case PC_VERDICT_DROP:
		count_pod_drop(w, (uint32_t)pod, d, PC_DROP_OVER_CAP, len);
		break;
	}
	rte_pktmbuf_free(m);
}

/*
 * A frame of an uplink read by several workers: its pod's cap is the shared
 * budget's, spent through this worker's lease (police mode only).
 */
static void
admit_shared(struct pc_worker *w, const struct pc_table *t, unsigned u, enum pc_dir d,
	     struct rte_mbuf *m, uint32_t len, int32_t pod, enum pc_link_drop why, uint64_t now)
{
	if (pod < 0) {
		count_link_drop(w, u, d, why, len);
		rte_pktmbuf_free(m);
		return;
	}
	uint32_t idx = (uint32_t)pod * PC_DIR_COUNT + d;
	if (pc_lease_admit(&w->leases[idx], &t->budgets[idx], now, len)) {
		tx_stage(w, t, u, d, (uint32_t)pod, m, len);
		return;
	}
	count_pod_drop(w, (uint32_t)pod, d, PC_DROP_OVER_CAP, len);
	rte_pktmbuf_free(m);
}

/* The end of the run of frames of one pod (or of none) that starts at frame i. */
static inline uint16_t
run_end(const struct pc_burst_class *c, uint16_t i, uint16_t n)
{
	uint16_t j = i + 1;
	while (j < n && c->pod[j] == c->pod[i])
		j++;
	return j;
}

static inline uint64_t
run_bytes(const struct pc_burst_class *c, uint16_t i, uint16_t j)
{
	uint64_t bytes = 0;
	for (uint16_t k = i; k < j; k++)
		bytes += c->len[k];
	return bytes;
}

static inline void
stage_run(struct pc_worker *w, const struct pc_table *t, unsigned u, enum pc_dir d,
	  struct rte_mbuf **pkts, const struct pc_burst_class *c, uint16_t i, uint16_t j)
{
	for (uint16_t k = i; k < j; k++)
		tx_stage(w, t, u, d, (uint32_t)c->pod[k], pkts[k], c->len[k]);
}

/*
 * Frames i..j-1, all of one pod, passed with one decision when every one of
 * them would pass (pc_bucket_admit_run, pc_wb_admit_run under the window
 * promise): true with their tokens taken. False, with nothing taken, when
 * they do not pass whole or have no pod: the caller then admits them one by
 * one.
 */
static inline bool
pass_run(const struct pc_worker *w, const struct pc_table *t, unsigned u, enum pc_dir d,
	 const struct pc_burst_class *c, uint16_t i, uint16_t j, uint64_t now)
{
	int32_t pod = c->pod[i];
	if (pod < 0)
		return false;
	if (unlikely(t->uplinks[u].nqueues > 1)) {
		/* a shared uplink: passed at once when this worker's lease covers them */
		uint32_t idx = (uint32_t)pod * PC_DIR_COUNT + d;
		return pc_lease_admit_run(&w->leases[idx], &t->budgets[idx], run_bytes(c, i, j));
	}
	struct pc_shaper *s = &t->shapers[(uint32_t)pod * PC_DIR_COUNT + d];
	if (t->uplinks[u].windowed && s->window != NULL)
		return pc_wb_admit_run(s->window, &s->bucket, now, run_bytes(c, i, j));
	return pc_bucket_admit_run(&s->bucket, now, run_bytes(c, i, j));
}

/*
 * The frames of a burst that all passed, sent from the RX array itself: the
 * common case (the pods under their caps) costs no copy into the TX stage
 * and no second pass over it. Only when nothing is staged for the same port
 * before them, so that frames leave in the order they were admitted.
 */
static inline bool
send_whole(struct pc_worker *w, const struct pc_table *t, unsigned u, enum pc_dir d,
	   struct rte_mbuf **pkts, const struct pc_burst_class *c, uint16_t n)
{
	if (w->tx[u][d].n != 0)
		return false;
	/* a passed frame's pod is not negative: the same integers as the stage's */
	send_counted(w, d, tx_port(t, u, d), (uint16_t)w->queue[u], pkts, (const uint32_t *)c->pod,
		     c->len, n);
	return true;
}

/* Frames i..j-1, admitted one at a time. */
static inline void
admit_each(struct pc_worker *w, const struct pc_table *t, unsigned u, enum pc_dir d,
	   struct rte_mbuf **pkts, const struct pc_burst_class *c, uint16_t i, uint16_t j,
	   uint64_t now)
{
	bool shared = t->uplinks[u].nqueues > 1;

	for (uint16_t k = i; k < j; k++) {
		if (unlikely(shared))
			admit_shared(w, t, u, d, pkts[k], c->len[k], c->pod[k],
				     (enum pc_link_drop)c->why[k], now);
		else
			admit(w, t, u, d, pkts[k], c->len[k], c->pod[k],
			      (enum pc_link_drop)c->why[k], now);
	}
}

/*
 * The frames of a burst from the run i..j-1 on, which did not pass whole:
 * that run one frame at a time, each later run whole where it passes.
 */
static void
admit_rest(struct pc_worker *w, const struct pc_table *t, unsigned u, enum pc_dir d,
	   struct rte_mbuf **pkts, const struct pc_burst_class *c, uint16_t i, uint16_t j,
	   uint16_t n, uint64_t now)
{
	while (i < n) {
		admit_each(w, t, u, d, pkts, c, i, j, now);
		for (i = j; i < n; i = j) {
			j = run_end(c, i, n);
			if (!pass_run(w, t, u, d, c, i, j, now))
				break;
			stage_run(w, t, u, d, pkts, c, i, j);
		}
	}
}

/*
 * The LLDP frames of a burst: counted as unmapped, as any frame of no pod
 * is, handed to the control thread (lldp_rx.h) and taken out of the burst,
 * whose other frames keep their order. Returns how many are left.
 */
static uint16_t
take_lldp(struct pc_worker *w, unsigned u, enum pc_dir d, struct rte_mbuf **pkts,
	  struct pc_burst_class *c, uint16_t n)
{
	uint16_t k = 0;

	for (uint16_t i = 0; i < n; i++) {
		if (c->lldp & (1u << i)) {
			count_link_drop(w, u, d, PC_DROP_UNMAPPED, c->len[i]);
			pc_lldp_rx_offer(u, d, (unsigned)w->queue[u], pkts[i]);
			continue;
		}
		pkts[k] = pkts[i];
		c->pod[k] = c->pod[i];
		c->len[k] = c->len[i];
		c->why[k] = c->why[i];
		k++;
	}
	c->lldp = 0;
	return k;
}

/*
 * A burst classified as a whole, then admitted in arrival order, with every
 * bucket and counter line it will touch already loading: each run of one
 * pod's frames with one decision where it passes whole, and a burst that
 * passes whole sent as it was received (send_whole).
 */
static void
admit_burst(struct pc_worker *w, const struct pc_table *t, unsigned u, enum pc_dir d,
	    struct rte_mbuf **pkts, uint16_t n, uint64_t now)
{
	struct pc_burst_class c;
	uint16_t i, j = 0;

	pc_burst_classify(t, u, d, pkts, n, &c);
	if (unlikely(c.lldp != 0)) {
		n = take_lldp(w, u, d, pkts, &c, n);
		if (n == 0)
			return;
	}
	pc_burst_prefetch(t, u, w, d, &c, n);
	for (i = 0; i < n; i = j) {
		j = run_end(&c, i, n);
		if (!pass_run(w, t, u, d, &c, i, j, now))
			break;
	}
	if (i == n && send_whole(w, t, u, d, pkts, &c, n))
		return;
	stage_run(w, t, u, d, pkts, &c, 0, i);
	if (i < n)
		admit_rest(w, t, u, d, pkts, &c, i, j, n, now);
}

/* Sends the heads of the shaping queues for which tokens have accrued. */
static void
drain(struct pc_worker *w, const struct pc_table *t, uint64_t now)
{
	for (uint32_t i = 0; i < w->nactive;) {
		uint32_t idx = w->active[i];
		struct pc_shaper *s = &t->shapers[idx];
		uint32_t pod = idx / PC_DIR_COUNT;
		enum pc_dir d = (enum pc_dir)(idx % PC_DIR_COUNT);
		unsigned u = t->pod_uplink[pod];

		while (s->head != NULL) {
			uint32_t len = rte_pktmbuf_pkt_len(s->head);
			if (s->window == NULL ? !pc_bucket_release(&s->bucket, now, len)
					      : !pc_wb_release(s->window, &s->bucket, now, len))
				break;
			tx_stage(w, t, u, d, pod, s->head, len);
			if (s->queue == NULL || rte_ring_sc_dequeue(s->queue, (void **)&s->head) != 0)
				s->head = NULL;
		}
		if (s->head == NULL)
			deactivate(w, t, s);  /* moves another entry into slot i */
		else
			i++;
	}
}

static void
publish_snapshots(struct pc_worker *w, const struct pc_table *t, uint64_t now)
{
	for (unsigned p = 0; p < t->cfg.npods; p++) {
		if (t->uplinks[t->pod_uplink[p]].worker != w->index)
			continue;
		for (unsigned d = 0; d < PC_DIR_COUNT; d++) {
			struct pc_shaper *s = &t->shapers[p * PC_DIR_COUNT + d];
			if (t->uplinks[t->pod_uplink[p]].nqueues > 1) {
				/* what the workers' leases hold is not shown: under one lease each */
				pc_u128 bt =
				    pc_budget_level(&t->budgets[p * PC_DIR_COUNT + d], now);
				__atomic_store_n(&s->pub_level_bytes,
						 (uint64_t)(bt / (8u * pc_dp.hz)),
						 __ATOMIC_RELAXED);
				continue;
			}
			/* an idle bucket is refilled only here: show its level as of now */
			pc_bucket_refill(&s->bucket, now);
			__atomic_store_n(&s->pub_level_bytes, pc_bucket_level_bytes(&s->bucket),
					 __ATOMIC_RELAXED);
			__atomic_store_n(&s->pub_queue_bytes, s->bucket.backlog_bytes, __ATOMIC_RELAXED);
			__atomic_store_n(&s->pub_queue_frames, s->bucket.backlog_frames,
					 __ATOMIC_RELAXED);
		}
	}
}

/*
 * Frames left in a shaping queue that nothing will drain (its pod left the
 * map or moved to another uplink, or podcapd stops) never get their tokens:
 * they count as dropped over the cap, in the window in which that happens,
 * so that every frame received is still counted once.
 */
static void
drop_queued(struct pc_worker *w, struct pc_shaper *s, uint32_t pod, enum pc_dir d)
{
	while (s->head != NULL) {
		uint32_t len = rte_pktmbuf_pkt_len(s->head);
		pc_bucket_unqueue(&s->bucket, len);
		count_pod_drop(w, pod, d, PC_DROP_OVER_CAP, len);
		rte_pktmbuf_free(s->head);
		if (s->queue == NULL || rte_ring_sc_dequeue(s->queue, (void **)&s->head) != 0)
			s->head = NULL;
	}
}

/* Drops what waits for pods of t that this worker owns and `keep` does not mark. */
static void
drop_orphans(struct pc_worker *w, struct pc_table *t, const uint8_t *keep)
{
	for (unsigned p = 0; p < t->cfg.npods; p++) {
		if (t->uplinks[t->cfg.pods[p].uplink].worker != w->index ||
		    (keep != NULL && keep[p / 8] & (1u << (p % 8))))
			continue;
		for (unsigned d = 0; d < PC_DIR_COUNT; d++)
			drop_queued(w, &t->shapers[p * PC_DIR_COUNT + d], p, (enum pc_dir)d);
	}
}

/*
 * The queues this worker reads in table nt, and for the uplinks of several
 * queues the budgets of their pods: started (the first worker to take the
 * table starts them empty, now) and with no lease yet. What the leases of
 * the old table held is left: the pod never gets more than it was granted.
 */
static void
adopt_queues(struct pc_worker *w, struct pc_table *nt, uint64_t now)
{
	for (unsigned u = 0; u < nt->cfg.nuplinks; u++)
		w->queue[u] = (int8_t)pc_table_queue_of(nt, u, w->index);
	for (unsigned p = 0; p < nt->cfg.npods; p++) {
		unsigned u = nt->cfg.pods[p].uplink;
		if (nt->uplinks[u].nqueues == 1 || w->queue[u] < 0)
			continue;
		for (unsigned d = 0; d < PC_DIR_COUNT; d++) {
			pc_budget_start(&nt->budgets[p * PC_DIR_COUNT + d], now);
			w->leases[p * PC_DIR_COUNT + d].tokens = 0;
		}
	}
}

/*
 * Takes over the pods of a new table that this worker owns: a pod that
 * persists on the same uplink keeps its bucket level and its queued frames;
 * the frames queued for the others are dropped, still in the old window.
 */
static void
adopt_table(struct pc_worker *w, struct pc_table *nt)
{
	struct pc_table *old = w->table;
	uint64_t now = rte_rdtsc();
	uint8_t kept[PC_MAX_PODS / 8];

	memset(kept, 0, sizeof(kept));
	if (old != NULL && nt->prev == old) {
		for (unsigned p = 0; p < nt->cfg.npods; p++)
			if (nt->prev_index[p] >= 0)
				kept[nt->prev_index[p] / 8] |= (uint8_t)(1u << (nt->prev_index[p] % 8));
	}
	if (old != NULL)
		drop_orphans(w, old, kept);

	adopt_queues(w, nt, now);
	w->nactive = 0;
	for (unsigned p = 0; p < nt->cfg.npods; p++) {
		if (nt->uplinks[nt->cfg.pods[p].uplink].worker != w->index)
			continue;
		int32_t op = (old != NULL && nt->prev == old) ? nt->prev_index[p] : -1;
		for (unsigned d = 0; d < PC_DIR_COUNT; d++) {
			struct pc_shaper *ns = &nt->shapers[p * PC_DIR_COUNT + d];
			bool carried = false;
			if (op >= 0) {
				struct pc_shaper *os = &old->shapers[(uint32_t)op * PC_DIR_COUNT + d];
				ns->bucket = os->bucket;
				pc_bucket_reconfigure(&ns->bucket, &nt->cfg.pods[p].limits, now);
				if (ns->window != NULL && os->window != NULL) {
					*ns->window = *os->window;
					pc_wb_reconfigure(ns->window, &nt->cfg.pods[p].limits,
							  nt->cfg.window_ns, pc_dp.hz);
					carried = true;
				}
				if (os->head != NULL) {
					struct rte_ring *q = ns->queue;
					ns->queue = os->queue;
					os->queue = q;
					ns->head = os->head;
					os->head = NULL;
				}
			}
			/*
			 * New to the window promise at a reload (or a new pod): full from
			 * this boundary on, not from when the reload was prepared, since up
			 * to now the pod ran under limits the budget did not see.
			 */
			if (ns->window != NULL && !carried && old != NULL)
				pc_wb_init(ns->window, &nt->cfg.pods[p].limits, nt->cfg.window_ns,
					   pc_dp.hz, now);
			if (ns->head != NULL) {
				ns->active_slot = UINT32_MAX;
				activate(w, ns, p * PC_DIR_COUNT + d);
			}
		}
	}
	w->table = nt;
}

static void
flush_all(struct pc_worker *w, const struct pc_table *t)
{
	for (unsigned u = 0; u < t->cfg.nuplinks; u++) {
		if (w->queue[u] < 0)
			continue;
		tx_flush(w, t, u, PC_DIR_UP);
		tx_flush(w, t, u, PC_DIR_DOWN);
	}
}

/*
 * Moves w into window `epoch`, taking over nt when a reload comes with it:
 * what is staged and what the old table's queues drop is still counted in
 * the window that closes, then the worker counts in its other bank. Run by
 * the worker at the boundary, or at stop by the control thread for a worker
 * that stopped before it got there.
 */
void
pc_worker_switch(struct pc_worker *w, uint64_t epoch, struct pc_table *nt)
{
	if (nt != NULL && nt != w->table) {
		flush_all(w, w->table);
		adopt_table(w, nt);
	}
	w->bank = w->banks[w->bank == w->banks[0]];
	w->epoch = epoch;
	__atomic_store_n(&w->acked_epoch, epoch, __ATOMIC_RELEASE);
}

int
pc_worker_main(void *arg)
{
	struct pc_worker *w = arg;
	struct rte_mbuf *pkts[PC_BURST];
	uint64_t publish_every = pc_dp.hz / 1000 * PUBLISH_INTERVAL_MS;

	adopt_table(w, __atomic_load_n(&pc_dp.table, __ATOMIC_ACQUIRE));
	PC_LOG(INFO, "worker %u running on lcore %u\n", w->index, w->lcore);
	while (!__atomic_load_n(&pc_dp.stop, __ATOMIC_RELAXED)) {
		/* one time per burst: for the buckets, and for the window it is counted in */
		uint64_t now = rte_rdtsc();
		pc_worker_boundary(w, now);
		const struct pc_table *t = w->table;

		for (unsigned u = 0; u < t->cfg.nuplinks; u++) {
			if (w->queue[u] < 0)
				continue;
			for (unsigned d = 0; d < PC_DIR_COUNT; d++) {
				uint16_t n = rte_eth_rx_burst(
				    t->uplinks[u].port[d], (uint16_t)w->queue[u], pkts, PC_BURST);
				if (n != 0)
					admit_burst(w, t, u, (enum pc_dir)d, pkts, n, now);
			}
		}
		if (w->nactive != 0)
			drain(w, t, now);
		flush_all(w, t);

		if (unlikely(now >= w->next_publish)) {
			publish_snapshots(w, t, now);
			w->next_publish = now + publish_every;
		}
		__atomic_store_n(&w->loops, w->loops + 1, __ATOMIC_RELAXED);
	}
	flush_all(w, w->table);
	drop_orphans(w, w->table, NULL);
	PC_LOG(INFO, "worker %u stopped\n", w->index);
	return 0;
}

struct pc_worker *
pc_worker_create(unsigned index, unsigned lcore)
{
	int socket = (int)rte_lcore_to_socket_id(lcore);
	struct pc_worker *w = rte_zmalloc_socket("pc_worker", sizeof(*w), RTE_CACHE_LINE_SIZE, socket);
	if (w == NULL)
		return NULL;
	w->index = index;
	w->lcore = lcore;
	w->epoch = UINT64_MAX;
	for (unsigned b = 0; b < 2; b++)
		w->banks[b] = rte_zmalloc_socket("pc_bank", sizeof(struct pc_bank),
						 RTE_CACHE_LINE_SIZE, socket);
	w->bank = w->banks[0];
	w->active = rte_zmalloc_socket("pc_active", sizeof(uint32_t) * PC_MAX_PODS * PC_DIR_COUNT,
				       RTE_CACHE_LINE_SIZE, socket);
	w->leases =
	    rte_zmalloc_socket("pc_leases", sizeof(struct pc_lease) * PC_MAX_PODS * PC_DIR_COUNT,
			       RTE_CACHE_LINE_SIZE, socket);
	for (unsigned u = 0; u < PC_MAX_UPLINKS; u++)
		w->queue[u] = -1;
	if (w->banks[0] == NULL || w->banks[1] == NULL || w->active == NULL || w->leases == NULL) {
		pc_worker_free(w);
		return NULL;
	}
	return w;
}

void
pc_worker_free(struct pc_worker *w)
{
	if (w == NULL)
		return;
	rte_free(w->banks[0]);
	rte_free(w->banks[1]);
	rte_free(w->active);
	rte_free(w->leases);
	rte_free(w);
}
