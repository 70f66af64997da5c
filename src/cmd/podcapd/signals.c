/* SPDX-License-Identifier: BSD-3-Clause */
#include <signal.h>
#include <stdbool.h>

#include "signals.h"

static volatile sig_atomic_t got_stop;
static volatile sig_atomic_t got_reload;

static void
on_signal(int sig)
{
	if (sig == SIGHUP)
		got_reload = 1;
	else
		got_stop = 1;
}

void
pd_signals_install(void)
{
	struct sigaction sa = { .sa_handler = on_signal };

	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
}

bool
pd_signals_stop(void)
{
	return got_stop;
}

bool
pd_signals_reload(void)
{
	return got_reload;
}

void
pd_signals_reload_taken(void)
{
	got_reload = 0;
}
