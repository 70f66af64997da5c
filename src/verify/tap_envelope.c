/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The tap's own envelope (docs/reconcile.md): the verifier's own evidence
 * that the cap held, from the tap's windows alone, held to what the
 * shaper's bucket could pass over every run of them with the clocks'
 * offset either side.
 */
#include <inttypes.h>
#include <stdio.h>

#include "base/clock.h"
#include "tap.h"

#include "tap_impl.h"

/* Bytes x 8e9: what a cap in bit/s earns over ns, exactly. */
#define SCALE 8000000000ll

/* The pod's block of window i of l, when it is the same bucket as that of window j. */
static const struct obs *
same_bucket(const struct log *l, size_t i, size_t j, uint32_t pod)
{
	if (i >= l->n)
		return NULL;
	const struct win *a = &l->w[i < j ? i : j], *b = &l->w[i < j ? j : i];
	const struct obs *o = find_obs(&l->w[i], pod, pod);
	const struct obs *p = find_obs(&l->w[j], pod, pod);
	/* a pod that moved to another uplink is another bucket */
	return adjacent(a, b) && o != NULL && p != NULL && o->uplink == p->uplink ? o : NULL;
}

/*
 * What the shaper's bucket can pass of pod in the offset D before the
 * tap's window i, scaled: the level it may hold D before (the burst in force
 * then) and what it earns over D at the caps in force, walking back
 * through the windows D covers. Those the tap's log does not show (before
 * its first window, across a hole) are taken to have window i's limits. A
 * reload only clamps the level it carries, so nothing else is owed; and
 * what crosses in D is held by the line too, the level after it by window
 * i's burst.
 */
static __int128
before_run(const struct pc_reconcile *rc, const struct log *l, size_t i, uint32_t pod)
{
	const struct obs *o = find_obs(&l->w[i], pod, pod), *k = o;
	uint64_t left = rc->policy.offset_ns;
	__int128 earned = 0;

	for (size_t j = i; left > 0;) {
		const struct obs *p = j > 0 ? same_bucket(l, j - 1, j, pod) : NULL;
		if (p == NULL) {
			earned += (__int128)k->cap_bps * left;
			break;
		}
		j--;
		k = p;
		uint64_t span = l->w[j].count * l->w[j].len_ns;
		span = span < left ? span : left;
		earned += (__int128)k->cap_bps * span;
		left -= span;
	}
	__int128 bucket = (__int128)k->burst_bytes * SCALE + earned;
	__int128 line = (__int128)rc->policy.line_bps * rc->policy.offset_ns +
	    ((__int128)l->w[i].max_frame + o->burst_bytes) * SCALE;
	return bucket < line ? bucket : line;
}

/* What the bucket earns in the offset after the tap's window i, at the caps then in force. */
static __int128
after_run(const struct pc_reconcile *rc, const struct log *l, size_t i, uint32_t pod)
{
	const struct obs *k = find_obs(&l->w[i], pod, pod);
	uint64_t left = rc->policy.offset_ns;
	__int128 earned = 0;

	for (size_t j = i; left > 0;) {
		const struct obs *p = same_bucket(l, j + 1, j, pod);
		if (p == NULL) {
			earned += (__int128)k->cap_bps * left;
			break;
		}
		j++;
		k = p;
		uint64_t span = l->w[j].count * l->w[j].len_ns;
		span = span < left ? span : left;
		earned += (__int128)k->cap_bps * span;
		left -= span;
	}
	return earned;
}

/* The worst run of a tap's windows ending at the one in hand. */
struct env_run {
	bool open;
	__int128 excess; /* its bytes less what its windows earn, less what it may start with */
	__int128 start;  /* what it may start with (before_run) */
	__int128 earned; /* what its windows earn */
	uint64_t from_ns, bytes; /* where it begins, and the bytes it saw */
};

static void
say_cap_broken(struct pc_reconcile *rc, int tap, uint32_t pod, enum pc_dir d,
	       const struct env_run *r, uint64_t to_ns, uint64_t allowed)
{
	char a[PC_UTC_LEN], b[PC_UTC_LEN];
	struct finding *f = pcv_tap_finding(rc, true);

	if (f == NULL)
		return;
	pc_utc_format(r->from_ns, a, sizeof(a));
	pc_utc_format(to_ns, b, sizeof(b));
	snprintf(f->msg, sizeof(f->msg),
		 "tap %d: pod %s %s: the tap saw %" PRIu64 " B pass from %s to %s, more than "
		 "the %" PRIu64 " B the bursts and caps in force allow over that time and the "
		 "clock offset either side: the cap did not hold",
		 tap + 1, rc->ids[pod], pc_dir_name(d), r->bytes, a, b, allowed);
}

/*
 * The verifier's own evidence that the cap held (docs/reconcile.md): in the
 * direction the tap sees passed, every run of the tap's consecutive windows
 * of a pod on one uplink (reloads between them included: a bucket's level
 * is carried, clamped) saw at most what the shaper's bucket could pass from
 * the offset before the run to the offset after it, at the limits in force
 * there: before_run + the caps x the windows + after_run + 2 x max_frame for
 * the rounding of a real bucket. The worst run ending at each window is
 * kept as it goes, in one pass.
 */
void
pcv_tap_envelope(struct pc_reconcile *rc, int tap, uint32_t pod, enum pc_dir d, struct tally *t)
{
	const struct log *l = &rc->taps[tap];
	struct env_run r = { .open = false };

	for (size_t i = 0; i < l->n; i++) {
		const struct win *w = &l->w[i];
		const struct obs *o = find_obs(w, pod, pod);
		if (o == NULL) {
			r.open = false;
			continue;
		}
		__int128 earn = (__int128)o->cap_bps * (w->count * w->len_ns);
		__int128 x = (__int128)o->pass_bytes[d] * SCALE - earn;
		__int128 start = before_run(rc, l, i, pod);
		bool goes_on = r.open && i > 0 && same_bucket(l, i - 1, i, pod) != NULL;
		/* a run from here is worse than the one that ends here when it may start with less */
		if (!goes_on || r.excess < -start) {
			r = (struct env_run){ .open = true,
					      .excess = -start,
					      .start = start,
					      .from_ns = w->start_ns };
		}
		r.excess += x;
		r.earned += earn;
		r.bytes += o->pass_bytes[d];
		__int128 end = after_run(rc, l, i, pod) + (__int128)2 * w->max_frame * SCALE;
		if (r.excess > end) {
			t->disagree++;
			say_cap_broken(rc, tap, pod, d, &r, w->start_ns + w->count * w->len_ns,
				       (uint64_t)((r.start + r.earned + end) / SCALE));
			r.open = false; /* start again after the window that broke it */
		}
	}
}
