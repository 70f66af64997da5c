/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The record types (docs/log-format.md, "Records" and "Record types"): per
 * type its name, the blocks it may carry, its window count and its own
 * fields. record.c encodes, decodes and checks every record from this
 * table alone, so a type is this one line and, when it has fields of its
 * own, their file.
 */
#include "record_impl.h"

static const struct rec_type types[] = {
	[PC_REC_START] = { .name = "start", .count = REC_COUNT_ZERO, .max_pods = PC_MAX_PODS },
	[PC_REC_WINDOW] = { .name = "window",
			    .count = REC_COUNT_SOME,
			    .max_pods = PC_MAX_PODS,
			    .max_links = PC_MAX_UPLINKS,
			    .counters = true },
	[PC_REC_GAP] = { .name = "gap", .count = REC_COUNT_SOME },
	[PC_REC_RELOAD] = { .name = "reload", .count = REC_COUNT_ZERO, .max_pods = PC_MAX_PODS },
	[PC_REC_STOP] = { .name = "stop", .count = REC_COUNT_ZERO },
	[PC_REC_CLOCK] = { .name = "clock", .count = REC_COUNT_ZERO, .tail = &rec_clock_tail },
	[PC_REC_ATTEST] = { .name = "attest", .count = REC_COUNT_ZERO, .tail = &rec_attest_tail },
	[PC_REC_OBSERVE] = { .name = "observe",
			     .count = REC_COUNT_SOME,
			     .tail = &rec_observe_tail },
	[PC_REC_DECLARE] = { .name = "declare",
			     .count = REC_COUNT_ZERO,
			     .tail = &rec_declare_tail },
	[PC_REC_OBSERVE_SLICES] = { .name = "observe-slices",
				    .count = REC_COUNT_SOME,
				    .tail = &rec_observe_slices_tail },
	[PC_REC_SYNC] = { .name = "sync", .count = REC_COUNT_SOME, .tail = &rec_sync_tail },
	[PC_REC_LINK] = { .name = "link", .count = REC_COUNT_ZERO, .tail = &rec_link_tail },
};

/*
 * A type added after this version: version 1 frames it as it does every
 * type, so its common fields and blocks are read and checked as theirs are;
 * whatever window count and blocks it carries are its own rule, and the
 * bytes after its links its own fields.
 */
const struct rec_type rec_type_unknown = {
	.name = "unknown",
	.count = REC_COUNT_ANY,
	.max_pods = PC_MAX_PODS,
	.max_links = PC_MAX_UPLINKS,
	.counters = true,
};

const struct rec_type *
rec_type_of(uint8_t type)
{
	if (type >= sizeof(types) / sizeof(types[0]) || types[type].name == NULL)
		return NULL;
	return &types[type];
}

const char *
pc_record_type_name(uint8_t type)
{
	const struct rec_type *t = rec_type_of(type);

	return t != NULL ? t->name : "unknown";
}
