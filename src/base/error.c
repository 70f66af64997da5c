/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <stdarg.h>
#include <string.h>

#include "error.h"

static void
clear(struct pc_error *err)
{
	err->file[0] = '\0';
	err->mark.line = 0;
	err->mark.col = 0;
	err->line_text[0] = '\0';
}

int
pc_error_set(struct pc_error *err, const char *fmt, ...)
{
	va_list ap;

	if (err == NULL)
		return -1;
	clear(err);
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	va_end(ap);
	return -1;
}

int
pc_error_errno(struct pc_error *err, const char *fmt, ...)
{
	int e = errno;
	va_list ap;

	if (err == NULL)
		return -1;
	clear(err);
	va_start(ap, fmt);
	int n = vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	va_end(ap);
	if (n >= 0 && (size_t)n < sizeof(err->msg))
		snprintf(err->msg + n, sizeof(err->msg) - (size_t)n, ": %s", strerror(e));
	errno = e;
	return -1;
}

int
pc_error_prefix(struct pc_error *err, const char *fmt, ...)
{
	char out[2 * PC_ERR_MSG_LEN + 2];
	va_list ap;

	if (err == NULL)
		return -1;
	va_start(ap, fmt);
	int n = vsnprintf(out, PC_ERR_MSG_LEN, fmt, ap);
	va_end(ap);
	if (n < 0)
		return -1;
	size_t head = strlen(out);
	out[head++] = ':';
	out[head++] = ' ';
	size_t tail = strnlen(err->msg, sizeof(err->msg) - 1);
	memcpy(out + head, err->msg, tail);
	out[head + tail] = '\0';
	size_t keep = strnlen(out, sizeof(err->msg) - 1);
	memcpy(err->msg, out, keep);
	err->msg[keep] = '\0';
	return -1;
}

void
pc_error_print(const struct pc_error *err, FILE *f)
{
	const char *s;
	unsigned col;

	if (err->file[0] == '\0') {
		fprintf(f, "%s\n", err->msg);
		return;
	}
	if (err->mark.line == 0) {
		fprintf(f, "%s: %s\n", err->file, err->msg);
		return;
	}
	fprintf(f, "%s:%u:%u: %s\n", err->file, err->mark.line, err->mark.col, err->msg);
	if (err->line_text[0] == '\0')
		return;
	fprintf(f, "%s\n", err->line_text);
	/* keep tabs so the caret lines up; columns count characters */
	for (s = err->line_text, col = 1; *s != '\0' && col < err->mark.col; s++) {
		if (((unsigned char)*s & 0xc0) == 0x80)
			continue;
		fputc(*s == '\t' ? '\t' : ' ', f);
		col++;
	}
	fputs("^\n", f);
}
