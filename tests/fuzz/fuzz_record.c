/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target for the ledger record decoder (src/log/record.h),
 * which podcap-verify runs on every record a log server sends. Besides
 * memory errors and undefined behaviour, it aborts when a record decodes
 * but does not encode back to exactly the same bytes (the encoding is
 * canonical: two byte strings must never be the same record), or when the
 * decoder lets through what the encoder would refuse; and, for what it
 * refuses, when a type of a later version is read as one this version knows.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "log/record.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* What the decoder refuses may be a later type's record, read as far as version 1 frames it. */
static void
unknown_type(const uint8_t *data, size_t size)
{
	struct pc_record r;
	struct pc_error why;

	why.msg[0] = '\0';
	if (pc_record_decode_unknown(data, size, &r, &why) != 0) {
		if (why.msg[0] == '\0' || r.pods != NULL || r.links != NULL)
			abort();
		return;
	}
	if (strcmp(pc_record_type_name(r.type), "unknown") != 0)
		abort();
	pc_record_free(&r);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pc_record r;
	struct pc_error why;
	uint8_t *buf;

	why.msg[0] = '\0';
	if (pc_record_decode(data, size, &r, &why) != 0) {
		if (why.msg[0] == '\0' || r.pods != NULL || r.links != NULL)
			abort();
		unknown_type(data, size);
		return 0;
	}
	if (pc_record_type_name(r.type) == NULL)
		abort();
	buf = malloc(size + 1);
	if (buf == NULL)
		abort();
	if (pc_record_encode(&r, buf, size + 1) != size || memcmp(buf, data, size) != 0)
		abort();
	/* one byte short is refused, not cut */
	if (size > 0 && pc_record_encode(&r, buf, size - 1) != 0)
		abort();
	free(buf);
	pc_record_free(&r);
	return 0;
}
