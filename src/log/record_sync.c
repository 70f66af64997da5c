/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A SYNC record's own fields after its links (docs/log-format.md, "SYNC"):
 * what the appliance's clock discipline reported over the windows of the
 * WINDOW just before, and the rules that make the figures agree with one
 * another, so that a verifier never has to guess what a record means.
 */
#include "record_impl.h"

#define SYNC_SIZE (2 + 3 * 4 + 3 * 8 + 8 + 8 + 2 + 1 + 2)

static size_t
sync_size(const struct pc_record *r)
{
	(void)r;
	return SYNC_SIZE;
}

static void
put_u16(struct rec_wr *w, uint16_t v)
{
	pc_store_be16(w->p + w->off, v);
	w->off += 2;
}

static uint16_t
get_u16(struct rec_rd *rd)
{
	uint8_t b[2] = { 0, 0 };

	rec_get_bytes(rd, b, sizeof(b));
	return pc_load_be16(b);
}

static void
sync_put(struct rec_wr *w, const struct pc_record *r)
{
	const struct pc_record_sync *s = &r->sync;

	rec_put_u8(w, s->discipline);
	rec_put_u8(w, s->flags);
	rec_put_u32(w, s->polls);
	rec_put_u32(w, s->readings);
	rec_put_u32(w, s->bounded);
	rec_put_u64(w, (uint64_t)s->offset);
	rec_put_u64(w, (uint64_t)s->path_delay);
	rec_put_u64(w, s->bound_ns);
	rec_put_bytes(w, s->clock, sizeof(s->clock));
	rec_put_bytes(w, s->gm, sizeof(s->gm));
	put_u16(w, s->port);
	rec_put_u8(w, s->port_state);
	put_u16(w, s->steps_removed);
}

static void
sync_get(struct rec_rd *rd, struct pc_record *r)
{
	struct pc_record_sync *s = &r->sync;

	s->discipline = rec_get_u8(rd);
	s->flags = rec_get_u8(rd);
	s->polls = rec_get_u32(rd);
	s->readings = rec_get_u32(rd);
	s->bounded = rec_get_u32(rd);
	s->offset = (int64_t)rec_get_u64(rd);
	s->path_delay = (int64_t)rec_get_u64(rd);
	s->bound_ns = rec_get_u64(rd);
	rec_get_bytes(rd, s->clock, sizeof(s->clock));
	rec_get_bytes(rd, s->gm, sizeof(s->gm));
	s->port = get_u16(rd);
	s->port_state = rec_get_u8(rd);
	s->steps_removed = get_u16(rd);
}

/* The counts nest, and a figure is there only when a reading could give it. */
static int
sync_check_counts(const struct pc_record_sync *s, struct pc_error *err)
{
	bool locked = s->polls > 0 && s->bounded == s->polls;

	if (s->readings > s->polls || s->bounded > s->readings)
		return pc_error_set(err, "sync counts more readings than polls");
	if (((s->flags & PC_SYNC_LOCKED) != 0) != locked)
		return pc_error_set(err, "sync locked flag disagrees with its counts");
	if (s->bounded == 0 && s->bound_ns != 0)
		return pc_error_set(err, "sync bound without a bounded reading");
	if (s->readings == 0 && s->offset != 0)
		return pc_error_set(err, "sync offset without a reading");
	return 0;
}

/* -2^63 has no magnitude a verifier could compare: refused, as a CLOCK's step is. */
static int
sync_check(const struct pc_record *r, struct pc_error *err)
{
	const struct pc_record_sync *s = &r->sync;

	if (s->discipline != PC_SYNC_PTP4L)
		return pc_error_set(err, "unknown clock discipline %u", s->discipline);
	if ((s->flags & ~PC_SYNC_FLAGS) != 0)
		return pc_error_set(err, "unknown sync flags 0x%02x", s->flags);
	if (s->offset == INT64_MIN || s->path_delay == INT64_MIN)
		return pc_error_set(err, "sync offset out of range");
	return sync_check_counts(s, err);
}

const struct rec_tail rec_sync_tail = {
	.size = sync_size,
	.put = sync_put,
	.get = sync_get,
	.check = sync_check,
};
