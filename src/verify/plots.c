/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The HTML page's plots (docs/report.md): per pod and direction, an SVG of
 * its windows over time from the series (verify/series.c), on one time
 * axis with the log's events: the bytes of each window against the cap,
 * the envelope's headroom and the drops, each point the worst of its
 * records.
 */
#include <inttypes.h>
#include <stdint.h>

#include "shape/classify.h"
#include "shape/counters.h"
#include "verify.h"

#include "print.h"
#include "series.h"
#include "verify_impl.h"

#define PW      960.0 /* width of the drawing */
#define PL      70.0  /* left margin, for the axis labels */
#define PR      10.0
#define H_EV    16.0 /* the events strip */
#define H_BYTES 150.0
#define H_HEAD  60.0
#define H_DROP  50.0
#define GAP     16.0

struct axis {
	uint64_t t0, t1;
};

static double
xt(const struct axis *a, uint64_t t)
{
	double span = a->t1 > a->t0 ? (double)(a->t1 - a->t0) : 1;

	return PL + (t < a->t0 ? 0 : (double)(t - a->t0)) / span * (PW - PL - PR);
}

/* The time every plot shares: the first window any pod has to the last one's end. */
static bool
time_axis(const struct pc_verify *v, struct axis *a)
{
	bool any = false;

	a->t0 = UINT64_MAX;
	a->t1 = 0;
	for (uint32_t i = 0; i < v->npods; i++)
		for (int d = 0; d < PC_DIR_COUNT; d++) {
			const struct pcv_track *t = pcv_series_track(v, i, d);

			if (t == NULL || t->n == 0)
				continue;
			any = true;
			if (t->pt[0].t0 < a->t0)
				a->t0 = t->pt[0].t0;
			if (t->pt[t->n - 1].t1 > a->t1)
				a->t1 = t->pt[t->n - 1].t1;
		}
	return any;
}

static const char *const event_colour[PC_VE_COUNT] = {
	[PC_VE_START] = "#1a7f37", [PC_VE_RESTART] = "#0a58ca", [PC_VE_STOP] = "#555",
	[PC_VE_GAP] = "#c0152f",   [PC_VE_RELOAD] = "#6f42c1",  [PC_VE_CLOCK] = "#d97706",
};

/* Each kept event as a line across the panels, from y0 to y1, named in its tooltip. */
static void
plot_events(const struct pc_verify *v, FILE *f, const struct axis *a, double y0, double y1)
{
	uint64_t n = pcv_kept(v->found.nevents);

	for (uint64_t i = 0; i < n; i++) {
		const struct pc_verify_event *e = &v->found.events[i];
		double x = xt(a, e->window_start_ns), w = 1;

		if (e->window_start_ns < a->t0 || e->window_start_ns > a->t1)
			continue;
		if (e->kind == PC_VE_GAP)
			w = xt(a, e->window_start_ns + e->windows * e->window_len_ns) - x;
		fprintf(
		    f,
		    "<rect class=\"ev ev-%s\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" "
		    "height=\"%.1f\" fill=\"%s\" fill-opacity=\"%s\"><title>record %" PRIu64 " %s ",
		    pcv_event_name(e->kind), x, y0, w < 1 ? 1 : w, y1 - y0, event_colour[e->kind],
		    e->kind == PC_VE_GAP ? "0.25" : "0.8", e->record, pcv_event_name(e->kind));
		pcv_html_time(f, e->window_start_ns);
		fputs("</title></rect>\n", f);
	}
	fprintf(f, "<text x=\"2\" y=\"%.1f\">events</text>\n", y0 + 11);
}

static void
axis_label(FILE *f, double y, uint64_t bytes)
{
	fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">", PL - 4, y + 3);
	pcv_html_size(f, bytes);
	fputs("</text>\n", f);
}

/* A step line is broken where the log is: across gaps and time down. */
static char
move_or_line(const struct pcv_track *t, uint32_t i)
{
	return i == 0 || t->pt[i].t0 != t->pt[i - 1].t1 ? 'M' : 'L';
}

/* Bytes per window, the peak of each point, against what the cap allows in a window. */
static void
plot_bytes(FILE *f, const struct pcv_track *t, const struct axis *a, double top)
{
	uint64_t most = 1;
	double base = top + H_BYTES;

	for (uint32_t i = 0; i < t->n; i++) {
		if (t->pt[i].peak_bytes > most)
			most = t->pt[i].peak_bytes;
		if (t->pt[i].cap_bytes > most)
			most = t->pt[i].cap_bytes;
	}
	most += most / 20;
#define YB(b) (base - (double)(b) / (double)most * H_BYTES)
	fprintf(f,
		"<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"none\" "
		"stroke=\"#ccc\"/>\n",
		PL, top, PW - PL - PR, H_BYTES);
	fputs("<path class=\"bytes\" fill=\"#3b82f6\" d=\"", f);
	for (uint32_t i = 0; i < t->n; i++) {
		double x0 = xt(a, t->pt[i].t0), x1 = xt(a, t->pt[i].t1);

		if (x1 - x0 < 0.5)
			x1 = x0 + 0.5;
		fprintf(f, "M%.1f %.1fV%.1fH%.1fV%.1fZ", x0, base, YB(t->pt[i].peak_bytes), x1,
			base);
	}
	fputs(
	    "\"/>\n<path class=\"cap\" fill=\"none\" stroke=\"#c0152f\" stroke-width=\"1.5\" d=\"",
	    f);
	for (uint32_t i = 0; i < t->n; i++)
		fprintf(f, "%c%.1f %.1fH%.1f", move_or_line(t, i), xt(a, t->pt[i].t0),
			YB(t->pt[i].cap_bytes), xt(a, t->pt[i].t1));
	fputs("\"/>\n<path class=\"near-cap\" fill=\"none\" stroke=\"#c0152f\" "
	      "stroke-dasharray=\"3 3\" d=\"",
	      f);
	for (uint32_t i = 0; i < t->n; i++)
		fprintf(f, "%c%.1f %.1fH%.1f", move_or_line(t, i), xt(a, t->pt[i].t0),
			YB(t->pt[i].cap_bytes / 10 * 9), xt(a, t->pt[i].t1));
	fputs("\"/>\n", f);
	axis_label(f, top, most);
	axis_label(f, base, 0);
	fprintf(f,
		"<text x=\"%.1f\" y=\"%.1f\">bytes per window (peak of each of %" PRIu32
		" points, %" PRIu64 " record%s each); red: the cap, dashed: 90%%</text>\n",
		PL + 4, top + 11, t->n, t->width, t->width == 1 ? "" : "s");
#undef YB
}

/* The envelope's headroom after each window, the least of each point, in % of what it allowed. */
static void
plot_headroom(FILE *f, const struct pcv_track *t, const struct axis *a, double top)
{
	double lo = 0, base = top + H_HEAD;

	for (uint32_t i = 0; i < t->n; i++)
		if (100 * t->pt[i].headroom < lo)
			lo = 100 * t->pt[i].headroom < -100 ? -100 : 100 * t->pt[i].headroom;
#define YH(p) (base - ((p)-lo) / (100 - lo) * H_HEAD)
	fprintf(f,
		"<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"none\" "
		"stroke=\"#ccc\"/>\n",
		PL, top, PW - PL - PR, H_HEAD);
	fprintf(f, "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#c0152f\"/>\n",
		PL, PW - PR, YH(0), YH(0));
	fputs("<path class=\"headroom\" fill=\"none\" stroke=\"#1a7f37\" stroke-width=\"1.2\" d=\"",
	      f);
	for (uint32_t i = 0; i < t->n; i++) {
		double pc = 100 * t->pt[i].headroom;

		pc = pc < -100 ? -100 : pc;
		fprintf(f, "%c%.1f %.1fH%.1f", move_or_line(t, i), xt(a, t->pt[i].t0), YH(pc),
			xt(a, t->pt[i].t1));
	}
	fputs("\"/>\n", f);
	fprintf(f,
		"<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">100%%</text>\n<text x=\"%.1f\" "
		"y=\"%.1f\" text-anchor=\"end\">0</text>\n",
		PL - 4, top + 3, PL - 4, YH(0) + 3);
	fprintf(
	    f,
	    "<text x=\"%.1f\" y=\"%.1f\">envelope headroom: what a window could still have "
	    "passed, %% of its most (least of each point; below the red line it broke)</text>\n",
	    PL + 4, top + 11);
#undef YH
}

static const char *const drop_colour[PC_POD_DROP_COUNT] = { "#c0152f", "#d97706", "#6f42c1" };

/* Frames dropped in one window, the most of each point, per reason. */
static void
plot_drops(FILE *f, const struct pcv_track *t, const struct axis *a, double top)
{
	uint64_t most = 1;
	double base = top + H_DROP;

	for (uint32_t i = 0; i < t->n; i++)
		for (int k = 0; k < PC_POD_DROP_COUNT; k++)
			if (t->pt[i].drop_frames[k] > most)
				most = t->pt[i].drop_frames[k];
	fprintf(f,
		"<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"none\" "
		"stroke=\"#ccc\"/>\n",
		PL, top, PW - PL - PR, H_DROP);
	for (int k = 0; k < PC_POD_DROP_COUNT; k++) {
		fprintf(f, "<path class=\"drops drops-%s\" fill=\"none\" stroke=\"%s\" d=\"",
			pc_pod_drop_name((enum pc_pod_drop)k), drop_colour[k % 3]);
		for (uint32_t i = 0; i < t->n; i++)
			fprintf(f, "%c%.1f %.1fH%.1f", move_or_line(t, i), xt(a, t->pt[i].t0),
				base - (double)t->pt[i].drop_frames[k] / (double)most * H_DROP,
				xt(a, t->pt[i].t1));
		fputs("\"/>\n", f);
	}
	fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%" PRIu64 "</text>\n", PL - 4,
		top + 3, most);
	fprintf(f, "<text x=\"%.1f\" y=\"%.1f\">frames dropped per window (most of each point):",
		PL + 4, top + 11);
	for (int k = 0; k < PC_POD_DROP_COUNT; k++)
		fprintf(f, " <tspan fill=\"%s\">%s</tspan>", drop_colour[k % 3],
			pc_pod_drop_name((enum pc_pod_drop)k));
	fputs("</text>\n", f);
}

static void
plot_time_labels(FILE *f, const struct axis *a, double y)
{
	for (int i = 0; i <= 4; i++) {
		uint64_t t = a->t0 + (uint64_t)((double)(a->t1 - a->t0) * i / 4);
		const char *anchor = i == 0 ? "start" : i == 4 ? "end" : "middle";

		fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\">", xt(a, t), y, anchor);
		pcv_html_time(f, t);
		fputs("</text>\n", f);
	}
}

static void
plot_one(const struct pc_verify *v, FILE *f, uint32_t pod, int d, const struct axis *a)
{
	const struct pcv_track *t = pcv_series_track(v, pod, d);
	double y_bytes = H_EV + 4, y_head = y_bytes + H_BYTES + GAP, y_drop = y_head + H_HEAD + GAP;
	double h = y_drop + H_DROP + 18;

	if (t == NULL || t->n == 0)
		return;
	fputs("<h3>", f);
	pc_html_escape(f, v->pods[pod].id);
	fprintf(f,
		" %s</h3>\n<svg class=\"plot\" xmlns=\"http://www.w3.org/2000/svg\" "
		"viewBox=\"0 0 %.0f %.0f\" role=\"img\" data-pod=\"",
		pc_dir_name((enum pc_dir)d), PW, h);
	pc_html_escape(f, v->pods[pod].id);
	fprintf(f, "\" data-dir=\"%s\" data-points=\"%" PRIu32 "\"><title>pod ",
		pc_dir_name((enum pc_dir)d), t->n);
	pc_html_escape(f, v->pods[pod].id);
	fprintf(f, " %s: bytes per window against the cap</title>\n", pc_dir_name((enum pc_dir)d));
	plot_events(v, f, a, 0, y_drop + H_DROP);
	plot_bytes(f, t, a, y_bytes);
	plot_headroom(f, t, a, y_head);
	plot_drops(f, t, a, y_drop);
	plot_time_labels(f, a, h - 4);
	fputs("</svg>\n", f);
}

void
pcv_html_plots(const struct pc_verify *v, FILE *f)
{
	struct axis a;

	fputs("<section id=\"plots\">\n<h2>Each pod over time</h2>\n", f);
	if (!time_axis(v, &a)) {
		fputs("<p>No window to plot.</p>\n</section>\n", f);
		return;
	}
	fputs("<p class=\"note\">One time axis for every plot. Events:", f);
	for (int k = 0; k < PC_VE_COUNT; k++)
		fprintf(f, " <span style=\"color:%s\">&#9632; %s</span>", event_colour[k],
			pcv_event_name((enum pc_verify_event_kind)k));
	fputs(". Long logs are downsampled keeping each point's worst record.</p>\n", f);
	for (uint32_t i = 0; i < v->npods; i++) {
		fputs("<section class=\"pod\" data-pod=\"", f);
		pc_html_escape(f, v->pods[i].id);
		fputs("\">\n", f);
		for (int d = 0; d < PC_DIR_COUNT; d++)
			plot_one(v, f, i, d, &a);
		fputs("</section>\n", f);
	}
	fputs("</section>\n", f);
}
