/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What the log says each pod and link passed and dropped: the totals of
 * the report, added up window by window, and the pods and links found by
 * id. Memory grows with the pods and links a log declares, never with its
 * length.
 */
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "base/bytes.h"
#include "shape/classify.h"
#include "shape/counters.h"
#include "log/record.h"
#include "verify.h"

#include "verify_impl.h"
#include "series.h"

/* ---- pods and links by id ---- */

static void *
grow(void *p, uint32_t *cap, uint32_t need, size_t elem)
{
	if (need <= *cap)
		return p;
	uint32_t n = *cap ? *cap : 16;
	while (n < need)
		n *= 2;
	void *q = realloc(p, (size_t)n * elem);
	if (q == NULL)
		abort();   /* bounded by pods and links declared: exhaustion is not a finding */
	*cap = n;
	return q;
}

static uint64_t
id_hash(const char *id)
{
	static const uint8_t key[crypto_shorthash_KEYBYTES]; /* fixed: the order never leaks out */
	uint8_t h[crypto_shorthash_BYTES];

	crypto_shorthash(h, (const uint8_t *)id, strlen(id), key);
	return pc_load_be64(h);
}

/* Finds `id` (names(i) gives the id of entry i); returns entry index or -1. */
static int64_t
idmap_find(const struct idmap *m, const char *id, uint64_t h,
	   const char *(*name)(const struct pc_verify *, uint32_t), const struct pc_verify *v)
{
	if (m->cap == 0)
		return -1;
	for (uint32_t i = (uint32_t)h & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
		if (m->slots[i].val == 0)
			return -1;
		if (m->slots[i].h == h && strcmp(name(v, m->slots[i].val - 1), id) == 0)
			return m->slots[i].val - 1;
	}
}

/* The first empty slot from h's on, in a table of cap (a power of two) slots. */
static uint32_t
free_slot(const struct slot *slots, uint32_t cap, uint64_t h)
{
	uint32_t j = (uint32_t)h & (cap - 1);

	while (slots[j].val != 0)
		j = (j + 1) & (cap - 1);
	return j;
}

static void
idmap_insert(struct idmap *m, uint64_t h, uint32_t index)
{
	if ((m->n + 1) * 2 > m->cap) {
		uint32_t ncap = m->cap ? m->cap * 2 : 64;
		struct slot *ns = calloc(ncap, sizeof(*ns));
		if (ns == NULL)
			abort();
		for (uint32_t i = 0; i < m->cap; i++)
			if (m->slots[i].val != 0)
				ns[free_slot(ns, ncap, m->slots[i].h)] = m->slots[i];
		free(m->slots);
		m->slots = ns;
		m->cap = ncap;
	}
	uint32_t j = free_slot(m->slots, m->cap, h);
	m->slots[j].val = index + 1;
	m->slots[j].h = h;
	m->n++;
}

static const char *
pod_name(const struct pc_verify *v, uint32_t i)
{
	return v->pods[i].id;
}

static const char *
link_name(const struct pc_verify *v, uint32_t i)
{
	return v->links[i].name;
}

/*
 * The index of `id` in m. When it has none it gets `next`, the caller's
 * next free entry, and *added says the caller must fill that entry in.
 */
static uint32_t
idmap_index(struct idmap *m, const char *id, uint32_t next, bool *added,
	    const char *(*name)(const struct pc_verify *, uint32_t), const struct pc_verify *v)
{
	uint64_t h = id_hash(id);
	int64_t i = idmap_find(m, id, h, name, v);

	*added = i < 0;
	if (i >= 0)
		return (uint32_t)i;
	idmap_insert(m, h, next);
	return next;
}

uint32_t
pcv_pod_index(struct pc_verify *v, const char *id)
{
	bool added;
	uint32_t i = idmap_index(&v->podmap_ix, id, v->npods, &added, pod_name, v);

	if (added) {
		v->pods = grow(v->pods, &v->cap_pods, ++v->npods, sizeof(*v->pods));
		memset(&v->pods[i], 0, sizeof(v->pods[i]));
		snprintf(v->pods[i].id, PC_ID_LEN, "%s", id);
		v->pods[i].stamp = UINT64_MAX;
	}
	return i;
}

uint32_t
pcv_link_index(struct pc_verify *v, const char *name)
{
	bool added;
	uint32_t i = idmap_index(&v->linkmap_ix, name, v->nlinks, &added, link_name, v);

	if (added) {
		v->links = grow(v->links, &v->cap_links, ++v->nlinks, sizeof(*v->links));
		memset(&v->links[i], 0, sizeof(v->links[i]));
		snprintf(v->links[i].name, PC_ID_LEN, "%s", name);
	}
	return i;
}

int64_t
pcv_pod_find(const struct pc_verify *v, const char *id)
{
	return idmap_find(&v->podmap_ix, id, id_hash(id), pod_name, v);
}

/* ---- per-window accounting ---- */

static void
account_pod(struct pc_verify *v, uint64_t index, const struct pc_record *r,
	    const struct pc_record_pod *p, uint32_t sum)
{
	struct podsum *ps = &v->pods[sum];
	uint64_t dur = r->window_len_ns * r->window_count;   /* cannot overflow: decoded */
	u128 cap_window = (u128)p->cap_bps * dur;             /* bit-ns in the window */

	for (int d = 0; d < PC_DIR_COUNT; d++) {
		const struct pc_pod_ctr *c = &p->dir[d];
		struct pc_verify_totals *t = &ps->t[d];
		u128 scaled = (u128)8 * NS * c->pass_bytes;      /* < 2^97 */

		t->bytes += c->pass_bytes;
		t->frames += c->pass_frames;
		for (int k = 0; k < PC_POD_DROP_COUNT; k++) {
			t->drop_frames[k] += c->drop_frames[k];
			t->drop_bytes[k] += c->drop_bytes[k];
		}
		t->windows++;
		if (t->windows == 1 || c->pass_bytes > t->peak_bytes) {
			t->peak_bytes = c->pass_bytes;
			t->peak_window_start_ns = r->window_start_ns;
			if (cap_window == 0) {
				t->peak_permille = UINT64_MAX;
			} else {
				u128 pm = scaled * 1000 / cap_window;
				t->peak_permille = pm >= UINT64_MAX ? UINT64_MAX - 1 : (uint64_t)pm;
			}
		}
		/* 99% of the cap: 100 x 8e9 x bytes >= 99 x cap x ns, in 128 bits */
		if (cap_window < ((u128)1 << 120) && scaled * 100 >= cap_window * 99)
			t->at_cap++;
		pcv_env_step(v, ps, d, index, r->window_start_ns, dur, c->pass_bytes, p->cap_bps,
			     p->burst_bytes);
		pcv_window_check(v, index, r, p, d);
		if (v->series != NULL)
			pcv_series_window(v, sum, d, r, p);
	}
}

static void
account_links(struct pc_verify *v, const struct pc_record *r)
{
	for (uint32_t i = 0; i < r->nlinks; i++) {
		uint32_t li = pcv_link_index(v, r->links[i].name);  /* may move v->links */
		struct linksum *ls = &v->links[li];

		for (int d = 0; d < PC_DIR_COUNT; d++)
			for (int k = 0; k < PC_LINK_DROP_COUNT; k++) {
				ls->frames[d][k] += r->links[i].dir[d].drop_frames[k];
				ls->bytes[d][k] += r->links[i].dir[d].drop_bytes[k];
			}
	}
}

void
pcv_account_window(struct pc_verify *v, uint64_t index, const struct pc_record *r)
{
	for (uint32_t i = 0; i < r->npods; i++)
		account_pod(v, index, r, &r->pods[i], v->inforce_sum[i]);
	pcv_env_window(v, r);
	account_links(v, r);
}
