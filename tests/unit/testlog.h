/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Long signed logs of one pod whose bytes per window are functions of the
 * window, made record by record as they are fed, for the tests of the
 * series, the indicators and the HTML report.
 */
#ifndef PODCAP_TESTLOG_H
#define PODCAP_TESTLOG_H

#include <stdint.h>

#include "verify/verify.h"

#define PCT_APP        "t-app"
#define PCT_ORIGIN     "podcap/" PCT_APP
#define PCT_T0         (1704067200ULL * 1000000000ULL)
#define PCT_WIN        (60ULL * 1000000000ULL)
#define PCT_CAP        1000000000ULL      /* 1 Gbit/s */
#define PCT_CAP_WINDOW (PCT_CAP / 8 * 60) /* what the cap lets through in a window */
#define PCT_BURST      100000000ULL

/*
 * START, then `windows` WINDOW records of pod-a, window w passing up(w) and
 * down(w) bytes, and, when gap_at > 0, a GAP of gap_windows windows before
 * window gap_at.
 */
struct pct_log {
	uint64_t windows;
	uint64_t (*up)(uint64_t w);
	uint64_t (*down)(uint64_t w);
	uint64_t gap_at, gap_windows;
};

/* Group fixtures: a key for the logs. */
int pct_setup(void **state);
int pct_teardown(void **state);
/* lg verified with its series kept (model_bytes for the transfer times, or 0), finished. */
struct pc_verify *pct_verify(const struct pct_log *lg, uint64_t model_bytes);
/* A report of v in memory (malloc'ed, NUL-terminated): its HTML page, or its JSON. */
char *pct_html(const struct pc_verify *v);
char *pct_json(const struct pc_verify *v);

#endif /* PODCAP_TESTLOG_H */
