/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The operator's live view through DPDK telemetry (dpdk-telemetry.py):
 *   /podcap/pods                 the ids of the pods in force
 *   /podcap/pod,POD              a pod's uplink, limits and prefixes
 *   /podcap/stats,POD            its counters, bucket level and queue depth, per direction
 *   /podcap/uplink_stats,UPLINK  frames of no pod dropped on the uplink
 *   /podcap/window_close         how long the stages of closing a window took
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <arpa/inet.h>

#include <rte_telemetry.h>

#include "base/units.h"

#include "daemon/control.h"
#include "daemon/log.h"
#include "daemon/timing.h"

/*
 * DPDK 22.11 telemetry nests containers in limited ways and allows dict keys
 * made of [A-Za-z0-9_/] only, which pod ids need not be. As /ethdev/list and
 * /ethdev/stats do, /podcap/pods lists the ids and the per-pod commands take
 * one as a parameter and return a flat dict.
 */
static void
add_dir(struct rte_tel_data *d, unsigned dir, const struct pc_pod_ctr *c, const struct pc_shaper *s)
{
	const char *dn = pc_dir_name(dir);
	char name[64];

#define ADD(key, val) do { \
		snprintf(name, sizeof(name), "%s_%s", dn, key); \
		rte_tel_data_add_dict_u64(d, name, (val)); \
	} while (0)
	ADD("passed_frames", c->pass_frames);
	ADD("passed_bytes", c->pass_bytes);
	for (unsigned r = 0; r < PC_POD_DROP_COUNT; r++) {
		char key[48];
		snprintf(key, sizeof(key), "dropped_%s_frames", pc_pod_drop_name(r));
		ADD(key, c->drop_frames[r]);
		snprintf(key, sizeof(key), "dropped_%s_bytes", pc_pod_drop_name(r));
		ADD(key, c->drop_bytes[r]);
	}
	ADD("bucket_level_bytes", __atomic_load_n(&s->pub_level_bytes, __ATOMIC_RELAXED));
	ADD("queue_frames", __atomic_load_n(&s->pub_queue_frames, __ATOMIC_RELAXED));
	ADD("queue_bytes", __atomic_load_n(&s->pub_queue_bytes, __ATOMIC_RELAXED));
#undef ADD
}

/* The pod named by params in the table in force; caller holds pc_dp.lock. */
static int
find_pod(const struct pc_table *t, const char *params)
{
	if (t == NULL)
		return -EAGAIN;
	if (params == NULL || params[0] == '\0')
		return -EINVAL;
	int p = pc_config_find_pod(&t->cfg, params);
	return p < 0 ? -EINVAL : p;
}

static int
cmd_stats(const char *cmd, const char *params, struct rte_tel_data *d)
{
	static struct pc_pod_ctr pod[PC_MAX_PODS][PC_DIR_COUNT];
	static struct pc_link_ctr link[PC_MAX_UPLINKS][PC_DIR_COUNT];

	(void)cmd;
	pthread_mutex_lock(&pc_dp.lock);
	const struct pc_table *t = pc_dp.table;
	int p = find_pod(t, params);
	if (p >= 0) {
		pc_control_read_totals(t, pod, link);
		rte_tel_data_start_dict(d);
		for (unsigned dir = 0; dir < PC_DIR_COUNT; dir++)
			add_dir(d, dir, &pod[p][dir], &t->shapers[(unsigned)p * PC_DIR_COUNT + dir]);
	}
	pthread_mutex_unlock(&pc_dp.lock);
	return p < 0 ? p : 0;
}

static int
cmd_uplink_stats(const char *cmd, const char *params, struct rte_tel_data *d)
{
	static struct pc_pod_ctr pod[PC_MAX_PODS][PC_DIR_COUNT];
	static struct pc_link_ctr link[PC_MAX_UPLINKS][PC_DIR_COUNT];
	int rc = 0;

	(void)cmd;
	pthread_mutex_lock(&pc_dp.lock);
	const struct pc_table *t = pc_dp.table;
	int u = t == NULL ? -EAGAIN : params == NULL ? -EINVAL : pc_config_find_uplink(&t->cfg, params);
	if (u < 0) {
		rc = u == -EAGAIN ? u : -EINVAL;
		goto out;
	}
	pc_control_read_totals(t, pod, link);
	rte_tel_data_start_dict(d);
	for (unsigned dir = 0; dir < PC_DIR_COUNT; dir++)
		for (unsigned r = 0; r < PC_LINK_DROP_COUNT; r++) {
			char name[64];
			snprintf(name, sizeof(name), "%s_dropped_%s_frames", pc_dir_name(dir),
				 pc_link_drop_name(r));
			rte_tel_data_add_dict_u64(d, name, link[u][dir].drop_frames[r]);
			snprintf(name, sizeof(name), "%s_dropped_%s_bytes", pc_dir_name(dir),
				 pc_link_drop_name(r));
			rte_tel_data_add_dict_u64(d, name, link[u][dir].drop_bytes[r]);
		}
	for (unsigned dir = 0; dir < PC_DIR_COUNT; dir++) {
		char name[64];
		snprintf(name, sizeof(name), "%s_dropped_%s_frames", pc_dir_name(dir),
			 PC_DROP_SPOOFED_NAME);
		rte_tel_data_add_dict_u64(d, name, link[u][dir].spoofed_frames);
		snprintf(name, sizeof(name), "%s_dropped_%s_bytes", pc_dir_name(dir),
			 PC_DROP_SPOOFED_NAME);
		rte_tel_data_add_dict_u64(d, name, link[u][dir].spoofed_bytes);
	}
out:
	pthread_mutex_unlock(&pc_dp.lock);
	return rc;
}

static void
prefix_text(const struct pc_prefix *px, char *buf, size_t len)
{
	char a[INET6_ADDRSTRLEN];
	inet_ntop(px->family == 4 ? AF_INET : AF_INET6, px->addr, a, sizeof(a));
	snprintf(buf, len, "%s/%u", a, px->len);
}

static int
cmd_pods(const char *cmd, const char *params, struct rte_tel_data *d)
{
	(void)cmd;
	(void)params;
	pthread_mutex_lock(&pc_dp.lock);
	const struct pc_table *t = pc_dp.table;
	if (t == NULL) {
		pthread_mutex_unlock(&pc_dp.lock);
		return -EAGAIN;
	}
	rte_tel_data_start_array(d, RTE_TEL_STRING_VAL);
	for (unsigned p = 0; p < t->cfg.npods; p++)
		rte_tel_data_add_array_string(d, t->cfg.pods[p].id);
	pthread_mutex_unlock(&pc_dp.lock);
	return 0;
}

static int
cmd_pod(const char *cmd, const char *params, struct rte_tel_data *d)
{
	(void)cmd;
	pthread_mutex_lock(&pc_dp.lock);
	const struct pc_table *t = pc_dp.table;
	int p = find_pod(t, params);
	if (p >= 0) {
		const struct pc_pod *pod = &t->cfg.pods[p];
		char prefixes[RTE_TEL_MAX_STRING_LEN] = "";
		size_t off = 0;
		for (unsigned i = 0; i < pod->nprefixes && off < sizeof(prefixes); i++) {
			char text[64];
			prefix_text(&pod->prefixes[i], text, sizeof(text));
			off += (size_t)snprintf(prefixes + off, sizeof(prefixes) - off, "%s%s",
						i ? " " : "", text);
		}
		rte_tel_data_start_dict(d);
		rte_tel_data_add_dict_string(d, "id", pod->id);
		rte_tel_data_add_dict_string(d, "uplink", t->cfg.uplinks[pod->uplink].name);
		rte_tel_data_add_dict_int(d, "gpus", (int)pod->gpus);
		rte_tel_data_add_dict_u64(d, "cap_bps", pod->limits.cap_bps);
		rte_tel_data_add_dict_u64(d, "burst_bytes", pod->limits.burst_bytes);
		rte_tel_data_add_dict_string(d, "mode",
					     pod->limits.mode == PC_MODE_SHAPE ? "shape" : "police");
		rte_tel_data_add_dict_u64(d, "queue_delay_ns", pod->limits.queue_delay_ns);
		rte_tel_data_add_dict_string(
		    d, "promise", pod->limits.promise == PC_PROMISE_WINDOW ? "window" : "envelope");
		rte_tel_data_add_dict_string(d, "prefixes", prefixes);
	}
	pthread_mutex_unlock(&pc_dp.lock);
	return p < 0 ? p : 0;
}

static int
cmd_window_close(const char *cmd, const char *params, struct rte_tel_data *d)
{
	(void)cmd;
	(void)params;
	rte_tel_data_start_dict(d);
	for (unsigned s = 0; s < PC_STAGE_COUNT; s++) {
		struct pc_stage_stats st;
		char name[64];

		pc_stage_read((enum pc_stage)s, &st);
		snprintf(name, sizeof(name), "%s_count", pc_stage_name((enum pc_stage)s));
		rte_tel_data_add_dict_u64(d, name, st.count);
		snprintf(name, sizeof(name), "%s_last_ns", pc_stage_name((enum pc_stage)s));
		rte_tel_data_add_dict_u64(d, name, st.last_ns);
		snprintf(name, sizeof(name), "%s_max_ns", pc_stage_name((enum pc_stage)s));
		rte_tel_data_add_dict_u64(d, name, st.max_ns);
		snprintf(name, sizeof(name), "%s_sum_ns", pc_stage_name((enum pc_stage)s));
		rte_tel_data_add_dict_u64(d, name, st.sum_ns);
	}
	return 0;
}

int
pd_telemetry_register(void)
{
	int rc = rte_telemetry_register_cmd("/podcap/pods", cmd_pods,
					    "The ids of the pods in force. No parameters");
	rc |= rte_telemetry_register_cmd("/podcap/pod", cmd_pod,
					 "A pod's uplink, cap, burst, mode, queue delay and prefixes. "
					 "Parameters: pod id");
	rc |= rte_telemetry_register_cmd("/podcap/stats", cmd_stats,
					 "A pod's counters, bucket level and queue depth, per direction. "
					 "Parameters: pod id");
	rc |= rte_telemetry_register_cmd("/podcap/uplink_stats", cmd_uplink_stats,
					 "Frames of no pod dropped on an uplink (unmapped, malformed). "
					 "Parameters: uplink name");
	rc |= rte_telemetry_register_cmd("/podcap/window_close", cmd_window_close,
					 "Window close stage times, ns. No parameters");
	return rc;
}
