/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What the record codec's files share (record.c, record_types.c and one
 * file per type with fields of its own after the links): the byte writer
 * and reader, and the table of record types that says, per type, what its
 * record may carry. Nothing outside src/log/record*.c includes it.
 */
#ifndef PODCAP_RECORD_IMPL_H
#define PODCAP_RECORD_IMPL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "base/bytes.h"
#include "base/id.h"
#include "record.h"

/* An encoding in progress: encoded_size() has made sure it fits. */
struct rec_wr {
	uint8_t *p;
	size_t off;
};

/* A decoding in progress: the first error sticks and makes later reads no-ops. */
struct rec_rd {
	const uint8_t *p;
	size_t len;
	size_t off;
	const char *why;
};

static inline void
rec_put_u8(struct rec_wr *w, uint8_t v)
{
	w->p[w->off++] = v;
}

static inline void
rec_put_u32(struct rec_wr *w, uint32_t v)
{
	pc_store_be32(w->p + w->off, v);
	w->off += 4;
}

static inline void
rec_put_u64(struct rec_wr *w, uint64_t v)
{
	pc_store_be64(w->p + w->off, v);
	w->off += 8;
}

static inline void
rec_put_bytes(struct rec_wr *w, const void *b, size_t n)
{
	memcpy(w->p + w->off, b, n);
	w->off += n;
}

/* A str: a 1-byte length and the id's characters, no NUL. */
static inline void
rec_put_str(struct rec_wr *w, const char *s)
{
	size_t n = strnlen(s, PC_ID_LEN);

	rec_put_u8(w, (uint8_t)n);
	rec_put_bytes(w, s, n);
}

static inline bool
rec_need(struct rec_rd *r, size_t n)
{
	if (r->why != NULL)
		return false;
	if (r->len - r->off < n) {
		r->why = "record is truncated";
		return false;
	}
	return true;
}

static inline uint8_t
rec_get_u8(struct rec_rd *r)
{
	if (!rec_need(r, 1))
		return 0;
	return r->p[r->off++];
}

static inline uint32_t
rec_get_u32(struct rec_rd *r)
{
	if (!rec_need(r, 4))
		return 0;
	r->off += 4;
	return pc_load_be32(r->p + r->off - 4);
}

static inline uint64_t
rec_get_u64(struct rec_rd *r)
{
	if (!rec_need(r, 8))
		return 0;
	r->off += 8;
	return pc_load_be64(r->p + r->off - 8);
}

static inline void
rec_get_bytes(struct rec_rd *r, void *out, size_t n)
{
	if (!rec_need(r, n))
		return;
	memcpy(out, r->p + r->off, n);
	r->off += n;
}

/* A str into out, NUL-terminated; `what` is the error when its characters are not an id's. */
void rec_get_str(struct rec_rd *r, char out[PC_ID_LEN], const char *what);

/*
 * An array's 4-byte count and its zeroed storage of elem bytes each: the
 * count must fit in what is left of the record at min_bytes an element
 * before anything is allocated, so a hostile count cannot make the decoder
 * allocate more than the record could describe.
 */
void *rec_get_array(struct rec_rd *r, uint32_t *n, uint32_t max, const char *too_many,
		    size_t min_bytes, size_t elem);

/*
 * A type's own fields, encoded after the links (docs/log-format.md):
 * their size, writing and reading (errors in rd->why), the checks they
 * satisfy beyond their layout, and what a decoded record holds of them.
 * They are the type's member of struct pc_record's union.
 */
struct rec_tail {
	size_t (*size)(const struct pc_record *r);
	void (*put)(struct rec_wr *w, const struct pc_record *r);
	void (*get)(struct rec_rd *rd, struct pc_record *r);
	int (*check)(const struct pc_record *r, struct pc_error *err);
	void (*free)(struct pc_record *r);
};

/* What a record's window_count may be. */
enum rec_count {
	REC_COUNT_ZERO, /* it covers no window: 0 */
	REC_COUNT_SOME, /* it covers windows: at least 1 */
	REC_COUNT_ANY,  /* a type this version does not know: its own rule */
};

/* One record type: all that record.c needs to know of it. */
struct rec_type {
	const char *name;            /* "start", "window", ...: reports and errors */
	enum rec_count count;        /* its window_count */
	uint32_t max_pods;           /* 0: no pod blocks; else at most that many */
	uint32_t max_links;          /* 0: no link blocks */
	bool counters;               /* its pod blocks may count frames (WINDOW), else all 0 */
	const struct rec_tail *tail; /* its own fields after the links; NULL: none */
};

/* The type's entry in record_types.c, NULL for a type this version does not know. */
const struct rec_type *rec_type_of(uint8_t type);
/* What version 1 says of every type, also of those added after this version (record.h). */
extern const struct rec_type rec_type_unknown;

/* The tails, one file each. */
extern const struct rec_tail rec_clock_tail;   /* record_clock.c */
extern const struct rec_tail rec_declare_tail; /* record_declare.c */
extern const struct rec_tail rec_attest_tail;  /* record_attest.c */
extern const struct rec_tail rec_observe_tail; /* record_observe.c */
/* OBSERVE's with the tap's boundary slices, also record_observe.c */
extern const struct rec_tail rec_observe_slices_tail;
extern const struct rec_tail rec_link_tail; /* record_link.c */
extern const struct rec_tail rec_sync_tail; /* record_sync.c */

#endif /* PODCAP_RECORD_IMPL_H */
