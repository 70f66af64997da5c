/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The signer: a small process of its own, forked before DPDK starts, that
 * alone reads and holds the appliance's Ed25519 secret key. podcapd, which
 * parses hostile frames, only ever sees signatures.
 *
 * It talks over a SOCK_SEQPACKET socketpair with fixed-size messages whose
 * exact length it checks. It signs only checkpoints of its own log origin,
 * and never one that would roll the log back or fork it (a smaller tree, or
 * the same size with another root) — even if podcapd were compromised.
 * A second socketpair carries only liveness probes, which it echoes at
 * once without touching the key, so that podcapd can tell a signer that
 * stopped answering (stopped, stuck) before it next needs a signature.
 */
#ifndef PODCAPD_SIGNER_H
#define PODCAPD_SIGNER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "base/error.h"
#include "podmap/config.h"
#include "base/keys.h"
#include "log/record.h"

struct pc_signer {
	int fd;
	pid_t pid;
	struct pc_verifier_key vk;   /* the public half, sent by the signer at start */
	bool lost;                   /* it died, or failed to answer: never used again */
	int status;                  /* its wait status once reaped */
	/*
	 * The liveness probes, control thread only (pc_signer_answers): their
	 * socket, the number of the last one sent, and whether it is unanswered.
	 */
	int probe_fd;
	uint32_t probe_seq;
	bool probe_pending;
};

/*
 * Forks the signer, which loads key_path. Returns 0 and fills *s; -2 when
 * the signer refused the key, with its own message (bad mode, owner,
 * unparseable key, ...) in err; -1 when it could not be started.
 */
int pc_signer_spawn(const char *key_path, struct pc_signer *s, struct pc_error *err);
/*
 * The same, and when att is enabled the signer also opens that TPM and
 * loads the AK (src/tpm): a TPM that cannot be opened is refused (-2).
 */
int pc_signer_spawn_attest(const char *key_path, const struct pc_attestation *att,
			   struct pc_signer *s, struct pc_error *err);
/*
 * A TPM quote of the last checkpoint the signer signed, whose qualifying
 * data commits to that checkpoint, the verifier key, the signer's build id
 * and podmap_digest (src/log/attest.h): fills out but for the IMA
 * list. 0, or -1 with err (as pc_signer_sign for a lost signer).
 */
int pc_signer_quote(struct pc_signer *s, const uint8_t podmap_digest[32],
		    struct pc_record_attest *out, struct pc_error *err);
/*
 * Signs a checkpoint body: 0 and sig, or -1 with the refusal in err. A
 * signer that has exited, or does not answer within 10 s, is killed and
 * marked lost.
 */
int pc_signer_sign(struct pc_signer *s, const char *body, size_t len, uint8_t sig[64],
		   struct pc_error *err);
/*
 * Whether the signer is still there (reaps it when it died). Once it is
 * lost nothing can be signed any more: podcapd stops, and its restart forks
 * a fresh signer from a fresh executable (see docs/design.md).
 */
bool pc_signer_alive(struct pc_signer *s);
/*
 * Whether the signer answers: alive, and it has answered the liveness
 * probe sent by the previous call; then sends the next probe. Never
 * blocks: the signer has the time between two calls to answer, and until
 * it does every call says no. Control thread only (the watchdog, run.c).
 */
bool pc_signer_answers(struct pc_signer *s);
/* "it was killed by signal 9", ... for the log, after pc_signer_alive() said no. */
void pc_signer_describe_end(const struct pc_signer *s, char *buf, size_t len);
/* Closes the socket; the signer wipes its key and exits. */
void pc_signer_stop(struct pc_signer *s);

#endif /* PODCAPD_SIGNER_H */
