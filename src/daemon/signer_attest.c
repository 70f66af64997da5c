/* SPDX-License-Identifier: BSD-3-Clause */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log/attest.h"
#include "base/buildid.h"
#include "base/fileio.h"

#include "signer_attest.h"

/*
 * Only a regular file is looked into (a FIFO would block the read): the key
 * loader refuses everything else with its own message.
 */
bool
signer_key_is_sealed(const char *path)
{
	static const char magic[] = "podcap-sealed-key: 1\n";
	char head[sizeof(magic)] = { 0 };
	struct stat st;

	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return false;
	bool sealed = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
	    pc_pread_all(fd, head, sizeof(magic) - 1, 0) == 0 &&
	    memcmp(head, magic, sizeof(magic) - 1) == 0;
	close(fd);
	return sealed;
}

#if PODCAP_HAVE_TPM
#include "quote.h"
#include "seal.h"
#include "tpm.h"

struct signer_tpm {
	struct pc_tpm tpm;
	bool open; /* tpm is a context with the AK loaded; false after a quote failed */
	ESYS_TR ak;
	char tcti[sizeof(((struct pc_attestation *)0)->tpm)];
	uint32_t pcrs;
	uint8_t build_id[PC_BUILD_ID_LEN];
	uint8_t key_kind; /* PC_KEY_SEALED once signer_tpm_unseal gave the key */
};

/* A context with the AK loaded: the one at hand, or a fresh one. 0 or -1. */
static int
tpm_connect(struct signer_tpm *t, struct pc_error *err)
{
	if (t->open)
		return 0;
	t->ak = ESYS_TR_NONE;
	if (pc_tpm_open(&t->tpm, t->tcti, err) != 0)
		return -1;
	if (pc_tpm_ak_load(&t->tpm, &t->ak, NULL, err) != 0) {
		pc_tpm_close(&t->tpm);
		return -1;
	}
	t->open = true;
	return 0;
}

/*
 * Drops the context. A TPM that was unreachable leaves tpm2-tss's context
 * unusable for good (every later call is "Function called in the wrong
 * order"), so the only way back is a new one. The AK is flushed when the
 * context still can; otherwise the connection's end drops it (swtpm, the
 * kernel's resource manager /dev/tpmrm0).
 */
static void
tpm_disconnect(struct signer_tpm *t)
{
	if (!t->open)
		return;
	pc_tpm_flush(&t->tpm, &t->ak);
	pc_tpm_close(&t->tpm);
	t->open = false;
}

struct signer_tpm *
signer_tpm_open(const struct pc_attestation *a, struct pc_error *err)
{
	struct signer_tpm *t = calloc(1, sizeof(*t));

	if (t == NULL) {
		pc_error_set(err, "out of memory");
		return NULL;
	}
	t->pcrs = a->pcrs;
	snprintf(t->tcti, sizeof(t->tcti), "%s", a->tpm);
	/* the signer is podcapd's own executable, forked before anything else ran */
	if (pc_build_id(t->build_id) != 0) {
		pc_error_errno(err, "cannot hash /proc/self/exe for the build id");
		free(t);
		return NULL;
	}
	if (tpm_connect(t, err) != 0) {
		free(t);
		return NULL;
	}
	return t;
}

int
signer_tpm_quote(struct signer_tpm *t, const struct pc_verifier_key *vk,
		 const uint8_t podmap_digest[32], uint64_t size, const uint8_t root[32],
		 struct pc_record_attest *out, struct pc_error *err)
{
	uint8_t qual[PC_ATTEST_QUAL_LEN];

	pc_attest_qualifying(vk, podmap_digest, t->build_id, size, root, t->key_kind, qual);
	out->ckpt_size = size;
	out->key_kind = t->key_kind;
	memcpy(out->ckpt_root, root, 32);
	/* after a failed quote, this one starts on a fresh context */
	if (tpm_connect(t, err) != 0)
		return pc_error_prefix(err, "TPM %.100s", t->tcti);
	if (pc_tpm_quote(&t->tpm, t->ak, t->pcrs, qual, out, err) == 0)
		return 0;
	/* its windows go unattested; the next quote point tries a new context */
	tpm_disconnect(t);
	return -1;
}

struct pc_signer_key *
signer_tpm_unseal(struct signer_tpm *t, const char *path, struct pc_error *err)
{
	uint32_t mask;
	struct pc_signer_key *k = pc_sealed_key_unseal(&t->tpm, path, &mask, err);

	if (k != NULL)
		t->key_kind = PC_KEY_SEALED;
	return k;
}

void
signer_tpm_close(struct signer_tpm *t)
{
	if (t == NULL)
		return;
	tpm_disconnect(t);
	free(t);
}

#else /* podcapd built without tpm2-tss */

struct signer_tpm *
signer_tpm_open(const struct pc_attestation *a, struct pc_error *err)
{
	(void)a;
	pc_error_set(err,
		     "appliance.attestation: podcapd was built without TPM support "
		     "(tpm2-tss)");
	return NULL;
}

int
signer_tpm_quote(struct signer_tpm *t, const struct pc_verifier_key *vk,
		 const uint8_t podmap_digest[32], uint64_t size, const uint8_t root[32],
		 struct pc_record_attest *out, struct pc_error *err)
{
	(void)t, (void)vk, (void)podmap_digest, (void)size, (void)root, (void)out;
	return pc_error_set(err, "no TPM");
}

struct pc_signer_key *
signer_tpm_unseal(struct signer_tpm *t, const char *path, struct pc_error *err)
{
	(void)t, (void)path;
	pc_error_set(err, "no TPM");
	return NULL;
}

void
signer_tpm_close(struct signer_tpm *t)
{
	(void)t;
}
#endif
