/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * One pull of one appliance: a process of its own (as podcap-verify
 * --fleet runs each appliance, so that a hostile log or a hung endpoint
 * touches no other appliance's result), forked by the pull launcher
 * (launch.c), that runs podcap-verify's one-appliance verifier on the
 * appliance's fleet entry, resuming from its state in the state directory,
 * and hands back what it found through a pipe: the pull has ended when the
 * pipe has its outcome or is closed without one. Its report page goes to a
 * file beside the state, renamed into place when the pull finishes. Then
 * the schedule: the next pull an interval on, or, while the endpoint is
 * down, after a wait that doubles with each failed pull up to --max-backoff.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

void
mon_pull_start(struct mon *m, struct mon_app *app, uint64_t now_mono)
{
	int p[2];

	if (pipe2(p, O_CLOEXEC) < 0) {
		mon_log("%s: cannot pull: pipe: %s", app->a->name, strerror(errno));
		app->due_mono_ns = now_mono + app->interval_ns;
		return;
	}
	pid_t pid = mon_launch_pull(m, app->a->name, p[1]);
	close(p[1]);
	if (pid <= 0) {
		mon_log("%s: cannot pull: the pull launcher did not start it", app->a->name);
		close(p[0]);
		app->due_mono_ns = now_mono + app->interval_ns;
		return;
	}
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

/* A pull that ended: n bytes of its outcome o read from its pipe (a whole one, or it did not finish). */
static void
take(struct mon *m, struct mon_app *app, ssize_t n, const struct vf_outcome *o)
{
	uint64_t now = pc_now_ns();
	bool finished = n == (ssize_t)sizeof(*o) && (o->rc == 0 || o->rc == 1);

	close(app->result_fd);
	app->result_fd = -1;
	install_page(m, app, finished);
	pthread_mutex_lock(&m->lock);
	enum mon_verdict was = app->verdict;
	bool was_stalled = app->stalled;
	if (finished) {
		take_outcome(app, o, now);
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
mon_pull_wait(struct mon *m, int timeout_ms)
{
	struct pollfd fds[PC_FLEET_MAX_JOBS];
	struct mon_app *of[PC_FLEET_MAX_JOBS];
	size_t n = 0;
	bool any = false;

	for (size_t i = 0; i < m->napps && n < PC_FLEET_MAX_JOBS; i++)
		if (m->apps[i].pid > 0) {
			fds[n] = (struct pollfd){ .fd = m->apps[i].result_fd, .events = POLLIN };
			of[n++] = &m->apps[i];
		}
	if (poll(fds, n, timeout_ms) <= 0)
		return false;
	for (size_t i = 0; i < n; i++) {
		struct vf_outcome o;
		ssize_t got;

		if (fds[i].revents == 0)
			continue;
		do
			got = read(fds[i].fd, &o, sizeof(o));
		while (got < 0 && errno == EINTR);
		of[i]->pid = 0;
		m->running--;
		take(m, of[i], got, &o);
		any = true;
	}
	return any;
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
