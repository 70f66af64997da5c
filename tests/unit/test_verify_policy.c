/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The verifier's policy: what it knows besides the log (its now, its
 * pulls, its limits, the build ids it pins, the pod maps it declares) and
 * the counters no real port can produce. Every forged log here is built
 * byte for byte and signed with the appliance key, so only these checks
 * can refuse it; each must be refused with its check and record, and
 * resuming from a state at any record must give the full run's verdict.
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
#include "base/hex.h"
#include "base/keys.h"
#include "log/note.h"
#include "log/record.h"
#include "verify/verify.h"

#include "testutil.h"

#define APP "p-app"
#define ORIGIN "podcap/" APP
#define NS 1000000000ULL
#define WIN (60 * NS)
#define T0 (1704067200ULL * NS)             /* 2024-01-01T00:00:00Z */
#define NOW (T0 + 1000 * WIN)               /* the verifier's now: well after every log */
#define SKEW PC_VERIFY_DEFAULT_SKEW_NS

/* One uplink of two pods, max_frame 1522 (the default). */
static const char map_a_text[] =
	"appliance:\n  id: " APP "\nwindow: 60s\n"
	"defaults:\n  cap: 1Gbps\n  burst: 100MB\n  mode: police\n"
	"uplinks:\n"
	"  - name: up0\n    pod_port: 0000:3b:00.0\n    fabric_port: 0000:3b:00.1\n"
	"pods:\n"
	"  - id: pod-a\n    uplink: up0\n    prefixes: [10.1.0.0/24]\n"
	"  - id: pod-b\n    uplink: up0\n    prefixes: [10.1.1.0/24]\n";

/* The same pods on two uplinks, with jumbo frames. */
static const char map_b_text[] =
	"appliance:\n  id: " APP "\nwindow: 60s\nmax_frame: 9000B\n"
	"defaults:\n  cap: 1Gbps\n  burst: 100MB\n  mode: police\n"
	"uplinks:\n"
	"  - name: up0\n    pod_port: 0000:3b:00.0\n    fabric_port: 0000:3b:00.1\n"
	"  - name: up1\n    pod_port: 0000:3c:00.0\n    fabric_port: 0000:3c:00.1\n"
	"pods:\n"
	"  - id: pod-a\n    uplink: up0\n"
	"  - id: pod-b\n    uplink: up1\n";

static struct pc_signer_key *key;
static struct pc_verifier_key vk;
static struct pc_config map_a, map_b, map_other;
static uint8_t build_1[32], build_2[32];

static int
setup(void **state)
{
	(void)state;
	if (sodium_init() < 0)
		return -1;
	key = pc_test_key(ORIGIN, &vk);
	pc_test_load_map(&map_a, map_a_text, "a.yaml");
	pc_test_load_map(&map_b, map_b_text, "b.yaml");
	char *t = strdup(map_a_text);
	memcpy(strstr(t, "p-app"), "q-app", 5);
	pc_test_load_map(&map_other, t, "other.yaml");
	free(t);
	memset(build_1, 0x11, sizeof(build_1));
	memset(build_2, 0x22, sizeof(build_2));
	return 0;
}

static int
teardown(void **state)
{
	(void)state;
	pc_signer_key_free(key);
	pc_config_free(&map_a);
	pc_config_free(&map_b);
	pc_config_free(&map_other);
	return 0;
}

/* ---- building logs: what a podcapd running `cfg` under `build` writes ---- */

struct builder {
	struct pc_test_log lg;
	const struct pc_config *cfg;
	const uint8_t *build;
	struct pc_record r;
	struct pc_record_pod pods[4];
	struct pc_record_link links[4];
};

static void
begin(struct builder *b, const struct pc_config *cfg)
{
	memset(b, 0, sizeof(*b));
	b->cfg = cfg;
	b->build = build_1;
}

/* The record of `type` at window w, in b->r, for the caller to change before push(). */
static struct pc_record *
rec(struct builder *b, uint8_t type, uint64_t w, uint64_t count)
{
	struct pc_record *r = &b->r;

	memset(r, 0, sizeof(*r));
	r->type = type;
	snprintf(r->appliance_id, sizeof(r->appliance_id), "%s", APP);
	r->window_len_ns = b->cfg->window_ns;
	r->window_start_ns = T0 + w * WIN;
	r->window_count = count;
	r->time_ns = r->window_start_ns + count * WIN;   /* closed at its end */
	pc_config_digest(b->cfg, r->podmap_digest);
	memcpy(r->build_id, b->build, 32);
	if (type != PC_REC_START && type != PC_REC_RELOAD && type != PC_REC_WINDOW)
		return r;
	r->npods = b->cfg->npods;
	r->pods = b->pods;
	memset(b->pods, 0, sizeof(b->pods));
	for (unsigned i = 0; i < b->cfg->npods; i++) {
		const struct pc_pod *p = &b->cfg->pods[i];
		struct pc_record_pod *rp = &b->pods[i];

		snprintf(rp->id, PC_ID_LEN, "%s", p->id);
		snprintf(rp->uplink, PC_ID_LEN, "%s", b->cfg->uplinks[p->uplink].name);
		rp->cap_bps = p->limits.cap_bps;
		rp->burst_bytes = p->limits.burst_bytes;
		rp->mode = pc_record_mode(&p->limits);
		for (int d = 0; type == PC_REC_WINDOW && d < PC_DIR_COUNT; d++) {
			rp->dir[d].pass_frames = 1000 * count;
			rp->dir[d].pass_bytes = 1000000 * count;
		}
	}
	if (type != PC_REC_WINDOW)
		return r;
	r->nlinks = b->cfg->nuplinks;
	r->links = b->links;
	memset(b->links, 0, sizeof(b->links));
	for (unsigned u = 0; u < b->cfg->nuplinks; u++) {
		snprintf(b->links[u].name, PC_ID_LEN, "%s", b->cfg->uplinks[u].name);
		b->links[u].dir[PC_DIR_UP].drop_frames[PC_DROP_UNMAPPED] = 1;
		b->links[u].dir[PC_DIR_UP].drop_bytes[PC_DROP_UNMAPPED] = 64;
	}
	return r;
}

static void
push(struct builder *b)
{
	pc_test_log_push(&b->lg, &b->r);
}

static void
add(struct builder *b, uint8_t type, uint64_t w, uint64_t count)
{
	rec(b, type, w, count);
	push(b);
}

/* START at 0, then windows 0 .. n-1. */
static void
running(struct builder *b, const struct pc_config *cfg, uint64_t n)
{
	begin(b, cfg);
	add(b, PC_REC_START, 0, 0);
	for (uint64_t w = 0; w < n; w++)
		add(b, PC_REC_WINDOW, w, 1);
}

/* ---- verifying them ---- */

/* What the verifier is given: a policy at NOW, and the declared maps. */
struct given {
	struct pc_verify_policy policy;
	const struct pc_config *maps[4];
	size_t nmaps;
};

static void
given_init(struct given *g)
{
	memset(g, 0, sizeof(*g));
	pc_verify_policy_init(&g->policy);
	g->policy.now_ns = NOW;
}

static struct pc_test_run
run_of(const struct given *g)
{
	struct pc_test_run o = { .vk = &vk, .policy = &g->policy, .maps = g->maps,
				 .nmaps = g->nmaps };
	return o;
}

static struct pc_verify *
verify(const struct given *g, const struct pc_test_log *lg)
{
	struct pc_test_run o = run_of(g);

	return pc_test_verify_signed(&o, key, lg);
}

static void
expect_ok(struct pc_verify *v)
{
	if (pc_verify_nfailures(v) != 0) {
		pc_test_print_failures(v);
		fail_msg("expected the log to verify");
	}
}

/* The first failure of check c is at `record` and says `says`; returns it. */
static const struct pc_verify_failure *
expect_fail(const struct pc_verify *v, enum pc_verify_check c, int64_t record, const char *says)
{
	const struct pc_verify_failure *f = pc_verify_find(v, c);

	if (f == NULL || f->record != record || (says != NULL && strstr(f->msg, says) == NULL)) {
		pc_test_print_failures(v);
		fail_msg("expected %s at record %lld saying '%s'", pc_verify_check_name(c),
			 (long long)record, says ? says : "");
	}
	return f;
}

/* Verifies, expects exactly one failure of c at record, frees. */
static void
refused(const struct given *g, const struct pc_test_log *lg, enum pc_verify_check c,
	int64_t record, const char *says)
{
	struct pc_verify *v = verify(g, lg);

	expect_fail(v, c, record, says);
	pc_verify_free(v);
}

static void
accepted(const struct given *g, const struct pc_test_log *lg)
{
	struct pc_verify *v = verify(g, lg);

	expect_ok(v);
	pc_verify_free(v);
}

static void
same_use(const struct pc_verify_use *a, const struct pc_verify_use *b)
{
	assert_non_null(a);
	assert_non_null(b);
	assert_memory_equal(a, b, sizeof(*a));
}

/* The results of the policy's checks are the same in both runs. */
static void
same_figures(const struct pc_verify *full, const struct pc_verify *inc)
{
	uint64_t a1, a2, b1, b2, c1, c2;
	int64_t r1, r2;

	pc_verify_unaccounted(full, &a1, &b1, &r1);
	pc_verify_unaccounted(inc, &a2, &b2, &r2);
	assert_true(a1 == a2 && b1 == b2 && r1 == r2);
	pc_verify_merged(full, &a1, &r1);
	pc_verify_merged(inc, &a2, &r2);
	assert_true(a1 == a2 && r1 == r2);
	pc_verify_freshness(full, &a1, &b1, &c1);
	pc_verify_freshness(inc, &a2, &b2, &c2);
	assert_true(a1 == a2 && b1 == b2 && c1 == c2);
	assert_int_equal(pc_verify_nbuilds(full), pc_verify_nbuilds(inc));
	for (size_t i = 0; i < pc_verify_nbuilds(full); i++)
		same_use(pc_verify_build_at(full, i), pc_verify_build_at(inc, i));
	assert_int_equal(pc_verify_nmaps_used(full), pc_verify_nmaps_used(inc));
	for (size_t i = 0; i < pc_verify_nmaps_used(full); i++)
		same_use(pc_verify_map_used_at(full, i), pc_verify_map_used_at(inc, i));
}

static void
same_verdict(const struct pc_verify *full, const struct pc_verify *inc, size_t k)
{
	if (pc_verify_nfailures(full) != pc_verify_nfailures(inc)) {
		pc_test_print_failures(full);
		print_message("resumed at %zu:\n", k);
		pc_test_print_failures(inc);
		fail_msg("the resumed run at record %zu does not give the full run's verdict", k);
	}
	for (size_t i = 0; i < pc_verify_nfailures(full); i++) {
		const struct pc_verify_failure *a = pc_verify_failure_at(full, i);
		const struct pc_verify_failure *b = pc_verify_failure_at(inc, i);

		assert_int_equal(a->check, b->check);
		assert_int_equal(a->record, b->record);
		assert_string_equal(a->msg, b->msg);
	}
	assert_int_equal(pc_verify_nwindows(full), pc_verify_nwindows(inc));
	same_figures(full, inc);
}

/*
 * For every split point k, a verifier that verified the first k records
 * and kept its state reaches the full run's verdict on the whole log. A
 * prefix that fails leaves no state: then the full run fails too.
 */
static void
every_split(const struct given *g, const struct pc_test_log *lg)
{
	struct pc_test_run o = run_of(g);

	pc_test_every_split(&o, key, lg, same_verdict);
}

/* ---- honest logs ---- */

/*
 * Reloads, a clean restart after downtime, a crash restart by a new build
 * (its GAP comes first), clock steps both ways and a window the control
 * thread merged: all verify, under the defaults and under a policy that
 * allows what they contain.
 */
static void
build_honest(struct builder *b)
{
	begin(b, &map_a);
	add(b, PC_REC_START, 0, 0);
	add(b, PC_REC_WINDOW, 0, 1);
	add(b, PC_REC_WINDOW, 1, 2);                /* merged: the control thread fell behind */
	add(b, PC_REC_GAP, 3, 1);
	b->cfg = &map_b;
	add(b, PC_REC_RELOAD, 4, 0);
	add(b, PC_REC_WINDOW, 4, 1);
	add(b, PC_REC_STOP, 5, 0);
	add(b, PC_REC_GAP, 5, 2);                   /* the time down, told by the next start */
	add(b, PC_REC_START, 7, 0);
	add(b, PC_REC_WINDOW, 7, 1);
	b->build = build_2;                         /* crashed; a new build starts */
	add(b, PC_REC_GAP, 8, 1);
	add(b, PC_REC_START, 9, 0);
	add(b, PC_REC_WINDOW, 9, 1);
	rec(b, PC_REC_CLOCK, 20, 0)->clock.step_ns = 10 * (int64_t)WIN;
	push(b);
	add(b, PC_REC_WINDOW, 20, 1);
	rec(b, PC_REC_CLOCK, 21, 0)->clock.step_ns = -5 * (int64_t)WIN;
	push(b);
	add(b, PC_REC_WINDOW, 21, 1);
}

static void
test_honest_logs(void **state)
{
	struct builder b;
	struct given g;

	(void)state;
	build_honest(&b);
	given_init(&g);
	g.maps[0] = &map_a;
	g.maps[1] = &map_b;
	g.nmaps = 2;
	struct pc_verify *v = verify(&g, &b.lg);
	expect_ok(v);
	pc_verify_free(v);
	every_split(&g, &b.lg);

	/* a policy a verifier would set for it holds it too */
	g.policy.max_merged_windows = 2;
	g.policy.max_gap_ns = 2 * WIN;
	g.policy.max_unaccounted_ns = 4 * WIN;
	g.policy.max_checkpoint_age_ns = NOW - (T0 + 22 * WIN);
	g.policy.nbuild_ids = 2;
	memcpy(g.policy.build_ids[0], build_1, 32);
	memcpy(g.policy.build_ids[1], build_2, 32);
	v = verify(&g, &b.lg);
	expect_ok(v);
	pc_verify_free(v);
	/* an earlier state was pulled earlier: its age is not this run's */
	g.policy.max_checkpoint_age_ns = PC_VERIFY_UNLIMITED;
	every_split(&g, &b.lg);
	pc_test_log_free(&b.lg);
}

/* ---- 1. time running ahead of the verifier ---- */

static void
test_time_ahead(void **state)
{
	static const uint8_t types[] = { PC_REC_WINDOW, PC_REC_GAP, PC_REC_RELOAD, PC_REC_STOP,
					 PC_REC_CLOCK };
	const uint64_t last = (NOW - T0) / WIN;   /* the window that ends at NOW */
	struct builder b;
	struct given g;

	(void)state;
	given_init(&g);
	/* a window that ends at now + skew is the latest an honest appliance can publish */
	g.policy.now_ns = NOW - SKEW;
	running(&b, &map_a, 2);
	add(&b, PC_REC_GAP, 2, last - 3);
	add(&b, PC_REC_WINDOW, last - 1, 1);        /* ends at NOW, made then */
	accepted(&g, &b.lg);
	every_split(&g, &b.lg);
	/* the next one has not ended yet, by the verifier's clock */
	add(&b, PC_REC_WINDOW, last, 1);
	refused(&g, &b.lg, PC_VC_TIME, 5, "its window ends at");
	every_split(&g, &b.lg);
	pc_test_log_free(&b.lg);
	g.policy.now_ns = NOW;

	/* every kind of record whose window lies in the future, and one made in the future */
	for (size_t i = 0; i < sizeof(types); i++) {
		running(&b, &map_a, 1);
		add(&b, PC_REC_GAP, 1, last - 1);
		add(&b, types[i], last + 1, types[i] == PC_REC_WINDOW || types[i] == PC_REC_GAP);
		refused(&g, &b.lg, PC_VC_TIME, 3, "its window ends at");
		every_split(&g, &b.lg);
		pc_test_log_free(&b.lg);
	}
	/* a tap's OBSERVE ends where its windows end, as a WINDOW does, not where they start */
	running(&b, &map_a, 1);
	add(&b, PC_REC_GAP, 1, last - 2);
	rec(&b, PC_REC_OBSERVE, last - 1, 2)->observe.side = PC_ROLE_POD_TAP;
	b.r.time_ns = NOW;
	push(&b);
	refused(&g, &b.lg, PC_VC_TIME, 3, "its window ends at 2024-01-01T16:41:00Z");
	pc_test_log_free(&b.lg);
	running(&b, &map_a, 1);
	rec(&b, PC_REC_WINDOW, 1, 1)->time_ns = NOW + SKEW + 1;
	push(&b);
	refused(&g, &b.lg, PC_VC_TIME, 2, "it was made at");
	b.r.time_ns = NOW + SKEW;
	free(b.lg.rec[--b.lg.n]);
	push(&b);
	accepted(&g, &b.lg);
	pc_test_log_free(&b.lg);
	/* with no skew allowed, the window ending at NOW is the last */
	g.policy.clock_skew_ns = 0;
	running(&b, &map_a, 1);
	add(&b, PC_REC_GAP, 1, last - 1);
	accepted(&g, &b.lg);
	add(&b, PC_REC_WINDOW, last, 1);
	refused(&g, &b.lg, PC_VC_TIME, 3, NULL);
	pc_test_log_free(&b.lg);
}

/* A verifier whose now is before a pull its state records has a wrong clock or --now. */
static void
test_now_before_pull(void **state)
{
	struct builder b;
	struct given g;
	char note[PC_NOTE_MAX], *st;
	size_t stlen;

	(void)state;
	given_init(&g);
	running(&b, &map_a, 4);
	struct pc_test_run o = run_of(&g);
	size_t nl = pc_test_log_checkpoint(&b.lg, 3, key, note, sizeof(note));
	struct pc_verify *v = pc_test_verify(&o, note, nl, &b.lg);
	assert_int_equal(pc_verify_state_save(v, &st, &stlen), 0);
	pc_verify_free(v);

	struct pc_test_run ro = o;
	ro.state = st;
	ro.state_len = stlen;
	g.policy.now_ns = NOW - SKEW;               /* within the skew of the pull: the same time */
	v = pc_test_verify_signed(&ro, key, &b.lg);
	expect_ok(v);
	assert_int_equal(pc_verify_npulls(v), 1);
	assert_true(pc_verify_pull_at(v, 0)->now_ns == NOW);
	assert_int_equal(pc_verify_pull_at(v, 0)->size, 3);
	assert_true(pc_verify_pull_at(v, 0)->cursor_ns == T0 + 2 * WIN);
	pc_verify_free(v);
	g.policy.now_ns = NOW - SKEW - 1;
	v = pc_test_verify_signed(&ro, key, &b.lg);
	expect_fail(v, PC_VC_TIME, -1, "before its own last pull");
	pc_verify_free(v);
	free(st);
	pc_test_log_free(&b.lg);
}

/* ---- 2. limits on unaccounted time, the checkpoint's age and merged windows ---- */

/*
 * START; W0; GAP 1, 2, 3 (one window each: one hole of three); W4; STOP 5;
 * START 7 (two windows down); W7; GAP 8; START 10 (a crash: two windows
 * down, one of them a GAP); W10; CLOCK at 21 (10 windows of labels, 10 s
 * of real time); W21 (records 0 .. 13).
 */
static void
build_holes(struct builder *b)
{
	running(b, &map_a, 1);
	for (uint64_t w = 1; w <= 3; w++)
		add(b, PC_REC_GAP, w, 1);
	add(b, PC_REC_WINDOW, 4, 1);
	add(b, PC_REC_STOP, 5, 0);
	add(b, PC_REC_START, 7, 0);
	add(b, PC_REC_WINDOW, 7, 1);
	add(b, PC_REC_GAP, 8, 1);
	add(b, PC_REC_START, 10, 0);
	add(b, PC_REC_WINDOW, 10, 1);
	rec(b, PC_REC_CLOCK, 21, 0)->clock.elapsed_ns = 10 * NS;
	b->r.clock.step_ns = 10 * (int64_t)WIN - 10 * (int64_t)NS;
	push(b);
	add(b, PC_REC_WINDOW, 21, 1);
}

static void
test_unaccounted(void **state)
{
	const uint64_t total = 3 * WIN + 2 * WIN + 2 * WIN + 10 * NS;
	struct builder b;
	struct given g;
	uint64_t t, longest;
	int64_t at;

	(void)state;
	given_init(&g);
	build_holes(&b);
	struct pc_verify *v = verify(&g, &b.lg);
	expect_ok(v);
	pc_verify_unaccounted(v, &t, &longest, &at);
	assert_true(t == total);
	assert_true(longest == 3 * WIN);            /* three GAPs in a row are one hole */
	assert_int_equal(at, 4);
	pc_verify_free(v);

	/* the longest stretch: cutting a hole into GAPs does not make it shorter */
	g.policy.max_gap_ns = 3 * WIN;
	accepted(&g, &b.lg);
	g.policy.max_gap_ns = 3 * WIN - 1;
	refused(&g, &b.lg, PC_VC_LIMIT, 4, "180s without a window");
	every_split(&g, &b.lg);
	/* downtime between a STOP and its START, and before a START after a crash */
	g.policy.max_gap_ns = WIN;
	v = verify(&g, &b.lg);
	assert_int_equal(pc_verify_nfailures(v), 3);
	assert_int_equal(pc_verify_failure_at(v, 1)->record, 7);
	assert_int_equal(pc_verify_failure_at(v, 2)->record, 10);   /* the GAP and the START */
	assert_non_null(strstr(pc_verify_failure_at(v, 2)->msg, "120s without a window"));
	pc_verify_free(v);
	g.policy.max_gap_ns = PC_VERIFY_UNLIMITED;

	/* the total, with the real time a clock record says passed between two windows */
	g.policy.max_unaccounted_ns = total;
	accepted(&g, &b.lg);
	g.policy.max_unaccounted_ns = total - 1;
	refused(&g, &b.lg, PC_VC_LIMIT, 12, "adds up to 430s");
	every_split(&g, &b.lg);
	pc_test_log_free(&b.lg);
}

static void
test_checkpoint_age(void **state)
{
	struct builder b;
	struct given g;
	uint64_t now, newest, age;

	(void)state;
	given_init(&g);
	running(&b, &map_a, 3);
	struct pc_verify *v = verify(&g, &b.lg);
	pc_verify_freshness(v, &now, &newest, &age);
	assert_true(now == NOW && newest == T0 + 3 * WIN && age == NOW - newest);
	pc_verify_free(v);
	g.policy.max_checkpoint_age_ns = NOW - (T0 + 3 * WIN);
	accepted(&g, &b.lg);
	g.policy.max_checkpoint_age_ns--;
	refused(&g, &b.lg, PC_VC_LIMIT, 3, "the log is stale");
	every_split(&g, &b.lg);
	/* a GAP is no publishing of windows, but it is the log accounting for time: it counts */
	add(&b, PC_REC_GAP, 3, 1);
	accepted(&g, &b.lg);
	pc_test_log_free(&b.lg);
}

static void
test_merged_windows(void **state)
{
	struct builder b;
	struct given g;
	uint64_t most;
	int64_t at;

	(void)state;
	given_init(&g);
	running(&b, &map_a, 2);
	add(&b, PC_REC_WINDOW, 2, 3);
	add(&b, PC_REC_WINDOW, 5, 2);
	struct pc_verify *v = verify(&g, &b.lg);
	expect_ok(v);
	pc_verify_merged(v, &most, &at);
	assert_true(most == 3 && at == 3);
	pc_verify_free(v);
	g.policy.max_merged_windows = 3;
	accepted(&g, &b.lg);
	g.policy.max_merged_windows = 2;
	refused(&g, &b.lg, PC_VC_LIMIT, 3, "one record covers 3 windows");
	every_split(&g, &b.lg);
	g.policy.max_merged_windows = 1;
	v = verify(&g, &b.lg);
	assert_int_equal(pc_verify_nfailures(v), 2);   /* each merged record is named */
	assert_int_equal(pc_verify_failure_at(v, 1)->record, 4);
	pc_verify_free(v);
	pc_test_log_free(&b.lg);
}

/* ---- 3b. the origin: the map's appliance.origin, or podcap/<appliance id> ---- */

static void
test_origin(void **state)
{
	static const char domain_origin[] = "podcap.example.net/dc1/" APP;
	struct pc_verifier_key dvk;
	struct pc_signer_key *dkey = pc_test_key(domain_origin, &dvk);
	struct pc_config map_d, map_e;
	char *t = NULL;
	struct builder b;
	struct given g;
	struct pc_verify *v;

	(void)state;
	assert_true(asprintf(&t, "appliance:\n  id: " APP "\n  origin: %s\n%s", domain_origin,
			     strstr(map_a_text, "window:")) > 0);
	pc_test_load_map(&map_d, t, "d.yaml");
	free(t);
	assert_true(asprintf(&t,
			     "appliance:\n  id: " APP "\n  origin: podcap.example.org/" APP "\n%s",
			     strstr(map_a_text, "window:")) > 0);
	pc_test_load_map(&map_e, t, "e.yaml");
	free(t);
	/* the origin is part of the declaration: a map that sets one has another digest */
	uint8_t da[32], dd[32];
	pc_config_digest(&map_a, da);
	pc_config_digest(&map_d, dd);
	assert_memory_not_equal(da, dd, 32);

	given_init(&g);
	running(&b, &map_d, 2);
	g.maps[0] = &map_d;
	g.nmaps = 1;
	struct pc_test_run o = run_of(&g);
	o.vk = &dvk;
	v = pc_test_verify_signed(&o, dkey, &b.lg);
	expect_ok(v);
	pc_verify_free(v);
	/* the same log against a map that names another origin for this appliance */
	g.maps[0] = &map_e;
	o = run_of(&g);
	o.vk = &dvk;
	v = pc_test_verify_signed(&o, dkey, &b.lg);
	expect_fail(v, PC_VC_APPLIANCE, -1, "declares the log 'podcap.example.org/" APP "'");
	pc_verify_free(v);
	pc_test_log_free(&b.lg);

	/* a podcap/<id> log against a map that declares a domain origin, and back */
	running(&b, &map_a, 1);
	g.maps[0] = &map_d;
	refused(&g, &b.lg, PC_VC_APPLIANCE, -1,
		"declares the log '"
		"podcap.example.net/dc1/");
	g.maps[0] = &map_a;
	accepted(&g, &b.lg);
	pc_test_log_free(&b.lg);

	/* an origin that is not one podcap makes is refused before any record is read */
	static const char *const bad[] = { "dc1/" APP,         "podcap/dc1/" APP,
					   "Example.NET/" APP, "example.net/" APP "/",
					   "example.net",      "-x.net/" APP };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct pc_verifier_key bvk;
		struct pc_signer_key *bkey = pc_test_key(bad[i], &bvk);

		running(&b, &map_a, 1);
		given_init(&g);
		o = run_of(&g);
		o.vk = &bvk;
		v = pc_test_verify_signed(&o, bkey, &b.lg);
		expect_fail(v, PC_VC_ORIGIN, -1, bad[i]);
		pc_verify_free(v);
		pc_test_log_free(&b.lg);
		pc_signer_key_free(bkey);
	}
	pc_config_free(&map_d);
	pc_config_free(&map_e);
	pc_signer_key_free(dkey);
}

/* ---- 3. identity: the appliance, the build ---- */

static void
test_identity(void **state)
{
	static const uint8_t types[] = { PC_REC_WINDOW, PC_REC_RELOAD, PC_REC_STOP, PC_REC_CLOCK };
	struct builder b;
	struct given g;

	(void)state;
	given_init(&g);
	/* the declared map is another appliance's */
	running(&b, &map_a, 1);
	g.maps[0] = &map_a;
	g.maps[1] = &map_other;
	g.nmaps = 2;
	refused(&g, &b.lg, PC_VC_APPLIANCE, -1, "declares appliance 'q-app'");
	g.nmaps = 0;
	pc_test_log_free(&b.lg);

	/* a build changes only at a START, whatever record shows another one */
	for (size_t i = 0; i < sizeof(types); i++) {
		running(&b, &map_a, 2);
		b.build = build_2;
		add(&b, types[i], 2, types[i] == PC_REC_WINDOW);
		refused(&g, &b.lg, PC_VC_BUILD, 3, "a build changes only at a start");
		every_split(&g, &b.lg);
		pc_test_log_free(&b.lg);
	}
	/* the GAP a new build writes for its downtime must be followed by its START */
	running(&b, &map_a, 1);
	b.build = build_2;
	add(&b, PC_REC_GAP, 1, 1);
	add(&b, PC_REC_GAP, 2, 1);
	accepted(&g, &b.lg);                          /* its START may be in the next checkpoint */
	b.build = build_1;
	add(&b, PC_REC_WINDOW, 3, 1);
	refused(&g, &b.lg, PC_VC_BUILD, 2, "gap of build 2222");
	every_split(&g, &b.lg);
	pc_test_log_free(&b.lg);
	running(&b, &map_a, 1);
	b.build = build_2;
	add(&b, PC_REC_GAP, 1, 1);
	b.build = build_1;
	add(&b, PC_REC_START, 2, 0);
	refused(&g, &b.lg, PC_VC_BUILD, 2, "gap of build 2222");
	pc_test_log_free(&b.lg);

	/* pinned builds: a START of another is refused; every build seen is a result */
	build_honest(&b);
	g.policy.nbuild_ids = 1;
	memcpy(g.policy.build_ids[0], build_1, 32);
	refused(&g, &b.lg, PC_VC_BUILD, 11, "none of the 1 the verifier accepts");
	every_split(&g, &b.lg);
	g.policy.nbuild_ids = 0;
	struct pc_verify *v = verify(&g, &b.lg);
	assert_int_equal(pc_verify_nbuilds(v), 2);
	const struct pc_verify_use *u1 = pc_verify_build_at(v, 0), *u2 = pc_verify_build_at(v, 1);
	assert_memory_equal(u1->id, build_1, 32);
	assert_true(u1->first_record == 0 && u1->windows == 5);
	assert_true(u1->first_window_ns == T0 && u1->last_end_ns == T0 + 8 * WIN);
	assert_memory_equal(u2->id, build_2, 32);
	assert_true(u2->first_record == 11 && u2->windows == 3);
	assert_true(u2->first_window_ns == T0 + 9 * WIN && u2->last_end_ns == T0 + 22 * WIN);
	pc_verify_free(v);
	pc_test_log_free(&b.lg);
}

/* ---- 4. counters no real port can produce ---- */

static void
test_link_blocks(void **state)
{
	struct builder b;
	struct given g;

	(void)state;
	given_init(&g);
	running(&b, &map_a, 1);
	rec(&b, PC_REC_WINDOW, 1, 1)->nlinks = 0;
	push(&b);
	refused(&g, &b.lg, PC_VC_COUNTERS, 2, "no link block for uplink up0");
	every_split(&g, &b.lg);
	pc_test_log_free(&b.lg);
	running(&b, &map_a, 1);
	rec(&b, PC_REC_WINDOW, 1, 1)->nlinks = 2;
	b.links[1] = b.links[0];
	push(&b);
	refused(&g, &b.lg, PC_VC_COUNTERS, 2, "two link blocks for uplink up0");
	pc_test_log_free(&b.lg);
	running(&b, &map_a, 1);
	rec(&b, PC_REC_WINDOW, 1, 1)->nlinks = 2;
	snprintf(b.links[1].name, PC_ID_LEN, "up9");
	push(&b);
	refused(&g, &b.lg, PC_VC_COUNTERS, 2, "uplink up9, which no pod in force names");
	pc_test_log_free(&b.lg);
	/* two uplinks: each must have its block, with the map declared or not */
	running(&b, &map_b, 1);
	accepted(&g, &b.lg);
	rec(&b, PC_REC_WINDOW, 1, 1)->nlinks = 1;
	push(&b);
	refused(&g, &b.lg, PC_VC_COUNTERS, 2, "no link block for uplink up1");
	g.maps[0] = &map_b;
	g.nmaps = 1;
	refused(&g, &b.lg, PC_VC_COUNTERS, 2, "no link block for uplink up1");
	pc_test_log_free(&b.lg);
}

/* The counter (frames, bytes) of pod 0 or link 0 that field k names, in b->r. */
static uint64_t *
counter(struct builder *b, int d, int k, bool bytes)
{
	struct pc_pod_ctr *p = &b->pods[0].dir[d];
	struct pc_link_ctr *l = &b->links[0].dir[d];

	if (k == 0)
		return bytes ? &p->pass_bytes : &p->pass_frames;
	if (k <= PC_POD_DROP_COUNT)
		return bytes ? &p->drop_bytes[k - 1] : &p->drop_frames[k - 1];
	return bytes ? &l->drop_bytes[k - 1 - PC_POD_DROP_COUNT] :
		       &l->drop_frames[k - 1 - PC_POD_DROP_COUNT];
}

/* "pod pod-a up passed", "uplink up0 down malformed": how a failure names counter k. */
static void
field_says(char *buf, size_t len, int k, int d)
{
	const char *dir = pc_dir_name((enum pc_dir)d);

	if (k == 0)
		snprintf(buf, len, "pod pod-a %s passed", dir);
	else if (k <= PC_POD_DROP_COUNT)
		snprintf(buf, len, "pod pod-a %s %s", dir, pc_pod_drop_name((enum pc_pod_drop)(k - 1)));
	else
		snprintf(buf, len, "uplink up0 %s %s", dir,
			 pc_link_drop_name((enum pc_link_drop)(k - 1 - PC_POD_DROP_COUNT)));
}

/* A window whose counter k in direction d has `frames` frames of `bytes` bytes in all. */
static void
forge(struct builder *b, const struct pc_config *cfg, int d, int k, uint64_t frames,
      uint64_t bytes)
{
	running(b, cfg, 1);
	rec(b, PC_REC_WINDOW, 1, 1);
	*counter(b, d, k, false) = frames;
	*counter(b, d, k, true) = bytes;
	push(b);
}

static void
test_counter_bounds(void **state)
{
	const int malformed = 1 + PC_POD_DROP_COUNT + PC_DROP_MALFORMED;
	struct builder b;
	struct given g;
	char says[128];

	(void)state;
	for (int declared = 0; declared <= 1; declared++) {
		given_init(&g);
		g.maps[0] = &map_a;
		g.nmaps = (size_t)declared;
		/* the largest frame: the declared map's max_frame, else the largest a map allows */
		uint64_t max = declared ? map_a.max_frame : 16384;
		for (int k = 0; k <= PC_POD_DROP_COUNT + PC_LINK_DROP_COUNT; k++)
			for (int d = 0; d < PC_DIR_COUNT; d++) {
				uint64_t lo = k == malformed ? 1 : 14, hi = k == malformed ? 65535 : max;

				field_says(says, sizeof(says), k, d);
				forge(&b, &map_a, d, k, 1000, 1000 * lo);
				accepted(&g, &b.lg);
				pc_test_log_free(&b.lg);
				forge(&b, &map_a, d, k, 1000, 1000 * hi);
				accepted(&g, &b.lg);
				pc_test_log_free(&b.lg);
				forge(&b, &map_a, d, k, 1000, 1000 * lo - 1);
				refused(&g, &b.lg, PC_VC_COUNTERS, 2, says);
				pc_test_log_free(&b.lg);
				forge(&b, &map_a, d, k, 1000, 1000 * hi + 1);
				refused(&g, &b.lg, PC_VC_COUNTERS, 2, says);
				pc_test_log_free(&b.lg);
				forge(&b, &map_a, d, k, 0, 1);
				refused(&g, &b.lg, PC_VC_COUNTERS, 2, "1 bytes in 0 frames");
				pc_test_log_free(&b.lg);
			}
	}
	given_init(&g);
	forge(&b, &map_a, PC_DIR_DOWN, 0, 10, 10 * 16384 + 1);
	every_split(&g, &b.lg);
	pc_test_log_free(&b.lg);
}

/* ---- 5. what a run without a pod map cannot check ---- */

static void
test_warnings(void **state)
{
	struct builder b;
	struct given g;

	(void)state;
	given_init(&g);
	running(&b, &map_a, 2);
	struct pc_verify *v = verify(&g, &b.lg);
	expect_ok(v);                                 /* it still verifies, */
	unsigned w = pc_verify_warnings(v);           /* and says what it could not check */
	assert_true(w & (1u << PC_VW_NO_PODMAP));
	assert_true(w & (1u << PC_VW_ANY_BUILD));
	assert_true(w & (1u << PC_VW_NO_TRUSTED));
	assert_non_null(strstr(pc_verify_warning_text(PC_VW_NO_PODMAP), "the log's own claims"));
	pc_verify_free(v);
	g.maps[0] = &map_a;
	g.nmaps = 1;
	g.policy.nbuild_ids = 1;
	memcpy(g.policy.build_ids[0], build_1, 32);
	v = verify(&g, &b.lg);
	expect_ok(v);
	assert_int_equal(pc_verify_warnings(v) & ((1u << PC_VW_NO_PODMAP) | (1u << PC_VW_ANY_BUILD)),
			 0);
	pc_verify_free(v);
	pc_test_log_free(&b.lg);
}

/* ---- 6. several declared maps ---- */

/* Window w in which pod-a sends 9000-byte frames up. */
static void
add_jumbo(struct builder *b, uint64_t w)
{
	rec(b, PC_REC_WINDOW, w, 1);
	b->pods[0].dir[PC_DIR_UP].pass_bytes = 9000 * b->pods[0].dir[PC_DIR_UP].pass_frames;
	push(b);
}

/* START under map_a, W0, RELOAD to map_b, W1 W2 of jumbo frames (records 0 .. 4). */
static void
build_two_maps(struct builder *b)
{
	running(b, &map_a, 1);
	b->cfg = &map_b;
	add(b, PC_REC_RELOAD, 1, 0);
	add_jumbo(b, 1);
	add_jumbo(b, 2);
}

static void
test_several_maps(void **state)
{
	struct builder b;
	struct given g;
	char a[2 * PC_DIGEST_LEN + 1];
	uint8_t digest[PC_DIGEST_LEN];

	(void)state;
	given_init(&g);
	build_two_maps(&b);
	g.maps[0] = &map_a;
	g.maps[1] = &map_b;
	g.nmaps = 2;
	struct pc_verify *v = verify(&g, &b.lg);
	expect_ok(v);
	/* which map was in force over which windows */
	assert_int_equal(pc_verify_nmaps_used(v), 2);
	const struct pc_verify_use *u = pc_verify_map_used_at(v, 0);
	pc_config_digest(&map_a, digest);
	assert_memory_equal(u->id, digest, PC_DIGEST_LEN);
	assert_true(u->map == 0 && u->first_record == 0 && u->windows == 1);
	assert_string_equal(pc_verify_map_at(v, (size_t)u->map)->path, "a.yaml");
	u = pc_verify_map_used_at(v, 1);
	assert_true(u->map == 1 && u->first_record == 2 && u->windows == 2);
	assert_true(u->first_window_ns == T0 + WIN && u->last_end_ns == T0 + 3 * WIN);
	pc_verify_free(v);
	every_split(&g, &b.lg);

	/* a RELOAD, or a START, naming a map that is not declared: named with its digest */
	g.nmaps = 1;
	pc_config_digest(&map_b, digest);
	pc_hex(digest, PC_DIGEST_LEN, a);
	refused(&g, &b.lg, PC_VC_PODMAP, 2, a);
	every_split(&g, &b.lg);
	g.maps[0] = &map_b;
	refused(&g, &b.lg, PC_VC_PODMAP, 0, "start under pod map");
	pc_test_log_free(&b.lg);

	/* each window against the map in force: jumbo frames only where it allows them */
	g.maps[0] = &map_a;
	g.nmaps = 2;
	running(&b, &map_a, 1);
	add_jumbo(&b, 1);
	refused(&g, &b.lg, PC_VC_COUNTERS, 2, "outside 14 to 1522 bytes a frame");
	g.nmaps = 0;                                 /* with no map, 16 KiB is the bound */
	accepted(&g, &b.lg);
	pc_test_log_free(&b.lg);
}

/* Another set of maps, or another policy, than the state's: every record is read again. */
static void
test_state_policy(void **state)
{
	struct builder b;
	struct given g;
	char note[PC_NOTE_MAX], *st;
	size_t stlen;
	struct pc_error err;

	(void)state;
	given_init(&g);
	build_two_maps(&b);
	g.maps[0] = &map_a;
	g.maps[1] = &map_b;
	g.nmaps = 2;
	struct pc_test_run o = run_of(&g);
	size_t nl = pc_test_log_checkpoint(&b.lg, 3, key, note, sizeof(note));
	struct pc_verify *v = pc_test_verify(&o, note, nl, &b.lg);
	assert_int_equal(pc_verify_state_save(v, &st, &stlen), 0);
	pc_verify_free(v);
	assert_non_null(strstr(st, "\npodcap-verify-state 7\n"));

	v = pc_verify_new_maps(&vk, g.maps, 2);
	pc_verify_set_policy(v, &g.policy);
	assert_int_equal(pc_verify_resume(v, st, stlen, &err), 0);
	assert_int_equal(pc_verify_resume_at(v), 3);
	pc_verify_free(v);
	struct pc_verify_policy p = g.policy;
	p.max_gap_ns = WIN;
	v = pc_verify_new_maps(&vk, g.maps, 2);
	pc_verify_set_policy(v, &p);
	assert_int_equal(pc_verify_resume(v, st, stlen, &err), 1);
	assert_int_equal(pc_verify_resume_at(v), 0);
	assert_int_equal(pc_verify_npulls(v), 1);     /* the pulls are still the verifier's */
	pc_verify_free(v);
	v = pc_verify_new_maps(&vk, g.maps, 1);
	pc_verify_set_policy(v, &g.policy);
	assert_int_equal(pc_verify_resume(v, st, stlen, &err), 1);
	pc_verify_free(v);
	free(st);
	pc_test_log_free(&b.lg);
}

/* ---- the verifier's now, as --now gives it ---- */

static void
test_utc_parse(void **state)
{
	static const char *const bad[] = {
		"2024-01-01", "2024-01-01T00:00:00", "2024-13-01T00:00:00Z", "2023-02-29T00:00:00Z",
		"2024-01-01T24:00:00Z", "1969-12-31T23:59:59Z", "2024-01-01T00:00:00.Z",
		"2024-01-01T00:00:00.1234567891Z", "2024-01-01T00:00:00+0100", "2024-01-01T00:00:00Zx",
	};
	char buf[PC_UTC_LEN];
	uint64_t ns;

	(void)state;
	assert_int_equal(pc_utc_parse("2024-01-01T00:00:00Z", &ns, NULL), 0);
	assert_true(ns == T0);
	assert_int_equal(pc_utc_parse("2024-02-29t01:00:00.5+01:00", &ns, NULL), 0);
	assert_true(ns == T0 + 59 * 86400 * NS + NS / 2);
	assert_int_equal(pc_utc_parse("2023-12-31 19:00:00-05:00", &ns, NULL), 0);
	assert_true(ns == T0);
	for (uint64_t t = T0; t < T0 + 400 * 86400 * NS; t += 86400 * NS + 1234567) {
		pc_utc_format(t, buf, sizeof(buf));
		assert_int_equal(pc_utc_parse(buf, &ns, NULL), 0);
		assert_true(ns == t);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(pc_utc_parse(bad[i], &ns, NULL), -1);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_honest_logs),     cmocka_unit_test(test_time_ahead),
		cmocka_unit_test(test_now_before_pull), cmocka_unit_test(test_unaccounted),
		cmocka_unit_test(test_checkpoint_age),  cmocka_unit_test(test_merged_windows),
		cmocka_unit_test(test_identity),        cmocka_unit_test(test_link_blocks),
		cmocka_unit_test(test_counter_bounds),  cmocka_unit_test(test_warnings),
		cmocka_unit_test(test_several_maps),    cmocka_unit_test(test_origin),
		cmocka_unit_test(test_state_policy),    cmocka_unit_test(test_utc_parse),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
