/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The tap's data path: receive copies of an uplink's frames, classify them
 * as the shaper does (burst.c), count them, free them. A tap enforces
 * nothing and never transmits: each frame of a pod counts as passed (what
 * crossed the tap's point of the wire), runts, oversized and unmapped frames
 * as the shaper's link drops. No locks, no allocation, no system calls per
 * frame; once per window per port it reads the port's counters of frames
 * it could not deliver (docs/reconcile.md, "What a tap did not see"). With
 * appliance.slice it also counts, per pod and direction, what it counted
 * in the first and the last slice of each window ("Boundary slices"): the
 * boundaries are armed ahead, so which slice a burst is in is two compares
 * with the TSC the burst was read at, once per burst.
 */
#include <fcntl.h>
#include <net/if.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_branch_prediction.h>
#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>

#include "shape/counters.h"

#include "burst.h"
#include "control.h"
#include "dataplane.h"
#include "log.h"

/* The port counters read at the last boundary, per worker: private to it. */
struct tap_mark {
	uint64_t missed, nombuf, errors;
	int fd;          /* af_packet: its interface's rx_packets in sysfs, else -1 */
	uint64_t behind; /* the most the kernel's count was ahead of the port's */
};

#define DRAIN_BURSTS 8

static struct tap_mark marks[RTE_MAX_LCORE][PC_MAX_UPLINKS][PC_DIR_COUNT];

/* Which slices of its window a burst is in. */
#define IN_FIRST 0x1
#define IN_LAST  0x2

/* Where a worker's slices are, in TSC ticks: private to it. */
struct tap_slicer {
	uint64_t len;         /* appliance.slice; 0: no slices */
	uint64_t first_until; /* the first slice of the window it counts in ends here */
	bool armed_seen;      /* it has seen the end of that window armed */
};

static struct tap_slicer slicers[RTE_MAX_LCORE];

/*
 * A slice in TSC ticks, never shorter than the one declared: rounded up,
 * and longer by the 20 ppm the measured TSC frequency may be off by.
 */
static uint64_t
slice_ticks(uint64_t ns)
{
	unsigned __int128 t = ((unsigned __int128)ns * pc_dp.hz + 999999999u) / 1000000000u;

	if (ns == 0)
		return 0;
	return (uint64_t)(t + t / 50000 + 1);
}

/*
 * The slices a burst read at now is in: the first from the boundary the
 * worker took, the last from a slice before the next one, once armed. A
 * worker that first sees the next boundary armed less than a slice ahead
 * has counted some of the last slice's bursts outside it: it says so
 * (PC_SLICE_LAST_SHORT), and the verifier does not use that slice.
 */
static unsigned
slice_of(struct pc_worker *w, struct tap_slicer *sl, uint64_t now)
{
	if (sl->len == 0)
		return 0;
	unsigned in = now < sl->first_until ? IN_FIRST : 0;
	if (__atomic_load_n(&pc_dp.switch_epoch, __ATOMIC_ACQUIRE) == w->epoch)
		return in;
	uint64_t end = __atomic_load_n(&pc_dp.switch_tsc, __ATOMIC_RELAXED);
	bool near = now + sl->len >= end;
	if (!sl->armed_seen) {
		sl->armed_seen = true;
		if (near)
			w->bank->last_short = true;
	}
	return in | (near ? IN_LAST : 0);
}

/* A new window: its first slice runs a slice from the boundary just taken. */
static void
slice_boundary(struct tap_slicer *sl)
{
	sl->first_until = __atomic_load_n(&pc_dp.switch_tsc, __ATOMIC_RELAXED) + sl->len;
	sl->armed_seen = false;
}

static void
count_slice(struct pc_worker *w, unsigned in, int32_t pod, enum pc_dir d, uint64_t frames,
	    uint64_t bytes)
{
	struct pc_slice_ctr *k = &w->bank->slice[pod][d];

	if (in & IN_FIRST) {
		pc_ctr_add(&k->first_frames, frames);
		pc_ctr_add(&k->first_bytes, bytes);
	}
	if (in & IN_LAST) {
		pc_ctr_add(&k->last_frames, frames);
		pc_ctr_add(&k->last_bytes, bytes);
	}
}

/*
 * Counts a received burst as the shaper classifies it, and frees it: one
 * counter update per run of one pod's frames, as the shaper counts what it
 * passed (a burst of one pod is one update, not one per frame).
 */
static void
observe(struct pc_worker *w, const struct pc_table *t, unsigned u, enum pc_dir d, unsigned in,
	struct rte_mbuf **pkts, uint16_t n)
{
	struct pc_burst_class c;

	pc_burst_classify(t, u, d, pkts, n, &c);
	for (uint16_t i = 0; i < n;) {
		int32_t pod = c.pod[i];
		if (pod < 0) {
			pc_link_ctr_drop(&w->bank->link[u][d], c.why[i], c.len[i]);
			i++;
			continue;
		}
		uint64_t bytes = 0;
		uint16_t j = i;
		do
			bytes += c.len[j++];
		while (j < n && c.pod[j] == pod);
		struct pc_pod_ctr *k = &w->bank->pod[pod][d];
		pc_ctr_add(&k->pass_frames, j - i);
		pc_ctr_add(&k->pass_bytes, bytes);
		if (in != 0)
			count_slice(w, in, pod, d, j - i, bytes);
		i = j;
	}
	rte_pktmbuf_free_bulk(pkts, n);
}

/*
 * DPDK 22.11's net_af_packet reports no imissed: the frames its kernel ring
 * dropped are only in the interface's count of frames received, which the
 * port's count of frames delivered then trails. Opened once, at start.
 */
static int
kernel_counter(const char *devargs)
{
	const char *p = strstr(devargs, "iface=");
	char name[IF_NAMESIZE], path[96];

	if (strncmp(devargs, "net_af_packet", 13) != 0 || p == NULL)
		return -1;
	p += 6;
	size_t n = strcspn(p, ",");
	if (n == 0 || n >= sizeof(name))
		return -1;
	memcpy(name, p, n);
	name[n] = '\0';
	snprintf(path, sizeof(path), "/sys/class/net/%s/statistics/rx_packets", name);
	return open(path, O_RDONLY | O_CLOEXEC);
}

static bool
kernel_read(int fd, uint64_t *v)
{
	char buf[32];
	ssize_t n = fd < 0 ? -1 : pread(fd, buf, sizeof(buf) - 1, 0);

	if (n <= 0)
		return false;
	buf[n] = '\0';
	*v = strtoull(buf, NULL, 10);
	return true;
}

/*
 * How far the kernel's count is ahead of the port's: frames dropped, or
 * still on their way into the ring. Only a new largest lag is charged, so
 * frames in flight at one boundary are not charged again at the next; a
 * loss hides only while the lag stays below the largest seen before.
 */
static uint64_t
kernel_missed(struct tap_mark *mk, bool have, uint64_t kernel, uint64_t delivered)
{
	uint64_t lag = kernel > delivered ? kernel - delivered : 0;

	if (!have || lag <= mk->behind)
		return 0;
	uint64_t n = lag - mk->behind;
	mk->behind = lag;
	return n;
}

/*
 * Receives what waits in the port's ring, into the bank counted in: it
 * arrived before now, so in the window's last slice.
 */
static void
drain(struct pc_worker *w, const struct pc_table *t, unsigned u, enum pc_dir d)
{
	struct rte_mbuf *pkts[PC_BURST];
	unsigned in = slicers[w->index].len != 0 ? IN_LAST : 0;

	for (int k = 0; k < DRAIN_BURSTS; k++) {
		uint16_t n = rte_eth_rx_burst(t->uplinks[u].port[d], 0, pkts, PC_BURST);
		observe(w, t, u, d, in, pkts, n);
		if (n < PC_BURST)
			return;
	}
}

/*
 * Charges what each port of this worker's uplinks could not deliver since
 * the last reading to the bank it counts in. Called at each boundary, while
 * the bank of the closing window is still the one counted in, and at stop.
 */
static void
read_losses(struct pc_worker *w, const struct pc_table *t)
{
	for (unsigned u = 0; u < t->cfg.nuplinks; u++) {
		if (t->uplinks[u].worker != w->index)
			continue;
		for (unsigned d = 0; d < PC_DIR_COUNT; d++) {
			struct tap_mark *mk = &marks[w->index][u][d];
			struct rte_eth_stats st;
			uint64_t kernel = 0;
			bool have = kernel_read(mk->fd, &kernel);
			drain(w, t, u, (enum pc_dir)d);
			if (rte_eth_stats_get(t->uplinks[u].port[d], &st) != 0)
				continue;
			struct pc_seen_ctr *c = &w->bank->seen[u][d];
			pc_ctr_add(&c->missed,
				   st.imissed - mk->missed +
				       kernel_missed(mk, have, kernel, st.ipackets));
			pc_ctr_add(&c->nombuf, st.rx_nombuf - mk->nombuf);
			pc_ctr_add(&c->errors, st.ierrors - mk->errors);
			mk->missed = st.imissed;
			mk->nombuf = st.rx_nombuf;
			mk->errors = st.ierrors;
		}
	}
}

/* What the port reported before the tap counted anything is no window's. */
static void
mark_start(struct pc_worker *w, const struct pc_table *t)
{
	for (unsigned u = 0; u < t->cfg.nuplinks; u++)
		for (unsigned d = 0; d < PC_DIR_COUNT; d++) {
			struct tap_mark *mk = &marks[w->index][u][d];
			struct rte_eth_stats st;
			uint64_t kernel = 0;

			if (t->uplinks[u].worker != w->index)
				continue;
			mk->fd = kernel_counter(d == PC_DIR_UP ? t->cfg.uplinks[u].pod_port
							       : t->cfg.uplinks[u].fabric_port);
			bool have = kernel_read(mk->fd, &kernel);
			if (rte_eth_stats_get(t->uplinks[u].port[d], &st) != 0)
				continue;
			mk->missed = st.imissed;
			mk->nombuf = st.rx_nombuf;
			mk->errors = st.ierrors;
			mk->behind = 0;
			(void)kernel_missed(mk, have, kernel, st.ipackets);
		}
}

void
pc_tap_collect(struct pc_window *win, struct pc_bank *b, const struct pc_config *cfg)
{
	for (unsigned u = 0; u < cfg->nuplinks; u++)
		for (unsigned d = 0; d < PC_DIR_COUNT; d++) {
			win->seen[u][d].missed += pc_ctr_read(&b->seen[u][d].missed);
			win->seen[u][d].nombuf += pc_ctr_read(&b->seen[u][d].nombuf);
			win->seen[u][d].errors += pc_ctr_read(&b->seen[u][d].errors);
		}
	memset(b->seen, 0, sizeof(b->seen[0]) * cfg->nuplinks);
	if (cfg->slice_ns == 0)
		return;
	for (unsigned p = 0; p < cfg->npods; p++)
		for (unsigned d = 0; d < PC_DIR_COUNT; d++) {
			struct pc_slice_ctr *c = &win->slice[p][d];
			const struct pc_slice_ctr *k = &b->slice[p][d];
			c->first_bytes += pc_ctr_read(&k->first_bytes);
			c->first_frames += pc_ctr_read(&k->first_frames);
			c->last_bytes += pc_ctr_read(&k->last_bytes);
			c->last_frames += pc_ctr_read(&k->last_frames);
		}
	win->last_short |= b->last_short;
	memset(b->slice, 0, sizeof(b->slice[0]) * cfg->npods);
	b->last_short = false;
}

int
pc_tap_main(void *arg)
{
	struct pc_worker *w = arg;
	struct rte_mbuf *pkts[PC_BURST];

	/* a tap's table has no shaping queue in use: only its LPM tables and uplinks */
	struct tap_slicer *sl = &slicers[w->index];

	w->table = __atomic_load_n(&pc_dp.table, __ATOMIC_ACQUIRE);
	mark_start(w, w->table);
	/* fixed for a run; the window it starts in began before it: no first slice */
	*sl = (struct tap_slicer){ .len = slice_ticks(w->table->cfg.slice_ns) };
	PC_LOG(INFO, "tap worker %u running on lcore %u\n", w->index, w->lcore);
	while (!__atomic_load_n(&pc_dp.stop, __ATOMIC_RELAXED)) {
		uint64_t now = rte_rdtsc();
		if (unlikely(now >= __atomic_load_n(&pc_dp.switch_tsc, __ATOMIC_RELAXED)) &&
		    __atomic_load_n(&pc_dp.switch_epoch, __ATOMIC_ACQUIRE) != w->epoch) {
			/* losses up to now belong to the window that closes: read into its bank */
			read_losses(w, w->table);
			pc_worker_take_boundary(w, now);
			slice_boundary(sl);
		}
		const struct pc_table *t = w->table;
		unsigned in = slice_of(w, sl, now);

		for (unsigned u = 0; u < t->cfg.nuplinks; u++) {
			/* the queue this worker reads on the uplink, as the shaper's workers do */
			int q = pc_table_queue_of(t, u, w->index);
			if (q < 0)
				continue;
			for (unsigned d = 0; d < PC_DIR_COUNT; d++) {
				uint16_t n = rte_eth_rx_burst(t->uplinks[u].port[d], (uint16_t)q,
							      pkts, PC_BURST);
				observe(w, t, u, (enum pc_dir)d, in, pkts, n);
			}
		}
		__atomic_store_n(&w->loops, w->loops + 1, __ATOMIC_RELAXED);
	}
	read_losses(w, w->table);
	for (unsigned u = 0; u < PC_MAX_UPLINKS; u++)
		for (unsigned d = 0; d < PC_DIR_COUNT; d++)
			if (marks[w->index][u][d].fd > 0)
				close(marks[w->index][u][d].fd);
	PC_LOG(INFO, "tap worker %u stopped\n", w->index);
	return 0;
}
