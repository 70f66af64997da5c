/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A SYNC record's fields from what the clock discipline's polls of a
 * window came to (discipline/window.h): the figures the verifier holds to
 * its clock offset (docs/log-format.md, "SYNC"). Pure.
 */
#ifndef PODCAPD_SYNC_RECORD_H
#define PODCAPD_SYNC_RECORD_H

#include "discipline/window.h"
#include "log/record.h"

void pc_sync_fill(struct pc_record_sync *s, const struct pc_clock_window *w);

#endif /* PODCAPD_SYNC_RECORD_H */
