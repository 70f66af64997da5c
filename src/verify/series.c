/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Each pod's windows over time, downsampled as the log streams
 * (verify/series.h), for the HTML report's plots and the indicators: a
 * unit of the verifier like a check, kept only when asked for, that
 * fails nothing.
 */
#include <stdlib.h>
#include <string.h>

#include "verify.h"

#include "envelope.h"
#include "series.h"
#include "verify_impl.h"

/* Bit-ns in a byte, as the envelope counts. */
#define BYTE ((i128)8 * NS)

int
pc_verify_keep_series(struct pc_verify *v, uint64_t model_bytes)
{
	struct pcv_series *s = pcv_state(v, PCV_SERIES);

	s->kept = true;
	s->model_bytes = model_bytes;
	return 0;
}

uint64_t
pcv_model_bytes(const struct pc_verify *v)
{
	const struct pcv_series *s = pcv_state(v, PCV_SERIES);

	return s->kept ? s->model_bytes : 0;
}

static void
series_free(void *st)
{
	struct pcv_series *s = st;

	for (uint32_t i = 0; i < s->ntracks; i++)
		free(s->tracks[i]);
	free(s->tracks);
}

const struct pcv_track *
pcv_series_track(const struct pc_verify *v, uint32_t pod, int d)
{
	const struct pcv_series *s = pcv_state(v, PCV_SERIES);
	uint64_t i = (uint64_t)pod * PC_DIR_COUNT + (uint64_t)d;

	if (!s->kept || i >= s->ntracks)
		return NULL;
	return s->tracks[i];
}

/* The track of pod, d; created (and the list grown) when new. NULL when out of memory. */
static struct pcv_track *
track(struct pcv_series *s, uint32_t pod, int d)
{
	uint64_t i = (uint64_t)pod * PC_DIR_COUNT + (uint64_t)d;

	if (i >= s->ntracks) {
		uint32_t n = s->ntracks ? s->ntracks : 16;
		while (n <= i)
			n *= 2;
		struct pcv_track **t = realloc(s->tracks, n * sizeof(*t));
		if (t == NULL)
			return NULL;
		memset(t + s->ntracks, 0, (n - s->ntracks) * sizeof(*t));
		s->tracks = t;
		s->ntracks = n;
	}
	if (s->tracks[i] == NULL && (s->tracks[i] = calloc(1, sizeof(struct pcv_track))) != NULL)
		s->tracks[i]->width = 1;
	return s->tracks[i];
}

/* b's records join a's: the worst of each, the span of both. */
static void
merge(struct pcv_point *a, const struct pcv_point *b)
{
	if (b->peak_bytes > a->peak_bytes) {
		a->peak_bytes = b->peak_bytes;
		a->peak_t = b->peak_t;
	}
	if (b->cap_bytes > a->cap_bytes)
		a->cap_bytes = b->cap_bytes;
	if (b->headroom < a->headroom)
		a->headroom = b->headroom;
	for (int k = 0; k < PC_POD_DROP_COUNT; k++)
		if (b->drop_frames[k] > a->drop_frames[k])
			a->drop_frames[k] = b->drop_frames[k];
	a->t1 = b->t1;
	a->records += b->records;
}

/* Full: every two neighbours become one, and a point covers twice as many records. */
static void
halve(struct pcv_track *t)
{
	for (uint32_t i = 0; i < t->n / 2; i++) {
		t->pt[i] = t->pt[2 * i];
		merge(&t->pt[i], &t->pt[2 * i + 1]);
	}
	if (t->n % 2)
		t->pt[t->n / 2] = t->pt[t->n - 1];
	t->n = (t->n + 1) / 2;
	t->width *= 2;
}

static void
add_point(struct pcv_track *t, const struct pcv_point *p)
{
	if (t->n > 0 && t->pt[t->n - 1].records < t->width) {
		merge(&t->pt[t->n - 1], p);
		return;
	}
	if (t->n == PCV_SERIES_POINTS)
		halve(t);
	if (t->n > 0 && t->pt[t->n - 1].records < t->width)
		merge(&t->pt[t->n - 1], p);
	else
		t->pt[t->n++] = *p;
}

/* The indicators' running figures: records at >= 90% of the cap and the runs of them. */
static void
count_hot(struct pcv_track *t, const struct pc_record *r, uint64_t dur, u128 scaled,
	  u128 cap_window)
{
	bool hot = cap_window > 0 && cap_window < ((u128)1 << 120) && scaled * 10 >= cap_window * 9;

	if (!hot) {
		t->run = 0;
		return;
	}
	t->hot++;
	if (t->run++ == 0)
		t->run_start_ns = r->window_start_ns;
	if (t->run > t->longest_run) {
		t->longest_run = t->run;
		t->longest_run_start_ns = t->run_start_ns;
		t->longest_run_end_ns = r->window_start_ns + dur;
	}
}

/* A pod's window, after the envelope took it: the envelope's level is its headroom now. */
static void
series_pod(struct pc_verify *v, void *st, void *podst, uint64_t index, const struct pc_record *r,
	   const struct pc_record_pod *p, uint32_t pod, int d)
{
	struct pcv_series *s = st;

	(void)podst, (void)index;
	if (!s->kept)
		return;
	struct pcv_track *t = track(s, pod, d);
	double level = (double)pcv_envelope_level(v, pod, d);
	const struct pc_pod_ctr *c = &p->dir[d];
	uint64_t dur = r->window_len_ns * r->window_count;
	u128 cap_window = (u128)p->cap_bps * dur, scaled = (u128)BYTE * c->pass_bytes;
	u128 cap_bytes = cap_window / (u128)BYTE;
	/* after the step the level is the bound at the window's start + what it earned - bytes */
	double most = level + (double)scaled;
	struct pcv_point pt = {
		.t0 = r->window_start_ns,
		.t1 = r->window_start_ns + dur,
		.records = 1,
		.peak_bytes = c->pass_bytes,
		.peak_t = r->window_start_ns,
		.cap_bytes = cap_bytes > UINT64_MAX ? UINT64_MAX : (uint64_t)cap_bytes,
		.headroom = most > 0 ? level / most : 0,
	};

	if (t == NULL)
		return; /* out of memory: the plot lacks this pod; the checks are unaffected */
	for (int k = 0; k < PC_POD_DROP_COUNT; k++)
		pt.drop_frames[k] = c->drop_frames[k];
	add_point(t, &pt);

	t->records++;
	t->logged_ns += dur;
	t->window_ns = r->window_len_ns;
	if (p->cap_bps > t->max_cap_bps)
		t->max_cap_bps = p->cap_bps;
	if (p->burst_bytes > t->max_burst_bytes)
		t->max_burst_bytes = p->burst_bytes;
	if (dur > 0 && scaled / dur > t->peak_bps)
		t->peak_bps = scaled / dur > UINT64_MAX ? UINT64_MAX : (uint64_t)(scaled / dur);
	count_hot(t, r, dur, scaled, cap_window);
	t->recent[t->nrecent++ % PCV_RECENT] =
	    cap_window > 0 ? (float)((double)scaled / (double)cap_window) : 0.0f;
}

/* ---- the reports: the indicators (verify/indicators_report.c) and the plots (verify/plots.c) ---- */

static void
series_text(const struct pc_verify *v, const void *st, FILE *f)
{
	if (((const struct pcv_series *)st)->kept)
		pcv_text_indicators(v, f);
}

static void
series_json(const struct pc_verify *v, const void *st, FILE *f)
{
	if (((const struct pcv_series *)st)->kept)
		pcv_json_indicators(v, f);
}

static void
series_html(const struct pc_verify *v, const void *st, FILE *f)
{
	(void)st;
	pcv_html_indicators(v, f);
	pcv_html_plots(v, f);
}

const struct pcv_check pcv_series_check = {
	.name = "series",
	.size = sizeof(struct pcv_series),
	.free = series_free,
	.pod = series_pod,
	.report[PCV_TEXT] = series_text,
	.report[PCV_JSON] = series_json,
	.report[PCV_HTML] = series_html,
};
