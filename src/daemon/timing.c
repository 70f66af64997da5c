/* SPDX-License-Identifier: BSD-3-Clause */
#include <time.h>

#include "base/clock.h"
#include "base/units.h"

#include "timing.h"

static struct pc_stage_stats stages[PC_STAGE_COUNT];

static const char *const names[PC_STAGE_COUNT] = {
	[PC_STAGE_COLLECT] = "collect",
	[PC_STAGE_PRINT] = "print",
	[PC_STAGE_ENCODE] = "encode",
	[PC_STAGE_QUEUE] = "queue",
	[PC_STAGE_APPEND] = "append",
	[PC_STAGE_FSYNC] = "fsync",
	[PC_STAGE_SIGN] = "sign",
	[PC_STAGE_PUBLISH] = "publish",
	[PC_STAGE_TOTAL] = "total",
};

/* Single writer per stage: relaxed stores suffice for readers that only show the figures. */
void
pc_stage_add(enum pc_stage s, uint64_t ns)
{
	struct pc_stage_stats *st = &stages[s];

	__atomic_store_n(&st->last_ns, ns, __ATOMIC_RELAXED);
	if (ns > st->max_ns)
		__atomic_store_n(&st->max_ns, ns, __ATOMIC_RELAXED);
	__atomic_store_n(&st->sum_ns, st->sum_ns + ns, __ATOMIC_RELAXED);
	__atomic_store_n(&st->count, st->count + 1, __ATOMIC_RELEASE);
}

uint64_t
pc_stage_since(enum pc_stage s, uint64_t since)
{
	uint64_t now = pc_mono_ns();

	pc_stage_add(s, now - since);
	return now;
}

void
pc_stage_read(enum pc_stage s, struct pc_stage_stats *st)
{
	st->count = __atomic_load_n(&stages[s].count, __ATOMIC_ACQUIRE);
	st->last_ns = __atomic_load_n(&stages[s].last_ns, __ATOMIC_RELAXED);
	st->max_ns = __atomic_load_n(&stages[s].max_ns, __ATOMIC_RELAXED);
	st->sum_ns = __atomic_load_n(&stages[s].sum_ns, __ATOMIC_RELAXED);
}

const char *
pc_stage_name(enum pc_stage s)
{
	return s < PC_STAGE_COUNT ? names[s] : "?";
}
