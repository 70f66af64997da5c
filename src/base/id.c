/* SPDX-License-Identifier: BSD-3-Clause */
#include <string.h>

#include "id.h"

static bool
id_char(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '.' || c == '_' || c == '-';
}

bool
pc_id_valid_bytes(const uint8_t *s, size_t n)
{
	if (n < 1 || n >= PC_ID_LEN)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!id_char(s[i]))
			return false;
	return true;
}

bool
pc_id_valid(const char *s)
{
	return pc_id_valid_bytes((const uint8_t *)s, strnlen(s, PC_ID_LEN));
}
