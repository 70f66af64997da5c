/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <unistd.h>

#include <sodium.h>

#include "buildid.h"
#include "error.h"
#include "hex.h"

int
pc_build_id(uint8_t out[PC_BUILD_ID_LEN])
{
	crypto_generichash_state h;
	uint8_t buf[65536];
	ssize_t n;

	/* libsodium picks its BLAKE2b implementation here; calling it again is harmless */
	if (sodium_init() < 0) {
		errno = ENOSYS;
		return -1;
	}
	int fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	crypto_generichash_init(&h, NULL, 0, PC_BUILD_ID_LEN);
	for (;;) {
		n = read(fd, buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		crypto_generichash_update(&h, buf, (size_t)n);
	}
	int saved = errno;
	close(fd);
	if (n < 0) {
		errno = saved;
		return -1;
	}
	crypto_generichash_final(&h, out, PC_BUILD_ID_LEN);
	return 0;
}

int
pc_version_print(FILE *f, const char *prog, const char *version, struct pc_error *err)
{
	uint8_t id[PC_BUILD_ID_LEN];
	char hex[2 * PC_BUILD_ID_LEN + 1];

	if (pc_build_id(id) != 0)
		return pc_error_errno(err, "cannot hash /proc/self/exe for the build id");
	pc_hex(id, sizeof(id), hex);
	fprintf(f, "%s %s build %s\n", prog, version, hex);
	if (fflush(f) != 0)
		return pc_error_errno(err, "cannot write the version");
	return 0;
}
