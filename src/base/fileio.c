/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "fileio.h"

int
pc_pread_all(int fd, void *buf, size_t len, uint64_t off)
{
	uint8_t *p = buf;

	while (len > 0) {
		ssize_t n = pread(fd, p, len, (off_t)off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		if (n == 0) {
			errno = EIO;
			return -1;
		}
		p += n;
		len -= (size_t)n;
		off += (uint64_t)n;
	}
	return 0;
}

int
pc_pwrite_all(int fd, const void *buf, size_t len, uint64_t off)
{
	const uint8_t *p = buf;

	while (len > 0) {
		ssize_t n = pwrite(fd, p, len, (off_t)off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		p += n;
		len -= (size_t)n;
		off += (uint64_t)n;
	}
	return 0;
}

long
pc_read_small_at(int dirfd, const char *name, char *buf, size_t len)
{
	int fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC);
	size_t got = 0;

	if (fd < 0)
		return -1;
	for (;;) {
		if (got == len) {
			close(fd);
			errno = EFBIG;
			return -1;
		}
		ssize_t n = read(fd, buf + got, len - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			int e = errno;
			close(fd);
			errno = e;
			return -1;
		}
		if (n == 0)
			break;
		got += (size_t)n;
	}
	close(fd);
	return (long)got;
}

char *
pc_read_file(const char *path, size_t max, size_t *len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	size_t cap = 0, got = 0;
	char *buf = NULL;

	if (fd < 0)
		return NULL;
	for (;;) {
		if (got + 1 >= cap) {
			/* room for one byte past max, to tell a file too long, and the NUL */
			size_t want = cap == 0 ? 65536 : cap * 2;
			if (max < SIZE_MAX - 1 && want > max + 2)
				want = max + 2;
			char *p = want > cap ? realloc(buf, want) : NULL;
			if (p == NULL) {
				errno = want > cap ? ENOMEM : EFBIG;
				goto fail;
			}
			buf = p;
			cap = want;
		}
		ssize_t n = read(fd, buf + got, cap - 1 - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			goto fail;
		if (n == 0)
			break;
		got += (size_t)n;
		if (got > max) {
			errno = EFBIG;
			goto fail;
		}
	}
	close(fd);
	buf[got] = '\0';
	*len = got;
	return buf;
fail:;
	int e = errno;
	close(fd);
	free(buf);
	errno = e;
	return NULL;
}

int
pc_replace_file_at(int dirfd, const char *name, const void *data, size_t len, mode_t mode)
{
	char tmp[PATH_MAX];
	int fd;

	if ((size_t)snprintf(tmp, sizeof(tmp), "%s.tmp", name) >= sizeof(tmp)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
	if (fd < 0)
		return -1;
	if (pc_pwrite_all(fd, data, len, 0) < 0 || fsync(fd) < 0) {
		int e = errno;
		close(fd);
		unlinkat(dirfd, tmp, 0);
		errno = e;
		return -1;
	}
	if (close(fd) < 0 || renameat(dirfd, tmp, dirfd, name) < 0)
		return -1;
	return fsync(dirfd);
}
