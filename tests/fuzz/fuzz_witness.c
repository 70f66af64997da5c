/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target for the witness's add-checkpoint request parser and its
 * decision (src/log/tlog_witness.h), the bytes podcap-witness takes
 * from anyone who can reach it.
 *
 * The input is a request body. Besides memory errors and undefined
 * behaviour it aborts when:
 *  - a request parses but does not format back to exactly the same bytes
 *    (the form is canonical), or is refused without a reason;
 *  - the decision cosigns (200) a checkpoint that the log's key did not
 *    sign, or one not proven consistent with what the witness holds, or
 *    answers a status tlog-witness does not define, or without a reason.
 * The input is also tried as a C2SP tlog-tiles path (tlog_tiles.h): one
 * that parses must format back to the same path, and every tile it names
 * of a tree it exists in must have 1 to 256 hashes.
 * The witness knows one log, whose key is fixed (seed 0x4c..., origin
 * example.com/podcap/fuzz) and which it last cosigned at size 5 of the
 * tree of leaves "leaf 0", "leaf 1", ...; seed-signed holds a request the
 * key signed, so that mutations reach every status.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "log/merkle.h"
#include "log/note.h"
#include "log/tlog_tiles.h"
#include "log/tlog_witness.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct pc_witness_log wlog;
static uint8_t leaves[8][PC_HASH_LEN];

static int
leaf_at(void *ctx, uint64_t i, uint8_t out[PC_HASH_LEN])
{
	(void)ctx;
	memcpy(out, leaves[i], PC_HASH_LEN);
	return 0;
}

static void
init(void)
{
	static int done;
	uint8_t seed[32], sk[64];
	char leaf[16];
	size_t i;

	if (done)
		return;
	if (sodium_init() < 0)
		abort();
	memset(seed, 0x4c, sizeof(seed));
	crypto_sign_seed_keypair(wlog.key.pk, sk, seed);
	strcpy(wlog.origin, "example.com/podcap/fuzz");
	strcpy(wlog.key.name, wlog.origin);
	wlog.key.id = pc_key_id(wlog.key.name, wlog.key.pk);
	for (i = 0; i < 8; i++) {
		snprintf(leaf, sizeof(leaf), "leaf %zu", i);
		pc_merkle_leaf_hash((const uint8_t *)leaf, strlen(leaf), leaves[i]);
	}
	wlog.size = 5;
	if (pc_merkle_root(leaf_at, NULL, 5, wlog.root) != 0)
		abort();
	done = 1;
}

static void
check_decision(const struct pc_add_checkpoint *req)
{
	struct pc_witness_log logs[1] = { wlog }, *l;
	struct pc_verifier_key vk = wlog.key;
	struct pc_checkpoint cp;
	struct pc_error why;
	size_t blen, vlen;
	int status;

	why.msg[0] = '\0';
	status = pc_witness_check(logs, 1, req, &l, &cp, &blen, &why);
	if (status != 200) {
		if (why.msg[0] == '\0' || strchr(why.msg, '\n') != NULL)
			abort();
		if (status != 400 && status != 403 && status != 404 && status != 409 &&
		    status != 422)
			abort();
		if (memcmp(&logs[0], &wlog, sizeof(wlog)) != 0)
			abort();
		return;
	}
	/* A cosignature needs the log's signature and a proof from what is held. */
	if (l != &logs[0] || pc_note_verify(req->note, req->note_len, &vk, &vlen, NULL) != 0 ||
	    vlen != blen || req->old_size != wlog.size ||
	    pc_merkle_verify_consistency(wlog.size, cp.size, wlog.root, cp.root,
					 (const uint8_t(*)[PC_HASH_LEN])req->proof,
					 req->nproof) != 0)
		abort();
}

static void
check_tile_path(const uint8_t *data, size_t size)
{
	char path[128], again[128];
	struct pc_tile t;

	if (size >= sizeof(path) || memchr(data, '\0', size) != NULL)
		return;
	memcpy(path, data, size);
	path[size] = '\0';
	if (pc_tile_parse(path, &t) != 0)
		return;
	if (pc_tile_path(&t, again, sizeof(again)) != size || strcmp(again, path) != 0 ||
	    t.width == 0 || t.width > PC_TILE_WIDTH || t.level > PC_TILE_MAX_LEVEL)
		abort();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct pc_add_checkpoint req;
	static char out[PC_WITNESS_REQ_MAX + 1];
	struct pc_error why;
	size_t n;

	init();
	check_tile_path(data, size);
	why.msg[0] = '\0';
	if (pc_add_checkpoint_parse((const char *)data, size, &req, &why) != 0) {
		if (why.msg[0] == '\0')
			abort();
		return 0;
	}
	n = pc_add_checkpoint_format(req.old_size, (const uint8_t(*)[PC_HASH_LEN])req.proof,
				     req.nproof, req.note, req.note_len, out, sizeof(out));
	if (n != size || memcmp(out, data, size) != 0)
		abort();
	check_decision(&req);
	return 0;
}
