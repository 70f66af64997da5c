/* SPDX-License-Identifier: BSD-3-Clause */
/* The clock evidence (verify/clock.c), as the reports and the taps' reconciliation read it. */
#ifndef PODCAP_VERIFY_CLOCK_H
#define PODCAP_VERIFY_CLOCK_H

#include <stdbool.h>
#include <stdint.h>

struct pc_verify;

#define PCV_CLOCK_ID_TEXT 19 /* a clockIdentity as linuxptp prints it, and its NUL */

/* What a log's SYNC records came to. */
struct pcv_clock_summary {
	uint64_t windows;          /* windows a SYNC answered */
	uint64_t locked;           /* of them, those locked throughout */
	uint64_t nread;            /* SYNC records with a reading */
	uint64_t max_offset_ns;    /* the largest |offset| read, ns rounded up */
	uint64_t max_offset_at_ns; /* the first window of the SYNC that read it */
	uint64_t max_bound_ns;     /* the largest bound */
	bool have_gm;
	uint8_t gm[8];       /* the newest grandmaster */
	uint64_t gm_changes; /* times it was another than the one before */
};

const struct pcv_clock_summary *pcv_clock_summary(const struct pc_verify *v);
/* Whether the log's readings are a part of the reports: it has some, or lacks some it owes. */
bool pcv_clock_reported(const struct pc_verify *v);
/* The grandmaster as linuxptp prints it, "none" without one. */
void pcv_clock_gm_text(const struct pcv_clock_summary *m, char out[PCV_CLOCK_ID_TEXT]);

#endif /* PODCAP_VERIFY_CLOCK_H */
