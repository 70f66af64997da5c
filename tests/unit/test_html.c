/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The HTML report: a long log is downsampled with every point's peak kept
 * (a single burst survives a day of trickle), there is one plot per pod
 * and direction, the verdict comes first, the tables state the JSON's
 * figures, the page fetches nothing and escapes what it prints.
 */
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "verify/verify.h"

#include "verify/series.h"
#include "testlog.h"

#define DAY      1440
#define BURST_AT 977

static uint64_t
trickle_up(uint64_t w)
{
	return w == BURST_AT ? PCT_CAP_WINDOW : 20000 + (w % 13) * 100;
}

static uint64_t
trickle_down(uint64_t w)
{
	return 30000 + (w % 5) * 100;
}

static uint64_t
over_up(uint64_t w)
{
	return w == 40 ? 3 * PCT_CAP_WINDOW : 1000;
}

static size_t
count(const char *hay, const char *needle)
{
	size_t n = 0;

	for (const char *p = strstr(hay, needle); p != NULL; p = strstr(p + 1, needle))
		n++;
	return n;
}

static void
test_peak_survives_downsampling(void **state)
{
	struct pct_log lg = { .windows = DAY * 3, .up = trickle_up, .down = trickle_down };
	uint64_t records = 0, most = 0, at = 0;

	(void)state;
	struct pc_verify *v = pct_verify(&lg, 0);
	const struct pcv_track *t = pcv_series_track(v, 0, PC_DIR_UP);
	assert_non_null(t);
	assert_true(t->n <= PCV_SERIES_POINTS);
	assert_true(t->n > PCV_SERIES_POINTS / 4);
	assert_true(t->width > 1);
	for (uint32_t i = 0; i < t->n; i++) {
		records += t->pt[i].records;
		if (t->pt[i].peak_bytes > most) {
			most = t->pt[i].peak_bytes;
			at = t->pt[i].peak_t;
		}
		if (i > 0)
			assert_true(t->pt[i].t0 == t->pt[i - 1].t1);
	}
	assert_int_equal(records, DAY * 3);
	/* the one burst is the peak, at its own window, not averaged into its neighbours */
	assert_int_equal(most, PCT_CAP_WINDOW);
	assert_int_equal(at, PCT_T0 + BURST_AT * PCT_WIN);
	assert_int_equal(t->pt[0].t0, PCT_T0);
	assert_int_equal(t->pt[t->n - 1].t1, PCT_T0 + DAY * 3 * PCT_WIN);
	pc_verify_free(v);
}

static void
test_page_of_a_verified_log(void **state)
{
	struct pct_log lg = { .windows = DAY,
			      .up = trickle_up,
			      .down = trickle_down,
			      .gap_at = 100,
			      .gap_windows = 3 };
	char want[128];
	uint64_t bytes = 0;

	(void)state;
	struct pc_verify *v = pct_verify(&lg, 0);
	assert_int_equal(pc_verify_nfailures(v), 0);
	char *html = pct_html(v);

	assert_true(strncmp(html, "<!DOCTYPE html>", 15) == 0);
	assert_non_null(strstr(html, "</html>\n"));
	/* one plot per pod and direction */
	assert_int_equal(count(html, "<svg class=\"plot\""), 2);
	assert_int_equal(count(html, "data-pod=\"pod-a\" data-dir=\"up\" data-points="), 1);
	assert_int_equal(count(html, "data-pod=\"pod-a\" data-dir=\"down\" data-points="), 1);
	/* the verdict first, with the result line the text report ends with */
	const char *verdict = strstr(html, "<section id=\"verdict\" class=\"verdict ok\">");
	assert_non_null(verdict);
	assert_true(verdict < strstr(html, "<section id=\"pods\">"));
	assert_non_null(strstr(verdict, "<div class=\"line\" data-k=\"result\">verified: "));
	/* the pod table's bytes are the totals: for people, every digit in the title */
	for (uint64_t w = 0; w < DAY; w++)
		bytes += trickle_up(w);
	assert_int_equal(bytes, 7529642300ULL);
	snprintf(want, sizeof(want),
		 "<td class=\"n\" data-k=\"bytes\" title=\"%" PRIu64 " B\">7.53 GB</td>", bytes);
	const char *up = strstr(html, "<tr class=\"pod-row\" data-pod=\"pod-a\" data-dir=\"up\">");
	assert_non_null(up);
	assert_non_null(strstr(up, want));
	/* the burst filled its window: the peak is all of the cap, as a percentage */
	snprintf(want, sizeof(want),
		 "<td class=\"n\" data-k=\"peak_bytes\" title=\"%" PRIu64 " B\">7.5 GB</td>",
		 (uint64_t)PCT_CAP_WINDOW);
	assert_non_null(strstr(up, want));
	assert_non_null(strstr(
	    up,
	    "<td class=\"n\" data-k=\"peak_permille\" title=\"1000 \xe2\x80\xb0\">100.0 %</td>"));
	assert_non_null(strstr(html, "<th>peak, % of cap</th>"));
	/* the gap's time in the events table: three windows of a minute */
	assert_non_null(strstr(html,
			       "<td class=\"n\" data-k=\"total_ns\" "
			       "title=\"180000000000 ns\">3 min 0 s</td>"));
	/* no figure a person reads as a count of nanoseconds */
	assert_null(strstr(html, "(ns)"));
	/* the plot's axis in bytes for people too */
	assert_non_null(strstr(html, "text-anchor=\"end\">0 B</text>"));
	/* the gap is marked on the time axis, in each plot */
	assert_int_equal(count(html, "class=\"ev ev-gap\""), 2);
	/* nothing to fetch, nothing to run */
	assert_null(strstr(html, "<script"));
	assert_null(strstr(html, "src="));
	assert_null(strstr(html, "href="));
	assert_null(strstr(html, "url("));
	assert_null(strstr(html, "@import"));
	assert_non_null(strstr(html, "Content-Security-Policy\" content=\"default-src 'none'"));
	/* the optional checks' sections only with their options (their report hooks) */
	assert_null(strstr(html, "<section id=\"witnesses\""));
	assert_null(strstr(html, "<section id=\"attestation\""));
	assert_null(strstr(html, "<section id=\"declarations\""));
	assert_null(strstr(html, "<section id=\"taps\""));
	free(html);
	pc_verify_free(v);
}

static void
test_failure_first(void **state)
{
	struct pct_log lg = { .windows = 100, .up = over_up, .down = trickle_down };

	(void)state;
	struct pc_verify *v = pct_verify(&lg, 0);
	assert_true(pc_verify_nfailures(v) > 0);
	char *html = pct_html(v);
	const char *verdict = strstr(html, "<section id=\"verdict\" class=\"verdict failed\">");

	assert_non_null(verdict);
	assert_true(verdict < strstr(html, "<section id=\"pods\">"));
	assert_true(verdict < strstr(html, "<svg"));
	assert_non_null(strstr(verdict, "data-k=\"result\">FAILED: envelope: record 41 "));
	const char *row = strstr(verdict, "<tr class=\"failed\" data-check=\"envelope\">");
	assert_non_null(row);
	/* the other checks held */
	assert_non_null(strstr(verdict, "data-check=\"signature\">&#10003;&nbsp;signature"));
	/* the envelope broke at the burst: the headroom plot goes below its zero line */
	const struct pcv_track *t = pcv_series_track(v, 0, PC_DIR_UP);
	bool below = false;
	for (uint32_t i = 0; i < t->n; i++)
		below |= t->pt[i].headroom < 0;
	assert_true(below);
	free(html);
	pc_verify_free(v);
}

/* What the report prints from a file or a log is escaped, in text and in attributes. */
static void
test_escape(void **state)
{
	char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);

	(void)state;
	assert_non_null(f);
	pc_html_escape(f, "<script>a=\"1\" & b='2'</script>");
	assert_int_equal(fclose(f), 0);
	assert_string_equal(out,
			    "&lt;script&gt;a=&quot;1&quot; &amp; b=&#39;2&#39;&lt;/script&gt;");
	free(out);

	out = NULL;
	f = open_memstream(&out, &len);
	pc_html_begin(f, "<b>&");
	pc_html_end(f);
	assert_int_equal(fclose(f), 0);
	assert_non_null(strstr(out, "<title>&lt;b&gt;&amp;</title>"));
	assert_null(strstr(out, "<b>&"));
	free(out);
}

/* The indicators in the JSON and the page are the same figures. */
static void
test_indicators_in_json_and_page(void **state)
{
	struct pct_log lg = { .windows = 200, .up = trickle_up, .down = trickle_down };

	(void)state;
	struct pc_verify *v = pct_verify(&lg, 70000000000ULL);
	char *json = pct_json(v), *html = pct_html(v);

	assert_non_null(strstr(json,
			       "\"indicators\": {\"model_size_bytes\": 70000000000, "
			       "\"pods_total\": 1, \"pods\": ["));
	assert_non_null(strstr(json, "\"model_transfer_s\": {\"mean_rate\": "));
	/* 70 GB at 1 Gbit/s: 560 s, in both */
	assert_non_null(strstr(json, "\"cap\": 560.0}"));
	assert_non_null(strstr(html,
			       "<td class=\"n\" data-k=\"model_transfer_s.cap\" "
			       "title=\"560.0 s\">9 min 20 s</td>"));
	assert_non_null(strstr(html, "<th>70 GB at mean rate</th>"));
	/* the rates: 21.2 kB in the busiest minute, 4.12 MB in 200 */
	assert_non_null(strstr(html,
			       "<td class=\"n\" data-k=\"peak_bps\" "
			       "title=\"2826 bit/s\">2.83 kbit/s</td>"));
	assert_non_null(strstr(html,
			       "<td class=\"n\" data-k=\"mean_bps\" "
			       "title=\"2745 bit/s\">2.75 kbit/s</td>"));
	assert_non_null(strstr(html, "<h2>Indicators (not findings)</h2>"));
	free(json);
	free(html);
	pc_verify_free(v);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_peak_survives_downsampling),
		cmocka_unit_test(test_page_of_a_verified_log),
		cmocka_unit_test(test_failure_first),
		cmocka_unit_test(test_escape),
		cmocka_unit_test(test_indicators_in_json_and_page),
	};

	return cmocka_run_group_tests(tests, pct_setup, pct_teardown);
}
