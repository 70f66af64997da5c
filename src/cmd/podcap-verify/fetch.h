/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Where podcap-verify reads a log from (cmd/podcap-verify/fetch.c): an
 * appliance's endpoint over HTTP or HTTPS (--url, a tap's URL) or a ledger
 * directory (--ledger, a tap's DIR), each record on its way to the
 * verifier through vf_take_record. An unreachable server, a response that
 * is not one, an unreadable ledger: exit 2, as every I/O error. The
 * program's own, not a library's: nothing outside src/cmd/podcap-verify
 * includes it.
 */
#ifndef PODCAP_VERIFY_FETCH_H
#define PODCAP_VERIFY_FETCH_H

#include <stddef.h>

#include "verify/verify.h"

#include "tls.h"

/*
 * The log at url as of the checkpoint cp (cp_len bytes), or the newest the
 * server offers when cp is NULL: its records after those v resumed at, and
 * the consistency proof from the size v trusts.
 */
void vf_fetch_url(struct pc_verify *v, const char *url, const struct vf_tls *tls, const char *cp,
		  size_t cp_len);
/* The same from a ledger directory, opened read-only. */
void vf_fetch_ledger(struct pc_verify *v, const char *dir, const char *cp, size_t cp_len);
/* A tap's log, from a URL (http://, https://) or a directory, as of its newest checkpoint. */
void vf_fetch_log(struct pc_verify *v, const char *source, const struct vf_tls *tls);

#endif /* PODCAP_VERIFY_FETCH_H */
