/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * podcap's one error convention.
 *
 * A function that can fail returns -1 (or NULL) and, when its caller passed
 * a struct pc_error (err may be NULL), says why in it: a message to show a
 * person as it is, and for errors in a file (a pod map) the file, the
 * 1-based line and column and the offending line. Callers add their own
 * context with pc_error_prefix() on the way up, and print with
 * pc_error_print() or use err->msg. Nothing in the libraries of src/ prints or exits.
 *
 *	struct pc_error err;
 *	if (pc_ledger_open(dir, origin, &err) == NULL) {
 *		pc_error_print(&err, stderr);
 *		...
 *
 * A verifier's findings about a log (struct pc_verify_failure) are not
 * errors: they are the result of a successful run, collected, not returned.
 */
#ifndef PODCAP_ERROR_H
#define PODCAP_ERROR_H

#include <stdio.h>

#define PC_PATH_LEN    4096
#define PC_ERR_MSG_LEN 512

/* 1-based position of a node in a file; 0 when unknown. */
struct pc_mark {
	unsigned line;
	unsigned col;
};

struct pc_error {
	char file[PC_PATH_LEN];        /* "" when the error is not about a file's content */
	struct pc_mark mark;           /* 0:0 when the error has no position */
	char msg[PC_ERR_MSG_LEN];
	char line_text[256];           /* the offending source line, "" if none */
};

/* Sets a message with no file or position; returns -1 so that `return pc_error_set(...)` reads. */
int pc_error_set(struct pc_error *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The same with ": strerror(errno)" appended (errno as it was on entry). */
int pc_error_errno(struct pc_error *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Puts "<formatted>: " before the message already set; returns -1. */
int pc_error_prefix(struct pc_error *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/*
 * Prints the error and a newline to f: "msg"; "file: msg"; or, with a
 * position, "file:line:col: msg", then the offending line and a caret
 * under the column (as compilers do).
 */
void pc_error_print(const struct pc_error *err, FILE *f);

#endif /* PODCAP_ERROR_H */
