/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * podcapd: the inline pod-uplink cap.
 *
 *   podcapd --config FILE [--ptp4l SOCKET [--ptp4l-domain N]] [--lldp-tx[=SECONDS]]
 *           [-- EAL options]
 *   podcapd --check-config FILE [--canonical] [--map-only]
 *   podcapd --version
 *
 * Wiring only: the pod map, the signer (forked before DPDK maps anything),
 * the recorder, the EAL, the clock discipline's poller, then run.c until a
 * stop; and back down in reverse.
 */
#include <getopt.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <rte_eal.h>

#include "base/buildid.h"
#include "podmap/config.h"
#include "log/origin.h"
#include "base/clock.h"
#include "base/error.h"
#include "http/tls.h"

#include "daemon/clock_discipline.h"
#include "daemon/declared.h"
#include "daemon/lldp_tx.h"
#include "eal.h"
#include "daemon/podmap.h"
#include "daemon/recorder.h"
#include "run.h"
#include "signals.h"
#include "daemon/signer.h"

#define EXIT_USAGE 2

static void
usage(FILE *f)
{
	fprintf(
	    f,
	    "usage: podcapd --config FILE [--ptp4l SOCKET [--ptp4l-domain N]] "
	    "[--lldp-tx[=SECONDS]]\n"
	    "               [-- EAL options]\n"
	    "       podcapd --check-config FILE [--canonical] [--map-only]\n"
	    "\n"
	    "  --config FILE        run with the pod map FILE\n"
	    "  --ptp4l SOCKET       read the clock discipline every second from ptp4l's\n"
	    "                       management socket SOCKET (its uds_address: /var/run/ptp4l),\n"
	    "                       in place of the pod map's appliance.clock socket and domain\n"
	    "  --ptp4l-domain N     the PTP domain ptp4l runs in (0 to 255; default 0)\n"
	    "  --lldp-tx[=SECONDS]  announce the appliance by LLDP on every port of every\n"
	    "                       uplink every SECONDS (1 to 3600; default 30), TTL 4 x\n"
	    "                       SECONDS, and a shutdown LLDPDU at a stop (a shaper only)\n"
	    "  --check-config FILE  check FILE as a start would (the pod map, its declaration,\n"
	    "                       the ledger directory, the key and the TPM), print\n"
	    "                       'configuration OK' and its digest\n"
	    "  --canonical          with --check-config: also print the canonical form\n"
	    "  --map-only           with --check-config: check the pod map alone, not what\n"
	    "                       it names (to compute the digest of another's map)\n"
	    "  --version            print the version and the build id\n"
	    "\n"
	    "Signals: SIGINT/SIGTERM stop, SIGHUP reloads the pod map (in force from the next "
	    "window).\n");
}

/* N of --ptp4l-domain: 0 to 255, decimal, nothing after. */
static int
parse_domain(const char *s, uint8_t *out)
{
	char *end;
	unsigned long v;

	if (s[0] < '0' || s[0] > '9')
		return -1;
	v = strtoul(s, &end, 10);
	if (*end != '\0' || v > 255)
		return -1;
	*out = (uint8_t)v;
	return 0;
}

static int
print_version(void)
{
	struct pc_error err;

	if (pc_version_print(stdout, "podcapd", PODCAP_VERSION, &err) == 0)
		return EXIT_SUCCESS;
	pc_error_prefix(&err, "podcapd");
	pc_error_print(&err, stderr);
	return EXIT_FAILURE;
}

int
main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "check-config", required_argument, NULL, 'n' },
		{ "canonical", no_argument, NULL, 'C' },
		{ "map-only", no_argument, NULL, 'M' },
		{ "ptp4l", required_argument, NULL, 'p' },
		{ "ptp4l-domain", required_argument, NULL, 'D' },
		{ "lldp-tx", optional_argument, NULL, 'L' },
		{ "version", no_argument, NULL, 'V' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *config = NULL, *check = NULL, *ptp4l = NULL;
	bool canonical = false, map_only = false, domain_given = false;
	uint8_t domain = 0;
	unsigned lldp_tx = 0;
	int c;

	while ((c = getopt_long(argc, argv, "c:n:h", opts, NULL)) != -1) {
		switch (c) {
		case 'c': config = optarg; break;
		case 'n': check = optarg; break;
		case 'C': canonical = true; break;
		case 'M':
			map_only = true;
			break;
		case 'p':
			ptp4l = optarg;
			break;
		case 'D':
			if (parse_domain(optarg, &domain) != 0) {
				fprintf(stderr,
					"podcapd: --ptp4l-domain %s: not a domain from 0 to 255\n",
					optarg);
				return EXIT_USAGE;
			}
			domain_given = true;
			break;
		case 'L':
			lldp_tx = PC_LLDP_TX_DEFAULT_S;
			if (optarg != NULL && pc_lldp_tx_parse_interval(optarg, &lldp_tx) != 0) {
				fprintf(stderr,
					"podcapd: --lldp-tx=%s: not a number of seconds from 1 to "
					"%u\n",
					optarg, PC_LLDP_TX_MAX_S);
				return EXIT_USAGE;
			}
			break;
		case 'V':
			return print_version();
		case 'h': usage(stdout); return EXIT_SUCCESS;
		default: usage(stderr); return EXIT_USAGE;
		}
	}
	if (check != NULL)
		return pc_podmap_check(check, canonical, map_only);
	if (config == NULL || map_only || (domain_given && ptp4l == NULL)) {
		usage(stderr);
		return EXIT_USAGE;
	}

	/* what a restart cannot mend is refused here, as --check-config refuses it */
	struct pc_config cfg;
	struct pc_declared decl;
	/* the endpoint's TLS files, read with the map: a bad one is a bad map */
	struct pc_tls *tls;
	if (pc_podmap_load_run(config, &cfg, &decl, &tls) != 0)
		return EXIT_USAGE;
	/* a tap only observes: it sends nothing, not even its own name */
	if (lldp_tx != 0 && cfg.role != PC_ROLE_SHAPER) {
		fprintf(stderr,
			"podcapd: --lldp-tx: the pod map's role is a tap, which transmits "
			"nothing\n");
		pc_tls_put(tls);
		pc_config_free(&cfg);
		return EXIT_USAGE;
	}
	pc_lldp_tx_enable(lldp_tx);
	pd_signals_install();

	/* the key is read by the signer process only, before DPDK maps anything */
	struct pc_signer signer;
	/* and the TPM, when the pod map asks for attestation (docs/attestation.md) */
	int status = pc_podmap_signer(&cfg, &signer);
	if (status != 0)
		goto out_config;
	status = EXIT_FAILURE;
	uint64_t covered_ns;
	pc_recorder_attestation(&cfg.attestation);
	char origin[PC_ORIGIN_LEN];
	if (pc_recorder_start(cfg.ledger, cfg.appliance_id,
			      pc_config_origin(&cfg, origin, sizeof(origin)), &signer,
			      &covered_ns) != 0)
		goto out_signer;
	if (pd_eal_init(&cfg, argc - optind, argv + optind) != 0)
		goto out_recorder;
	/* the command line overrides where the map's appliance.clock says ptp4l is */
	if (ptp4l == NULL && cfg.clock.enabled) {
		ptp4l = cfg.clock.ptp4l;
		domain = cfg.clock.domain;
	}
	/* a thread: after the signer's fork; a socket path that cannot be is a misconfiguration */
	if (ptp4l != NULL && pc_clock_discipline_start(ptp4l, domain) != 0)
		status = EXIT_USAGE;
	else
		status = pd_run(config, &cfg, &decl, &signer, tls, covered_ns);
	pc_clock_discipline_stop();
	rte_eal_cleanup();
out_recorder:
	/* windows that were counted but never logged: the supervisor must hear of it */
	if (pc_recorder_finish() > 0)
		status = EXIT_FAILURE;
out_signer:
	pc_signer_stop(&signer);
out_config:
	pc_tls_put(tls);
	pc_config_free(&cfg);
	return status;
}
