/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What the HTML report plots and the indicators read: per pod and
 * direction, the windows of the log over time. Internal to src/verify.
 *
 * A long log is downsampled as it streams: a series holds at most
 * PCV_SERIES_POINTS points, and when it is full every two neighbours merge
 * into one, so a point covers 1, 2, 4, ... records. A point keeps the
 * worst of what it covers (the most bytes, the least envelope headroom, the
 * most drops of one record), never an average, so a single burst stays
 * visible however long the log. The indicators' periodicity needs the
 * series at full resolution: the last PCV_RECENT records are kept as they
 * were, in a ring.
 */
#ifndef PODCAP_VERIFY_SERIES_H
#define PODCAP_VERIFY_SERIES_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "shape/classify.h"
#include "shape/counters.h"
#include "log/record.h"

#define PCV_SERIES_POINTS 512
#define PCV_RECENT        2048

struct pcv_point {
	uint64_t t0, t1; /* start of its first record's window, end of its last's */
	uint64_t records;
	uint64_t peak_bytes; /* most bytes passed in one record */
	uint64_t peak_t;     /* that record's window start */
	uint64_t cap_bytes;  /* most the cap lets through in one of its records */
	/*
	 * Least envelope headroom after one of its records: what that window
	 * could still have passed without breaking the envelope, over what it
	 * could have passed at most (the bound at its start plus what it
	 * earned); 1 when it passed nothing, 0 at the envelope, below 0 over it.
	 */
	double headroom;
	uint64_t drop_frames[PC_POD_DROP_COUNT]; /* most dropped in one record, per reason */
};

/* One pod, one direction. */
struct pcv_track {
	struct pcv_point pt[PCV_SERIES_POINTS];
	uint32_t n;
	uint64_t width; /* records a full point covers: a power of two */

	/* for the indicators, over every record */
	uint64_t records;
	uint64_t logged_ns;        /* window time the records cover */
	uint64_t hot;              /* records at >= 90% of the cap */
	uint64_t run, longest_run; /* consecutive hot records: now, and the longest */
	uint64_t longest_run_start_ns, longest_run_end_ns;
	uint64_t run_start_ns;
	uint64_t max_cap_bps, max_burst_bytes;
	uint64_t peak_bps;  /* the highest rate of one record */
	uint64_t window_ns; /* the window length of the last record */

	/* the last PCV_RECENT records: bytes over what the cap allowed, in the order logged */
	float recent[PCV_RECENT];
	uint64_t nrecent; /* all of them; recent[i % PCV_RECENT] */
};

/* The series' state (verify/series.c): nothing is kept until pc_verify_keep_series. */
struct pcv_series {
	bool kept;
	uint64_t model_bytes; /* --model-size, 0 when not given */
	struct pcv_track *
	    *tracks; /* [pod index * PC_DIR_COUNT + dir], NULL until it has a window */
	uint32_t ntracks;
};

struct pc_verify;

/* The track of pod i, direction d, or NULL. */
const struct pcv_track *pcv_series_track(const struct pc_verify *v, uint32_t pod, int d);

/* ---- the indicators (verify/indicators.c, verify/indicators_report.c) ---- */

#include "indicators.h"

struct pcv_dir_ind {
	uint64_t records, hot, longest_run; /* records at >= 90% of the cap, the longest run */
	uint64_t run_start_ns, run_end_ns;
	uint64_t window_ns, logged_ns;
	uint64_t cap_bps, burst_bytes; /* the highest in force */
	uint64_t peak_bps;
	double mean_bps;              /* over the time its windows cover */
	struct pc_periodicity period; /* over the last PCV_RECENT records */
};

struct pcv_pod_ind {
	const char *id;
	struct pcv_dir_ind dir[PC_DIR_COUNT];
	double symmetry; /* pc_symmetry of the bytes up and down */
	/* the exfiltration bound, up (pod -> fabric) */
	unsigned __int128 passed_up; /* counted in the windows, verified */
	uint64_t unaccounted_ns;     /* time no window covers */
	uint64_t stretches;          /* gaps, restarts and clock steps: each may start full */
	unsigned __int128 unlogged;  /* cap x unaccounted + a burst per stretch */
	unsigned __int128 bound;     /* passed_up + unlogged */
	bool bounded;                /* false when the unaccounted time saturated */
};

/* The indicators of pod index `pod`, from its series (kept) and totals. */
void pcv_indicators(const struct pc_verify *v, uint32_t pod, struct pcv_pod_ind *ind);
/* Seconds to move `bytes` at `bps`; negative when bps is 0. */
double pcv_transfer_s(uint64_t bytes, double bps);
/* The model size the report states transfer times for (0: none), set with the series. */
uint64_t pcv_model_bytes(const struct pc_verify *v);
/* The indicators section of each report (after pc_verify_finish, series kept). */
void pcv_text_indicators(const struct pc_verify *v, FILE *f);
void pcv_json_indicators(const struct pc_verify *v, FILE *f);
void pcv_html_indicators(const struct pc_verify *v, FILE *f);
/* The HTML page's plots of each pod over time (verify/plots.c). */
void pcv_html_plots(const struct pc_verify *v, FILE *f);
/* The number forms of the indicators, in every report: "0.125", "3600.0" or "null", "1000000000". */
void pcv_format_ratio(double x, char *buf, size_t len);
void pcv_format_seconds(double s, char *buf, size_t len);
void pcv_format_bps(double bps, char *buf, size_t len);

#endif /* PODCAP_VERIFY_SERIES_H */
