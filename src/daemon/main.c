/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * podcapd: the inline pod-uplink cap.
 *
 *   podcapd --config FILE [-- EAL options]
 *   podcapd --check-config FILE [--canonical]
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rte_common.h>
#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>
#include <rte_log.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>

#include "podcap/clock.h"
#include "podcap/config.h"
#include "podcap/units.h"

#include "control.h"
#include "dataplane.h"
#include "eal.h"
#include "log.h"
#include "metrics.h"
#include "podmap.h"
#include "ports.h"
#include "recorder.h"
#include "reload.h"
#include "signer.h"
#include "tsc.h"
#include "wallclock.h"
#include "podcap/http.h"

RTE_LOG_REGISTER_DEFAULT(podcapd_logtype, INFO);

#define EXIT_USAGE 2
#define POOL_CACHE 256

static volatile sig_atomic_t got_stop;
static volatile sig_atomic_t got_reload;
static struct pc_signer *signer_watched;   /* checked by the control thread while it sleeps */
static bool signer_gone;

static void
on_signal(int sig)
{
	if (sig == SIGHUP)
		got_reload = 1;
	else
		got_stop = 1;
}

static void
usage(FILE *f)
{
	fprintf(f,
		"usage: podcapd --config FILE [-- EAL options]\n"
		"       podcapd --check-config FILE [--canonical]\n"
		"\n"
		"  --config FILE        run with the pod map FILE\n"
		"  --check-config FILE  validate FILE, print 'configuration OK' and its digest\n"
		"  --canonical          with --check-config: also print the canonical form\n"
		"  --version            print the version\n"
		"\n"
		"Signals: SIGINT/SIGTERM stop, SIGHUP reloads the pod map (in force from the next window).\n");
}

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

/* Sleeps until `deadline_ns` on `now`'s clock, a signal or the signer's end, in short slices. */
static void
sleep_until(uint64_t deadline_ns, uint64_t (*now_ns)(void))
{
	while (!got_stop && !got_reload && !signer_check()) {
		uint64_t now = now_ns();
		if (now >= deadline_ns)
			return;
		uint64_t step = RTE_MIN(deadline_ns - now, 50 * 1000 * 1000ull);
		struct timespec ts = { .tv_sec = (time_t)(step / PC_NS_PER_SEC),
				       .tv_nsec = (long)(step % PC_NS_PER_SEC) };
		nanosleep(&ts, NULL);
	}
}

/* Arms the boundary of window sequence `seq` for the workers, with `table` (a reload) or NULL. */
static void
arm_boundary(const struct pc_wallclock *c, uint64_t seq, uint64_t window_ns, struct pc_table *table)
{
	pc_control_arm(seq, pc_tsc_at(pc_wallclock_boundary(c, seq, window_ns), pc_dp.hz), table);
}

/*
 * Closes what the workers left at the armed boundary `*next` (the windows
 * from *epoch), records it, and arms the next boundary: with the pending
 * table if that missed this one. However long the control thread was held
 * up, the workers switched at the boundary itself and then waited in the
 * next window for this; one record covers the windows up to the new one.
 */
static void
close_window(struct pc_wallclock *clk, uint64_t *epoch, uint64_t *next, struct pc_table **pending,
	     uint64_t window_ns)
{
	static struct pc_window win;
	struct pc_table *old = pc_dp.table;
	uint64_t closed_label = pc_wallclock_label(clk, *epoch, window_ns);
	uint64_t m = pc_mono_ns();

	struct pc_table *nt = pc_control_close(*epoch, window_ns, &win);
	win.start_ns = closed_label;
	/* the record first: with thousands of pods the lines take tens of ms */
	pc_recorder_window(&win);
	pc_control_print(&win);
	int64_t step = pc_wallclock_check(clk, RTE_MAX(*next, pc_wallclock_sequence(clk, m, window_ns)), m,
					  window_ns, pc_now_ns());
	if (step != 0) {
		pc_wallclock_log(clk, step, pc_wallclock_label(clk, *next, window_ns));
		pc_recorder_clock(old, pc_wallclock_label(clk, *next, window_ns) / window_ns, window_ns, step);
	}
	if (nt != NULL) {
		pc_recorder_reload(nt, pc_wallclock_label(clk, *next, window_ns) / window_ns, window_ns);
		pthread_mutex_lock(&pc_dp.lock);
		nt->prev = NULL;
		pc_table_free(old);
		pthread_mutex_unlock(&pc_dp.lock);
		*pending = NULL;
	}
	*epoch = *next;
	*next = RTE_MAX(*epoch, pc_wallclock_sequence(clk, pc_mono_ns(), window_ns)) + 1;
	arm_boundary(clk, *next, window_ns, *pending);
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
	unsigned n = pc_ports_mbufs(cfg) + pc_dp.nworkers * (PC_BURST + PC_TX_STAGE * PC_MAX_UPLINKS);
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

static struct pc_http *
start_http(const struct pc_config *cfg, const struct pc_signer *signer)
{
	static char pubkey[512];
	struct pc_error err;

	if (pc_verifier_key_format(&signer->vk, pubkey, sizeof(pubkey)) != 0)
		return NULL;
	struct pc_http_ops ops = {
		.ledger = pc_recorder_ledger(),
		.pubkey = pubkey,
		.metrics = pc_metrics_text,
		.ctx = NULL,
	};
	struct pc_http *h = pc_http_start(cfg->listen, &ops, &err);
	if (h == NULL)
		PC_LOG(ERR, "verifier endpoint on %s: %s\n", cfg->listen, err.msg);
	else
		PC_LOG(INFO, "verifier endpoint on %s (port %u)\n", cfg->listen, pc_http_port(h));
	return h;
}

/* Never record a window twice: after a restart within a window, wait for the next. */
static void
wait_for_uncovered(uint64_t covered_ns, uint64_t window_ns)
{
	if (pc_now_ns() >= covered_ns)
		return;
	PC_LOG(NOTICE, "the ledger already accounts for time up to %.3f s from now: "
	       "forwarding starts with the next window\n",
	       (double)(covered_ns - pc_now_ns()) / 1e9);
	sleep_until(covered_ns + (window_ns - covered_ns % window_ns) % window_ns, pc_now_ns);
}

static int
run(const char *path, struct pc_config *cfg, struct pc_signer *signer, uint64_t covered_ns)
{
	static uint16_t ports[PC_MAX_UPLINKS][PC_DIR_COUNT];
	unsigned generation = 0;
	int status = EXIT_FAILURE;
	unsigned nuplinks = cfg->nuplinks;
	unsigned lcore;

	pc_dp.hz = pc_tsc_hz();
	if (start_workers() != 0)
		goto out;
	pc_dp.pool = create_pool(cfg);
	if (pc_dp.pool == NULL)
		goto out;
	if (pc_ports_start(cfg, pc_dp.pool, ports) != 0)
		goto out_ports;

	/* the table takes the pod map over: cfg is empty after this */
	uint64_t window_ns = cfg->window_ns;
	struct pc_table *t = pc_table_create(cfg, (const uint16_t (*)[PC_DIR_COUNT])ports,
					     pc_dp.nworkers, pc_dp.hz, generation++);
	if (t == NULL)
		goto out_ports;
	/* a ledger no verifier can pull is a misconfiguration: nothing crosses without it */
	struct pc_http *http = start_http(&t->cfg, signer);
	if (http == NULL) {
		pc_table_free(t);
		goto out_ports;
	}
	signer_watched = signer;
	wait_for_uncovered(covered_ns, window_ns);
	if (got_stop || signer_gone) {
		pc_http_stop(http);
		pc_table_free(t);
		goto out_ports;
	}
	struct pc_wallclock clk;
	uint64_t m0 = pc_mono_ns();
	pc_wallclock_init(&clk, m0, pc_now_ns());
	uint64_t epoch = pc_wallclock_sequence(&clk, pc_mono_ns(), window_ns);
	uint64_t next = epoch + 1;
	pc_recorder_start_record(t, epoch, window_ns, covered_ns);
	pc_dp.table = t;
	arm_boundary(&clk, next, window_ns, NULL);
	if (pc_telemetry_register() != 0)
		PC_LOG(WARNING, "cannot register the /podcap telemetry commands\n");

	unsigned i = 0;
	RTE_LCORE_FOREACH_WORKER(lcore) {
		rte_eal_remote_launch(pc_worker_main, pc_dp.workers[i++], lcore);
	}
	for (i = 0; i < pc_dp.nworkers; i++)
		while (__atomic_load_n(&pc_dp.workers[i]->loops, __ATOMIC_RELAXED) == 0)
			rte_pause();

	char hex[2 * PC_DIGEST_LEN + 1];
	pc_hex(t->digest, sizeof(t->digest), hex);
	PC_LOG(NOTICE, "forwarding: %u uplinks, %u pods, %u workers, window %lus, pod map %s\n",
	       t->cfg.nuplinks, t->cfg.npods, pc_dp.nworkers,
	       (unsigned long)(window_ns / PC_NS_PER_SEC), hex);

	struct pc_table *pending = NULL;
	while (!got_stop && !signer_gone) {
		sleep_until(pc_wallclock_boundary(&clk, next, window_ns), pc_mono_ns);
		bool due = pc_mono_ns() >= pc_wallclock_boundary(&clk, next, window_ns) || pc_control_passed();
		/* a window that is due closes first: reloads in a row must not hold it open */
		if (got_reload && !due) {
			/* a table already pending is replaced, unless a worker has just taken it */
			if (pending == NULL || pc_control_detach(pending)) {
				got_reload = 0;
				pc_reload_prepare(path, pc_dp.table, (const uint16_t (*)[PC_DIR_COUNT])ports,
					       generation++, &pending);
				/* if the boundary passed meanwhile, it comes with the next one */
				if (pending != NULL)
					pc_control_attach(pending);
			}
			continue;
		}
		if (got_stop || signer_gone)
			break;
		if (due)
			close_window(&clk, &epoch, &next, &pending, window_ns);
	}

	PC_LOG(NOTICE, "stopping\n");
	__atomic_store_n(&pc_dp.stop, true, __ATOMIC_RELAXED);
	rte_eal_mp_wait_lcore();
	/* a boundary some worker passed before it stopped is closed as any other */
	if (pc_control_passed()) {
		pc_control_switch_stopped();
		close_window(&clk, &epoch, &next, &pending, window_ns);
	}
	/* the last window is closed now, not at its end: its record says how far it got */
	uint64_t end = RTE_MAX(epoch, pc_wallclock_sequence(&clk, pc_mono_ns(), window_ns)) + 1;
	pc_control_arm(end, 0, NULL);
	pc_control_switch_stopped();
	static struct pc_window win;
	pc_control_close(epoch, window_ns, &win);
	win.start_ns = pc_wallclock_label(&clk, epoch, window_ns);
	pc_control_print(&win);
	pc_recorder_window(&win);
	pc_recorder_stop_record(pc_dp.table, pc_wallclock_label(&clk, end, window_ns) / window_ns, window_ns);
	pc_http_stop(http);
	status = signer_gone ? EXIT_FAILURE : EXIT_SUCCESS;
	if (pending != NULL)
		pc_table_free(pending);
	pthread_mutex_lock(&pc_dp.lock);
	pc_table_free(pc_dp.table);
	pc_dp.table = NULL;
	pthread_mutex_unlock(&pc_dp.lock);
out_ports:
	pc_ports_stop(nuplinks, (const uint16_t (*)[PC_DIR_COUNT])ports);
out:
	for (i = 0; i < pc_dp.nworkers; i++)
		pc_worker_free(pc_dp.workers[i]);
	return status;
}

int
main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "check-config", required_argument, NULL, 'n' },
		{ "canonical", no_argument, NULL, 'C' },
		{ "version", no_argument, NULL, 'V' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *config = NULL, *check = NULL;
	bool canonical = false;
	int c;

	while ((c = getopt_long(argc, argv, "c:n:h", opts, NULL)) != -1) {
		switch (c) {
		case 'c': config = optarg; break;
		case 'n': check = optarg; break;
		case 'C': canonical = true; break;
		case 'V': printf("podcapd %s\n", PODCAP_VERSION); return EXIT_SUCCESS;
		case 'h': usage(stdout); return EXIT_SUCCESS;
		default: usage(stderr); return EXIT_USAGE;
		}
	}
	if (check != NULL)
		return pc_podmap_check(check, canonical) == 0 ? EXIT_SUCCESS : EXIT_USAGE;
	if (config == NULL) {
		usage(stderr);
		return EXIT_USAGE;
	}

	struct pc_config cfg;
	if (pc_podmap_load(config, &cfg) != 0)
		return EXIT_USAGE;
	if (cfg.signing_key[0] == '\0' || cfg.ledger[0] == '\0') {
		fprintf(stderr, "%s: appliance.signing_key and appliance.ledger are required: "
			"a cap that no one can verify is a misconfiguration\n", config);
		pc_config_free(&cfg);
		return EXIT_USAGE;
	}

	struct sigaction sa = { .sa_handler = on_signal };
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);

	/* the key is read by the signer process only, before DPDK maps anything */
	struct pc_signer signer;
	char err[512];
	int rc = pc_signer_spawn(cfg.signing_key, &signer, err, sizeof(err));
	if (rc != 0) {
		fprintf(stderr, "podcapd: signing key: %s\n", err);
		pc_config_free(&cfg);
		/* a key refused is a misconfiguration, like a bad pod map */
		return rc == -2 ? EXIT_USAGE : EXIT_FAILURE;
	}
	int status = EXIT_FAILURE;
	uint64_t covered_ns;
	if (pc_recorder_start(cfg.ledger, cfg.appliance_id, &signer, &covered_ns) != 0)
		goto out_signer;
	if (pc_eal_init(&cfg, argc - optind, argv + optind) != 0)
		goto out_recorder;
	status = run(config, &cfg, &signer, covered_ns);
	rte_eal_cleanup();
out_recorder:
	/* windows that were counted but never logged: the supervisor must hear of it */
	if (pc_recorder_finish() > 0)
		status = EXIT_FAILURE;
out_signer:
	pc_signer_stop(&signer);
	pc_config_free(&cfg);
	return status;
}
