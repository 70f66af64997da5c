/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * An OBSERVE record's own fields after its links (docs/log-format.md,
 * "OBSERVE"): the tap's side, and per uplink what its receive ports
 * reported they could not deliver while the windows were counted. An
 * OBSERVE_SLICES record has the same, then the tap's boundary slices: per
 * pod and direction what it counted in the first and the last slice of
 * the window (docs/reconcile.md, "Boundary slices").
 */
#include <stdlib.h>

#include "record_impl.h"

/* A seen block: the name's length, per direction missed, nombuf and errors. */
#define SEEN_FIXED_BYTES (1 + PC_DIR_COUNT * 3 * 8)
#define SEEN_MIN_BYTES   (SEEN_FIXED_BYTES + 1)
/* A slice block: the pod id's length, per direction first and last bytes and frames. */
#define SLICE_FIXED_BYTES (1 + PC_DIR_COUNT * 4 * 8)
#define SLICE_MIN_BYTES   (SLICE_FIXED_BYTES + 1)

static size_t
observe_size(const struct pc_record *r)
{
	const struct pc_record_observe *o = &r->observe;
	size_t n = 1 + 4;

	for (uint32_t i = 0; i < o->nseen; i++)
		n += SEEN_FIXED_BYTES + strnlen(o->seen[i].name, PC_ID_LEN);
	return n;
}

static void
observe_put(struct rec_wr *w, const struct pc_record *r)
{
	const struct pc_record_observe *o = &r->observe;

	rec_put_u8(w, o->side);
	rec_put_u32(w, o->nseen);
	for (uint32_t i = 0; i < o->nseen; i++) {
		const struct pc_record_seen *s = &o->seen[i];

		rec_put_str(w, s->name);
		for (int d = 0; d < PC_DIR_COUNT; d++) {
			rec_put_u64(w, s->missed[d]);
			rec_put_u64(w, s->nombuf[d]);
			rec_put_u64(w, s->errors[d]);
		}
	}
}

static void
observe_get(struct rec_rd *rd, struct pc_record *r)
{
	struct pc_record_observe *o = &r->observe;

	o->side = rec_get_u8(rd);
	o->seen = rec_get_array(rd, &o->nseen, PC_MAX_UPLINKS, "more uplinks than PC_MAX_UPLINKS",
				SEEN_MIN_BYTES, sizeof(*o->seen));
	for (uint32_t i = 0; o->seen != NULL && i < o->nseen && rd->why == NULL; i++) {
		struct pc_record_seen *s = &o->seen[i];

		rec_get_str(rd, s->name, "uplink name is not [A-Za-z0-9._-]{1,63}");
		for (int d = 0; d < PC_DIR_COUNT; d++) {
			s->missed[d] = rec_get_u64(rd);
			s->nombuf[d] = rec_get_u64(rd);
			s->errors[d] = rec_get_u64(rd);
		}
	}
}

/* A tap's side, and a block per uplink. */
static int
observe_check(const struct pc_record *r, struct pc_error *err)
{
	const struct pc_record_observe *o = &r->observe;

	if (o->side != PC_ROLE_POD_TAP && o->side != PC_ROLE_FABRIC_TAP)
		return pc_error_set(err, "observe record of an unknown side");
	if (o->nseen > PC_MAX_UPLINKS)
		return pc_error_set(err, "more uplinks than PC_MAX_UPLINKS");
	if (o->nseen > 0 && o->seen == NULL)
		return pc_error_set(err, "missing uplink array");
	for (uint32_t i = 0; i < o->nseen; i++)
		if (!pc_id_valid(o->seen[i].name))
			return pc_error_set(err, "uplink name is not [A-Za-z0-9._-]{1,63}");
	return 0;
}

static void
observe_free(struct pc_record *r)
{
	free(r->observe.seen);
	r->observe.seen = NULL;
	r->observe.nseen = 0;
}

static size_t
slices_size(const struct pc_record *r)
{
	const struct pc_record_observe *o = &r->observe;
	size_t n = observe_size(r) + 8 + 1 + 4;

	for (uint32_t i = 0; i < o->nslices; i++)
		n += SLICE_FIXED_BYTES + strnlen(o->slices[i].pod, PC_ID_LEN);
	return n;
}

static void
slices_put(struct rec_wr *w, const struct pc_record *r)
{
	const struct pc_record_observe *o = &r->observe;

	observe_put(w, r);
	rec_put_u64(w, o->slice_ns);
	rec_put_u8(w, o->slice_flags);
	rec_put_u32(w, o->nslices);
	for (uint32_t i = 0; i < o->nslices; i++) {
		const struct pc_record_slice *s = &o->slices[i];

		rec_put_str(w, s->pod);
		for (int d = 0; d < PC_DIR_COUNT; d++) {
			rec_put_u64(w, s->first_bytes[d]);
			rec_put_u64(w, s->first_frames[d]);
			rec_put_u64(w, s->last_bytes[d]);
			rec_put_u64(w, s->last_frames[d]);
		}
	}
}

static void
slices_get(struct rec_rd *rd, struct pc_record *r)
{
	struct pc_record_observe *o = &r->observe;

	observe_get(rd, r);
	if (rd->why != NULL)
		return;
	o->slice_ns = rec_get_u64(rd);
	o->slice_flags = rec_get_u8(rd);
	o->slices = rec_get_array(rd, &o->nslices, PC_MAX_PODS, "more pods than PC_MAX_PODS",
				  SLICE_MIN_BYTES, sizeof(*o->slices));
	for (uint32_t i = 0; o->slices != NULL && i < o->nslices && rd->why == NULL; i++) {
		struct pc_record_slice *s = &o->slices[i];

		rec_get_str(rd, s->pod, "pod id is not [A-Za-z0-9._-]{1,63}");
		for (int d = 0; d < PC_DIR_COUNT; d++) {
			s->first_bytes[d] = rec_get_u64(rd);
			s->first_frames[d] = rec_get_u64(rd);
			s->last_bytes[d] = rec_get_u64(rd);
			s->last_frames[d] = rec_get_u64(rd);
		}
	}
}

/* OBSERVE's rules, a slice's length, known flags, and valid pod ids. */
static int
slices_check(const struct pc_record *r, struct pc_error *err)
{
	const struct pc_record_observe *o = &r->observe;

	if (observe_check(r, err) < 0)
		return -1;
	if (o->slice_ns == 0)
		return pc_error_set(err, "observe record with slices of no length");
	if (o->slice_flags & ~PC_SLICE_FLAGS)
		return pc_error_set(err, "observe record with unknown slice flags");
	if (o->nslices > PC_MAX_PODS)
		return pc_error_set(err, "more pods than PC_MAX_PODS");
	if (o->nslices > 0 && o->slices == NULL)
		return pc_error_set(err, "missing slice array");
	for (uint32_t i = 0; i < o->nslices; i++)
		if (!pc_id_valid(o->slices[i].pod))
			return pc_error_set(err, "pod id is not [A-Za-z0-9._-]{1,63}");
	return 0;
}

static void
slices_free(struct pc_record *r)
{
	free(r->observe.slices);
	r->observe.slices = NULL;
	r->observe.nslices = 0;
	observe_free(r);
}

const struct rec_tail rec_observe_slices_tail = {
	.size = slices_size,
	.put = slices_put,
	.get = slices_get,
	.check = slices_check,
	.free = slices_free,
};

const struct rec_tail rec_observe_tail = {
	.size = observe_size,
	.put = observe_put,
	.get = observe_get,
	.check = observe_check,
	.free = observe_free,
};
