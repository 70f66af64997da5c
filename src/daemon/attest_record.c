/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/clock.h"
#include "log/record.h"

#include "attest_record.h"
#include "log.h"

/* The IMA list as it is now: malloc'd, or NULL (none, unreadable or too long: logged once). */
static uint8_t *
read_ima(const char *path, uint32_t *len)
{
	static bool warned;
	size_t cap = 1 << 16, n = 0;
	uint8_t *buf = NULL;

	*len = 0;
	if (path[0] == '\0')
		return NULL;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		goto fail;
	for (;;) {
		if (n == cap || buf == NULL) {
			if (buf != NULL)
				cap *= 2;
			uint8_t *nb = cap > PC_ATTEST_IMA_MAX + 1 ? NULL : realloc(buf, cap);
			if (nb == NULL) {
				errno = EFBIG;
				goto fail;
			}
			buf = nb;
		}
		ssize_t r = read(fd, buf + n, cap - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			goto fail;
		if (r == 0)
			break;
		n += (size_t)r;
	}
	close(fd);
	if (n == 0 || memchr(buf, '\0', n) != NULL) {
		free(buf);
		return NULL;
	}
	*len = (uint32_t)n;
	return buf;
fail:
	if (!warned)
		PC_LOG(WARNING, "IMA list %s: %s: quotes go into the log without it\n", path,
		       errno == EFBIG ? "longer than an ATTEST record holds" : strerror(errno));
	warned = true;
	if (fd >= 0)
		close(fd);
	free(buf);
	return NULL;
}

uint8_t *
pc_attest_record(struct pc_signer *signer, const char *appliance_id, const uint8_t build_id[32],
		 const struct pc_attest_due *due, const char *ima_log, size_t *len)
{
	static struct pc_record_attest att;
	struct pc_error err;
	struct pc_record r;

	if (pc_signer_quote(signer, due->digest, &att, &err) != 0) {
		PC_LOG(ERR, "no TPM quote for checkpoint: %s\n", err.msg);
		return NULL;
	}
	att.ima = read_ima(ima_log, &att.ima_len);
	memset(&r, 0, sizeof(r));
	r.type = PC_REC_ATTEST;
	snprintf(r.appliance_id, sizeof(r.appliance_id), "%s", appliance_id);
	r.time_ns = pc_now_ns();
	r.window_start_ns = due->cursor_ns;
	r.window_len_ns = due->window_ns;
	memcpy(r.podmap_digest, due->digest, PC_DIGEST_LEN);
	memcpy(r.build_id, build_id, 32);
	r.attest = &att;
	size_t need = 200 + pc_record_attest_size(&att);
	uint8_t *buf = malloc(need);
	*len = buf != NULL ? pc_record_encode(&r, buf, need) : 0;
	free(att.ima);
	att.ima = NULL;
	if (*len == 0) {
		PC_LOG(ERR, "the ATTEST record does not encode\n");
		free(buf);
		return NULL;
	}
	return buf;
}
