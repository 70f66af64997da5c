/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * IEEE 1588-2008 management messages (clause 15), as linuxptp's ptp4l
 * answers them on its management socket (the one `pmc -u` uses): a GET
 * of one management id encoded, and the answer to it decoded strictly.
 *
 * Only the data sets podcap reads are decoded: DEFAULT_DATA_SET,
 * CURRENT_DATA_SET, PARENT_DATA_SET, PORT_DATA_SET and linuxptp's
 * TIME_STATUS_NP; and MANAGEMENT_ERROR_STATUS, ptp4l's refusal. An answer
 * is one datagram holding exactly one management TLV: anything else, a
 * field past the end, a data field of another length than its id's, a
 * value the standard does not define, is refused with the reason. Pure:
 * no I/O, no clock, no allocation.
 */
#ifndef PODCAP_PTP_MGMT_H
#define PODCAP_PTP_MGMT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/error.h"

/* The management ids podcap asks for (IEEE 1588 table 40; TIME_STATUS_NP is linuxptp's). */
#define PC_PTP_DEFAULT_DATA_SET 0x2000
#define PC_PTP_CURRENT_DATA_SET 0x2001
#define PC_PTP_PARENT_DATA_SET  0x2002
#define PC_PTP_PORT_DATA_SET    0x2004
#define PC_PTP_TIME_STATUS_NP   0xC000

/* portState (IEEE 1588 table 8; 10 is linuxptp's GRAND_MASTER) */
#define PC_PTP_UNCALIBRATED 8
#define PC_PTP_SLAVE        9
#define PC_PTP_STATE_MAX    10

#define PC_PTP_GET_LEN 54   /* a GET: header, management fields, an empty TLV */
#define PC_PTP_MSG_MAX 1500 /* the largest answer read; longer is refused */
#define PC_PTP_ID_TEXT 19   /* "xxxxxx.xxxx.xxxxxx" and its NUL */

/* clockIdentity and portNumber (IEEE 1588 5.3.5) */
struct pc_ptp_port_id {
	uint8_t clock[8];
	uint16_t port;
};

/* Who asks: the management socket answers to this identity, in this domain. */
struct pc_ptp_asker {
	struct pc_ptp_port_id self;
	uint8_t domain;
};

struct pc_ptp_default_ds {
	bool two_step, slave_only;
	uint16_t nports; /* numberPorts: one PORT_DATA_SET answer each */
	uint8_t clock[8];
	uint8_t domain;
};

/* offsetFromMaster and meanPathDelay are TimeIntervals: ns × 2^16. */
struct pc_ptp_current_ds {
	uint16_t steps_removed;
	int64_t offset;
	int64_t path_delay;
};

struct pc_ptp_parent_ds {
	struct pc_ptp_port_id parent;
	uint8_t gm[8];
	uint8_t gm_priority1, gm_priority2, gm_class, gm_accuracy;
	uint16_t gm_variance;
};

struct pc_ptp_port_ds {
	struct pc_ptp_port_id port;
	uint8_t state; /* 1..PC_PTP_STATE_MAX */
	int64_t peer_path_delay;
	uint8_t delay_mechanism;
	int8_t log_sync_interval;
};

/* linuxptp's TIME_STATUS_NP: the servo's view, in ns */
struct pc_ptp_time_status {
	int64_t master_offset_ns;
	int64_t ingress_ns; /* when the last Sync arrived, on this clock; 0: none yet */
	bool gm_present;
	uint8_t gm[8];
};

struct pc_ptp_answer {
	uint16_t seq;                 /* the GET's sequenceId it answers */
	struct pc_ptp_port_id source; /* the clock (port 0) or one of its ports */
	uint16_t id;                  /* the management id */
	bool refused;                 /* MANAGEMENT_ERROR_STATUS: error and text say why */
	uint16_t error;
	char error_text[128]; /* displayData, printable ASCII ('?' for any other byte) */
	union {
		struct pc_ptp_default_ds dds;
		struct pc_ptp_current_ds cds;
		struct pc_ptp_parent_ds pds;
		struct pc_ptp_port_ds port;
		struct pc_ptp_time_status ts;
	} u;
};

/*
 * A GET of management id `id` (one of the above) with sequenceId seq,
 * to every clock and port (the wildcard target) and forwarded by no
 * boundary clock (boundaryHops 0), into buf: PC_PTP_GET_LEN bytes, or 0
 * when cap is smaller.
 */
size_t pc_ptp_encode_get(const struct pc_ptp_asker *a, uint16_t id, uint16_t seq, uint8_t *buf,
			 size_t cap);

/*
 * Decodes one datagram as an answer to a GET of asker a: a RESPONSE
 * management message of PTP version 2, in a's domain, to a's identity,
 * with one TLV filling the rest. 0 and *out, or -1 with why in err; a
 * refusal (MANAGEMENT_ERROR_STATUS) decodes, with out->refused set.
 */
int pc_ptp_decode(const uint8_t *buf, size_t len, const struct pc_ptp_asker *a,
		  struct pc_ptp_answer *out, struct pc_error *err);

/* The name of a management id ("CURRENT_DATA_SET"), of an error id, of a port state. */
const char *pc_ptp_id_name(uint16_t id);
const char *pc_ptp_error_name(uint16_t error);
const char *pc_ptp_state_name(uint8_t state);
/* A clockIdentity as linuxptp prints it: "001122.fffe.334455", into out[PC_PTP_ID_TEXT]. */
const char *pc_ptp_identity_text(const uint8_t clock[8], char *out);

#endif /* PODCAP_PTP_MGMT_H */
