/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A fixed credential set (http/tls.h, pc_tls_load_files) on a
 * libmicrohttpd server of its own, as podcap-witness and podcap-monitor
 * serve: the daemon's TLS options, each connection's session set up
 * before its handshake, and whether a request's client may be served.
 * podcapd's endpoint (http.c) swaps sets on SIGHUP and decides per route:
 * it does not use this.
 *
 *	struct MHD_OptionItem o[PC_MHD_TLS_OPTIONS + 1];
 *	o[pc_mhd_tls_options(t, o, &flags)] = end;    t outlives the daemon
 *	no = pc_mhd_tls_refused(t, c);                in each request: 403 no
 */
#ifndef PODCAP_MHD_TLS_H
#define PODCAP_MHD_TLS_H

#include <stddef.h>

#include "tls.h"

struct MHD_OptionItem;
struct MHD_Connection;

/* The most options pc_mhd_tls_options writes. */
#define PC_MHD_TLS_OPTIONS 4

/*
 * t's certificate, key and priorities, and the notification that sets up
 * each connection's session, into o[] (MHD_USE_TLS into *flags): how many,
 * 0 when t is NULL (plain HTTP).
 */
size_t pc_mhd_tls_options(struct pc_tls *t, struct MHD_OptionItem *o, unsigned *flags);
/*
 * The 403 body for a client the set's client CA does not vouch for (none,
 * untrusted, expired), or NULL to serve it: always NULL without t or
 * without a client CA.
 */
const char *pc_mhd_tls_refused(struct pc_tls *t, struct MHD_Connection *c);

#endif /* PODCAP_MHD_TLS_H */
