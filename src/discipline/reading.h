/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What one poll of the appliance's clock discipline reads, whatever the
 * discipline, how a poll ended, and the bound on this clock's offset from
 * the grandmaster that a reading supports (docs/monitoring.md, "The clock
 * discipline"). Pure.
 */
#ifndef PODCAP_CLOCK_READING_H
#define PODCAP_CLOCK_READING_H

#include <stdbool.h>
#include <stdint.h>

#define PC_CLOCK_MAX_PORTS 16 /* ports of the PTP clock read; a clock of more is refused */

/* How a poll ended; the label of podcap_clock_polls_total{result}. */
enum pc_clock_result {
	PC_CLOCK_OK,        /* every answer came and decoded */
	PC_CLOCK_DOWN,      /* no discipline behind the socket: missing, refused, gone */
	PC_CLOCK_TIMEOUT,   /* it did not answer (or read) in time */
	PC_CLOCK_MALFORMED, /* an answer did not decode, or did not answer what was asked */
	PC_CLOCK_REFUSED,   /* it answered with an error status */
	PC_CLOCK_ERROR,     /* podcap's own side failed (its socket) */
	PC_CLOCK_RESULTS
};

struct pc_clock_reading {
	uint64_t read_ns;      /* CLOCK_REALTIME when the poll ended */
	uint64_t read_mono_ns; /* CLOCK_MONOTONIC then */
	/* CURRENT_DATA_SET: TimeIntervals, ns × 2^16, this clock minus its master */
	int64_t offset;
	int64_t path_delay; /* meanPathDelay */
	uint16_t steps_removed;
	int64_t ingress_ns; /* when the last Sync arrived, on this clock; 0: none yet */
	uint8_t clock[8];   /* this clock's identity */
	uint8_t gm[8];      /* the grandmaster's (PARENT_DATA_SET) */
	bool gm_present;    /* another clock is the grandmaster, TIME_STATUS_NP agreeing */
	uint16_t nports;
	uint8_t port_states[PC_CLOCK_MAX_PORTS]; /* of port 1..nports */
	uint16_t port;                           /* the port whose state port_state is */
	uint8_t port_state;
	bool bounded; /* bound_ns holds: see pc_clock_bound */
	uint64_t bound_ns;
};

/*
 * Picks the port that follows a master (SLAVE, else UNCALIBRATED), else
 * port 1, into r->port and r->port_state; then sets r->bounded and
 * r->bound_ns by the rule:
 *
 *   bound = |offsetFromMaster| + |meanPathDelay|, in whole ns rounded up,
 *
 * only when a grandmaster other than this clock is present, the port
 * follows a master (SLAVE or UNCALIBRATED), stepsRemoved is at least 1,
 * a Sync has been received and a path delay measured (ptp4l computes no
 * offset before it has one: its 0 then is no measurement). The two-way
 * exchange measures
 * offset + (d_ms - d_sm) / 2 with a mean path delay (d_ms + d_sm) / 2, so
 * with both one-way delays non-negative the true offset from the master
 * is within the mean path delay of the measured one, whatever the
 * asymmetry; a negative mean path delay (timestamps out of order) counts
 * by its magnitude. The bound holds at the measurement (ingress_ns), not
 * for the drift since.
 */
void pc_clock_bound(struct pc_clock_reading *r);

/* |v| without overflow: INT64_MIN's is 2^63. */
static inline uint64_t
pc_clock_magnitude(int64_t v)
{
	return v < 0 ? (uint64_t)(-(v + 1)) + 1 : (uint64_t)v;
}

const char *pc_clock_result_name(enum pc_clock_result res);

#endif /* PODCAP_CLOCK_READING_H */
