/* SPDX-License-Identifier: BSD-3-Clause */
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#include <rte_common.h>
#include <rte_errno.h>
#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <rte_pause.h>

#include "base/clock.h"
#include "base/error.h"
#include "base/hex.h"
#include "http/http.h"
#include "http/tls.h"
#include "base/units.h"

#include "daemon/control.h"
#include "daemon/dataplane.h"
#include "daemon/links.h"
#include "daemon/lldp_tx.h"
#include "daemon/log.h"
#include "metrics.h"
#include "witnesses.h"
#include "ports.h"
#include "daemon/recorder.h"
#include "daemon/reload.h"
#include "run.h"
#include "sd_notify.h"
#include "signals.h"
#include "daemon/timeline.h"
#include "daemon/tsc.h"
#include "daemon/watchdog.h"

#define POOL_CACHE 256
/* systemd's start timeout, extended for a wait, covers it and then this much more */
#define START_MARGIN_NS (30 * PC_NS_PER_SEC)
/* how long a stop waits for its last checkpoint to be logged and witnessed */
#define WITNESS_STOP_NS (3 * PC_NS_PER_SEC)

static struct pc_signer *signer_watched;   /* checked by the control thread while it sleeps */
static bool signer_gone;
static bool declaration_expired; /* the table in force ran out of its declaration */

/*
 * Fail closed: a map runs no longer than its auditor's declaration allows.
 * podcapd stops as at SIGTERM (the last window and STOP are logged) and
 * exits non-zero; it starts again only under a declaration in force.
 */
static bool
declaration_check(void)
{
	const struct pc_table *t = pc_dp.table;
	char when[PC_UTC_LEN];

	if (declaration_expired || t == NULL ||
	    pc_now_ns() < pc_declared_stop_ns(&t->decl, t->cfg.window_ns))
		return declaration_expired;
	pc_utc_format(t->decl.d.not_after_ns, when, sizeof(when));
	PC_LOG(CRIT,
	       "the auditor's declaration of the pod map in force expires at %s: stopping "
	       "forwarding (reload a map with a declaration in force, then start podcapd again)\n",
	       when);
	declaration_expired = true;
	return true;
}

/*
 * systemd's watchdog, checked between the control thread's sleeps every
 * half interval (as sd_watchdog_enabled(3) advises) from READY=1 on, when
 * systemd starts watching. Pinged only while the rule of watchdog.h holds.
 */
static struct {
	uint64_t period_ns;            /* between checks; 0: no watchdog (or stopping) */
	uint64_t next_ns;              /* CLOCK_MONOTONIC of the next check */
	uint64_t loops[RTE_MAX_LCORE]; /* each worker's loop counter at the last check */
	bool failing;                  /* the last check failed: said once, not at every check */
} wd;

/*
 * Nothing may be enforced that can no longer be signed: once the signer is
 * gone podcapd stops (last window and STOP are still logged, to be signed by
 * the next run) and exits non-zero, and its supervisor restarts it with a
 * fresh signer. A signer is never forked again from this process: it has
 * parsed frames, and the key must only ever enter a process that has not.
 */
static bool
signer_check(void)
{
	char why[64];

	if (signer_gone || signer_watched == NULL || pc_signer_alive(signer_watched))
		return signer_gone;
	pc_signer_describe_end(signer_watched, why, sizeof(why));
	PC_LOG(CRIT, "the signer process is lost (%s): no checkpoint can be signed any more; "
	       "stopping, to be restarted with a new signer\n", why);
	signer_gone = true;
	return true;
}

static void
read_loops(uint64_t loops[])
{
	for (unsigned i = 0; i < pc_dp.nworkers; i++)
		loops[i] = __atomic_load_n(&pc_dp.workers[i]->loops, __ATOMIC_RELAXED);
}

/* Once forwarding: from now on systemd expects the pings. */
static void
watchdog_arm(void)
{
	wd.period_ns = pd_sd_watchdog_ns() / 2;
	if (wd.period_ns == 0)
		return;
	read_loops(wd.loops);
	/* the first probe, for the first check to find answered */
	pc_signer_answers(signer_watched);
	wd.next_ns = pc_mono_ns() + wd.period_ns;
	PC_LOG(INFO,
	       "systemd watchdog: a ping every %.1f s while every worker loops and the "
	       "signer answers\n",
	       (double)wd.period_ns / 1e9);
}

/* Why the pings stop, in the log and in `systemctl status`. */
static void
watchdog_fault(int stuck)
{
	char why[128];

	if (stuck >= 0)
		snprintf(why, sizeof(why), "worker %d (lcore %u) has not looped in %.1f s", stuck,
			 pc_dp.workers[stuck]->lcore, (double)wd.period_ns / 1e9);
	else
		snprintf(why, sizeof(why), "the signer has not answered in %.1f s",
			 (double)wd.period_ns / 1e9);
	PC_LOG(ERR, "%s: no watchdog ping, systemd will restart podcapd\n", why);
	pd_sd_notifyf("STATUS=wedged: %s", why);
}

static void
watchdog_check(void)
{
	uint64_t loops[RTE_MAX_LCORE];
	int stuck;

	if (wd.period_ns == 0 || pc_mono_ns() < wd.next_ns)
		return;
	/* a whole period to the next check: for the workers to loop, for the signer to answer */
	wd.next_ns = pc_mono_ns() + wd.period_ns;
	read_loops(loops);
	bool signer_ok = pc_signer_answers(signer_watched);
	if (pc_watchdog_ok(wd.loops, loops, pc_dp.nworkers, signer_ok, &stuck)) {
		pd_sd_notifyf("WATCHDOG=1");
		if (wd.failing)
			PC_LOG(NOTICE, "watchdog pings resume\n");
		wd.failing = false;
		pd_metrics_watchdog(false);
		return;
	}
	if (!wd.failing)
		watchdog_fault(stuck);
	wd.failing = true;
	pd_metrics_watchdog(true);
}

/*
 * Sleeps until `deadline_ns` on `now`'s clock, a signal or the signer's
 * end, in short slices, checking the watchdog and the links (links.h) and
 * sending podcapd's own LLDPDUs (lldp_tx.h) between them.
 */
static void
sleep_until(uint64_t deadline_ns, uint64_t (*now_ns)(void))
{
	while (!pd_signals_stop() && !pd_signals_reload() && !signer_check() &&
	       !declaration_check()) {
		watchdog_check();
		pc_links_poll();
		pc_lldp_tx_poll();
		uint64_t now = now_ns();
		if (now >= deadline_ns)
			return;
		uint64_t step = RTE_MIN(deadline_ns - now, 50 * 1000 * 1000ull);
		struct timespec ts = { .tv_sec = (time_t)(step / PC_NS_PER_SEC),
				       .tv_nsec = (long)(step % PC_NS_PER_SEC) };
		nanosleep(&ts, NULL);
	}
}

static int
start_workers(void)
{
	unsigned lcore, n = 0;

	RTE_LCORE_FOREACH_WORKER(lcore) {
		struct pc_worker *w = pc_worker_create(n, lcore);
		if (w == NULL) {
			PC_LOG(ERR, "out of memory for worker %u\n", n);
			return -1;
		}
		pc_dp.workers[n++] = w;
	}
	if (n == 0) {
		PC_LOG(ERR, "no worker lcore: give dpdk.lcores at least two cores (e.g. 0-1)\n");
		return -1;
	}
	pc_dp.nworkers = n;
	return 0;
}

static struct rte_mempool *
create_pool(const struct pc_config *cfg)
{
	unsigned n =
	    pd_ports_mbufs(cfg) + pc_dp.nworkers * (PC_BURST + PC_TX_STAGE * PC_MAX_UPLINKS);
	for (unsigned p = 0; p < cfg->npods; p++)
		n += 2 * (pc_table_queue_frames(&cfg->pods[p].limits) + 1);
	n = RTE_MIN(n, 262143u);
	uint16_t room = (uint16_t)RTE_MAX((unsigned)RTE_MBUF_DEFAULT_BUF_SIZE,
					  cfg->max_frame + RTE_PKTMBUF_HEADROOM);
	struct rte_mempool *mp = rte_pktmbuf_pool_create("pc_mbufs", n, POOL_CACHE, 0, room,
							 (int)rte_socket_id());
	if (mp == NULL)
		PC_LOG(ERR, "cannot create a pool of %u mbufs of %u bytes: %s\n", n, room,
		       rte_strerror(rte_errno));
	return mp;
}

/* The verifier endpoint, for a SIGHUP's new TLS files (control thread only). */
static struct pc_http *endpoint;

static struct pc_http *
start_http(const struct pc_config *cfg, const struct pc_signer *signer, struct pc_tls *tls)
{
	static char pubkey[512];
	struct pc_error err;

	if (pc_verifier_key_format(&signer->vk, pubkey, sizeof(pubkey)) != 0)
		return NULL;
	struct pc_http_ops ops = {
		.ledger = pc_recorder_ledger(),
		.pubkey = pubkey,
		.metrics = pd_metrics_text,
		.cosigned = cfg->witnesses.n > 0 ? pd_witnesses_cosigned : NULL,
		.ctx = NULL,
		.tls = tls,
	};
	struct pc_http *h = pc_http_start(cfg->listen, &ops, &err);
	if (h == NULL)
		PC_LOG(ERR, "verifier endpoint on %s: %s\n", cfg->listen, err.msg);
	else
		PC_LOG(INFO, "verifier endpoint on %s (port %u)%s\n", cfg->listen, pc_http_port(h),
		       tls == NULL ? ", plain HTTP" : " over TLS");
	return h;
}

/*
 * Never record a window twice: after a restart within a window, wait for
 * the next. That can take a whole window, longer than systemd's start
 * timeout allows: the wait extends it.
 */
static void
wait_for_uncovered(uint64_t covered_ns, uint64_t window_ns)
{
	char when[PC_UTC_LEN];
	uint64_t now = pc_now_ns();

	if (now >= covered_ns)
		return;
	uint64_t until = covered_ns + (window_ns - covered_ns % window_ns) % window_ns;
	PC_LOG(NOTICE,
	       "the ledger already accounts for time up to %.3f s from now: "
	       "forwarding starts with the next window\n",
	       (double)(covered_ns - now) / 1e9);
	pc_utc_format(until, when, sizeof(when));
	pd_sd_notifyf("STATUS=waiting for the window of %s: "
		      "the ledger accounts for the time before\nEXTEND_TIMEOUT_USEC=%lu",
		      when, (unsigned long)((until - now + START_MARGIN_NS) / 1000));
	sleep_until(until, pc_now_ns);
}

/* Puts t in force from the window in progress and starts the workers on it. */
static void
start_forwarding(struct pc_timeline *tl, struct pc_table *t, uint64_t window_ns,
		 uint64_t covered_ns)
{
	char hex[2 * PC_DIGEST_LEN + 1];
	unsigned lcore, i = 0;

	pc_timeline_start(tl, window_ns);
	pc_recorder_start_record(t, tl->epoch, window_ns, covered_ns);
	pc_dp.table = t;
	pc_timeline_arm(tl);
	if (pd_telemetry_register() != 0)
		PC_LOG(WARNING, "cannot register the /podcap telemetry commands\n");

	/* a tap only observes: the same boundaries and banks, another data path */
	lcore_function_t *main_fn = t->cfg.role == PC_ROLE_SHAPER ? pc_worker_main : pc_tap_main;
	RTE_LCORE_FOREACH_WORKER(lcore) {
		rte_eal_remote_launch(main_fn, pc_dp.workers[i++], lcore);
	}
	for (i = 0; i < pc_dp.nworkers; i++)
		while (__atomic_load_n(&pc_dp.workers[i]->loops, __ATOMIC_RELAXED) == 0)
			rte_pause();

	if (t->cfg.role != PC_ROLE_SHAPER)
		PC_LOG(NOTICE, "%s: observing only, nothing is transmitted or enforced\n",
		       t->cfg.role == PC_ROLE_POD_TAP ? "pod-side tap" : "fabric-side tap");
	pc_hex(t->digest, sizeof(t->digest), hex);
	PC_LOG(NOTICE, "forwarding: %u uplinks, %u pods, %u workers, window %lus, pod map %s\n",
	       t->cfg.nuplinks, t->cfg.npods, pc_dp.nworkers,
	       (unsigned long)(window_ns / PC_NS_PER_SEC), hex);
	/* every worker has looped: each port is polled, and frames cross */
	pd_sd_notifyf("READY=1\nSTATUS=forwarding: %u uplinks, %u pods, %u workers, window %lus",
		      t->cfg.nuplinks, t->cfg.npods, pc_dp.nworkers,
		      (unsigned long)(window_ns / PC_NS_PER_SEC));
}

/* The line `systemctl status` shows, after each window close. */
static void
notify_closed(uint64_t label_ns)
{
	const struct pc_table *t = pc_dp.table;
	struct pc_recorder_stats st;
	char when[PC_UTC_LEN];

	pc_recorder_stats(&st);
	pc_utc_format(label_ns, when, sizeof(when));
	pd_sd_notifyf("STATUS=forwarding: %u uplinks, %u pods, window %s closed, "
		      "ledger %lu records",
		      t->cfg.nuplinks, t->cfg.npods, when, (unsigned long)st.records);
}

/*
 * A reload's TLS files serve the connections made from now on, not from the
 * boundary: who may read the endpoint is not part of any window.
 */
static void
install_tls(struct pc_tls *tls)
{
	struct pc_error err;

	if (tls == NULL)
		return;
	if (pc_http_set_tls(endpoint, tls, &err) != 0)
		PC_LOG(ERR, "the endpoint's TLS files: %s\n", err.msg);
	else
		PC_LOG(NOTICE, "the endpoint's TLS files reloaded: new connections use them\n");
	pc_tls_put(tls);
}

/* SIGHUP before the boundary is due: a new table for the armed boundary. */
static void
reload(const char *path, struct pc_timeline *tl, const uint16_t (*ports)[PC_DIR_COUNT],
       unsigned *generation)
{
	/* a table already pending is replaced, unless a worker has just taken it */
	if (tl->pending != NULL && !pc_control_detach(tl->pending))
		return;
	pd_signals_reload_taken();
	/* MONOTONIC_USEC: what Type=notify-reload (systemd 253) matches with its SIGHUP */
	pd_sd_notifyf("RELOADING=1\nMONOTONIC_USEC=%lu", (unsigned long)(pc_mono_ns() / 1000));
	unsigned g = (*generation)++;
	struct pc_tls *tls;
	pc_reload_prepare(path, pc_dp.table, ports, g, &tl->pending, &tls);
	install_tls(tls);
	/* if the boundary passed meanwhile, it comes with the next one */
	if (tl->pending != NULL)
		pc_control_attach(tl->pending);
	if (tl->pending != NULL && tl->pending->generation == g)
		pd_sd_notifyf("READY=1\nSTATUS=forwarding: pod map reloaded, "
			      "%u pods from the next window",
			      tl->pending->cfg.npods);
	else
		pd_sd_notifyf("READY=1\nSTATUS=forwarding: reload refused (see the log), "
			      "nothing changed");
}

/* The control thread's loop, until a stop is asked or the signer is lost. */
static void
forward(const char *path, struct pc_timeline *tl, const uint16_t (*ports)[PC_DIR_COUNT],
	unsigned *generation)
{
	while (!pd_signals_stop() && !signer_gone && !declaration_check()) {
		sleep_until(pc_timeline_due_ns(tl), pc_mono_ns);
		bool due = pc_mono_ns() >= pc_timeline_due_ns(tl) || pc_control_passed();
		/* a window that is due closes first: reloads in a row must not hold it open */
		if (pd_signals_reload() && !due) {
			reload(path, tl, ports, generation);
			continue;
		}
		if (pd_signals_stop() || signer_gone || declaration_check())
			break;
		if (due) {
			uint64_t closed = pc_wallclock_label(&tl->clk, tl->epoch, tl->window_ns);
			pc_timeline_close(tl);
			notify_closed(closed);
		}
	}
}

/* systemd stops watching on STOPPING=1: no more pings after it */
static void
notify_stopping(void)
{
	wd.period_ns = 0;
	const char *why = signer_gone ? "the signer process is lost" : "a stop was asked";

	if (declaration_expired)
		why = "the auditor's declaration expired";
	pd_sd_notifyf("STOPPING=1\nSTATUS=stopping: %s", why);
}

static void
stop_forwarding(struct pc_timeline *tl)
{
	PC_LOG(NOTICE, "stopping\n");
	notify_stopping();
	__atomic_store_n(&pc_dp.stop, true, __ATOMIC_RELAXED);
	rte_eal_mp_wait_lcore();
	/* nothing crosses any more: the switches hear it now, not at the TTL's end */
	pc_lldp_tx_stop();
	pc_timeline_stop(tl);
}

/*
 * The last checkpoint, over the last window and the STOP, goes to the
 * witnesses before podcapd exits, so that a stop is witnessed when it
 * happens and not at the next start. A witness that is down or hangs holds
 * the stop WITNESS_STOP_NS at most, the ledger's own drain included.
 */
static void
witness_stop(bool witnessed)
{
	uint64_t t0 = pc_mono_ns();

	if (!witnessed)
		return;
	if (!pc_recorder_drain(WITNESS_STOP_NS)) {
		PC_LOG(WARNING,
		       "the last checkpoint was not published in %lu s: the witnesses "
		       "see this stop only after the next start\n",
		       (unsigned long)(WITNESS_STOP_NS / PC_NS_PER_SEC));
		return;
	}
	uint64_t spent = pc_mono_ns() - t0;
	pd_witnesses_flush(spent < WITNESS_STOP_NS ? WITNESS_STOP_NS - spent : 0);
}

static void
free_tables(struct pc_timeline *tl)
{
	if (tl->pending != NULL)
		pc_table_free(tl->pending);
	pthread_mutex_lock(&pc_dp.lock);
	pc_table_free(pc_dp.table);
	pc_dp.table = NULL;
	pthread_mutex_unlock(&pc_dp.lock);
}

/*
 * Runs t, taken over, with the verifier endpoint up, until a stop; the
 * tables of reloads are numbered from `generation`. Returns the exit status.
 */
static int
serve(const char *path, struct pc_table *t, const uint16_t (*ports)[PC_DIR_COUNT],
      unsigned generation, struct pc_signer *signer, struct pc_tls *tls, uint64_t covered_ns)
{
	uint64_t window_ns = t->cfg.window_ns;
	struct pc_timeline tl;

	/* a ledger no verifier can pull is a misconfiguration: nothing crosses without it */
	struct pc_http *http = start_http(&t->cfg, signer, tls);
	endpoint = http;
	if (http == NULL) {
		pc_table_free(t);
		return EXIT_FAILURE;
	}
	/* witnesses that fail to start are logged; the cap does not wait for them */
	bool witnessed = pd_witnesses_start(&t->cfg.witnesses, pc_recorder_ledger()) == 0 &&
	    t->cfg.witnesses.n > 0;
	if (witnessed)
		pc_recorder_on_publish(pd_witnesses_publish);
	signer_watched = signer;
	wait_for_uncovered(covered_ns, window_ns);
	if (pd_signals_stop() || signer_gone) {
		notify_stopping();
		pc_recorder_on_publish(NULL);
		pd_witnesses_stop();
		endpoint = NULL;
		pc_http_stop(http);
		pc_table_free(t);
		return EXIT_FAILURE;
	}
	start_forwarding(&tl, t, window_ns, covered_ns);
	watchdog_arm();
	pc_control_on_wait(watchdog_check);
	forward(path, &tl, ports, &generation);
	pc_control_on_wait(NULL);
	stop_forwarding(&tl);
	witness_stop(witnessed);
	pc_recorder_on_publish(NULL);
	pd_witnesses_stop();
	endpoint = NULL;
	pc_http_stop(http);
	free_tables(&tl);
	return signer_gone || declaration_expired ? EXIT_FAILURE : EXIT_SUCCESS;
}

int
pd_run(const char *path, struct pc_config *cfg, const struct pc_declared *decl,
       struct pc_signer *signer, struct pc_tls *tls, uint64_t covered_ns)
{
	static uint16_t ports[PC_MAX_UPLINKS][PC_DIR_COUNT];
	const uint16_t (*cports)[PC_DIR_COUNT] = (const uint16_t (*)[PC_DIR_COUNT])ports;
	unsigned nuplinks = cfg->nuplinks;
	int status = EXIT_FAILURE;

	pd_metrics_started(pc_now_ns());
	pc_dp.hz = pc_tsc_hz();
	if (start_workers() != 0)
		goto out;
	pc_dp.pool = create_pool(cfg);
	if (pc_dp.pool == NULL)
		goto out;
	if (pd_ports_start(cfg, pc_dp.pool, ports) != 0 || pc_links_start(cfg, cports) != 0 ||
	    pc_lldp_tx_start(cfg, cports) != 0)
		goto out_ports;
	/* the table takes the pod map over: cfg is empty after this */
	struct pc_table *t = pc_table_create(cfg, cports, pc_dp.nworkers, pc_dp.hz, 0);
	if (t != NULL)
		t->decl = *decl;
	if (t != NULL)
		status = serve(path, t, cports, 1, signer, tls, covered_ns);
out_ports:
	pc_lldp_tx_stop(); /* when forwarding never started (stop_forwarding sends it otherwise) */
	pc_links_stop();
	pd_ports_stop(nuplinks, cports);
out:
	for (unsigned i = 0; i < pc_dp.nworkers; i++)
		pc_worker_free(pc_dp.workers[i]);
	return status;
}
