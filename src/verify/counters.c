/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Counters a real port can produce (docs/verify.md, check 13): a WINDOW
 * carries one link block for each uplink its pods name, and every
 * counter's bytes lie between its frames times the smallest and the
 * largest frame podcapd counts in it (docs/design.md, "Hostile frames").
 * A signed log may claim anything; these are claims no port can make. Its
 * findings are listed after the others' (counters_finish).
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "shape/classify.h"
#include "podmap/config.h"
#include "shape/counters.h"
#include "log/record.h"
#include "verify.h"

#include "podmap.h"
#include "verify_impl.h"

/* A frame with a whole Ethernet header: the shortest a pod or an unmapped drop counts. */
#define MIN_FRAME 14
/* The largest max_frame a pod map allows: the bound when no declared map is in force. */
#define MAX_FRAME_ANY 16384
/* Malformed frames: a runt can be one byte; none is longer than a port delivers (pcap's snap length). */
#define MIN_MALFORMED 1
#define MAX_MALFORMED 65535

static int
cmp_name(const void *a, const void *b)
{
	return strcmp(a, b);
}

/* The uplinks the pods in force name, sorted, each once; and whether a WINDOW had its block. */
struct counters {
	char (*uplinks)[PC_ID_LEN];
	bool *seen;
	uint32_t n;
};

static void
counters_free(void *st)
{
	struct counters *c = st;

	free(c->uplinks);
	free(c->seen);
}

/* The pods in force changed: the uplinks they name, for the link blocks of their windows. */
static void
inforce_uplinks(struct pc_verify *v, struct counters *c)
{
	uint32_t n = 0;

	counters_free(c);
	c->uplinks = calloc(v->ninforce ? v->ninforce : 1, sizeof(*c->uplinks));
	c->seen = calloc(v->ninforce ? v->ninforce : 1, sizeof(*c->seen));
	if (c->uplinks == NULL || c->seen == NULL)
		abort(); /* bounded by the pods declared: exhaustion is not a finding */
	for (uint32_t i = 0; i < v->ninforce; i++)
		memcpy(c->uplinks[i], v->inforce[i].uplink, PC_ID_LEN);
	qsort(c->uplinks, v->ninforce, PC_ID_LEN, cmp_name);
	for (uint32_t i = 0; i < v->ninforce; i++)
		if (n == 0 || strcmp(c->uplinks[n - 1], c->uplinks[i]) != 0)
			memmove(c->uplinks[n++], c->uplinks[i], PC_ID_LEN);
	c->n = n;
}

static void
counters_declare(struct pc_verify *v, void *st, uint64_t index, const struct pc_record *r)
{
	(void)index, (void)r;
	inforce_uplinks(v, st);
}

static void
counters_resume(struct pc_verify *v, void *st)
{
	inforce_uplinks(v, st);
}

/* One link block per uplink the pods in force name: none missing, repeated or invented. */
static void
check_links(struct pc_verify *v, struct counters *c, uint64_t index, const struct pc_record *r)
{
	for (uint32_t i = 0; i < r->nlinks; i++) {
		const char *name = r->links[i].name;
		char(*at)[PC_ID_LEN] = bsearch(name, c->uplinks, c->n, PC_ID_LEN, cmp_name);

		if (at == NULL) {
			pcv_fail(v, PC_VC_COUNTERS, (int64_t)index, r, "link block for uplink %s, "
				 "which no pod in force names", name);
		} else if (c->seen[at - c->uplinks]) {
			pcv_fail(v, PC_VC_COUNTERS, (int64_t)index, r, "two link blocks for "
				 "uplink %s", name);
		} else {
			c->seen[at - c->uplinks] = true;
		}
	}
	for (uint32_t u = 0; u < c->n; u++) {
		if (!c->seen[u])
			pcv_fail(v, PC_VC_COUNTERS, (int64_t)index, r,
				 "no link block for uplink "
				 "%s, which pods in force name",
				 c->uplinks[u]);
		c->seen[u] = false;
	}
}

/* frames x lo <= bytes <= frames x hi, or the counter is named as impossible. */
static void
check_one(struct pc_verify *v, uint64_t index, const struct pc_record *r, const char *what,
	  const char *name, int d, const char *field, uint64_t frames, uint64_t bytes,
	  uint64_t lo, uint64_t hi)
{
	if ((u128)frames * lo <= bytes && bytes <= (u128)frames * hi)
		return;
	pcv_fail(v, PC_VC_COUNTERS, (int64_t)index, r, "%s %s %s %s: %" PRIu64 " bytes in %"
		 PRIu64 " frames, outside %" PRIu64 " to %" PRIu64 " bytes a frame", what, name,
		 pc_dir_name((enum pc_dir)d), field, bytes, frames, lo, hi);
}

/* A WINDOW with the pods in force: its link blocks and every counter's bytes per frame. */
static void
counters_window(struct pc_verify *v, void *st, uint64_t index, const struct pc_record *r)
{
	const struct pc_config *map = pcv_podmap_inforce(v);
	uint64_t max = map != NULL ? map->max_frame : MAX_FRAME_ANY;

	check_links(v, st, index, r);
	for (uint32_t i = 0; i < r->npods; i++)
		for (int d = 0; d < PC_DIR_COUNT; d++) {
			const struct pc_record_pod *p = &r->pods[i];
			const struct pc_pod_ctr *c = &p->dir[d];

			check_one(v, index, r, "pod", p->id, d, "passed", c->pass_frames,
				  c->pass_bytes, MIN_FRAME, max);
			for (int k = 0; k < PC_POD_DROP_COUNT; k++)
				check_one(v, index, r, "pod", p->id, d,
					  pc_pod_drop_name((enum pc_pod_drop)k), c->drop_frames[k],
					  c->drop_bytes[k], MIN_FRAME, max);
		}
	for (uint32_t i = 0; i < r->nlinks; i++)
		for (int d = 0; d < PC_DIR_COUNT; d++) {
			const struct pc_link_ctr *c = &r->links[i].dir[d];

			check_one(v, index, r, "uplink", r->links[i].name, d,
				  pc_link_drop_name(PC_DROP_UNMAPPED), c->drop_frames[PC_DROP_UNMAPPED],
				  c->drop_bytes[PC_DROP_UNMAPPED], MIN_FRAME, max);
			check_one(v, index, r, "uplink", r->links[i].name, d,
				  pc_link_drop_name(PC_DROP_MALFORMED),
				  c->drop_frames[PC_DROP_MALFORMED], c->drop_bytes[PC_DROP_MALFORMED],
				  MIN_MALFORMED, MAX_MALFORMED);
		}
}

/*
 * The counters findings come last: an impossible counter is most often
 * the trace of a record changed after signing, which the tree's failure
 * names first.
 */
static void
counters_finish(struct pc_verify *v, void *st)
{
	(void)st;
	if (v->found.failsum[PC_VC_COUNTERS].count > 0)
		pcv_failures_last(&v->found, PC_VC_COUNTERS);
}

const struct pcv_check pcv_counters_check = {
	.name = "counters",
	.size = sizeof(struct counters),
	.free = counters_free,
	.on[PC_REC_START] = counters_declare,
	.on[PC_REC_RELOAD] = counters_declare,
	.on[PC_REC_WINDOW] = counters_window,
	.finish = counters_finish,
	.resume = counters_resume,
};
