/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Reloading the pod map on SIGHUP: the new table is built aside while the
 * old one runs, and takes effect at a window boundary (control.h attaches
 * it), so that every window is accounted under exactly one pod map.
 */
#ifndef PODCAPD_RELOAD_H
#define PODCAPD_RELOAD_H

#include <stddef.h>
#include <stdint.h>

#include "shape/classify.h"
#include "podmap/config.h"

#include "table.h"

/*
 * Why a reload from a to b is refused, written to why (n bytes), or NULL if
 * it is not: a reload may change pods and caps, not what the EAL, the ports,
 * the endpoint's socket and the log were made from, nor who may declare
 * maps. Which keys those are is each key's row in podmap/fields.c.
 */
const char *pc_reload_incompatible(const struct pc_config *a, const struct pc_config *b, char *why,
				   size_t n);
/*
 * Loads the pod map at path and builds its table into *pending, linked to
 * the table in force `cur`. A valid map replaces the pending table, which
 * is freed first; a bad or refused one leaves *pending as it was. Either
 * way the log says what happened. The map's TLS files are read and checked
 * before it is accepted: *tls is its credential set for the endpoint to
 * take now (the caller's reference), NULL when refused or without TLS. Control thread only, and never with a
 * pending table attached to the armed boundary (detach it first).
 */
struct pc_tls;
void pc_reload_prepare(const char *path, const struct pc_table *cur,
		       const uint16_t (*ports)[PC_DIR_COUNT], unsigned generation,
		       struct pc_table **pending, struct pc_tls **tls);

#endif /* PODCAPD_RELOAD_H */
