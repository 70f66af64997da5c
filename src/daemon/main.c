/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * podcapd: the inline pod-uplink cap.
 *
 *   podcapd --config FILE [-- EAL options]
 *   podcapd --check-config FILE [--canonical]
 *   podcapd --version
 *
 * Wiring only: the pod map, the signer (forked before DPDK maps anything),
 * the recorder, the EAL, then run.c until a stop; and back down in reverse.
 */
#include <getopt.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <rte_eal.h>

#include "podcap/buildid.h"
#include "podcap/config.h"
#include "podcap/origin.h"
#include "podcap/clock.h"
#include "podcap/error.h"

#include "declared.h"
#include "eal.h"
#include "podmap.h"
#include "recorder.h"
#include "run.h"
#include "signals.h"
#include "signer.h"

#define EXIT_USAGE 2

static void
usage(FILE *f)
{
	fprintf(f,
		"usage: podcapd --config FILE [-- EAL options]\n"
		"       podcapd --check-config FILE [--canonical]\n"
		"\n"
		"  --config FILE        run with the pod map FILE\n"
		"  --check-config FILE  validate FILE, print 'configuration OK' and its digest\n"
		"  --canonical          with --check-config: also print the canonical form\n"
		"  --version            print the version and the build id\n"
		"\n"
		"Signals: SIGINT/SIGTERM stop, SIGHUP reloads the pod map (in force from the next "
		"window).\n");
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

/* The pod map to run: it must name the signing key and the ledger. */
static int
load_config(const char *path, struct pc_config *cfg)
{
	if (pc_podmap_load(path, cfg) != 0)
		return -1;
	if (cfg->signing_key[0] == '\0' || cfg->ledger[0] == '\0') {
		fprintf(stderr, "%s: appliance.signing_key and appliance.ledger are required: "
			"a cap that no one can verify is a misconfiguration\n", path);
		pc_config_free(cfg);
		return -1;
	}
	return 0;
}

int
main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "check-config", required_argument, NULL, 'n' },
		{ "canonical", no_argument, NULL, 'C' },
		{ "version", no_argument, NULL, 'V' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *config = NULL, *check = NULL;
	bool canonical = false;
	int c;

	while ((c = getopt_long(argc, argv, "c:n:h", opts, NULL)) != -1) {
		switch (c) {
		case 'c': config = optarg; break;
		case 'n': check = optarg; break;
		case 'C': canonical = true; break;
		case 'V':
			return print_version();
		case 'h': usage(stdout); return EXIT_SUCCESS;
		default: usage(stderr); return EXIT_USAGE;
		}
	}
	if (check != NULL)
		return pc_podmap_check(check, canonical) == 0 ? EXIT_SUCCESS : EXIT_USAGE;
	if (config == NULL) {
		usage(stderr);
		return EXIT_USAGE;
	}

	struct pc_config cfg;
	if (load_config(config, &cfg) != 0)
		return EXIT_USAGE;
	/* with appliance.auditor_keys: only a map an auditor declared, while it is in force */
	struct pc_declared decl;
	struct pc_error err;
	enum pc_decl_refusal why;
	if (pc_declared_load(config, &cfg, pc_now_ns(), &decl, &why, &err) != 0) {
		pc_error_prefix(&err, "podcapd: refusing to run %s", config);
		pc_error_print(&err, stderr);
		pc_config_free(&cfg);
		return EXIT_USAGE;
	}
	pc_signals_install();

	/* the key is read by the signer process only, before DPDK maps anything */
	struct pc_signer signer;
	/* and the TPM, when the pod map asks for attestation (docs/attestation.md) */
	int status = pc_signer_spawn_attest(cfg.signing_key, &cfg.attestation, &signer, &err);
	if (status != 0) {
		pc_error_prefix(&err, "podcapd: signing key");
		pc_error_print(&err, stderr);
		/* a key refused is a misconfiguration, like a bad pod map */
		status = status == -2 ? EXIT_USAGE : EXIT_FAILURE;
		goto out_config;
	}
	status = EXIT_FAILURE;
	uint64_t covered_ns;
	pc_recorder_attestation(&cfg.attestation);
	char origin[PC_ORIGIN_LEN];
	if (pc_recorder_start(cfg.ledger, cfg.appliance_id,
			      pc_config_origin(&cfg, origin, sizeof(origin)), &signer,
			      &covered_ns) != 0)
		goto out_signer;
	if (pc_eal_init(&cfg, argc - optind, argv + optind) != 0)
		goto out_recorder;
	status = pc_run(config, &cfg, &decl, &signer, covered_ns);
	rte_eal_cleanup();
out_recorder:
	/* windows that were counted but never logged: the supervisor must hear of it */
	if (pc_recorder_finish() > 0)
		status = EXIT_FAILURE;
out_signer:
	pc_signer_stop(&signer);
out_config:
	pc_config_free(&cfg);
	return status;
}
