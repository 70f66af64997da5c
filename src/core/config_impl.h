/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What the files of the pod map loader share. Internal: nothing here is
 * part of include/podcap/config.h.
 */
#ifndef PODCAP_CONFIG_IMPL_H
#define PODCAP_CONFIG_IMPL_H

#include <stddef.h>

#include "podcap/config.h"
#include "podcap/error.h"

/* Prefixes (config_prefix.c) */

/*
 * "address/length", IPv4 or IPv6, with no bits set past the length.
 * Returns 0, or -1 with err saying why; p->mark is left to the caller.
 */
int cfg_parse_prefix(const char *s, struct pc_prefix *p, struct pc_error *err);
/* "10.0.0.0/24", "fd00:0:0:1::/64": as the canonical form writes them. */
void cfg_format_prefix(const struct pc_prefix *p, char *buf, size_t n);
/* IPv4 first, then by address, then shorter first. */
int cfg_cmp_prefix(const struct pc_prefix *a, const struct pc_prefix *b);

/* A prefix of the map, with its pod and its place in the file. */
struct prefix_ref {
	const struct pc_prefix *p;
	unsigned pod;
	unsigned doc;			/* position in the file */
};

/*
 * Of the n prefixes e[] (in file order, doc = index; reordered here), the
 * earliest declared that overlaps one declared before it: returns 1 with
 * e[*later] that prefix and e[*first] the earliest it overlaps; 0 when
 * none overlap; -1 when out of memory.
 */
int cfg_find_overlap(struct prefix_ref *e, unsigned n, unsigned *later,
		     unsigned *first);

/* Ports (config_port.c) */

/*
 * Writes the device a port's devargs name to dev: a PCI address in full
 * form ("0000:3b:00.0", however it was written), else the name as it is.
 * Returns the length of the name in devargs, where its ",key=value"
 * arguments start.
 */
size_t cfg_port_device(const char *devargs, char *dev, size_t n);
/* The value of the port's last iface= argument, "" when it has none. */
void cfg_port_iface(const char *devargs, char *iface, size_t n);

#endif /* PODCAP_CONFIG_IMPL_H */
