/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Ledger records: what the appliance observed, one record per event.
 *
 * Every window produces a WINDOW record; every start, stop, pod-map reload,
 * run of unobserved windows and step of the wall clock produces a record of
 * its own. The exact
 * bytes are in docs/log-format.md; all integers are big-endian.
 */
#ifndef PODCAP_RECORD_H
#define PODCAP_RECORD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "podmap/config.h"
#include "shape/counters.h"
#include "shape/lldp.h"

/* Largest encoded record, bytes: PC_MAX_PODS pods and PC_MAX_UPLINKS links with 63-byte names fit. */
#define PC_RECORD_MAX (1u << 23)

enum pc_record_type {
	PC_REC_START = 1,   /* podcapd started enforcing this pod map */
	PC_REC_WINDOW = 2,  /* counters of one closed window */
	PC_REC_GAP = 3,     /* windows the appliance did not observe or could not log */
	PC_REC_RELOAD = 4,  /* a new pod map is in force from window_start */
	PC_REC_STOP = 5,    /* podcapd stopped cleanly */
	PC_REC_CLOCK = 6,   /* the wall clock stepped; window labels go on from window_start */
	PC_REC_ATTEST = 7,  /* a TPM quote committing to the log before it (record_attest.c) */
	PC_REC_OBSERVE = 8, /* a tap: what its ports could not see in the windows just logged */
	PC_REC_DECLARE = 9, /* the auditor's declaration of the START or RELOAD just before */
	PC_REC_OBSERVE_SLICES = 10, /* OBSERVE with the tap's boundary slices (record_observe.c) */
	PC_REC_SYNC = 11, /* the clock discipline's readings over the windows just logged */
	PC_REC_LINK = 12, /* each port's link and LLDP neighbour (record_link.c) */
	/* the newest type: a new one moves this, and the verifier's tables and
	 * the tests' "first unknown type" follow it */
	PC_REC_NEWEST = PC_REC_LINK,
};

/* ATTEST: a TPM2_Quote, in the TPM's marshalled form, and what explains it. */
#define PC_ATTEST_QUOTE_MAX 2048       /* TPMS_ATTEST bytes */
#define PC_ATTEST_SIG_MAX   1024       /* TPMT_SIGNATURE bytes */
#define PC_ATTEST_PCRS      24         /* PCRs 0..23 of one bank */
#define PC_ATTEST_IMA_MAX   (4u << 20) /* IMA list bytes */
#define PC_TPM_ALG_SHA256   0x000b
#define PC_KEY_FILE         0 /* the log's key came from a key file */
#define PC_KEY_SEALED       1 /* ... from a key sealed to the TPM's PCRs (src/tpm/seal.c) */

struct pc_record_attest {
	uint64_t ckpt_size; /* the checkpoint the quote commits to */
	uint8_t ckpt_root[32];
	uint8_t key_kind; /* PC_KEY_FILE or PC_KEY_SEALED: what signs the log */
	uint16_t quote_len;
	uint8_t quote[PC_ATTEST_QUOTE_MAX]; /* TPMS_ATTEST, as the TPM signed it */
	uint16_t sig_len;
	uint8_t sig[PC_ATTEST_SIG_MAX];  /* TPMT_SIGNATURE */
	uint16_t pcr_alg;                /* the bank: PC_TPM_ALG_SHA256 */
	uint32_t pcr_mask;               /* bit i: PCR i is quoted */
	uint8_t pcr[PC_ATTEST_PCRS][32]; /* the quoted PCRs' values, in increasing order */
	uint32_t ima_len;
	uint8_t *ima; /* the IMA list's lines; malloc'd when decoded */
};

/*
 * A pod block's mode byte: bit 0 the enum pc_mode, bit 1 the window
 * promise (docs/bucket.md); any other bit makes the record invalid.
 */
#define PC_POD_MODE_POLICE 0x01
#define PC_POD_MODE_WINDOW 0x02
#define PC_POD_MODE_BITS   (PC_POD_MODE_POLICE | PC_POD_MODE_WINDOW)

/* What a tap's receive ports report they could not deliver, per direction (OBSERVE). */
struct pc_record_seen {
	char name[PC_ID_LEN];          /* the uplink */
	uint64_t missed[PC_DIR_COUNT]; /* the port's imissed: no room in its receive ring */
	uint64_t nombuf[PC_DIR_COUNT]; /* rx_nombuf: no mbuf to receive into */
	uint64_t errors[PC_DIR_COUNT]; /* ierrors: frames received in error */
};

struct pc_record_pod {
	char id[PC_ID_LEN];
	char uplink[PC_ID_LEN];
	uint64_t cap_bps;
	uint64_t burst_bytes;
	uint8_t mode; /* PC_POD_MODE_* bits */
	struct pc_pod_ctr dir[PC_DIR_COUNT];
};

struct pc_record_link {
	char name[PC_ID_LEN];
	struct pc_link_ctr dir[PC_DIR_COUNT];
};

/* CLOCK's own fields. */
struct pc_record_clock {
	uint64_t elapsed_ns; /* real time from the cursor to window_start */
	int64_t step_ns;     /* how far the wall clock moved against real time */
};

/* DECLARE's own fields: the auditor's declaration the START or RELOAD before runs under. */
struct pc_record_declare {
	uint8_t hash[PC_DIGEST_LEN]; /* BLAKE2b-256 of the declaration file (declaration.h) */
	uint64_t not_before_ns;      /* its validity, whole seconds */
	uint64_t not_after_ns;
};

/*
 * What a tap counted of one pod within the slice after the window's first
 * boundary and before its last, per direction (OBSERVE_SLICES).
 */
struct pc_record_slice {
	char pod[PC_ID_LEN];
	uint64_t first_bytes[PC_DIR_COUNT], first_frames[PC_DIR_COUNT];
	uint64_t last_bytes[PC_DIR_COUNT], last_frames[PC_DIR_COUNT];
};

/* OBSERVE_SLICES' flags: a worker saw the window's end less than a slice ahead. */
#define PC_SLICE_LAST_SHORT 0x01
#define PC_SLICE_FLAGS      PC_SLICE_LAST_SHORT

/* SYNC: the discipline that read the clock, and what its flags byte may say. */
#define PC_SYNC_PTP4L  1    /* linuxptp's ptp4l, read through its management socket */
#define PC_SYNC_LOCKED 0x01 /* every poll of the windows read a reading with a bound */
#define PC_SYNC_GM     0x02 /* the newest reading followed a grandmaster other than this clock */
#define PC_SYNC_FLAGS  (PC_SYNC_LOCKED | PC_SYNC_GM)

/*
 * SYNC's own fields (record_sync.c): what the appliance's clock discipline
 * reported over the windows of the WINDOW before it. Offsets and delays
 * are ptp4l's TimeIntervals, ns x 2^16, this clock minus its master.
 */
struct pc_record_sync {
	uint8_t discipline; /* PC_SYNC_PTP4L */
	uint8_t flags;      /* PC_SYNC_* */
	uint32_t polls;     /* polls that ended in the windows */
	uint32_t readings;  /* of them, those that read the discipline */
	uint32_t bounded;   /* of those, readings that support a bound (reading.h) */
	int64_t offset;     /* the offset of largest magnitude read; 0 without a reading */
	int64_t path_delay; /* the newest reading's mean path delay */
	uint64_t bound_ns;  /* the largest bound, |offset| + |path delay| rounded up; 0: none */
	uint8_t clock[8];   /* the newest reading's: this clock's identity */
	uint8_t gm[8];      /* its grandmaster's */
	uint16_t port;      /* the port it followed, its state and the steps to the grandmaster */
	uint8_t port_state;
	uint16_t steps_removed;
};

/* OBSERVE's own fields: a tap's side and its ports' losses; OBSERVE_SLICES' also its slices. */
struct pc_record_observe {
	uint8_t side; /* enum pc_role: 1 pod-tap, 2 fabric-tap */
	uint32_t nseen;
	struct pc_record_seen *seen;    /* one per uplink; malloc'd when decoded */
	uint64_t slice_ns;              /* OBSERVE_SLICES: the slice's length, > 0 */
	uint8_t slice_flags;            /* PC_SLICE_* */
	uint32_t nslices;               /* pods with a slice not empty; the others counted none */
	struct pc_record_slice *slices; /* malloc'd when decoded */
};

/*
 * LINK: what each port of the appliance showed of its cable, at a START, a
 * RELOAD, or after the windows just logged (span_ns of real time ending at
 * window_start_ns, the cursor). Link times are podcapd's readings, once a
 * second and at each link interrupt.
 */
#define PC_LINK_AT_START    1                    /* kind: the ports as the run starts (span 0) */
#define PC_LINK_AT_RELOAD   2                    /* ... as a reload comes into force (span 0) */
#define PC_LINK_WINDOW      3                    /* ... over the windows logged just before */
#define PC_LINK_CHANGES_MAX 16                   /* changes listed per port: the last ones */
#define PC_LINK_PORTS_MAX   (2 * PC_MAX_UPLINKS) /* the pod and fabric port of each uplink */

/* A link as it was read, at real_ns (CLOCK_REALTIME). */
struct pc_record_link_change {
	uint64_t real_ns;
	uint8_t up;          /* 1 up, 0 down */
	uint8_t full_duplex; /* 0 when down */
	uint32_t speed_mbps; /* 0 when down or unknown */
};

struct pc_record_port {
	char uplink[PC_ID_LEN];
	uint8_t side; /* enum pc_dir: PC_DIR_UP the pod side, PC_DIR_DOWN the fabric's */
	struct pc_record_link_change
	    now;          /* the link when the record was made (real_ns: since then) */
	uint64_t down_ns; /* of the span, the time the link was down */
	uint32_t changes; /* changes within the span */
	uint8_t nlisted;  /* min(changes, PC_LINK_CHANGES_MAX) */
	struct pc_record_link_change listed[PC_LINK_CHANGES_MAX]; /* the last, oldest first */
	uint8_t neighbor;   /* 1: an LLDP neighbour is there (its TTL has not run out) */
	uint64_t heard_ns;  /* realtime it was last heard, 0 never */
	uint64_t silent_ns; /* since then (or since podcapd read the port first), monotonic */
	uint16_t ttl;       /* neighbour: its TTL */
	struct pc_lldp_id chassis, port; /* neighbour: its ids */
	uint8_t has_name;                /* neighbour: a System Name was there */
	uint8_t name_len;
	uint8_t name[PC_LLDP_NAME_MAX];
};

/* LINK's own fields. */
struct pc_record_linkstate {
	uint8_t kind;     /* PC_LINK_* */
	uint64_t span_ns; /* PC_LINK_WINDOW: the windows' real time; else 0 */
	uint32_t nports;
	struct pc_record_port *ports; /* malloc'd when decoded */
};

struct pc_record {
	uint8_t type;                      /* enum pc_record_type */
	char appliance_id[PC_ID_LEN];
	uint64_t time_ns;                  /* UTC ns when the record was made */
	uint64_t window_start_ns;          /* UTC ns, a multiple of window_len_ns */
	uint64_t window_len_ns;
	uint64_t window_count;             /* WINDOW: windows covered, 1 unless the control
					      thread fell behind; GAP: windows missed; others: 0 */
	uint8_t podmap_digest[PC_DIGEST_LEN];
	uint8_t build_id[32];              /* BLAKE2b-256 of the podcapd executable */
	uint32_t npods;
	struct pc_record_pod *pods;        /* WINDOW, START, RELOAD: npods entries */
	uint32_t nlinks;
	struct pc_record_link *links;      /* WINDOW: unmapped/malformed per uplink */
	/*
	 * The type's own fields, encoded after the links: the member named
	 * for the type, and none for START, WINDOW, GAP, RELOAD and STOP. The
	 * type alone says which holds; the others are not read.
	 */
	union {
		struct pc_record_clock clock;         /* CLOCK */
		struct pc_record_declare declare;     /* DECLARE */
		struct pc_record_attest *attest;      /* ATTEST: malloc'd when decoded */
		struct pc_record_observe observe;     /* OBSERVE */
		struct pc_record_sync sync;           /* SYNC */
		struct pc_record_linkstate linkstate; /* LINK */
	};
};

/* Whether a record of this type is a tap's OBSERVE, with slices or without. */
static inline bool
pc_record_is_observe(uint8_t type)
{
	return type == PC_REC_OBSERVE || type == PC_REC_OBSERVE_SLICES;
}

/* The mode byte of a pod held to these limits. */
static inline uint8_t
pc_record_mode(const struct pc_limits *lim)
{
	return (uint8_t)((lim->mode == PC_MODE_POLICE ? PC_POD_MODE_POLICE : 0) |
			 (lim->promise == PC_PROMISE_WINDOW ? PC_POD_MODE_WINDOW : 0));
}

/*
 * Encodes into buf; returns the encoded length, or 0 if buf is too small.
 * Decoding checks every length and enum exactly; returns 0 or -1 with err.
 * Decoded pods/links are malloc'd; free with pc_record_free().
 */
size_t pc_record_encode(const struct pc_record *r, uint8_t *buf, size_t len);
int pc_record_decode(const uint8_t *buf, size_t len, struct pc_record *r, struct pc_error *err);
void pc_record_free(struct pc_record *r);

/*
 * A record of a type this version does not know, a later podcapd's
 * (docs/log-format.md, "Types added later"): pc_record_decode() refuses it
 * as an unknown type, and this says whether it is nonetheless a record of
 * version 1 as every type's is. 0 when it is: its common fields, pods and
 * links decoded and checked into r as any type's are (free with
 * pc_record_free()), the bytes after its links, its own fields, left
 * unread. -1 with err for a type this version knows, or a record that
 * version 1 does not frame.
 */
int pc_record_decode_unknown(const uint8_t *buf, size_t len, struct pc_record *r,
			     struct pc_error *err);

/* record_attest.c: an ATTEST record's own fields, checked and sized as record.c does. */
int pc_record_attest_check(const struct pc_record_attest *a, struct pc_error *err);
size_t pc_record_attest_size(const struct pc_record_attest *a);
unsigned pc_record_attest_npcrs(uint32_t mask);
/* record_types.c: "start", "window", ...; "unknown" for a type this version does not know. */
const char *pc_record_type_name(uint8_t type);

#endif /* PODCAP_RECORD_H */
