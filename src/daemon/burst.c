/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Burst classification. Three passes over a burst of at most PC_BURST
 * frames: headers (with the frame PC_PREFETCH_AHEAD places on already
 * loading), prefix lookups in bulk (four IPv4 addresses at a time with
 * rte_lpm_lookupx4, the IPv6 addresses in one rte_lpm6_lookup_bulk_func
 * call), and the uplink check. No locks, no allocation, no system calls.
 * On an uplink of one pod without prefixes only the ethertype is read, so
 * that LLDP frames are told from the pod's.
 */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <rte_branch_prediction.h>
#include <rte_lpm.h>
#include <rte_lpm6.h>
#include <rte_mbuf.h>
#include <rte_prefetch.h>
#include <rte_vect.h>

#include "base/bytes.h"
#include "shape/classify.h"
#include "shape/lldp.h"

#include "burst.h"

#define ETH_HLEN          14
#define PC_PREFETCH_AHEAD 4
#define NO_POD            UINT32_MAX

/* The addresses of one burst waiting for their prefix lookup. */
struct lookups {
	uint16_t n4, n6;
	uint8_t at4[PC_BURST]; /* frame index of each IPv4 address */
	uint8_t at6[PC_BURST];
	uint32_t ip4[PC_BURST]; /* host order, as rte_lpm takes it */
	uint8_t ip6[PC_BURST][RTE_LPM6_IPV6_ADDR_SIZE];
	uint32_t vlan[PC_BURST]; /* each frame's tag stack (shape/classify.h) */
};

static inline void
prefetch_frame(struct rte_mbuf *m)
{
	rte_prefetch0(rte_pktmbuf_mtod(m, const void *));
}

static inline void
drop_as(struct pc_burst_class *c, uint16_t i, enum pc_link_drop why)
{
	c->pod[i] = -1;
	c->why[i] = (uint8_t)why;
}

/* The header pass for one frame: its verdict now, or its address queued for lookup. */
static inline void
read_header(const struct pc_table *t, enum pc_dir d, struct rte_mbuf *m, uint16_t i,
	    struct pc_burst_class *c, struct lookups *lk)
{
	uint32_t len = rte_pktmbuf_pkt_len(m);
	struct pc_frame_key key;

	c->len[i] = len;
	lk->vlan[i] = PC_VLAN_NONE;
	if (unlikely(len > t->cfg.max_frame || len < ETH_HLEN || m->nb_segs != 1)) {
		drop_as(c, i, PC_DROP_MALFORMED);
		return;
	}
	const uint8_t *frame = rte_pktmbuf_mtod(m, const uint8_t *);
	if (likely(pc_classify_ipv4_plain(frame, len, d, &lk->ip4[lk->n4]))) {
		lk->at4[lk->n4++] = (uint8_t)i;
		c->pod[i] = -1;
		return;
	}
	enum pc_class cls = pc_classify(frame, len, d, &key);
	lk->vlan[i] = key.vlan;
	switch (cls) {
	case PC_CLASS_IPV4:
		lk->at4[lk->n4] = (uint8_t)i;
		lk->ip4[lk->n4++] = pc_load_be32(key.addr);
		c->pod[i] = -1;
		return;
	case PC_CLASS_IPV6:
		lk->at6[lk->n6] = (uint8_t)i;
		memcpy(lk->ip6[lk->n6++], key.addr, RTE_LPM6_IPV6_ADDR_SIZE);
		c->pod[i] = -1;
		return;
	case PC_CLASS_MALFORMED:
		drop_as(c, i, PC_DROP_MALFORMED);
		return;
	case PC_CLASS_LLDP:
		drop_as(c, i, PC_DROP_UNMAPPED);
		c->lldp |= 1u << i;
		return;
	default:
		drop_as(c, i, PC_DROP_UNMAPPED);
		return;
	}
}

/*
 * A looked-up pod stands only if it belongs to this uplink and, on an
 * uplink with pods of pods[].vlan, the frame has the pod's tag stack: its
 * address under another is a neighbour's (or a stranger's) claim to it.
 */
static inline void
resolve(const struct pc_table *t, unsigned u, uint32_t pod, uint16_t i, const struct lookups *lk,
	struct pc_burst_class *c)
{
	if (unlikely(pod == NO_POD || t->pod_uplink[pod] != u))
		drop_as(c, i, PC_DROP_UNMAPPED);
	else if (unlikely(t->uplinks[u].vlans && !pc_vlan_admits(t->pod_vlan[pod], lk->vlan[i])))
		drop_as(c, i, PC_DROP_SPOOFED);
	else
		c->pod[i] = (int32_t)pod;
}

static void
lookup4(const struct pc_table *t, unsigned u, const struct lookups *lk, struct pc_burst_class *c)
{
	uint16_t k = 0;

	for (; k + 4 <= lk->n4; k += 4) {
		rte_xmm_t ips;
		uint32_t hop[4];
		memcpy(ips.u32, &lk->ip4[k], sizeof(ips.u32));
		rte_lpm_lookupx4(t->lpm4, ips.x, hop, NO_POD);
		for (unsigned j = 0; j < 4; j++)
			resolve(t, u, hop[j], lk->at4[k + j], lk, c);
	}
	for (; k < lk->n4; k++) {
		uint32_t hop;
		if (rte_lpm_lookup(t->lpm4, lk->ip4[k], &hop) != 0)
			hop = NO_POD;
		resolve(t, u, hop, lk->at4[k], lk, c);
	}
}

static void
lookup6(const struct pc_table *t, unsigned u, struct lookups *lk, struct pc_burst_class *c)
{
	int32_t hop[PC_BURST];

	if (lk->n6 == 0)
		return;
	rte_lpm6_lookup_bulk_func(t->lpm6, lk->ip6, hop, lk->n6);
	for (uint16_t k = 0; k < lk->n6; k++)
		resolve(t, u, hop[k] < 0 ? NO_POD : (uint32_t)hop[k], lk->at6[k], lk, c);
}

/*
 * On an uplink of one pod, the only header read: its ethertype, and where
 * it is a tag's, the classifier's word.
 */
static inline bool
is_lldp(const uint8_t *frame, uint32_t len)
{
	uint16_t type = pc_load_be16(frame + ETH_HLEN - 2);
	struct pc_frame_key key;

	if (likely(type != PC_LLDP_ETHERTYPE && type != 0x8100 && type != 0x88a8 && type != 0x9100))
		return false;
	return pc_classify(frame, len, PC_DIR_UP, &key) == PC_CLASS_LLDP;
}

/* The uplink's one pod for every frame but the malformed and LLDP ones. */
static void
classify_only(const struct pc_table *t, int32_t only, struct rte_mbuf *const *pkts, uint16_t n,
	      struct pc_burst_class *out)
{
	for (uint16_t i = 0; i < n && i < PC_PREFETCH_AHEAD; i++)
		prefetch_frame(pkts[i]);
	for (uint16_t i = 0; i < n; i++) {
		struct rte_mbuf *m = pkts[i];
		uint32_t len = rte_pktmbuf_pkt_len(m);
		if (i + PC_PREFETCH_AHEAD < n)
			prefetch_frame(pkts[i + PC_PREFETCH_AHEAD]);
		out->len[i] = len;
		out->pod[i] = only;
		if (unlikely(len > t->cfg.max_frame || len < ETH_HLEN || m->nb_segs != 1)) {
			drop_as(out, i, PC_DROP_MALFORMED);
		} else if (unlikely(is_lldp(rte_pktmbuf_mtod(m, const uint8_t *), len))) {
			drop_as(out, i, PC_DROP_UNMAPPED);
			out->lldp |= 1u << i;
		}
	}
}

void
pc_burst_classify(const struct pc_table *t, unsigned u, enum pc_dir d, struct rte_mbuf *const *pkts,
		  uint16_t n, struct pc_burst_class *out)
{
	int32_t only = t->uplinks[u].only_pod;
	struct lookups lk;

	out->lldp = 0;
	if (only >= 0) {
		/* the pod is the uplink's: of the header only the ethertype is read */
		classify_only(t, only, pkts, n, out);
		return;
	}
	lk.n4 = 0;
	lk.n6 = 0;
	for (uint16_t i = 0; i < n && i < PC_PREFETCH_AHEAD; i++)
		prefetch_frame(pkts[i]);
	for (uint16_t i = 0; i < n; i++) {
		if (i + PC_PREFETCH_AHEAD < n)
			prefetch_frame(pkts[i + PC_PREFETCH_AHEAD]);
		read_header(t, d, pkts[i], i, out, &lk);
	}
	lookup4(t, u, &lk, out);
	lookup6(t, u, &lk, out);
}

void
pc_burst_prefetch(const struct pc_table *t, unsigned u, const struct pc_worker *w, enum pc_dir d,
		  const struct pc_burst_class *c, uint16_t n)
{
	bool shared = t->uplinks[u].nqueues > 1;

	for (uint16_t i = 0; i < n; i++) {
		/* a run of one pod's frames loads its lines once */
		if (c->pod[i] < 0 || (i > 0 && c->pod[i] == c->pod[i - 1]))
			continue;
		uint32_t idx = (uint32_t)c->pod[i] * PC_DIR_COUNT + d;
		if (shared) {
			rte_prefetch0(&w->leases[idx]);
			rte_prefetch0(&t->budgets[idx].depth);
		} else {
			rte_prefetch0(&t->shapers[idx].bucket);
		}
		rte_prefetch0(&w->bank->pod[c->pod[i]][d]);
	}
}
