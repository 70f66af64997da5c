/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * C2SP tlog-tiles paths and hash tiles (src/log/tlog_tiles.h).
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "note.h"
#include "tlog_tiles.h"

/* "x001/x234/067": 0 with *n and the rest of the path in *rest, or -1. */
static int
parse_index(const char *s, uint64_t *n, const char **rest)
{
	uint64_t v = 0, d;

	for (;;) {
		int more = s[0] == 'x';

		if (more)
			s++;
		if (s[0] < '0' || s[0] > '9' || s[1] < '0' || s[1] > '9' || s[2] < '0' ||
		    s[2] > '9')
			return -1;
		d = (uint64_t)(s[0] - '0') * 100 + (uint64_t)(s[1] - '0') * 10 +
		    (uint64_t)(s[2] - '0');
		if (v > (UINT64_MAX - d) / 1000)
			return -1;
		v = v * 1000 + d;
		s += 3;
		if (!more)
			break;
		if (*s++ != '/')
			return -1;
	}
	*n = v;
	*rest = s;
	return 0;
}

int
pc_tile_parse(const char *path, struct pc_tile *t)
{
	const char *p, *rest;
	uint64_t v;
	size_t n;

	memset(t, 0, sizeof(*t));
	if (strncmp(path, "tile/", 5) != 0)
		return -1;
	p = path + 5;
	if (strncmp(p, "entries/", 8) == 0) {
		t->entries = 1;
		p += 8;
	} else {
		n = strcspn(p, "/");
		if (p[n] != '/' || pc_decimal_parse(p, n, &v) != 0 || v > PC_TILE_MAX_LEVEL)
			return -1;
		t->level = (unsigned)v;
		p += n + 1;
	}
	if (parse_index(p, &t->index, &rest) != 0)
		return -1;
	t->width = PC_TILE_WIDTH;
	if (*rest != '\0') {
		if (strncmp(rest, ".p/", 3) != 0 ||
		    pc_decimal_parse(rest + 3, strlen(rest + 3), &v) != 0 || v == 0 ||
		    v >= PC_TILE_WIDTH)
			return -1;
		t->width = (unsigned)v;
	}
	/* one path per tile: no "x000/" in front, nothing else the format allows twice */
	char again[96];
	if (pc_tile_path(t, again, sizeof(again)) == 0 || strcmp(again, path) != 0)
		return -1;
	return 0;
}

size_t
pc_tile_path(const struct pc_tile *t, char *buf, size_t len)
{
	unsigned groups[8], ng = 0;
	uint64_t n = t->index;
	size_t pos;
	int w;

	do {
		groups[ng++] = (unsigned)(n % 1000);
		n /= 1000;
	} while (n > 0);
	w = t->entries ? snprintf(buf, len, "tile/entries/")
		       : snprintf(buf, len, "tile/%u/", t->level);
	if (w < 0 || (size_t)w >= len)
		return 0;
	pos = (size_t)w;
	while (ng-- > 0) {
		w = snprintf(buf + pos, len - pos, ng > 0 ? "x%03u/" : "%03u", groups[ng]);
		if (w < 0 || (size_t)w >= len - pos)
			return 0;
		pos += (size_t)w;
	}
	if (t->width != PC_TILE_WIDTH) {
		w = snprintf(buf + pos, len - pos, ".p/%u", t->width);
		if (w < 0 || (size_t)w >= len - pos)
			return 0;
		pos += (size_t)w;
	}
	return pos;
}

int
pc_tile_exists(const struct pc_tile *t, uint64_t size)
{
	unsigned shift = 8 * t->level;
	uint64_t have = t->level >= 8 ? 0 : size >> shift; /* hashes at this level */

	if (t->index > (UINT64_MAX - t->width) / PC_TILE_WIDTH)
		return 0;
	/*
	 * tlog-tiles: a log MUST serve the partial tiles of every tree size it
	 * made a checkpoint for, so a client holding an older checkpoint (a
	 * witness, a verifier resuming) finds them. podcap computes tiles from
	 * its leaves, so every width the published tree covers is served.
	 */
	return t->index * PC_TILE_WIDTH + t->width <= have;
}

struct offset_leaves {
	pc_leaf_fn leaf;
	void *ctx;
	uint64_t first;
};

static int
offset_leaf(void *arg, uint64_t i, uint8_t out[PC_HASH_LEN])
{
	struct offset_leaves *o = arg;

	return o->leaf(o->ctx, o->first + i, out);
}

int
pc_tile_hashes(const struct pc_tile *t, pc_leaf_fn leaf, void *ctx,
	       uint8_t out[PC_TILE_WIDTH][PC_HASH_LEN])
{
	uint64_t span = UINT64_C(1) << (8 * t->level);
	struct offset_leaves o = { leaf, ctx, 0 };

	for (unsigned i = 0; i < t->width; i++) {
		o.first = (t->index * PC_TILE_WIDTH + i) * span;
		if (pc_merkle_root(offset_leaf, &o, span, out[i]) != 0)
			return -1;
	}
	return 0;
}
