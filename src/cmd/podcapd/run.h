/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * podcapd's run, once the EAL is up: workers, mbuf pool, ports, the table
 * of the pod map, the verifier endpoint; then the control thread's loop
 * (window boundaries, reloads, the signer's watch, systemd's notifications
 * and watchdog) until a stop is asked or the signer is lost; then the last
 * window and STOP.
 */
#ifndef PODCAPD_RUN_H
#define PODCAPD_RUN_H

#include <stdint.h>

#include "podmap/config.h"

#include "daemon/declared.h"
#include "daemon/signer.h"

/*
 * Runs the pod map cfg, loaded from path (read again on SIGHUP). Its table
 * takes cfg's arrays over once built; pc_config_free(cfg) is safe after
 * either way. covered_ns: the realtime up to which the ledger already
 * accounts for time (pc_recorder_start); decl: the declaration it runs
 * under; tls: the endpoint's TLS set (http/tls.h), NULL for plain HTTP,
 * the caller's to drop after. Returns the exit status: EXIT_FAILURE when it could not start,
 * the signer was lost or the declaration in force expired.
 */
struct pc_tls;
int pd_run(const char *path, struct pc_config *cfg, const struct pc_declared *decl,
	   struct pc_signer *signer, struct pc_tls *tls, uint64_t covered_ns);

#endif /* PODCAPD_RUN_H */
