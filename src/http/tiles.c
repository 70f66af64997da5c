/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The log as C2SP tlog-tiles, read-only from the ledger beside the /v1 endpoints:
 * /checkpoint (the note, with its cosignatures), hash tiles
 * (/tile/<L>/<N>[.p/<W>]) and entry bundles (/tile/entries/<N>[.p/<W>]),
 * all within the published checkpoint. A bundle holding a record longer
 * than a tlog-tiles entry (65535 bytes) is refused with 500 and a reason:
 * such a log can be read in hash tiles only.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <microhttpd.h>

#include "base/bytes.h"
#include "log/ledger.h"
#include "log/note.h"
#include "log/record.h"
#include "log/tlog_tiles.h"

#include "tiles.h"

#define TEXT_TYPE "text/plain; charset=utf-8"
#define TILE_TYPE "application/octet-stream"

static enum MHD_Result
reply(struct MHD_Connection *c, unsigned status, const char *ctype, const void *body, size_t len,
      const char *cache)
{
	struct MHD_Response *r;
	enum MHD_Result ret;

	r = MHD_create_response_from_buffer(len, (void *)(uintptr_t)body, MHD_RESPMEM_MUST_COPY);
	if (r == NULL)
		return MHD_NO;
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, ctype);
	MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
	MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, cache);
	ret = MHD_queue_response(c, status, r);
	MHD_destroy_response(r);
	return ret;
}

static enum MHD_Result
text(struct MHD_Connection *c, unsigned status, const char *msg)
{
	return reply(c, status, TEXT_TYPE, msg, strlen(msg), "no-store");
}

/* Records 256N ... 256N+W-1, each as a big-endian 16-bit length and its bytes. */
static enum MHD_Result
bundle(struct MHD_Connection *c, struct pc_ledger *l, const struct pc_tile *t)
{
	size_t cap = (size_t)t->width * (2 + 512), len = 0;
	uint8_t *out = malloc(cap), *rec = malloc(PC_RECORD_MAX);
	enum MHD_Result ret;
	char why[128];

	if (out == NULL || rec == NULL) {
		free(out);
		free(rec);
		return text(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory\n");
	}
	for (unsigned i = 0; i < t->width; i++) {
		uint64_t idx = t->index * PC_TILE_WIDTH + i;
		long n = pc_ledger_record(l, idx, rec, PC_RECORD_MAX);

		if (n < 0 || n > PC_TILE_ENTRY_MAX) {
			free(out);
			free(rec);
			snprintf(why, sizeof(why),
				 n < 0 ? "cannot read record %" PRIu64 "\n"
				       : "record %" PRIu64
					 " is longer than a tlog-tiles entry (65535 bytes)\n",
				 idx);
			return text(c, MHD_HTTP_INTERNAL_SERVER_ERROR, why);
		}
		if (len + 2 + (size_t)n > cap) {
			uint8_t *bigger = realloc(out, (len + 2 + (size_t)n) * 2);

			if (bigger == NULL) {
				free(out);
				free(rec);
				return text(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory\n");
			}
			out = bigger;
			cap = (len + 2 + (size_t)n) * 2;
		}
		pc_store_be16(out + len, (uint16_t)n);
		memcpy(out + len + 2, rec, (size_t)n);
		len += 2 + (size_t)n;
	}
	/* a full tile never changes; a partial one is replaced by a wider one */
	ret = reply(c, MHD_HTTP_OK, TILE_TYPE, out, len,
		    t->width == PC_TILE_WIDTH ? "public, max-age=31536000, immutable" : "no-store");
	free(out);
	free(rec);
	return ret;
}

static enum MHD_Result
hash_tile(struct MHD_Connection *c, struct pc_ledger *l, const struct pc_tile *t)
{
	static _Thread_local uint8_t hashes[PC_TILE_WIDTH][PC_HASH_LEN];

	if (pc_tile_hashes(t, pc_ledger_leaf, l, hashes) != 0)
		return text(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "cannot read the tree\n");
	return reply(c, MHD_HTTP_OK, TILE_TYPE, hashes, (size_t)t->width * PC_HASH_LEN,
		     t->width == PC_TILE_WIDTH ? "public, max-age=31536000, immutable"
					       : "no-store");
}

enum MHD_Result
pc_http_tiles(struct MHD_Connection *c, const char *method, const char *url, struct pc_ledger *l,
	      size_t (*cosigned)(const char *, size_t, char *, size_t))
{
	struct pc_tile t;

	if (strcmp(method, MHD_HTTP_METHOD_GET) != 0 && strcmp(method, MHD_HTTP_METHOD_HEAD) != 0)
		return text(c, MHD_HTTP_METHOD_NOT_ALLOWED, "the log is read-only: GET or HEAD\n");
	if (strcmp(url, "/checkpoint") == 0) {
		char note[PC_NOTE_MAX], with[PC_NOTE_MAX + 2048];
		long n = pc_ledger_checkpoint(l, note, sizeof(note));
		size_t m;

		if (n <= 0)
			return text(c, n < 0 ? MHD_HTTP_INTERNAL_SERVER_ERROR : MHD_HTTP_NOT_FOUND,
				    n < 0 ? "cannot read the checkpoint\n" : "no checkpoint yet\n");
		m = cosigned != NULL ? cosigned(note, (size_t)n, with, sizeof(with)) : 0;
		return m > 0 ? reply(c, MHD_HTTP_OK, TEXT_TYPE, with, m, "no-store")
			     : reply(c, MHD_HTTP_OK, TEXT_TYPE, note, (size_t)n, "no-store");
	}
	if (pc_tile_parse(url + 1, &t) != 0)
		return text(c, MHD_HTTP_NOT_FOUND, "not a tlog-tiles path\n");
	if (!pc_tile_exists(&t, pc_ledger_published_size(l)))
		return text(c, MHD_HTTP_NOT_FOUND, "no such tile in the published tree\n");
	return t.entries ? bundle(c, l, &t) : hash_tile(c, l, &t);
}
