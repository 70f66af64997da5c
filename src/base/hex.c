/* SPDX-License-Identifier: BSD-3-Clause */
#include <sodium.h>

#include "hex.h"

void
pc_hex(const uint8_t *bytes, size_t n, char *buf)
{
	sodium_bin2hex(buf, 2 * n + 1, bytes, n);
}

bool
pc_unhex(const char *s, size_t len, uint8_t *out, size_t n)
{
	size_t got;
	const char *end;

	if (len != 2 * n)
		return false;
	return sodium_hex2bin(out, n, s, len, NULL, &got, &end) == 0 && got == n && end == s + len;
}
