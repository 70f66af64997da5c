/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A fleet file: the appliances one verifier checks in one run
 * (podcap-verify --fleet, docs/report.md "Fleets"). YAML:
 *
 *	jobs: 8                          (verifications at once, 1 to 64; default 4)
 *	appliances:
 *	  - name: rack7                  (the report's name for it: an id, unique)
 *	    url: http://10.1.2.3:9180    (or ledger: DIR, exactly one of the two)
 *	    key: keys/rack7.pub
 *	    pod_maps: [maps/rack7.yaml]  (files or directories; a single one may be a string)
 *	    state: state/rack7.state     (optional)
 *	    witnesses: [keys/w1.vkey]    (optional: witness key files, each once: each --witness)
 *	    attest: policy/rack7.yaml    (optional: --attest)
 *	    declarations: signed/rack7   (optional: --pod-maps, the auditor's signed maps)
 *	    auditor_keys: [keys/aud.pub] (with declarations: each --auditor-key)
 *	    assignment: draw/2026-q4     (optional: --assignment)
 *	    taps:                        (optional: the verifier's taps, each --tap and --tap-key)
 *	      - {url: http://10.9.0.7:9180, key: keys/tap7.pub}   (or ledger: DIR)
 *	    ca: tls/site.crt             (optional, https: --ca, for it and its taps)
 *	    pin: [sha256:HEX]            (optional, https: each --pin, at most 4; may be a string)
 *	    cert: tls/verifier.crt       (optional, https: --cert, with cert_key: --cert-key)
 *	    cert_key: tls/verifier.key
 *	    interval: 5m                 (optional: podcap-monitor's pull interval, 1s to 24h;
 *	                                  podcap-verify reads it and does not use it)
 *
 * Relative paths are taken from the fleet file's directory. Errors are
 * positioned, as for a pod map: file:line:col: message. An entry's TLS
 * fields replace the fleet-wide --ca, --pin (all of them) and --cert with
 * --cert-key for that appliance.
 */
#ifndef PODCAP_FLEET_H
#define PODCAP_FLEET_H

#include <stddef.h>
#include <stdint.h>

#include "base/error.h"
#include "base/id.h"

#define PC_FLEET_MAX_APPLIANCES 10000
#define PC_FLEET_MAX_MAPS       64
#define PC_FLEET_MAX_JOBS       64
#define PC_FLEET_DEFAULT_JOBS   4
#define PC_FLEET_MAX_KEYS       16 /* witnesses, auditor keys and taps, each */
#define PC_FLEET_MAX_PINS       4  /* pin: as many as --pin takes */

/* podcap-monitor's pull interval, per entry */
#define PC_FLEET_MIN_INTERVAL_NS 1000000000ull
#define PC_FLEET_MAX_INTERVAL_NS (86400ull * 1000000000ull)

/* A tap the verifier owns: its log (exactly one of url and ledger) and its key. */
struct pc_fleet_tap {
	char *url;
	char *ledger;
	char *key;
};

struct pc_fleet_appliance {
	char name[PC_ID_LEN];
	char *url; /* exactly one of url and ledger is set */
	char *ledger;
	char *key;
	char *state; /* NULL when none */
	char *pod_maps[PC_FLEET_MAX_MAPS];
	size_t npod_maps;
	char *witnesses[PC_FLEET_MAX_KEYS]; /* witness key files */
	size_t nwitnesses;
	char *attest;       /* attestation policy, or NULL */
	char *declarations; /* directory of signed declarations, or NULL */
	char *auditor_keys[PC_FLEET_MAX_KEYS];
	size_t nauditor_keys;
	char *assignment; /* the auditor's draw, or NULL */
	struct pc_fleet_tap taps[PC_FLEET_MAX_KEYS];
	size_t ntaps;
	/* TLS to its endpoint and its taps' (--ca, --pin, --cert, --cert-key): NULL, 0 for none */
	char *ca;
	char *pins[PC_FLEET_MAX_PINS]; /* "sha256:" and 64 hex digits each */
	size_t npins;
	char *cert; /* with cert_key, or neither */
	char *cert_key;
	uint64_t interval_ns; /* podcap-monitor's pull interval; 0 when the entry gives none */
	unsigned line;        /* where it is declared, for messages */
};

struct pc_fleet {
	unsigned jobs;
	struct pc_fleet_appliance *a;
	size_t n;
};

/* Loads a fleet file; 0, or -1 with a positioned error. Free with pc_fleet_free. */
int pc_fleet_load(const char *path, struct pc_fleet *fl, struct pc_error *err);
void pc_fleet_free(struct pc_fleet *fl);

#endif /* PODCAP_FLEET_H */
