/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Whole reads and writes that survive EINTR and short transfers, and the
 * atomic replacement of a small file. Each returns -1 with errno set; the
 * caller says which file it was (struct pc_error, pc_error_errno).
 */
#ifndef PODCAP_FILEIO_H
#define PODCAP_FILEIO_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* All of len bytes at off, or -1 (EIO when the file ends first). */
int pc_pread_all(int fd, void *buf, size_t len, uint64_t off);
int pc_pwrite_all(int fd, const void *buf, size_t len, uint64_t off);
/* A file under dirfd of at most len - 1 bytes into buf: its length, or -1 (EFBIG if longer). */
long pc_read_small_at(int dirfd, const char *name, char *buf, size_t len);
/*
 * A whole file of at most max bytes, in a buffer it allocates (free it) with
 * a NUL after the last byte; its length in *len. NULL with errno set when it
 * cannot be read (ENOENT, ...), EFBIG when it is longer than max.
 */
char *pc_read_file(const char *path, size_t max, size_t *len);
/*
 * Replaces `name` under dirfd so that a crash leaves the old contents or the
 * new, whole: a "name.tmp" file written and fsynced, renamed over name, and
 * the directory fsynced.
 */
int pc_replace_file_at(int dirfd, const char *name, const void *data, size_t len, mode_t mode);

#endif /* PODCAP_FILEIO_H */
