/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef PODCAPD_METRICS_H
#define PODCAPD_METRICS_H

#include <stddef.h>

/* Prometheus text of the current state; malloc'd, the caller frees it. */
char *pc_metrics_text(void *ctx, size_t *len);

#endif /* PODCAPD_METRICS_H */
