/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What podcap-monitor's routes serve: /metrics in Prometheus's text format
 * (every series podcap_monitor_*, one per appliance, labelled appliance),
 * /status.json, the fleet page (podcap-verify --fleet --html's, from each
 * appliance's last page) and each appliance's own page (podcap-verify
 * --html's, as its last finished pull wrote it). Built under the lock
 * from the fields pull.c keeps; numbers without a locale.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "base/fileio.h"
#include "verify/verify.h"

#include "../podcap-verify/fleet.h"
#include "monitor.h"

#define PAGE_MAX ((size_t)256 << 20)

static double
seconds(uint64_t ns)
{
	return (double)ns / 1e9;
}

static void
help(FILE *f, const char *name, const char *type, const char *text)
{
	fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, text, name, type);
}

/* One series per appliance: value(app) as a whole number, for those has(app). */
typedef bool app_has_fn(const struct mon_app *app);
typedef uint64_t app_u64_fn(const struct mon_app *app);

static bool
any(const struct mon_app *app)
{
	(void)app;
	return true;
}

static bool
verified_once(const struct mon_app *app)
{
	return app->verified_once;
}

static bool
has_last(const struct mon_app *app)
{
	return app->have_last;
}

static bool
has_witnesses(const struct mon_app *app)
{
	return app->have_last && app->last.witness_keys > 0;
}

static bool
has_attest(const struct mon_app *app)
{
	return app->have_last && app->last.attest;
}

static bool
has_taps(const struct mon_app *app)
{
	return app->have_last && app->last.taps > 0;
}

#define GETTER(fn, expr)                              \
	static uint64_t fn(const struct mon_app *app) \
	{                                             \
		return (expr);                        \
	}

GETTER(g_up, app->verdict == MON_VERIFIED || app->verdict == MON_FAILED)
GETTER(g_verified, app->verdict == MON_VERIFIED)
GETTER(g_stalled, app->stalled)
GETTER(g_size, app->size)
GETTER(g_errors, app->errors)
GETTER(g_records_read, app->records_read)
GETTER(g_pull_records, app->last.records)
GETTER(g_pull_resumed, app->last.resumed_at)
GETTER(g_witnesses, app->last.witnesses_valid)
GETTER(g_quorum, app->last.witness_quorum)
GETTER(g_witnessed, app->last.witnessed)
GETTER(g_attested, app->last.windows_attested)
GETTER(g_unattested, app->last.windows_unattested)
GETTER(g_taps_agree, app->last.taps_agree)
GETTER(g_interval, app->interval_ns / 1000000000u)

static void
series(FILE *f, struct mon *m, const char *name, const char *type, const char *text,
       app_has_fn *has, app_u64_fn *value)
{
	help(f, name, type, text);
	for (size_t i = 0; i < m->napps; i++)
		if (has(&m->apps[i]))
			fprintf(f, "%s{appliance=\"%s\"} %" PRIu64 "\n", name, m->apps[i].a->name,
				value(&m->apps[i]));
}

/* The times: each as seconds since the epoch, and the log's growth as an age. */
static void
times(FILE *f, struct mon *m, uint64_t now)
{
	help(f, "podcap_monitor_last_verified_timestamp_seconds", "gauge",
	     "When the log last verified (Unix time).");
	for (size_t i = 0; i < m->napps; i++)
		if (m->apps[i].verified_once)
			fprintf(f,
				"podcap_monitor_last_verified_timestamp_seconds{appliance=\"%s\"} "
				"%.3f\n",
				m->apps[i].a->name, seconds(m->apps[i].verified_at_ns));
	help(f, "podcap_monitor_last_pull_timestamp_seconds", "gauge",
	     "When the last pull ended, whatever its result (Unix time).");
	for (size_t i = 0; i < m->napps; i++)
		if (m->apps[i].pulled_at_ns != 0)
			fprintf(
			    f,
			    "podcap_monitor_last_pull_timestamp_seconds{appliance=\"%s\"} %.3f\n",
			    m->apps[i].a->name, seconds(m->apps[i].pulled_at_ns));
	help(f, "podcap_monitor_log_growth_age_seconds", "gauge",
	     "Seconds since the verified tree size last grew.");
	for (size_t i = 0; i < m->napps; i++)
		if (m->apps[i].verified_once)
			fprintf(
			    f, "podcap_monitor_log_growth_age_seconds{appliance=\"%s\"} %.3f\n",
			    m->apps[i].a->name,
			    seconds(now > m->apps[i].grew_at_ns ? now - m->apps[i].grew_at_ns : 0));
	help(f, "podcap_monitor_checkpoint_age_seconds", "gauge",
	     "The verified checkpoint's newest window's age at the last finished pull.");
	for (size_t i = 0; i < m->napps; i++)
		if (m->apps[i].have_last)
			fprintf(f, "podcap_monitor_checkpoint_age_seconds{appliance=\"%s\"} %.3f\n",
				m->apps[i].a->name, seconds(m->apps[i].last.age_ns));
	help(f, "podcap_monitor_backoff_seconds", "gauge",
	     "The wait before the next pull: the interval, doubled for each pull in a row "
	     "that did not finish.");
	for (size_t i = 0; i < m->napps; i++)
		if (m->apps[i].pulled_at_ns != 0)
			fprintf(f, "podcap_monitor_backoff_seconds{appliance=\"%s\"} %.3f\n",
				m->apps[i].a->name, seconds(m->apps[i].backoff_ns));
}

/* Each check's failures in the last finished pull, and the witness and tap rules as checks. */
static void
failures(FILE *f, struct mon *m)
{
	help(f, "podcap_monitor_verification_failures", "gauge",
	     "Failures of each check in the last finished verification (witness: the quorum "
	     "rule, tap: the reconciliation).");
	for (size_t i = 0; i < m->napps; i++) {
		const struct mon_app *app = &m->apps[i];

		if (!app->have_last)
			continue;
		for (int c = 0; c < PC_VC_COUNT; c++)
			fprintf(
			    f,
			    "podcap_monitor_verification_failures{appliance=\"%s\",check=\"%s\"} "
			    "%" PRIu64 "\n",
			    app->a->name, pc_verify_check_name((enum pc_verify_check)c),
			    app->last.failures[c]);
		if (app->last.witness_keys > 0)
			fprintf(f,
				"podcap_monitor_verification_failures{appliance=\"%s\",check="
				"\"witness\"} "
				"%d\n",
				app->a->name, app->last.witnessed ? 0 : 1);
		if (app->last.taps > 0)
			fprintf(f,
				"podcap_monitor_verification_failures{appliance=\"%s\",check="
				"\"tap\"} %d\n",
				app->a->name, app->last.taps_agree ? 0 : 1);
	}
}

static void
pulls(FILE *f, struct mon *m)
{
	static const char *const results[] = { NULL, "verified", "failed", "unreachable" };

	help(f, "podcap_monitor_pulls_total", "counter",
	     "Pulls since the monitor started, by result.");
	for (size_t i = 0; i < m->napps; i++)
		for (int r = MON_VERIFIED; r <= MON_UNREACHABLE; r++)
			fprintf(
			    f,
			    "podcap_monitor_pulls_total{appliance=\"%s\",result=\"%s\"} %" PRIu64
			    "\n",
			    m->apps[i].a->name, results[r], m->apps[i].pulls[r]);
	help(f, "podcap_monitor_cap_headroom_ratio", "gauge",
	     "1 less the largest share of its cap x window any pod used in one window.");
	for (size_t i = 0; i < m->napps; i++)
		if (m->apps[i].have_last)
			fprintf(f, "podcap_monitor_cap_headroom_ratio{appliance=\"%s\"} %.3f\n",
				m->apps[i].a->name,
				1.0 - (double)m->apps[i].last.peak_permille / 1000.0);
}

static void
metrics(FILE *f, struct mon *m)
{
	uint64_t now = pc_now_ns();

	series(f, m, "podcap_monitor_up", "gauge",
	       "1 when the last pull reached the appliance and read its log to the end.", any,
	       g_up);
	series(f, m, "podcap_monitor_verified", "gauge",
	       "1 when the last pull verified the log, every check holding.", any, g_verified);
	series(f, m, "podcap_monitor_stalled", "gauge",
	       "1 when the verified log has not grown for --stalled-after.", any, g_stalled);
	series(f, m, "podcap_monitor_tree_size", "gauge", "The last verified tree size.",
	       verified_once, g_size);
	series(f, m, "podcap_monitor_consecutive_errors", "gauge",
	       "Pulls in a row that did not finish (endpoint down, I/O error).", any, g_errors);
	series(f, m, "podcap_monitor_interval_seconds", "gauge", "The pull interval.", any,
	       g_interval);
	times(f, m, now);
	failures(f, m);
	series(f, m, "podcap_monitor_records_read_total", "counter",
	       "Records read and checked since the monitor started.", any, g_records_read);
	series(f, m, "podcap_monitor_pull_records", "gauge",
	       "Records the last finished pull read and checked.", has_last, g_pull_records);
	series(f, m, "podcap_monitor_pull_resumed_records", "gauge",
	       "Records the last finished pull took from its state, not read again.", has_last,
	       g_pull_resumed);
	series(f, m, "podcap_monitor_witnesses_cosigning", "gauge",
	       "Witnesses whose cosignature of the verified checkpoint is valid.", has_witnesses,
	       g_witnesses);
	series(f, m, "podcap_monitor_witness_quorum", "gauge",
	       "Valid cosignatures the witness policy wants.", has_witnesses, g_quorum);
	series(f, m, "podcap_monitor_witness_quorum_held", "gauge",
	       "1 when the witness policy held.", has_witnesses, g_witnessed);
	series(f, m, "podcap_monitor_windows_attested", "gauge",
	       "Windows within reach of a valid TPM quote (--attest).", has_attest, g_attested);
	series(f, m, "podcap_monitor_windows_unattested", "gauge",
	       "Windows no valid TPM quote vouches for (--attest).", has_attest, g_unattested);
	series(f, m, "podcap_monitor_tap_agreement", "gauge",
	       "1 when the verifier's taps agree with the shaper's windows.", has_taps,
	       g_taps_agree);
	pulls(f, m);
	help(f, "podcap_monitor_pulls_running", "gauge", "Pulls in flight.");
	fprintf(f, "podcap_monitor_pulls_running %u\n", m->running);
	help(f, "podcap_monitor_appliances", "gauge", "Appliances of the fleet file.");
	fprintf(f, "podcap_monitor_appliances %zu\n", m->napps);
}

char *
mon_metrics(struct mon *m, size_t *len)
{
	char *text = NULL;
	FILE *f = open_memstream(&text, len);

	if (f == NULL)
		return NULL;
	pthread_mutex_lock(&m->lock);
	metrics(f, m);
	pthread_mutex_unlock(&m->lock);
	if (fclose(f) != 0) {
		free(text);
		return NULL;
	}
	return text;
}

static void
status_app(FILE *f, const struct mon_app *app, uint64_t now)
{
	fprintf(f, "    {\"name\": ");
	pc_json_string(f, app->a->name);
	fprintf(f, ", \"source\": ");
	pc_json_string(f, app->a->url != NULL ? app->a->url : app->a->ledger);
	fprintf(f,
		", \"status\": \"%s\", \"growth\": \"%s\", \"tree_size\": %" PRIu64
		", \"verified_at\": %.3f, \"pulled_at\": %.3f, \"growth_age_seconds\": %.3f"
		", \"consecutive_errors\": %" PRIu64 ", \"backoff_seconds\": %.3f"
		", \"records_read\": %" PRIu64 ", \"error\": ",
		mon_verdict_name(app->verdict), app->stalled ? "stalled" : "growing", app->size,
		seconds(app->verified_at_ns), seconds(app->pulled_at_ns),
		app->verified_once ? seconds(now - app->grew_at_ns) : 0.0, app->errors,
		seconds(app->backoff_ns), app->records_read);
	pc_json_string(f, app->error);
	fprintf(f, ", \"failures\": {");
	bool first = true;
	for (int c = 0; c < PC_VC_COUNT && app->have_last; c++)
		if (app->last.failures[c] > 0) {
			fprintf(f, "%s\"%s\": %" PRIu64, first ? "" : ", ",
				pc_verify_check_name((enum pc_verify_check)c),
				app->last.failures[c]);
			first = false;
		}
	if (app->have_last && !app->last.witnessed)
		fprintf(f, "%s\"witness\": 1", first ? "" : ", ");
	fprintf(f, "}}");
}

char *
mon_status_json(struct mon *m, size_t *len)
{
	char *text = NULL;
	FILE *f = open_memstream(&text, len);
	uint64_t now = pc_now_ns();
	size_t bad = 0;

	if (f == NULL)
		return NULL;
	pthread_mutex_lock(&m->lock);
	fprintf(f, "{\n  \"fleet\": ");
	pc_json_string(f, m->fleet_file);
	fprintf(f, ",\n  \"appliances\": [\n");
	for (size_t i = 0; i < m->napps; i++) {
		status_app(f, &m->apps[i], now);
		fputs(i + 1 < m->napps ? ",\n" : "\n", f);
		bad += m->apps[i].verdict != MON_VERIFIED || m->apps[i].stalled;
	}
	fprintf(f, "  ],\n  \"ok\": %s\n}\n", bad == 0 ? "true" : "false");
	pthread_mutex_unlock(&m->lock);
	if (fclose(f) != 0) {
		free(text);
		return NULL;
	}
	return text;
}

/* A fleet page's status of the appliance: its last pull's, as podcap-verify's exit status. */
static int
row_status(const struct mon_app *app)
{
	return app->verdict == MON_VERIFIED ? 0 : app->verdict == MON_FAILED ? 1 : 2;
}

/* The fleet page built again from the appliances' pages; under the lock. */
static void
overview_build(struct mon *m)
{
	struct vf_fleet_row *rows = calloc(m->napps ? m->napps : 1, sizeof(*rows));
	char(*html)[PC_PATH_LEN] = calloc(m->napps ? m->napps : 1, PC_PATH_LEN);
	char(*err)[PC_PATH_LEN] = calloc(m->napps ? m->napps : 1, PC_PATH_LEN);
	char *text = NULL;
	size_t len = 0, k = 0, nfailed = 0;
	FILE *f = open_memstream(&text, &len);

	if (rows == NULL || html == NULL || err == NULL || f == NULL)
		goto out;
	/* the failed first, as podcap-verify --fleet orders them */
	for (int pass = 0; pass < 2; pass++)
		for (size_t i = 0; i < m->napps; i++) {
			const struct mon_app *app = &m->apps[i];
			int st = row_status(app);

			if ((pass == 0) != (st != 0))
				continue;
			mon_path(m, app, ".html", html[k], PC_PATH_LEN);
			mon_path(m, app, ".err", err[k], PC_PATH_LEN);
			rows[k] =
			    (struct vf_fleet_row){ .name = app->a->name,
						   .source = app->a->url != NULL ? app->a->url
										 : app->a->ledger,
						   .status = st,
						   .html = html[k],
						   .err = err[k] };
			nfailed += st != 0;
			k++;
		}
	vf_fleet_page(f, rows, k, nfailed);
	if (fclose(f) == 0) {
		f = NULL;
		free(m->overview);
		m->overview = text;
		m->overview_len = len;
		m->overview_stale = false;
		text = NULL;
	}
out:
	if (f != NULL)
		fclose(f);
	free(text);
	free(rows);
	free(html);
	free(err);
}

void
mon_overview_stale(struct mon *m)
{
	pthread_mutex_lock(&m->lock);
	m->overview_stale = true;
	pthread_mutex_unlock(&m->lock);
}

/*
 * Built when asked for, not after every pull: a fleet page holds every
 * appliance's report, so building it after each pull would make a round
 * of pulls over the fleet cost the square of its size.
 */
char *
mon_overview_page(struct mon *m, size_t *len)
{
	char *body = NULL;

	pthread_mutex_lock(&m->lock);
	if (m->overview == NULL || m->overview_stale)
		overview_build(m);
	if (m->overview != NULL && (body = malloc(m->overview_len + 1)) != NULL) {
		memcpy(body, m->overview, m->overview_len);
		*len = m->overview_len;
	}
	pthread_mutex_unlock(&m->lock);
	return body;
}

char *
mon_report_page(struct mon *m, const char *name, size_t *len)
{
	char path[PC_PATH_LEN];

	bool found = false;

	/* under the lock: a SIGHUP may replace the appliances */
	pthread_mutex_lock(&m->lock);
	for (size_t i = 0; i < m->napps && !found; i++)
		if (strcmp(m->apps[i].a->name, name) == 0) {
			mon_path(m, &m->apps[i], ".html", path, sizeof(path));
			found = true;
		}
	pthread_mutex_unlock(&m->lock);
	return found ? pc_read_file(path, PAGE_MAX, len) : NULL;
}
