/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What the ledger's opening (ledger_open.c: recovery of a directory a crash
 * may have left torn) and its writing and reading (ledger.c) share: the
 * handle, its offset index and the few helpers both use.
 */
#ifndef PODCAP_LEDGER_IMPL_H
#define PODCAP_LEDGER_IMPL_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "base/error.h"
#include "base/keys.h"
#include "ledger.h"
#include "merkle.h"
#include "note.h"

#define ENTRY_OVERHEAD (4 + PC_HASH_LEN)
#define CHUNK_SHIFT 16
#define CHUNK_LEN (1u << CHUNK_SHIFT)
#define MAX_CHUNKS (1u << 16)
#define MAX_RECORDS ((uint64_t)CHUNK_LEN * MAX_CHUNKS - 1)

/* What readers in other threads share with the writer beyond atomics. */
struct shared {
	pthread_mutex_t mu;
	uint8_t root[PC_HASH_LEN];
	char note[PC_NOTE_MAX];
	size_t note_len;
};

struct pc_ledger {
	char dir[PC_PATH_LEN];
	char origin[PC_KEY_NAME_LEN];
	int dirfd;
	int recfd;
	int hashfd;
	bool ro;
	bool broken;                 /* a write failed half-way: refuse to go on */
	uint64_t count;              /* durable records (atomic) */
	uint64_t rec_end;            /* bytes of records in use (atomic) */
	uint64_t published;          /* size of the published checkpoint (atomic) */
	uint64_t hashes_valid;       /* read-only open: entries present in `hashes` */
	uint64_t first;              /* read-only open from a record: the first readable */
	uint64_t first_off;          /* ... and where its entry starts */
	struct pc_merkle_range range;/* writer only */
	struct shared *sh;
	uint64_t *ends[MAX_CHUNKS];  /* ends[i]: offset just past entry i */
	uint64_t last_write_ns;      /* the last append: hashing and writing */
	uint64_t last_sync_ns;       /* the last append: its fdatasyncs */
};

static inline uint64_t
entry_end(const struct pc_ledger *l, uint64_t i)
{
	return l->ends[i >> CHUNK_SHIFT][i & (CHUNK_LEN - 1)];
}

static inline uint64_t
entry_start(const struct pc_ledger *l, uint64_t i)
{
	return i == l->first ? l->first_off : entry_end(l, i - 1);
}

/* Writer only: records where entry i ends, allocating its chunk first. */
static inline int
set_entry_end(struct pc_ledger *l, uint64_t i, uint64_t end)
{
	uint64_t **chunk = &l->ends[i >> CHUNK_SHIFT];

	if (*chunk == NULL) {
		*chunk = calloc(CHUNK_LEN, sizeof(uint64_t));
		if (*chunk == NULL)
			return -1;
	}
	(*chunk)[i & (CHUNK_LEN - 1)] = end;
	return 0;
}

static inline uint64_t
load_count(const struct pc_ledger *l)
{
	return __atomic_load_n(&l->count, __ATOMIC_ACQUIRE);
}

/*
 * The body of a signed note ends at its first empty line; this only
 * locates and parses it (the ledger holds no verifier key).
 */
int pc_ledger_parse_note(const char *note, size_t len, struct pc_checkpoint *cp,
			 struct pc_error *err);

#endif /* PODCAP_LEDGER_IMPL_H */
