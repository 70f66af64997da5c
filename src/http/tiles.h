/* SPDX-License-Identifier: BSD-3-Clause */
/* The C2SP tlog-tiles side of the verifier endpoint (tiles.c). */
#ifndef PODCAP_HTTP_TILES_H
#define PODCAP_HTTP_TILES_H

#include <stddef.h>

#include <microhttpd.h>

struct pc_ledger;

/* /checkpoint or /tile/...: answered from the ledger's published checkpoint. */
enum MHD_Result pc_http_tiles(struct MHD_Connection *c, const char *method, const char *url,
			      struct pc_ledger *l,
			      size_t (*cosigned)(const char *, size_t, char *, size_t));

#endif /* PODCAP_HTTP_TILES_H */
