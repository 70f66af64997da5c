/* SPDX-License-Identifier: BSD-3-Clause */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_common.h>
#include <rte_cycles.h>
#include <rte_errno.h>
#include <rte_lcore.h>
#include <rte_malloc.h>

#include "base/bytes.h"
#include "shape/classify.h"

#include "log.h"
#include "table.h"

#define QUEUE_MIN_FRAMES 64u
#define QUEUE_MAX_FRAMES 8192u

/*
 * A shaping queue must hold queue_delay worth of frames at the cap. Counting
 * in minimum-size frames would make queues of 64-byte frames huge, so size
 * for frames of 512 bytes and bound the count: a queue that fills up drops
 * with reason queue_full, which the counters make visible.
 */
unsigned
pc_table_queue_frames(const struct pc_limits *lim)
{
	if (lim->mode != PC_MODE_SHAPE)
		return 0;
	uint64_t bytes = (uint64_t)((unsigned __int128)lim->cap_bps * lim->queue_delay_ns /
				    (8u * 1000000000ull));
	uint64_t frames = bytes / 512 + 1;
	if (frames < QUEUE_MIN_FRAMES)
		frames = QUEUE_MIN_FRAMES;
	if (frames > QUEUE_MAX_FRAMES)
		frames = QUEUE_MAX_FRAMES;
	return rte_align32pow2((uint32_t)frames);
}

static int
add_prefixes(struct pc_table *t)
{
	const struct pc_config *cfg = &t->cfg;
	unsigned n4 = 0, n6 = 0;

	for (unsigned p = 0; p < cfg->npods; p++)
		for (unsigned i = 0; i < cfg->pods[p].nprefixes; i++) {
			if (cfg->pods[p].prefixes[i].family == 4)
				n4++;
			else
				n6++;
		}

	char name[RTE_MEMZONE_NAMESIZE];
	snprintf(name, sizeof(name), "pc_lpm4_%u", t->generation);
	struct rte_lpm_config c4 = {
		.max_rules = RTE_MAX(n4, 1u),
		.number_tbl8s = RTE_MAX(n4, 1u) * 2,
	};
	t->lpm4 = rte_lpm_create(name, rte_socket_id(), &c4);
	snprintf(name, sizeof(name), "pc_lpm6_%u", t->generation);
	struct rte_lpm6_config c6 = {
		.max_rules = RTE_MAX(n6, 1u),
		.number_tbl8s = RTE_MAX(n6, 1u) * 16,
	};
	t->lpm6 = rte_lpm6_create(name, rte_socket_id(), &c6);
	if (t->lpm4 == NULL || t->lpm6 == NULL) {
		PC_LOG(ERR, "cannot create prefix tables: %s\n", rte_strerror(rte_errno));
		return -1;
	}

	for (unsigned p = 0; p < cfg->npods; p++) {
		for (unsigned i = 0; i < cfg->pods[p].nprefixes; i++) {
			const struct pc_prefix *px = &cfg->pods[p].prefixes[i];
			int rc;
			if (px->family == 4) {
				uint32_t a = pc_load_be32(px->addr);
				rc = rte_lpm_add(t->lpm4, a, px->len, p);
			} else {
				rc = rte_lpm6_add(t->lpm6, px->addr, px->len, p);
			}
			if (rc < 0) {
				PC_LOG(ERR, "cannot add a prefix of pod %s: %s\n",
				       cfg->pods[p].id, rte_strerror(-rc));
				return -1;
			}
		}
	}
	return 0;
}

/*
 * A shaping queue on the DPDK heap. rte_ring_create() would take one
 * memzone per queue, and DPDK has only RTE_MAX_MEMZONE (2560) of them for
 * everything: shape-mode pod maps of more than about 1200 pods would not
 * start. Freed with rte_free().
 */
static struct rte_ring *
create_queue(unsigned generation, unsigned p, unsigned d, unsigned frames)
{
	const unsigned flags = RING_F_SP_ENQ | RING_F_SC_DEQ | RING_F_EXACT_SZ;
	char name[RTE_RING_NAMESIZE];
	ssize_t size = rte_ring_get_memsize(rte_align32pow2(frames + 1));

	if (size < 0) {
		rte_errno = EINVAL;
		return NULL;
	}
	snprintf(name, sizeof(name), "pcq%u_%u_%u", generation, p, d);
	struct rte_ring *r = rte_zmalloc_socket(name, (size_t)size, RTE_CACHE_LINE_SIZE,
						(int)rte_socket_id());
	if (r == NULL) {
		rte_errno = ENOMEM;
		return NULL;
	}
	if (rte_ring_init(r, name, frames, flags) != 0) {
		rte_free(r);
		rte_errno = EINVAL;
		return NULL;
	}
	return r;
}

/*
 * The window budgets of the pods held to the window promise, in one block
 * (about 570 bytes a pod and direction): each starts full, now.
 */
static int
create_windows(struct pc_table *t, uint64_t hz, uint64_t now)
{
	const struct pc_config *cfg = &t->cfg;
	unsigned n = 0;

	for (unsigned p = 0; p < cfg->npods; p++)
		n += cfg->pods[p].limits.promise == PC_PROMISE_WINDOW;
	if (n == 0)
		return 0;
	t->windows =
	    rte_zmalloc("pc_windows", sizeof(*t->windows) * n * PC_DIR_COUNT, RTE_CACHE_LINE_SIZE);
	if (t->windows == NULL) {
		PC_LOG(ERR, "out of memory for %u window budgets\n", n * PC_DIR_COUNT);
		return -1;
	}
	struct pc_window_budget *w = t->windows;
	for (unsigned p = 0; p < cfg->npods; p++) {
		const struct pc_limits *lim = &cfg->pods[p].limits;
		if (lim->promise != PC_PROMISE_WINDOW)
			continue;
		for (unsigned d = 0; d < PC_DIR_COUNT; d++, w++) {
			pc_wb_init(w, lim, cfg->window_ns, hz, now);
			t->shapers[p * PC_DIR_COUNT + d].window = w;
		}
		t->uplinks[cfg->pods[p].uplink].windowed = true;
	}
	return 0;
}

static int
create_shapers(struct pc_table *t, uint64_t hz)
{
	const struct pc_config *cfg = &t->cfg;
	uint64_t now = rte_rdtsc();

	t->shapers = rte_zmalloc("pc_shapers",
				 sizeof(*t->shapers) * RTE_MAX(cfg->npods, 1u) * PC_DIR_COUNT,
				 RTE_CACHE_LINE_SIZE);
	if (t->shapers == NULL) {
		PC_LOG(ERR, "out of memory for %u shapers\n", cfg->npods * PC_DIR_COUNT);
		return -1;
	}
	for (unsigned p = 0; p < cfg->npods; p++) {
		const struct pc_limits *lim = &cfg->pods[p].limits;
		for (unsigned d = 0; d < PC_DIR_COUNT; d++) {
			struct pc_shaper *s = &t->shapers[p * PC_DIR_COUNT + d];
			pc_bucket_init(&s->bucket, lim, hz, now);
			s->active_slot = UINT32_MAX;
			unsigned frames = pc_table_queue_frames(lim);
			if (frames == 0)
				continue;
			s->queue = create_queue(t->generation, p, d, frames);
			if (s->queue == NULL) {
				PC_LOG(ERR, "cannot create the shaping queue of pod %s: %s\n",
				       cfg->pods[p].id, rte_strerror(rte_errno));
				return -1;
			}
		}
	}
	return create_windows(t, hz, now);
}

/*
 * The budgets of the pods of uplinks with several queues. The first
 * table's start empty now, as its buckets do (create_shapers), so a pod's
 * first frames find what the time until the ports deliver them earned. A
 * reload's are held until a worker takes the table: it is built ahead of
 * its boundary, and what the old table's workers pass until then is the
 * old budgets'.
 */
static int
create_budgets(struct pc_table *t, uint64_t hz)
{
	const struct pc_config *cfg = &t->cfg;
	bool any = false;
	uint64_t now = rte_rdtsc();

	for (unsigned u = 0; u < cfg->nuplinks; u++)
		any |= t->uplinks[u].nqueues > 1;
	if (!any)
		return 0;
	t->budgets =
	    rte_zmalloc("pc_budgets", sizeof(*t->budgets) * RTE_MAX(cfg->npods, 1u) * PC_DIR_COUNT,
			RTE_CACHE_LINE_SIZE);
	if (t->budgets == NULL) {
		PC_LOG(ERR, "out of memory for %u budgets\n", cfg->npods * PC_DIR_COUNT);
		return -1;
	}
	for (unsigned p = 0; p < cfg->npods; p++) {
		const struct pc_pod *pod = &cfg->pods[p];
		unsigned nq = t->uplinks[pod->uplink].nqueues;
		if (nq == 1)
			continue;
		for (unsigned d = 0; d < PC_DIR_COUNT; d++) {
			struct pc_budget *b = &t->budgets[p * PC_DIR_COUNT + d];
			struct pc_error err;
			int r = pc_budget_init(b, &pod->limits, nq, cfg->max_frame, hz, now, &err);
			if (r < 0) {
				PC_LOG(ERR, "pod %s: %s\n", pod->id, err.msg);
				return -1;
			}
			if (t->generation != 0)
				pc_budget_hold(b);
		}
	}
	return 0;
}

/* Each pod's tag stack, and which uplinks compare frames' stacks with them. */
static int
pod_vlans(struct pc_table *t)
{
	t->pod_vlan = calloc(RTE_MAX(t->cfg.npods, 1u), sizeof(t->pod_vlan[0]));
	if (t->pod_vlan == NULL)
		return -1;
	for (unsigned p = 0; p < t->cfg.npods; p++) {
		t->pod_vlan[p] = t->cfg.pods[p].vlan;
		if (t->pod_vlan[p] != PC_VLAN_NONE)
			t->uplinks[t->cfg.pods[p].uplink].vlans = true;
	}
	return 0;
}

struct pc_table *
pc_table_create(struct pc_config *cfg, const uint16_t (*ports)[PC_DIR_COUNT],
		unsigned nworkers, uint64_t hz, unsigned generation)
{
	struct pc_table *t = calloc(1, sizeof(*t));
	if (t == NULL)
		return NULL;
	t->cfg = *cfg;
	memset(cfg, 0, sizeof(*cfg));
	t->generation = generation;
	pc_config_digest(&t->cfg, t->digest);

	for (unsigned u = 0; u < t->cfg.nuplinks; u++) {
		struct pc_table_uplink *tu = &t->uplinks[u];
		tu->port[PC_DIR_UP] = ports[u][PC_DIR_UP];
		tu->port[PC_DIR_DOWN] = ports[u][PC_DIR_DOWN];
		tu->worker = u % nworkers;
		tu->nqueues = t->cfg.uplinks[u].workers;
		tu->only_pod = -1;
		if (tu->nqueues > nworkers) {
			PC_LOG(
			    ERR,
			    "uplink %s has %u workers, but dpdk.lcores leaves %u worker lcores\n",
			    t->cfg.uplinks[u].name, tu->nqueues, nworkers);
			pc_table_free(t);
			return NULL;
		}
	}
	t->nworkers = nworkers;
	for (unsigned p = 0; p < t->cfg.npods; p++) {
		const struct pc_pod *pod = &t->cfg.pods[p];
		if (t->cfg.uplinks[pod->uplink].npods == 1 && pod->nprefixes == 0)
			t->uplinks[pod->uplink].only_pod = (int32_t)p;
	}

	RTE_BUILD_BUG_ON(PC_MAX_UPLINKS > UINT8_MAX + 1);
	t->pod_uplink = malloc(RTE_MAX(t->cfg.npods, 1u));
	if (t->pod_uplink == NULL) {
		pc_table_free(t);
		return NULL;
	}
	for (unsigned p = 0; p < t->cfg.npods; p++)
		t->pod_uplink[p] = (uint8_t)t->cfg.pods[p].uplink;
	if (pod_vlans(t) < 0) {
		pc_table_free(t);
		return NULL;
	}

	if (add_prefixes(t) < 0 || create_shapers(t, hz) < 0 || create_budgets(t, hz) < 0) {
		pc_table_free(t);
		return NULL;
	}
	return t;
}

static void
drain_shaper(struct pc_shaper *s)
{
	struct rte_mbuf *m;

	if (s->head != NULL) {
		rte_pktmbuf_free(s->head);
		s->head = NULL;
	}
	if (s->queue == NULL)
		return;
	while (rte_ring_dequeue(s->queue, (void **)&m) == 0)
		rte_pktmbuf_free(m);
	rte_free(s->queue);
	s->queue = NULL;
}

int
pc_table_link_prev(struct pc_table *t, struct pc_table *prev)
{
	t->prev_index = calloc(RTE_MAX(t->cfg.npods, 1u), sizeof(*t->prev_index));
	if (t->prev_index == NULL)
		return -1;
	t->prev = prev;
	for (unsigned p = 0; p < t->cfg.npods; p++) {
		const struct pc_pod *pod = &t->cfg.pods[p];
		int op = pc_config_find_pod(&prev->cfg, pod->id);
		if (op >= 0 && strcmp(prev->cfg.uplinks[prev->cfg.pods[op].uplink].name,
				      t->cfg.uplinks[pod->uplink].name) != 0)
			op = -1;
		t->prev_index[p] = op;
	}
	return 0;
}

void
pc_table_free(struct pc_table *t)
{
	if (t == NULL)
		return;
	if (t->shapers != NULL) {
		for (unsigned i = 0; i < t->cfg.npods * PC_DIR_COUNT; i++)
			drain_shaper(&t->shapers[i]);
		rte_free(t->shapers);
	}
	rte_free(t->windows);
	rte_free(t->budgets);
	rte_lpm_free(t->lpm4);
	rte_lpm6_free(t->lpm6);
	free(t->prev_index);
	free(t->pod_uplink);
	free(t->pod_vlan);
	pc_config_free(&t->cfg);
	free(t);
}
