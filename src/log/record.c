/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Ledger record encoding, version 1 (docs/log-format.md, "Records").
 *
 * A record is signed history: a verifier years from now must read it the
 * same way. So the layout is fixed-width big-endian with no optional parts,
 * and decoding accepts exactly one byte string per record value: every
 * length, count, enum and id is checked, and nothing may follow the last
 * field. Encoding applies the same checks, so podcapd can never sign a
 * record that a verifier would reject as malformed.
 *
 * What differs from type to type is looked up in record_types.c's table:
 * the blocks a type may carry, its window count, and its own fields after
 * the links, which are coded in a file of their own (record_clock.c, ...).
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "record_impl.h"

#define REC_VERSION 1

#define POD_CTR_BYTES  (8 * (2 + 2 * PC_POD_DROP_COUNT))
#define LINK_CTR_BYTES (8 * (2 * PC_LINK_DROP_COUNT))
/* Everything but the id characters; the smallest encodings add one character per id. */
#define POD_FIXED_BYTES  (1 + 1 + 8 + 8 + 1 + PC_DIR_COUNT * POD_CTR_BYTES)
#define LINK_FIXED_BYTES (1 + PC_DIR_COUNT * LINK_CTR_BYTES)
#define POD_MIN_BYTES  (POD_FIXED_BYTES + 2)
#define LINK_MIN_BYTES   (LINK_FIXED_BYTES + 1)

static bool
pod_ctr_zero(const struct pc_pod_ctr *c)
{
	uint64_t any = c->pass_frames | c->pass_bytes;

	for (int k = 0; k < PC_POD_DROP_COUNT; k++)
		any |= c->drop_frames[k] | c->drop_bytes[k];
	return any == 0;
}

/* The window start, length and count, common to every type. */
static int
window_check(const struct pc_record *r, const struct rec_type *t, struct pc_error *err)
{
	if (r->window_len_ns == 0)
		return pc_error_set(err, "window length is zero");
	if (r->window_start_ns % r->window_len_ns != 0)
		return pc_error_set(err, "window start is not a multiple of the window length");
	if (r->window_count > (UINT64_MAX - r->window_start_ns) / r->window_len_ns)
		return pc_error_set(err, "windows run past the end of time");
	/* WINDOW: more than 1 only when the control thread fell behind and closed several */
	if (t->count == REC_COUNT_SOME && r->window_count == 0)
		return pc_error_set(err, "%s record of zero windows", t->name);
	if (t->count == REC_COUNT_ZERO && r->window_count != 0)
		return pc_error_set(err,
				    "window count must be 0 in start, reload, stop, clock "
				    "and declare records");
	return 0;
}

/* The pod and link blocks: as many as the type may carry, each well-formed. */
static int
blocks_check(const struct pc_record *r, const struct rec_type *t, struct pc_error *err)
{
	if (r->npods > PC_MAX_PODS)
		return pc_error_set(err, "more pods than PC_MAX_PODS");
	if (r->nlinks > PC_MAX_UPLINKS)
		return pc_error_set(err, "more links than PC_MAX_UPLINKS");
	if (r->npods > t->max_pods)
		return pc_error_set(err, "pods in a gap, stop, clock or declare record");
	if (r->nlinks > t->max_links)
		return pc_error_set(err, "links in a record other than window");
	if ((r->npods > 0 && r->pods == NULL) || (r->nlinks > 0 && r->links == NULL))
		return pc_error_set(err, "missing pod or link array");
	for (uint32_t i = 0; i < r->npods; i++) {
		const struct pc_record_pod *p = &r->pods[i];

		if (!pc_id_valid(p->id))
			return pc_error_set(err, "pod id is not [A-Za-z0-9._-]{1,63}");
		if (!pc_id_valid(p->uplink))
			return pc_error_set(err, "uplink name is not [A-Za-z0-9._-]{1,63}");
		if ((p->mode & ~PC_POD_MODE_BITS) != 0)
			return pc_error_set(err, "unknown pod mode bits");
		if (!t->counters)
			for (int d = 0; d < PC_DIR_COUNT; d++)
				if (!pod_ctr_zero(&p->dir[d]))
					return pc_error_set(err, "non-zero counters outside a window record");
	}
	for (uint32_t i = 0; i < r->nlinks; i++)
		if (!pc_id_valid(r->links[i].name))
			return pc_error_set(err, "link name is not [A-Za-z0-9._-]{1,63}");
	return 0;
}

/* The fields every type has, as type t has them. */
static int
common_check(const struct pc_record *r, const struct rec_type *t, struct pc_error *err)
{
	if (!pc_id_valid(r->appliance_id))
		return pc_error_set(err, "appliance id is not [A-Za-z0-9._-]{1,63}");
	if (window_check(r, t, err) < 0 || blocks_check(r, t, err) < 0)
		return -1;
	return 0;
}

/*
 * Everything a well-formed record satisfies beyond its byte layout: the
 * common fields first, then the type's own, so the first fault of a
 * record is the one reported.
 */
static int
record_check(const struct pc_record *r, struct pc_error *err)
{
	const struct rec_type *t = rec_type_of(r->type);

	if (t == NULL)
		return pc_error_set(err, "unknown record type");
	if (common_check(r, t, err) < 0)
		return -1;
	return t->tail != NULL ? t->tail->check(r, err) : 0;
}

/* ---- encoding ---- */

static void
put_pod_ctr(struct rec_wr *w, const struct pc_pod_ctr *c)
{
	rec_put_u64(w, c->pass_frames);
	rec_put_u64(w, c->pass_bytes);
	for (int k = 0; k < PC_POD_DROP_COUNT; k++) {
		rec_put_u64(w, c->drop_frames[k]);
		rec_put_u64(w, c->drop_bytes[k]);
	}
}

static void
put_link_ctr(struct rec_wr *w, const struct pc_link_ctr *c)
{
	for (int k = 0; k < PC_LINK_DROP_COUNT; k++) {
		rec_put_u64(w, c->drop_frames[k]);
		rec_put_u64(w, c->drop_bytes[k]);
	}
}

static size_t
encoded_size(const struct pc_record *r, const struct rec_type *t)
{
	size_t n = 1 + 1 + 1 + strnlen(r->appliance_id, PC_ID_LEN) + 4 * 8 +
	    PC_DIGEST_LEN + sizeof(r->build_id) + 4 + 4;

	for (uint32_t i = 0; i < r->npods; i++)
		n += POD_FIXED_BYTES + strnlen(r->pods[i].id, PC_ID_LEN) +
		    strnlen(r->pods[i].uplink, PC_ID_LEN);
	for (uint32_t i = 0; i < r->nlinks; i++)
		n += LINK_FIXED_BYTES + strnlen(r->links[i].name, PC_ID_LEN);
	if (t->tail != NULL)
		n += t->tail->size(r);
	return n;
}

static void
put_blocks(struct rec_wr *w, const struct pc_record *r)
{
	rec_put_u32(w, r->npods);
	for (uint32_t i = 0; i < r->npods; i++) {
		const struct pc_record_pod *p = &r->pods[i];

		rec_put_str(w, p->id);
		rec_put_str(w, p->uplink);
		rec_put_u64(w, p->cap_bps);
		rec_put_u64(w, p->burst_bytes);
		rec_put_u8(w, p->mode);
		for (int d = 0; d < PC_DIR_COUNT; d++)
			put_pod_ctr(w, &p->dir[d]);
	}
	rec_put_u32(w, r->nlinks);
	for (uint32_t i = 0; i < r->nlinks; i++) {
		rec_put_str(w, r->links[i].name);
		for (int d = 0; d < PC_DIR_COUNT; d++)
			put_link_ctr(w, &r->links[i].dir[d]);
	}
}

size_t
pc_record_encode(const struct pc_record *r, uint8_t *buf, size_t len)
{
	/* a record the decoder would refuse must never be signed */
	if (record_check(r, NULL) < 0)
		return 0;
	const struct rec_type *t = rec_type_of(r->type);
	size_t need = encoded_size(r, t);
	if (need > len || need > PC_RECORD_MAX)
		return 0;

	struct rec_wr w = { .p = buf, .off = 0 };
	rec_put_u8(&w, REC_VERSION);
	rec_put_u8(&w, r->type);
	rec_put_str(&w, r->appliance_id);
	rec_put_u64(&w, r->time_ns);
	rec_put_u64(&w, r->window_start_ns);
	rec_put_u64(&w, r->window_len_ns);
	rec_put_u64(&w, r->window_count);
	rec_put_bytes(&w, r->podmap_digest, PC_DIGEST_LEN);
	rec_put_bytes(&w, r->build_id, sizeof(r->build_id));
	put_blocks(&w, r);
	if (t->tail != NULL)
		t->tail->put(&w, r);
	return w.off;
}

/* ---- decoding ---- */

void
rec_get_str(struct rec_rd *r, char out[PC_ID_LEN], const char *what)
{
	uint8_t n = rec_get_u8(r);

	out[0] = '\0';
	if (!rec_need(r, n))
		return;
	if (!pc_id_valid_bytes(r->p + r->off, n)) {
		r->why = what;
		return;
	}
	memcpy(out, r->p + r->off, n);
	out[n] = '\0';
	r->off += n;
}

static void
get_pod_ctr(struct rec_rd *r, struct pc_pod_ctr *c)
{
	c->pass_frames = rec_get_u64(r);
	c->pass_bytes = rec_get_u64(r);
	for (int k = 0; k < PC_POD_DROP_COUNT; k++) {
		c->drop_frames[k] = rec_get_u64(r);
		c->drop_bytes[k] = rec_get_u64(r);
	}
}

static void
get_link_ctr(struct rec_rd *r, struct pc_link_ctr *c)
{
	for (int k = 0; k < PC_LINK_DROP_COUNT; k++) {
		c->drop_frames[k] = rec_get_u64(r);
		c->drop_bytes[k] = rec_get_u64(r);
	}
}

void *
rec_get_array(struct rec_rd *r, uint32_t *n, uint32_t max, const char *too_many, size_t min_bytes,
	      size_t elem)
{
	void *a;

	*n = rec_get_u32(r);
	if (r->why != NULL || *n == 0)
		return NULL;
	if (*n > max) {
		r->why = too_many;
		return NULL;
	}
	if ((r->len - r->off) / min_bytes < *n) {
		r->why = "record is truncated";
		return NULL;
	}
	a = calloc(*n, elem);
	if (a == NULL)
		r->why = "out of memory";
	return a;
}

static void
get_pods(struct rec_rd *r, struct pc_record *rec)
{
	rec->pods = rec_get_array(r, &rec->npods, PC_MAX_PODS, "more pods than PC_MAX_PODS",
				  POD_MIN_BYTES, sizeof(*rec->pods));
	for (uint32_t i = 0; rec->pods != NULL && i < rec->npods && r->why == NULL; i++) {
		struct pc_record_pod *p = &rec->pods[i];

		rec_get_str(r, p->id, "pod id is not [A-Za-z0-9._-]{1,63}");
		rec_get_str(r, p->uplink, "uplink name is not [A-Za-z0-9._-]{1,63}");
		p->cap_bps = rec_get_u64(r);
		p->burst_bytes = rec_get_u64(r);
		p->mode = rec_get_u8(r);
		for (int d = 0; d < PC_DIR_COUNT; d++)
			get_pod_ctr(r, &p->dir[d]);
	}
}

static void
get_links(struct rec_rd *r, struct pc_record *rec)
{
	rec->links =
	    rec_get_array(r, &rec->nlinks, PC_MAX_UPLINKS, "more links than PC_MAX_UPLINKS",
			  LINK_MIN_BYTES, sizeof(*rec->links));
	for (uint32_t i = 0; rec->links != NULL && i < rec->nlinks && r->why == NULL; i++) {
		rec_get_str(r, rec->links[i].name, "link name is not [A-Za-z0-9._-]{1,63}");
		for (int d = 0; d < PC_DIR_COUNT; d++)
			get_link_ctr(r, &rec->links[i].dir[d]);
	}
}

/* The fields every type has, in their order: through the link blocks. */
static void
get_common(struct rec_rd *r, struct pc_record *rec)
{
	rec_get_str(r, rec->appliance_id, "appliance id is not [A-Za-z0-9._-]{1,63}");
	rec->time_ns = rec_get_u64(r);
	rec->window_start_ns = rec_get_u64(r);
	rec->window_len_ns = rec_get_u64(r);
	rec->window_count = rec_get_u64(r);
	rec_get_bytes(r, rec->podmap_digest, PC_DIGEST_LEN);
	rec_get_bytes(r, rec->build_id, sizeof(rec->build_id));
	get_pods(r, rec);
	get_links(r, rec);
}

/* The length, the version and the type; the type's entry, NULL when unknown. */
static const struct rec_type *
get_head(struct rec_rd *r, struct pc_record *rec)
{
	if (r->len > PC_RECORD_MAX) {
		r->why = "record is longer than PC_RECORD_MAX";
		return NULL;
	}
	uint8_t version = rec_get_u8(r);
	if (r->why == NULL && version != REC_VERSION) {
		r->why = "unknown record format version";
		return NULL;
	}
	rec->type = rec_get_u8(r);
	return rec_type_of(rec->type);
}

/* The end of a decoding: 0, or -1 with err and nothing left allocated. */
static int
decoded(struct rec_rd *r, struct pc_record *rec, const struct rec_type *t, struct pc_error *err)
{
	if (r->why != NULL)
		pc_error_set(err, "%s", r->why);
	if (r->why != NULL ||
	    (t == &rec_type_unknown ? common_check(rec, t, err) : record_check(rec, err)) < 0) {
		pc_record_free(rec);
		return -1;
	}
	return 0;
}

int
pc_record_decode(const uint8_t *buf, size_t len, struct pc_record *rec, struct pc_error *err)
{
	struct rec_rd r = { .p = buf, .len = len, .off = 0, .why = NULL };

	memset(rec, 0, sizeof(*rec));
	const struct rec_type *t = get_head(&r, rec);
	if (t == NULL)
		return pc_error_set(err, "%s", r.why != NULL ? r.why : "unknown record type");
	get_common(&r, rec);
	if (t->tail != NULL)
		t->tail->get(&r, rec);
	if (r.why == NULL && r.off != len)
		r.why = "trailing bytes after the record";
	return decoded(&r, rec, t, err);
}

int
pc_record_decode_unknown(const uint8_t *buf, size_t len, struct pc_record *rec,
			 struct pc_error *err)
{
	struct rec_rd r = { .p = buf, .len = len, .off = 0, .why = NULL };

	memset(rec, 0, sizeof(*rec));
	if (get_head(&r, rec) != NULL)
		return pc_error_set(err, "record type %u is one this version knows", rec->type);
	if (r.why != NULL)
		return pc_error_set(err, "%s", r.why);
	/* what follows the links is the type's own: this version cannot say what it holds */
	get_common(&r, rec);
	return decoded(&r, rec, &rec_type_unknown, err);
}

void
pc_record_free(struct pc_record *r)
{
	const struct rec_type *t = rec_type_of(r->type);

	free(r->pods);
	free(r->links);
	if (t != NULL && t->tail != NULL && t->tail->free != NULL)
		t->tail->free(r);
	r->pods = NULL;
	r->links = NULL;
	r->npods = 0;
	r->nlinks = 0;
}
