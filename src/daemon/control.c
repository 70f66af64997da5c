/* SPDX-License-Identifier: BSD-3-Clause */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <rte_common.h>
#include <rte_cycles.h>
#include <rte_pause.h>

#include "base/clock.h"
#include "base/units.h"

#include "control.h"
#include "log.h"
#include "timing.h"

/* Totals of closed windows, indexed by the table in force; under pc_dp.lock. */
static struct pc_pod_ctr totals_pod[PC_MAX_PODS][PC_DIR_COUNT];
static struct pc_link_ctr totals_link[PC_MAX_UPLINKS][PC_DIR_COUNT];
static uint64_t last_bytes[PC_MAX_PODS][PC_DIR_COUNT];

static void (*on_wait)(void);

void
pc_control_on_wait(void (*fn)(void))
{
	on_wait = fn;
}

static void
wait_for_workers(uint64_t epoch)
{
	uint64_t hz = rte_get_timer_hz();
	uint64_t warn = rte_get_timer_cycles() + hz, hook = rte_get_timer_cycles() + hz / 20;

	for (unsigned i = 0; i < pc_dp.nworkers; i++) {
		while (__atomic_load_n(&pc_dp.workers[i]->acked_epoch, __ATOMIC_ACQUIRE) != epoch) {
			uint64_t now = rte_get_timer_cycles();

			if (now > warn) {
				PC_LOG(WARNING, "worker %u has not switched windows for 1 s\n", i);
				warn = now + hz;
			}
			if (now > hook && on_wait != NULL) {
				on_wait();
				hook = rte_get_timer_cycles() + hz / 20;
			}
			rte_pause();
		}
	}
}

/* Totals follow pods by name across a reload. */
static void
remap_totals(const struct pc_table *nt)
{
	static struct pc_pod_ctr tmp[PC_MAX_PODS][PC_DIR_COUNT];
	static uint64_t tmp_last[PC_MAX_PODS][PC_DIR_COUNT];

	memset(tmp, 0, sizeof(tmp));
	memset(tmp_last, 0, sizeof(tmp_last));
	for (unsigned p = 0; p < nt->cfg.npods; p++) {
		int32_t op = nt->prev_index != NULL ? nt->prev_index[p] : -1;
		if (op < 0)
			continue;
		memcpy(tmp[p], totals_pod[op], sizeof(tmp[p]));
		memcpy(tmp_last[p], last_bytes[op], sizeof(tmp_last[p]));
	}
	memcpy(totals_pod, tmp, sizeof(totals_pod));
	memcpy(last_bytes, tmp_last, sizeof(last_bytes));
}

/* Arms the boundary at which window `epoch` begins: TSC `tsc`, and `table` in force from then. */
void
pc_control_arm(uint64_t epoch, uint64_t tsc, struct pc_table *table)
{
	pthread_mutex_lock(&pc_dp.lock);
	__atomic_store_n(&pc_dp.switch_table, (uintptr_t)table, __ATOMIC_RELAXED);
	__atomic_store_n(&pc_dp.switch_tsc, tsc, __ATOMIC_RELAXED);
	__atomic_store_n(&pc_dp.switch_epoch, epoch, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&pc_dp.lock);
}

/* Replaces the armed boundary's table `from` by `to`; returns what it held. */
static uintptr_t
swap_table(uintptr_t from, uintptr_t to)
{
	pthread_mutex_lock(&pc_dp.lock);
	__atomic_compare_exchange_n(&pc_dp.switch_table, &from, to, false, __ATOMIC_ACQ_REL,
				    __ATOMIC_ACQUIRE);
	pthread_mutex_unlock(&pc_dp.lock);
	return from;
}

bool
pc_control_attach(struct pc_table *table)
{
	return swap_table(0, (uintptr_t)table) == 0;
}

bool
pc_control_detach(struct pc_table *table)
{
	return !(swap_table((uintptr_t)table, 0) & PC_SWITCH_TAKEN);
}

bool
pc_control_passed(void)
{
	return __atomic_load_n(&pc_dp.switch_table, __ATOMIC_ACQUIRE) & PC_SWITCH_TAKEN;
}

void
pc_control_switch_stopped(void)
{
	uintptr_t nt = __atomic_load_n(&pc_dp.switch_table, __ATOMIC_RELAXED) & ~PC_SWITCH_TAKEN;

	for (unsigned i = 0; i < pc_dp.nworkers; i++)
		if (pc_dp.workers[i]->acked_epoch != pc_dp.switch_epoch)
			pc_worker_switch(pc_dp.workers[i], pc_dp.switch_epoch, (struct pc_table *)nt);
}

struct pc_table *
pc_control_close(uint64_t closed, uint64_t window_ns, struct pc_window *win)
{
	uint64_t t0 = pc_mono_ns();
	uint64_t epoch = pc_dp.switch_epoch;
	struct pc_table *nt = (struct pc_table *)(__atomic_load_n(&pc_dp.switch_table,
								  __ATOMIC_RELAXED) & ~PC_SWITCH_TAKEN);
	unsigned bank = pc_dp.bank;
	const struct pc_table *old = pc_dp.table;

	wait_for_workers(epoch);
	/* readers (telemetry, metrics) see either the state before or after, never a mix */
	pthread_mutex_lock(&pc_dp.lock);
	if (nt != NULL)
		__atomic_store_n(&pc_dp.table, nt, __ATOMIC_RELEASE);
	memset(win, 0, sizeof(*win));
	win->close_mono_ns = t0;
	win->epoch = closed;
	win->start_ns = closed * window_ns;
	win->len_ns = window_ns;
	/* more than one window when the control thread was held up: one record covers them */
	win->count = epoch - closed;
	win->table = old;
	for (unsigned i = 0; i < pc_dp.nworkers; i++) {
		struct pc_bank *b = pc_dp.workers[i]->banks[bank];
		for (unsigned p = 0; p < old->cfg.npods; p++)
			for (unsigned d = 0; d < PC_DIR_COUNT; d++)
				pc_pod_ctr_accumulate(&win->pod[p][d], &b->pod[p][d]);
		for (unsigned u = 0; u < old->cfg.nuplinks; u++)
			for (unsigned d = 0; d < PC_DIR_COUNT; d++)
				pc_link_ctr_accumulate(&win->link[u][d], &b->link[u][d]);
		pc_tap_collect(win, b, &old->cfg);
		/* nobody writes this bank until the next boundary is armed */
		memset(b->pod, 0, sizeof(b->pod[0]) * old->cfg.npods);
		memset(b->link, 0, sizeof(b->link[0]) * old->cfg.nuplinks);
	}
	pc_dp.bank = bank ^ 1;

	for (unsigned p = 0; p < old->cfg.npods; p++)
		for (unsigned d = 0; d < PC_DIR_COUNT; d++) {
			pc_pod_ctr_accumulate(&totals_pod[p][d], &win->pod[p][d]);
			last_bytes[p][d] = win->pod[p][d].pass_bytes;
		}
	for (unsigned u = 0; u < old->cfg.nuplinks; u++)
		for (unsigned d = 0; d < PC_DIR_COUNT; d++)
			pc_link_ctr_accumulate(&totals_link[u][d], &win->link[u][d]);
	if (nt != NULL && nt != old)
		remap_totals(nt);
	pthread_mutex_unlock(&pc_dp.lock);
	pc_stage_since(PC_STAGE_COLLECT, t0);
	return nt;
}

void
pc_control_print(const struct pc_window *win)
{
	const struct pc_config *cfg = &win->table->cfg;
	char when[PC_UTC_LEN];
	double secs = (double)win->len_ns * (double)win->count / 1e9;
	uint64_t t0 = pc_mono_ns();

	pc_utc_format(win->start_ns, when, sizeof(when));
	for (unsigned p = 0; p < cfg->npods; p++) {
		for (unsigned d = 0; d < PC_DIR_COUNT; d++) {
			const struct pc_pod_ctr *c = &win->pod[p][d];
			uint64_t db = 0, df = 0;
			for (unsigned r = 0; r < PC_POD_DROP_COUNT; r++) {
				db += c->drop_bytes[r];
				df += c->drop_frames[r];
			}
			printf("window %s %s %s passed %lu %lu dropped %lu %lu rate %.1f cap %.1f\n",
			       when, cfg->pods[p].id, pc_dir_name((enum pc_dir)d),
			       (unsigned long)c->pass_bytes, (unsigned long)c->pass_frames,
			       (unsigned long)db, (unsigned long)df,
			       (double)c->pass_bytes * 8 / secs / 1e6,
			       (double)cfg->pods[p].limits.cap_bps / 1e6);
		}
	}
	for (unsigned u = 0; u < cfg->nuplinks; u++)
		for (unsigned d = 0; d < PC_DIR_COUNT; d++) {
			const struct pc_link_ctr *c = &win->link[u][d];
			if (c->drop_frames[PC_DROP_UNMAPPED] == 0 &&
			    c->drop_frames[PC_DROP_MALFORMED] == 0 && c->spoofed_frames == 0)
				continue;
			printf("window %s uplink %s %s unmapped %lu %lu malformed %lu %lu", when,
			       cfg->uplinks[u].name, pc_dir_name((enum pc_dir)d),
			       (unsigned long)c->drop_bytes[PC_DROP_UNMAPPED],
			       (unsigned long)c->drop_frames[PC_DROP_UNMAPPED],
			       (unsigned long)c->drop_bytes[PC_DROP_MALFORMED],
			       (unsigned long)c->drop_frames[PC_DROP_MALFORMED]);
			/* only where there are: the line is as it was on uplinks without vlans */
			if (c->spoofed_frames > 0)
				printf(" spoofed %lu %lu", (unsigned long)c->spoofed_bytes,
				       (unsigned long)c->spoofed_frames);
			printf("\n");
		}
	fflush(stdout);
	pc_stage_since(PC_STAGE_PRINT, t0);
}

/* Caller holds pc_dp.lock and t is the table in force. */
void
pc_control_read_totals(const struct pc_table *t, struct pc_pod_ctr (*pod)[PC_DIR_COUNT],
		       struct pc_link_ctr (*link)[PC_DIR_COUNT])
{
	unsigned bank = pc_dp.bank;
	/*
	 * Workers past the boundary count in the other bank, under the table
	 * that comes with it: a window's counts under another table than t show
	 * once it is closed. The pointer part only changes under the lock.
	 */
	bool both = (__atomic_load_n(&pc_dp.switch_table, __ATOMIC_RELAXED) & ~PC_SWITCH_TAKEN) == 0;

	for (unsigned p = 0; p < t->cfg.npods; p++)
		for (unsigned d = 0; d < PC_DIR_COUNT; d++) {
			memset(&pod[p][d], 0, sizeof(pod[p][d]));
			pc_pod_ctr_accumulate(&pod[p][d], &totals_pod[p][d]);
		}
	for (unsigned u = 0; u < t->cfg.nuplinks; u++)
		for (unsigned d = 0; d < PC_DIR_COUNT; d++) {
			memset(&link[u][d], 0, sizeof(link[u][d]));
			pc_link_ctr_accumulate(&link[u][d], &totals_link[u][d]);
		}
	for (unsigned k = 0; k < (both ? 2 : 1); k++)
		for (unsigned i = 0; i < pc_dp.nworkers; i++) {
			const struct pc_bank *b = pc_dp.workers[i]->banks[bank ^ k];
			for (unsigned p = 0; p < t->cfg.npods; p++)
				for (unsigned d = 0; d < PC_DIR_COUNT; d++)
					pc_pod_ctr_accumulate(&pod[p][d], &b->pod[p][d]);
			for (unsigned u = 0; u < t->cfg.nuplinks; u++)
				for (unsigned d = 0; d < PC_DIR_COUNT; d++)
					pc_link_ctr_accumulate(&link[u][d], &b->link[u][d]);
		}
}

uint64_t
pc_control_last_window_bytes(unsigned p, unsigned d)
{
	return last_bytes[p][d];
}
