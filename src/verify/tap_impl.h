/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What the reconciliation's files share (verify/tap.c, tap_pair.c,
 * tap_compare.c, tap_envelope.c, tap_report.c): each log kept as its
 * windows and, per window, each pod's counts and limits. Nothing outside
 * them includes it.
 */
#ifndef PODCAP_VERIFY_TAP_IMPL_H
#define PODCAP_VERIFY_TAP_IMPL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "log/record.h"
#include "podmap/config.h"
#include "shape/counters.h"
#include "tap.h"

#define MIN_FRAME     14    /* podcapd counts no shorter frame against a pod */
#define ANY_MAX_FRAME 16384 /* the largest max_frame a pod map allows */
#define KEPT          1000  /* findings listed */
#define QUEUE_UNKNOWN UINT64_MAX

struct obs {
	uint32_t pod;    /* index into rc->ids */
	uint32_t uplink; /* index into rc->links */
	uint64_t cap_bps, burst_bytes, queue_delay_ns;
	uint8_t mode;
	uint64_t pass_bytes[PC_DIR_COUNT], pass_frames[PC_DIR_COUNT];
	uint64_t drop_bytes[PC_DIR_COUNT], drop_frames[PC_DIR_COUNT];
	/* a tap's slices (OBSERVE_SLICES): what it counted within win.slice_ns of each end */
	uint64_t first_bytes[PC_DIR_COUNT], first_frames[PC_DIR_COUNT];
	uint64_t last_bytes[PC_DIR_COUNT], last_frames[PC_DIR_COUNT];
};

#define NO_MAP UINT32_MAX

struct win {
	uint64_t start_ns, len_ns, count;
	uint32_t max_frame;
	uint32_t map;    /* the declared map it names: index into rc->maps, or NO_MAP */
	uint32_t links;  /* its uplinks' names: index into rc->linksets */
	bool seen;       /* a tap's: fully seen */
	const char *why; /* a tap's: why not */
	uint64_t slice_ns; /* a tap's: the length of its slices, 0 when it counted none */
	bool last_short;   /* a tap's: its last slice began late (PC_SLICE_LAST_SHORT) */
	uint32_t nobs;
	struct obs *obs;
	/* the shaper's: uplinks (rc->links) whose pod side its LINK says was down all of it */
	uint32_t ndown;
	uint32_t *down;
};

struct log {
	char source[256];
	uint8_t side;     /* enum pc_role its OBSERVE records name; 0 for none */
	bool mixed_sides; /* they name both */
	struct win *w;
	size_t n, cap;
	bool prev_clean;                    /* the window before the last had no loss, same run */
	bool open;                          /* the last window awaits its OBSERVE */
	char refused[PC_RECONCILE_WHY_LEN]; /* why it is no evidence; "" while it is */
};

/* One (tap, pod, direction): what the comparison found. */
struct tally {
	uint64_t agree, unreconciled, disagree;
	uint64_t worst_diff, worst_tol; /* the largest |difference| among agreeing windows */
	/*
	 * The largest lie a compared window could have hidden: what the tap
	 * may see above the shaper plus what below, and that window's cap x
	 * window (bytes), to say it as a share.
	 */
	uint64_t caught, caught_of;
	uint64_t sliced; /* compared windows whose bound the tap's slices made */
};

struct finding {
	bool failure;
	char msg[320];
};

struct pc_reconcile {
	struct pc_reconcile_policy policy;
	const struct pc_config *const *maps;
	size_t nmaps;
	uint8_t (*digests)[PC_DIGEST_LEN];
	char (*ids)[PC_ID_LEN];
	size_t nids, capids;
	char (*links)[PC_ID_LEN]; /* the uplinks' names */
	size_t nlinks, caplinks;
	char **linksets; /* each window's uplinks, sorted and joined by ", " */
	size_t nlinksets, caplinksets;
	struct log shaper;
	struct log taps[PC_RECONCILE_MAX_TAPS];
	int ntaps;
	struct tally *tally; /* [tap][pod][dir] after finish */
	struct finding *found;
	uint64_t nfound_fail, nfound_unrec, nkept;
	uint64_t total_agree, total_unrec, total_fail;
	int nrefused;       /* taps refused */
	bool shaper_failed; /* the shaper's own verification failed */
};

/* The block of pod in w, trying index hint first; NULL when w has none. */
static inline const struct obs *
find_obs(const struct win *w, uint32_t pod, uint32_t hint)
{
	if (hint < w->nobs && w->obs[hint].pod == pod)
		return &w->obs[hint];
	for (uint32_t i = 0; i < w->nobs; i++)
		if (w->obs[i].pod == pod)
			return &w->obs[i];
	return NULL;
}

/* Whether b begins where a ends, windows of one length. */
static inline bool
adjacent(const struct win *a, const struct win *b)
{
	return a->start_ns + a->count * a->len_ns == b->start_ns && a->len_ns == b->len_ns;
}

/* What the tap on `side` sees of direction d: the shaper's passed, or what was offered to it. */
bool pcv_tap_sees_passed(uint8_t side, enum pc_dir d);
/* A new finding, counted; where to say it, or NULL past the KEPT listed. */
struct finding *pcv_tap_finding(struct pc_reconcile *rc, bool failure);
/* The tap's own envelope of pod and direction d (verify/tap_envelope.c), into t. */
void pcv_tap_envelope(struct pc_reconcile *rc, int tap, uint32_t pod, enum pc_dir d,
		      struct tally *t);

/* The index of an uplink's name in rc->links (added when new), trying hint first. */
uint32_t pcv_tap_link_index(struct pc_reconcile *rc, const char *name, uint32_t hint);
/* The shaper's LINK r, of the windows of its last WINDOW (verify/link_bypass.c). */
void pcv_tap_link(struct pc_reconcile *rc, const struct pc_record *r);
/*
 * The bypasses a fabric-side tap shows: a window whose pod-side link was
 * down all of it by the shaper's LINK, in which the tap saw frames of a
 * pod of that uplink. Each is a failure.
 */
void pcv_tap_bypass(struct pc_reconcile *rc, int tap);

#endif /* PODCAP_VERIFY_TAP_IMPL_H */
