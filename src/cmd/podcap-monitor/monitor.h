/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * podcap-monitor: podcap-verify as a service. What its files share: the
 * fleet, each appliance's schedule and what its last pulls found, and the
 * lock the HTTP threads read them under. The program's own: nothing
 * outside src/cmd/podcap-monitor includes it.
 */
#ifndef PODCAP_MONITOR_H
#define PODCAP_MONITOR_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "base/fileio.h"
#include "verify/fleet.h"

#include "../podcap-verify/options.h"
#include "../podcap-verify/run.h"

#define MON_DEFAULT_STATE_DIR "/var/lib/podcap-monitor"
#define MON_DEFAULT_LISTEN    "127.0.0.1:9190"
#define MON_DEFAULT_INTERVAL  (300ull * 1000000000ull)  /* 5m */
#define MON_DEFAULT_STALLED   (3600ull * 1000000000ull) /* 1h */
#define MON_DEFAULT_BACKOFF   (3600ull * 1000000000ull) /* at most 1h between retries */

/* What the last finished pull said of the log. */
enum mon_verdict {
	MON_PENDING = 0, /* never pulled to the end */
	MON_VERIFIED,
	MON_FAILED,      /* a check failed */
	MON_UNREACHABLE, /* the pull did not finish: endpoint down, I/O error */
};

/* One appliance of the fleet: its entry, its schedule, what its pulls found. */
struct mon_app {
	const struct pc_fleet_appliance *a;
	uint64_t interval_ns;
	/* the schedule, the main thread's alone */
	uint64_t due_mono_ns; /* the next pull, on CLOCK_MONOTONIC */
	pid_t pid;            /* the pull in flight (the launcher's child), 0 when none */
	int result_fd;        /* its outcome's pipe */
	uint64_t started_ns;
	/* kept in the state directory (store.c), read by the HTTP threads under the lock */
	enum mon_verdict verdict; /* the last pull's */
	bool verified_once;       /* a verification held at some point: size and time below */
	bool stalled;             /* the log has not grown for --stalled-after */
	uint64_t size;            /* the last verified tree size */
	uint64_t verified_at_ns;  /* when it was verified (CLOCK_REALTIME) */
	uint64_t grew_at_ns;      /* when the verified size last grew (first seen: then) */
	uint64_t pulled_at_ns;    /* the last pull's end, whatever its result */
	uint64_t errors;          /* consecutive pulls that did not finish */
	uint64_t backoff_ns;      /* the wait before the next pull */
	struct vf_outcome last;   /* the last finished verification's (rc 0 or 1) */
	bool have_last;
	/* this process's counters */
	uint64_t pulls[4]; /* by verdict of the pull: verified, failed, unreachable */
	uint64_t records_read;
	char error[256]; /* the last pull's complaint on stderr, when it did not finish */
};

struct mon {
	int argc; /* the command line, which each pull's podcap-monitor is given again */
	char **argv;
	const char *fleet_file;
	const char *state_dir;
	const char *listen;
	const char *tls_cert, *tls_key, *client_ca;
	bool listen_plaintext; /* --listen-plaintext: plain HTTP beyond loopback */
	unsigned jobs;
	uint64_t interval_ns, stalled_ns, max_backoff_ns;
	struct vf_options common; /* the fleet-wide verifier options */
	struct pc_fleet fleet;
	struct mon_app *apps;
	size_t napps;
	unsigned running;
	pid_t launcher_pid;   /* the pull launcher (launch.c), 0 when none */
	int launcher_fd;      /* its socket */
	pthread_mutex_t lock; /* over every mon_app's kept fields, and the overview */
	char *overview;       /* the fleet page, as last built */
	size_t overview_len;
	bool overview_stale; /* a pull or a SIGHUP changed what it shows since */
};

/* A file of the appliance's in the state directory: "<dir>/<name><suffix>". */
void mon_path(const struct mon *m, const struct mon_app *app, const char *suffix, char *out,
	      size_t len);
/* "podcap-monitor: ..." on stderr (the journal under systemd). */
void mon_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* store.c: the appliance's kept fields, replaced atomically after every pull. */
void mon_store_load(const struct mon *m, struct mon_app *app);
int mon_store_save(const struct mon *m, const struct mon_app *app);

/* The first argument of the pull launcher's podcap-monitor, and the fd of its socket. */
#define MON_LAUNCHER_ARG "--pull-launcher"
#define MON_LAUNCH_FD    3

/* launch.c, the monitor's side: the launcher started (0, or -1 and errno), a pull of the
 * appliance named name started by it with its outcome to result_fd (its pid, or -1), the
 * fleet file read again by it (0 or -1), it stopped with its pulls and reaped. */
int mon_launcher_start(struct mon *m);
pid_t mon_launch_pull(struct mon *m, const char *name, int result_fd);
int mon_launcher_reload(struct mon *m);
/* The pull pid killed by the launcher, if it is still in flight. */
void mon_launch_drop(struct mon *m, pid_t pid);
void mon_launcher_stop(struct mon *m);
/* The launcher's end, when pid is it: said, and another started. False when pid is not it. */
bool mon_launcher_reaped(struct mon *m, pid_t pid, int status);
/* launch.c: the launcher's own process (MON_LAUNCHER_ARG ...): its exit status. */
int mon_launcher_main(struct mon *m);

/* pull.c: a pull of the appliance started through the launcher. */
void mon_pull_start(struct mon *m, struct mon_app *app, uint64_t now_mono);
/* Waits up to timeout_ms for pulls to end and takes those that did; true when one did. */
bool mon_pull_wait(struct mon *m, int timeout_ms);
const char *mon_verdict_name(enum mon_verdict v);
/* Each appliance's log against --stalled-after, between pulls too: a line when it changes. */
void mon_watch_growth(struct mon *m);

/* reload.c: SIGHUP's fleet file read again, the appliances in both keeping their states. */
void mon_reload(struct mon *m);

/* expose.c: what the HTTP routes serve, built under the lock (malloc'ed, NULL when out of memory). */
char *mon_metrics(struct mon *m, size_t *len);
char *mon_status_json(struct mon *m, size_t *len);
/* The fleet page to be built again when next asked for (after a pull or a SIGHUP). */
void mon_overview_stale(struct mon *m);
/* The fleet page (malloc'ed), built from the appliances' pages if stale, or NULL. */
char *mon_overview_page(struct mon *m, size_t *len);
/* The appliance named name's report page (malloc'ed), or NULL when there is none. */
char *mon_report_page(struct mon *m, const char *name, size_t *len);

/* server.c: the read-only HTTP endpoint. */
struct mon_server;
struct mon_server *mon_serve(struct mon *m, struct pc_error *err);
uint16_t mon_server_port(const struct mon_server *s);
void mon_server_stop(struct mon_server *s);

#endif /* PODCAP_MONITOR_H */
