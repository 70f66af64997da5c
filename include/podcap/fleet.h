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
 *
 * Relative paths are taken from the fleet file's directory. Errors are
 * positioned, as for a pod map: file:line:col: message.
 */
#ifndef PODCAP_FLEET_H
#define PODCAP_FLEET_H

#include <stddef.h>

#include "podcap/error.h"
#include "podcap/id.h"

#define PC_FLEET_MAX_APPLIANCES 10000
#define PC_FLEET_MAX_MAPS       64
#define PC_FLEET_MAX_JOBS       64
#define PC_FLEET_DEFAULT_JOBS   4

struct pc_fleet_appliance {
	char name[PC_ID_LEN];
	char *url; /* exactly one of url and ledger is set */
	char *ledger;
	char *key;
	char *state; /* NULL when none */
	char *pod_maps[PC_FLEET_MAX_MAPS];
	size_t npod_maps;
	unsigned line; /* where it is declared, for messages */
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
