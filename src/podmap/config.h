/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The pod map: the operator's declaration of pods, uplinks and caps.
 *
 * Loaded with libyaml; every mistake in the file is reported with the
 * 1-based line and column of the offending node (struct pc_error). After a successful load the configuration is fully
 * validated: the data path never has to check it again.
 */
#ifndef PODCAP_CONFIG_H
#define PODCAP_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/error.h"
#include "base/hex.h"
#include "base/id.h"
#include "base/keys.h"

#define PC_DEVARGS_LEN   256  /* DPDK device strings */
#define PC_MAX_UPLINKS   64
#define PC_MAX_PODS      16384
#define PC_MAX_UPLINK_WORKERS 16   /* podmap/fields.c says "1 to 16" */
#define PC_MAX_PREFIXES  64   /* per pod */
#define PC_DIGEST_LEN    32   /* BLAKE2b-256 */
#define PC_MAX_AUDITOR_KEYS   8

enum pc_mode {
	PC_MODE_SHAPE = 0,   /* queue what exceeds the bucket, drop past queue_delay */
	PC_MODE_POLICE = 1,  /* drop what exceeds the bucket at once */
};

/*
 * What the appliance is: the shaper inline on the uplink, or a tap that
 * only observes copies of its frames, taken on the pod side or the fabric
 * side of the shaper (docs/reconcile.md).
 */
enum pc_role {
	PC_ROLE_SHAPER = 0,
	PC_ROLE_POD_TAP = 1,
	PC_ROLE_FABRIC_TAP = 2,
};

struct pc_prefix {
	uint8_t family;      /* 4 or 6 */
	uint8_t len;         /* prefix length in bits */
	uint8_t addr[16];    /* network byte order, host bits zero; IPv4 in addr[0..3] */
	struct pc_mark mark;
};

/* What the pod is held to (docs/bucket.md, "The two promises"). */
enum pc_promise {
	PC_PROMISE_ENVELOPE = 0, /* burst + cap x T over any interval T: the token bucket */
	PC_PROMISE_WINDOW = 1,   /* also at most cap x window in every interval of one window */
};

/* Enforcement parameters of one pod; the same in both directions. */
struct pc_limits {
	uint64_t cap_bps;        /* bits/s of L2 frame bytes (no FCS, no preamble) */
	uint64_t burst_bytes;    /* token-bucket depth */
	enum pc_mode mode;
	uint64_t queue_delay_ns; /* shape mode: longest a frame may wait */
	enum pc_promise promise;
};

/*
 * uplinks[].pod_neighbor, fabric_neighbor: the LLDP neighbour a port must
 * face, its ids in the form podcap shows them (shape/lldp.h, pc_lldp_render_id).
 */
#define PC_NEIGHBOR_ID_LEN 128
struct pc_neighbor {
	bool set; /* declared */
	char chassis_id[PC_NEIGHBOR_ID_LEN];
	char port_id[PC_NEIGHBOR_ID_LEN];
};

struct pc_uplink {
	char name[PC_ID_LEN];
	char pod_port[PC_DEVARGS_LEN];     /* PCI address or vdev arguments */
	char fabric_port[PC_DEVARGS_LEN];
	unsigned workers; /* RX/TX queue pairs, one worker each: 1 to PC_MAX_UPLINK_WORKERS */
	unsigned npods;                     /* filled by the loader */
	struct pc_neighbor pod_neighbor, fabric_neighbor; /* not declared: .set false */
	uint64_t lldp_max_silence_ns; /* longest without a neighbour heard on a port; 0: any */
	struct pc_mark mark;
};

struct pc_pod {
	char id[PC_ID_LEN];
	unsigned gpus;
	unsigned uplink;                    /* index into pc_config.uplinks */
	struct pc_limits limits;
	unsigned nprefixes;
	struct pc_prefix prefixes[PC_MAX_PREFIXES];
	/* pods[].vlan: its tag stack as shape/classify.h words it, 0 (PC_VLAN_NONE) if none */
	uint32_t vlan;
	struct pc_mark mark;
};

/* EAL settings: how podcapd runs, not what it enforces (not in the digest). */
struct pc_dpdk {
	char lcores[64];          /* "-l" list; default "0-1" */
	uint64_t memory_bytes;    /* "-m"; default 1GiB */
	char file_prefix[PC_ID_LEN]; /* default "podcap-" + appliance id */
	unsigned nargs;
	char args[16][PC_DEVARGS_LEN]; /* extra EAL arguments */
};

/* appliance.witnesses: C2SP tlog-witnesses each checkpoint goes to (not in the digest). */
#define PC_MAX_WITNESSES 8
struct pc_witness_cfg {
	char url[256];              /* submission prefix: http://host:port */
	struct pc_verifier_key key; /* the witness's cosigner key (type 0x04) */
	char ca[PC_PATH_LEN];       /* https: the CA (PEM) its certificate chains to; "" system's */
	struct pc_mark mark, ca_mark;
};
struct pc_witnesses {
	unsigned n;
	struct pc_witness_cfg w[PC_MAX_WITNESSES];
};

/*
 * appliance.tls: the endpoint's certificate and key (PEM files) and the CA
 * its clients' certificates must chain to, read by podcapd with GnuTLS
 * (src/http/tls.c) at start and on SIGHUP. Not in the digest: who may read
 * the log is not what the cap does, and a certificate is replaced without
 * a new pod map (docs/tls.md).
 */
#define PC_TLS_DEFAULT_PRIORITIES "NORMAL:-VERS-ALL:+VERS-TLS1.3"
struct pc_tls_cfg {
	bool enabled;                  /* the mapping is present */
	char certificate[PC_PATH_LEN]; /* the chain, the endpoint's certificate first */
	char key[PC_PATH_LEN];         /* its private key, unencrypted */
	char client_ca[PC_PATH_LEN];   /* "" when clients are not asked for a certificate */
	char priorities[256];          /* a GnuTLS priority string; default TLS 1.3 only */
	struct pc_mark mark, certificate_mark, key_mark, client_ca_mark, priorities_mark;
};

/*
 * appliance.access: which client (certificate subject or the SHA-256 of its
 * SubjectPublicKeyInfo) may read which part of the endpoint. Needs
 * appliance.tls.client_ca; not in the digest, as appliance.tls.
 */
#define PC_ACCESS_LOG     (1u << 0) /* checkpoints, records, proofs, tiles, the key: /v1/... */
#define PC_ACCESS_METRICS (1u << 1) /* /metrics */
#define PC_ACCESS_ATTEST  (1u << 2) /* /v1/attest */
#define PC_MAX_ACCESS     64
#define PC_SUBJECT_LEN    256
struct pc_access_rule {
	bool by_key;                  /* spki_sha256 names the client, else subject */
	char subject[PC_SUBJECT_LEN]; /* RFC 4514, as GnuTLS prints it: "CN=v1,O=Site" */
	uint8_t spki_sha256[32];
	unsigned routes; /* PC_ACCESS_* */
	struct pc_mark mark;
};
struct pc_access {
	unsigned n;
	struct pc_access_rule r[PC_MAX_ACCESS];
};

/*
 * TPM attestation (appliance.attestation, docs/attestation.md): how podcapd
 * reaches the TPM and what its quotes cover. Not in the digest: the quotes
 * themselves say which PCRs they cover.
 */
struct pc_attestation {
	bool enabled;              /* the mapping is present */
	char tpm[256];             /* tpm2-tss TCTI string */
	uint32_t every;            /* a quote every this many windows; default 10 */
	uint32_t pcrs;             /* SHA-256 bank: bit i = PCR i; default PCRs 0-7 and 10 */
	char ima_log[PC_PATH_LEN]; /* IMA's ASCII list, "" for none */
};

#define PC_ATTEST_DEFAULT_EVERY 10
#define PC_ATTEST_DEFAULT_PCRS  0x000004ffu
#define PC_ATTEST_DEFAULT_IMA   "/sys/kernel/security/ima/ascii_runtime_measurements_sha256"
#define PC_ATTEST_MAX_PCR       23

/*
 * The clock discipline podcapd reads and records (appliance.clock,
 * docs/config.md): a SYNC record after every window with what ptp4l
 * reported over it. That the map declares it is in the digest, so a
 * verifier holding the map requires the readings; where ptp4l listens is
 * the appliance's own business.
 */
#define PC_SUN_PATH_LEN 108 /* a unix socket's path, with its NUL (sockaddr_un) */

struct pc_clock_cfg {
	bool enabled;                /* the mapping is present */
	char ptp4l[PC_SUN_PATH_LEN]; /* ptp4l's management socket (its uds_address) */
	uint8_t domain;              /* the PTP domain ptp4l runs in; default 0 */
};

#define PC_CLOCK_DEFAULT_PTP4L "/var/run/ptp4l"

struct pc_config {
	char path[PC_PATH_LEN];        /* the file it was loaded from */
	char appliance_id[PC_ID_LEN];
	char origin[128];              /* appliance.origin (origin.h); "" for podcap/<id> */
	char signing_key[PC_PATH_LEN]; /* "" when absent */
	char ledger[PC_PATH_LEN];      /* "" when absent */
	char listen[128];              /* default "127.0.0.1:9180" */
	/* plain HTTP on an address other than loopback: only when this says so */
	bool listen_plaintext;
	struct pc_tls_cfg tls;   /* appliance.tls; not in the digest */
	struct pc_access access; /* appliance.access; not in the digest */
	/* appliance.auditor_keys: run only maps one of them declared (declaration.h); in the digest */
	unsigned nauditor_keys;
	struct pc_verifier_key auditor_keys[PC_MAX_AUDITOR_KEYS];
	struct pc_witnesses witnesses; /* none by default */
	enum pc_role role;             /* default shaper */
	uint64_t slice_ns;             /* a tap's boundary slices (docs/reconcile.md); 0: none */
	uint64_t window_ns;            /* default 60 s */
	uint32_t max_frame;            /* bytes, no FCS; default 1522 */
	struct pc_limits defaults;
	struct pc_dpdk dpdk;
	struct pc_attestation attestation;
	struct pc_clock_cfg clock; /* appliance.clock; whether it is there is in the digest */
	unsigned nuplinks;
	struct pc_uplink *uplinks;     /* nuplinks entries */
	unsigned npods;
	struct pc_pod *pods;           /* npods entries */
};

/*
 * Loads and validates a pod map. Returns 0, or -1 with *err filled (err
 * may be NULL, as everywhere in src/: base/error.h) and *cfg left
 * zeroed (nothing to free). On success free with pc_config_free().
 */
int pc_config_load(const char *path, struct pc_config *cfg, struct pc_error *err);
/* The same from memory; `name` stands in for the file name in errors. */
int pc_config_load_buffer(const char *name, const char *text, size_t len,
			  struct pc_config *cfg, struct pc_error *err);
void pc_config_free(struct pc_config *cfg);

/*
 * The canonical form: a text that depends only on what is declared (not on
 * key order, comments, whitespace or unit spelling). Returns the length it
 * needs (excluding NUL); writes at most len bytes including the NUL.
 * Documented byte for byte in docs/config.md.
 */
size_t pc_config_canonical(const struct pc_config *cfg, char *buf, size_t len);
/* BLAKE2b-256 of the canonical form. */
void pc_config_digest(const struct pc_config *cfg, uint8_t digest[PC_DIGEST_LEN]);

/*
 * Places the error already set in err at m of the file cfg was loaded from,
 * as the loader's own errors are (file:line:col, the line and a caret), for
 * what a program finds wrong with a value later (the TLS files, read with
 * GnuTLS). The line is read from the file again, "" when it cannot be.
 * Returns -1.
 */
int pc_config_error_at(const struct pc_config *cfg, struct pc_mark m, struct pc_error *err);

/*
 * Each key's two decisions, columns of its row in the pod map's tables
 * (podmap/fields.c): what the digest makes of it (podmap/canon.c writes the
 * canonical form from them) and what a reload may do with it
 * (pc_config_fixed_change). A mapping's or a sequence's own row decides for
 * the whole of it (there or not, its set of items); its keys decide each for
 * itself. podcap-podmap(5) says both for every key.
 */
enum pc_key_digest {
	PC_DIGEST_UNSAID = 0,     /* no row is left so (tests/unit/test_config.c) */
	PC_DIGEST_ALWAYS,         /* in the canonical form */
	PC_DIGEST_UNLESS_DEFAULT, /* in it when not its default: maps without it keep their digests */
	PC_DIGEST_NEVER,          /* how podcapd runs, not what it enforces */
};

enum pc_key_reload {
	PC_RELOAD_UNSAID = 0,
	PC_RELOAD_FIXED,    /* fixed for a run: a reload that changes it is refused */
	PC_RELOAD_APPLIED,  /* a reload puts the new value in force */
	PC_RELOAD_AT_START, /* read at start: accepted, in force only from the next start */
};

/* A key of the pod map, as pc_config_each_key() gives it. */
struct pc_config_key {
	const char *key; /* its name in its mapping: "cap" */
	char path[64];   /* from the top: "window", "appliance.tls.key", "pods[].cap" */
	bool required;
	bool mapping;     /* its value is a mapping (or a sequence of them) with keys of its own */
	const char *line; /* the key of its lines in the canonical form, NULL when it has none */
	enum pc_key_digest digest;
	enum pc_key_reload reload;
};

/* Calls fn with every key of the pod map: in each mapping's table order, a mapping's keys after it. */
void pc_config_each_key(void (*fn)(const struct pc_config_key *k, void *arg), void *arg);

/*
 * Why podcapd may not reload from map a to map b: the first key fixed for a
 * run whose value b changes, as "appliance.origin changed" (or what the key's
 * row says instead, "appliance.tls was added"), written to why (n bytes).
 * Returns why, or NULL when b changes none of them.
 */
const char *pc_config_fixed_change(const struct pc_config *a, const struct pc_config *b, char *why,
				   size_t n);

/* Index of the pod/uplink with that id, or -1. */
int pc_config_find_pod(const struct pc_config *cfg, const char *id);
int pc_config_find_uplink(const struct pc_config *cfg, const char *name);
/* Whether the map declares what LINK records are for: a neighbour or a silence on any uplink. */
bool pc_config_links_declared(const struct pc_config *cfg);

#endif /* PODCAP_CONFIG_H */
