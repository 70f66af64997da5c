/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Summing counter banks. The destination belongs to the caller (the control
 * thread); the source may still be written by its worker, hence the atomic
 * reads.
 */
#include <stddef.h>
#include <stdint.h>

#include "counters.h"

static const char *const pod_drop_names[PC_POD_DROP_COUNT] = {
	[PC_DROP_OVER_CAP] = "over_cap",
	[PC_DROP_QUEUE_FULL] = "queue_full",
	[PC_DROP_TX_FULL] = "tx_full",
};

static const char *const link_drop_names[PC_LINK_DROP_COUNT] = {
	[PC_DROP_UNMAPPED] = "unmapped",
	[PC_DROP_MALFORMED] = "malformed",
};

void
pc_pod_ctr_accumulate(struct pc_pod_ctr *dst, const struct pc_pod_ctr *src)
{
	dst->pass_frames += pc_ctr_read(&src->pass_frames);
	dst->pass_bytes += pc_ctr_read(&src->pass_bytes);
	for (size_t i = 0; i < PC_POD_DROP_COUNT; i++) {
		dst->drop_frames[i] += pc_ctr_read(&src->drop_frames[i]);
		dst->drop_bytes[i] += pc_ctr_read(&src->drop_bytes[i]);
	}
}

void
pc_link_ctr_accumulate(struct pc_link_ctr *dst, const struct pc_link_ctr *src)
{
	for (size_t i = 0; i < PC_LINK_DROP_COUNT; i++) {
		dst->drop_frames[i] += pc_ctr_read(&src->drop_frames[i]);
		dst->drop_bytes[i] += pc_ctr_read(&src->drop_bytes[i]);
	}
	dst->spoofed_frames += pc_ctr_read(&src->spoofed_frames);
	dst->spoofed_bytes += pc_ctr_read(&src->spoofed_bytes);
}

void
pc_link_ctr_recorded(struct pc_link_ctr *dst, const struct pc_link_ctr *src)
{
	*dst = *src;
	dst->drop_frames[PC_DROP_UNMAPPED] += src->spoofed_frames;
	dst->drop_bytes[PC_DROP_UNMAPPED] += src->spoofed_bytes;
	dst->spoofed_frames = 0;
	dst->spoofed_bytes = 0;
}

/* Out-of-range reasons get a name too: callers print what they are given. */
const char *
pc_pod_drop_name(enum pc_pod_drop r)
{
	if ((unsigned)r >= PC_POD_DROP_COUNT)
		return "unknown";
	return pod_drop_names[r];
}

const char *
pc_link_drop_name(enum pc_link_drop r)
{
	if ((unsigned)r >= PC_LINK_DROP_COUNT)
		return "unknown";
	return link_drop_names[r];
}
