/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The pods a log names, found by id, and each check's state of each
 * (check.h, pod_size); and the table from ids to indices that the pods and
 * the links (verify/totals.c) are found by. Memory grows with the pods and
 * links a log declares, never with its length.
 */
#ifndef PODCAP_VERIFY_PODS_H
#define PODCAP_VERIFY_PODS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "base/error.h"

struct pc_verify;
struct pcv_lines;

/* Open addressing from an id's hash to its index. */
struct pcv_slot {
	uint32_t val; /* index + 1; 0 when empty */
	uint64_t h;
};

struct pcv_idmap {
	struct pcv_slot *slots;
	uint32_t cap; /* power of two */
	uint32_t n;
};

/* The id of entry i of ctx's list. */
typedef const char *pcv_name_fn(const void *ctx, uint32_t i);

/* The entry of `id` in m, or -1. */
int64_t pcv_idmap_find(const struct pcv_idmap *m, const char *id, pcv_name_fn *name,
		       const void *ctx);
/*
 * The entry of `id` in m. When it has none it gets `next`, the caller's
 * next free entry, and *added says the caller must fill that entry in.
 */
uint32_t pcv_idmap_index(struct pcv_idmap *m, const char *id, uint32_t next, bool *added,
			 pcv_name_fn *name, const void *ctx);
/* p with room for `need` elements of elem bytes, *cap grown by doubling. */
void *pcv_grow(void *p, uint32_t *cap, uint32_t need, size_t elem);

/* The index of pod `id` in v->pods, added when new (which may move v->pods). */
uint32_t pcv_pod_index(struct pc_verify *v, const char *id);
/* The index of pod `id`, or -1 if it never appeared. */
int64_t pcv_pod_find(const struct pc_verify *v, const char *id);

/* The state's pods section: each pod's line, then every check's lines of it. */
void pcv_pods_save(const struct pc_verify *v, FILE *f);
int pcv_pods_load(struct pc_verify *v, struct pcv_lines *ls, struct pc_error *err);

#endif /* PODCAP_VERIFY_PODS_H */
