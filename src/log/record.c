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
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "base/bytes.h"
#include "base/id.h"
#include "record.h"

#define REC_VERSION 1

#define POD_CTR_BYTES  (8 * (2 + 2 * PC_POD_DROP_COUNT))
#define LINK_CTR_BYTES (8 * (2 * PC_LINK_DROP_COUNT))
/* Everything but the id characters; the smallest encodings add one character per id. */
#define POD_FIXED_BYTES  (1 + 1 + 8 + 8 + 1 + PC_DIR_COUNT * POD_CTR_BYTES)
#define LINK_FIXED_BYTES (1 + PC_DIR_COUNT * LINK_CTR_BYTES)
#define POD_MIN_BYTES  (POD_FIXED_BYTES + 2)
#define LINK_MIN_BYTES (LINK_FIXED_BYTES + 1)
#define SEEN_FIXED_BYTES (1 + PC_DIR_COUNT * 3 * 8)
#define SEEN_MIN_BYTES   (SEEN_FIXED_BYTES + 1)

const char *
pc_record_type_name(uint8_t type)
{
	switch (type) {
	case PC_REC_START:
		return "start";
	case PC_REC_WINDOW:
		return "window";
	case PC_REC_GAP:
		return "gap";
	case PC_REC_RELOAD:
		return "reload";
	case PC_REC_STOP:
		return "stop";
	case PC_REC_CLOCK:
		return "clock";
	case PC_REC_OBSERVE:
		return "observe";
	case PC_REC_DECLARE:
		return "declare";
	case PC_REC_ATTEST:
		return "attest";
	default:
		return "unknown";
	}
}

static bool
pod_ctr_zero(const struct pc_pod_ctr *c)
{
	uint64_t any = c->pass_frames | c->pass_bytes;

	for (int k = 0; k < PC_POD_DROP_COUNT; k++)
		any |= c->drop_frames[k] | c->drop_bytes[k];
	return any == 0;
}

static bool
type_known(uint8_t type)
{
	return (type >= PC_REC_START && type <= PC_REC_CLOCK) || type == PC_REC_ATTEST ||
	    type == PC_REC_OBSERVE || type == PC_REC_DECLARE;
}

static bool
decl_fields_zero(const struct pc_record *r)
{
	uint8_t any = 0;

	for (size_t i = 0; i < PC_DIGEST_LEN; i++)
		any |= r->decl_hash[i];
	return any == 0 && r->not_before_ns == 0 && r->not_after_ns == 0;
}

/* DECLARE's own fields: only there, and a validity that is one. */
static int
decl_check(const struct pc_record *r, struct pc_error *err)
{
	if (r->type != PC_REC_DECLARE)
		return decl_fields_zero(r)
		    ? 0
		    : pc_error_set(err, "declaration fields in a record other than declare");
	if (r->not_after_ns <= r->not_before_ns)
		return pc_error_set(err, "declaration valid until no later than it is valid from");
	return 0;
}

static bool
type_has_pods(uint8_t type)
{
	return type == PC_REC_START || type == PC_REC_WINDOW || type == PC_REC_RELOAD;
}

/* The tap's fields: only in OBSERVE, which has a side and a block per uplink. */
static int
observe_check(const struct pc_record *r, struct pc_error *err)
{
	if (r->type != PC_REC_OBSERVE) {
		if (r->side != 0 || r->nseen != 0)
			return pc_error_set(err, "tap fields in a record other than observe");
		return 0;
	}
	if (r->side != PC_ROLE_POD_TAP && r->side != PC_ROLE_FABRIC_TAP)
		return pc_error_set(err, "observe record of an unknown side");
	if (r->nseen > PC_MAX_UPLINKS)
		return pc_error_set(err, "more uplinks than PC_MAX_UPLINKS");
	if (r->nseen > 0 && r->seen == NULL)
		return pc_error_set(err, "missing uplink array");
	for (uint32_t i = 0; i < r->nseen; i++)
		if (!pc_id_valid(r->seen[i].name))
			return pc_error_set(err, "uplink name is not [A-Za-z0-9._-]{1,63}");
	return 0;
}

/* Everything a well-formed record satisfies beyond its byte layout. */
static int
record_check(const struct pc_record *r, struct pc_error *err)
{
	if (!type_known(r->type))
		return pc_error_set(err, "unknown record type");
	if ((r->type == PC_REC_ATTEST) != (r->attest != NULL))
		return pc_error_set(err, "attestation fields in a record other than attest");
	if (r->attest != NULL && pc_record_attest_check(r->attest, err) != 0)
		return -1;
	if (!pc_id_valid(r->appliance_id))
		return pc_error_set(err, "appliance id is not [A-Za-z0-9._-]{1,63}");
	if (r->window_len_ns == 0)
		return pc_error_set(err, "window length is zero");
	if (r->window_start_ns % r->window_len_ns != 0)
		return pc_error_set(err, "window start is not a multiple of the window length");
	if (r->window_count > (UINT64_MAX - r->window_start_ns) / r->window_len_ns)
		return pc_error_set(err, "windows run past the end of time");
	switch (r->type) {
	case PC_REC_WINDOW:
		/* more than 1 only when the control thread fell behind and closed several at once */
		if (r->window_count == 0)
			return pc_error_set(err, "window record of zero windows");
		break;
	case PC_REC_GAP:
		if (r->window_count == 0)
			return pc_error_set(err, "gap record of zero windows");
		break;
	case PC_REC_OBSERVE:
		if (r->window_count == 0)
			return pc_error_set(err, "observe record of zero windows");
		break;
	default:
		if (r->window_count != 0)
			return pc_error_set(err,
					    "window count must be 0 in start, reload, stop, clock "
					    "and declare records");
	}
	if (decl_check(r, err) < 0)
		return -1;
	if (r->type != PC_REC_CLOCK && (r->elapsed_ns != 0 || r->step_ns != 0))
		return pc_error_set(err, "clock fields in a record other than clock");
	if (r->type == PC_REC_CLOCK && r->step_ns == INT64_MIN)
		return pc_error_set(err, "clock step out of range");
	if (r->npods > PC_MAX_PODS)
		return pc_error_set(err, "more pods than PC_MAX_PODS");
	if (r->nlinks > PC_MAX_UPLINKS)
		return pc_error_set(err, "more links than PC_MAX_UPLINKS");
	if (r->npods > 0 && !type_has_pods(r->type))
		return pc_error_set(err, "pods in a gap, stop, clock or declare record");
	if (r->nlinks > 0 && r->type != PC_REC_WINDOW)
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
		if (r->type != PC_REC_WINDOW)
			for (int d = 0; d < PC_DIR_COUNT; d++)
				if (!pod_ctr_zero(&p->dir[d]))
					return pc_error_set(err, "non-zero counters outside a window record");
	}
	for (uint32_t i = 0; i < r->nlinks; i++)
		if (!pc_id_valid(r->links[i].name))
			return pc_error_set(err, "link name is not [A-Za-z0-9._-]{1,63}");
	return observe_check(r, err);
}

/* ---- encoding ---- */

struct wr {
	uint8_t *p;
	size_t off;
};

static void
put_u8(struct wr *w, uint8_t v)
{
	w->p[w->off++] = v;
}

static void
put_u32(struct wr *w, uint32_t v)
{
	pc_store_be32(w->p + w->off, v);
	w->off += 4;
}

static void
put_u64(struct wr *w, uint64_t v)
{
	pc_store_be64(w->p + w->off, v);
	w->off += 8;
}

static void
put_bytes(struct wr *w, const void *b, size_t n)
{
	memcpy(w->p + w->off, b, n);
	w->off += n;
}

static void
put_str(struct wr *w, const char *s)
{
	size_t n = strnlen(s, PC_ID_LEN);

	put_u8(w, (uint8_t)n);
	put_bytes(w, s, n);
}

static void
put_pod_ctr(struct wr *w, const struct pc_pod_ctr *c)
{
	put_u64(w, c->pass_frames);
	put_u64(w, c->pass_bytes);
	for (int k = 0; k < PC_POD_DROP_COUNT; k++) {
		put_u64(w, c->drop_frames[k]);
		put_u64(w, c->drop_bytes[k]);
	}
}

static void
put_link_ctr(struct wr *w, const struct pc_link_ctr *c)
{
	for (int k = 0; k < PC_LINK_DROP_COUNT; k++) {
		put_u64(w, c->drop_frames[k]);
		put_u64(w, c->drop_bytes[k]);
	}
}

static size_t
encoded_size(const struct pc_record *r)
{
	size_t n = 1 + 1 + 1 + strnlen(r->appliance_id, PC_ID_LEN) + 4 * 8 +
	    PC_DIGEST_LEN + sizeof(r->build_id) + 4 + 4;

	for (uint32_t i = 0; i < r->npods; i++)
		n += POD_FIXED_BYTES + strnlen(r->pods[i].id, PC_ID_LEN) +
		    strnlen(r->pods[i].uplink, PC_ID_LEN);
	for (uint32_t i = 0; i < r->nlinks; i++)
		n += LINK_FIXED_BYTES + strnlen(r->links[i].name, PC_ID_LEN);
	if (r->type == PC_REC_CLOCK)
		n += 2 * 8;
	if (r->type == PC_REC_DECLARE)
		n += PC_DIGEST_LEN + 2 * 8;
	if (r->type == PC_REC_ATTEST)
		n += pc_record_attest_size(r->attest);
	if (r->type == PC_REC_OBSERVE) {
		n += 1 + 4;
		for (uint32_t i = 0; i < r->nseen; i++)
			n += SEEN_FIXED_BYTES + strnlen(r->seen[i].name, PC_ID_LEN);
	}
	return n;
}

size_t
pc_record_encode(const struct pc_record *r, uint8_t *buf, size_t len)
{
	/* a record the decoder would refuse must never be signed */
	if (record_check(r, NULL) < 0)
		return 0;
	size_t need = encoded_size(r);
	if (need > len || need > PC_RECORD_MAX)
		return 0;

	struct wr w = { .p = buf, .off = 0 };
	put_u8(&w, REC_VERSION);
	put_u8(&w, r->type);
	put_str(&w, r->appliance_id);
	put_u64(&w, r->time_ns);
	put_u64(&w, r->window_start_ns);
	put_u64(&w, r->window_len_ns);
	put_u64(&w, r->window_count);
	put_bytes(&w, r->podmap_digest, PC_DIGEST_LEN);
	put_bytes(&w, r->build_id, sizeof(r->build_id));
	put_u32(&w, r->npods);
	for (uint32_t i = 0; i < r->npods; i++) {
		const struct pc_record_pod *p = &r->pods[i];

		put_str(&w, p->id);
		put_str(&w, p->uplink);
		put_u64(&w, p->cap_bps);
		put_u64(&w, p->burst_bytes);
		put_u8(&w, p->mode);
		for (int d = 0; d < PC_DIR_COUNT; d++)
			put_pod_ctr(&w, &p->dir[d]);
	}
	put_u32(&w, r->nlinks);
	for (uint32_t i = 0; i < r->nlinks; i++) {
		put_str(&w, r->links[i].name);
		for (int d = 0; d < PC_DIR_COUNT; d++)
			put_link_ctr(&w, &r->links[i].dir[d]);
	}
	if (r->type == PC_REC_CLOCK) {
		put_u64(&w, r->elapsed_ns);
		put_u64(&w, (uint64_t)r->step_ns);
	}
	if (r->type == PC_REC_DECLARE) {
		put_bytes(&w, r->decl_hash, PC_DIGEST_LEN);
		put_u64(&w, r->not_before_ns);
		put_u64(&w, r->not_after_ns);
	}
	if (r->type == PC_REC_ATTEST)
		w.off += pc_record_attest_put(r->attest, w.p + w.off);
	if (r->type == PC_REC_OBSERVE) {
		put_u8(&w, r->side);
		put_u32(&w, r->nseen);
		for (uint32_t i = 0; i < r->nseen; i++) {
			const struct pc_record_seen *s = &r->seen[i];
			put_str(&w, s->name);
			for (int d = 0; d < PC_DIR_COUNT; d++) {
				put_u64(&w, s->missed[d]);
				put_u64(&w, s->nombuf[d]);
				put_u64(&w, s->errors[d]);
			}
		}
	}
	return w.off;
}

/* ---- decoding ---- */

struct rd {
	const uint8_t *p;
	size_t len;
	size_t off;
	const char *why;   /* first error; later reads are no-ops */
};

static bool
need(struct rd *r, size_t n)
{
	if (r->why != NULL)
		return false;
	if (r->len - r->off < n) {
		r->why = "record is truncated";
		return false;
	}
	return true;
}

static uint8_t
get_u8(struct rd *r)
{
	if (!need(r, 1))
		return 0;
	return r->p[r->off++];
}

static uint32_t
get_u32(struct rd *r)
{
	if (!need(r, 4))
		return 0;
	r->off += 4;
	return pc_load_be32(r->p + r->off - 4);
}

static uint64_t
get_u64(struct rd *r)
{
	if (!need(r, 8))
		return 0;
	r->off += 8;
	return pc_load_be64(r->p + r->off - 8);
}

static void
get_bytes(struct rd *r, void *out, size_t n)
{
	if (!need(r, n))
		return;
	memcpy(out, r->p + r->off, n);
	r->off += n;
}

/* A 1-byte length, then that many id characters; stored NUL-terminated. */
static void
get_str(struct rd *r, char out[PC_ID_LEN], const char *what)
{
	uint8_t n = get_u8(r);

	out[0] = '\0';
	if (!need(r, n))
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
get_pod_ctr(struct rd *r, struct pc_pod_ctr *c)
{
	c->pass_frames = get_u64(r);
	c->pass_bytes = get_u64(r);
	for (int k = 0; k < PC_POD_DROP_COUNT; k++) {
		c->drop_frames[k] = get_u64(r);
		c->drop_bytes[k] = get_u64(r);
	}
}

static void
get_link_ctr(struct rd *r, struct pc_link_ctr *c)
{
	for (int k = 0; k < PC_LINK_DROP_COUNT; k++) {
		c->drop_frames[k] = get_u64(r);
		c->drop_bytes[k] = get_u64(r);
	}
}

/*
 * An array's count and its zeroed storage: the count must fit in what is
 * left of the record before anything is allocated, so a hostile count
 * cannot make the decoder allocate more than the record could describe.
 */
static void *
get_array(struct rd *r, uint32_t *n, uint32_t max, const char *too_many, size_t min_bytes,
	  size_t elem)
{
	void *a;

	*n = get_u32(r);
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
get_pods(struct rd *r, struct pc_record *rec)
{
	rec->pods = get_array(r, &rec->npods, PC_MAX_PODS, "more pods than PC_MAX_PODS",
			      POD_MIN_BYTES, sizeof(*rec->pods));
	for (uint32_t i = 0; rec->pods != NULL && i < rec->npods && r->why == NULL; i++) {
		struct pc_record_pod *p = &rec->pods[i];

		get_str(r, p->id, "pod id is not [A-Za-z0-9._-]{1,63}");
		get_str(r, p->uplink, "uplink name is not [A-Za-z0-9._-]{1,63}");
		p->cap_bps = get_u64(r);
		p->burst_bytes = get_u64(r);
		p->mode = get_u8(r);
		for (int d = 0; d < PC_DIR_COUNT; d++)
			get_pod_ctr(r, &p->dir[d]);
	}
}

static void
get_links(struct rd *r, struct pc_record *rec)
{
	rec->links = get_array(r, &rec->nlinks, PC_MAX_UPLINKS, "more links than PC_MAX_UPLINKS",
			       LINK_MIN_BYTES, sizeof(*rec->links));
	for (uint32_t i = 0; rec->links != NULL && i < rec->nlinks && r->why == NULL; i++) {
		get_str(r, rec->links[i].name, "link name is not [A-Za-z0-9._-]{1,63}");
		for (int d = 0; d < PC_DIR_COUNT; d++)
			get_link_ctr(r, &rec->links[i].dir[d]);
	}
}

static void
get_seen(struct rd *r, struct pc_record *rec)
{
	rec->side = get_u8(r);
	rec->seen = get_array(r, &rec->nseen, PC_MAX_UPLINKS, "more uplinks than PC_MAX_UPLINKS",
			      SEEN_MIN_BYTES, sizeof(*rec->seen));
	for (uint32_t i = 0; rec->seen != NULL && i < rec->nseen && r->why == NULL; i++) {
		struct pc_record_seen *s = &rec->seen[i];
		get_str(r, s->name, "uplink name is not [A-Za-z0-9._-]{1,63}");
		for (int d = 0; d < PC_DIR_COUNT; d++) {
			s->missed[d] = get_u64(r);
			s->nombuf[d] = get_u64(r);
			s->errors[d] = get_u64(r);
		}
	}
}

int
pc_record_decode(const uint8_t *buf, size_t len, struct pc_record *rec, struct pc_error *err)
{
	struct rd r = { .p = buf, .len = len, .off = 0, .why = NULL };

	memset(rec, 0, sizeof(*rec));
	if (len > PC_RECORD_MAX)
		return pc_error_set(err, "record is longer than PC_RECORD_MAX");
	uint8_t version = get_u8(&r);
	if (r.why == NULL && version != REC_VERSION)
		return pc_error_set(err, "unknown record format version");
	rec->type = get_u8(&r);
	if (r.why == NULL && !type_known(rec->type))
		return pc_error_set(err, "unknown record type");
	get_str(&r, rec->appliance_id, "appliance id is not [A-Za-z0-9._-]{1,63}");
	rec->time_ns = get_u64(&r);
	rec->window_start_ns = get_u64(&r);
	rec->window_len_ns = get_u64(&r);
	rec->window_count = get_u64(&r);
	get_bytes(&r, rec->podmap_digest, PC_DIGEST_LEN);
	get_bytes(&r, rec->build_id, sizeof(rec->build_id));
	get_pods(&r, rec);
	get_links(&r, rec);
	if (rec->type == PC_REC_CLOCK) {
		rec->elapsed_ns = get_u64(&r);
		rec->step_ns = (int64_t)get_u64(&r);
	}
	if (rec->type == PC_REC_DECLARE) {
		get_bytes(&r, rec->decl_hash, PC_DIGEST_LEN);
		rec->not_before_ns = get_u64(&r);
		rec->not_after_ns = get_u64(&r);
	}
	if (rec->type == PC_REC_ATTEST && r.why == NULL)
		r.off += pc_record_attest_get(buf + r.off, len - r.off, &rec->attest, &r.why);
	if (rec->type == PC_REC_OBSERVE)
		get_seen(&r, rec);
	if (r.why == NULL && r.off != len)
		r.why = "trailing bytes after the record";
	if (r.why != NULL)
		pc_error_set(err, "%s", r.why);
	if (r.why != NULL || record_check(rec, err) < 0) {
		pc_record_free(rec);
		return -1;
	}
	return 0;
}

void
pc_record_free(struct pc_record *r)
{
	free(r->pods);
	free(r->links);
	pc_record_attest_free(r->attest);
	r->attest = NULL;
	free(r->seen);
	r->pods = NULL;
	r->links = NULL;
	r->seen = NULL;
	r->nseen = 0;
	r->npods = 0;
	r->nlinks = 0;
}
