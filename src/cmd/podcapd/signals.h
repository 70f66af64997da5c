/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * SIGINT and SIGTERM ask podcapd to stop, SIGHUP to reload the pod map.
 * The handlers only set flags; the control thread polls them between its
 * short sleeps (run.c), so nothing else is done in signal context.
 */
#ifndef PODCAPD_SIGNALS_H
#define PODCAPD_SIGNALS_H

#include <stdbool.h>

/* Installs the handlers; once, at start. */
void pd_signals_install(void);
/* Whether a stop was asked. */
bool pd_signals_stop(void);
/* Whether a reload was asked that has not been taken yet. */
bool pd_signals_reload(void);
/* Takes the reload: one asked after this is another reload. */
void pd_signals_reload_taken(void);

#endif /* PODCAPD_SIGNALS_H */
