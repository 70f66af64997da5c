/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef PODCAPD_EAL_H
#define PODCAPD_EAL_H

#include "podmap/config.h"

/*
 * Builds the EAL command line from the pod map (lcores, memory, file prefix,
 * one device argument per port, extra arguments) followed by `extra`, and
 * initialises the EAL. Falls back to --no-huge when the machine has no free
 * hugepages, and says so. Returns 0 or -1.
 */
int pd_eal_init(const struct pc_config *cfg, int nextra, char **extra);

/* The port id of a device string of the pod map, or -1. */
int pd_eal_port_of(const char *devargs);

#endif /* PODCAPD_EAL_H */
