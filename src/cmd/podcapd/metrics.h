/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef PODCAPD_METRICS_H
#define PODCAPD_METRICS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Prometheus text of the current state; malloc'd, the caller frees it. */
char *pd_metrics_text(void *ctx, size_t *len);

/*
 * What the control thread tells /metrics of the process, for the alert
 * rules (contrib/prometheus): the realtime it started at (a restart shows
 * as a new value), and whether the systemd watchdog's pings have stopped
 * (a worker stopped looping or the signer stopped answering: systemd is
 * about to restart podcapd).
 */
void pd_metrics_started(uint64_t realtime_ns);
void pd_metrics_watchdog(bool pings_stopped);

#endif /* PODCAPD_METRICS_H */
