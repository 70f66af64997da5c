/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * One pull of one appliance: a process of its own (as podcap-verify
 * --fleet runs each appliance, so that a hostile log or a hung endpoint
 * touches no other appliance's result) that runs podcap-verify's
 * one-appliance verifier on the appliance's fleet entry, resuming from its
 * state in the state directory, and hands back what it found through a
 * pipe. Its report page goes to a file beside the state, renamed into
 * place when the pull finishes. Then the schedule: the next pull an
 * interval on, or, while the endpoint is down, after a wait that doubles
 * with each failed pull up to --max-backoff.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/clock.h"

#include "../podcap-verify/fleet.h"
#include "monitor.h"

const char *
mon_verdict_name(enum mon_verdict v)
{
	static const char *const names[] = { "pending", "verified", "failed", "unreachable" };

	return v <= MON_UNREACHABLE ? names[v] : "pending";
}

/*
 * The forked child: its files, then a fresh podcap-monitor (MON_PULL_ARG)
 * for the pull. A new image, not the fork itself, runs the verifier: it
 * holds none of the monitor's memory (the endpoint's TLS key, the other
 * appliances' findings) and none of its threads' state.
 */
static void __attribute__((noreturn))
child(struct mon *m, const struct mon_app *app, int fd, pid_t parent)
{
	char opath[PC_PATH_LEN], epath[PC_PATH_LEN];
	char **args = calloc((size_t)m->argc + 3, sizeof(*args));

	/* a monitor killed -9 takes its pulls with it: no orphan holds its port or state */
	if (args == NULL || prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != parent)
		_exit(2);
	mon_path(m, app, ".out", opath, sizeof(opath));
	mon_path(m, app, ".err", epath, sizeof(epath));
	int ofd = open(opath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	int efd = open(epath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (ofd < 0 || efd < 0 || dup2(ofd, 1) < 0 || dup2(efd, 2) < 0)
		_exit(2);
	/* the outcome's pipe is fd 3 of the new image, open across exec */
	if ((fd == MON_PULL_FD ? fcntl(fd, F_SETFD, 0) : dup2(fd, MON_PULL_FD)) < 0)
		_exit(2);
	args[0] = m->argv[0];
	args[1] = (char *)(uintptr_t)MON_PULL_ARG;
	args[2] = (char *)(uintptr_t)app->a->name;
	for (int i = 1; i < m->argc; i++)
		args[i + 2] = m->argv[i];
	execv("/proc/self/exe", args);
	_exit(2);
}

int
mon_pull_main(struct mon *m, const char *name)
{
	static struct vf_options o;
	static struct vf_outcome out;
	char state[PC_PATH_LEN], html[PC_PATH_LEN];
	struct pc_error err;

	if (pc_fleet_load(m->fleet_file, &m->fleet, &err) < 0) {
		pc_error_print(&err, stderr);
		return 2;
	}
	for (size_t i = 0; i < m->fleet.n; i++) {
		struct mon_app app = { .a = &m->fleet.a[i] };

		if (strcmp(app.a->name, name) != 0)
			continue;
		mon_path(m, &app, ".state", state, sizeof(state));
		mon_path(m, &app, ".html.tmp", html, sizeof(html));
		o = m->common;
		vf_fleet_appliance_options(&o, app.a, html);
		/* the monitor keeps every appliance's state in its own directory */
		o.state = state;
		int rc = vf_run(&o, &out);
		fflush(NULL);
		if (write(MON_PULL_FD, &out, sizeof(out)) != (ssize_t)sizeof(out))
			return 2;
		pc_fleet_free(&m->fleet);
		return rc;
	}
	mon_log("%s: no such appliance in %s (was the file changed?)", name, m->fleet_file);
	return 2;
}

void
mon_pull_start(struct mon *m, struct mon_app *app, uint64_t now_mono)
{
	int p[2];
	pid_t parent = getpid();

	if (pipe2(p, O_CLOEXEC) < 0) {
		mon_log("%s: cannot pull: pipe: %s", app->a->name, strerror(errno));
		app->due_mono_ns = now_mono + app->interval_ns;
		return;
	}
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0) {
		mon_log("%s: cannot pull: fork: %s", app->a->name, strerror(errno));
		close(p[0]);
		close(p[1]);
		app->due_mono_ns = now_mono + app->interval_ns;
		return;
	}
	if (pid == 0) {
		close(p[0]);
		child(m, app, p[1], parent);
	}
	close(p[1]);
	app->pid = pid;
	app->result_fd = p[0];
	app->started_ns = now_mono;
	m->running++;
}

/* The first line of what the pull said on stderr: why it did not finish. */
static void
read_complaint(const struct mon *m, struct mon_app *app)
{
	char path[PC_PATH_LEN];
	size_t len = 0;

	mon_path(m, app, ".err", path, sizeof(path));
	char *text = pc_read_file(path, 1 << 20, &len);
	snprintf(app->error, sizeof(app->error), "%s",
		 text != NULL && len > 0 ? text : "the pull ended without a word");
	app->error[strcspn(app->error, "\n")] = '\0';
	free(text);
}

/* The checks that failed, "root, fork", for the journal. */
static void
failed_checks(const struct vf_outcome *o, char *buf, size_t len)
{
	size_t n = 0;

	buf[0] = '\0';
	for (int c = 0; c < PC_VC_COUNT && n < len; c++)
		if (o->failures[c] > 0)
			n += (size_t)snprintf(buf + n, len - n, "%s%s", n ? ", " : "",
					      pc_verify_check_name((enum pc_verify_check)c));
	if (!o->witnessed && n < len)
		n += (size_t)snprintf(buf + n, len - n, "%switness", n ? ", " : "");
	if (o->taps > 0 && !o->taps_agree && n < len)
		snprintf(buf + n, len - n, "%stap", n ? ", " : "");
}

/* A finished verification: what it found, and whether the log grew. */
static void
take_outcome(struct mon_app *app, const struct vf_outcome *o, uint64_t now)
{
	app->last = *o;
	app->have_last = true;
	app->records_read += o->records;
	app->errors = 0;
	app->error[0] = '\0';
	if (o->rc != 0) {
		app->verdict = MON_FAILED;
		return;
	}
	app->verdict = MON_VERIFIED;
	if (!app->verified_once || o->size > app->size)
		app->grew_at_ns = now;
	app->verified_once = true;
	app->size = o->size;
	app->verified_at_ns = now;
}

/* A journal line for each change of the verdict or of the log's growth. */
static void
say_changes(const struct mon *m, const struct mon_app *app, enum mon_verdict was, bool was_stalled)
{
	char checks[256];

	if (app->verdict != was) {
		if (app->verdict == MON_FAILED) {
			failed_checks(&app->last, checks, sizeof(checks));
			mon_log("%s: %s -> failed: the log failed verification (%s)", app->a->name,
				mon_verdict_name(was), checks);
		} else if (app->verdict == MON_UNREACHABLE) {
			mon_log("%s: %s -> unreachable: %s", app->a->name, mon_verdict_name(was),
				app->error);
		} else {
			mon_log("%s: %s -> verified at tree size %" PRIu64, app->a->name,
				mon_verdict_name(was), app->size);
		}
	}
	if (app->stalled != was_stalled)
		mon_log("%s: %s (tree size %" PRIu64 ", last grew %" PRIu64 " s ago, %s %" PRIu64
			" s)",
			app->a->name, app->stalled ? "growing -> stalled" : "stalled -> growing",
			app->size, (uint64_t)((pc_now_ns() - app->grew_at_ns) / 1000000000u),
			app->stalled ? "more than" : "the limit is",
			(uint64_t)(m->stalled_ns / 1000000000u));
}

/* The wait before the next pull: an interval, doubled for each pull in a row that failed. */
static uint64_t
next_wait(const struct mon *m, const struct mon_app *app)
{
	uint64_t wait = app->interval_ns, cap = m->max_backoff_ns;

	if (cap < app->interval_ns)
		cap = app->interval_ns;
	for (uint64_t i = 0; i < app->errors && wait < cap; i++)
		wait *= 2;
	return wait < cap ? wait : cap;
}

/* The page the pull wrote, in place of the last one; kept when the pull did not finish. */
static void
install_page(const struct mon *m, const struct mon_app *app, bool finished)
{
	char tmp[PC_PATH_LEN], page[PC_PATH_LEN];

	mon_path(m, app, ".html.tmp", tmp, sizeof(tmp));
	mon_path(m, app, ".html", page, sizeof(page));
	if (!finished || rename(tmp, page) < 0)
		unlink(tmp);
}

/* Whether the log has not grown for --stalled-after; checked after every pull. */
static bool
is_stalled(const struct mon *m, const struct mon_app *app, uint64_t now)
{
	return app->verified_once && now - app->grew_at_ns > m->stalled_ns;
}

static void
take(struct mon *m, struct mon_app *app, int status)
{
	struct vf_outcome o;
	uint64_t now = pc_now_ns();
	int code = WIFEXITED(status) ? WEXITSTATUS(status) : 2;
	ssize_t n = read(app->result_fd, &o, sizeof(o));
	bool finished = (code == 0 || code == 1) && n == (ssize_t)sizeof(o);

	close(app->result_fd);
	app->result_fd = -1;
	install_page(m, app, finished);
	pthread_mutex_lock(&m->lock);
	enum mon_verdict was = app->verdict;
	bool was_stalled = app->stalled;
	if (finished) {
		take_outcome(app, &o, now);
	} else {
		app->verdict = MON_UNREACHABLE;
		app->errors++;
		read_complaint(m, app);
	}
	app->pulls[app->verdict]++;
	app->pulled_at_ns = now;
	app->stalled = is_stalled(m, app, now);
	app->backoff_ns = next_wait(m, app);
	pthread_mutex_unlock(&m->lock);
	app->due_mono_ns = pc_mono_ns() + app->backoff_ns;
	say_changes(m, app, was, was_stalled);
	if (mon_store_save(m, app) < 0)
		mon_log("%s: cannot keep its state: %s", app->a->name, strerror(errno));
}

bool
mon_pull_reaped(struct mon *m, pid_t pid, int status)
{
	for (size_t i = 0; i < m->napps; i++) {
		struct mon_app *app = &m->apps[i];

		if (app->pid != pid)
			continue;
		app->pid = 0;
		m->running--;
		take(m, app, status);
		return true;
	}
	return false;
}

void
mon_watch_growth(struct mon *m)
{
	uint64_t now = pc_now_ns();

	for (size_t i = 0; i < m->napps; i++) {
		struct mon_app *app = &m->apps[i];
		bool stalled = is_stalled(m, app, now);

		if (stalled == app->stalled)
			continue;
		pthread_mutex_lock(&m->lock);
		app->stalled = stalled;
		pthread_mutex_unlock(&m->lock);
		say_changes(m, app, app->verdict, !stalled);
		if (mon_store_save(m, app) < 0)
			mon_log("%s: cannot keep its state: %s", app->a->name, strerror(errno));
	}
}
