/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A pod map that sets every key, and for each key an edit that changes its
 * value and nothing else the checks would refuse: what the digest and a
 * reload make of each key is tested on them (tests/unit/test_config.c, the
 * digest; tests/daemon/test_reload.c, a reload). A key added to the pod
 * map needs its edit here, or those tests fail.
 *
 * Two maps: KE_TLS serves the endpoint over TLS to named clients, KE_PLAIN
 * without TLS, for the keys that cannot go with it.
 */
#ifndef PODCAP_TEST_KEY_EDITS_H
#define PODCAP_TEST_KEY_EDITS_H

#include <stddef.h>
#include <stdio.h>
#include <string.h>

#define KE_ALICE "auditor/alice+b0106775+AXu1HemszlPt4/nA6L2BpKhN99DYO+CVwUuQSOxMmkK3"
#define KE_BOB   "auditor/bob+9e94554f+ATe0JNEDhQf902JQsC9FIIpCAUJMirpGY5g9PcPvWlPv"
#define KE_W1    "witness.example/w1+918b6299+BMhAafoiFsbtwdUsqDqhHCZ91UQK+lJgkMpD69DKhqnP"
#define KE_W2    "witness.example/w2+e22c9da6+BNrDHryhWdKD+DQf2Q1/oc2Vv17Mq2V/eVJmLmflavvj"

#define KE_HEAD                                      \
	"appliance:\n"                               \
	"  id: lab-1\n"                              \
	"  origin: podcap.example.net/lab-1\n"       \
	"  role: pod-tap\n"                          \
	"  slice: 20ms\n"                            \
	"  auditor_keys: [\"" KE_ALICE "\"]\n"       \
	"  signing_key: /etc/podcap/appliance.key\n" \
	"  ledger: /var/lib/podcap/ledger\n"         \
	"  witnesses:\n"                             \
	"    - url: https://witness.example/\n"      \
	"      key: " KE_W1 "\n"                     \
	"      ca: /etc/podcap/tls/witness-ca.crt\n" \
	"  attestation:\n"                           \
	"    tpm: device:/dev/tpmrm0\n"              \
	"    every: 10\n"                            \
	"    pcrs: [0, 7]\n"                         \
	"    ima_log: /var/log/ima.txt\n"            \
	"  clock:\n"                                 \
	"    ptp4l: /var/run/ptp4l\n"                \
	"    domain: 24\n"

#define KE_ENDPOINT_TLS                                    \
	"  listen: 0.0.0.0:9180\n"                         \
	"  tls:\n"                                         \
	"    certificate: /etc/podcap/tls/appliance.crt\n" \
	"    key: /etc/podcap/tls/appliance.key\n"         \
	"    client_ca: /etc/podcap/tls/site-ca.crt\n"     \
	"    priorities: NORMAL:-VERS-ALL:+VERS-TLS1.3\n"  \
	"  access:\n"                                      \
	"    - client: CN=verifier-1,O=Example Site\n"     \
	"      routes: [log]\n"

#define KE_ENDPOINT_PLAIN            \
	"  listen: 127.0.0.1:9180\n" \
	"  listen_plaintext: false\n"

/* pod-a on the uplink of two workers, pod-b with every limit of its own, pod-c with none */
#define KE_TAIL                                                                                    \
	"window: 60s\n"                                                                            \
	"max_frame: 1522B\n"                                                                       \
	"defaults:\n"                                                                              \
	"  cap: 1Gbps\n"                                                                           \
	"  burst: 60s\n"                                                                           \
	"  mode: shape\n"                                                                          \
	"  queue_delay: 50ms\n"                                                                    \
	"  promise: envelope\n"                                                                    \
	"dpdk:\n"                                                                                  \
	"  lcores: 0-2\n"                                                                          \
	"  memory: 1GiB\n"                                                                         \
	"  file_prefix: podcap-lab-1\n"                                                            \
	"  args: [--no-telemetry]\n"                                                               \
	"uplinks:\n"                                                                               \
	"  - name: up0\n"                                                                          \
	"    pod_port: net_null0\n"                                                                \
	"    fabric_port: net_null1\n"                                                             \
	"    workers: 2\n"                                                                         \
	"    pod_neighbor: {chassis_id: \"02:00:00:00:00:01\", port_id: swp1}\n"                   \
	"    fabric_neighbor: {chassis_id: leaf-1, port_id: Ethernet1}\n"                          \
	"    lldp_max_silence: 120s\n"                                                             \
	"  - {name: up1, pod_port: net_null2, fabric_port: net_null3}\n"                           \
	"pods:\n"                                                                                  \
	"  - {id: pod-a, uplink: up0, prefixes: [10.0.0.0/24], mode: police, promise: envelope}\n" \
	"  - id: pod-b\n"                                                                          \
	"    gpus: 8\n"                                                                            \
	"    vlan: 100\n"                                                                          \
	"    uplink: up1\n"                                                                        \
	"    prefixes: [10.0.1.0/24]\n"                                                            \
	"    cap: 2Gbps\n"                                                                         \
	"    burst: 1GB\n"                                                                         \
	"    mode: police\n"                                                                       \
	"    queue_delay: 10ms\n"                                                                  \
	"    promise: window\n"                                                                    \
	"  - {id: pod-c, uplink: up1, prefixes: [10.0.3.0/24]}\n"

enum ke_base {
	KE_TLS,
	KE_PLAIN
};

static const char *const ke_bases[] = {
	[KE_TLS] = KE_HEAD KE_ENDPOINT_TLS KE_TAIL,
	[KE_PLAIN] = KE_HEAD KE_ENDPOINT_PLAIN KE_TAIL,
};

/* The key at `path` changed: in map `base`, each `from` (once there) made `to`. */
struct ke_edit {
	const char *path;
	enum ke_base base;
	const char *from[2], *to[2];
};

static const struct ke_edit ke_edits[] = {
	/* the id ends the origin: both change */
	{ "appliance.id",
	  KE_TLS,
	  { "  id: lab-1\n", "net/lab-1\n" },
	  { "  id: lab-2\n", "net/lab-2\n" } },
	{ "appliance.origin", KE_TLS, { "podcap.example.net/" }, { "podcap.example.org/" } },
	{ "appliance.role", KE_TLS, { "  role: pod-tap\n" }, { "  role: fabric-tap\n" } },
	{ "appliance.slice", KE_TLS, { "  slice: 20ms\n" }, { "  slice: 30ms\n" } },
	{ "appliance.auditor_keys", KE_TLS, { KE_ALICE }, { KE_BOB } },
	{ "appliance.listen", KE_TLS, { "0.0.0.0:9180" }, { "0.0.0.0:9181" } },
	{ "appliance.listen_plaintext",
	  KE_PLAIN,
	  { "listen_plaintext: false" },
	  { "listen_plaintext: true" } },
	{ "appliance.tls",
	  KE_PLAIN,
	  { "  listen_plaintext: false\n" },
	  { "  tls: {certificate: /etc/podcap/a.crt, key: /etc/podcap/a.key}\n" } },
	{ "appliance.tls.certificate", KE_TLS, { "tls/appliance.crt" }, { "tls/renewed.crt" } },
	{ "appliance.tls.key", KE_TLS, { "tls/appliance.key" }, { "tls/renewed.key" } },
	{ "appliance.tls.client_ca", KE_TLS, { "site-ca.crt" }, { "other-ca.crt" } },
	{ "appliance.tls.priorities", KE_TLS, { "+VERS-TLS1.3" }, { "+VERS-TLS1.3:+VERS-TLS1.2" } },
	{ "appliance.access",
	  KE_TLS,
	  { "  access:\n" },
	  { "  access:\n    - {client: 'CN=verifier-2,O=Example Site', routes: [metrics]}\n" } },
	{ "appliance.access[].client", KE_TLS, { "CN=verifier-1" }, { "CN=verifier-3" } },
	{ "appliance.access[].routes", KE_TLS, { "routes: [log]" }, { "routes: [log, attest]" } },
	{ "appliance.signing_key",
	  KE_TLS,
	  { "signing_key: /etc/podcap/appliance.key" },
	  { "signing_key: /etc/podcap/other.key" } },
	{ "appliance.ledger", KE_TLS, { "/var/lib/podcap/ledger" }, { "/var/lib/podcap/other" } },
	{ "appliance.witnesses",
	  KE_TLS,
	  { "  witnesses:\n" },
	  { "  witnesses:\n    - {url: 'http://127.0.0.1:7380', key: '" KE_W2 "'}\n" } },
	{ "appliance.witnesses[].url",
	  KE_TLS,
	  { "https://witness.example/" },
	  { "https://witness.example:8443/" } },
	{ "appliance.witnesses[].key", KE_TLS, { KE_W1 }, { KE_W2 } },
	{ "appliance.witnesses[].ca", KE_TLS, { "witness-ca.crt" }, { "other-ca.crt" } },
	{ "appliance.attestation",
	  KE_TLS,
	  { "  attestation:\n    tpm: device:/dev/tpmrm0\n    every: 10\n    pcrs: [0, 7]\n"
	    "    ima_log: /var/log/ima.txt\n" },
	  { "" } },
	{ "appliance.attestation.tpm", KE_TLS, { "device:/dev/tpmrm0" }, { "device:/dev/tpm0" } },
	{ "appliance.attestation.every", KE_TLS, { "every: 10" }, { "every: 20" } },
	{ "appliance.attestation.pcrs", KE_TLS, { "pcrs: [0, 7]" }, { "pcrs: [0, 7, 10]" } },
	{ "appliance.attestation.ima_log",
	  KE_TLS,
	  { "/var/log/ima.txt" },
	  { "/var/log/ima2.txt" } },
	{ "appliance.clock",
	  KE_TLS,
	  { "  clock:\n    ptp4l: /var/run/ptp4l\n    domain: 24\n" },
	  { "" } },
	{ "appliance.clock.ptp4l", KE_TLS, { "ptp4l: /var/run/ptp4l" }, { "ptp4l: /run/ptp4l-b" } },
	{ "appliance.clock.domain", KE_TLS, { "domain: 24" }, { "domain: 0" } },
	{ "window", KE_TLS, { "window: 60s" }, { "window: 30s" } },
	{ "max_frame", KE_TLS, { "max_frame: 1522B" }, { "max_frame: 1500B" } },
	{ "defaults",
	  KE_TLS,
	  { "defaults:\n  cap: 1Gbps\n  burst: 60s\n  mode: shape\n  queue_delay: 50ms\n"
	    "  promise: envelope\n" },
	  { "defaults: {cap: 3Gbps}\n" } },
	{ "defaults.cap", KE_TLS, { "  cap: 1Gbps\n" }, { "  cap: 3Gbps\n" } },
	{ "defaults.burst", KE_TLS, { "  burst: 60s\n" }, { "  burst: 30s\n" } },
	{ "defaults.mode", KE_TLS, { "  mode: shape\n" }, { "  mode: police\n" } },
	{ "defaults.queue_delay",
	  KE_TLS,
	  { "  queue_delay: 50ms\n" },
	  { "  queue_delay: 20ms\n" } },
	{ "defaults.promise", KE_TLS, { "  promise: envelope\n" }, { "  promise: window\n" } },
	{ "dpdk",
	  KE_TLS,
	  { "dpdk:\n  lcores: 0-2\n  memory: 1GiB\n  file_prefix: podcap-lab-1\n"
	    "  args: [--no-telemetry]\n" },
	  { "" } },
	{ "dpdk.lcores", KE_TLS, { "lcores: 0-2" }, { "lcores: 0-3" } },
	{ "dpdk.memory", KE_TLS, { "memory: 1GiB" }, { "memory: 2GiB" } },
	{ "dpdk.file_prefix", KE_TLS, { "file_prefix: podcap-lab-1" }, { "file_prefix: other" } },
	{ "dpdk.args", KE_TLS, { "[--no-telemetry]" }, { "[--no-telemetry, --no-shconf]" } },
	/* an uplink more, and a pod for it */
	{ "uplinks",
	  KE_TLS,
	  { "uplinks:\n", "pods:\n" },
	  { "uplinks:\n  - {name: up2, pod_port: net_null4, fabric_port: net_null5}\n",
	    "pods:\n  - {id: pod-d, uplink: up2}\n" } },
	{ "uplinks[].name",
	  KE_TLS,
	  { "  - name: up0\n", "uplink: up0," },
	  { "  - name: up9\n", "uplink: up9," } },
	{ "uplinks[].pod_port", KE_TLS, { "pod_port: net_null0" }, { "pod_port: net_null8" } },
	{ "uplinks[].fabric_port",
	  KE_TLS,
	  { "fabric_port: net_null1" },
	  { "fabric_port: net_null9" } },
	{ "uplinks[].workers", KE_TLS, { "workers: 2" }, { "workers: 3" } },
	{ "uplinks[].pod_neighbor",
	  KE_TLS,
	  { "    pod_neighbor: {chassis_id: \"02:00:00:00:00:01\", port_id: swp1}\n" },
	  { "" } },
	{ "uplinks[].pod_neighbor.chassis_id", KE_TLS, { "00:00:00:01\"" }, { "00:00:00:02\"" } },
	{ "uplinks[].pod_neighbor.port_id", KE_TLS, { "port_id: swp1" }, { "port_id: swp2" } },
	{ "uplinks[].fabric_neighbor",
	  KE_TLS,
	  { "    fabric_neighbor: {chassis_id: leaf-1, port_id: Ethernet1}\n" },
	  { "" } },
	{ "uplinks[].fabric_neighbor.chassis_id",
	  KE_TLS,
	  { "chassis_id: leaf-1" },
	  { "chassis_id: leaf-2" } },
	{ "uplinks[].fabric_neighbor.port_id",
	  KE_TLS,
	  { "port_id: Ethernet1}" },
	  { "port_id: Ethernet2}" } },
	{ "uplinks[].lldp_max_silence",
	  KE_TLS,
	  { "lldp_max_silence: 120s" },
	  { "lldp_max_silence: 90s" } },
	{ "pods",
	  KE_TLS,
	  { "pods:\n" },
	  { "pods:\n  - {id: pod-d, uplink: up1, prefixes: [10.0.9.0/24]}\n" } },
	{ "pods[].id", KE_TLS, { "  - id: pod-b\n" }, { "  - id: pod-e\n" } },
	{ "pods[].gpus", KE_TLS, { "gpus: 8" }, { "gpus: 16" } },
	/* pod-b to the uplink of two workers: it polices and keeps the envelope */
	{ "pods[].uplink",
	  KE_TLS,
	  { "    uplink: up1\n", "    promise: window\n" },
	  { "    uplink: up0\n", "    promise: envelope\n" } },
	{ "pods[].prefixes", KE_TLS, { "[10.0.1.0/24]" }, { "[10.0.2.0/24]" } },
	{ "pods[].cap", KE_TLS, { "    cap: 2Gbps\n" }, { "    cap: 4Gbps\n" } },
	{ "pods[].burst", KE_TLS, { "    burst: 1GB\n" }, { "    burst: 2GB\n" } },
	{ "pods[].mode", KE_TLS, { "    mode: police\n" }, { "    mode: shape\n" } },
	{ "pods[].queue_delay",
	  KE_TLS,
	  { "    queue_delay: 10ms\n" },
	  { "    queue_delay: 20ms\n" } },
	{ "pods[].promise", KE_TLS, { "    promise: window\n" }, { "    promise: envelope\n" } },
	/* one tag to a QinQ stack whose inner tag is the same */
	{ "pods[].vlan", KE_TLS, { "vlan: 100" }, { "vlan: [200, 100]" } },
};

/* The edit of the key at `path`, or NULL. */
static inline const struct ke_edit *
ke_edit_of(const char *path)
{
	for (size_t i = 0; i < sizeof(ke_edits) / sizeof(ke_edits[0]); i++)
		if (strcmp(ke_edits[i].path, path) == 0)
			return &ke_edits[i];
	return NULL;
}

/*
 * Writes edit e of its base map into out (n bytes); returns 0, or -1 when a
 * `from` is not in the map exactly once or out is too small.
 */
static inline int
ke_apply(const struct ke_edit *e, char *out, size_t n)
{
	char tmp[8192];

	if (snprintf(out, n, "%s", ke_bases[e->base]) >= (int)n)
		return -1;
	for (int i = 0; i < 2 && e->from[i] != NULL; i++) {
		char *at = strstr(out, e->from[i]);
		size_t len = strlen(e->from[i]);

		if (at == NULL || strstr(at + 1, e->from[i]) != NULL)
			return -1;
		if (snprintf(tmp, sizeof(tmp), "%.*s%s%s", (int)(at - out), out, e->to[i],
			     at + len) >= (int)sizeof(tmp) ||
		    snprintf(out, n, "%s", tmp) >= (int)n)
			return -1;
	}
	return 0;
}

#endif /* PODCAP_TEST_KEY_EDITS_H */
