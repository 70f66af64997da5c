/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * podcap-witness: a C2SP tlog-witness for the logs it is given. What its
 * files share.
 */
#ifndef PODCAP_WITNESS_H
#define PODCAP_WITNESS_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "podcap/error.h"
#include "podcap/keys.h"
#include "podcap/tlog_witness.h"
#include "podcap/tls.h"

#define WITNESS_MAX_LOGS 64

struct witness {
	struct pc_signer_key *key; /* the cosigner's secret key (sodium_malloc) */
	struct pc_witness_log logs[WITNESS_MAX_LOGS];
	size_t nlogs;
	int dirfd; /* the state directory, locked (flock) while running */
	/*
	 * Held from the check of a request's old size to the answer, over the
	 * state's fsync and rename: two requests cannot interleave and roll
	 * a log back (tlog-witness, "checking ... must be performed atomically").
	 */
	pthread_mutex_t lock;
	struct pc_tls *tls; /* --tls-cert, --tls-key, --client-ca; NULL for plain HTTP */
};

/* state.c: one file per log, "log-<hex SHA-256 of the origin>", replaced atomically. */
int witness_state_open(struct witness *w, const char *dir, struct pc_error *err);
int witness_state_load(struct witness *w, struct pc_witness_log *l, struct pc_error *err);
int witness_state_store(struct witness *w, const struct pc_witness_log *l, struct pc_error *err);

/* tls.c: w->tls's options into o[] (and MHD_USE_TLS into *flags): how many, 0 without. */
struct MHD_OptionItem;
struct MHD_Connection;
size_t witness_tls_options(struct witness *w, struct MHD_OptionItem *o, unsigned *flags);
/* The 403 body for a client --client-ca does not vouch for, or NULL to serve it. */
const char *witness_tls_refused(struct witness *w, struct MHD_Connection *c);

/* server.c: libmicrohttpd serving POST /add-checkpoint. */
struct witness_server;
struct witness_server *witness_serve(struct witness *w, const char *listen, struct pc_error *err);
uint16_t witness_server_port(const struct witness_server *s);
void witness_server_stop(struct witness_server *s);

/*
 * The whole of one request under the lock: decide, store, cosign. Returns
 * the HTTP status, with the body in out (*outlen bytes) and *ctype its
 * Content-Type. Pure but for the state file and the clock.
 */
unsigned witness_add_checkpoint(struct witness *w, const char *body, size_t len, char *out,
				size_t outmax, size_t *outlen, const char **ctype);

#endif /* PODCAP_WITNESS_H */
