/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The ledger directory: an append-only file of records, a file of their
 * Merkle leaf hashes, and the latest signed checkpoint. See
 * docs/log-format.md.
 *
 * One writer (podcapd's ledger thread). Readers (the HTTP endpoint) may run
 * in other threads: every read function is safe to call concurrently with
 * append/publish (it reads only up to the published checkpoint's size, or
 * the durable size).
 */
#ifndef PODCAP_LEDGER_H
#define PODCAP_LEDGER_H

#include <stddef.h>
#include <stdint.h>

#include "base/error.h"

#include "merkle.h"

struct pc_ledger;

/*
 * Opens (creating it if absent) the ledger in `dir` for log `origin`
 * ("podcap/<appliance id>"). On reopen a torn tail is detected and cut,
 * keeping every complete record; a ledger of another origin is refused.
 * Returns NULL with a message in err.
 */
struct pc_ledger *pc_ledger_open(const char *dir, const char *origin, struct pc_error *err);
/*
 * Whether pc_ledger_open(dir, origin) could claim dir, changing nothing
 * and taking no lock: dir is a directory that can be written, with no
 * origin file or origin's, or it does not exist and its parent is a
 * directory that can be written. 0, or -1 with the message the open would
 * give. It does not read the records: a damaged or locked ledger passes.
 */
int pc_ledger_check(const char *dir, const char *origin, struct pc_error *err);
/*
 * Read-only open (verifier side, no recovery, no locking). It does not hash
 * the records: its root (pc_ledger_root) is over the leaf hashes stored with
 * them, which only a reader that hashes the bytes itself may rely on.
 */
struct pc_ledger *pc_ledger_open_ro(const char *dir, struct pc_error *err);
/*
 * The same, for a reader that already has records 0 ... first-1, whose
 * lengths add up to bytes_before: it seeks past them instead of walking
 * them, and only records from `first` on can be read (pc_ledger_root is
 * then not defined). If the records before are not those, what it reads
 * is not either: a reader that hashes the bytes finds out.
 */
struct pc_ledger *pc_ledger_open_ro_from(const char *dir, uint64_t first, uint64_t bytes_before,
					 struct pc_error *err);
void pc_ledger_close(struct pc_ledger *l);

/* Appends a record and makes it durable (fsync) before returning. 0 or -1. */
int pc_ledger_append(struct pc_ledger *l, const uint8_t *rec, size_t len);
/*
 * How long the last successful append took (CLOCK_MONOTONIC ns): hashing
 * and writing, and the fdatasyncs that made it durable. Writer thread only.
 */
void pc_ledger_append_times(const struct pc_ledger *l, uint64_t *write_ns, uint64_t *sync_ns);
/* Number of durable records and the Merkle root over them. */
uint64_t pc_ledger_size(const struct pc_ledger *l);
void pc_ledger_root(const struct pc_ledger *l, uint8_t root[PC_HASH_LEN]);
const char *pc_ledger_origin(const struct pc_ledger *l);

/*
 * Stores a signed checkpoint note atomically (tmp file, fsync, rename, fsync
 * dir), after checking that it is of this log and covers exactly its durable
 * records; -1 with err otherwise.
 */
int pc_ledger_publish(struct pc_ledger *l, const char *note, size_t len, struct pc_error *err);
/* Copies the latest published note into buf; returns its length, 0 if none, -1 on error. */
long pc_ledger_checkpoint(struct pc_ledger *l, char *buf, size_t len);
/* Size of the tree covered by the latest published checkpoint. */
uint64_t pc_ledger_published_size(struct pc_ledger *l);

/* Record i (0-based) into buf; returns its length, or -1. */
long pc_ledger_record(struct pc_ledger *l, uint64_t i, uint8_t *buf, size_t len);
/* Leaf hash i; matches pc_leaf_fn so it can drive the pc_merkle_* proofs. */
int pc_ledger_leaf(void *ledger, uint64_t i, uint8_t out[PC_HASH_LEN]);
/* Bytes on disk (records + hashes + checkpoint), for /metrics. */
uint64_t pc_ledger_bytes(struct pc_ledger *l);

#endif /* PODCAP_LEDGER_H */
