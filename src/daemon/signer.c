/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <sodium.h>

#include "base/error.h"
#include "base/keys.h"
#include "log/merkle.h"
#include "log/note.h"

#include "signer.h"
#include "signer_attest.h"

#define SIGNER_MAGIC_HELLO 0x70636831u  /* "pch1" */
#define SIGNER_MAGIC_REQ   0x70637231u  /* "pcr1" */
#define SIGNER_MAGIC_RESP  0x70637331u  /* "pcs1" */
#define SIGNER_MAGIC_PROBE 0x70637031u  /* "pcp1" */
#define SIGNER_MAGIC_ALIVE 0x70636131u  /* "pca1" */
#define SIGNER_MAGIC_QUOTE  0x70637131u  /* "pcq1" */
#define SIGNER_MAGIC_QUOTED 0x70635131u  /* "pcQ1" */
#define SIGNER_BODY_MAX    2048
#define SIGNER_ERR_MAX     256
#define SIGNER_TIMEOUT_S   10    /* a signer that takes longer is treated as dead */

struct signer_hello {
	uint32_t magic;
	int32_t status;              /* 0, or -1 with err */
	char name[PC_KEY_NAME_LEN];
	uint32_t id;
	uint8_t pk[32];
	char err[SIGNER_ERR_MAX];
};

struct signer_req {
	uint32_t magic;
	uint32_t len;
	char body[SIGNER_BODY_MAX];
};

struct signer_resp {
	uint32_t magic;
	int32_t status;
	uint8_t sig[64];
	char err[SIGNER_ERR_MAX];
};

/* A TPM quote of the last checkpoint signed (signer_attest.h), and its answer. */
struct signer_quote_req {
	uint32_t magic;
	uint8_t podmap_digest[32];
};

struct signer_quote_resp {
	uint32_t magic;
	int32_t status;
	struct pc_record_attest att; /* ima is never sent: NULL on arrival */
	char err[SIGNER_ERR_MAX];
};

/* A liveness probe, and its answer: the same numbered message echoed. */
struct signer_probe {
	uint32_t magic;
	uint32_t seq;
};

/* What the signer has signed so far: it never signs a rollback or a fork. */
struct signer_state {
	uint64_t size;
	uint8_t root[PC_HASH_LEN];
	int any;
	struct signer_tpm *tpm; /* NULL without appliance.attestation */
	struct pc_verifier_key vk;
};

static int
check_request(const struct pc_signer_key *k, struct signer_state *st, const struct signer_req *req,
	      struct pc_error *err)
{
	struct pc_checkpoint cp;

	if (req->magic != SIGNER_MAGIC_REQ || req->len == 0 || req->len > SIGNER_BODY_MAX)
		return pc_error_set(err, "malformed request");
	if (pc_checkpoint_parse_body(req->body, req->len, &cp, err) != 0)
		return pc_error_prefix(err, "not a checkpoint");
	if (strcmp(cp.origin, k->name) != 0)
		return pc_error_set(err, "origin '%.80s' is not this key's log '%.80s'", cp.origin,
				    k->name);
	if (st->any && cp.size < st->size)
		return pc_error_set(err, "refusing to sign size %lu after size %lu: a rollback",
				    (unsigned long)cp.size, (unsigned long)st->size);
	if (st->any && cp.size == st->size && sodium_memcmp(cp.root, st->root, PC_HASH_LEN) != 0)
		return pc_error_set(err, "refusing to sign another root for size %lu: a fork",
				    (unsigned long)cp.size);
	st->size = cp.size;
	memcpy(st->root, cp.root, PC_HASH_LEN);
	st->any = 1;
	return 0;
}

/* A quote for the last checkpoint this signer signed, never for one it did not. */
static bool
serve_quote(int fd, struct signer_state *st, const struct signer_quote_req *q, ssize_t n)
{
	static struct signer_quote_resp resp;
	struct pc_error err;

	memset(&resp, 0, sizeof(resp));
	resp.magic = SIGNER_MAGIC_QUOTED;
	if ((size_t)n != sizeof(*q))
		resp.status =
		    pc_error_set(&err, "quote request of %zd bytes, expected %zu", n, sizeof(*q));
	else if (st->tpm == NULL)
		resp.status = pc_error_set(&err, "no TPM: appliance.attestation is not set");
	else if (!st->any)
		resp.status = pc_error_set(&err, "no checkpoint signed yet");
	else
		resp.status = signer_tpm_quote(st->tpm, &st->vk, q->podmap_digest, st->size,
					       st->root, &resp.att, &err);
	if (resp.status != 0)
		snprintf(resp.err, sizeof(resp.err), "%.*s", (int)sizeof(resp.err) - 1, err.msg);
	return send(fd, &resp, sizeof(resp), 0) == (ssize_t)sizeof(resp);
}

/* Answers one request; false once podcapd has closed its end (or no answer can be sent). */
static bool
serve_request(int fd, const struct pc_signer_key *k, struct signer_state *st)
{
	/* a signing request, or a quote request (the first word says which) */
	static union {
		struct signer_req sign;
		struct signer_quote_req quote;
	} in;
	const struct signer_req *req = &in.sign;
	struct signer_resp resp = { .magic = SIGNER_MAGIC_RESP };
	struct pc_error err;
	ssize_t n = recv(fd, &in, sizeof(in), MSG_TRUNC);

	if (n == 0 || (n < 0 && errno != EINTR))
		return false;
	if (n < 0)
		return true;
	if ((size_t)n >= sizeof(uint32_t) && in.quote.magic == SIGNER_MAGIC_QUOTE)
		return serve_quote(fd, st, &in.quote, n);
	if ((size_t)n != sizeof(*req))
		resp.status =
		    pc_error_set(&err, "request of %zd bytes, expected %zu", n, sizeof(*req));
	else
		resp.status = check_request(k, st, req, &err);
	if (resp.status == 0)
		pc_note_sign_body(k, req->body, req->len, resp.sig);
	else
		snprintf(resp.err, sizeof(resp.err), "%.*s", (int)sizeof(resp.err) - 1, err.msg);
	sodium_memzero(&in, sizeof(in));
	return send(fd, &resp, sizeof(resp), 0) == (ssize_t)sizeof(resp);
}

/*
 * Echoes a liveness probe. Never waits: nothing on this socket may hold up
 * a signature, so an answer that does not fit now is dropped (podcapd then
 * takes the signer for silent). False once podcapd has closed its end.
 */
static bool
answer_probe(int fd)
{
	struct signer_probe p;
	ssize_t n = recv(fd, &p, sizeof(p), MSG_TRUNC | MSG_DONTWAIT);

	if (n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN))
		return false;
	if (n == (ssize_t)sizeof(p) && p.magic == SIGNER_MAGIC_PROBE) {
		p.magic = SIGNER_MAGIC_ALIVE;
		send(fd, &p, sizeof(p), MSG_DONTWAIT | MSG_NOSIGNAL);
	}
	return true;
}

static void
signer_loop(int fd, int probe_fd, const struct pc_signer_key *k, struct signer_tpm *tpm)
{
	struct signer_state st = { .tpm = tpm };

	pc_signer_key_public(k, &st.vk);
	struct pollfd pfd[2] = {
		{ .fd = fd, .events = POLLIN },
		{ .fd = probe_fd, .events = POLLIN },
	};

	for (;;) {
		if (poll(pfd, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			return;
		}
		/* a closed probe socket only ends the probes (poll skips fd -1) */
		if (pfd[1].revents != 0 && !answer_probe(probe_fd))
			pfd[1].fd = -1;
		if (pfd[0].revents != 0 && !serve_request(fd, k, &st))
			return;
	}
}

static void signer_main(int fd, int probe_fd, const char *key_path,
			const struct pc_attestation *att) __attribute__((noreturn));

static void
signer_main(int fd, int probe_fd, const char *key_path, const struct pc_attestation *att)
{
	struct signer_tpm *tpm = NULL;
	struct signer_hello hello = { .magic = SIGNER_MAGIC_HELLO };
	struct pc_signer_key *k;

	prctl(PR_SET_NAME, "podcap-signer");
	prctl(PR_SET_PDEATHSIG, SIGTERM);
	prctl(PR_SET_DUMPABLE, 0);        /* no core dumps, no ptrace by the same user */
	struct rlimit no_core = { 0, 0 };
	setrlimit(RLIMIT_CORE, &no_core);
	signal(SIGINT, SIG_IGN);          /* the parent decides when to stop */
	signal(SIGHUP, SIG_IGN);

	if (sodium_init() < 0) {
		hello.status = -1;
		snprintf(hello.err, sizeof(hello.err), "libsodium failed to initialise");
		send(fd, &hello, sizeof(hello), 0);
		_exit(1);
	}
	/* the TPM first: a sealed key is unsealed by it (docs/attestation.md) */
	struct pc_error kerr;
	bool want_tpm = att != NULL && att->enabled;
	k = NULL;
	if (want_tpm && (tpm = signer_tpm_open(att, &kerr)) == NULL)
		pc_error_prefix(&kerr, "TPM %.100s", att->tpm);
	else if (!signer_key_is_sealed(key_path))
		k = pc_signer_key_load(key_path, &kerr);
	else if (tpm == NULL)
		pc_error_set(&kerr, "%.200s is a sealed key: it needs appliance.attestation.tpm",
			     key_path);
	else
		k = signer_tpm_unseal(tpm, key_path, &kerr);
	if (k == NULL) {
		hello.status = -1;
		snprintf(hello.err, sizeof(hello.err), "%.*s", (int)sizeof(hello.err) - 1, kerr.msg);
		send(fd, &hello, sizeof(hello), 0);
		signer_tpm_close(tpm);
		_exit(1);
	}
	snprintf(hello.name, sizeof(hello.name), "%s", k->name);
	hello.id = k->id;
	memcpy(hello.pk, k->pk, sizeof(hello.pk));
	if (send(fd, &hello, sizeof(hello), 0) != (ssize_t)sizeof(hello)) {
		pc_signer_key_free(k);
		_exit(1);
	}

	signer_loop(fd, probe_fd, k, tpm);
	signer_tpm_close(tpm);
	pc_signer_key_free(k);
	_exit(0);
}

static void
close_pair(int sv[2])
{
	close(sv[0]);
	close(sv[1]);
}

int
pc_signer_spawn(const char *key_path, struct pc_signer *s, struct pc_error *err)
{
	return pc_signer_spawn_attest(key_path, NULL, s, err);
}

int
pc_signer_spawn_attest(const char *key_path, const struct pc_attestation *att, struct pc_signer *s,
		       struct pc_error *err)
{
	int sv[2], pv[2];
	struct signer_hello hello;

	memset(s, 0, sizeof(*s));
	s->fd = -1;
	s->probe_fd = -1;
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0)
		return pc_error_errno(err, "socketpair");
	/* probes go their own way: they must never be taken for a signature's answer */
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pv) != 0) {
		pc_error_errno(err, "socketpair");
		close_pair(sv);
		return -1;
	}
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0) {
		pc_error_errno(err, "fork");
		close_pair(sv);
		close_pair(pv);
		return -1;
	}
	if (pid == 0) {
		close(sv[0]);
		close(pv[0]);
		/* keep only stdio and the sockets */
		for (int fd = 3; fd < 1024; fd++)
			if (fd != sv[1] && fd != pv[1])
				close(fd);
		signer_main(sv[1], pv[1], key_path, att);
	}
	close(sv[1]);
	close(pv[1]);
	s->fd = sv[0];
	s->probe_fd = pv[0];
	s->pid = pid;
	/* a stopped or wedged signer must not hold the ledger thread forever */
	struct timeval tv = { .tv_sec = SIGNER_TIMEOUT_S };
	setsockopt(s->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(s->fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));

	ssize_t n = recv(s->fd, &hello, sizeof(hello), MSG_TRUNC);
	if (n != (ssize_t)sizeof(hello) || hello.magic != SIGNER_MAGIC_HELLO) {
		pc_error_set(err, "the signer did not start");
		pc_signer_stop(s);
		return -1;
	}
	if (hello.status != 0) {
		hello.err[sizeof(hello.err) - 1] = '\0';
		pc_error_set(err, "%s", hello.err);
		pc_signer_stop(s);
		return -2;
	}
	hello.name[sizeof(hello.name) - 1] = '\0';
	snprintf(s->vk.name, sizeof(s->vk.name), "%s", hello.name);
	s->vk.id = hello.id;
	memcpy(s->vk.pk, hello.pk, sizeof(s->vk.pk));
	if (pc_key_id(s->vk.name, s->vk.pk) != s->vk.id) {
		pc_error_set(err, "the signer sent an inconsistent key");
		pc_signer_stop(s);
		return -1;
	}
	return 0;
}

/*
 * The signer is gone, or no longer trustworthy: one that did not answer in
 * time is killed, so that a late answer can never be taken for the next
 * request's. Only pc_signer_alive() and pc_signer_stop() reap it, in the
 * control thread, so its pid is still its own here.
 */
static void
signer_lost(struct pc_signer *s, bool silent)
{
	__atomic_store_n(&s->lost, true, __ATOMIC_RELEASE);
	if (silent)
		shutdown(s->fd, SHUT_RDWR);   /* its end then sees EOF and exits */
}

/*
 * One request and its answer over the socket: `resp` of exactly `resp_len`
 * bytes led by `magic`. A send that does not go, no answer within
 * SIGNER_TIMEOUT_S or an answer of the wrong size or kind loses the signer.
 * Returns 0 when an answer came; its status is the caller's to read.
 */
static int
signer_exchange(struct pc_signer *s, const void *req, size_t req_len, void *resp, size_t resp_len,
		uint32_t magic, const char *what, struct pc_error *err)
{
	uint32_t got;

	if (__atomic_load_n(&s->lost, __ATOMIC_ACQUIRE))
		return pc_error_set(err, "the signer is lost");
	if (send(s->fd, req, req_len, MSG_NOSIGNAL) != (ssize_t)req_len) {
		pc_error_errno(err, "signer");
		signer_lost(s, errno == EAGAIN || errno == EWOULDBLOCK);
		return -1;
	}
	ssize_t n;
	do
		n = recv(s->fd, resp, resp_len, MSG_TRUNC);
	while (n < 0 && errno == EINTR);
	if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
		pc_error_set(err, "signer: no %s in %d s", what, SIGNER_TIMEOUT_S);
		signer_lost(s, true);
		return -1;
	}
	if (n == (ssize_t)resp_len)
		memcpy(&got, resp, sizeof(got));
	if (n != (ssize_t)resp_len || got != magic) {
		pc_error_set(err, "signer: %s", n == 0 ? "it exited" : "bad response");
		signer_lost(s, n != 0);
		return -1;
	}
	return 0;
}

int
pc_signer_sign(struct pc_signer *s, const char *body, size_t len, uint8_t sig[64],
	       struct pc_error *err)
{
	struct signer_req req = { .magic = SIGNER_MAGIC_REQ };
	struct signer_resp resp;

	if (s->fd < 0 || len == 0 || len > sizeof(req.body))
		return pc_error_set(err, "checkpoint of %zu bytes cannot be signed", len);
	req.len = (uint32_t)len;
	memcpy(req.body, body, len);
	if (signer_exchange(s, &req, sizeof(req), &resp, sizeof(resp), SIGNER_MAGIC_RESP, "answer",
			    err) != 0)
		return -1;
	if (resp.status != 0) {
		resp.err[sizeof(resp.err) - 1] = '\0';
		return pc_error_set(err, "signer refused: %s", resp.err);
	}
	/* check the signature before it is published, as minisign does */
	if (crypto_sign_verify_detached(resp.sig, (const unsigned char *)body, len, s->vk.pk) != 0)
		return pc_error_set(err, "signer returned a signature that does not verify");
	memcpy(sig, resp.sig, 64);
	return 0;
}

int
pc_signer_quote(struct pc_signer *s, const uint8_t podmap_digest[32], struct pc_record_attest *out,
		struct pc_error *err)
{
	static struct signer_quote_resp resp;
	struct signer_quote_req req = { .magic = SIGNER_MAGIC_QUOTE };

	memcpy(req.podmap_digest, podmap_digest, sizeof(req.podmap_digest));
	if (signer_exchange(s, &req, sizeof(req), &resp, sizeof(resp), SIGNER_MAGIC_QUOTED, "quote",
			    err) != 0)
		return -1;
	if (resp.status != 0) {
		resp.err[sizeof(resp.err) - 1] = '\0';
		return pc_error_set(err, "no quote: %s", resp.err);
	}
	*out = resp.att;
	out->ima = NULL;
	out->ima_len = 0;
	/* what the decoder of the log would refuse is never recorded */
	return pc_record_attest_check(out, err);
}

bool
pc_signer_alive(struct pc_signer *s)
{
	int st;

	if (s->pid > 0 && waitpid(s->pid, &st, WNOHANG) == s->pid) {
		s->pid = 0;
		s->status = st;
		__atomic_store_n(&s->lost, true, __ATOMIC_RELEASE);
	}
	return !__atomic_load_n(&s->lost, __ATOMIC_ACQUIRE);
}

/*
 * One probe is out at a time: a signer that has not answered it yet is
 * silent, whether stopped, stuck or starved, until it does.
 */
bool
pc_signer_answers(struct pc_signer *s)
{
	struct signer_probe p;
	ssize_t n;

	if (!pc_signer_alive(s))
		return false;
	while ((n = recv(s->probe_fd, &p, sizeof(p), MSG_TRUNC | MSG_DONTWAIT)) > 0)
		if (n == (ssize_t)sizeof(p) && p.magic == SIGNER_MAGIC_ALIVE &&
		    p.seq == s->probe_seq)
			s->probe_pending = false;
	if (s->probe_pending)
		return false;
	p = (struct signer_probe){ .magic = SIGNER_MAGIC_PROBE, .seq = ++s->probe_seq };
	/* one that cannot be sent is never answered: the next call finds it so */
	s->probe_pending = true;
	send(s->probe_fd, &p, sizeof(p), MSG_DONTWAIT | MSG_NOSIGNAL);
	return true;
}

void
pc_signer_describe_end(const struct pc_signer *s, char *buf, size_t len)
{
	if (s->pid > 0)
		snprintf(buf, len, "it stopped answering");
	else if (WIFSIGNALED(s->status))
		snprintf(buf, len, "it was killed by signal %d", WTERMSIG(s->status));
	else
		snprintf(buf, len, "it exited with status %d", WEXITSTATUS(s->status));
}

void
pc_signer_stop(struct pc_signer *s)
{
	if (s->fd >= 0) {
		close(s->fd);
		s->fd = -1;
	}
	if (s->probe_fd >= 0) {
		close(s->probe_fd);
		s->probe_fd = -1;
	}
	if (s->pid > 0) {
		int st;
		/* one that stopped answering may never read the EOF */
		if (__atomic_load_n(&s->lost, __ATOMIC_ACQUIRE))
			kill(s->pid, SIGKILL);
		waitpid(s->pid, &st, 0);
		s->pid = 0;
	}
}
