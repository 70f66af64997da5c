/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The auditor's randomized pod-to-uplink assignment (podcap-audit assign),
 * which anyone holding the seed recomputes exactly. docs/config.md
 * ("Randomized assignment") defines it byte for byte:
 *
 *  - the random stream is libsodium's randombytes_buf_deterministic() of
 *    the 32-byte seed: the ChaCha20 (RFC 8439) keystream with the seed as
 *    key, the nonce "LibsodiumDRG" and the block counter from 0; read as
 *    consecutive big-endian 32-bit words;
 *  - below(k), a uniform integer in [0, k): the next word x, drawn again
 *    while x >= 2^32 - (2^32 mod k); then x mod k;
 *  - shuffle(n) is Fisher-Yates from the identity: for i from n-1 down
 *    to 1, swap positions i and below(i+1);
 *  - an attempt shuffles the pods (in byte order of their ids), then the
 *    uplinks (in byte order of appliance, then name), and puts the pod at
 *    position i on the uplink at position (i + t) mod m for the smallest
 *    t in 0..m-1 that the constraints allow;
 *  - when one pod fits on none, the next attempt draws on from where the
 *    stream is, at most PC_ASSIGN_ATTEMPTS attempts in all.
 */
#ifndef PODCAP_ASSIGN_H
#define PODCAP_ASSIGN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "config.h"
#include "base/error.h"

#define PC_ASSIGN_SEED_LEN     32
#define PC_ASSIGN_MAX_UPLINKS  4096
#define PC_ASSIGN_PREFIXES_LEN 1024
#define PC_ASSIGN_ATTEMPTS     1000

struct pc_assign_pod {
	char id[PC_ID_LEN];
	char cell[PC_ID_LEN];                  /* "" when in no cell */
	char prefixes[PC_ASSIGN_PREFIXES_LEN]; /* "a,b,...": assigned with the pod, together; "" */
	unsigned line;
};

struct pc_assign_uplink {
	char appliance[PC_ID_LEN];
	char name[PC_ID_LEN];
	char pod_port[PC_DEVARGS_LEN];
	char fabric_port[PC_DEVARGS_LEN];
	unsigned line;
};

struct pc_assign_rules {
	unsigned max_per_uplink; /* 0: no limit */
	bool separate_cells;     /* no two pods of one cell on one uplink */
};

/*
 * Files of one item a line, '#' to the end of a line a comment, fields
 * separated by blanks:
 *   pods:    <pod id> <cell or -> <prefix>[,<prefix>]... or -
 *   uplinks: <appliance id> <uplink name> <pod_port> <fabric_port>
 * Sorted on return (pods by id; uplinks by appliance, then name). Returns
 * the count (malloc'd *out), or -1 with err at "name:line:col".
 */
long pc_assign_parse_pods(const char *name, const char *text, struct pc_assign_pod **out,
			  struct pc_error *err);
long pc_assign_parse_uplinks(const char *name, const char *text, struct pc_assign_uplink **out,
			     struct pc_error *err);

/*
 * Constraints as a file, one a line: "max-pods-per-uplink N",
 * "separate-cells" ('#' comments). 0, or -1 with err at "name:line:col".
 */
int pc_assign_parse_rules(const char *name, const char *text, struct pc_assign_rules *rules,
			  struct pc_error *err);

/* The shuffle alone: perm[i] is the pod (index in byte order) at position i. */
void pc_assign_shuffle(const uint8_t seed[PC_ASSIGN_SEED_LEN], uint32_t *perm, size_t n);

/*
 * The assignment: up[p] is the uplink of pod p (both in the sorted order).
 * 0, or -1 with err naming the pod that no uplink could take.
 */
int pc_assign(const uint8_t seed[PC_ASSIGN_SEED_LEN], const struct pc_assign_pod *pods,
	      size_t npods, size_t nups, const struct pc_assign_rules *rules, uint32_t *up,
	      struct pc_error *err);

/*
 * The pod map of appliance app (docs/config.md, "Randomized assignment",
 * Output): the template with @APPLIANCE@ replaced, its uplinks, their pods.
 * Into f (0, or -1 on a write error), or as a malloc'd string (NULL: out of
 * memory).
 */
int pc_assign_write_map(FILE *f, const char *tmpl, const char *app,
			const struct pc_assign_uplink *ups, size_t nups,
			const struct pc_assign_pod *pods, size_t npods, const uint32_t *up);
char *pc_assign_map_text(const char *tmpl, const char *app, const struct pc_assign_uplink *ups,
			 size_t nups, const struct pc_assign_pod *pods, size_t npods,
			 const uint32_t *up);

/* The commitment an auditor publishes before the cabling is fixed: BLAKE2b-256 of the seed. */
void pc_assign_commitment(const uint8_t seed[PC_ASSIGN_SEED_LEN], uint8_t out[PC_DIGEST_LEN]);

#endif /* PODCAP_ASSIGN_H */
