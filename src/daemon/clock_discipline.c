/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The poller thread: a poll, its result published, the log told when the
 * discipline comes, goes or changes its grandmaster or port state, then
 * a wait for the next second (or the stop).
 */
#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <time.h>

#include "base/clock.h"
#include "discipline/ptp4l.h"

#include "clock_discipline.h"
#include "log.h"

static struct {
	pthread_mutex_t lock;
	pthread_cond_t cond; /* on CLOCK_MONOTONIC: the stop */
	pthread_t thread;
	bool started;
	struct pc_ptp4l client; /* the thread's alone */
	/* under lock */
	bool stop;
	struct pc_clock_stats st;
	struct pc_clock_acc acc;
} cd = { .lock = PTHREAD_MUTEX_INITIALIZER };

/* What the log said last, so that it speaks only of changes (the thread's alone). */
static struct {
	enum pc_clock_result res;
	uint8_t gm[8];
	uint8_t port_state;
	char why[PC_ERR_MSG_LEN];
} said = { .res = PC_CLOCK_RESULTS };

static void
tell_reading(const struct pc_clock_reading *r)
{
	char gm[PC_PTP_ID_TEXT];

	if (said.res == PC_CLOCK_OK && memcmp(said.gm, r->gm, 8) == 0 &&
	    said.port_state == r->port_state)
		return;
	pc_ptp_identity_text(r->gm, gm);
	PC_LOG(NOTICE, "ptp4l at %s: port %u %s, %s %s, offset %.1f ns, path delay %.1f ns%s\n",
	       cd.client.server.sun_path, r->port, pc_ptp_state_name(r->port_state),
	       r->gm_present ? "grandmaster" : "no grandmaster but this clock", gm,
	       (double)r->offset / 65536.0, (double)r->path_delay / 65536.0,
	       r->bounded ? "" : ", no bound on the offset");
	memcpy(said.gm, r->gm, 8);
	said.port_state = r->port_state;
}

static void
tell(enum pc_clock_result res, const struct pc_clock_reading *r, const struct pc_error *err)
{
	if (res == PC_CLOCK_OK) {
		tell_reading(r);
	} else if (res != said.res || strcmp(said.why, err->msg) != 0) {
		PC_LOG(WARNING, "ptp4l at %s: no reading (%s): %s; polled again every second\n",
		       cd.client.server.sun_path, pc_clock_result_name(res), err->msg);
		snprintf(said.why, sizeof(said.why), "%s", err->msg);
	}
	said.res = res;
}

static void
publish(enum pc_clock_result res, const struct pc_clock_reading *r)
{
	pthread_mutex_lock(&cd.lock);
	pc_clock_acc_add(&cd.acc, pc_mono_ns(), res, r);
	cd.st.polls[res]++;
	cd.st.up = res == PC_CLOCK_OK;
	if (res == PC_CLOCK_OK) {
		cd.st.have = true;
		cd.st.latest = *r;
	}
	pthread_mutex_unlock(&cd.lock);
}

/* Waits until deadline (CLOCK_MONOTONIC ns) or the stop; false when stopping. */
static bool
wait_until(uint64_t deadline)
{
	struct timespec ts = { .tv_sec = (time_t)(deadline / 1000000000u),
			       .tv_nsec = (long)(deadline % 1000000000u) };

	pthread_mutex_lock(&cd.lock);
	while (!cd.stop && pthread_cond_timedwait(&cd.cond, &cd.lock, &ts) != ETIMEDOUT)
		;
	bool go = !cd.stop;
	pthread_mutex_unlock(&cd.lock);
	return go;
}

static void *
poller(void *arg)
{
	uint64_t next = pc_mono_ns();

	(void)arg;
	do {
		struct pc_clock_reading r;
		struct pc_error err = { .msg = "" };
		enum pc_clock_result res =
		    pc_ptp4l_poll(&cd.client, PC_CLOCK_POLL_TIMEOUT_NS, &r, &err);

		publish(res, &r);
		tell(res, &r, &err);
		/* a second after the last, or after now if that passed (no catching up) */
		next += PC_CLOCK_POLL_NS;
		if (next <= pc_mono_ns())
			next = pc_mono_ns() + PC_CLOCK_POLL_NS;
	} while (wait_until(next));
	return NULL;
}

static int
init_cond(void)
{
	pthread_condattr_t ca;

	if (pthread_condattr_init(&ca) != 0)
		return -1;
	int rc = pthread_condattr_setclock(&ca, CLOCK_MONOTONIC) != 0 ||
	    pthread_cond_init(&cd.cond, &ca) != 0;
	pthread_condattr_destroy(&ca);
	return rc ? -1 : 0;
}

int
pc_clock_discipline_start(const char *path, uint8_t domain)
{
	struct pc_error err;

	if (pc_ptp4l_open(&cd.client, path, domain, &err) != 0) {
		PC_LOG(ERR, "the clock discipline: %s\n", err.msg);
		return -1;
	}
	pc_clock_acc_init(&cd.acc);
	memset(&cd.st, 0, sizeof(cd.st));
	cd.st.on = true;
	cd.stop = false;
	if (init_cond() != 0 || pthread_create(&cd.thread, NULL, poller, NULL) != 0) {
		PC_LOG(ERR, "the clock discipline: cannot start its thread\n");
		pc_ptp4l_close(&cd.client);
		return -1;
	}
	cd.started = true;
	PC_LOG(INFO, "reading the clock discipline from ptp4l at %s (domain %u), every second\n",
	       path, domain);
	return 0;
}

void
pc_clock_discipline_stop(void)
{
	if (!cd.started)
		return;
	pthread_mutex_lock(&cd.lock);
	cd.stop = true;
	pthread_cond_broadcast(&cd.cond);
	pthread_mutex_unlock(&cd.lock);
	pthread_join(cd.thread, NULL);
	pthread_cond_destroy(&cd.cond);
	pc_ptp4l_close(&cd.client);
	cd.started = false;
}

bool
pc_clock_discipline_snapshot(uint64_t cut_mono_ns, struct pc_clock_window *w)
{
	pthread_mutex_lock(&cd.lock);
	bool on = cd.st.on;
	if (on)
		pc_clock_acc_take(&cd.acc, cut_mono_ns, w);
	pthread_mutex_unlock(&cd.lock);
	if (!on)
		memset(w, 0, sizeof(*w));
	return on;
}

void
pc_clock_discipline_stats(struct pc_clock_stats *st)
{
	pthread_mutex_lock(&cd.lock);
	*st = cd.st;
	pthread_mutex_unlock(&cd.lock);
}
