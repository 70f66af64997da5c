/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The recorder turns closed windows and lifecycle events into ledger records
 * and hands them to the ledger thread, which appends them (fsync), has the
 * signer sign a checkpoint over the new tree, and publishes it.
 *
 * The control thread never waits for the disk: records go through a bounded
 * in-memory queue. While the disk is slow or full the queue absorbs the
 * backlog and the ledger thread retries; if the queue overflows, the windows
 * that did not fit are recorded as a GAP once there is room again.
 */
#ifndef PODCAPD_RECORDER_H
#define PODCAPD_RECORDER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "log/ledger.h"
#include "log/record.h"

#include "control.h"
#include "signer.h"

struct pc_recorder_stats {
	uint64_t records;             /* durable records in the ledger */
	uint64_t ledger_bytes;
	uint64_t last_checkpoint_ns;  /* realtime of the last published checkpoint, 0 if none */
	uint64_t lost_windows;        /* windows recorded as GAP because the queue overflowed */
	uint64_t queued;              /* records waiting for the disk */
	uint64_t append_errors;
	bool attesting;           /* appliance.attestation is on */
	uint32_t attest_every;    /* its `every`, in windows */
	uint64_t quotes_appended; /* ATTEST records in the ledger from this run */
	uint64_t quotes_failed;   /* quotes due that could not be had or appended */
	uint64_t last_quote_ns;   /* realtime of the last ATTEST appended, 0 if none */
};

/*
 * Opens the ledger and starts the ledger thread. *covered_ns receives the
 * realtime up to which the ledger already accounts for time (0 for a new
 * ledger): podcapd must not record a window that starts before it.
 */
int pc_recorder_start(const char *ledger_dir, const char *appliance_id, const char *origin,
		      struct pc_signer *signer, uint64_t *covered_ns);
struct pc_ledger *pc_recorder_ledger(void);
/* fn is called by the ledger thread with each note it publishes, from now on. */
void pc_recorder_on_publish(void (*fn)(const char *note, size_t len));
/*
 * Quotes in the log (appliance.attestation): after the START, every RELOAD
 * and every a->every windows, once the records are in a checkpoint, and
 * just before the STOP, an ATTEST record with the signer's TPM quote of
 * that checkpoint. Call before
 * the first record; without it (or with a->enabled false) there are none.
 */
void pc_recorder_attestation(const struct pc_attestation *a);

/* Records; each returns immediately. */
/* START (preceded by a GAP when the ledger has a hole up to epoch). */
void pc_recorder_start_record(const struct pc_table *t, uint64_t epoch, uint64_t window_ns,
			      uint64_t covered_ns);
void pc_recorder_window(const struct pc_window *w);
void pc_recorder_reload(const struct pc_table *t, uint64_t epoch, uint64_t window_ns);
/*
 * CLOCK: the wall clock stepped by step_ns; window labels go on from
 * epoch x window_ns with no real time between (windows are paced by the
 * monotonic clock).
 */
void pc_recorder_clock(const struct pc_table *t, uint64_t epoch, uint64_t window_ns,
		       int64_t step_ns);
void pc_recorder_stop_record(const struct pc_table *t, uint64_t epoch, uint64_t window_ns);

/*
 * Waits, at most timeout_ns, until every record queued so far is in the
 * ledger and the checkpoint over them is published (its on_publish hook
 * called). True when they are; the ledger thread goes on either way.
 */
bool pc_recorder_drain(uint64_t timeout_ns);
/*
 * Drains the queue (bounded wait) and stops the ledger thread. Returns the
 * number of records that never reached the ledger (0 when all did).
 */
unsigned pc_recorder_finish(void);
void pc_recorder_stats(struct pc_recorder_stats *st);

#endif /* PODCAPD_RECORDER_H */
