/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Link state and LLDP neighbours, kept by the control thread (links.h).
 */
#include <errno.h>
#include <net/if.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <rte_ethdev.h>
#include <rte_mbuf.h>
#include <rte_ring.h>

#include "base/clock.h"

#include "links.h"
#include "lldp_rx.h"
#include "log.h"

#define NS_PER_SEC 1000000000ull
/* a link is read this often without an interrupt: at least once in any window */
#define LINK_READ_NS NS_PER_SEC
/* frames parsed per port: 4 at once, then one each 250 ms (LLDP sends one each 30 s) */
#define LLDP_BURST    4
#define LLDP_EVERY_NS (NS_PER_SEC / 4)
/* a malformed frame is logged at most this often per port */
#define LOG_EVERY_NS (60 * NS_PER_SEC)

struct port {
	uint16_t id;
	char iface[IF_NAMESIZE]; /* net_af_packet's kernel interface, "" for others */
	struct pc_lldp_rate rate;
	uint64_t logged_ns; /* the last malformed frame logged */
	bool logged;
	bool lsc_pending; /* interrupt thread wo (release), control rw (acquire) */
};

static struct {
	bool started;
	unsigned nuplinks;
	uint64_t next_read_ns;
	int sock; /* for SIOCGIFFLAGS, or -1 */
	struct port port[PC_MAX_UPLINKS][PC_DIR_COUNT];
	/* what readers see: control writes, readers copy, both under lock */
	pthread_mutex_t lock;
	struct pc_links_snapshot state;
} links = { .sock = -1, .lock = PTHREAD_MUTEX_INITIALIZER };

const char *
pc_lldp_result_name(enum pc_lldp_result r)
{
	static const char *const names[] = { "ok", "malformed", "rate_limited", "queue_full" };

	return (unsigned)r < PC_LLDP_RESULT_COUNT ? names[r] : "unknown";
}

const char *
pc_links_side_name(enum pc_dir d)
{
	return d == PC_DIR_UP ? "pod" : "fabric";
}

/* The iface= of a net_af_packet device's arguments, whose carrier the driver does not report. */
static void
kernel_iface(const char *devargs, char *iface)
{
	const char *p = strstr(devargs, "iface=");

	iface[0] = '\0';
	if (strncmp(devargs, "net_af_packet", 13) != 0 || p == NULL)
		return;
	p += 6;
	size_t n = strcspn(p, ",");
	if (n == 0 || n >= IF_NAMESIZE)
		return;
	memcpy(iface, p, n);
	iface[n] = '\0';
}

/* The kernel's word on an interface: up and running (carrier). -1 when it cannot say. */
static int
kernel_carrier(const char *iface)
{
	struct ifreq ifr;

	if (links.sock < 0)
		return -1;
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", iface);
	if (ioctl(links.sock, SIOCGIFFLAGS, &ifr) != 0)
		return -1;
	return (ifr.ifr_flags & IFF_UP) && (ifr.ifr_flags & IFF_RUNNING);
}

static struct pc_link_change
read_link(const struct port *p, bool *kernel, uint64_t mono_ns, uint64_t real_ns)
{
	struct pc_link_change c = { .mono_ns = mono_ns, .real_ns = real_ns };
	struct rte_eth_link l;

	memset(&l, 0, sizeof(l));
	if (rte_eth_link_get_nowait(p->id, &l) != 0)
		l.link_status = RTE_ETH_LINK_DOWN;
	c.up = l.link_status == RTE_ETH_LINK_UP;
	int carrier = p->iface[0] != '\0' ? kernel_carrier(p->iface) : -1;
	*kernel = carrier >= 0;
	if (carrier == 0)
		c.up = false;
	c.full_duplex = c.up && l.link_duplex == RTE_ETH_LINK_FULL_DUPLEX;
	c.speed_mbps = c.up && l.link_speed != RTE_ETH_SPEED_NUM_UNKNOWN ? l.link_speed : 0;
	return c;
}

static bool
same_link(const struct pc_link_change *a, const struct pc_link_change *b)
{
	return a->up == b->up && a->full_duplex == b->full_duplex && a->speed_mbps == b->speed_mbps;
}

/* Reads port (u, d); a change is kept and logged. Under lock. */
static void
update_link(unsigned u, unsigned d, uint64_t mono_ns, uint64_t real_ns)
{
	struct pc_link_state *s = &links.state.port[u][d].link;
	bool kernel;
	struct pc_link_change c = read_link(&links.port[u][d], &kernel, mono_ns, real_ns);

	s->kernel_carrier = kernel;
	if (s->known && same_link(&s->now, &c))
		return;
	if (s->known) {
		s->history[s->changes % PC_LINK_HISTORY] = c;
		s->changes++;
		PC_LOG(NOTICE, "uplink %s %s port %u: link %s, %u Mbit/s%s\n",
		       links.state.uplink[u], pc_links_side_name((enum pc_dir)d),
		       links.port[u][d].id, c.up ? "up" : "down", c.speed_mbps,
		       c.up && !c.full_duplex ? ", half duplex" : "");
	}
	if (!s->known)
		s->first = c;
	s->known = true;
	s->now = c;
}

static void
log_malformed(unsigned u, unsigned d, const struct pc_error *err, uint64_t mono_ns)
{
	struct port *p = &links.port[u][d];

	if (p->logged && mono_ns - p->logged_ns < LOG_EVERY_NS)
		return;
	p->logged = true;
	p->logged_ns = mono_ns;
	PC_LOG(WARNING,
	       "uplink %s %s port: an LLDP frame refused (%s); the next in a minute at most\n",
	       links.state.uplink[u], pc_links_side_name((enum pc_dir)d), err->msg);
}

static void
log_neighbor(unsigned u, unsigned d, const struct pc_lldp_neighbor *n)
{
	char chassis[PC_LLDP_TEXT_LEN], port[PC_LLDP_TEXT_LEN], name[PC_LLDP_TEXT_LEN];

	if (!n->present) {
		PC_LOG(NOTICE, "uplink %s %s port: no LLDP neighbour any more\n",
		       links.state.uplink[u], pc_links_side_name((enum pc_dir)d));
		return;
	}
	PC_LOG(NOTICE, "uplink %s %s port: LLDP neighbour chassis %s port %s (%s), ttl %u s\n",
	       links.state.uplink[u], pc_links_side_name((enum pc_dir)d),
	       pc_lldp_render_id(&n->lldp.chassis, false, chassis),
	       pc_lldp_render_id(&n->lldp.port, true, port),
	       pc_lldp_render_bytes(n->lldp.name, n->lldp.name_len, name), n->lldp.ttl);
}

/* One frame of port (u, d), parsed if the rate allows. Under lock. */
static void
heard(unsigned u, unsigned d, const struct rte_mbuf *m, uint64_t mono_ns, uint64_t real_ns)
{
	struct pc_port_obs *o = &links.state.port[u][d];
	struct pc_error err;
	struct pc_lldp l;

	if (!pc_lldp_rate_take(&links.port[u][d].rate, mono_ns)) {
		o->lldp[PC_LLDP_RATE_LIMITED]++;
		return;
	}
	/* one segment: the worker dropped any other as malformed */
	if (pc_lldp_parse_frame(rte_pktmbuf_mtod(m, const uint8_t *), rte_pktmbuf_data_len(m), &l,
				&err) != 0) {
		o->lldp[PC_LLDP_MALFORMED]++;
		log_malformed(u, d, &err, mono_ns);
		return;
	}
	o->lldp[PC_LLDP_OK]++;
	if (pc_lldp_neighbor_heard(&o->neighbor, &l, mono_ns, real_ns))
		log_neighbor(u, d, &o->neighbor);
}

/* What the rings of port (u, d) hold: at most their size a poll. Under lock. */
static void
drain(unsigned u, unsigned d, uint64_t mono_ns, uint64_t real_ns)
{
	struct rte_mbuf *m[PC_LLDP_RING_SLOTS];

	for (unsigned q = 0; q < pc_lldp_rx.nqueues[u]; q++) {
		struct rte_ring *r = pc_lldp_rx.q[u][d][q].ring;
		unsigned n = r == NULL
		    ? 0
		    : rte_ring_sc_dequeue_burst(r, (void **)m, PC_LLDP_RING_SLOTS, NULL);
		for (unsigned i = 0; i < n; i++) {
			heard(u, d, m[i], mono_ns, real_ns);
			rte_pktmbuf_free(m[i]);
		}
	}
}

static uint64_t
queue_full(unsigned u, unsigned d)
{
	uint64_t n = 0;

	for (unsigned q = 0; q < pc_lldp_rx.nqueues[u]; q++)
		n += pc_ctr_read(&pc_lldp_rx.q[u][d][q].queue_full);
	return n;
}

int
pc_links_start(const struct pc_config *cfg, const uint16_t (*ports)[PC_DIR_COUNT])
{
	uint64_t mono = pc_mono_ns(), real = pc_now_ns();

	if (pc_lldp_rx_create(cfg) != 0)
		return -1;
	links.sock = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	pthread_mutex_lock(&links.lock);
	memset(&links.state, 0, sizeof(links.state));
	links.nuplinks = links.state.nuplinks = cfg->nuplinks;
	for (unsigned u = 0; u < cfg->nuplinks; u++) {
		const char *devs[PC_DIR_COUNT] = { cfg->uplinks[u].pod_port,
						   cfg->uplinks[u].fabric_port };
		snprintf(links.state.uplink[u], PC_ID_LEN, "%s", cfg->uplinks[u].name);
		for (unsigned d = 0; d < PC_DIR_COUNT; d++) {
			struct port *p = &links.port[u][d];
			struct rte_eth_dev_info info;
			p->id = ports[u][d];
			kernel_iface(devs[d], p->iface);
			pc_lldp_rate_init(&p->rate, LLDP_BURST, LLDP_EVERY_NS, mono);
			links.state.port[u][d].link.lsc = rte_eth_dev_info_get(p->id, &info) == 0 &&
			    info.dev_flags != NULL && (*info.dev_flags & RTE_ETH_DEV_INTR_LSC);
			update_link(u, d, mono, real);
			if (links.state.port[u][d].link.lsc &&
			    rte_eth_dev_callback_register(p->id, RTE_ETH_EVENT_INTR_LSC,
							  pc_links_lsc_event, NULL) != 0)
				links.state.port[u][d].link.lsc = false;
		}
	}
	links.next_read_ns = mono + LINK_READ_NS;
	links.started = true;
	pthread_mutex_unlock(&links.lock);
	return 0;
}

/* The ports an interrupt named, and every port once a second. Under lock. */
static void
read_links(uint64_t mono_ns, uint64_t real_ns)
{
	bool all = mono_ns >= links.next_read_ns;

	if (all)
		links.next_read_ns = mono_ns + LINK_READ_NS;
	for (unsigned u = 0; u < links.nuplinks; u++)
		for (unsigned d = 0; d < PC_DIR_COUNT; d++) {
			bool *pending = &links.port[u][d].lsc_pending;
			bool flagged = __atomic_exchange_n(pending, false, __ATOMIC_ACQ_REL);
			if (all || flagged)
				update_link(u, d, mono_ns, real_ns);
		}
}

void
pc_links_poll(void)
{
	if (!links.started)
		return;
	uint64_t mono = pc_mono_ns(), real = pc_now_ns();

	pthread_mutex_lock(&links.lock);
	read_links(mono, real);
	for (unsigned u = 0; u < links.nuplinks; u++)
		for (unsigned d = 0; d < PC_DIR_COUNT; d++) {
			struct pc_port_obs *o = &links.state.port[u][d];
			drain(u, d, mono, real);
			if (pc_lldp_neighbor_expire(&o->neighbor, mono))
				log_neighbor(u, d, &o->neighbor);
		}
	pthread_mutex_unlock(&links.lock);
}

void
pc_links_stop(void)
{
	pthread_mutex_lock(&links.lock);
	for (unsigned u = 0; links.started && u < links.nuplinks; u++)
		for (unsigned d = 0; d < PC_DIR_COUNT; d++)
			if (links.state.port[u][d].link.lsc)
				rte_eth_dev_callback_unregister(links.port[u][d].id,
								RTE_ETH_EVENT_INTR_LSC,
								pc_links_lsc_event, NULL);
	links.started = false;
	pthread_mutex_unlock(&links.lock);
	pc_lldp_rx_free();
	if (links.sock >= 0)
		close(links.sock);
	links.sock = -1;
}

int
pc_links_snapshot(struct pc_links_snapshot *out)
{
	int rc = -1;

	pthread_mutex_lock(&links.lock);
	if (links.started) {
		*out = links.state;
		out->mono_ns = pc_mono_ns();
		out->real_ns = pc_now_ns();
		for (unsigned u = 0; u < links.nuplinks; u++)
			for (unsigned d = 0; d < PC_DIR_COUNT; d++)
				out->port[u][d].lldp[PC_LLDP_QUEUE_FULL] = queue_full(u, d);
		rc = 0;
	}
	pthread_mutex_unlock(&links.lock);
	return rc;
}

int
pc_links_lsc_event(uint16_t port, enum rte_eth_event_type type, void *arg, void *out)
{
	(void)arg;
	(void)out;
	if (type != RTE_ETH_EVENT_INTR_LSC)
		return 0;
	/* the interrupt thread only flags the port: the control thread reads it */
	for (unsigned u = 0; u < links.nuplinks; u++)
		for (unsigned d = 0; d < PC_DIR_COUNT; d++)
			if (links.port[u][d].id == port)
				__atomic_store_n(&links.port[u][d].lsc_pending, true,
						 __ATOMIC_RELEASE);
	return 0;
}
