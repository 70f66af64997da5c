/* SPDX-License-Identifier: BSD-3-Clause */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "podcap/config.h"
#include "podcap/error.h"
#include "podcap/hex.h"

#include "podmap.h"

int
pc_podmap_load(const char *path, struct pc_config *cfg)
{
	struct pc_error err;

	if (pc_config_load(path, cfg, &err) != 0) {
		pc_error_print(&err, stderr);
		return -1;
	}
	return 0;
}

int
pc_podmap_check(const char *path, bool canonical)
{
	struct pc_config cfg;
	uint8_t digest[PC_DIGEST_LEN];
	char hex[2 * PC_DIGEST_LEN + 1];

	if (pc_podmap_load(path, &cfg) != 0)
		return -1;
	pc_config_digest(&cfg, digest);
	pc_hex(digest, sizeof(digest), hex);
	if (canonical) {
		size_t n = pc_config_canonical(&cfg, NULL, 0);
		char *buf = malloc(n + 1);
		if (buf != NULL) {
			pc_config_canonical(&cfg, buf, n + 1);
			fwrite(buf, 1, n, stdout);
			free(buf);
		}
	}
	printf("configuration OK\ndigest %s\n", hex);
	pc_config_free(&cfg);
	return 0;
}
