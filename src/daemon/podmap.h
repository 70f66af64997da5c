/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Reading the operator's pod map file, at start, for --check-config and on
 * SIGHUP: what is wrong with it goes to stderr with its file:line:col.
 *
 * A start refuses before DPDK, with exit status 2, what a restart cannot
 * mend: the pod map, its auditor's declaration, a ledger directory podcapd
 * could not claim, a signing key (or TPM) the signer refuses and a key
 * named for another log. --check-config runs the same checks, through the
 * same functions, so that it refuses exactly what the start would, with
 * the same message; it changes nothing (no ledger is made or locked).
 */
#ifndef PODCAPD_PODMAP_H
#define PODCAPD_PODMAP_H

#include <stdbool.h>

#include "podmap/config.h"

#include "declared.h"
#include "signer.h"

struct pc_tls;
/*
 * Loads and validates path into *cfg, and with appliance.tls reads and
 * checks its files too (http/tls.h): into *tls when tls is not NULL
 * (NULL without TLS), else dropped. 0, or -1 with the error printed
 * (file:line:col, also for a TLS file GnuTLS refuses).
 */
int pc_podmap_load(const char *path, struct pc_config *cfg, struct pc_tls **tls);
/*
 * The pod map to run: loaded, with appliance.signing_key and
 * appliance.ledger, and under its declaration (*decl) when it names
 * auditor keys; its TLS set into *tls as pc_podmap_load. 0, or -1 with the
 * refusal printed and *cfg freed.
 */
int pc_podmap_load_run(const char *path, struct pc_config *cfg, struct pc_declared *decl,
		       struct pc_tls **tls);
/*
 * Forks the signer on cfg's key (and TPM), checks that the key is named
 * for cfg's log and that the ledger directory can hold that log
 * (pc_ledger_check). 0 with *signer running; otherwise the refusal printed
 * and the exit status: 2 for a misconfiguration, 1 for a signer that could
 * not be started.
 */
int pc_podmap_signer(const struct pc_config *cfg, struct pc_signer *signer);
/*
 * --check-config: the checks of pc_podmap_load_run and pc_podmap_signer
 * (only the pod map's own with map_only), then "configuration OK" and the
 * digest, after its canonical form when `canonical`. 0, or the exit status
 * with the refusal printed.
 */
int pc_podmap_check(const char *path, bool canonical, bool map_only);

#endif /* PODCAPD_PODMAP_H */
