/* SPDX-License-Identifier: BSD-3-Clause */
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#if HAVE_LIBSYSTEMD
#include <systemd/sd-daemon.h>
#endif

#include "daemon/log.h"
#include "sd_notify.h"

#if HAVE_LIBSYSTEMD

int
pd_sd_notifyf(const char *fmt, ...)
{
	static bool warned;
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	int r = sd_notify(0, msg);
	if (r < 0 && !warned) {
		PC_LOG(WARNING, "cannot notify systemd: %s; further failures are not logged\n",
		       strerror(-r));
		warned = true;
	}
	return r;
}

uint64_t
pd_sd_watchdog_ns(void)
{
	uint64_t usec = 0;
	int r = sd_watchdog_enabled(0, &usec);

	if (r < 0)
		PC_LOG(WARNING, "WATCHDOG_USEC is not understood (%s): no watchdog pings\n",
		       strerror(-r));
	return r > 0 ? usec * 1000 : 0;
}

#else /* no libsystemd: podcapd runs, it only never notifies */

int
pd_sd_notifyf(const char *fmt, ...)
{
	(void)fmt;
	return 0;
}

uint64_t
pd_sd_watchdog_ns(void)
{
	return 0;
}

#endif
