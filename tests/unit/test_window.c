/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The window promise in podcap-verify (docs/bucket.md, "The two
 * promises"; docs/verify.md, check 14): logs built byte for byte and
 * signed with the appliance's key. A pod held to the window promise that
 * passed more than cap x window in a window, or in a merged record more
 * than its windows' budgets, is refused naming the record, pod, direction
 * and excess; so is a mode byte with an unknown bit, a log whose pod
 * blocks claim another promise than the declared map or than the START
 * that put them in force. Honest logs (a reload, a merged window, a
 * restart, a clock step, an envelope pod passing its burst) verify, the
 * reports name each pod's promise, and a run resumed at any record from
 * the saved state reaches the full run's verdict.
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

#include "log/note.h"
#include "log/record.h"
#include "verify/verify.h"

#include "testutil.h"

#define APP    "w-app"
#define ORIGIN "podcap/" APP
#define NS     1000000000ULL
#define WIN    NS /* 1 s windows */
#define T0     (1704067200ULL * NS)
#define BUDGET 1000000ULL /* 8 Mbit/s x 1 s / 8 */

/* pod-w is held to the window promise, pod-e to the envelope; a burst of two windows each. */
#define MAP_TEXT(cap)                                                                          \
	"appliance:\n  id: " APP "\nwindow: 1s\n"                                              \
	"defaults:\n  cap: " cap "\n  burst: 2s\n  mode: police\n"                             \
	"uplinks:\n  - name: up0\n    pod_port: 0000:3b:00.0\n    fabric_port: 0000:3b:00.1\n" \
	"pods:\n"                                                                              \
	"  - id: pod-w\n    uplink: up0\n    prefixes: [10.1.0.0/24]\n    promise: window\n"   \
	"  - id: pod-e\n    uplink: up0\n    prefixes: [10.1.1.0/24]\n"
static const char map_text[] = MAP_TEXT("8Mbps");
static const char map_up_text[] = MAP_TEXT("16Mbps");

static struct pc_signer_key *key;
static struct pc_verifier_key vk;
static struct pc_config map, map_up; /* map_up: the caps doubled, for a reload */

struct log {
	struct pc_test_log lg;
	const struct pc_config *cfg;
	struct pc_record r;
	struct pc_record_pod pods[2];
	struct pc_record_link link;
};

/* Record `type` at window w in l->r, each pod passing `bytes` up and down, for the caller to change. */
static struct pc_record *
rec(struct log *l, uint8_t type, uint64_t w, uint64_t count, uint64_t bytes)
{
	struct pc_record *r = &l->r;

	memset(r, 0, sizeof(*r));
	memset(l->pods, 0, sizeof(l->pods));
	memset(&l->link, 0, sizeof(l->link));
	r->type = type;
	snprintf(r->appliance_id, sizeof(r->appliance_id), "%s", APP);
	r->window_len_ns = WIN;
	r->window_start_ns = T0 + w * WIN;
	r->window_count = count;
	r->time_ns = r->window_start_ns + count * WIN;
	pc_config_digest(l->cfg, r->podmap_digest);
	if (type == PC_REC_START || type == PC_REC_RELOAD || type == PC_REC_WINDOW) {
		r->npods = l->cfg->npods;
		r->pods = l->pods;
		for (unsigned i = 0; i < r->npods; i++) {
			const struct pc_pod *p = &l->cfg->pods[i];
			struct pc_record_pod *rp = &l->pods[i];

			snprintf(rp->id, PC_ID_LEN, "%s", p->id);
			snprintf(rp->uplink, PC_ID_LEN, "up0");
			rp->cap_bps = p->limits.cap_bps;
			rp->burst_bytes = p->limits.burst_bytes;
			rp->mode = pc_record_mode(&p->limits);
			for (int d = 0; type == PC_REC_WINDOW && d < PC_DIR_COUNT; d++) {
				rp->dir[d].pass_bytes = bytes;
				rp->dir[d].pass_frames = bytes / 1000;
			}
		}
	}
	if (type == PC_REC_WINDOW) {
		r->nlinks = 1;
		r->links = &l->link;
		snprintf(l->link.name, PC_ID_LEN, "up0");
	}
	return r;
}

static void
push(struct log *l)
{
	pc_test_log_push(&l->lg, &l->r);
}

static void
add(struct log *l, uint8_t type, uint64_t w, uint64_t count, uint64_t bytes)
{
	rec(l, type, w, count, bytes);
	push(l);
}

/*
 * What podcapd writes for the two pods: every window at the budget (the
 * window pod's most), a first window in which the envelope pod passes its
 * burst, a merged record, a reload to higher caps, a restart, a clock step.
 */
static void
honest(struct log *l)
{
	memset(l, 0, sizeof(*l));
	l->cfg = &map;
	add(l, PC_REC_START, 0, 0, 0);
	rec(l, PC_REC_WINDOW, 0, 1, BUDGET);
	l->pods[1].dir[PC_DIR_UP].pass_bytes = 3 * BUDGET; /* burst + cap x window */
	l->pods[1].dir[PC_DIR_UP].pass_frames = 3000;
	push(l);
	add(l, PC_REC_WINDOW, 1, 1, BUDGET);
	add(l, PC_REC_WINDOW, 2, 2, 2 * BUDGET); /* merged: two budgets */
	l->cfg = &map_up;
	add(l, PC_REC_RELOAD, 4, 0, 0);
	add(l, PC_REC_WINDOW, 4, 1, 2 * BUDGET); /* the doubled cap's budget */
	add(l, PC_REC_STOP, 5, 0, 0);
	add(l, PC_REC_GAP, 5, 2, 0);
	l->cfg = &map;
	add(l, PC_REC_START, 7, 0, 0);
	add(l, PC_REC_WINDOW, 7, 1, BUDGET);
	rec(l, PC_REC_CLOCK, 20, 0, 0)->clock.step_ns = 12 * (int64_t)WIN;
	push(l);
	add(l, PC_REC_WINDOW, 20, 1, BUDGET);
}

static const struct pc_config *const both[] = { &map, &map_up };

/* What podcap-verify is given: the key, and both pod maps (--pod-map, twice) or none. */
static struct pc_test_run
run_of(bool declared)
{
	struct pc_test_run o = { .vk = &vk,
				 .maps = declared ? both : NULL,
				 .nmaps = declared ? 2 : 0 };

	return o;
}

static struct pc_verify *
verify(bool declared, const struct pc_test_log *lg)
{
	struct pc_test_run o = run_of(declared);

	return pc_test_verify_signed(&o, key, lg);
}

/* The log is refused, first by check c at `record` saying `says`. */
static void
refused(bool declared, const struct pc_test_log *lg, enum pc_verify_check c, int64_t record,
	const char *says)
{
	struct pc_verify *v = verify(declared, lg);
	const struct pc_verify_failure *f = pc_verify_find(v, c);

	if (f == NULL || f->record != record || strstr(f->msg, says) == NULL) {
		pc_test_print_failures(v);
		fail_msg("expected %s at record %lld saying '%s'", pc_verify_check_name(c),
			 (long long)record, says);
	}
	assert_true(pc_verify_nfailures(v) > 0);
	pc_verify_free(v);
}

/* The JSON report's pods list, cut out of it in place. */
static const char *
pods_of(char *json)
{
	char *from = strstr(json, "\"pods\""), *to = from ? strstr(from, "\"links\"") : NULL;

	assert_non_null(to);
	*to = '\0';
	return from;
}

/* The resumed run's failures and pods (with the promises the state carries) are the full run's. */
static void
same_verdict(const struct pc_verify *full, const struct pc_verify *inc, size_t n)
{
	char *a = pc_test_report(full, true), *b = pc_test_report(inc, true);

	(void)n;
	assert_int_equal(pc_verify_nfailures(inc), pc_verify_nfailures(full));
	for (size_t i = 0; i < pc_verify_nfailures(full); i++) {
		assert_int_equal(pc_verify_failure_at(inc, i)->record,
				 pc_verify_failure_at(full, i)->record);
		assert_string_equal(pc_verify_failure_at(inc, i)->msg,
				    pc_verify_failure_at(full, i)->msg);
	}
	assert_non_null(strstr(b, "\"pod\": \"pod-w\", \"dir\": \"up\""));
	assert_string_equal(pods_of(a), pods_of(b));
	free(a);
	free(b);
}

/* For every split point, a run resumed from the state the first k records left gives the full verdict. */
static void
every_split(bool declared, const struct pc_test_log *lg)
{
	struct pc_test_run o = run_of(declared);

	pc_test_every_split(&o, key, lg, same_verdict);
}

static void
test_honest(void **state)
{
	struct log l;

	(void)state;
	honest(&l);
	for (int m = 0; m < 2; m++) {
		struct pc_verify *v = verify(m == 0, &l.lg);

		if (pc_verify_nfailures(v) != 0)
			pc_test_print_failures(v);
		assert_int_equal(pc_verify_nfailures(v), 0);
		char *t = pc_test_report(v, false), *j = pc_test_report(v, true);
		assert_non_null(strstr(t,
				       "\npromise envelope (at most burst + cap x T over any "
				       "interval T): pod-e\n"));
		assert_non_null(strstr(t,
				       "\npromise window (also at most cap x window in every "
				       "interval of one window): pod-w\n"));
		assert_non_null(strstr(j, "\"pod\": \"pod-w\", \"dir\": \"down\""));
		assert_non_null(strstr(j,
				       "\"tx_full\": {\"frames\": 0, \"bytes\": 0}}, "
				       "\"promises\": [\"window\"]}"));
		assert_non_null(strstr(j, "\"promises\": [\"envelope\"]}"));
		assert_non_null(strstr(j, "\"window\": 0}"));
		char *h = NULL;
		size_t hl = 0;
		FILE *hf = open_memstream(&h, &hl);
		pc_verify_print_html(v, hf);
		fclose(hf);
		assert_non_null(strstr(h, "<td data-k=\"promise\">window</td>"));
		assert_non_null(strstr(h, "<td data-k=\"promise\">envelope</td>"));
		free(h);
		free(t);
		free(j);
		pc_verify_free(v);
	}
	every_split(true, &l.lg);
	pc_test_log_free(&l.lg);
}

/* One byte over the budget, in each direction, in a window, a merged record and after a reload. */
static void
test_over_the_budget(void **state)
{
	struct log l;
	struct pc_test_log copy;

	(void)state;
	honest(&l);
	static const struct {
		size_t record;
		int dir;
		const char *says;
	} cases[] = {
		{ 2, PC_DIR_UP,
		  "pod pod-w up: 1000001 bytes passed in 1 window of 1s exceed the "
		  "window promise, cap 8000000 bit/s x 1s = 1000000 bytes a window "
		  "(1000000 in all), by 1 bytes" },
		{ 3, PC_DIR_DOWN,
		  "pod pod-w down: 2000001 bytes passed in 2 windows of 1s exceed "
		  "the window promise, cap 8000000 bit/s x 1s = 1000000 bytes a "
		  "window (2000000 in all), by 1 bytes" },
		{ 5, PC_DIR_UP,
		  "pod pod-w up: 2000001 bytes passed in 1 window of 1s exceed the "
		  "window promise, cap 16000000 bit/s x 1s = 2000000 bytes a window" },
		{ 9, PC_DIR_DOWN, "pod pod-w down: 1000001 bytes" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct pc_record r;
		struct pc_error err;

		pc_test_log_copy(&l.lg, &copy);
		/* the forged record: the honest one with one byte more, encoded again */
		assert_int_equal(pc_record_decode(copy.rec[cases[i].record],
						  copy.len[cases[i].record], &r, &err),
				 0);
		r.pods[0].dir[cases[i].dir].pass_bytes++;
		free(copy.rec[cases[i].record]);
		copy.rec[cases[i].record] = malloc(PC_RECORD_MAX);
		copy.len[cases[i].record] =
		    pc_record_encode(&r, copy.rec[cases[i].record], PC_RECORD_MAX);
		assert_true(copy.len[cases[i].record] > 0);
		pc_record_free(&r);
		refused(true, &copy, PC_VC_WINDOW, (int64_t)cases[i].record, cases[i].says);
		refused(false, &copy, PC_VC_WINDOW, (int64_t)cases[i].record, cases[i].says);
		if (i == 0)
			every_split(true, &copy);
		pc_test_log_free(&copy);
	}
	pc_test_log_free(&l.lg);
}

/* The same excess on the envelope pod, within its envelope, is no failure: the promise is the pod's. */
static void
test_envelope_pod_passes_its_burst(void **state)
{
	struct log l;

	(void)state;
	memset(&l, 0, sizeof(l));
	l.cfg = &map;
	add(&l, PC_REC_START, 0, 0, 0);
	rec(&l, PC_REC_WINDOW, 0, 1, 0)->pods[1].dir[PC_DIR_UP].pass_bytes = 3 * BUDGET;
	l.pods[1].dir[PC_DIR_UP].pass_frames = 3000;
	push(&l);
	struct pc_verify *v = verify(true, &l.lg);
	assert_int_equal(pc_verify_nfailures(v), 0);
	pc_verify_free(v);
	/* the same window as pod-w's is refused */
	rec(&l, PC_REC_WINDOW, 1, 1, 0)->pods[0].dir[PC_DIR_UP].pass_bytes = BUDGET + 500000;
	l.pods[0].dir[PC_DIR_UP].pass_frames = 1500;
	push(&l);
	refused(true, &l.lg, PC_VC_WINDOW, 2, "pod pod-w up: 1500000 bytes passed");
	pc_test_log_free(&l.lg);
}

/* Mode bytes: an unknown bit is a record that does not decode; another promise than declared is refused. */
static void
test_mode_byte(void **state)
{
	struct log l;

	(void)state;
	for (unsigned bit = 2; bit < 8; bit++) {
		memset(&l, 0, sizeof(l));
		l.cfg = &map;
		add(&l, PC_REC_START, 0, 0, 0);
		/* pc_record_encode refuses such a byte: it is forged after encoding */
		add(&l, PC_REC_WINDOW, 0, 1, 1000);
		size_t at = 0, n = l.lg.len[1];
		for (size_t i = 0; i + 5 <= n; i++)
			if (memcmp(l.lg.rec[1] + i, "pod-e", 5) == 0)
				at = i + 5 + 1 + 3 +
				    16; /* id, uplink's length and "up0", cap, burst */
		assert_true(at > 0);
		assert_int_equal(l.lg.rec[1][at], PC_POD_MODE_POLICE);
		l.lg.rec[1][at] |= (uint8_t)(1u << bit);
		refused(true, &l.lg, PC_VC_DECODE, 1, "unknown pod mode bits");
		pc_test_log_free(&l.lg);
	}

	/* the declared map holds pod-w to the window; a START under its digest says envelope */
	memset(&l, 0, sizeof(l));
	l.cfg = &map;
	rec(&l, PC_REC_START, 0, 0, 0)->pods[0].mode = PC_POD_MODE_POLICE;
	push(&l);
	rec(&l, PC_REC_WINDOW, 0, 1, 3 * BUDGET)->pods[0].mode = PC_POD_MODE_POLICE;
	push(&l);
	refused(
	    true, &l.lg, PC_VC_PODMAP, 0,
	    "pod pod-w: uplink up0 cap 8000000 bit/s burst 2000000 bytes mode 1 (envelope "
	    "promise), the pod map says uplink up0 cap 8000000 bit/s burst 2000000 bytes mode 3 "
	    "(window promise)");
	every_split(true, &l.lg);
	pc_test_log_free(&l.lg);

	/* a WINDOW may not drop the promise the START put in force */
	honest(&l);
	struct pc_record r;
	struct pc_error err;
	assert_int_equal(pc_record_decode(l.lg.rec[2], l.lg.len[2], &r, &err), 0);
	r.pods[0].mode = PC_POD_MODE_POLICE;
	r.pods[0].dir[PC_DIR_UP].pass_bytes = 3 * BUDGET;
	l.lg.len[2] = pc_record_encode(&r, l.lg.rec[2], l.lg.len[2]);
	assert_true(l.lg.len[2] > 0);
	pc_record_free(&r);
	refused(false, &l.lg, PC_VC_SEQUENCE, 2, "pod #0 (pod-w) differs from the pod in force");
	pc_test_log_free(&l.lg);
}

static int
setup(void **state)
{
	(void)state;
	if (sodium_init() < 0)
		return -1;
	key = pc_test_key(ORIGIN, &vk);
	pc_test_load_map(&map, map_text, "window.yaml");
	pc_test_load_map(&map_up, map_up_text, "window-up.yaml");
	return 0;
}

static int
teardown(void **state)
{
	(void)state;
	pc_signer_key_free(key);
	pc_config_free(&map);
	pc_config_free(&map_up);
	return 0;
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_honest),
		cmocka_unit_test(test_over_the_budget),
		cmocka_unit_test(test_envelope_pod_passes_its_burst),
		cmocka_unit_test(test_mode_byte),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
