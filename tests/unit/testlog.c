/* SPDX-License-Identifier: BSD-3-Clause */
/* Long signed logs of one pod, made as they are fed (testlog.h). */
#include <setjmp.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <sodium.h>

#include "base/keys.h"
#include "log/merkle.h"
#include "log/note.h"
#include "log/record.h"

#include "testlog.h"
#include "testutil.h"

static struct pc_signer_key *key;
static struct pc_verifier_key vk;

int
pct_setup(void **state)
{
	(void)state;
	if (sodium_init() < 0)
		return -1;
	key = pc_test_key(PCT_ORIGIN, &vk);
	return 0;
}

int
pct_teardown(void **state)
{
	(void)state;
	pc_signer_key_free(key);
	return 0;
}

static uint64_t
records(const struct pct_log *lg)
{
	return 1 + lg->windows + (lg->gap_at > 0);
}

static void
pct_frames(struct pc_pod_ctr *c, uint64_t bytes)
{
	c->pass_bytes = bytes;
	c->pass_frames = (bytes + 1499) / 1500;
}

/* Record i of lg, encoded into buf; its length. */
static size_t
encode(const struct pct_log *lg, uint64_t i, uint8_t *buf, size_t len)
{
	static struct pc_record_link link = { .name = "up0" };
	struct pc_record_pod pod = {
		.id = "pod-a", .uplink = "up0", .cap_bps = PCT_CAP, .burst_bytes = PCT_BURST
	};
	struct pc_record r = { .type = PC_REC_START, .window_len_ns = PCT_WIN };
	bool gap = lg->gap_at > 0 && i == lg->gap_at + 1;
	uint64_t w = i == 0 ? 0 : i - 1 - (lg->gap_at > 0 && i > lg->gap_at + 1);
	uint64_t label = w + (lg->gap_at > 0 && w >= lg->gap_at ? lg->gap_windows : 0);

	snprintf(r.appliance_id, sizeof(r.appliance_id), "%s", PCT_APP);
	memset(r.podmap_digest, 0x5d, PC_DIGEST_LEN);
	memset(r.build_id, 0x6a, sizeof(r.build_id));
	r.npods = 1;
	r.pods = &pod;
	if (gap) {
		r.type = PC_REC_GAP;
		r.npods = 0;
		r.pods = NULL;
		r.window_count = lg->gap_windows;
		label = lg->gap_at;
	} else if (i > 0) {
		r.type = PC_REC_WINDOW;
		r.window_count = 1;
		r.nlinks = 1;
		r.links = &link;
		pct_frames(&pod.dir[PC_DIR_UP], lg->up(w));
		pct_frames(&pod.dir[PC_DIR_DOWN], lg->down(w));
	}
	r.window_start_ns = PCT_T0 + label * PCT_WIN;
	r.time_ns = r.window_start_ns + (r.type == PC_REC_WINDOW ? PCT_WIN + 1000 : 1000);
	size_t n = pc_record_encode(&r, buf, len);
	assert_true(n > 0);
	return n;
}

struct pc_verify *
pct_verify(const struct pct_log *lg, uint64_t model_bytes)
{
	static uint8_t buf[4096];
	struct pc_merkle_range range;
	uint8_t h[PC_HASH_LEN], root[PC_HASH_LEN];
	char note[PC_NOTE_MAX];
	uint64_t n = records(lg);

	pc_merkle_range_init(&range);
	for (uint64_t i = 0; i < n; i++) {
		size_t len = encode(lg, i, buf, sizeof(buf));

		pc_merkle_leaf_hash(buf, len, h);
		pc_merkle_range_append(&range, h);
	}
	pc_merkle_range_root(&range, root);
	size_t nl = pc_test_checkpoint(key, PCT_ORIGIN, n, root, note, sizeof(note));
	struct pc_verify *v = pc_verify_new(&vk, NULL);
	assert_non_null(v);
	assert_int_equal(pc_verify_keep_series(v, model_bytes), 0);
	assert_int_equal(pc_verify_checkpoint(v, note, nl), 0);
	for (uint64_t i = 0; i < n; i++) {
		size_t len = encode(lg, i, buf, sizeof(buf));

		pc_verify_record(v, buf, len, NULL);
	}
	pc_verify_finish(v);
	return v;
}

static char *
report(const struct pc_verify *v, void (*print)(const struct pc_verify *, FILE *))
{
	char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);

	assert_non_null(f);
	print(v, f);
	assert_int_equal(fclose(f), 0);
	return out;
}

char *
pct_html(const struct pc_verify *v)
{
	return report(v, pc_verify_print_html);
}

char *
pct_json(const struct pc_verify *v)
{
	return report(v, pc_verify_print_json);
}
