/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * How long each stage of a window close took: the control thread's
 * collect, print and encode, the ledger thread's append, fsync, signature
 * and publication, and the total from the boundary to the published
 * checkpoint that covers the window. Measured with CLOCK_MONOTONIC a few
 * times per window, never per frame; shown by /podcap/window_close and
 * /metrics.
 */
#ifndef PODCAPD_TIMING_H
#define PODCAPD_TIMING_H

#include <stdint.h>

#include "base/clock.h"

enum pc_stage {
	PC_STAGE_COLLECT = 0,  /* switch the workers' banks, sum the closed one */
	PC_STAGE_PRINT,        /* the per-window lines on stdout */
	PC_STAGE_ENCODE,       /* build and encode the WINDOW record, queue it */
	PC_STAGE_QUEUE,        /* the record waits for the ledger thread */
	PC_STAGE_APPEND,       /* hash and write the record */
	PC_STAGE_FSYNC,        /* make it durable (records and hashes) */
	PC_STAGE_SIGN,         /* the signer's round trip for the checkpoint */
	PC_STAGE_PUBLISH,      /* write the signed note */
	PC_STAGE_TOTAL,        /* boundary to a published checkpoint covering the window */
	PC_STAGE_COUNT,
};

struct pc_stage_stats {
	uint64_t count;
	uint64_t last_ns;
	uint64_t max_ns;
	uint64_t sum_ns;
};

/* Adds one duration of a stage; each stage has a single writer thread. */
void pc_stage_add(enum pc_stage s, uint64_t ns);
/* Convenience: adds pc_mono_ns() - since and returns pc_mono_ns(). */
uint64_t pc_stage_since(enum pc_stage s, uint64_t since);
void pc_stage_read(enum pc_stage s, struct pc_stage_stats *st);
const char *pc_stage_name(enum pc_stage s);   /* "collect", "print", ... */

#endif /* PODCAPD_TIMING_H */
