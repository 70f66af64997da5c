/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The operator's live view through DPDK telemetry (dpdk-telemetry.py):
 *   /podcap/pods          the pod map in force
 *   /podcap/stats[,POD]   counters, bucket level and queue depth per pod and direction
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <arpa/inet.h>

#include <rte_telemetry.h>

#include "podcap/units.h"

#include "control.h"
#include "log.h"

static void
add_ctr(struct rte_tel_data *d, const struct pc_pod_ctr *c, const struct pc_shaper *s)
{
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_u64(d, "passed_frames", c->pass_frames);
	rte_tel_data_add_dict_u64(d, "passed_bytes", c->pass_bytes);
	for (unsigned r = 0; r < PC_POD_DROP_COUNT; r++) {
		char name[48];
		snprintf(name, sizeof(name), "dropped_%s_frames", pc_pod_drop_name(r));
		rte_tel_data_add_dict_u64(d, name, c->drop_frames[r]);
		snprintf(name, sizeof(name), "dropped_%s_bytes", pc_pod_drop_name(r));
		rte_tel_data_add_dict_u64(d, name, c->drop_bytes[r]);
	}
	rte_tel_data_add_dict_u64(d, "bucket_level_bytes",
				  __atomic_load_n(&s->pub_level_bytes, __ATOMIC_RELAXED));
	rte_tel_data_add_dict_u64(d, "queue_frames",
				  __atomic_load_n(&s->pub_queue_frames, __ATOMIC_RELAXED));
	rte_tel_data_add_dict_u64(d, "queue_bytes",
				  __atomic_load_n(&s->pub_queue_bytes, __ATOMIC_RELAXED));
}

static int
cmd_stats(const char *cmd, const char *params, struct rte_tel_data *d)
{
	static struct pc_pod_ctr pod[PC_MAX_PODS][PC_DIR_COUNT];
	static struct pc_link_ctr link[PC_MAX_UPLINKS][PC_DIR_COUNT];
	int rc = 0;

	(void)cmd;
	pthread_mutex_lock(&pc_dp.lock);
	const struct pc_table *t = pc_dp.table;
	if (t == NULL) {
		rc = -EAGAIN;
		goto out;
	}
	int only = -1;
	if (params != NULL && params[0] != '\0') {
		only = pc_config_find_pod(&t->cfg, params);
		if (only < 0) {
			rc = -EINVAL;
			goto out;
		}
	}
	pc_control_read_totals(t, pod, link);
	rte_tel_data_start_dict(d);
	for (unsigned p = 0; p < t->cfg.npods; p++) {
		if (only >= 0 && (unsigned)only != p)
			continue;
		struct rte_tel_data *pd = rte_tel_data_alloc();
		if (pd == NULL)
			break;
		rte_tel_data_start_dict(pd);
		for (unsigned dir = 0; dir < PC_DIR_COUNT; dir++) {
			struct rte_tel_data *dd = rte_tel_data_alloc();
			if (dd == NULL)
				break;
			add_ctr(dd, &pod[p][dir], &t->shapers[p * PC_DIR_COUNT + dir]);
			rte_tel_data_add_dict_container(pd, pc_dir_name(dir), dd, 0);
		}
		rte_tel_data_add_dict_container(d, t->cfg.pods[p].id, pd, 0);
	}
	if (only < 0) {
		for (unsigned u = 0; u < t->cfg.nuplinks; u++) {
			struct rte_tel_data *ud = rte_tel_data_alloc();
			if (ud == NULL)
				break;
			rte_tel_data_start_dict(ud);
			for (unsigned dir = 0; dir < PC_DIR_COUNT; dir++)
				for (unsigned r = 0; r < PC_LINK_DROP_COUNT; r++) {
					char name[48];
					snprintf(name, sizeof(name), "%s_%s_frames", pc_dir_name(dir),
						 pc_link_drop_name(r));
					rte_tel_data_add_dict_u64(ud, name, link[u][dir].drop_frames[r]);
					snprintf(name, sizeof(name), "%s_%s_bytes", pc_dir_name(dir),
						 pc_link_drop_name(r));
					rte_tel_data_add_dict_u64(ud, name, link[u][dir].drop_bytes[r]);
				}
			char key[PC_ID_LEN + 8];
			snprintf(key, sizeof(key), "uplink:%s", t->cfg.uplinks[u].name);
			rte_tel_data_add_dict_container(d, key, ud, 0);
		}
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
	rte_tel_data_start_dict(d);
	for (unsigned p = 0; p < t->cfg.npods; p++) {
		const struct pc_pod *pod = &t->cfg.pods[p];
		struct rte_tel_data *pd = rte_tel_data_alloc();
		struct rte_tel_data *px = rte_tel_data_alloc();
		if (pd == NULL || px == NULL) {
			rte_tel_data_free(pd);
			rte_tel_data_free(px);
			break;
		}
		rte_tel_data_start_dict(pd);
		rte_tel_data_add_dict_string(pd, "uplink", t->cfg.uplinks[pod->uplink].name);
		rte_tel_data_add_dict_int(pd, "gpus", (int)pod->gpus);
		rte_tel_data_add_dict_u64(pd, "cap_bps", pod->limits.cap_bps);
		rte_tel_data_add_dict_u64(pd, "burst_bytes", pod->limits.burst_bytes);
		rte_tel_data_add_dict_string(pd, "mode",
					     pod->limits.mode == PC_MODE_SHAPE ? "shape" : "police");
		rte_tel_data_add_dict_u64(pd, "queue_delay_ns", pod->limits.queue_delay_ns);
		rte_tel_data_start_array(px, RTE_TEL_STRING_VAL);
		for (unsigned i = 0; i < pod->nprefixes; i++) {
			char text[64];
			prefix_text(&pod->prefixes[i], text, sizeof(text));
			rte_tel_data_add_array_string(px, text);
		}
		rte_tel_data_add_dict_container(pd, "prefixes", px, 0);
		rte_tel_data_add_dict_container(d, pod->id, pd, 0);
	}
	pthread_mutex_unlock(&pc_dp.lock);
	return 0;
}

int
pc_telemetry_register(void)
{
	int rc = rte_telemetry_register_cmd("/podcap/pods", cmd_pods,
					    "The pod map in force: uplink, cap, burst, mode, prefixes per pod");
	if (rc == 0)
		rc = rte_telemetry_register_cmd("/podcap/stats", cmd_stats,
						"Counters, bucket level and queue depth per pod and direction. "
						"Parameters: an optional pod id");
	return rc;
}
