/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * GET /metrics: Prometheus text exposition (format 0.0.4) of the counters,
 * bucket levels, queue depths and the state of the ledger.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "podcap/units.h"

#include "control.h"
#include "metrics.h"
#include "recorder.h"

struct text {
	char *buf;
	size_t len, cap;
	int failed;
};

static void
emit(struct text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void
emit(struct text *t, const char *fmt, ...)
{
	va_list ap;

	for (;;) {
		if (t->failed)
			return;
		va_start(ap, fmt);
		int n = vsnprintf(t->buf + t->len, t->cap - t->len, fmt, ap);
		va_end(ap);
		if (n < 0) {
			t->failed = 1;
			return;
		}
		if ((size_t)n < t->cap - t->len) {
			t->len += (size_t)n;
			return;
		}
		size_t cap = (t->cap + (size_t)n) * 2;
		char *nb = realloc(t->buf, cap);
		if (nb == NULL) {
			t->failed = 1;
			return;
		}
		t->buf = nb;
		t->cap = cap;
	}
}

static void
family(struct text *t, const char *name, const char *type, const char *help)
{
	emit(t, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

char *
pc_metrics_text(void *ctx, size_t *len)
{
	static struct pc_pod_ctr pod[PC_MAX_PODS][PC_DIR_COUNT];
	static struct pc_link_ctr link[PC_MAX_UPLINKS][PC_DIR_COUNT];
	struct text t = { .cap = 16384 };
	struct pc_recorder_stats rs;

	(void)ctx;
	t.buf = malloc(t.cap);
	if (t.buf == NULL)
		return NULL;
	t.buf[0] = '\0';

	pthread_mutex_lock(&pc_dp.lock);
	const struct pc_table *tb = pc_dp.table;
	if (tb != NULL) {
		const struct pc_config *cfg = &tb->cfg;
		pc_control_read_totals(tb, pod, link);

		family(&t, "podcap_passed_bytes_total", "counter",
		       "L2 frame bytes (no FCS) forwarded, per pod and direction.");
		for (unsigned p = 0; p < cfg->npods; p++)
			for (unsigned d = 0; d < PC_DIR_COUNT; d++)
				emit(&t, "podcap_passed_bytes_total{pod=\"%s\",direction=\"%s\"} %lu\n",
				     cfg->pods[p].id, pc_dir_name(d), (unsigned long)pod[p][d].pass_bytes);
		family(&t, "podcap_passed_frames_total", "counter", "Frames forwarded, per pod and direction.");
		for (unsigned p = 0; p < cfg->npods; p++)
			for (unsigned d = 0; d < PC_DIR_COUNT; d++)
				emit(&t, "podcap_passed_frames_total{pod=\"%s\",direction=\"%s\"} %lu\n",
				     cfg->pods[p].id, pc_dir_name(d), (unsigned long)pod[p][d].pass_frames);
		family(&t, "podcap_dropped_bytes_total", "counter",
		       "Frame bytes dropped, per pod, direction and reason.");
		for (unsigned p = 0; p < cfg->npods; p++)
			for (unsigned d = 0; d < PC_DIR_COUNT; d++)
				for (unsigned r = 0; r < PC_POD_DROP_COUNT; r++)
					emit(&t, "podcap_dropped_bytes_total{pod=\"%s\",direction=\"%s\",reason=\"%s\"} %lu\n",
					     cfg->pods[p].id, pc_dir_name(d), pc_pod_drop_name(r),
					     (unsigned long)pod[p][d].drop_bytes[r]);
		family(&t, "podcap_dropped_frames_total", "counter",
		       "Frames dropped, per pod, direction and reason.");
		for (unsigned p = 0; p < cfg->npods; p++)
			for (unsigned d = 0; d < PC_DIR_COUNT; d++)
				for (unsigned r = 0; r < PC_POD_DROP_COUNT; r++)
					emit(&t, "podcap_dropped_frames_total{pod=\"%s\",direction=\"%s\",reason=\"%s\"} %lu\n",
					     cfg->pods[p].id, pc_dir_name(d), pc_pod_drop_name(r),
					     (unsigned long)pod[p][d].drop_frames[r]);
		family(&t, "podcap_uplink_dropped_bytes_total", "counter",
		       "Frame bytes of no pod dropped, per uplink, direction and reason (unmapped, malformed).");
		for (unsigned u = 0; u < cfg->nuplinks; u++)
			for (unsigned d = 0; d < PC_DIR_COUNT; d++)
				for (unsigned r = 0; r < PC_LINK_DROP_COUNT; r++)
					emit(&t, "podcap_uplink_dropped_bytes_total{uplink=\"%s\",direction=\"%s\",reason=\"%s\"} %lu\n",
					     cfg->uplinks[u].name, pc_dir_name(d), pc_link_drop_name(r),
					     (unsigned long)link[u][d].drop_bytes[r]);
		family(&t, "podcap_uplink_dropped_frames_total", "counter",
		       "Frames of no pod dropped, per uplink, direction and reason (unmapped, malformed).");
		for (unsigned u = 0; u < cfg->nuplinks; u++)
			for (unsigned d = 0; d < PC_DIR_COUNT; d++)
				for (unsigned r = 0; r < PC_LINK_DROP_COUNT; r++)
					emit(&t, "podcap_uplink_dropped_frames_total{uplink=\"%s\",direction=\"%s\",reason=\"%s\"} %lu\n",
					     cfg->uplinks[u].name, pc_dir_name(d), pc_link_drop_name(r),
					     (unsigned long)link[u][d].drop_frames[r]);
		family(&t, "podcap_bucket_level_bytes", "gauge", "Tokens in the bucket, in bytes.");
		for (unsigned p = 0; p < cfg->npods; p++)
			for (unsigned d = 0; d < PC_DIR_COUNT; d++)
				emit(&t, "podcap_bucket_level_bytes{pod=\"%s\",direction=\"%s\"} %lu\n",
				     cfg->pods[p].id, pc_dir_name(d),
				     (unsigned long)__atomic_load_n(&tb->shapers[p * 2 + d].pub_level_bytes,
								    __ATOMIC_RELAXED));
		family(&t, "podcap_queue_frames", "gauge", "Frames waiting in the shaping queue.");
		for (unsigned p = 0; p < cfg->npods; p++)
			for (unsigned d = 0; d < PC_DIR_COUNT; d++)
				emit(&t, "podcap_queue_frames{pod=\"%s\",direction=\"%s\"} %u\n",
				     cfg->pods[p].id, pc_dir_name(d),
				     __atomic_load_n(&tb->shapers[p * 2 + d].pub_queue_frames, __ATOMIC_RELAXED));
		family(&t, "podcap_queue_bytes", "gauge", "Bytes waiting in the shaping queue.");
		for (unsigned p = 0; p < cfg->npods; p++)
			for (unsigned d = 0; d < PC_DIR_COUNT; d++)
				emit(&t, "podcap_queue_bytes{pod=\"%s\",direction=\"%s\"} %lu\n",
				     cfg->pods[p].id, pc_dir_name(d),
				     (unsigned long)__atomic_load_n(&tb->shapers[p * 2 + d].pub_queue_bytes,
								    __ATOMIC_RELAXED));
		family(&t, "podcap_last_window_passed_bytes", "gauge",
		       "Bytes passed in the last closed window, per pod and direction.");
		for (unsigned p = 0; p < cfg->npods; p++)
			for (unsigned d = 0; d < PC_DIR_COUNT; d++)
				emit(&t, "podcap_last_window_passed_bytes{pod=\"%s\",direction=\"%s\"} %lu\n",
				     cfg->pods[p].id, pc_dir_name(d),
				     (unsigned long)pc_control_last_window_bytes(p, d));
		family(&t, "podcap_cap_bits_per_second", "gauge", "The cap in force, per pod and direction.");
		for (unsigned p = 0; p < cfg->npods; p++)
			for (unsigned d = 0; d < PC_DIR_COUNT; d++)
				emit(&t, "podcap_cap_bits_per_second{pod=\"%s\",direction=\"%s\"} %lu\n",
				     cfg->pods[p].id, pc_dir_name(d), (unsigned long)cfg->pods[p].limits.cap_bps);
		family(&t, "podcap_burst_bytes", "gauge", "The bucket depth in force, per pod and direction.");
		for (unsigned p = 0; p < cfg->npods; p++)
			for (unsigned d = 0; d < PC_DIR_COUNT; d++)
				emit(&t, "podcap_burst_bytes{pod=\"%s\",direction=\"%s\"} %lu\n",
				     cfg->pods[p].id, pc_dir_name(d), (unsigned long)cfg->pods[p].limits.burst_bytes);
	}
	pthread_mutex_unlock(&pc_dp.lock);

	pc_recorder_stats(&rs);
	family(&t, "podcap_ledger_records", "gauge", "Durable records in the ledger.");
	emit(&t, "podcap_ledger_records %lu\n", (unsigned long)rs.records);
	family(&t, "podcap_ledger_bytes", "gauge", "Size of the ledger on disk.");
	emit(&t, "podcap_ledger_bytes %lu\n", (unsigned long)rs.ledger_bytes);
	family(&t, "podcap_ledger_queued_records", "gauge", "Records waiting for the disk.");
	emit(&t, "podcap_ledger_queued_records %lu\n", (unsigned long)rs.queued);
	family(&t, "podcap_ledger_append_errors_total", "counter", "Failed ledger appends (retried).");
	emit(&t, "podcap_ledger_append_errors_total %lu\n", (unsigned long)rs.append_errors);
	family(&t, "podcap_ledger_lost_windows_total", "counter",
	       "Windows recorded only as a gap because the ledger queue overflowed.");
	emit(&t, "podcap_ledger_lost_windows_total %lu\n", (unsigned long)rs.lost_windows);
	family(&t, "podcap_last_checkpoint_age_seconds", "gauge",
	       "Seconds since the last signed checkpoint was published (-1: none yet).");
	if (rs.last_checkpoint_ns == 0)
		emit(&t, "podcap_last_checkpoint_age_seconds -1\n");
	else
		emit(&t, "podcap_last_checkpoint_age_seconds %.3f\n",
		     (double)(pc_now_ns() - rs.last_checkpoint_ns) / 1e9);

	if (t.failed) {
		free(t.buf);
		return NULL;
	}
	*len = t.len;
	return t.buf;
}
