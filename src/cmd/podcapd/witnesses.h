/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Submitting each published checkpoint to the pod map's witnesses
 * (appliance.witnesses), one thread per witness, and serving the
 * cosignatures they return with the checkpoint.
 *
 * Nothing here is on the data path or the control thread: the ledger thread
 * hands over each new note with a copy under a mutex that no thread holds
 * across I/O, and a witness that is down, slow or wrong delays only its
 * own thread.
 */
#ifndef PODCAPD_WITNESSES_H
#define PODCAPD_WITNESSES_H

#include <stddef.h>
#include <stdint.h>

#include "podmap/config.h"
#include "log/ledger.h"

enum pc_witness_outcome {
	PC_WITNESS_COSIGNED,
	PC_WITNESS_CONFLICT,
	PC_WITNESS_REFUSED,
	PC_WITNESS_DOWN,
	PC_WITNESS_BAD_ANSWER,
	PC_WITNESS_OUTCOMES
};

struct pc_witness_stats {
	char name[128];
	uint64_t outcomes[PC_WITNESS_OUTCOMES]; /* submissions, by how they ended */
	uint64_t cosigned_size; /* size of the latest cosigned checkpoint, 0 if none */
	uint64_t cosigned_time; /* its cosignature's timestamp (s), 0 if none */
};

/* Starts one thread per witness of ws over the ledger; 0, or -1 (logged). */
int pd_witnesses_start(const struct pc_witnesses *ws, struct pc_ledger *ledger);
/*
 * At a stop, once the last checkpoint is published: waits, at most
 * timeout_ns, for every witness to be through with the newest note
 * (cosigned, refused or unanswered), and logs each that is not.
 */
void pd_witnesses_flush(uint64_t timeout_ns);
/* Ends every submission in flight and joins the threads. */
void pd_witnesses_stop(void);
/* The ledger thread's hook: a new note was published. Never blocks on I/O. */
void pd_witnesses_publish(const char *note, size_t len);
/*
 * The note with the cosignature lines of every witness that cosigned
 * exactly it appended, into out (NUL-terminated): its length, or 0 when
 * out is too small. Thread-safe (the HTTP threads call it).
 */
size_t pd_witnesses_cosigned(const char *note, size_t len, char *out, size_t outlen);
/* The witnesses' counters, at most max; returns how many. */
unsigned pd_witnesses_stats(struct pc_witness_stats *out, unsigned max);
const char *pd_witness_outcome_name(enum pc_witness_outcome o);

#endif /* PODCAPD_WITNESSES_H */
