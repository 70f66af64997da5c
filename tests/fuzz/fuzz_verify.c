/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target for the whole streaming verifier (src/verify/verify.h)
 * as podcap-verify drives it: a checkpoint, the records it covers, a trusted
 * state and a consistency proof, then both reports.
 *
 * The input is a flags byte, a byte choosing the trusted size, then chunks
 * of a 2-byte big-endian length and that many bytes: the records (and, with
 * F_RAW_NOTE, first the checkpoint note itself). Unless F_RAW_NOTE is set,
 * this target signs a checkpoint over exactly the records it feeds, so the
 * fuzzer's records reach every sequence, pod-map and envelope check. Then
 * it aborts when the verifier gets the tree wrong: a log signed over its
 * records must not fail the signature, root or missing checks, a trusted
 * prefix of it must not be a rollback or fork, and a record altered after
 * signing or one held back must be found.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "podmap/config.h"
#include "base/keys.h"
#include "log/merkle.h"
#include "log/note.h"
#include "verify/verify.h"

#define F_PODMAP      0x01   /* check against the pod map of tests/vectors */
#define F_TRUSTED     0x02   /* a trusted checkpoint of the first T records */
#define F_RAW_NOTE    0x04   /* the first chunk is the checkpoint note, as is */
#define F_STORED      0x08   /* give the stored leaf hashes beside the records */
#define F_ALTER       0x10   /* change record T % n after signing */
#define F_HOLD_BACK   0x20   /* feed one record fewer than signed */
#define F_PROOF       0x40   /* give the consistency proof from T */
#define F_EXTENSION   0x80   /* the checkpoint has an extension line */

#define MAX_RECORDS 256

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* tests/vectors/podmap.yaml */
static const char podmap_yaml[] =
	"appliance:\n  id: vector-1\nwindow: 60s\n"
	"defaults:\n  cap: 1Gbps\n  burst: 1s\n  mode: police\n"
	"uplinks:\n  - name: uplink0\n    pod_port: 0000:3b:00.0\n"
	"    fabric_port: 0000:3b:00.1\n"
	"pods:\n  - id: pod-a\n    gpus: 8\n    uplink: uplink0\n    prefixes: [10.1.0.0/24]\n"
	"  - id: pod-b\n    gpus: 8\n    uplink: uplink0\n"
	"    prefixes: [10.1.1.0/24, \"fd00:1::/64\"]\n    cap: 400Mbps\n    burst: 50MB\n"
	"    mode: shape\n    queue_delay: 20ms\n";

static struct pc_signer_key signer;
static struct pc_verifier_key vk;
static struct pc_config podmap;
static FILE *devnull;

static void
init(void)
{
	static int done;
	uint8_t seed[crypto_sign_SEEDBYTES];
	struct pc_error err;

	if (done)
		return;
	if (sodium_init() < 0)
		abort();
	memset(seed, 0x42, sizeof(seed));
	crypto_sign_seed_keypair(signer.pk, signer.sk, seed);
	/* the appliance of the test vectors, whose records seed the corpus */
	strcpy(signer.name, "podcap/vector-1");
	signer.id = pc_key_id(signer.name, signer.pk);
	pc_signer_key_public(&signer, &vk);
	if (pc_config_load_buffer("podmap.yaml", podmap_yaml, sizeof(podmap_yaml) - 1, &podmap,
				  &err) != 0)
		abort();
	devnull = fopen("/dev/null", "w");
	if (devnull == NULL)
		abort();
	done = 1;
}

struct input {
	const uint8_t *rec[MAX_RECORDS];
	size_t len[MAX_RECORDS];
	uint8_t leaf[MAX_RECORDS][PC_HASH_LEN];
	size_t n;
	const char *note;
	size_t note_len;
};

static int
leaf_of(void *ctx, uint64_t i, uint8_t out[PC_HASH_LEN])
{
	const struct input *in = ctx;

	memcpy(out, in->leaf[i], PC_HASH_LEN);
	return 0;
}

/* The signed checkpoint of the first `size` records, into note (PC_NOTE_MAX). */
static size_t
sign_checkpoint(struct input *in, uint64_t size, int extension, char *note)
{
	struct pc_checkpoint cp;
	char body[PC_NOTE_MAX];
	uint8_t sig[64];
	size_t n;

	memset(&cp, 0, sizeof(cp));
	strcpy(cp.origin, signer.name);
	cp.size = size;
	if (pc_merkle_root(leaf_of, in, size, cp.root) != 0)
		abort();
	if (extension)
		strcpy(cp.extra, "fuzz extension line\n");
	n = pc_checkpoint_body(&cp, body, sizeof(body));
	if (n == 0)
		abort();
	pc_note_sign_body(&signer, body, n, sig);
	n = pc_note_format(body, n, signer.name, signer.id, sig, note, PC_NOTE_MAX);
	if (n == 0)
		abort();
	return n;
}

static void
split(const uint8_t *data, size_t size, int raw_note, struct input *in)
{
	size_t off = 0, len;

	while (size - off >= 2 && in->n < MAX_RECORDS) {
		len = (size_t)data[off] << 8 | data[off + 1];
		off += 2;
		if (len > size - off)
			len = size - off;
		if (raw_note && in->note == NULL) {
			in->note = (const char *)data + off;
			in->note_len = len;
		} else {
			in->rec[in->n] = data + off;
			in->len[in->n] = len;
			pc_merkle_leaf_hash(in->rec[in->n], len, in->leaf[in->n]);
			in->n++;
		}
		off += len;
	}
}

static void
check_reports(struct pc_verify *v, int rc)
{
	if (rc != (pc_verify_nfailures(v) > 0))
		abort();
	pc_verify_print_text(v, devnull);
	pc_verify_print_json(v, devnull);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct input in;
	static uint8_t proof[PC_MAX_PROOF][PC_HASH_LEN];
	char note[PC_NOTE_MAX], trusted[PC_NOTE_MAX];
	struct pc_error err;
	uint8_t flags, *altered = NULL;
	uint64_t tsize = 0, fed;
	size_t note_len, tlen, np, i, alter_at = 0;
	struct pc_verify *v;
	int rc;

	init();
	if (size < 2)
		return 0;
	flags = data[0];
	memset(&in, 0, sizeof(in));
	split(data + 2, size - 2, flags & F_RAW_NOTE, &in);

	v = pc_verify_new(&vk, flags & F_PODMAP ? &podmap : NULL);
	if (v == NULL)
		abort();
	if (flags & F_TRUSTED) {
		tsize = data[1] % (in.n + 1);
		tlen = sign_checkpoint(&in, tsize, 0, trusted);
		if (pc_verify_trusted(v, trusted, tlen, &err) != 0)
			abort();
		if (pc_verify_trusted_size(v) != tsize)
			abort();
	}
	if (flags & F_RAW_NOTE) {
		if (in.note == NULL) {
			pc_verify_free(v);
			return 0;
		}
		pc_verify_checkpoint(v, in.note, in.note_len);
	} else {
		note_len = sign_checkpoint(&in, in.n, flags & F_EXTENSION, note);
		if (pc_verify_checkpoint(v, note, note_len) != 0 || pc_verify_size(v) != in.n)
			abort();
	}

	if ((flags & F_ALTER) && in.n > 0) {
		alter_at = data[1] % in.n;
		altered = malloc(in.len[alter_at] + 1);
		if (altered == NULL)
			abort();
		memcpy(altered, in.rec[alter_at], in.len[alter_at]);
		/* one byte more: a record cannot be altered into itself */
		altered[in.len[alter_at]] = 0;
		in.rec[alter_at] = altered;
		in.len[alter_at]++;
	}
	fed = pc_verify_size(v);
	if ((flags & F_HOLD_BACK) && fed > 0)
		fed--;
	for (i = 0; i < fed && i < in.n; i++)
		pc_verify_record(v, in.rec[i], in.len[i], flags & F_STORED ? in.leaf[i] : NULL);
	if ((flags & F_PROOF) && (flags & F_TRUSTED) && tsize < pc_verify_size(v) &&
	    !(flags & F_RAW_NOTE)) {
		if (pc_merkle_consistency_proof(leaf_of, &in, tsize, in.n, proof, &np) != 0)
			abort();
		pc_verify_consistency(v, (const uint8_t(*)[PC_HASH_LEN])proof, np);
	}
	rc = pc_verify_finish(v);
	check_reports(v, rc);

	if (!(flags & F_RAW_NOTE)) {
		const int held = (flags & F_HOLD_BACK) && in.n > 0;
		const int alt = altered != NULL && !held;

		if (pc_verify_find(v, PC_VC_CHECKPOINT) || pc_verify_find(v, PC_VC_SIGNATURE) ||
		    pc_verify_find(v, PC_VC_ORIGIN))
			abort();
		if (held != (pc_verify_find(v, PC_VC_MISSING) != NULL))
			abort();
		if (!held && alt != (pc_verify_find(v, PC_VC_ROOT) != NULL))
			abort();
		if (alt && (flags & F_STORED)) {
			const struct pc_verify_failure *f = pc_verify_find(v, PC_VC_ROOT);

			if (f->record != (int64_t)alter_at)
				abort();
		}
		if (!alt && !held && (pc_verify_find(v, PC_VC_ROLLBACK) ||
				      pc_verify_find(v, PC_VC_FORK)))
			abort();
	}
	pc_verify_free(v);
	free(altered);
	return 0;
}
