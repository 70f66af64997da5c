/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Reading the operator's pod map file, at start, for --check-config and on
 * SIGHUP: what is wrong with it goes to stderr with its file:line:col.
 */
#ifndef PODCAPD_PODMAP_H
#define PODCAPD_PODMAP_H

#include <stdbool.h>

#include "podcap/config.h"

/* Loads and validates path into *cfg: 0, or -1 with the error printed. */
int pc_podmap_load(const char *path, struct pc_config *cfg);
/*
 * --check-config: validates path and prints "configuration OK" and its
 * digest (after its canonical form when `canonical`). 0, or -1 with the
 * error printed.
 */
int pc_podmap_check(const char *path, bool canonical);

#endif /* PODCAPD_PODMAP_H */
