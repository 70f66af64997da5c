/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The clock evidence (docs/verify.md, check 15): each WINDOW of a run
 * whose pod map declares appliance.clock, or that has carried readings,
 * is answered by a SYNC of the same windows before the next record that
 * moves the log; each SYNC's readings must bound the appliance's offset
 * from its grandmaster, the whole window, within the clock offset D the
 * verifier accepts (--max-clock-offset; by default the taps' offset).
 * A window with no bound, not locked throughout, or over D is refused,
 * named with its offset and bound. Its readings are the appliance's own
 * discipline's word, signed: see docs/threat-model.md for what they are
 * not.
 */
#include <inttypes.h>
#include <string.h>

#include "base/clock.h"
#include "verify.h"

#include "clock.h"
#include "format.h"
#include "podmap.h"
#include "print.h"
#include "verify_impl.h"

struct clock_check {
	/* the last WINDOW, and whether its SYNC is awaited (-1: none) */
	int64_t window_for;
	uint64_t window_start_ns, window_count;
	bool awaited;  /* the run declares readings and this window has none yet */
	bool run_read; /* a SYNC was seen since the run's START */
	struct pcv_clock_summary sum;
};

static int
clock_init(struct pc_verify *v, void *st)
{
	struct clock_check *k = st;

	(void)v;
	k->window_for = -1;
	return 0;
}

/* The map in force declares appliance.clock. */
static bool
map_declares(const struct pc_verify *v)
{
	const struct pc_config *m = pcv_podmap_inforce(v);

	return m != NULL && m->clock.enabled;
}

/* ns of a TimeInterval's magnitude (2^-16 ns), rounded up; the record has no -2^63. */
static uint64_t
interval_ns(int64_t ti)
{
	uint64_t m = ti < 0 ? (uint64_t)-ti : (uint64_t)ti;

	return (m >> 16) + ((m & 0xffff) != 0);
}

static void
missing(struct pc_verify *v, struct clock_check *k)
{
	char t[PC_UTC_LEN];

	pc_utc_format(k->window_start_ns, t, sizeof(t));
	pcv_fail(v, PC_VC_CLOCK, k->window_for, NULL,
		 "window from %s (record %" PRId64 ") has no sync record: no reading of the "
		 "appliance's clock, where %s",
		 t, k->window_for,
		 map_declares(v) ? "its pod map declares appliance.clock"
				 : "the run's earlier windows carried readings");
	k->awaited = false;
}

/* Every record: one that moves the log past an awaited window leaves it without a reading. */
static void
clock_record(struct pc_verify *v, void *st, uint64_t index, const struct pc_record *r)
{
	struct clock_check *k = st;

	(void)index;
	if (!k->awaited || r->type == PC_REC_OBSERVE || r->type == PC_REC_ATTEST ||
	    r->type == PC_REC_SYNC)
		return;
	missing(v, k);
}

static void
clock_start(struct pc_verify *v, void *st, uint64_t index, const struct pc_record *r)
{
	struct clock_check *k = st;

	(void)v, (void)index, (void)r;
	k->run_read = false;
	k->window_for = -1;
}

static void
clock_window(struct pc_verify *v, void *st, uint64_t index, const struct pc_record *r)
{
	struct clock_check *k = st;

	k->window_for = (int64_t)index;
	k->window_start_ns = r->window_start_ns;
	k->window_count = r->window_count;
	k->awaited = k->run_read || map_declares(v);
}

/* What a SYNC's readings say of its windows, against D. */
static void
judge(struct pc_verify *v, uint64_t index, const struct pc_record *r)
{
	const struct pc_record_sync *s = &r->sync;
	uint64_t d = v->policy.max_clock_offset_ns, off = interval_ns(s->offset);
	char dd[DURATION_LEN];

	pcv_format_duration(d, dd, sizeof(dd));
	if (s->bounded == 0)
		pcv_fail(v, PC_VC_CLOCK, (int64_t)index, r,
			 "no reading bounds the clock's offset in these windows (%" PRIu32
			 " polls, %" PRIu32 " readings, none with a bound): the clock offset "
			 "of %s the verifier accepts is not shown",
			 s->polls, s->readings, dd);
	else if ((s->flags & PC_SYNC_LOCKED) == 0)
		pcv_fail(v, PC_VC_CLOCK, (int64_t)index, r,
			 "the clock discipline was not locked throughout: %" PRIu32 " of %" PRIu32
			 " polls bounded the offset (offset %" PRIu64 " ns, bound %" PRIu64 " ns)",
			 s->bounded, s->polls, off, s->bound_ns);
	else if (s->bound_ns > d || off > d)
		pcv_fail(v, PC_VC_CLOCK, (int64_t)index, r,
			 "clock offset %" PRIu64 " ns, bound %" PRIu64 " ns: over the %s the "
			 "verifier accepts (--max-clock-offset)",
			 off, s->bound_ns, dd);
}

static void
summarise(struct pcv_clock_summary *m, const struct pc_record *r)
{
	const struct pc_record_sync *s = &r->sync;
	uint64_t off = interval_ns(s->offset);

	m->windows += r->window_count;
	if ((s->flags & PC_SYNC_LOCKED) != 0)
		m->locked += r->window_count;
	if (s->readings > 0 && (m->nread == 0 || off > m->max_offset_ns)) {
		m->max_offset_ns = off;
		m->max_offset_at_ns = r->window_start_ns;
	}
	if (s->bound_ns > m->max_bound_ns)
		m->max_bound_ns = s->bound_ns;
	if (s->readings > 0)
		m->nread++;
	if ((s->flags & PC_SYNC_GM) != 0) {
		if (m->have_gm && memcmp(m->gm, s->gm, 8) != 0)
			m->gm_changes++;
		memcpy(m->gm, s->gm, 8);
		m->have_gm = true;
	}
}

static void
clock_sync(struct pc_verify *v, void *st, uint64_t index, const struct pc_record *r)
{
	struct clock_check *k = st;
	char t[PC_UTC_LEN];

	if (k->window_for < 0 || r->window_start_ns != k->window_start_ns ||
	    r->window_count != k->window_count) {
		pc_utc_format(k->window_start_ns, t, sizeof(t));
		pcv_fail(v, PC_VC_CLOCK, (int64_t)index, r,
			 "sync record of windows other than those of the window record before it");
		return;
	}
	k->window_for = -1;
	k->awaited = false;
	k->run_read = true;
	summarise(&k->sum, r);
	judge(v, index, r);
}

void
pcv_clock_gm_text(const struct pcv_clock_summary *m, char out[PCV_CLOCK_ID_TEXT])
{
	const uint8_t *g = m->gm;

	snprintf(out, PCV_CLOCK_ID_TEXT, "%02x%02x%02x.%02x%02x.%02x%02x%02x", g[0], g[1], g[2],
		 g[3], g[4], g[5], g[6], g[7]);
	if (!m->have_gm)
		snprintf(out, PCV_CLOCK_ID_TEXT, "none");
}

const struct pcv_clock_summary *
pcv_clock_summary(const struct pc_verify *v)
{
	const struct clock_check *k = pcv_state(v, PCV_CLOCK);

	return &k->sum;
}

bool
pcv_clock_reported(const struct pc_verify *v)
{
	return pcv_clock_summary(v)->windows > 0 || v->found.failsum[PC_VC_CLOCK].count > 0;
}

static void
clock_text(const struct pc_verify *v, const void *st, FILE *f)
{
	const struct pcv_clock_summary *m = &((const struct clock_check *)st)->sum;
	char t[PC_UTC_LEN], d[DURATION_LEN], gm[PCV_CLOCK_ID_TEXT];

	if (m->windows == 0)
		return;
	pcv_format_duration(v->policy.max_clock_offset_ns, d, sizeof(d));
	fprintf(f,
		"clock: %" PRIu64 " windows with readings (%" PRIu64 " locked throughout), "
		"against a clock offset of %s\n",
		m->windows, m->locked, d);
	if (m->nread == 0)
		return;
	pc_utc_format(m->max_offset_at_ns, t, sizeof(t));
	pcv_clock_gm_text(m, gm);
	fprintf(f,
		"  worst offset %" PRIu64 " ns (window %s), worst bound %" PRIu64
		" ns; grandmaster %s%s\n",
		m->max_offset_ns, t, m->max_bound_ns, gm,
		m->gm_changes > 0 ? " (the latest; it changed)" : "");
}

static void
clock_json(const struct pc_verify *v, const void *st, FILE *f)
{
	const struct pcv_clock_summary *m = &((const struct clock_check *)st)->sum;
	char gm[PCV_CLOCK_ID_TEXT];

	if (m->windows == 0)
		return;
	pcv_clock_gm_text(m, gm);
	fprintf(f,
		"  \"clock\": {\"windows\": %" PRIu64 ", \"locked_windows\": %" PRIu64
		", \"max_clock_offset_ns\": %" PRIu64 ", \"max_offset_ns\": ",
		m->windows, m->locked, v->policy.max_clock_offset_ns);
	if (m->nread > 0)
		fprintf(f, "%" PRIu64 ", \"max_offset_window\": ", m->max_offset_ns),
		    pcv_json_time(f, m->max_offset_at_ns);
	else
		fputs("null, \"max_offset_window\": null", f);
	fprintf(f, ", \"max_bound_ns\": %" PRIu64 ", \"grandmaster\": ", m->max_bound_ns);
	if (m->have_gm)
		fprintf(f, "\"%s\"", gm);
	else
		fputs("null", f);
	fprintf(f, ", \"grandmaster_changes\": %" PRIu64 "},\n", m->gm_changes);
}

const struct pcv_check pcv_clock_check = {
	.name = "clock",
	.size = sizeof(struct clock_check),
	.init = clock_init,
	.record = clock_record,
	.on[PC_REC_START] = clock_start,
	.on[PC_REC_WINDOW] = clock_window,
	.on[PC_REC_SYNC] = clock_sync,
	.report[PCV_TEXT] = clock_text,
	.report[PCV_JSON] = clock_json,
};
