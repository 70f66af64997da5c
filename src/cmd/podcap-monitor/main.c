/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * podcap-monitor: the verifier as a service, as a Certificate Transparency
 * monitor watches its logs. It reads the fleet file podcap-verify --fleet
 * reads (each entry's interval: how often to pull it), pulls and verifies
 * each appliance on its schedule with podcap-verify's own run (launch.c, pull.c),
 * resuming from the state it keeps in --state-dir, at most --jobs at a
 * time, and serves what it found over HTTP (server.c, expose.c): /metrics,
 * /status.json, the fleet page and each appliance's report. A line on
 * stderr (the journal under systemd) for each change of an appliance's
 * verdict or growth. systemd: Type=notify, READY=1 once it listens,
 * STATUS= after each pull, WATCHDOG=1 when WatchdogSec= is set. SIGHUP
 * reads the fleet file again (reload.c).
 *
 * Exit status: 0 on SIGTERM or SIGINT, 2 for a usage error, a bad fleet
 * file, an unusable state directory or an address it cannot listen on.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#if HAVE_LIBSYSTEMD
#include <systemd/sd-daemon.h>
#endif

#include "base/buildid.h"
#include "base/clock.h"
#include "base/error.h"
#include "base/units.h"
#include "http/http.h"
#ifdef PC_HAVE_LIBCRYPTO
#include "log/sha256_libcrypto.h"
#endif

#include "../podcap-verify/fleet.h"
#include "monitor.h"

#define TICK_MS 200 /* the longest the loop sleeps: reaping, schedules, the watchdog */

static volatile sig_atomic_t stopping, reloading;

static void
on_stop(int sig)
{
	(void)sig;
	stopping = 1;
}

static void
on_hup(int sig)
{
	(void)sig;
	reloading = 1;
}

void
mon_log(const char *fmt, ...)
{
	va_list ap;

	fputs("podcap-monitor: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	fflush(stderr);
}

void
mon_path(const struct mon *m, const struct mon_app *app, const char *suffix, char *out, size_t len)
{
	snprintf(out, len, "%s/%s%s", m->state_dir, app->a->name, suffix);
}

static void
usage(FILE *f)
{
	fputs(
	    "usage: podcap-monitor --fleet FILE [--state-dir DIR] [--jobs N] [--listen ADDR]\n"
	    "                      [--tls-cert FILE --tls-key FILE [--client-ca FILE]]\n"
	    "                      [--listen-plaintext]\n"
	    "                      [--interval DURATION] [--stalled-after DURATION]\n"
	    "                      [--max-backoff DURATION] [VERIFIER OPTION]...\n"
	    "\n"
	    "  --fleet FILE             the fleet file of podcap-verify --fleet; an entry's\n"
	    "                           interval: says how often to pull it\n"
	    "  --state-dir DIR          each appliance's state (default " MON_DEFAULT_STATE_DIR
	    ")\n"
	    "  --jobs N                 pulls at once, 1 to 64 (default: the file's jobs)\n"
	    "  --listen ADDR            the HTTP endpoint (default " MON_DEFAULT_LISTEN ")\n"
	    "  --listen-plaintext       serve plain HTTP on an address other than loopback\n"
	    "  --tls-cert FILE, --tls-key FILE\n"
	    "                           serve HTTPS (TLS 1.3) with this certificate and key\n"
	    "  --client-ca FILE         with TLS: only clients with a certificate of this CA\n"
	    "  --interval DURATION      the pull interval of entries that give none (default 5m)\n"
	    "  --stalled-after DURATION a log not grown for this long is stalled (default 1h)\n"
	    "  --max-backoff DURATION   the longest wait between pulls of an appliance that is\n"
	    "                           down (default 1h)\n"
	    "  --version                print the build id and exit\n"
	    "\n"
	    "Verifier options, for every appliance, as podcap-verify --fleet takes them:\n"
	    "  --clock-skew --max-unaccounted --max-gap --max-checkpoint-age\n"
	    "  --max-merged-windows --build-id --model-size --witness-quorum\n"
	    "  --max-witness-delay --max-map-age --tap-clock-offset --tap-line-rate\n"
	    "  --ca --pin --cert --cert-key --indicators\n",
	    f);
}

static void __attribute__((noreturn, format(printf, 1, 2))) die_usage(const char *fmt, ...)
{
	va_list ap;

	fputs("podcap-monitor: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	usage(stderr);
	exit(2);
}

static uint64_t
duration(const char *opt, const char *arg)
{
	struct pc_error err;
	uint64_t ns;

	if (pc_parse_duration(arg, &ns, &err) < 0)
		die_usage("%s %s: %s", opt, arg, err.msg);
	if (ns < PC_FLEET_MIN_INTERVAL_NS)
		die_usage("%s %s: at least 1s", opt, arg);
	return ns;
}

/* The monitor's own option at argv[*i]; false when it is none of them. */
static bool
own_option(struct mon *m, int argc, char **argv, int *i)
{
	const char *a = argv[*i], *v = *i + 1 < argc ? argv[*i + 1] : NULL;
	const char **paths[] = { &m->fleet_file, &m->state_dir, &m->listen,
				 &m->tls_cert,   &m->tls_key,   &m->client_ca };
	static const char *const names[] = { "--fleet",    "--state-dir", "--listen",
					     "--tls-cert", "--tls-key",   "--client-ca" };

	for (size_t k = 0; k < sizeof(names) / sizeof(names[0]); k++)
		if (strcmp(a, names[k]) == 0 && v != NULL) {
			*paths[k] = v;
			++*i;
			return true;
		}
	if (v != NULL && strcmp(a, "--jobs") == 0) {
		char *end;
		long j = strtol(v, &end, 10);
		if (*end != '\0' || j < 1 || j > PC_FLEET_MAX_JOBS)
			die_usage("--jobs %s: not a whole number from 1 to %d", v,
				  PC_FLEET_MAX_JOBS);
		m->jobs = (unsigned)j;
	} else if (v != NULL && strcmp(a, "--interval") == 0) {
		m->interval_ns = duration(a, v);
	} else if (v != NULL && strcmp(a, "--stalled-after") == 0) {
		m->stalled_ns = duration(a, v);
	} else if (v != NULL && strcmp(a, "--max-backoff") == 0) {
		m->max_backoff_ns = duration(a, v);
	} else {
		return false;
	}
	++*i;
	return true;
}

/* The address is a loopback one: 127.0.0.0/8 or ::1. */
static bool
loopback(const struct sockaddr_storage *ss)
{
	if (ss->ss_family == AF_INET6)
		return IN6_IS_ADDR_LOOPBACK(&((const struct sockaddr_in6 *)ss)->sin6_addr);
	return (ntohl(((const struct sockaddr_in *)ss)->sin_addr.s_addr) >> 24) == 127;
}

/*
 * The fleet's verdicts are the site's to tell: in clear only on loopback,
 * as podcapd's endpoint (appliance.listen_plaintext), unless the operator
 * says so. An address that does not parse is mon_serve's to refuse.
 */
static void
check_listen(const struct mon *m)
{
	struct sockaddr_storage ss;
	int v6;

	if (m->listen_plaintext && m->tls_cert != NULL)
		die_usage("--listen-plaintext and --tls-cert: choose one");
	if (m->tls_cert != NULL || m->listen_plaintext ||
	    pc_http_parse_listen(m->listen, &ss, &v6) != 0 || loopback(&ss))
		return;
	die_usage("--listen %s is not a loopback address: serve it with --tls-cert and --tls-key, "
		  "or say --listen-plaintext to serve the fleet's verdicts in clear",
		  m->listen);
}

static void
parse_args(int argc, char **argv, struct mon *m)
{
	m->state_dir = MON_DEFAULT_STATE_DIR;
	m->listen = MON_DEFAULT_LISTEN;
	m->interval_ns = MON_DEFAULT_INTERVAL;
	m->stalled_ns = MON_DEFAULT_STALLED;
	m->max_backoff_ns = MON_DEFAULT_BACKOFF;
	vf_options_init(&m->common);
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (strcmp(a, "--help") == 0) {
			usage(stdout);
			exit(0);
		} else if (strcmp(a, "--version") == 0) {
			struct pc_error err;
			if (pc_version_print(stdout, "podcap-monitor", PODCAP_VERSION, &err) == 0)
				exit(0);
			fprintf(stderr, "podcap-monitor: %s\n", err.msg);
			exit(1);
		} else if (own_option(m, argc, argv, &i)) {
			continue;
		} else if (strcmp(a, "--listen-plaintext") == 0) {
			m->listen_plaintext = true;
		} else if (strcmp(a, "--indicators") == 0) {
			vf_option_set(&m->common, a + 2, NULL);
		} else if (strcmp(a, "--now") != 0 && vf_fleet_takes_arg(a) && i + 1 < argc) {
			vf_option_set(&m->common, a + 2, argv[++i]);
		} else {
			die_usage(
			    "%s: not an option of podcap-monitor (the fleet file names each "
			    "appliance's key, source, pod maps, witnesses, attestation policy, "
			    "declarations, taps and interval; a monitor's now is its clock)",
			    a);
		}
	}
	if (m->fleet_file == NULL)
		die_usage("--fleet FILE is needed");
	if ((m->tls_cert == NULL) != (m->tls_key == NULL))
		die_usage("--tls-cert and --tls-key come together");
	if (m->client_ca != NULL && m->tls_cert == NULL)
		die_usage("--client-ca needs --tls-cert and --tls-key");
	check_listen(m);
	vf_tls_check(&m->common.tls);
}

/* ---- systemd ---- */

static void notify(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void
notify(const char *fmt, ...)
{
#if HAVE_LIBSYSTEMD
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	sd_notify(0, msg);
#else
	(void)fmt;
#endif
}

/* WatchdogSec= as nanoseconds, 0 when it is not set. */
static uint64_t
watchdog_ns(void)
{
#if HAVE_LIBSYSTEMD
	uint64_t usec = 0;

	return sd_watchdog_enabled(0, &usec) > 0 ? usec * 1000 : 0;
#else
	return 0;
#endif
}

/* STATUS=: how many appliances verified, failed, are unreachable or stalled. */
static void
notify_status(struct mon *m)
{
	size_t n[4] = { 0 }, stalled = 0;

	pthread_mutex_lock(&m->lock);
	for (size_t i = 0; i < m->napps; i++) {
		n[m->apps[i].verdict]++;
		stalled += m->apps[i].stalled;
	}
	pthread_mutex_unlock(&m->lock);
	notify("STATUS=%zu appliances: %zu verified, %zu failed, %zu unreachable, %zu stalled, "
	       "%zu pending",
	       m->napps, n[MON_VERIFIED], n[MON_FAILED], n[MON_UNREACHABLE], stalled,
	       n[MON_PENDING]);
}

/* ---- the fleet and its schedule ---- */

static void
load_fleet(struct mon *m)
{
	struct pc_error err;

	if (pc_fleet_load(m->fleet_file, &m->fleet, &err) < 0) {
		pc_error_print(&err, stderr);
		exit(2);
	}
	if (m->jobs == 0)
		m->jobs = m->fleet.jobs;
	m->napps = m->fleet.n;
	m->apps = calloc(m->napps ? m->napps : 1, sizeof(*m->apps));
	if (m->apps == NULL)
		die_usage("out of memory");
	uint64_t now = pc_mono_ns();
	for (size_t i = 0; i < m->napps; i++) {
		struct mon_app *app = &m->apps[i];

		app->a = &m->fleet.a[i];
		app->interval_ns = app->a->interval_ns ? app->a->interval_ns : m->interval_ns;
		app->result_fd = -1;
		mon_store_load(m, app);
		/* at start every appliance is due: what it was is in its state, not its log */
		app->due_mono_ns = now;
	}
}

static void
state_dir(const struct mon *m)
{
	struct stat st;

	if (mkdir(m->state_dir, 0700) < 0 && errno != EEXIST) {
		mon_log("--state-dir %s: %s", m->state_dir, strerror(errno));
		exit(2);
	}
	if (stat(m->state_dir, &st) < 0 || !S_ISDIR(st.st_mode) || access(m->state_dir, W_OK) < 0) {
		mon_log("--state-dir %s: not a directory it can write", m->state_dir);
		exit(2);
	}
}

/* The monitor's one child is the pull launcher: when it ended, another. */
static void
reap(struct mon *m)
{
	pid_t pid;
	int st;

	while ((pid = waitpid(-1, &st, WNOHANG)) > 0)
		mon_launcher_reaped(m, pid, st);
}

/* The due pulls, the most overdue first, while fewer than --jobs run. */
static void
start_due(struct mon *m)
{
	uint64_t now = pc_mono_ns();

	while (m->running < m->jobs) {
		struct mon_app *next = NULL;

		for (size_t i = 0; i < m->napps; i++) {
			struct mon_app *app = &m->apps[i];

			if (app->pid == 0 && app->due_mono_ns <= now &&
			    (next == NULL || app->due_mono_ns < next->due_mono_ns))
				next = app;
		}
		if (next == NULL)
			return;
		mon_pull_start(m, next, now);
		if (next->pid == 0)
			return; /* fork failed: it is rescheduled, try the others next tick */
	}
}

static void
loop(struct mon *m)
{
	uint64_t wd = watchdog_ns(), last_ping = 0;

	while (!stopping) {
		if (reloading) {
			reloading = 0;
			mon_reload(m);
			mon_overview_stale(m);
			notify_status(m);
		}
		reap(m);
		mon_watch_growth(m);
		start_due(m);
		if (wd != 0 && pc_mono_ns() - last_ping >= wd / 2) {
			notify("WATCHDOG=1");
			last_ping = pc_mono_ns();
		}
		if (mon_pull_wait(m, TICK_MS)) {
			mon_overview_stale(m);
			notify_status(m);
		}
	}
}

/* On the way out: the pulls in flight are dropped (the launcher's), their states untouched. */
static void
stop_pulls(struct mon *m)
{
	mon_launcher_stop(m);
	for (size_t i = 0; i < m->napps; i++) {
		char tmp[PC_PATH_LEN];

		if (m->apps[i].pid > 0) {
			close(m->apps[i].result_fd);
			m->apps[i].pid = 0;
			m->running--;
		}
		mon_path(m, &m->apps[i], ".html.tmp", tmp, sizeof(tmp));
		unlink(tmp);
	}
}

int
main(int argc, char **argv)
{
	static struct mon m;
	struct pc_error err;
	struct sigaction sa = { .sa_handler = on_stop };

#ifdef PC_HAVE_LIBCRYPTO
	/* the same bytes as libsodium's, faster: checked before it is used */
	if (pc_sha256_use_libcrypto() < 0)
		mon_log("warning: libcrypto's SHA-256 disagrees with libsodium's; hashing with "
			"libsodium");
#endif
	/* the pull launcher: a fresh image (launch.c), with the monitor's arguments after it */
	if (argc > 1 && strcmp(argv[1], MON_LAUNCHER_ARG) == 0) {
		parse_args(argc - 1, argv + 1, &m);
		return mon_launcher_main(&m);
	}
	m.argc = argc;
	m.argv = argv;
	parse_args(argc, argv, &m);
	state_dir(&m);
	pthread_mutex_init(&m.lock, NULL);
	load_fleet(&m);
	m.launcher_fd = -1;
	/* before the endpoint's key is read: the launcher and its pulls never hold it */
	if (mon_launcher_start(&m) < 0) {
		mon_log("cannot start the pull launcher: %s", strerror(errno));
		return 2;
	}
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sa.sa_handler = on_hup;
	sigaction(SIGHUP, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	struct mon_server *srv = mon_serve(&m, &err);
	if (srv == NULL) {
		mon_log("%s", err.msg);
		return 2;
	}
	mon_log("watching %zu appliances of %s, %u pulls at once; serving on port %u", m.napps,
		m.fleet_file, m.jobs, mon_server_port(srv));
	notify("READY=1");
	notify_status(&m);
	loop(&m);
	notify("STOPPING=1");
	mon_server_stop(srv);
	stop_pulls(&m);
	mon_log("stopped");
	return 0;
}
