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

#include "log/cosig.h"
#include "base/error.h"
#include "base/keys.h"
#include "log/note.h"
#include "log/tlog_witness.h"
#include "http/tls.h"

#define WITNESS_MAX_LOGS 64
#define WITNESS_NOTE_MAX (PC_NOTE_MAX + PC_COSIG_LINE_MAX) /* a served note, with its NUL */

/* The latest checkpoint a log's witness cosigned, as monitors are served it. */
struct witness_note {
	char text[WITNESS_NOTE_MAX];
	size_t len; /* 0: none (never cosigned, or a state file of v1, which kept no note) */
};

struct witness {
	struct pc_signer_key *key; /* the cosigner's secret key (sodium_malloc) */
	struct pc_witness_log logs[WITNESS_MAX_LOGS];
	struct witness_note served[WITNESS_MAX_LOGS]; /* logs[i]'s, under lock */
	size_t nlogs;
	int dirfd; /* the state directory, locked (flock) while running */
	/*
	 * Held from the check of a request's old size to the answer, over the
	 * state's fsync and rename: two requests cannot interleave and roll
	 * a log back (tlog-witness, "checking ... must be performed atomically").
	 * A monitor's GET reads served[] under it.
	 */
	pthread_mutex_t lock;
	struct pc_tls *tls; /* --tls-cert, --tls-key, --client-ca; NULL for plain HTTP */
};

/* state.c: one file per log, "log-<hex SHA-256 of the origin>", replaced atomically. */
int witness_state_open(struct witness *w, const char *dir, struct pc_error *err);
/* l's size and root, and the note it last cosigned into *note (len 0 if none kept). */
int witness_state_load(struct witness *w, struct pc_witness_log *l, struct witness_note *note,
		       struct pc_error *err);
/* l's new state: the note cosigned at l's size and root (pc_witness_served_note). */
int witness_state_store(struct witness *w, const struct pc_witness_log *l, const char *note,
			size_t note_len, struct pc_error *err);
/* The hex SHA-256 of an origin (64 digits and a NUL): its file's name and its monitoring path. */
void witness_origin_hash(const char *origin, char hex[65]);

/* server.c: libmicrohttpd serving POST /add-checkpoint and GET /<origin hash>/checkpoint. */
struct witness_server;
struct witness_server *witness_serve(struct witness *w, const char *listen, struct pc_error *err);
uint16_t witness_server_port(const struct witness_server *s);
void witness_server_stop(struct witness_server *s);

/*
 * The whole of one request under the lock: decide, cosign, store the state
 * with the cosigned note, then answer. Returns the HTTP status, with the
 * body in out (*outlen bytes) and *ctype its Content-Type. Pure but for
 * the state file and the clock.
 */
unsigned witness_add_checkpoint(struct witness *w, const char *body, size_t len, char *out,
				size_t outmax, size_t *outlen, const char **ctype);

/*
 * monitor.c: GET /<origin hash>/checkpoint (tlog-witness's monitoring
 * API): 200 with the latest note cosigned for that log, 404 when it has
 * none or hash (64 lower-case hex digits) names no log it knows.
 */
unsigned witness_checkpoint(struct witness *w, const char *hash, size_t hash_len, char *out,
			    size_t outmax, size_t *outlen, const char **ctype);

#endif /* PODCAP_WITNESS_H */
