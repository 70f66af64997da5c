/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The pods a log names (verify/pods.h): found by id through a hash of it,
 * each with every check's state of it, grown together.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "base/bytes.h"
#include "shape/classify.h"

#include "check.h"
#include "lines.h"
#include "pods.h"
#include "verify_impl.h"

void *
pcv_grow(void *p, uint32_t *cap, uint32_t need, size_t elem)
{
	if (need <= *cap)
		return p;
	uint32_t n = *cap ? *cap : 16;
	while (n < need)
		n *= 2;
	void *q = realloc(p, (size_t)n * elem);
	if (q == NULL)
		abort(); /* bounded by pods and links declared: exhaustion is not a finding */
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

static int64_t
find(const struct pcv_idmap *m, const char *id, uint64_t h, pcv_name_fn *name, const void *ctx)
{
	if (m->cap == 0)
		return -1;
	for (uint32_t i = (uint32_t)h & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
		if (m->slots[i].val == 0)
			return -1;
		if (m->slots[i].h == h && strcmp(name(ctx, m->slots[i].val - 1), id) == 0)
			return m->slots[i].val - 1;
	}
}

int64_t
pcv_idmap_find(const struct pcv_idmap *m, const char *id, pcv_name_fn *name, const void *ctx)
{
	return find(m, id, id_hash(id), name, ctx);
}

/* The first empty slot from h's on, in a table of cap (a power of two) slots. */
static uint32_t
free_slot(const struct pcv_slot *slots, uint32_t cap, uint64_t h)
{
	uint32_t j = (uint32_t)h & (cap - 1);

	while (slots[j].val != 0)
		j = (j + 1) & (cap - 1);
	return j;
}

static void
insert(struct pcv_idmap *m, uint64_t h, uint32_t index)
{
	if ((m->n + 1) * 2 > m->cap) {
		uint32_t ncap = m->cap ? m->cap * 2 : 64;
		struct pcv_slot *ns = calloc(ncap, sizeof(*ns));
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

uint32_t
pcv_idmap_index(struct pcv_idmap *m, const char *id, uint32_t next, bool *added, pcv_name_fn *name,
		const void *ctx)
{
	uint64_t h = id_hash(id);
	int64_t i = find(m, id, h, name, ctx);

	*added = i < 0;
	if (i >= 0)
		return (uint32_t)i;
	insert(m, h, next);
	return next;
}

/* ---- the pods ---- */

static const char *
pod_name(const void *ctx, uint32_t i)
{
	const struct pc_verify *v = ctx;

	return v->pods[i].id;
}

/* Pod i is new: every check's state of it, zeroed, with room for as many as the pods. */
static void
add_states(struct pc_verify *v, uint32_t i, uint32_t cap)
{
	for (int id = 0; id < PCV_CHECK_COUNT; id++) {
		size_t n = pcv_checks[id]->pod_size;

		if (n == 0)
			continue;
		if (cap != v->cap_pods) {
			void *p = realloc(v->pod_state[id], (size_t)v->cap_pods * n);
			if (p == NULL)
				abort();
			v->pod_state[id] = p;
		}
		memset(pcv_pod_state(v, id, i), 0, n);
	}
}

uint32_t
pcv_pod_index(struct pc_verify *v, const char *id)
{
	bool added;
	uint32_t i = pcv_idmap_index(&v->pod_ix, id, v->npods, &added, pod_name, v);

	if (added) {
		uint32_t cap = v->cap_pods;

		v->pods = pcv_grow(v->pods, &v->cap_pods, ++v->npods, sizeof(*v->pods));
		memset(&v->pods[i], 0, sizeof(v->pods[i]));
		snprintf(v->pods[i].id, PC_ID_LEN, "%s", id);
		v->pods[i].stamp = UINT64_MAX;
		add_states(v, i, cap);
	}
	return i;
}

int64_t
pcv_pod_find(const struct pc_verify *v, const char *id)
{
	return pcv_idmap_find(&v->pod_ix, id, pod_name, v);
}

/* ---- the state's pods section ---- */

void
pcv_pods_save(const struct pc_verify *v, FILE *f)
{
	fprintf(f, "pods %" PRIu32 "\n", v->npods);
	for (uint32_t i = 0; i < v->npods; i++) {
		fprintf(f, "pod %s %u\n", v->pods[i].id, (unsigned)v->pods[i].promises);
		for (int d = 0; d < PC_DIR_COUNT; d++)
			for (int id = 0; id < PCV_CHECK_COUNT; id++)
				if (pcv_checks[id]->save_pod != NULL)
					pcv_checks[id]->save_pod(v, pcv_pod_state(v, id, i), d, f);
	}
}

static int
load_pod(struct pc_verify *v, struct pcv_lines *ls, struct pc_error *err)
{
	char *s, id[PC_ID_LEN];
	uint64_t promises;

	if (!pcv_line_is(ls, "pod", &s) || !pcv_get_id(&s, id) || !pcv_get_u64(&s, &promises) ||
	    promises > (PROMISE_ENVELOPE | PROMISE_WINDOW) || *s != '\0')
		return pcv_lines_bad(ls, err);
	uint32_t before = v->npods, i = pcv_pod_index(v, id);
	if (i != before)
		return pcv_lines_bad(ls, err); /* listed twice */
	v->pods[i].promises = (uint8_t)promises;
	for (int d = 0; d < PC_DIR_COUNT; d++)
		for (int c = 0; c < PCV_CHECK_COUNT; c++)
			if (pcv_checks[c]->load_pod != NULL &&
			    pcv_checks[c]->load_pod(v, pcv_pod_state(v, c, i), d, ls, err) < 0)
				return -1;
	return 0;
}

int
pcv_pods_load(struct pc_verify *v, struct pcv_lines *ls, struct pc_error *err)
{
	char *s;
	uint64_t n;

	if (!pcv_line_is(ls, "pods", &s) || !pcv_get_u64(&s, &n) || *s != '\0' ||
	    n > UINT32_MAX / 2)
		return pcv_lines_bad(ls, err);
	for (uint64_t i = 0; i < n; i++)
		if (load_pod(v, ls, err) < 0)
			return -1;
	return 0;
}
