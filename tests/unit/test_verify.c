/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The verifier against a tamper corpus: every way of altering a signed log
 * must be caught by the right check, and a log that holds must verify.
 * Logs are built here from real records, signed with a fresh key; some go
 * through a ledger directory as podcap-verify --ledger reads them.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <sodium.h>

#include "base/clock.h"
#include "podmap/config.h"
#include "base/keys.h"
#include "log/ledger.h"
#include "log/merkle.h"
#include "log/note.h"
#include "log/record.h"
#include "verify/verify.h"

#include "testutil.h"

#define APP "t-app"
#define ORIGIN "podcap/" APP
#define T0 (1704067200ULL * 1000000000ULL)

static const char map_a[] =
	"appliance:\n"
	"  id: " APP "\n"
	"window: 60s\n"
	"defaults:\n"
	"  cap: 1Gbps\n"
	"  burst: 100MB\n"
	"  mode: police\n"
	"uplinks:\n"
	"  - name: up0\n"
	"    pod_port: 0000:3b:00.0\n"
	"    fabric_port: 0000:3b:00.1\n"
	"pods:\n"
	"  - id: pod-a\n"
	"    uplink: up0\n"
	"    prefixes: [10.1.0.0/24]\n"
	"  - id: pod-b\n"
	"    uplink: up0\n"
	"    prefixes: [10.1.1.0/24]\n"
	"    cap: 400Mbps\n"
	"    burst: 50MB\n"
	"    mode: shape\n";

/* What the records being built claim. */
struct gen {
	struct pc_config cfg;
	uint8_t digest[PC_DIGEST_LEN];
	char appliance[PC_ID_LEN];
};

static struct pc_signer_key *key_a, *key_b;
static struct pc_verifier_key vk_a, vk_b;
static struct gen gen_a, gen_b;   /* map_a, and map_a with pod-b's cap raised */
static char tmpdir[256];

static void
load_map(struct gen *g, const char *text)
{
	struct pc_error e;

	if (pc_config_load_buffer("test.yaml", text, strlen(text), &g->cfg, &e) != 0)
		fail_msg("pod map: %u:%u: %s", e.mark.line, e.mark.col, e.msg);
	pc_config_digest(&g->cfg, g->digest);
	snprintf(g->appliance, sizeof(g->appliance), "%s", APP);
}

static int
setup(void **state)
{
	(void)state;
	if (sodium_init() < 0)
		return -1;
	key_a = pc_test_key(ORIGIN, &vk_a);
	key_b = pc_test_key("podcap/t-other", &vk_b);
	load_map(&gen_a, map_a);
	char *b = strdup(map_a);
	char *cap = strstr(b, "400Mbps");
	memcpy(cap, "500Mbps", 7);
	load_map(&gen_b, b);
	free(b);
	return pc_test_tmpdir(tmpdir, sizeof(tmpdir), "verify");
}

static int
teardown(void **state)
{
	(void)state;
	pc_signer_key_free(key_a);
	pc_signer_key_free(key_b);
	pc_config_free(&gen_a.cfg);
	pc_config_free(&gen_b.cfg);
	pc_test_rm_rf(tmpdir);
	return 0;
}

/* ---- building logs ---- */

static uint64_t
wstart(const struct gen *g, uint64_t w)
{
	return T0 + w * g->cfg.window_ns;
}

static void
base(const struct gen *g, struct pc_record *r, uint8_t type, uint64_t w)
{
	memset(r, 0, sizeof(*r));
	r->type = type;
	snprintf(r->appliance_id, sizeof(r->appliance_id), "%s", g->appliance);
	r->window_len_ns = g->cfg.window_ns;
	r->window_start_ns = wstart(g, w);
	r->time_ns = wstart(g, w) + 1000;
	memcpy(r->podmap_digest, g->digest, PC_DIGEST_LEN);
}

static void
fill_pods(const struct gen *g, struct pc_record *r, struct pc_record_pod *pods)
{
	r->npods = g->cfg.npods;
	r->pods = pods;
	for (unsigned i = 0; i < g->cfg.npods; i++) {
		const struct pc_pod *p = &g->cfg.pods[i];

		memset(&pods[i], 0, sizeof(pods[i]));
		snprintf(pods[i].id, PC_ID_LEN, "%s", p->id);
		snprintf(pods[i].uplink, PC_ID_LEN, "%s", g->cfg.uplinks[p->uplink].name);
		pods[i].cap_bps = p->limits.cap_bps;
		pods[i].burst_bytes = p->limits.burst_bytes;
		pods[i].mode = pc_record_mode(&p->limits);
	}
}

static void
add_decl(const struct gen *g, struct pc_test_log *lg, uint8_t type, uint64_t w)
{
	struct pc_record r;
	struct pc_record_pod pods[8];

	base(g, &r, type, w);
	fill_pods(g, &r, pods);
	pc_test_log_push(lg, &r);
}

/* Bytes of a full window at pod i's cap. */
static uint64_t
full_window(const struct gen *g, unsigned i)
{
	return g->cfg.pods[i].limits.cap_bps / 8 * (g->cfg.window_ns / 1000000000ULL);
}

/* Every pod and direction at `pct` percent of its cap, plus `extra` bytes for pod 0 up. */
static void
add_window(const struct gen *g, struct pc_test_log *lg, uint64_t w, unsigned pct, uint64_t extra)
{
	struct pc_record r;
	struct pc_record_pod pods[8];
	struct pc_record_link link = { .name = "up0" };

	base(g, &r, PC_REC_WINDOW, w);
	r.window_count = 1;
	fill_pods(g, &r, pods);
	for (unsigned i = 0; i < r.npods; i++)
		for (int d = 0; d < PC_DIR_COUNT; d++) {
			pods[i].dir[d].pass_bytes = full_window(g, i) / 100 * pct;
			pods[i].dir[d].pass_frames = pods[i].dir[d].pass_bytes / 1500;
			pods[i].dir[d].drop_frames[PC_DROP_OVER_CAP] = w;
			pods[i].dir[d].drop_bytes[PC_DROP_OVER_CAP] = w * 1500;
		}
	pods[0].dir[PC_DIR_UP].pass_bytes += extra;
	link.dir[PC_DIR_UP].drop_frames[PC_DROP_UNMAPPED] = 1;
	link.dir[PC_DIR_UP].drop_bytes[PC_DROP_UNMAPPED] = 64;
	r.nlinks = 1;
	r.links = &link;
	pc_test_log_push(lg, &r);
}

static void
add_simple(const struct gen *g, struct pc_test_log *lg, uint8_t type, uint64_t w, uint64_t count)
{
	struct pc_record r;

	base(g, &r, type, w);
	r.window_count = count;
	pc_test_log_push(lg, &r);
}

/*
 * The reference log: START; W0 W1 W2; GAP 3+2; RELOAD at 5; W5 W6; STOP at 7;
 * START at 9; W9 W10 W11. Records 0..12, 8 windows.
 */
static void
build_ref(const struct gen *g, struct pc_test_log *lg)
{
	memset(lg, 0, sizeof(*lg));
	add_decl(g, lg, PC_REC_START, 0);
	add_window(g, lg, 0, 40, 0);
	add_window(g, lg, 1, 100, 0);
	add_window(g, lg, 2, 70, 0);
	add_simple(g, lg, PC_REC_GAP, 3, 2);
	add_decl(g, lg, PC_REC_RELOAD, 5);
	add_window(g, lg, 5, 55, 0);
	add_window(g, lg, 6, 20, 0);
	add_simple(g, lg, PC_REC_STOP, 7, 0);
	add_decl(g, lg, PC_REC_START, 9);
	add_window(g, lg, 9, 10, 0);
	add_window(g, lg, 10, 99, 0);
	add_window(g, lg, 11, 35, 0);
}

static const struct pc_verify_failure *
expect_fail(const struct pc_verify *v, enum pc_verify_check c, int64_t record)
{
	const struct pc_verify_failure *f = pc_verify_find(v, c);

	if (f == NULL) {
		pc_test_print_failures(v);
		fail_msg("no %s failure", pc_verify_check_name(c));
	}
	if (record != -2 && f->record != record) {
		pc_test_print_failures(v);
		fail_msg("%s failure at record %lld, expected %lld", pc_verify_check_name(c),
			 (long long)f->record, (long long)record);
	}
	return f;
}

static void
expect_ok(const struct pc_verify *v)
{
	if (pc_verify_nfailures(v) != 0) {
		pc_test_print_failures(v);
		fail_msg("expected the log to verify");
	}
}

/* ---- the log that holds ---- */

static void
test_clean_log(void **state)
{
	struct pc_test_log lg;
	char note[PC_NOTE_MAX];
	struct pc_verify_totals t;

	(void)state;
	build_ref(&gen_a, &lg);
	size_t n = pc_test_log_checkpoint(&lg, lg.n, key_a, note, sizeof(note));
	struct pc_test_run o = { .vk = &vk_a, .podmap = &gen_a.cfg, .stored = &lg };
	struct pc_verify *v = pc_test_verify(&o, note, n, &lg);

	expect_ok(v);
	assert_int_equal(pc_verify_nrecords(v), 13);
	assert_int_equal(pc_verify_nwindows(v), 8);

	/* totals are the sums of what the windows claim */
	assert_int_equal(pc_verify_pod_totals(v, "pod-a", PC_DIR_UP, &t), 0);
	uint64_t fw = full_window(&gen_a, 0);
	static const unsigned pct[] = { 40, 100, 70, 55, 20, 10, 99, 35 };
	uint64_t sum = 0;
	for (size_t i = 0; i < 8; i++)
		sum += fw / 100 * pct[i];
	assert_true(t.bytes == sum);
	assert_int_equal(t.windows, 8);
	assert_true(t.peak_bytes == fw);
	assert_true(t.peak_window_start_ns == wstart(&gen_a, 1));
	assert_int_equal(t.peak_permille, 1000);
	assert_int_equal(t.at_cap, 2);                 /* 100% and 99% */
	assert_true(t.drop_frames[PC_DROP_OVER_CAP] == 0 + 1 + 2 + 5 + 6 + 9 + 10 + 11);
	assert_int_equal(pc_verify_pod_totals(v, "pod-z", PC_DIR_UP, &t), -1);

	/* gaps, restarts and reloads are reported, not failed */
	assert_int_equal(pc_verify_nevents(v), 5);
	const struct pc_verify_event *e = pc_verify_event_at(v, 1);
	assert_int_equal(e->kind, PC_VE_GAP);
	assert_int_equal(e->record, 4);
	assert_int_equal(e->windows, 2);
	assert_true(e->window_start_ns == wstart(&gen_a, 3));
	assert_int_equal(pc_verify_event_at(v, 2)->kind, PC_VE_RELOAD);
	assert_int_equal(pc_verify_event_at(v, 3)->kind, PC_VE_STOP);
	e = pc_verify_event_at(v, 4);
	assert_int_equal(e->kind, PC_VE_RESTART);
	assert_true(e->clean);
	assert_true(e->from_ns == wstart(&gen_a, 7));
	assert_int_equal(e->windows, 2);

	size_t len;
	const char *kept = pc_verify_checkpoint_note(v, &len);
	assert_int_equal(len, n);
	assert_memory_equal(kept, note, n);
	pc_verify_free(v);
	pc_test_log_free(&lg);
}

/*
 * Feeds v the ledger's checkpoint and its records from `first` on, as
 * podcap-verify --ledger does; closes the ledger.
 */
static struct pc_verify *
feed_ledger(struct pc_verify *v, struct pc_ledger *l, uint64_t first)
{
	char note[PC_NOTE_MAX];
	uint8_t *buf = malloc(PC_RECORD_MAX), leaf[PC_HASH_LEN];

	long n = pc_ledger_checkpoint(l, note, sizeof(note));
	assert_true(n > 0);
	if (pc_verify_checkpoint(v, note, (size_t)n) == 0)
		for (uint64_t i = first; i < pc_verify_size(v) && i < pc_ledger_size(l); i++) {
			long len = pc_ledger_record(l, i, buf, PC_RECORD_MAX);
			assert_true(len > 0);
			assert_int_equal(pc_ledger_leaf(l, i, leaf), 0);
			pc_verify_record(v, buf, (size_t)len, leaf);
		}
	pc_verify_finish(v);
	pc_ledger_close(l);
	free(buf);
	return v;
}

/* The same log through a ledger directory, read as podcap-verify --ledger does. */
static struct pc_verify *
verify_dir(const char *dir, const struct pc_verifier_key *vk)
{
	struct pc_error err;
	struct pc_ledger *l = pc_ledger_open_ro(dir, &err);

	assert_non_null(l);
	return feed_ledger(pc_verify_new(vk, NULL), l, 0);
}

static void
write_ledger(const struct pc_test_log *lg, const char *dir)
{
	char note[PC_NOTE_MAX];
	struct pc_error err;
	struct pc_ledger *l = pc_ledger_open(dir, ORIGIN, &err);

	assert_non_null(l);
	for (size_t i = 0; i < lg->n; i++)
		assert_int_equal(pc_ledger_append(l, lg->rec[i], lg->len[i]), 0);
	size_t n = pc_test_log_checkpoint(lg, lg->n, key_a, note, sizeof(note));
	assert_int_equal(pc_ledger_publish(l, note, n, NULL), 0);
	pc_ledger_close(l);
}

/*
 * Changes a byte of record k where it lies in dir's records file (each
 * entry is a 4-byte length, the record, its leaf hash): one of the last
 * counters, so that the record still decodes.
 */
static void
alter_in_dir(const char *dir, const struct pc_test_log *lg, size_t k)
{
	char path[600];
	long off = 0;

	snprintf(path, sizeof(path), "%s/records", dir);
	FILE *f = fopen(path, "r+b");
	assert_non_null(f);
	for (size_t i = 0; i < k; i++)
		off += 4 + (long)lg->len[i] + PC_HASH_LEN;
	off += 4 + (long)lg->len[k] - 40;
	assert_int_equal(fseek(f, off, SEEK_SET), 0);
	int c = fgetc(f);
	assert_int_equal(fseek(f, off, SEEK_SET), 0);
	fputc(c ^ 0x20, f);
	fclose(f);
}

static void
test_ledger_dir_changed_byte(void **state)
{
	struct pc_test_log lg;
	char dir[512];

	(void)state;
	build_ref(&gen_a, &lg);
	snprintf(dir, sizeof(dir), "%s/changed", tmpdir);
	write_ledger(&lg, dir);
	struct pc_verify *v = verify_dir(dir, &vk_a);
	expect_ok(v);
	pc_verify_free(v);

	/* one byte of window 2's counters, in the records file */
	alter_in_dir(dir, &lg, 3);

	v = verify_dir(dir, &vk_a);
	/* the stored hashes still give the signed root: the changed record is named */
	const struct pc_verify_failure *x = expect_fail(v, PC_VC_ROOT, 3);
	assert_int_equal(x->type, PC_REC_WINDOW);
	assert_true(x->window_start_ns == wstart(&gen_a, 2));
	/* and the counter it changed is one no port can produce */
	assert_int_equal(pc_verify_nfailures(v), 2);
	expect_fail(v, PC_VC_COUNTERS, 3);
	pc_verify_free(v);
	pc_test_log_free(&lg);
}

/* ---- the tamper corpus ---- */

static void
test_changed_byte(void **state)
{
	struct pc_test_log lg, t;
	char note[PC_NOTE_MAX];

	(void)state;
	build_ref(&gen_a, &lg);
	size_t n = pc_test_log_checkpoint(&lg, lg.n, key_a, note, sizeof(note));
	struct pc_test_run plain = { .vk = &vk_a }, stored = { .vk = &vk_a, .stored = &lg };

	/* every byte of a window record, one at a time: never accepted */
	for (size_t k = 0; k < lg.len[2]; k++) {
		pc_test_log_copy(&lg, &t);
		t.rec[2][k] ^= 0x01;
		struct pc_verify *v = pc_test_verify(&plain, note, n, &t);
		assert_true(pc_verify_nfailures(v) > 0);
		expect_fail(v, PC_VC_ROOT, -2);
		pc_verify_free(v);
		pc_test_log_free(&t);
	}

	/* a counter: the root tells (with stored leaves, which record), and the counters check */
	pc_test_log_copy(&lg, &t);
	t.rec[2][t.len[2] - 100] ^= 0x80;
	struct pc_verify *v = pc_test_verify(&plain, note, n, &t);
	expect_fail(v, PC_VC_ROOT, -1);
	assert_int_equal(pc_verify_failure_at(v, 0)->check, PC_VC_ROOT);
	expect_fail(v, PC_VC_COUNTERS, 2);
	assert_int_equal(pc_verify_nfailures(v), 2);
	pc_verify_free(v);
	v = pc_test_verify(&stored, note, n, &t);
	expect_fail(v, PC_VC_ROOT, 2);
	pc_verify_free(v);
	pc_test_log_free(&t);

	/* the format version: the record no longer decodes */
	pc_test_log_copy(&lg, &t);
	t.rec[6][0] = 9;
	v = pc_test_verify(&plain, note, n, &t);
	const struct pc_verify_failure *f = expect_fail(v, PC_VC_DECODE, 6);
	assert_non_null(strstr(f->msg, "version"));
	expect_fail(v, PC_VC_ROOT, -1);
	pc_verify_free(v);
	pc_test_log_free(&t);
	pc_test_log_free(&lg);
}

static void
test_removed_record(void **state)
{
	struct pc_test_log lg;
	char note[PC_NOTE_MAX];
	struct pc_test_run o = { .vk = &vk_a };

	(void)state;
	build_ref(&gen_a, &lg);
	size_t n = pc_test_log_checkpoint(&lg, lg.n, key_a, note, sizeof(note));
	free(lg.rec[3]);                     /* window 2 */
	pc_test_log_move(&lg, 3, lg.n - 1);
	lg.n--;
	struct pc_verify *v = pc_test_verify(&o, note, n, &lg);
	const struct pc_verify_failure *f = expect_fail(v, PC_VC_SEQUENCE, 3);
	assert_int_equal(f->type, PC_REC_GAP);
	assert_non_null(strstr(f->msg, "2024-01-01T00:02:00Z"));
	expect_fail(v, PC_VC_MISSING, -2);
	pc_verify_free(v);
	pc_test_log_free(&lg);
}

static void
test_reordered_records(void **state)
{
	struct pc_test_log lg;
	char note[PC_NOTE_MAX];
	struct pc_test_run o = { .vk = &vk_a };

	(void)state;
	build_ref(&gen_a, &lg);
	size_t n = pc_test_log_checkpoint(&lg, lg.n, key_a, note, sizeof(note));
	pc_test_log_move(&lg, 2, 3);              /* windows 1 and 2 swapped */
	struct pc_verify *v = pc_test_verify(&o, note, n, &lg);
	expect_fail(v, PC_VC_SEQUENCE, 2);
	const struct pc_verify_failure *f = pc_verify_failure_at(v, 1);
	assert_int_equal(f->check, PC_VC_SEQUENCE);
	assert_int_equal(f->record, 3);
	assert_non_null(strstr(f->msg, "overlaps"));
	expect_fail(v, PC_VC_ROOT, -1);
	pc_verify_free(v);
	pc_test_log_free(&lg);
}

static void
test_duplicated_record(void **state)
{
	struct pc_test_log lg;
	char note[PC_NOTE_MAX];
	struct pc_test_run o = { .vk = &vk_a };

	(void)state;
	build_ref(&gen_a, &lg);
	/* signed over 13 records; a 14th copy of window 1 placed after it */
	size_t n = pc_test_log_checkpoint(&lg, lg.n, key_a, note, sizeof(note));
	lg.rec[lg.n] = malloc(lg.len[2]);
	memcpy(lg.rec[lg.n], lg.rec[2], lg.len[2]);
	lg.len[lg.n] = lg.len[2];
	lg.n++;
	pc_test_log_move(&lg, lg.n - 1, 3);
	struct pc_verify *v = pc_test_verify(&o, note, n, &lg);
	const struct pc_verify_failure *f = expect_fail(v, PC_VC_SEQUENCE, 3);
	assert_non_null(strstr(f->msg, "duplicated"));
	expect_fail(v, PC_VC_ROOT, -1);
	pc_verify_free(v);

	/* and re-signed by the operator, so the root holds: still a duplicate window */
	v = pc_test_verify_signed(&o, key_a, &lg);
	expect_fail(v, PC_VC_SEQUENCE, 3);
	assert_null(pc_verify_find(v, PC_VC_ROOT));
	pc_verify_free(v);
	pc_test_log_free(&lg);
}

static void
test_inserted_record(void **state)
{
	struct pc_test_log lg, extra = { 0 };
	char note[PC_NOTE_MAX];
	struct pc_test_run o = { .vk = &vk_a };

	(void)state;
	build_ref(&gen_a, &lg);
	size_t n = pc_test_log_checkpoint(&lg, lg.n, key_a, note, sizeof(note));
	/* a window fabricated where the gap is */
	add_window(&gen_a, &extra, 3, 10, 0);
	lg.rec[lg.n] = extra.rec[0];
	lg.len[lg.n] = extra.len[0];
	lg.n++;
	pc_test_log_move(&lg, lg.n - 1, 4);
	struct pc_verify *v = pc_test_verify(&o, note, n, &lg);
	expect_fail(v, PC_VC_SEQUENCE, 5);     /* the gap now overlaps it */
	expect_fail(v, PC_VC_ROOT, -1);
	pc_verify_free(v);

	/* records beyond the checkpoint are not covered, and not read */
	pc_test_log_free(&lg);
	build_ref(&gen_a, &lg);
	n = pc_test_log_checkpoint(&lg, 10, key_a, note, sizeof(note));
	v = pc_test_verify(&o, note, n, &lg);
	expect_ok(v);
	assert_int_equal(pc_verify_nrecords(v), 10);
	pc_verify_free(v);
	pc_test_log_free(&lg);
}

static void
test_truncated_tail(void **state)
{
	struct pc_test_log lg;
	char note[PC_NOTE_MAX];
	struct pc_test_run o = { .vk = &vk_a };

	(void)state;
	build_ref(&gen_a, &lg);
	size_t n = pc_test_log_checkpoint(&lg, lg.n, key_a, note, sizeof(note));
	lg.n -= 2;
	struct pc_verify *v = pc_test_verify(&o, note, n, &lg);
	const struct pc_verify_failure *f = expect_fail(v, PC_VC_MISSING, 11);
	assert_non_null(strstr(f->msg, "covers 13 records but only 11"));
	assert_int_equal(pc_verify_nfailures(v), 1);
	lg.n += 2;
	pc_verify_free(v);
	pc_test_log_free(&lg);
}

static void
test_spliced_log(void **state)
{
	struct pc_test_log lg, other;
	char note[PC_NOTE_MAX], note_b[PC_NOTE_MAX];
	struct pc_test_run o = { .vk = &vk_a };
	struct gen g = gen_a;

	(void)state;
	build_ref(&gen_a, &lg);
	snprintf(g.appliance, sizeof(g.appliance), "t-other");
	build_ref(&g, &other);

	/* the other appliance's records under this one's checkpoint */
	size_t n = pc_test_log_checkpoint(&lg, lg.n, key_a, note, sizeof(note));
	struct pc_verify *v = pc_test_verify(&o, note, n, &other);
	const struct pc_verify_failure *f = expect_fail(v, PC_VC_APPLIANCE, 0);
	assert_non_null(strstr(f->msg, "'t-other'"));
	expect_fail(v, PC_VC_ROOT, -1);
	pc_verify_free(v);

	/* ... and signed with this appliance's key: the appliance id still gives it away */
	n = pc_test_log_checkpoint(&other, other.n, key_a, note, sizeof(note));
	v = pc_test_verify(&o, note, n, &other);
	expect_fail(v, PC_VC_APPLIANCE, 0);
	assert_null(pc_verify_find(v, PC_VC_ROOT));
	pc_verify_free(v);

	/* the other appliance's own signed log, checked with this appliance's key */
	uint8_t root[PC_HASH_LEN];
	pc_test_log_root(&other, other.n, root);
	size_t nb = pc_test_checkpoint(key_b, "podcap/t-other", other.n, root, note_b,
				       sizeof(note_b));
	v = pc_test_verify(&o, note_b, nb, &other);
	f = expect_fail(v, PC_VC_SIGNATURE, -1);
	assert_non_null(strstr(f->msg, "no signature by key podcap/t-app"));
	assert_int_equal(pc_verify_nrecords(v), 0);
	pc_verify_free(v);

	/* this key signing a checkpoint that names another log */
	nb = pc_test_checkpoint(key_a, "podcap/t-other", other.n, root, note_b, sizeof(note_b));
	v = pc_test_verify(&o, note_b, nb, &other);
	expect_fail(v, PC_VC_ORIGIN, -1);
	pc_verify_free(v);
	pc_test_log_free(&lg);
	pc_test_log_free(&other);
}

static void
test_other_key(void **state)
{
	struct pc_test_log lg;
	char note[PC_NOTE_MAX];
	struct pc_test_run o = { .vk = &vk_a };

	(void)state;
	build_ref(&gen_a, &lg);
	uint8_t root[PC_HASH_LEN];
	pc_test_log_root(&lg, lg.n, root);

	/* another key that carries this appliance's name */
	struct pc_signer_key *imp = pc_test_key(ORIGIN, NULL);
	size_t n = pc_test_checkpoint(imp, ORIGIN, lg.n, root, note, sizeof(note));
	struct pc_verify *v = pc_test_verify(&o, note, n, &lg);
	expect_fail(v, PC_VC_SIGNATURE, -1);
	pc_verify_free(v);

	/* the same key id and name, a signature that does not verify */
	struct pc_verifier_key forged = vk_a;
	pc_signer_key_public(imp, &forged);
	forged.id = vk_a.id;
	memcpy(forged.name, vk_a.name, sizeof(forged.name));
	n = pc_test_checkpoint(key_a, ORIGIN, lg.n, root, note, sizeof(note));
	struct pc_test_run f = { .vk = &forged };
	v = pc_test_verify(&f, note, n, &lg);
	const struct pc_verify_failure *x = expect_fail(v, PC_VC_SIGNATURE, -1);
	assert_non_null(strstr(x->msg, "bad signature"));
	pc_verify_free(v);

	/* the body edited after signing */
	char *p = strstr(note, "\n13\n");
	assert_non_null(p);
	p[2] = '2';
	v = pc_test_verify(&o, note, n, &lg);
	expect_fail(v, PC_VC_SIGNATURE, -1);
	pc_verify_free(v);

	/* not a note at all */
	v = pc_test_verify(&o, "hello\n", 6, &lg);
	expect_fail(v, PC_VC_CHECKPOINT, -1);
	pc_verify_free(v);
	pc_signer_key_free(imp);
	pc_test_log_free(&lg);
}

static void
test_rollback_and_fork(void **state)
{
	struct pc_test_log lg, forked;
	char note[PC_NOTE_MAX], old[PC_NOTE_MAX], fork_note[PC_NOTE_MAX];

	(void)state;
	build_ref(&gen_a, &lg);
	size_t n = pc_test_log_checkpoint(&lg, lg.n, key_a, note, sizeof(note));
	pc_test_log_checkpoint(&lg, 8, key_a, old, sizeof(old));

	/* the earlier checkpoint is a prefix: fine */
	struct pc_test_run o = { .vk = &vk_a, .trusted = old };
	struct pc_verify *v = pc_test_verify(&o, note, n, &lg);
	expect_ok(v);
	assert_int_equal(pc_verify_trusted_size(v), 8);
	pc_verify_free(v);

	/* back to the older checkpoint after trusting the newer one: rollback */
	char newer[PC_NOTE_MAX];
	memcpy(newer, note, n);
	newer[n] = '\0';
	struct pc_test_run r = { .vk = &vk_a, .trusted = newer };
	size_t n8 = strlen(old);
	v = pc_test_verify(&r, old, n8, &lg);
	const struct pc_verify_failure *f = expect_fail(v, PC_VC_ROLLBACK, -1);
	assert_non_null(strstr(f->msg, "8 records, fewer than the 13"));
	pc_verify_free(v);

	/* a history where window 1 said something else, signed with the same key */
	pc_test_log_copy(&lg, &forked);
	free(forked.rec[2]);
	struct pc_test_log w = { 0 };
	add_window(&gen_a, &w, 1, 90, 0);
	forked.rec[2] = w.rec[0];
	forked.len[2] = w.len[0];
	pc_test_log_checkpoint(&forked, 8, key_a, fork_note, sizeof(fork_note));
	struct pc_test_run fk = { .vk = &vk_a, .trusted = fork_note };
	v = pc_test_verify(&fk, note, n, &lg);
	f = expect_fail(v, PC_VC_FORK, -1);
	assert_non_null(strstr(f->msg, "first 8 records"));
	pc_verify_free(v);

	/* same size, other root */
	pc_test_log_checkpoint(&forked, 13, key_a, fork_note, sizeof(fork_note));
	v = pc_test_verify(&fk, note, n, &lg);
	expect_fail(v, PC_VC_FORK, -1);
	pc_verify_free(v);

	pc_test_log_free(&forked);
	pc_test_log_free(&lg);
}

/* Leaf hashes of a log, for pc_merkle_* proofs. */
static int
log_leaf(void *ctx, uint64_t i, uint8_t out[PC_HASH_LEN])
{
	const struct pc_test_log *lg = ctx;

	if (i >= lg->n)
		return -1;
	pc_merkle_leaf_hash(lg->rec[i], lg->len[i], out);
	return 0;
}

static void
test_consistency_proof(void **state)
{
	struct pc_test_log lg, forked;
	char note[PC_NOTE_MAX], old[PC_NOTE_MAX];
	uint8_t proof[PC_MAX_PROOF][PC_HASH_LEN];
	size_t np;
	struct pc_error err;

	(void)state;
	build_ref(&gen_a, &lg);
	size_t n = pc_test_log_checkpoint(&lg, lg.n, key_a, note, sizeof(note));
	pc_test_log_checkpoint(&lg, 5, key_a, old, sizeof(old));
	assert_int_equal(pc_merkle_consistency_proof(log_leaf, &lg, 5, 13, proof, &np), 0);

	struct pc_verify *v = pc_verify_new(&vk_a, NULL);
	assert_int_equal(pc_verify_trusted(v, old, strlen(old), &err), 0);
	assert_int_equal(pc_verify_checkpoint(v, note, n), 0);
	pc_verify_consistency(v, (const uint8_t(*)[PC_HASH_LEN])proof, np);
	for (size_t i = 0; i < lg.n; i++)
		pc_verify_record(v, lg.rec[i], lg.len[i], NULL);
	assert_int_equal(pc_verify_finish(v), 0);
	pc_verify_free(v);

	/* a proof from a forked history does not verify against the trusted root */
	pc_test_log_copy(&lg, &forked);
	forked.rec[1][forked.len[1] - 50] ^= 1;
	pc_test_log_checkpoint(&forked, 5, key_a, old, sizeof(old));
	v = pc_verify_new(&vk_a, NULL);
	assert_int_equal(pc_verify_trusted(v, old, strlen(old), &err), 0);
	assert_int_equal(pc_verify_checkpoint(v, note, n), 0);
	pc_verify_consistency(v, (const uint8_t(*)[PC_HASH_LEN])proof, np);
	const struct pc_verify_failure *f = expect_fail(v, PC_VC_FORK, -1);
	assert_non_null(strstr(f->msg, "consistency proof from the trusted size 5 to 13"));
	pc_verify_free(v);

	/* a trusted state signed by another key is the caller's problem, not a finding */
	char bad[PC_NOTE_MAX];
	uint8_t root[PC_HASH_LEN];
	pc_test_log_root(&lg, 5, root);
	pc_test_checkpoint(key_b, ORIGIN, 5, root, bad, sizeof(bad));
	v = pc_verify_new(&vk_a, NULL);
	assert_int_equal(pc_verify_trusted(v, bad, strlen(bad), &err), -1);
	assert_non_null(strstr(err.msg, "signature"));
	pc_verify_free(v);
	pc_test_log_free(&forked);
	pc_test_log_free(&lg);
}

static void
test_envelope(void **state)
{
	struct pc_test_log lg;
	struct pc_test_run o = { .vk = &vk_a };
	const uint64_t burst = gen_a.cfg.pods[0].limits.burst_bytes;

	(void)state;
	/* one window far over the cap, signed with the real key */
	memset(&lg, 0, sizeof(lg));
	add_decl(&gen_a, &lg, PC_REC_START, 0);
	add_window(&gen_a, &lg, 0, 50, 0);
	add_window(&gen_a, &lg, 1, 100, 2 * full_window(&gen_a, 0));
	add_window(&gen_a, &lg, 2, 50, 0);
	struct pc_verify *v = pc_test_verify_signed(&o, key_a, &lg);
	const struct pc_verify_failure *f = expect_fail(v, PC_VC_ENVELOPE, 2);
	assert_int_equal(f->type, PC_REC_WINDOW);
	assert_true(f->window_start_ns == wstart(&gen_a, 1));
	assert_non_null(strstr(f->msg, "pod pod-a up"));
	assert_null(strstr(f->msg, "pod-b"));
	assert_int_equal(pc_verify_nfailures(v), 1);
	pc_verify_free(v);
	pc_test_log_free(&lg);

	/* exactly burst + cap x window in one window: holds; one byte more: fails */
	for (int more = 0; more <= 1; more++) {
		memset(&lg, 0, sizeof(lg));
		add_decl(&gen_a, &lg, PC_REC_START, 0);
		add_window(&gen_a, &lg, 0, 100, burst + (uint64_t)more);
		v = pc_test_verify_signed(&o, key_a, &lg);
		if (more) {
			f = expect_fail(v, PC_VC_ENVELOPE, 1);
			assert_non_null(strstr(f->msg, "by 1 bytes"));
		} else {
			expect_ok(v);
		}
		pc_verify_free(v);
		pc_test_log_free(&lg);
	}

	/*
	 * Each window within burst + cap x window, two together over it: only
	 * a check over runs of windows sees it.
	 */
	memset(&lg, 0, sizeof(lg));
	add_decl(&gen_a, &lg, PC_REC_START, 0);
	add_window(&gen_a, &lg, 0, 20, 0);
	add_window(&gen_a, &lg, 1, 100, burst / 2 + 1);
	add_window(&gen_a, &lg, 2, 100, burst / 2 + 1);
	add_window(&gen_a, &lg, 3, 20, 0);
	v = pc_test_verify_signed(&o, key_a, &lg);
	f = expect_fail(v, PC_VC_ENVELOPE, 3);
	assert_non_null(strstr(f->msg, "from 2024-01-01T00:01:00Z to 2024-01-01T00:03:00Z"));
	pc_verify_free(v);
	pc_test_log_free(&lg);

	/* the same two windows on either side of two windows down: the time down is budget */
	memset(&lg, 0, sizeof(lg));
	add_decl(&gen_a, &lg, PC_REC_START, 0);
	add_window(&gen_a, &lg, 0, 100, burst / 2 + 1);
	add_simple(&gen_a, &lg, PC_REC_STOP, 1, 0);
	add_decl(&gen_a, &lg, PC_REC_START, 3);
	add_window(&gen_a, &lg, 3, 100, burst / 2 + 1);
	v = pc_test_verify_signed(&o, key_a, &lg);
	expect_ok(v);
	pc_verify_free(v);
	pc_test_log_free(&lg);

	/* ... but a restart does not refill the bucket: back to back, they break it */
	memset(&lg, 0, sizeof(lg));
	add_decl(&gen_a, &lg, PC_REC_START, 0);
	add_window(&gen_a, &lg, 0, 100, burst / 2 + 1);
	add_simple(&gen_a, &lg, PC_REC_STOP, 1, 0);
	add_decl(&gen_a, &lg, PC_REC_START, 1);
	add_window(&gen_a, &lg, 1, 100, burst / 2 + 1);
	v = pc_test_verify_signed(&o, key_a, &lg);
	expect_fail(v, PC_VC_ENVELOPE, 4);
	pc_verify_free(v);
	pc_test_log_free(&lg);

	/* new limits start a new run */
	memset(&lg, 0, sizeof(lg));
	add_decl(&gen_a, &lg, PC_REC_START, 0);
	add_window(&gen_a, &lg, 0, 100, burst / 2 + 1);
	add_decl(&gen_b, &lg, PC_REC_RELOAD, 1);
	add_window(&gen_b, &lg, 1, 100, burst / 2 + 1);
	v = pc_test_verify_signed(&o, key_a, &lg);
	/* pod-a's limits are the same in both maps: one run, broken */
	f = expect_fail(v, PC_VC_ENVELOPE, 3);
	assert_non_null(strstr(f->msg, "pod pod-a up"));
	pc_verify_free(v);
	pc_test_log_free(&lg);
}

/*
 * A START after a WINDOW of several windows: the new podcapd's buckets were
 * made after the old one exited, which was after the last window the record
 * covers began, not its first. A pod whose cap earns less than its burst in
 * a window may then hold cap x one window, not cap x the record's span.
 */
static void
test_envelope_after_merged(void **state)
{
	static const char slow[] = "appliance:\n  id: " APP "\nwindow: 60s\n"
				   "uplinks:\n  - name: up0\n    pod_port: 0000:3b:00.0\n"
				   "    fabric_port: 0000:3b:00.1\n"
				   "pods:\n  - id: pod-a\n    uplink: up0\n"
				   "    cap: 8Mbps\n    burst: 100MB\n    mode: police\n";
	struct pc_test_run o = { .vk = &vk_a };
	struct pc_test_log lg;
	struct gen g;
	struct pc_record r;
	struct pc_record_pod pods[1];
	struct pc_record_link link = { .name = "up0" };

	(void)state;
	load_map(&g, slow);
	const uint64_t window = full_window(&g, 0); /* 60 MB a window: less than the burst */
	for (int over = 0; over <= 1; over++) {
		memset(&lg, 0, sizeof(lg));
		add_decl(&g, &lg, PC_REC_START, 0);
		base(&g, &r, PC_REC_WINDOW, 0);
		r.window_count = 3;
		fill_pods(&g, &r, pods);
		r.nlinks = 1;
		r.links = &link;
		pc_test_log_push(&lg, &r);
		add_simple(&g, &lg, PC_REC_STOP, 3, 0);
		add_decl(&g, &lg, PC_REC_START, 3);
		/* what one window since window 2 began earned, and this window's */
		add_window(&g, &lg, 3, 100, window + (uint64_t)over);
		struct pc_verify *v = pc_test_verify_signed(&o, key_a, &lg);
		if (over)
			expect_fail(v, PC_VC_ENVELOPE, 4);
		else
			expect_ok(v);
		pc_verify_free(v);
		pc_test_log_free(&lg);
	}
	pc_config_free(&g.cfg);
}

static void
add_clock(const struct gen *g, struct pc_test_log *lg, uint64_t w, uint64_t elapsed_ns,
	  int64_t step_ns)
{
	struct pc_record r;

	base(g, &r, PC_REC_CLOCK, w);
	r.clock.elapsed_ns = elapsed_ns;
	r.clock.step_ns = step_ns;
	pc_test_log_push(lg, &r);
}

static const struct pc_verify_event *
find_event(const struct pc_verify *v, enum pc_verify_event_kind kind)
{
	for (size_t i = 0; i < pc_verify_nevents(v); i++)
		if (pc_verify_event_at(v, i)->kind == kind)
			return pc_verify_event_at(v, i);
	return NULL;
}

/* Steps of the wall clock: labels jump forward, never back, and grant no allowance. */
static void
test_clock_steps(void **state)
{
	struct pc_test_log lg;
	struct pc_test_run o = { .vk = &vk_a };
	const uint64_t burst = gen_a.cfg.pods[0].limits.burst_bytes;
	const int64_t ten = 10 * (int64_t)gen_a.cfg.window_ns;

	(void)state;
	/* forward by 10 windows: the labels jump, the record explains it, it verifies */
	memset(&lg, 0, sizeof(lg));
	add_decl(&gen_a, &lg, PC_REC_START, 0);
	add_window(&gen_a, &lg, 0, 50, 0);
	add_clock(&gen_a, &lg, 11, 0, ten);
	add_window(&gen_a, &lg, 11, 50, 0);
	add_simple(&gen_a, &lg, PC_REC_STOP, 12, 0);
	struct pc_verify *v = pc_test_verify_signed(&o, key_a, &lg);
	expect_ok(v);
	const struct pc_verify_event *e = find_event(v, PC_VE_CLOCK);
	assert_non_null(e);
	assert_int_equal(e->record, 2);
	assert_true(e->step_ns == ten);
	assert_true(e->from_ns == wstart(&gen_a, 1) && e->window_start_ns == wstart(&gen_a, 11));
	assert_true(e->elapsed_ns == 0);
	assert_int_equal(pc_verify_nwindows(v), 2);
	pc_verify_free(v);

	/* the same jump forged, with no clock record: a hole no record explains */
	free(lg.rec[2]);
	memmove(&lg.rec[2], &lg.rec[3], 2 * sizeof(lg.rec[0]));
	memmove(&lg.len[2], &lg.len[3], 2 * sizeof(lg.len[0]));
	lg.n--;
	v = pc_test_verify_signed(&o, key_a, &lg);
	const struct pc_verify_failure *f = expect_fail(v, PC_VC_SEQUENCE, 2);
	assert_non_null(strstr(f->msg, "no gap record or restart explains it"));
	pc_verify_free(v);
	pc_test_log_free(&lg);

	/*
	 * Full windows on both sides of the jump. Had the 10 windows of labels
	 * passed for real (a GAP), the bucket would have refilled; the clock
	 * record says no time passed, so the two windows are back to back.
	 */
	for (int real = 0; real <= 1; real++) {
		memset(&lg, 0, sizeof(lg));
		add_decl(&gen_a, &lg, PC_REC_START, 0);
		add_window(&gen_a, &lg, 0, 100, burst / 2 + 1);
		if (real)
			add_simple(&gen_a, &lg, PC_REC_GAP, 1, 10);
		else
			add_clock(&gen_a, &lg, 11, 0, ten);
		add_window(&gen_a, &lg, 11, 100, burst / 2 + 1);
		v = pc_test_verify_signed(&o, key_a, &lg);
		if (real) {
			expect_ok(v);
		} else {
			f = expect_fail(v, PC_VC_ENVELOPE, 3);
			assert_non_null(strstr(f->msg, "pod pod-a up"));
		}
		pc_verify_free(v);
		pc_test_log_free(&lg);
	}

	/* a clock record may not claim more real time than its labels skip */
	memset(&lg, 0, sizeof(lg));
	add_decl(&gen_a, &lg, PC_REC_START, 0);
	add_window(&gen_a, &lg, 0, 50, 0);
	add_clock(&gen_a, &lg, 3, 2 * gen_a.cfg.window_ns + 1, 0);
	v = pc_test_verify_signed(&o, key_a, &lg);
	f = expect_fail(v, PC_VC_SEQUENCE, 2);
	assert_non_null(strstr(f->msg, "of real time where its window labels advance"));
	pc_verify_free(v);
	pc_test_log_free(&lg);

	/* back by 5 windows: labels go on from the cursor, reported, verifies */
	memset(&lg, 0, sizeof(lg));
	add_decl(&gen_a, &lg, PC_REC_START, 0);
	add_window(&gen_a, &lg, 0, 50, 0);
	add_window(&gen_a, &lg, 1, 50, 0);
	add_clock(&gen_a, &lg, 2, 0, -ten / 2);
	add_window(&gen_a, &lg, 2, 50, 0);
	v = pc_test_verify_signed(&o, key_a, &lg);
	expect_ok(v);
	e = find_event(v, PC_VE_CLOCK);
	assert_non_null(e);
	assert_true(e->step_ns == -ten / 2 && e->window_start_ns == e->from_ns);
	pc_verify_free(v);
	pc_test_log_free(&lg);

	/* a clock record that takes the labels back, or comes after a stop, is refused */
	memset(&lg, 0, sizeof(lg));
	add_decl(&gen_a, &lg, PC_REC_START, 0);
	add_window(&gen_a, &lg, 0, 50, 0);
	add_window(&gen_a, &lg, 1, 50, 0);
	add_clock(&gen_a, &lg, 1, 0, -ten);
	v = pc_test_verify_signed(&o, key_a, &lg);
	f = expect_fail(v, PC_VC_SEQUENCE, 3);
	assert_non_null(strstr(f->msg, "takes the windows back"));
	pc_verify_free(v);
	pc_test_log_free(&lg);
	memset(&lg, 0, sizeof(lg));
	add_decl(&gen_a, &lg, PC_REC_START, 0);
	add_simple(&gen_a, &lg, PC_REC_STOP, 0, 0);
	add_clock(&gen_a, &lg, 4, 0, ten);
	v = pc_test_verify_signed(&o, key_a, &lg);
	f = expect_fail(v, PC_VC_SEQUENCE, 2);
	assert_non_null(strstr(f->msg, "clock after a stop record"));
	pc_verify_free(v);
	pc_test_log_free(&lg);
}

static void
test_podmap(void **state)
{
	struct pc_test_log lg;
	char note[PC_NOTE_MAX], a[2 * PC_DIGEST_LEN + 1], b[2 * PC_DIGEST_LEN + 1];

	(void)state;
	build_ref(&gen_a, &lg);
	size_t n = pc_test_log_checkpoint(&lg, lg.n, key_a, note, sizeof(note));
	struct pc_test_run same = { .vk = &vk_a, .podmap = &gen_a.cfg };
	struct pc_test_run other = { .vk = &vk_a, .podmap = &gen_b.cfg };
	struct pc_verify *v = pc_test_verify(&same, note, n, &lg);
	expect_ok(v);
	pc_verify_free(v);

	/* another pod map: every start and reload under the log's, with both digests */
	v = pc_test_verify(&other, note, n, &lg);
	const struct pc_verify_failure *f = expect_fail(v, PC_VC_PODMAP, 0);
	pc_hex(gen_a.digest, PC_DIGEST_LEN, a);
	pc_hex(gen_b.digest, PC_DIGEST_LEN, b);
	assert_non_null(strstr(f->msg, a));
	assert_non_null(strstr(f->msg, b));
	assert_int_equal(pc_verify_nfailures(v), 3);
	pc_verify_free(v);
	pc_test_log_free(&lg);

	/* a reload to another map part way: caught at the reload */
	memset(&lg, 0, sizeof(lg));
	add_decl(&gen_a, &lg, PC_REC_START, 0);
	add_window(&gen_a, &lg, 0, 10, 0);
	add_decl(&gen_b, &lg, PC_REC_RELOAD, 1);
	add_window(&gen_b, &lg, 1, 10, 0);
	v = pc_test_verify_signed(&same, key_a, &lg);
	expect_fail(v, PC_VC_PODMAP, 2);
	pc_verify_free(v);
	pc_test_log_free(&lg);

	/* the right digest, but limits the pod map does not declare */
	struct gen liar = gen_b;
	memcpy(liar.digest, gen_a.digest, PC_DIGEST_LEN);
	memset(&lg, 0, sizeof(lg));
	add_decl(&liar, &lg, PC_REC_START, 0);
	add_window(&liar, &lg, 0, 10, 0);
	v = pc_test_verify_signed(&same, key_a, &lg);
	f = expect_fail(v, PC_VC_PODMAP, 0);
	assert_non_null(strstr(f->msg, "pod pod-b"));
	pc_verify_free(v);
	pc_test_log_free(&lg);
}

static void
test_sequence_rules(void **state)
{
	struct pc_test_log lg;
	struct pc_test_run o = { .vk = &vk_a };
	struct pc_verify *v;

	(void)state;
	/* record 0 must be a start */
	memset(&lg, 0, sizeof(lg));
	add_window(&gen_a, &lg, 0, 10, 0);
	v = pc_test_verify_signed(&o, key_a, &lg);
	expect_fail(v, PC_VC_SEQUENCE, 0);
	pc_verify_free(v);
	pc_test_log_free(&lg);

	/* a window after a stop, with no start */
	memset(&lg, 0, sizeof(lg));
	add_decl(&gen_a, &lg, PC_REC_START, 0);
	add_simple(&gen_a, &lg, PC_REC_STOP, 0, 0);
	add_window(&gen_a, &lg, 0, 10, 0);
	v = pc_test_verify_signed(&o, key_a, &lg);
	expect_fail(v, PC_VC_SEQUENCE, 2);
	pc_verify_free(v);
	pc_test_log_free(&lg);

	/* a window under a pod map that was never put in force */
	memset(&lg, 0, sizeof(lg));
	add_decl(&gen_a, &lg, PC_REC_START, 0);
	add_window(&gen_b, &lg, 0, 10, 0);
	v = pc_test_verify_signed(&o, key_a, &lg);
	expect_fail(v, PC_VC_SEQUENCE, 1);
	pc_verify_free(v);
	pc_test_log_free(&lg);

	/* a hole between windows with nothing to explain it */
	memset(&lg, 0, sizeof(lg));
	add_decl(&gen_a, &lg, PC_REC_START, 0);
	add_window(&gen_a, &lg, 0, 10, 0);
	add_window(&gen_a, &lg, 2, 10, 0);
	add_window(&gen_a, &lg, 3, 10, 0);
	v = pc_test_verify_signed(&o, key_a, &lg);
	expect_fail(v, PC_VC_SEQUENCE, 2);
	assert_int_equal(pc_verify_nfailures(v), 1);     /* and the log goes on from there */
	pc_verify_free(v);
	pc_test_log_free(&lg);

	/* a restart without a stop (a crash): reported, not failed; one going back: failed */
	memset(&lg, 0, sizeof(lg));
	add_decl(&gen_a, &lg, PC_REC_START, 0);
	add_window(&gen_a, &lg, 0, 10, 0);
	add_decl(&gen_a, &lg, PC_REC_START, 4);
	add_window(&gen_a, &lg, 4, 10, 0);
	v = pc_test_verify_signed(&o, key_a, &lg);
	expect_ok(v);
	const struct pc_verify_event *e = pc_verify_event_at(v, 1);
	assert_int_equal(e->kind, PC_VE_RESTART);
	assert_false(e->clean);
	assert_int_equal(e->windows, 3);
	pc_verify_free(v);
	add_decl(&gen_a, &lg, PC_REC_START, 2);
	v = pc_test_verify_signed(&o, key_a, &lg);
	expect_fail(v, PC_VC_SEQUENCE, 4);
	pc_verify_free(v);
	pc_test_log_free(&lg);

	/* a gap or a reload that does not start where the log is */
	memset(&lg, 0, sizeof(lg));
	add_decl(&gen_a, &lg, PC_REC_START, 0);
	add_window(&gen_a, &lg, 0, 10, 0);
	add_simple(&gen_a, &lg, PC_REC_GAP, 0, 3);
	v = pc_test_verify_signed(&o, key_a, &lg);
	expect_fail(v, PC_VC_SEQUENCE, 2);
	pc_verify_free(v);
	pc_test_log_free(&lg);

	/* a gap for the time down between a stop and a start: reported, not failed */
	memset(&lg, 0, sizeof(lg));
	add_decl(&gen_a, &lg, PC_REC_START, 0);
	add_window(&gen_a, &lg, 0, 10, 0);
	add_simple(&gen_a, &lg, PC_REC_STOP, 1, 0);
	add_simple(&gen_a, &lg, PC_REC_GAP, 1, 2);
	add_decl(&gen_a, &lg, PC_REC_START, 3);
	add_window(&gen_a, &lg, 3, 10, 0);
	v = pc_test_verify_signed(&o, key_a, &lg);
	expect_ok(v);
	assert_int_equal(pc_verify_event_at(v, 2)->kind, PC_VE_GAP);
	e = pc_verify_event_at(v, 3);
	assert_int_equal(e->kind, PC_VE_RESTART);
	assert_true(e->clean);
	assert_int_equal(e->windows, 0);
	pc_verify_free(v);
	/* ... but no window while stopped */
	pc_test_log_free(&lg);
	memset(&lg, 0, sizeof(lg));
	add_decl(&gen_a, &lg, PC_REC_START, 0);
	add_simple(&gen_a, &lg, PC_REC_STOP, 0, 0);
	add_simple(&gen_a, &lg, PC_REC_GAP, 0, 2);
	add_window(&gen_a, &lg, 2, 10, 0);
	v = pc_test_verify_signed(&o, key_a, &lg);
	expect_fail(v, PC_VC_SEQUENCE, 3);
	pc_verify_free(v);
	pc_test_log_free(&lg);

	/* one window record covering three windows (the control thread fell behind) */
	struct pc_record r;
	struct pc_record_pod pods[8];
	memset(&lg, 0, sizeof(lg));
	add_decl(&gen_a, &lg, PC_REC_START, 0);
	base(&gen_a, &r, PC_REC_WINDOW, 0);
	r.window_count = 3;
	fill_pods(&gen_a, &r, pods);
	pods[0].dir[PC_DIR_UP].pass_bytes = 3 * full_window(&gen_a, 0);
	pods[0].dir[PC_DIR_UP].pass_frames = pods[0].dir[PC_DIR_UP].pass_bytes / 1500;
	struct pc_record_link link = { .name = "up0" };
	r.nlinks = 1;
	r.links = &link;
	pc_test_log_push(&lg, &r);
	add_window(&gen_a, &lg, 3, 10, 0);
	v = pc_test_verify_signed(&o, key_a, &lg);
	expect_ok(v);
	assert_int_equal(pc_verify_nwindows(v), 4);
	struct pc_verify_totals t;
	assert_int_equal(pc_verify_pod_totals(v, "pod-a", PC_DIR_UP, &t), 0);
	assert_int_equal(t.peak_permille, 1000);          /* of three windows' worth of cap */
	pc_verify_free(v);
	/* ... whose bytes count against three windows of cap, not one */
	free(lg.rec[1]);
	pods[0].dir[PC_DIR_UP].pass_bytes += gen_a.cfg.pods[0].limits.burst_bytes + 1;
	uint8_t *b = malloc(PC_RECORD_MAX);
	lg.len[1] = pc_record_encode(&r, b, PC_RECORD_MAX);
	lg.rec[1] = b;
	v = pc_test_verify_signed(&o, key_a, &lg);
	expect_fail(v, PC_VC_ENVELOPE, 1);
	pc_verify_free(v);
	pc_test_log_free(&lg);

	/* a pod declared twice */
	memset(&lg, 0, sizeof(lg));
	base(&gen_a, &r, PC_REC_START, 0);
	fill_pods(&gen_a, &r, pods);
	pods[1] = pods[0];
	pc_test_log_push(&lg, &r);
	v = pc_test_verify_signed(&o, key_a, &lg);
	expect_fail(v, PC_VC_SEQUENCE, 0);
	pc_verify_free(v);
	pc_test_log_free(&lg);
}

static void
add_attest(const struct gen *g, struct pc_test_log *lg, uint64_t w)
{
	struct pc_record r;
	struct pc_record_attest att;

	base(g, &r, PC_REC_ATTEST, w);
	pc_test_attest(&r, &att);
	pc_test_log_push(lg, &r);
}

/* v's HTML page, in memory; the caller frees it. */
static char *
html_of(const struct pc_verify *v)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	pc_verify_print_html(v, f);
	assert_int_equal(fclose(f), 0);
	return buf;
}

/* The log's ATTEST records fail check 5 at `record`, saying `says`, whatever the options. */
static void
attest_refused(const struct pc_test_log *lg, int64_t record, const char *says)
{
	struct pc_test_run o = { .vk = &vk_a };
	struct pc_verify *v = pc_test_verify_signed(&o, key_a, lg);
	const struct pc_verify_failure *f = expect_fail(v, PC_VC_SEQUENCE, record);

	if (strstr(f->msg, says) == NULL) {
		pc_test_print_failures(v);
		fail_msg("'%s' does not say '%s'", f->msg, says);
	}
	pc_verify_free(v);
}

/*
 * Without --attest, an ATTEST record is still held to its place in the
 * sequence: its window_start_ns is the cursor, under the map and window
 * length in force, never outside a run. The report says how many quotes
 * no one was asked to check, and says nothing of them for a log that has
 * none.
 */
static void
test_attest_sequence(void **state)
{
	struct pc_test_log lg;
	struct pc_test_run o = { .vk = &vk_a };

	(void)state;
	/* a quote after the START, one after window 0 and a last one before the STOP */
	memset(&lg, 0, sizeof(lg));
	add_decl(&gen_a, &lg, PC_REC_START, 0);
	add_attest(&gen_a, &lg, 0);
	add_window(&gen_a, &lg, 0, 10, 0);
	add_attest(&gen_a, &lg, 1);
	add_window(&gen_a, &lg, 1, 10, 0);
	add_attest(&gen_a, &lg, 2);
	add_simple(&gen_a, &lg, PC_REC_STOP, 2, 0);
	struct pc_verify *v = pc_test_verify_signed(&o, key_a, &lg);
	expect_ok(v);
	char *text = pc_test_report(v, false), *json = pc_test_report(v, true), *html = html_of(v);
	assert_non_null(
	    strstr(text, "\nattestation: 3 ATTEST records not checked (no --attest)\n"));
	assert_non_null(
	    strstr(json, "  \"attestation\": {\"checked\": false, \"attest_records\": 3},\n"));
	assert_non_null(strstr(html, "<section id=\"attestation\" class=\"unchecked\">"));
	assert_non_null(strstr(html, "<span data-k=\"attest_records\">3</span> ATTEST records"));
	free(text);
	free(json);
	free(html);
	pc_verify_free(v);

	/* ... and one after the STOP */
	add_attest(&gen_a, &lg, 2);
	attest_refused(&lg, 7, "attest after a stop record");
	pc_test_log_free(&lg);

	/* labelled past the cursor, or before it */
	memset(&lg, 0, sizeof(lg));
	add_decl(&gen_a, &lg, PC_REC_START, 0);
	add_window(&gen_a, &lg, 0, 10, 0);
	add_attest(&gen_a, &lg, 5);
	attest_refused(&lg, 2,
		       "attest record labelled 2024-01-01T00:05:00Z, where the log's "
		       "windows end at 2024-01-01T00:01:00Z");
	pc_test_log_free(&lg);
	memset(&lg, 0, sizeof(lg));
	add_decl(&gen_a, &lg, PC_REC_START, 0);
	add_window(&gen_a, &lg, 0, 10, 0);
	add_window(&gen_a, &lg, 1, 10, 0);
	add_attest(&gen_a, &lg, 1);
	attest_refused(&lg, 3, "attest record labelled 2024-01-01T00:01:00Z");
	pc_test_log_free(&lg);

	/* under a map or a window length not in force */
	memset(&lg, 0, sizeof(lg));
	add_decl(&gen_a, &lg, PC_REC_START, 0);
	add_window(&gen_a, &lg, 0, 10, 0);
	add_attest(&gen_b, &lg, 1);
	attest_refused(&lg, 2, "attest record under a pod map digest other than the one in force");
	pc_test_log_free(&lg);
	struct pc_record r;
	struct pc_record_attest att;
	memset(&lg, 0, sizeof(lg));
	add_decl(&gen_a, &lg, PC_REC_START, 0);
	base(&gen_a, &r, PC_REC_ATTEST, 0);
	r.window_len_ns /= 2;
	pc_test_attest(&r, &att);
	pc_test_log_push(&lg, &r);
	attest_refused(&lg, 1, "attest record of window length 30000000000 ns");
	pc_test_log_free(&lg);

	/* before any START */
	memset(&lg, 0, sizeof(lg));
	add_attest(&gen_a, &lg, 0);
	add_decl(&gen_a, &lg, PC_REC_START, 0);
	v = pc_test_verify_signed(&o, key_a, &lg);
	assert_int_equal(pc_verify_nfailures(v), 2);
	assert_non_null(strstr(pc_verify_failure_at(v, 1)->msg, "attest before any start record"));
	pc_verify_free(v);
	pc_test_log_free(&lg);

	/* a log without ATTEST records: no word of attestation in any report */
	build_ref(&gen_a, &lg);
	v = pc_test_verify_signed(&o, key_a, &lg);
	expect_ok(v);
	text = pc_test_report(v, false);
	json = pc_test_report(v, true);
	html = html_of(v);
	assert_null(strstr(text, "attest"));
	assert_null(strstr(json, "attestation"));
	assert_null(strstr(html, "attestation"));
	free(text);
	free(json);
	free(html);
	pc_verify_free(v);
	pc_test_log_free(&lg);
}

static void
test_report(void **state)
{
	struct pc_test_log lg;
	char note[PC_NOTE_MAX], *buf = NULL;
	size_t blen = 0;
	struct pc_test_run o = { .vk = &vk_a };

	(void)state;
	build_ref(&gen_a, &lg);
	size_t n = pc_test_log_checkpoint(&lg, lg.n, key_a, note, sizeof(note));
	struct pc_verify *v = pc_test_verify(&o, note, n, &lg);
	FILE *f = open_memstream(&buf, &blen);
	pc_verify_print_text(v, f);
	fclose(f);
	/* the last line says what was verified */
	char *last = strstr(buf, "\nverified: 13 records, 8 windows, tree size 13, root ");
	assert_non_null(last);
	assert_int_equal(strlen(last), strlen("\nverified: 13 records, 8 windows, tree size 13, root ") + 64 + 1);
	assert_non_null(strstr(buf, "2024-01-01T00:03:00Z  record 4  gap: 2 windows (120s) not logged"));
	free(buf);
	pc_verify_free(v);

	lg.rec[2][lg.len[2] - 60] ^= 4;
	v = pc_test_verify(&o, note, n, &lg);
	buf = NULL;
	f = open_memstream(&buf, &blen);
	pc_verify_print_json(v, f);
	fclose(f);
	assert_non_null(strstr(buf, "\"ok\": false"));
	assert_non_null(strstr(buf, "\"check\": \"root\""));
	assert_non_null(strstr(buf, "\"result\": \"FAILED: root: "));
	free(buf);
	pc_verify_free(v);
	pc_test_log_free(&lg);

	char t[40];
	pc_utc_format(T0, t, sizeof(t));
	assert_string_equal(t, "2024-01-01T00:00:00Z");
	pc_utc_format(T0 + 1500000000ULL, t, sizeof(t));
	assert_string_equal(t, "2024-01-01T00:00:01.5Z");
}

/* ---- resuming from a saved state ---- */

/*
 * START; W0 W1 W2 | W3; RELOAD to gen_b; W4; GAP 5+2; W7; CLOCK to 10 (30 s
 * of real time for 2 windows of labels); W10 W11 W12. The state is saved
 * after W2 (4 records). With `over`, W2 and W3 each pass half the burst
 * more than the cap (together over it: only the carried envelope sees it)
 * and W11 alone passes three windows' worth.
 */
static void
build_resume_log(struct pc_test_log *lg, bool over)
{
	const uint64_t burst = gen_a.cfg.pods[0].limits.burst_bytes;

	memset(lg, 0, sizeof(*lg));
	add_decl(&gen_a, lg, PC_REC_START, 0);
	add_window(&gen_a, lg, 0, 40, 0);
	add_window(&gen_a, lg, 1, 90, 0);
	add_window(&gen_a, lg, 2, 100, over ? burst / 2 + 1 : 0);
	add_window(&gen_a, lg, 3, 100, over ? burst / 2 + 1 : 0);
	add_decl(&gen_b, lg, PC_REC_RELOAD, 4);
	add_window(&gen_b, lg, 4, 50, 0);
	add_simple(&gen_b, lg, PC_REC_GAP, 5, 2);
	add_window(&gen_b, lg, 7, 30, 0);
	add_clock(&gen_b, lg, 10, 30 * 1000000000ULL, 90 * 1000000000LL);
	add_window(&gen_b, lg, 10, 60, 0);
	add_window(&gen_b, lg, 11, 100, over ? 3 * full_window(&gen_b, 0) : 0);
	add_window(&gen_b, lg, 12, 20, 0);
}

/* The state a verifier keeps after verifying the first n records of lg. */
static char *
state_after(const struct pc_test_run *o, const struct pc_test_log *lg, size_t n, size_t *len)
{
	char note[PC_NOTE_MAX];
	char *st = NULL;
	size_t nl = pc_test_log_checkpoint(lg, n, key_a, note, sizeof(note));
	struct pc_verify *v = pc_test_verify(o, note, nl, lg);

	expect_ok(v);
	assert_int_equal(pc_verify_state_save(v, &st, len), 0);
	pc_verify_free(v);
	return st;
}

/* What the resumed run reports is what the full run reports. */
static void
assert_same_result(const struct pc_verify *full, const struct pc_verify *inc)
{
	static const char *const pods[] = { "pod-a", "pod-b" };

	assert_int_equal(pc_verify_nfailures(inc), pc_verify_nfailures(full));
	for (size_t i = 0; i < pc_verify_nfailures(full); i++) {
		const struct pc_verify_failure *a = pc_verify_failure_at(full, i);
		const struct pc_verify_failure *b = pc_verify_failure_at(inc, i);

		assert_int_equal(a->check, b->check);
		assert_int_equal(a->record, b->record);
		assert_int_equal(a->type, b->type);
		assert_true(a->window_start_ns == b->window_start_ns);
		assert_string_equal(a->msg, b->msg);
	}
	assert_int_equal(pc_verify_nrecords(inc), pc_verify_nrecords(full));
	assert_int_equal(pc_verify_nwindows(inc), pc_verify_nwindows(full));
	for (size_t p = 0; p < 2; p++)
		for (int d = 0; d < PC_DIR_COUNT; d++) {
			struct pc_verify_totals a, b;

			assert_int_equal(pc_verify_pod_totals(full, pods[p], (enum pc_dir)d, &a), 0);
			assert_int_equal(pc_verify_pod_totals(inc, pods[p], (enum pc_dir)d, &b), 0);
			assert_memory_equal(&a, &b, sizeof(a));
		}
	/* the events before the state come from it */
	assert_int_equal(pc_verify_nevents(inc), pc_verify_nevents(full));
	for (size_t i = 0; i < pc_verify_nevents(full); i++)
		assert_memory_equal(pc_verify_event_at(full, i), pc_verify_event_at(inc, i),
				    sizeof(struct pc_verify_event));
}

static void
test_resume_equals_full(void **state)
{
	struct pc_test_log lg;
	char note[PC_NOTE_MAX];

	(void)state;
	for (int over = 0; over <= 1; over++)
		for (int pm = 0; pm <= 1; pm++) {
			/* with --pod-map, the reload to another map fails the podmap check */
			struct pc_test_run o = { .vk = &vk_a, .podmap = pm ? &gen_a.cfg : NULL };
			size_t stlen;

			build_resume_log(&lg, over);
			char *st = state_after(&o, &lg, 4, &stlen);
			size_t nl = pc_test_log_checkpoint(&lg, lg.n, key_a, note, sizeof(note));
			struct pc_test_run ro = o;

			ro.state = st;
			ro.state_len = stlen;
			struct pc_verify *full = pc_test_verify(&o, note, nl, &lg);
			struct pc_verify *inc = pc_test_verify(&ro, note, nl, &lg);

			assert_int_equal(pc_verify_resume_at(inc), 4);
			assert_same_result(full, inc);
			if (over) {
				/*
				 * One run of pod-a's limits, worst at W11; W3 is over
				 * only with what W2, before the state, carried into it
				 */
				const struct pc_verify_failure *f =
				    expect_fail(inc, PC_VC_ENVELOPE, 11);
				assert_non_null(strstr(f->msg, "pod pod-a up"));
				assert_non_null(strstr(f->msg, "(3 windows over)"));
			}
			if (pm)
				expect_fail(inc, PC_VC_PODMAP, 5);
			if (!over && !pm) {
				/* and the state after it is the state after the full run */
				char *s1, *s2;
				size_t l1, l2;

				expect_ok(inc);
				assert_non_null(find_event(inc, PC_VE_RELOAD));
				assert_non_null(find_event(inc, PC_VE_GAP));
				assert_non_null(find_event(inc, PC_VE_CLOCK));
				assert_int_equal(pc_verify_state_save(full, &s1, &l1), 0);
				assert_int_equal(pc_verify_state_save(inc, &s2, &l2), 0);
				assert_int_equal(l1, l2);
				assert_memory_equal(s1, s2, l1);
				free(s1);
				free(s2);
			}
			if (over || pm)
				assert_true(pc_verify_nfailures(inc) > 0);
			pc_verify_free(full);
			pc_verify_free(inc);
			free(st);
			pc_test_log_free(&lg);
		}
}

/* Rewrites the state's checksum line after an edit, as a careful forger would. */
static void
reseal(char *st, size_t len)
{
	uint8_t sum[crypto_generichash_BYTES];
	size_t sl = 4 + 2 * sizeof(sum) + 1;

	crypto_generichash(sum, sizeof(sum), (const uint8_t *)st, len - sl, NULL, 0);
	sodium_bin2hex(st + len - sl + 4, 2 * sizeof(sum) + 1, sum, sizeof(sum));
	st[len - 1] = '\n';
}

static void
test_resume_refuses(void **state)
{
	struct pc_test_log lg, bad;
	struct pc_test_run o = { .vk = &vk_a };
	char note[PC_NOTE_MAX];
	struct pc_error err;
	size_t stlen;

	(void)state;
	build_resume_log(&lg, false);
	char *st = state_after(&o, &lg, 4, &stlen);
	size_t nl = pc_test_log_checkpoint(&lg, lg.n, key_a, note, sizeof(note));
	struct pc_test_run ro = { .vk = &vk_a, .state = st, .state_len = stlen };

	/* a new record altered after signing */
	pc_test_log_copy(&lg, &bad);
	bad.rec[8][bad.len[8] - 40] ^= 1;
	struct pc_verify *v = pc_test_verify(&ro, note, nl, &bad);
	expect_fail(v, PC_VC_ROOT, -1);
	pc_verify_free(v);
	pc_test_log_free(&bad);

	/*
	 * An old record altered after signing: the resumed run does not read
	 * it, and trusts what it verified before. Only a full run sees it.
	 */
	pc_test_log_copy(&lg, &bad);
	bad.rec[2][bad.len[2] - 40] ^= 1;
	v = pc_test_verify(&ro, note, nl, &bad);
	expect_ok(v);
	pc_verify_free(v);
	v = pc_test_verify(&o, note, nl, &bad);
	expect_fail(v, PC_VC_ROOT, -1);
	pc_verify_free(v);
	pc_test_log_free(&bad);

	/* a fork: another history of W1, signed, with the same records after it */
	pc_test_log_copy(&lg, &bad);
	free(bad.rec[2]);
	struct pc_test_log w = { 0 };
	add_window(&gen_a, &w, 1, 80, 0);
	bad.rec[2] = w.rec[0];
	bad.len[2] = w.len[0];
	char fnote[PC_NOTE_MAX];
	size_t fl = pc_test_log_checkpoint(&bad, bad.n, key_a, fnote, sizeof(fnote));
	v = pc_test_verify(&ro, fnote, fl, &bad);
	const struct pc_verify_failure *f = expect_fail(v, PC_VC_ROOT, -1);
	assert_non_null(strstr(f->msg, "does not extend the trusted one"));
	pc_verify_free(v);
	/* the same size as the trusted tree, another root */
	fl = pc_test_log_checkpoint(&bad, 4, key_a, fnote, sizeof(fnote));
	v = pc_test_verify(&ro, fnote, fl, &bad);
	expect_fail(v, PC_VC_FORK, -1);
	pc_verify_free(v);
	pc_test_log_free(&bad);

	/* truncated: a checkpoint of fewer records, or fewer records than it signs */
	char tnote[PC_NOTE_MAX];
	size_t tl = pc_test_log_checkpoint(&lg, 3, key_a, tnote, sizeof(tnote));
	v = pc_test_verify(&ro, tnote, tl, &lg);
	expect_fail(v, PC_VC_ROLLBACK, -1);
	pc_verify_free(v);
	size_t all = lg.n;
	lg.n = 9;
	v = pc_test_verify(&ro, note, nl, &lg);
	expect_fail(v, PC_VC_MISSING, 9);
	lg.n = all;
	pc_verify_free(v);

	/* a damaged state file is refused, whichever part is damaged */
	char *c = malloc(stlen);
	const char *seq = strstr(st, "\nsequence ");
	assert_non_null(seq);
	memcpy(c, st, stlen);
	c[seq - st + 12] ^= 1;
	v = pc_verify_new(&vk_a, NULL);
	assert_int_equal(pc_verify_resume(v, c, stlen, &err), -1);
	assert_non_null(strstr(err.msg, "checksum"));
	pc_verify_free(v);
	v = pc_verify_new(&vk_a, NULL);
	assert_int_equal(pc_verify_resume(v, st, stlen - 10, &err), -1);
	pc_verify_free(v);
	/* resealed: the edge must still hash to the signed root */
	const char *h = strstr(st, "\nhash ");
	assert_non_null(h);
	memcpy(c, st, stlen);
	c[h - st + 6] = c[h - st + 6] == '0' ? '1' : '0';
	reseal(c, stlen);
	v = pc_verify_new(&vk_a, NULL);
	assert_int_equal(pc_verify_resume(v, c, stlen, &err), -1);
	assert_non_null(strstr(err.msg, "edge"));
	pc_verify_free(v);
	/* resealed: a line that does not parse */
	memcpy(c, st, stlen);
	c[seq - st + 1] = 'S';
	reseal(c, stlen);
	v = pc_verify_new(&vk_a, NULL);
	assert_int_equal(pc_verify_resume(v, c, stlen, &err), -1);
	assert_non_null(strstr(err.msg, "malformed"));
	pc_verify_free(v);
	/* resealed: a count past 2^128 - 1 is refused, not wrapped to a small one */
	const char *tot = strstr(st, "\ntotals 0 ");
	assert_non_null(tot);
	const char *num = tot + strlen("\ntotals 0 "), *after = strchr(num, ' ');
	assert_non_null(after);
	static const char big[] = "340282366920938463463374607431768211456";
	size_t wl = stlen - (size_t)(after - num) + strlen(big);
	char *w2 = malloc(wl);
	assert_non_null(w2);
	memcpy(w2, st, (size_t)(num - st));
	memcpy(w2 + (num - st), big, strlen(big));
	memcpy(w2 + (num - st) + strlen(big), after, stlen - (size_t)(after - st));
	reseal(w2, wl);
	v = pc_verify_new(&vk_a, NULL);
	assert_int_equal(pc_verify_resume(v, w2, wl, &err), -1);
	assert_non_null(strstr(err.msg, "malformed"));
	pc_verify_free(v);
	free(w2);
	/* the checkpoint in it must verify with the key */
	v = pc_verify_new(&vk_b, NULL);
	assert_int_equal(pc_verify_resume(v, st, stlen, &err), -1);
	assert_non_null(strstr(err.msg, "signature"));
	pc_verify_free(v);
	free(c);

	/* the checkpoint alone, or another --pod-map: every record again */
	char old[PC_NOTE_MAX];
	size_t ol = pc_test_log_checkpoint(&lg, 4, key_a, old, sizeof(old));
	v = pc_verify_new(&vk_a, NULL);
	assert_int_equal(pc_verify_resume(v, old, ol, &err), 1);
	assert_int_equal(pc_verify_resume_at(v), 0);
	assert_int_equal(pc_verify_trusted_size(v), 4);
	pc_verify_free(v);
	v = pc_verify_new(&vk_a, &gen_a.cfg);
	assert_int_equal(pc_verify_resume(v, st, stlen, &err), 1);
	assert_int_equal(pc_verify_resume_at(v), 0);
	assert_int_equal(pc_verify_checkpoint(v, note, nl), 0);
	for (size_t i = 0; i < lg.n; i++)
		pc_verify_record(v, lg.rec[i], lg.len[i], NULL);
	assert_int_equal(pc_verify_finish(v), 1);
	expect_fail(v, PC_VC_PODMAP, 5);
	pc_verify_free(v);

	/* a failed run leaves nothing to save */
	pc_test_log_copy(&lg, &bad);
	bad.rec[8][bad.len[8] - 40] ^= 1;
	v = pc_test_verify(&o, note, nl, &bad);
	char *s2 = NULL;
	size_t l2;
	assert_int_equal(pc_verify_state_save(v, &s2, &l2), -1);
	pc_verify_free(v);
	pc_test_log_free(&bad);
	free(st);
	pc_test_log_free(&lg);
}

/* Resumes from a state over a ledger directory, seeking as podcap-verify --ledger does. */
static struct pc_verify *
verify_dir_resumed(const char *dir, const char *st, size_t stlen, int64_t skew)
{
	struct pc_error err;
	uint8_t *buf = malloc(PC_RECORD_MAX);
	struct pc_verify *v = pc_verify_new(&vk_a, NULL);

	assert_int_equal(pc_verify_resume(v, st, stlen, &err), 0);
	uint64_t first = pc_verify_resume_at(v);
	struct pc_ledger *l = pc_ledger_open_ro_from(dir, first,
						     pc_verify_resume_bytes(v) + (uint64_t)skew,
						     &err);
	assert_non_null(l);
	/* what comes before is out of reach: it is not read again */
	assert_int_equal(pc_ledger_record(l, first - 1, buf, PC_RECORD_MAX), -1);
	free(buf);
	return feed_ledger(v, l, first);
}

static void
test_resume_ledger_dir(void **state)
{
	struct pc_test_log lg;
	struct pc_test_run o = { .vk = &vk_a };
	char dir[512];
	size_t stlen;

	(void)state;
	build_resume_log(&lg, false);
	snprintf(dir, sizeof(dir), "%s/resume", tmpdir);
	write_ledger(&lg, dir);
	char *st = state_after(&o, &lg, 4, &stlen);
	struct pc_verify *full = verify_dir(dir, &vk_a);
	struct pc_verify *v = verify_dir_resumed(dir, st, stlen, 0);
	expect_ok(v);
	assert_same_result(full, v);
	pc_verify_free(v);
	pc_verify_free(full);

	/* a saved length that does not match the directory: what it reads does not verify */
	v = verify_dir_resumed(dir, st, stlen, 1);
	assert_true(pc_verify_nfailures(v) > 0);
	pc_verify_free(v);

	/* a new record changed in the records file: its stored hash names it */
	alter_in_dir(dir, &lg, 8);
	v = verify_dir_resumed(dir, st, stlen, 0);
	expect_fail(v, PC_VC_ROOT, 8);
	expect_fail(v, PC_VC_COUNTERS, 8);
	assert_int_equal(pc_verify_nfailures(v), 2);
	pc_verify_free(v);
	free(st);
	pc_test_log_free(&lg);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_clean_log),
		cmocka_unit_test(test_ledger_dir_changed_byte),
		cmocka_unit_test(test_changed_byte),
		cmocka_unit_test(test_removed_record),
		cmocka_unit_test(test_reordered_records),
		cmocka_unit_test(test_duplicated_record),
		cmocka_unit_test(test_inserted_record),
		cmocka_unit_test(test_truncated_tail),
		cmocka_unit_test(test_spliced_log),
		cmocka_unit_test(test_other_key),
		cmocka_unit_test(test_rollback_and_fork),
		cmocka_unit_test(test_consistency_proof),
		cmocka_unit_test(test_envelope),
		cmocka_unit_test(test_envelope_after_merged),
		cmocka_unit_test(test_clock_steps),
		cmocka_unit_test(test_podmap),
		cmocka_unit_test(test_sequence_rules),
		cmocka_unit_test(test_attest_sequence),
		cmocka_unit_test(test_report),
		cmocka_unit_test(test_resume_equals_full),
		cmocka_unit_test(test_resume_refuses),
		cmocka_unit_test(test_resume_ledger_dir),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
