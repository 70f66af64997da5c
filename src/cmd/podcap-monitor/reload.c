/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * SIGHUP: the fleet file read again. An appliance in both the old and the
 * new file keeps everything the monitor knows of it (its verdict, counters,
 * schedule, a pull in flight); a new one starts from its state in
 * --state-dir as at start; a removed one's pull in flight is dropped and
 * its files are left where they are. A file that does not load changes
 * nothing: the monitor says why and watches the fleet it had.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/clock.h"

#include "monitor.h"

static struct mon_app *
find(struct mon *m, const char *name)
{
	for (size_t i = 0; i < m->napps; i++)
		if (m->apps[i].a != NULL && strcmp(m->apps[i].a->name, name) == 0)
			return &m->apps[i];
	return NULL;
}

/* A removed appliance: its pull in flight killed (the launcher reaps it), its result not taken. */
static void
drop(struct mon *m, struct mon_app *app)
{
	char tmp[PC_PATH_LEN];

	if (app->pid > 0) {
		mon_launch_drop(m, app->pid);
		m->running--;
	}
	if (app->result_fd >= 0)
		close(app->result_fd);
	mon_path(m, app, ".html.tmp", tmp, sizeof(tmp));
	unlink(tmp);
}

/* The new file's appliances, each kept from the old ones by name or started anew. */
static struct mon_app *
carry_over(struct mon *m, struct pc_fleet *fl, size_t *added)
{
	struct mon_app *apps = calloc(fl->n ? fl->n : 1, sizeof(*apps));
	uint64_t now = pc_mono_ns();

	if (apps == NULL)
		return NULL;
	for (size_t i = 0; i < fl->n; i++) {
		struct mon_app *old = find(m, fl->a[i].name);

		if (old != NULL) {
			apps[i] = *old;
			old->a = NULL; /* taken: not dropped below */
		} else {
			apps[i].a = &fl->a[i];
			apps[i].result_fd = -1;
			mon_store_load(m, &apps[i]);
			apps[i].due_mono_ns = now;
			++*added;
		}
		apps[i].a = &fl->a[i];
		apps[i].interval_ns = fl->a[i].interval_ns ? fl->a[i].interval_ns : m->interval_ns;
	}
	return apps;
}

void
mon_reload(struct mon *m)
{
	struct pc_fleet fl, old_fleet;
	struct pc_error err;
	size_t added = 0, removed = 0;

	if (pc_fleet_load(m->fleet_file, &fl, &err) < 0) {
		mon_log("SIGHUP: %s: %s; still watching the %zu appliances of before",
			m->fleet_file, err.msg, m->napps);
		return;
	}
	/*
	 * Under the lock from the first change: carrying an appliance over
	 * clears its old entry's a, which the server's pages read
	 */
	pthread_mutex_lock(&m->lock);
	struct mon_app *apps = carry_over(m, &fl, &added);
	if (apps == NULL) {
		pthread_mutex_unlock(&m->lock);
		mon_log("SIGHUP: out of memory; still watching the %zu appliances of before",
			m->napps);
		pc_fleet_free(&fl);
		return;
	}
	for (size_t i = 0; i < m->napps; i++)
		if (m->apps[i].a != NULL) {
			drop(m, &m->apps[i]);
			removed++;
		}
	struct mon_app *old_apps = m->apps;
	old_fleet = m->fleet;
	m->fleet = fl;
	m->apps = apps;
	m->napps = fl.n;
	pthread_mutex_unlock(&m->lock);
	free(old_apps);
	pc_fleet_free(&old_fleet);
	if (mon_launcher_reload(m) < 0)
		mon_log("SIGHUP: the pull launcher did not read %s again: it pulls the appliances "
			"of before, and no new one",
			m->fleet_file);
	mon_log("SIGHUP: %s read again: %zu appliances, %zu added, %zu removed", m->fleet_file,
		m->napps, added, removed);
}
