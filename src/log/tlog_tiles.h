/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * C2SP tlog-tiles (https://c2sp.org/tlog-tiles): the paths of hash tiles
 * and entry bundles, and the hashes a tile holds, over a tree given by its
 * leaf hashes. Pure: no I/O beyond the leaf callback.
 *
 *   tile/<L>/<N>[.p/<W>]        hash tile: the W (256 when full) hashes of
 *                               level 8L, from index 256N
 *   tile/entries/<N>[.p/<W>]    entry bundle: entries 256N ... 256N+W-1
 *
 * <N> is written in groups of three digits, every group but the last
 * prefixed "x": 1234067 is x001/x234/067.
 */
#ifndef PODCAP_TLOG_TILES_H
#define PODCAP_TLOG_TILES_H

#include <stddef.h>
#include <stdint.h>

#include "merkle.h"

#define PC_TILE_WIDTH     256
#define PC_TILE_MAX_LEVEL 7     /* 2^(8 * 8) leaves would be past any tree here */
#define PC_TILE_ENTRY_MAX 65535 /* an entry's length is a 16-bit number */

struct pc_tile {
	int entries; /* 1: an entry bundle; 0: a hash tile of level `level` */
	unsigned level;
	uint64_t index;
	unsigned width; /* 1 ... 256 */
};

/* path without the leading '/': 0 with *t, or -1 when it is not a tile path. */
int pc_tile_parse(const char *path, struct pc_tile *t);
/* Writes the path of t (no leading '/') into buf; its length, or 0 if it does not fit. */
size_t pc_tile_path(const struct pc_tile *t, char *buf, size_t len);
/*
 * Whether the tree of `size` leaves has t: its W hashes (or entries) all
 * exist. A full tile's width is 256; a partial one's any the tree covers,
 * so those of every earlier checkpoint are still served.
 */
int pc_tile_exists(const struct pc_tile *t, uint64_t size);
/* The hashes of hash tile t: 0, or -1 when a leaf cannot be read. */
int pc_tile_hashes(const struct pc_tile *t, pc_leaf_fn leaf, void *ctx,
		   uint8_t out[PC_TILE_WIDTH][PC_HASH_LEN]);

#endif /* PODCAP_TLOG_TILES_H */
