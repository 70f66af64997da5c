/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * tlog-witness's monitoring API: GET <prefix>/<origin hash>/checkpoint,
 * the latest checkpoint the witness cosigned for a log (its body, the
 * log's signature lines and the cosignature), so that a monitor can see
 * what the witness holds without the log in between.
 */
#include <string.h>

#include "witness.h"

#define NOTE_TYPE "text/plain; charset=utf-8"
#define HASH_HEX  64

static unsigned
not_found(char *out, size_t outmax, size_t *outlen, const char **ctype)
{
	static const char msg[] = "no checkpoint cosigned for that log\n";

	*outlen = sizeof(msg) - 1 < outmax ? sizeof(msg) - 1 : 0;
	memcpy(out, msg, *outlen);
	*ctype = NOTE_TYPE;
	return 404;
}

unsigned
witness_checkpoint(struct witness *w, const char *hash, size_t hash_len, char *out, size_t outmax,
		   size_t *outlen, const char **ctype)
{
	const struct witness_note *n = NULL;
	char hex[HASH_HEX + 1];
	unsigned status;
	size_t i;

	if (hash_len != HASH_HEX)
		return not_found(out, outmax, outlen, ctype);
	/* The digest is compared as lower-case hex: tlog-witness names no other form. */
	for (i = 0; i < w->nlogs && n == NULL; i++) {
		witness_origin_hash(w->logs[i].origin, hex);
		if (memcmp(hex, hash, HASH_HEX) == 0)
			n = &w->served[i];
	}
	if (n == NULL)
		return not_found(out, outmax, outlen, ctype);
	pthread_mutex_lock(&w->lock);
	if (n->len == 0 || n->len > outmax) {
		status = not_found(out, outmax, outlen, ctype);
	} else {
		memcpy(out, n->text, n->len);
		*outlen = n->len;
		*ctype = NOTE_TYPE;
		status = 200;
	}
	pthread_mutex_unlock(&w->lock);
	return status;
}
