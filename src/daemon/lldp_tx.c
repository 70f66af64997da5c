/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * podcapd's own LLDPDUs (lldp_tx.h).
 */
#include <errno.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>

#include "base/clock.h"
#include "shape/lldp.h"

#include "links.h"
#include "lldp_tx.h"
#include "log.h"

#define NS_PER_SEC 1000000000ull

struct tx_port {
	uint16_t id;
	uint16_t queue; /* the control thread's TX queue, when fd < 0 */
	int fd;         /* net_af_packet: a packet socket of its own, or -1 */
	int ifindex;    /* its interface */
	uint8_t mac[6]; /* the port's address, to which the frames go from */
	size_t len[2];  /* [0]: the announcement, [1]: the shutdown LLDPDU */
	uint8_t frame[2][PC_LLDP_FRAME_MAX];
	bool failing; /* the last frame failed: said once */
};

static struct {
	unsigned interval_s; /* 0: off */
	bool started;
	uint64_t next_ns; /* CLOCK_MONOTONIC of the next round */
	struct rte_mempool *pool;
	struct tx_port port[PC_MAX_UPLINKS][PC_DIR_COUNT];
	/* control wo (relaxed); readers ro (relaxed) */
	struct pc_lldp_tx_counts counts;
} tx;

const char *
pc_lldp_tx_result_name(enum pc_lldp_tx_result r)
{
	return r == PC_LLDP_TX_SENT ? "sent" : r == PC_LLDP_TX_FAILED ? "failed" : "unknown";
}

int
pc_lldp_tx_parse_interval(const char *s, unsigned *out)
{
	char *end;
	unsigned long v;

	if (s == NULL || s[0] < '0' || s[0] > '9')
		return -1;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno != 0 || *end != '\0' || v < 1 || v > PC_LLDP_TX_MAX_S)
		return -1;
	*out = (unsigned)v;
	return 0;
}

void
pc_lldp_tx_enable(unsigned interval_s)
{
	tx.interval_s = interval_s;
}

bool
pc_lldp_tx_enabled(void)
{
	return tx.interval_s != 0;
}

/* What the appliance calls itself: its host name, else the pod map's appliance id. */
static void
system_name(const struct pc_config *cfg, char *out, size_t n)
{
	if (gethostname(out, n) != 0 || out[0] == '\0') {
		snprintf(out, n, "%s", cfg->appliance_id);
		return;
	}
	out[n - 1] = '\0';
}

/* Port (u, d)'s two frames. */
static int
build(const struct pc_config *cfg, unsigned u, unsigned d, const uint8_t chassis[6],
      const char *name)
{
	struct tx_port *p = &tx.port[u][d];
	const char *side = pc_links_side_name((enum pc_dir)d);
	char port_id[2 * PC_ID_LEN], desc[4 * PC_ID_LEN];
	struct pc_error err;

	snprintf(port_id, sizeof(port_id), "%s/%s", cfg->uplinks[u].name, side);
	snprintf(desc, sizeof(desc), "podcap appliance %s, uplink %s, %s side", cfg->appliance_id,
		 cfg->uplinks[u].name, side);
	struct pc_lldp_announce a = {
		.port_id = port_id,
		.port_desc = desc,
		.system_name = name,
		.system_desc = "podcapd " PODCAP_VERSION,
	};
	memcpy(a.src_mac, p->mac, 6);
	memcpy(a.chassis_mac, chassis, 6);
	for (unsigned shutdown = 0; shutdown < 2; shutdown++) {
		a.ttl = shutdown ? 0 : (uint16_t)(PC_LLDP_TX_HOLD * tx.interval_s);
		if (pc_lldp_build_frame(&a, p->frame[shutdown], sizeof(p->frame[shutdown]),
					&p->len[shutdown], &err) != 0) {
			PC_LOG(ERR, "uplink %s %s port: its LLDPDU: %s\n", cfg->uplinks[u].name,
			       side, err.msg);
			return -1;
		}
	}
	return 0;
}

/* A send-only packet socket on ifindex, past the qdisc (see lldp_tx.h). */
static int
kernel_socket(int ifindex)
{
	struct sockaddr_ll sa = { .sll_family = AF_PACKET, .sll_ifindex = ifindex };
	int one = 1;
	/* protocol 0: it receives nothing */
	int fd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return -1;
	if (setsockopt(fd, SOL_PACKET, PACKET_QDISC_BYPASS, &one, sizeof(one)) != 0 ||
	    bind(fd, (const struct sockaddr *)&sa, sizeof(sa)) != 0) {
		int e = errno;
		close(fd);
		errno = e;
		return -1;
	}
	return fd;
}

/* Port (u, d)'s way out: the queue after its workers', else its interface. */
static int
way_out(const struct pc_config *cfg, unsigned u, unsigned d, bool *needs_pool)
{
	struct tx_port *p = &tx.port[u][d];
	const char *side = pc_links_side_name((enum pc_dir)d);
	unsigned workers = cfg->uplinks[u].workers;
	struct rte_eth_dev_info info;

	p->fd = -1;
	if (rte_eth_dev_info_get(p->id, &info) != 0) {
		PC_LOG(ERR, "uplink %s %s port %u: no device information\n", cfg->uplinks[u].name,
		       side, p->id);
		return -1;
	}
	if (info.nb_tx_queues > workers) {
		p->queue = (uint16_t)workers;
		*needs_pool = true;
		return 0;
	}
	if (info.driver_name != NULL && strcmp(info.driver_name, "net_af_packet") == 0 &&
	    info.if_index > 0) {
		p->ifindex = (int)info.if_index;
		p->fd = kernel_socket(p->ifindex);
		if (p->fd >= 0)
			return 0;
		PC_LOG(ERR, "uplink %s %s port: a packet socket for LLDP: %s\n",
		       cfg->uplinks[u].name, side, strerror(errno));
		return -1;
	}
	PC_LOG(ERR,
	       "uplink %s %s port %u: --lldp-tx needs a transmit queue beyond its %u workers' "
	       "and the device (%s) has %u\n",
	       cfg->uplinks[u].name, side, p->id, workers,
	       info.driver_name != NULL ? info.driver_name : "?", info.nb_tx_queues);
	return -1;
}

static int
create_pool(unsigned nports)
{
	unsigned n = nports * (PC_LLDP_TX_DESC + 4);

	tx.pool = rte_pktmbuf_pool_create("pc_lldp_tx", n, 0, 0, RTE_MBUF_DEFAULT_BUF_SIZE,
					  (int)rte_socket_id());
	if (tx.pool == NULL)
		PC_LOG(ERR, "cannot create the LLDP pool of %u mbufs: %s\n", n,
		       rte_strerror(rte_errno));
	return tx.pool == NULL ? -1 : 0;
}

int
pc_lldp_tx_start(const struct pc_config *cfg, const uint16_t (*ports)[PC_DIR_COUNT])
{
	struct rte_ether_addr chassis;
	char name[256];
	bool needs_pool = false;

	if (tx.interval_s == 0)
		return 0;
	/* the appliance's chassis id: the first port's address, the same on every port */
	if (cfg->nuplinks == 0 || rte_eth_macaddr_get(ports[0][PC_DIR_UP], &chassis) != 0) {
		PC_LOG(ERR, "--lldp-tx: no address for the chassis id\n");
		return -1;
	}
	system_name(cfg, name, sizeof(name));
	memset(&tx.counts, 0, sizeof(tx.counts));
	for (unsigned u = 0; u < cfg->nuplinks; u++) {
		snprintf(tx.counts.uplink[u], PC_ID_LEN, "%s", cfg->uplinks[u].name);
		for (unsigned d = 0; d < PC_DIR_COUNT; d++) {
			struct tx_port *p = &tx.port[u][d];
			struct rte_ether_addr mac;
			p->id = ports[u][d];
			if (rte_eth_macaddr_get(p->id, &mac) != 0) {
				PC_LOG(ERR, "uplink %s: no address for port %u\n",
				       cfg->uplinks[u].name, p->id);
				return -1;
			}
			memcpy(p->mac, mac.addr_bytes, 6);
			p->failing = false;
			if (build(cfg, u, d, chassis.addr_bytes, name) != 0 ||
			    way_out(cfg, u, d, &needs_pool) != 0)
				return -1;
		}
	}
	if (needs_pool && create_pool(2 * cfg->nuplinks) != 0)
		return -1;
	tx.counts.nuplinks = cfg->nuplinks;
	tx.next_ns = pc_mono_ns();
	tx.started = true;
	PC_LOG(NOTICE, "LLDP: announcing '%s' on every port every %u s (TTL %u s)\n", name,
	       tx.interval_s, PC_LLDP_TX_HOLD * tx.interval_s);
	return 0;
}

static bool
send_dpdk(struct tx_port *p, const uint8_t *frame, size_t len)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(tx.pool);

	if (m == NULL)
		return false;
	char *data = rte_pktmbuf_append(m, (uint16_t)len);
	if (data == NULL) {
		rte_pktmbuf_free(m);
		return false;
	}
	memcpy(data, frame, len);
	if (rte_eth_tx_burst(p->id, p->queue, &m, 1) == 1)
		return true;
	rte_pktmbuf_free(m);
	return false;
}

static bool
send_kernel(const struct tx_port *p, const uint8_t *frame, size_t len)
{
	struct sockaddr_ll sa = { .sll_family = AF_PACKET,
				  .sll_ifindex = p->ifindex,
				  .sll_halen = 6 };

	memcpy(sa.sll_addr, frame, 6);
	return sendto(p->fd, frame, len, MSG_DONTWAIT, (const struct sockaddr *)&sa, sizeof(sa)) ==
	    (ssize_t)len;
}

/* Port (u, d)'s announcement, or its shutdown LLDPDU; counted, a failure logged once. */
static void
send_one(unsigned u, unsigned d, bool shutdown)
{
	struct tx_port *p = &tx.port[u][d];
	const uint8_t *f = p->frame[shutdown];
	bool ok =
	    p->fd >= 0 ? send_kernel(p, f, p->len[shutdown]) : send_dpdk(p, f, p->len[shutdown]);
	enum pc_lldp_tx_result r = ok ? PC_LLDP_TX_SENT : PC_LLDP_TX_FAILED;

	__atomic_fetch_add(&tx.counts.n[u][d][r], 1, __ATOMIC_RELAXED);
	if (!ok && !p->failing)
		PC_LOG(WARNING, "uplink %s %s port: an LLDP frame could not be sent%s%s\n",
		       tx.counts.uplink[u], pc_links_side_name((enum pc_dir)d),
		       p->fd >= 0 ? ": " : "", p->fd >= 0 ? strerror(errno) : "");
	else if (ok && p->failing)
		PC_LOG(NOTICE, "uplink %s %s port: LLDP frames are sent again\n",
		       tx.counts.uplink[u], pc_links_side_name((enum pc_dir)d));
	p->failing = !ok;
}

static void
send_all(bool shutdown)
{
	for (unsigned u = 0; u < tx.counts.nuplinks; u++)
		for (unsigned d = 0; d < PC_DIR_COUNT; d++)
			send_one(u, d, shutdown);
}

void
pc_lldp_tx_poll(void)
{
	if (!tx.started)
		return;
	uint64_t now = pc_mono_ns();
	if (now < tx.next_ns)
		return;
	/* from now, not from when it was due: a stalled thread does not send a burst */
	tx.next_ns = now + tx.interval_s * NS_PER_SEC;
	send_all(false);
}

void
pc_lldp_tx_stop(void)
{
	if (!tx.started)
		return;
	send_all(true);
	PC_LOG(INFO, "LLDP: shutdown LLDPDU sent on every port\n");
	tx.started = false;
	/* the pool goes with the EAL's memory, once the ports have let its mbufs go */
	for (unsigned u = 0; u < tx.counts.nuplinks; u++)
		for (unsigned d = 0; d < PC_DIR_COUNT; d++) {
			struct tx_port *p = &tx.port[u][d];
			if (p->fd >= 0)
				close(p->fd);
			p->fd = -1;
		}
}

void
pc_lldp_tx_counts(struct pc_lldp_tx_counts *out)
{
	unsigned n = __atomic_load_n(&tx.counts.nuplinks, __ATOMIC_RELAXED);

	memset(out, 0, sizeof(*out));
	out->nuplinks = n;
	for (unsigned u = 0; u < out->nuplinks; u++) {
		memcpy(out->uplink[u], tx.counts.uplink[u], PC_ID_LEN);
		for (unsigned d = 0; d < PC_DIR_COUNT; d++)
			for (unsigned r = 0; r < PC_LLDP_TX_RESULT_COUNT; r++)
				out->n[u][d][r] =
				    __atomic_load_n(&tx.counts.n[u][d][r], __ATOMIC_RELAXED);
	}
}
