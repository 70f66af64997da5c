/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What the three reports share (verify/report.c): the last line. No check
 * includes this: a check's part of a report is its own (check.h, report).
 */
#ifndef PODCAP_VERIFY_REPORT_H
#define PODCAP_VERIFY_REPORT_H

#include <stddef.h>

struct pc_verify;

/* The last line of every report: "verified: ..." or "FAILED: ...". */
void pcv_result_line(const struct pc_verify *v, char *buf, size_t len);

#endif /* PODCAP_VERIFY_REPORT_H */
