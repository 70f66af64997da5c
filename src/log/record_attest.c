/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The fields of an ATTEST record after its links (docs/log-format.md,
 * "ATTEST"): the checkpoint the quote commits to, the quote and its
 * signature as the TPM marshalled them, the quoted PCRs, and the IMA list.
 * Decoded as strictly as the rest of the record: every length is checked.
 */
#include <stdlib.h>
#include <string.h>

#include "record_impl.h"

#define PCR_LEN 32

unsigned
pc_record_attest_npcrs(uint32_t mask)
{
	return (unsigned)__builtin_popcount(mask);
}

int
pc_record_attest_check(const struct pc_record_attest *a, struct pc_error *err)
{
	if (a->key_kind > PC_KEY_SEALED)
		return pc_error_set(
		    err, "attest key kind %u is neither a key file nor a sealed key", a->key_kind);
	if (a->quote_len == 0 || a->quote_len > PC_ATTEST_QUOTE_MAX)
		return pc_error_set(err, "attest quote of %u bytes (1 to %u)", a->quote_len,
				    PC_ATTEST_QUOTE_MAX);
	if (a->sig_len == 0 || a->sig_len > PC_ATTEST_SIG_MAX)
		return pc_error_set(err, "attest signature of %u bytes (1 to %u)", a->sig_len,
				    PC_ATTEST_SIG_MAX);
	if (a->pcr_alg != PC_TPM_ALG_SHA256)
		return pc_error_set(err, "attest PCR bank 0x%04x is not SHA-256", a->pcr_alg);
	if (a->pcr_mask == 0 || a->pcr_mask >> PC_ATTEST_PCRS != 0)
		return pc_error_set(err, "attest PCR selection 0x%08x is empty or past PCR 23",
				    a->pcr_mask);
	if (a->ima_len > PC_ATTEST_IMA_MAX)
		return pc_error_set(err, "attest IMA list longer than %u bytes", PC_ATTEST_IMA_MAX);
	if (a->ima_len > 0 && (a->ima == NULL || memchr(a->ima, '\0', a->ima_len) != NULL))
		return pc_error_set(err, "attest IMA list holds a NUL byte");
	return 0;
}

size_t
pc_record_attest_size(const struct pc_record_attest *a)
{
	return 8 + 32 + 1 + 2 + a->quote_len + 2 + a->sig_len + 2 + 4 +
	    PCR_LEN * pc_record_attest_npcrs(a->pcr_mask) + 4 + a->ima_len;
}

static size_t
attest_put_raw(const struct pc_record_attest *a, uint8_t *out)
{
	uint8_t *p = out;

	pc_store_be64(p, a->ckpt_size);
	memcpy(p + 8, a->ckpt_root, 32);
	p[40] = a->key_kind;
	p += 41;
	pc_store_be16(p, a->quote_len);
	memcpy(p + 2, a->quote, a->quote_len);
	p += 2 + a->quote_len;
	pc_store_be16(p, a->sig_len);
	memcpy(p + 2, a->sig, a->sig_len);
	p += 2 + a->sig_len;
	pc_store_be16(p, a->pcr_alg);
	pc_store_be32(p + 2, a->pcr_mask);
	p += 6;
	unsigned n = pc_record_attest_npcrs(a->pcr_mask);
	memcpy(p, a->pcr, (size_t)n * PCR_LEN);
	p += (size_t)n * PCR_LEN;
	pc_store_be32(p, a->ima_len);
	if (a->ima_len > 0)
		memcpy(p + 4, a->ima, a->ima_len);
	p += 4 + a->ima_len;
	return (size_t)(p - out);
}

/* A 2-byte length and that many bytes, at most max, into out. */
static size_t
get_sized(const uint8_t *buf, size_t len, size_t off, size_t max, uint16_t *n, uint8_t *out)
{
	if (len - off < 2)
		return 0;
	*n = pc_load_be16(buf + off);
	if (*n == 0 || *n > max || len - off - 2 < *n)
		return 0;
	memcpy(out, buf + off + 2, *n);
	return 2 + (size_t)*n;
}

static size_t
decode(const uint8_t *buf, size_t len, struct pc_record_attest *a, const char **why)
{
	size_t off = 0, n;

	*why = "record is truncated";
	if (len < 41)
		return 0;
	a->ckpt_size = pc_load_be64(buf);
	memcpy(a->ckpt_root, buf + 8, 32);
	a->key_kind = buf[40];
	off = 41;
	*why = "attest quote is empty, too long or truncated";
	if ((n = get_sized(buf, len, off, PC_ATTEST_QUOTE_MAX, &a->quote_len, a->quote)) == 0)
		return 0;
	off += n;
	*why = "attest signature is empty, too long or truncated";
	if ((n = get_sized(buf, len, off, PC_ATTEST_SIG_MAX, &a->sig_len, a->sig)) == 0)
		return 0;
	off += n;
	*why = "record is truncated";
	if (len - off < 6)
		return 0;
	a->pcr_alg = pc_load_be16(buf + off);
	a->pcr_mask = pc_load_be32(buf + off + 2);
	off += 6;
	if (a->pcr_mask >> PC_ATTEST_PCRS != 0) {
		*why = "attest PCR selection past PCR 23";
		return 0;
	}
	n = (size_t)pc_record_attest_npcrs(a->pcr_mask) * PCR_LEN;
	if (len - off < n + 4)
		return 0;
	memcpy(a->pcr, buf + off, n);
	off += n;
	a->ima_len = pc_load_be32(buf + off);
	off += 4;
	if (a->ima_len > PC_ATTEST_IMA_MAX || len - off < a->ima_len) {
		*why = a->ima_len > PC_ATTEST_IMA_MAX ? "attest IMA list too long"
						      : "record is truncated";
		return 0;
	}
	if (a->ima_len > 0) {
		a->ima = malloc(a->ima_len);
		if (a->ima == NULL) {
			*why = "out of memory";
			return 0;
		}
		memcpy(a->ima, buf + off, a->ima_len);
	}
	*why = NULL;
	return off + a->ima_len;
}

static void
attest_free_raw(struct pc_record_attest *a)
{
	if (a == NULL)
		return;
	free(a->ima);
	free(a);
}

/* Decodes from buf; the bytes read, or 0 with *why set. *out is malloc'd. */
static size_t
attest_get_raw(const uint8_t *buf, size_t len, struct pc_record_attest **out, const char **why)
{
	struct pc_record_attest *a = calloc(1, sizeof(*a));

	*out = NULL;
	if (a == NULL) {
		*why = "out of memory";
		return 0;
	}
	size_t n = decode(buf, len, a, why);
	if (n == 0) {
		attest_free_raw(a);
		return 0;
	}
	*out = a;
	return n;
}

/* ---- the tail of record_types.c's ATTEST ---- */

static size_t
attest_size(const struct pc_record *r)
{
	return pc_record_attest_size(r->attest);
}

static void
attest_put(struct rec_wr *w, const struct pc_record *r)
{
	w->off += attest_put_raw(r->attest, w->p + w->off);
}

static void
attest_get(struct rec_rd *rd, struct pc_record *r)
{
	if (rd->why == NULL)
		rd->off += attest_get_raw(rd->p + rd->off, rd->len - rd->off, &r->attest, &rd->why);
}

/* The fields are a pointer: an ATTEST must point at them. */
static int
attest_check(const struct pc_record *r, struct pc_error *err)
{
	if (r->attest == NULL)
		return pc_error_set(err, "attest record without its attestation fields");
	return pc_record_attest_check(r->attest, err);
}

static void
attest_free(struct pc_record *r)
{
	attest_free_raw(r->attest);
	r->attest = NULL;
}

const struct rec_tail rec_attest_tail = {
	.size = attest_size,
	.put = attest_put,
	.get = attest_get,
	.check = attest_check,
	.free = attest_free,
};
