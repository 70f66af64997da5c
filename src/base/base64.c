/* SPDX-License-Identifier: BSD-3-Clause */
#include <sodium.h>

#include "base64.h"

static int
in_alphabet(unsigned char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
	       c == '+' || c == '/' || c == '=';
}

int
pc_base64_decode(uint8_t *out, size_t outmax, const char *in, size_t len, size_t *outlen)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (!in_alphabet((unsigned char)in[i]))
			return -1;
	if (sodium_base642bin(out, outmax, in, len, NULL, outlen, NULL,
			      sodium_base64_VARIANT_ORIGINAL) != 0)
		return -1;
	return 0;
}
