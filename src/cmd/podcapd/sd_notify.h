/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What podcapd tells systemd (Type=notify, sd_notify(3)): READY=1 once
 * every port forwards, a STATUS= line at each window close, RELOADING=1
 * then READY=1 around a reload, STOPPING=1, and WATCHDOG=1 while the
 * workers and the signer are alive (run.c). Sent through libsystemd, so
 * nothing is sent when NOTIFY_SOCKET is unset (not started by systemd);
 * a podcapd built without libsystemd never sends anything.
 */
#ifndef PODCAPD_SD_NOTIFY_H
#define PODCAPD_SD_NOTIFY_H

#include <stdint.h>

/*
 * Sends the newline-separated assignments of fmt. Returns what
 * sd_notify(3) does: > 0 sent, 0 nowhere to send it, < 0 a negative errno
 * (only the first failure is logged: the watchdog pings would repeat it).
 */
int pd_sd_notifyf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/*
 * The watchdog interval systemd expects pings within (WatchdogSec=, passed
 * as WATCHDOG_USEC for this pid), in ns; 0 when there is none.
 */
uint64_t pd_sd_watchdog_ns(void);

#endif /* PODCAPD_SD_NOTIFY_H */
