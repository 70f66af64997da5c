/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The verifier's report never drops an event or a failure silently: past
 * the ones it lists, every kind is still counted and added up, its worst
 * are still shown, and a resumed run reports what a full one does. The
 * logs here are forged (signed with a fresh key) and far longer than the
 * report lists, so they are made record by record as they are fed rather
 * than held in memory.
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

#include "podmap/config.h"
#include "base/hex.h"
#include "base/keys.h"
#include "log/merkle.h"
#include "log/note.h"
#include "log/record.h"
#include "verify/verify.h"

#include "testutil.h"

#define APP "r-app"
#define ORIGIN "podcap/" APP
#define T0 (1704067200ULL * 1000000000ULL)
#define WIN (60ULL * 1000000000ULL)

/* Two pod maps of the appliance: one uplink, then pod-b moved to a second one. */
static const char map_a_text[] =
	"appliance:\n  id: " APP "\nwindow: 60s\n"
	"defaults:\n  cap: 1Gbps\n  burst: 100MB\n  mode: police\n"
	"uplinks:\n"
	"  - name: up0\n    pod_port: 0000:3b:00.0\n    fabric_port: 0000:3b:00.1\n"
	"pods:\n"
	"  - id: pod-a\n    uplink: up0\n    prefixes: [10.1.0.0/24]\n"
	"  - id: pod-b\n    uplink: up0\n    prefixes: [10.1.1.0/24]\n";
static const char map_b_text[] =
	"appliance:\n  id: " APP "\nwindow: 60s\n"
	"defaults:\n  cap: 1Gbps\n  burst: 100MB\n  mode: police\n"
	"uplinks:\n"
	"  - name: up0\n    pod_port: 0000:3b:00.0\n    fabric_port: 0000:3b:00.1\n"
	"  - name: up1\n    pod_port: 0000:3c:00.0\n    fabric_port: 0000:3c:00.1\n"
	"pods:\n"
	"  - id: pod-a\n    uplink: up0\n"
	"  - id: pod-b\n    uplink: up1\n";

static struct pc_signer_key *key;
static struct pc_verifier_key vk;
static struct pc_config map_a, map_b;
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
	return 0;
}

/* ---- forged logs, made record by record ---- */

/* Fills r (and pod, which r may point to) with record i of the log. */
typedef void (*make_fn)(const void *log, size_t i, struct pc_record *r, struct pc_record_pod *pod);

static void
base(struct pc_record *r, uint8_t type, uint64_t w)
{
	memset(r, 0, sizeof(*r));
	r->type = type;
	snprintf(r->appliance_id, sizeof(r->appliance_id), "%s", APP);
	r->window_len_ns = WIN;
	r->window_start_ns = T0 + w * WIN;
	r->time_ns = r->window_start_ns + 1000;
	memset(r->podmap_digest, 0x5d, PC_DIGEST_LEN);
	memset(r->build_id, 0x6a, sizeof(r->build_id));
}

/* A START, RELOAD or WINDOW (of no traffic) of one pod at 1 Gbit/s. */
static void
with_pod(struct pc_record *r, struct pc_record_pod *pod, uint8_t type, uint64_t w)
{
	base(r, type, w);
	memset(pod, 0, sizeof(*pod));
	snprintf(pod->id, PC_ID_LEN, "pod-a");
	snprintf(pod->uplink, PC_ID_LEN, "up0");
	pod->cap_bps = 1000000000ULL;
	pod->burst_bytes = 7500000000ULL;
	r->npods = 1;
	r->pods = pod;
	r->window_count = type == PC_REC_WINDOW;
	if (type == PC_REC_WINDOW) {
		/* a window has a link block for its pod's uplink: the counters check says so */
		static struct pc_record_link link = { .name = "up0" };
		r->nlinks = 1;
		r->links = &link;
	}
}

struct fed {
	uint8_t *buf;
	size_t len;
};

static struct fed
encode(make_fn make, const void *log, size_t i)
{
	static uint8_t buf[4096];
	struct pc_record r;
	struct pc_record_pod pod;

	make(log, i, &r, &pod);
	size_t n = pc_record_encode(&r, buf, sizeof(buf));
	assert_true(n > 0);
	return (struct fed){ buf, n };
}

/*
 * Verifies the first `size` records under the checkpoint key signs over
 * them, from where `state` (when not NULL) leaves off, as podcap-verify does.
 */
static struct pc_verify *
verify_log(make_fn make, const void *log, size_t size, const char *state, size_t stlen)
{
	struct pc_merkle_range range;
	uint8_t h[PC_HASH_LEN], root[PC_HASH_LEN];
	char note[PC_NOTE_MAX];
	struct pc_error err;

	pc_merkle_range_init(&range);
	for (size_t i = 0; i < size; i++) {
		struct fed f = encode(make, log, i);

		pc_merkle_leaf_hash(f.buf, f.len, h);
		pc_merkle_range_append(&range, h);
	}
	pc_merkle_range_root(&range, root);
	size_t nl = pc_test_checkpoint(key, ORIGIN, size, root, note, sizeof(note));
	struct pc_verify *v = pc_verify_new(&vk, NULL);
	assert_non_null(v);
	if (state != NULL)
		assert_int_equal(pc_verify_resume(v, state, stlen, &err), 0);
	assert_int_equal(pc_verify_checkpoint(v, note, nl), 0);
	for (uint64_t i = pc_verify_resume_at(v); i < size; i++) {
		struct fed f = encode(make, log, i);

		pc_verify_record(v, f.buf, f.len, NULL);
	}
	pc_verify_finish(v);
	return v;
}

/*
 * START at window 0; `harmless` restarts and reloads, alternating (a
 * restart every window, down 1 window, except the one at record long_at,
 * down 5); a WINDOW; a GAP of `gap` windows; a WINDOW; a STOP.
 */
struct shape {
	size_t harmless;
	size_t long_at;             /* odd: a restart */
	uint64_t gap;
};

static size_t
shape_records(const struct shape *s)
{
	return s->harmless + 5;
}

static uint64_t
harmless_window(const struct shape *s, size_t i)
{
	return (i + 1) / 2 + (i >= s->long_at ? 4 : 0);
}

static void
make_shape(const void *log, size_t i, struct pc_record *r, struct pc_record_pod *pod)
{
	const struct shape *s = log;
	uint64_t last = harmless_window(s, s->harmless);

	if (i <= s->harmless)
		with_pod(r, pod, i % 2 == 1 || i == 0 ? PC_REC_START : PC_REC_RELOAD,
			 harmless_window(s, i));
	else if (i == s->harmless + 1)
		with_pod(r, pod, PC_REC_WINDOW, last);
	else if (i == s->harmless + 3)
		with_pod(r, pod, PC_REC_WINDOW, last + 1 + s->gap);
	else if (i == s->harmless + 2)
		base(r, PC_REC_GAP, last + 1), r->window_count = s->gap;
	else
		base(r, PC_REC_STOP, last + 2 + s->gap);
}

static void
assert_contains(const char *hay, const char *needle)
{
	if (strstr(hay, needle) == NULL)
		fail_msg("report lacks \"%s\"", needle);
}

/* ---- a JSON well-formedness check, enough for the report ---- */

static const char *json_value(const char *p);

static const char *
json_ws(const char *p)
{
	while (p != NULL && (*p == ' ' || *p == '\n' || *p == '\t' || *p == '\r'))
		p++;
	return p;
}

static const char *
json_string(const char *p)
{
	if (*p++ != '"')
		return NULL;
	for (; *p != '"'; p++) {
		if ((unsigned char)*p < 0x20)
			return NULL;
		if (*p == '\\' && strchr("\"\\/bfnrtu", *++p) == NULL)
			return NULL;
	}
	return p + 1;
}

static const char *
json_number(const char *p)
{
	const char *s = p += *p == '-';

	while (*p >= '0' && *p <= '9')
		p++;
	if (p == s || (*s == '0' && p > s + 1))
		return NULL;
	return p;
}

/* The members of an object (pairs) or the items of an array, up to `close`. */
static const char *
json_items(const char *p, char close, bool pairs)
{
	p = json_ws(p + 1);
	if (*p == close)
		return p + 1;
	for (;;) {
		if (pairs) {
			p = json_string(json_ws(p));
			p = json_ws(p);
			if (p == NULL || *p++ != ':')
				return NULL;
		}
		p = json_ws(json_value(p));
		if (p == NULL)
			return NULL;
		if (*p == close)
			return p + 1;
		if (*p++ != ',')
			return NULL;
	}
}

static const char *
json_value(const char *p)
{
	p = json_ws(p);
	if (p == NULL)
		return NULL;
	if (*p == '{')
		return json_items(p, '}', true);
	if (*p == '[')
		return json_items(p, ']', false);
	if (*p == '"')
		return json_string(p);
	for (const char *const *w = (const char *const[]){ "true", "false", "null", NULL }; *w; w++)
		if (strncmp(p, *w, strlen(*w)) == 0)
			return p + strlen(*w);
	return json_number(p);
}

static void
assert_json(const char *s)
{
	const char *end = json_ws(json_value(s));

	if (end == NULL || *end != '\0')
		fail_msg("the JSON report does not parse (at %s)", end ? end : "?");
}

static void
test_json_check(void **state)
{
	(void)state;
	/* the checker refuses what a broken report would look like */
	assert_json("{\"a\": [1, -2, {\"b\": null}], \"c\": \"x\\\"y\", \"d\": true}\n");
	static const char *const bad[] = {
		"{\"a\": 1,}", "{\"a\": [1, 2}", "{\"a\" 1}", "[01]", "{\"a\": \"\n\"}", "{} {}",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		const char *end = json_ws(json_value(bad[i]));

		assert_true(end == NULL || *end != '\0');
	}
}

/* ---- the tests ---- */

static const struct shape long_log = { .harmless = 1500, .long_at = 1401, .gap = 1000 };

static void
test_gap_past_the_kept_events(void **state)
{
	const struct shape *s = &long_log;
	size_t n = shape_records(s);

	(void)state;
	struct pc_verify *v = verify_log(make_shape, s, n, NULL, 0);
	assert_int_equal(pc_verify_nfailures(v), 0);
	/* START, 750 restarts, 750 reloads, the GAP and the STOP */
	assert_int_equal(pc_verify_nevents(v), 1503);
	assert_null(pc_verify_event_at(v, PC_VERIFY_MAX_KEPT));

	const struct pc_verify_event_sum *gap = pc_verify_event_sum(v, PC_VE_GAP);
	assert_int_equal(gap->count, 1);
	assert_true(gap->total_ns == (unsigned __int128)1000 * WIN);
	assert_int_equal(gap->worst[0].record, 1502);
	assert_int_equal(gap->worst[0].windows, 1000);
	assert_int_equal(gap->worst_seq[0], 1501);

	const struct pc_verify_event_sum *rs = pc_verify_event_sum(v, PC_VE_RESTART);
	assert_int_equal(rs->count, 750);
	assert_true(rs->total_ns == (unsigned __int128)(749 + 5) * WIN);
	assert_int_equal(rs->nworst, PC_VERIFY_WORST);
	assert_int_equal(rs->worst[0].record, 1401);             /* down 5 windows */
	assert_true(pc_verify_event_size(&rs->worst[0]) == 5 * WIN);
	for (uint32_t i = 1; i < rs->nworst; i++)                 /* then the earliest of 1 */
		assert_int_equal(rs->worst[i].record, 2 * i - 1);

	const struct pc_verify_event_sum *rl = pc_verify_event_sum(v, PC_VE_RELOAD);
	assert_int_equal(rl->count, 750);
	assert_true(rl->total_ns == 0);
	for (uint32_t i = 0; i < rl->nworst; i++)                 /* no size: the latest */
		assert_int_equal(rl->worst[i].record, 1500 - 2 * i);
	assert_int_equal(pc_verify_event_sum(v, PC_VE_START)->count, 1);
	assert_int_equal(pc_verify_event_sum(v, PC_VE_STOP)->count, 1);
	assert_int_equal(pc_verify_event_sum(v, PC_VE_CLOCK)->count, 0);
	assert_null(pc_verify_event_sum(v, PC_VE_COUNT));
	assert_true(pc_verify_unaccounted_ns(v) == (unsigned __int128)(1000 + 754) * WIN);

	char *text = pc_test_report(v, false);
	assert_contains(text, "  restart  750    45240s  300s     1401    2024-01-01T11:45:00Z\n");
	assert_contains(text, "  gap      1      60000s  60000s   1502    2024-01-01T12:35:00Z\n");
	assert_contains(text, "  reload   750    -       -        -       -\n");
	assert_contains(text, "time not accounted for: 105240s (gaps 60000s, down before "
			"restarts 45240s, real time across clock steps 0s); longest unbroken "
			"60000s, up to record 1502\n");
	assert_contains(text, "  1000 of 1503 events listed; not listed: restart 250, stop 1, "
			"gap 1, reload 251; of those, the largest 5 of each kind (the latest "
			"for start, stop and reload):\n");
	assert_contains(text, "  2024-01-01T12:35:00Z  record 1502  gap: 1000 windows (60000s) "
			"not logged\n");
	assert_contains(text, "  2024-01-01T11:45:00Z  record 1401  restart: no stop before it, "
			"down from 2024-01-01T11:40:00Z for 300s (5 windows)");
	assert_contains(text, "record 1500  reload: ");
	assert_contains(text, "record 1504  stop: ");
	/* a restart of 1 window down, listed already, is not listed again */
	assert_null(strstr(strstr(text, " of 1503 events listed"), "record 1  restart"));
	free(text);

	char *json = pc_test_report(v, true);
	assert_json(json);
	assert_contains(json, "\"events_total\": 1503,\n  \"events_listed\": 1000,\n"
			"  \"events_truncated\": true,\n");
	assert_contains(json, "{\"kind\": \"gap\", \"count\": 1, \"total_ns\": 60000000000000, "
			"\"longest\": {\"event\": \"gap\", \"record\": 1502, ");
	assert_contains(json, "{\"kind\": \"restart\", \"count\": 750, \"total_ns\": "
			"45240000000000, \"longest\": {\"event\": \"restart\", \"record\": 1401, ");
	assert_contains(json, "\"unaccounted_ns\": 105240000000000,\n");
	assert_contains(json, "\"unaccounted\": {\"total_ns\": 105240000000000, \"saturated\": "
			"false, \"gaps_ns\": 60000000000000, \"down_ns\": 45240000000000, "
			"\"clock_ns\": 0, \"longest_ns\": 60000000000000, \"longest_record\": "
			"1502},\n");
	char *worst = strstr(json, "\"events_worst\": [");
	assert_non_null(worst);
	assert_contains(worst, "{\"event\": \"gap\", \"record\": 1502, \"time\": "
			"\"2024-01-01T12:35:00Z\", \"windows\": 1000, \"window_ns\": 60000000000}");
	assert_contains(worst, "{\"event\": \"stop\", \"record\": 1504, ");
	free(json);
	pc_verify_free(v);
}

/* The state after the first n records, for a run to resume from. */
static char *
state_after(make_fn make, const void *log, size_t n, size_t *len)
{
	char *st = NULL;
	struct pc_verify *v = verify_log(make, log, n, NULL, 0);

	assert_int_equal(pc_verify_nfailures(v), 0);
	assert_int_equal(pc_verify_state_save(v, &st, len), 0);
	pc_verify_free(v);
	return st;
}

static void
assert_same_sums(const struct pc_verify *full, const struct pc_verify *inc)
{
	assert_true(pc_verify_unaccounted_ns(full) == pc_verify_unaccounted_ns(inc));
	for (int k = 0; k < PC_VE_COUNT; k++) {
		const struct pc_verify_event_sum *a = pc_verify_event_sum(full, k);
		const struct pc_verify_event_sum *b = pc_verify_event_sum(inc, k);

		assert_int_equal(a->count, b->count);
		assert_true(a->total_ns == b->total_ns);
		assert_int_equal(a->nworst, b->nworst);
		for (uint32_t i = 0; i < a->nworst; i++) {
			assert_int_equal(a->worst_seq[i], b->worst_seq[i]);
			assert_int_equal(a->worst[i].record, b->worst[i].record);
			assert_true(pc_verify_event_size(&a->worst[i]) ==
				    pc_verify_event_size(&b->worst[i]));
		}
	}
}

/* The text less its line that starts with `start` (which must be there), in a static buffer. */
static const char *
without_line(const char *text, const char *start)
{
	static char buf[1 << 20];
	const char *at = strstr(text, start);

	assert_non_null(at);
	assert_true(at == text || at[-1] == '\n');
	assert_true(strlen(text) < sizeof(buf));
	const char *next = strchr(at, '\n');
	next = next != NULL ? next + 1 : at + strlen(at);
	snprintf(buf, sizeof(buf), "%.*s%s", (int)(at - text), text, next);
	return buf;
}

/* Resumed at n, the totals, the report and the next state are a full run's. */
static void
check_split(make_fn make, const void *log, size_t size, const struct pc_verify *full,
	    const char *full_text, const char *full_state, size_t full_len, size_t n)
{
	size_t stlen, len;
	char *st = state_after(make, log, n, &stlen), *next;
	struct pc_verify *inc = verify_log(make, log, size, st, stlen);

	assert_int_equal(pc_verify_resume_at(inc), n);
	assert_same_sums(full, inc);
	char *text = pc_test_report(inc, false);
	char *resumed = strstr(text, "resumed at record ");
	assert_non_null(resumed);
	memmove(resumed, strchr(resumed, '\n') + 1, strlen(strchr(resumed, '\n') + 1) + 1);
	/* and a run from scratch had no trusted checkpoint: the only other line that differs */
	assert_null(strstr(text, "warning: no trusted checkpoint"));
	assert_string_equal(text, without_line(full_text, "warning: no trusted checkpoint"));
	assert_int_equal(pc_verify_state_save(inc, &next, &len), 0);
	assert_int_equal(len, full_len);
	assert_memory_equal(next, full_state, len);
	free(next);
	free(text);
	free(st);
	pc_verify_free(inc);
}

static void
resume_at(make_fn make, const void *log, size_t size, const size_t *splits, size_t nsplits)
{
	struct pc_verify *full = verify_log(make, log, size, NULL, 0);
	char *text = pc_test_report(full, false), *st;
	size_t len;

	assert_int_equal(pc_verify_state_save(full, &st, &len), 0);
	for (size_t i = 0; i < nsplits; i++)
		check_split(make, log, size, full, text, st, len, splits[i]);
	free(st);
	free(text);
	pc_verify_free(full);
}

static void
test_resume_every_split(void **state)
{
	/* a short log with a restart down longest among them, at every split point */
	static const struct shape s = { .harmless = 14, .long_at = 9, .gap = 3 };
	size_t splits[32], n = shape_records(&s);

	(void)state;
	for (size_t i = 1; i < n; i++)
		splits[i - 1] = i;
	resume_at(make_shape, &s, n, splits, n - 1);
}

static void
test_resume_past_the_kept_events(void **state)
{
	/* around the last kept event, the longest restart, the gap and the end */
	static const size_t splits[] = { 1, 998, 999, 1000, 1001, 1400, 1401, 1402,
					 1501, 1502, 1503, 1504 };

	(void)state;
	resume_at(make_shape, &long_log, shape_records(&long_log), splits,
		  sizeof(splits) / sizeof(splits[0]));
}

/* A state of the version before the totals: its checkpoint is trusted, every record fed again. */
static void
test_resume_older_state(void **state)
{
	static const struct shape s = { .harmless = 4, .long_at = 3, .gap = 2 };
	size_t len;
	struct pc_error err;

	(void)state;
	char *st = state_after(make_shape, &s, 6, &len);
	char *magic = strstr(st, "\npodcap-verify-state 7\n");
	assert_non_null(magic);
	magic[strlen("\npodcap-verify-state ")] = '2';
	struct pc_verify *v = pc_verify_new(&vk, NULL);
	assert_int_equal(pc_verify_resume(v, st, len, &err), 1);
	assert_int_equal(pc_verify_trusted_size(v), 6);
	assert_int_equal(pc_verify_resume_at(v), 0);
	pc_verify_free(v);
	free(st);
}

/*
 * START; STOP; 1100 RELOADs after the stop (each a sequence failure); a
 * GAP (allowed after a stop) that names another appliance.
 */
#define BAD_RELOADS 1100

static void
make_failing(const void *log, size_t i, struct pc_record *r, struct pc_record_pod *pod)
{
	(void)log;
	if (i == 0)
		with_pod(r, pod, PC_REC_START, 0);
	else if (i == 1)
		base(r, PC_REC_STOP, 0);
	else if (i < 2 + BAD_RELOADS)
		with_pod(r, pod, PC_REC_RELOAD, 0);
	else
		base(r, PC_REC_GAP, 0), r->window_count = 2,
			snprintf(r->appliance_id, sizeof(r->appliance_id), "other-app");
}

static void
test_failures_past_the_kept_ones(void **state)
{
	(void)state;
	struct pc_verify *v = verify_log(make_failing, NULL, 3 + BAD_RELOADS, NULL, 0);

	assert_int_equal(pc_verify_nfailures(v), BAD_RELOADS + 1);
	assert_int_equal(pc_verify_failure_sum(v, PC_VC_SEQUENCE)->count, BAD_RELOADS);
	const struct pc_verify_failure_sum *fs = pc_verify_failure_sum(v, PC_VC_APPLIANCE);
	assert_int_equal(fs->count, 1);
	assert_int_equal(fs->first_seq, BAD_RELOADS);
	assert_int_equal(fs->first.record, 2 + BAD_RELOADS);
	assert_ptr_equal(pc_verify_find(v, PC_VC_APPLIANCE), &fs->first);
	assert_null(pc_verify_failure_sum(v, PC_VC_COUNT));

	char *text = pc_test_report(v, false);
	assert_contains(text, "\nfailures: 1101 (appliance 1, sequence 1100)\n");
	assert_contains(text, "  1000 of 1101 failures listed; not listed: appliance 1, "
			"sequence 100; of those, the first of each check:\n"
			"  appliance: record 1102 (gap, 2024-01-01T00:00:00Z): record of "
			"appliance 'other-app' in the log of 'r-app'\n");
	free(text);
	char *json = pc_test_report(v, true);
	assert_json(json);
	assert_contains(json, "\"failures_total\": 1101,\n  \"failures_listed\": 1000,\n"
			"  \"failures_truncated\": true,\n");
	assert_contains(json, "\"appliance\": 1, \"sequence\": 1100, ");
	assert_contains(strstr(json, "\"failures_first\": ["), "{\"check\": \"appliance\", "
			"\"record\": 1102, \"type\": \"gap\"");
	free(json);
	pc_verify_free(v);
}

/* ---- builds, pod maps and the policy's figures ---- */

/* What a podcapd running `cfg` under `build` writes: record `type` at window w, into lg. */
static void
push_as(struct pc_test_log *lg, const struct pc_config *cfg, const uint8_t *build, uint8_t type,
	uint64_t w)
{
	struct pc_record r;
	struct pc_record_pod pods[2];
	struct pc_record_link links[2];

	memset(&r, 0, sizeof(r));
	r.type = type;
	snprintf(r.appliance_id, sizeof(r.appliance_id), "%s", APP);
	r.window_len_ns = WIN;
	r.window_start_ns = T0 + w * WIN;
	r.window_count = type == PC_REC_WINDOW;
	r.time_ns = r.window_start_ns + r.window_count * WIN;
	pc_config_digest(cfg, r.podmap_digest);
	memcpy(r.build_id, build, 32);
	if (type == PC_REC_START || type == PC_REC_RELOAD || type == PC_REC_WINDOW) {
		memset(pods, 0, sizeof(pods));
		r.npods = cfg->npods;
		r.pods = pods;
		for (unsigned i = 0; i < cfg->npods; i++) {
			const struct pc_pod *p = &cfg->pods[i];

			snprintf(pods[i].id, PC_ID_LEN, "%s", p->id);
			snprintf(pods[i].uplink, PC_ID_LEN, "%s", cfg->uplinks[p->uplink].name);
			pods[i].cap_bps = p->limits.cap_bps;
			pods[i].burst_bytes = p->limits.burst_bytes;
			pods[i].mode = pc_record_mode(&p->limits);
		}
	}
	if (type == PC_REC_WINDOW) {
		memset(links, 0, sizeof(links));
		r.nlinks = cfg->nuplinks;
		r.links = links;
		for (unsigned u = 0; u < cfg->nuplinks; u++)
			snprintf(links[u].name, PC_ID_LEN, "%s", cfg->uplinks[u].name);
	}
	pc_test_log_push(lg, &r);
}

/*
 * START (map a, build 1), W0, W1, RELOAD to map b, W2, STOP, START after a
 * window down of another build (records 0 .. 8), W4, W5.
 */
static void
two_builds_two_maps(struct pc_test_log *lg)
{
	memset(lg, 0, sizeof(*lg));
	push_as(lg, &map_a, build_1, PC_REC_START, 0);
	push_as(lg, &map_a, build_1, PC_REC_WINDOW, 0);
	push_as(lg, &map_a, build_1, PC_REC_WINDOW, 1);
	push_as(lg, &map_b, build_1, PC_REC_RELOAD, 2);
	push_as(lg, &map_b, build_1, PC_REC_WINDOW, 2);
	push_as(lg, &map_b, build_1, PC_REC_STOP, 3);
	push_as(lg, &map_b, build_2, PC_REC_START, 4);
	push_as(lg, &map_b, build_2, PC_REC_WINDOW, 4);
	push_as(lg, &map_b, build_2, PC_REC_WINDOW, 5);
}

/* A row of the builds or pod maps table, as the text report aligns it. */
static void
use_row(char *buf, size_t len, const uint8_t *id, const char *first_record, const char *first,
	const char *last, const char *windows, const char *tail)
{
	char h[2 * 32 + 1];

	pc_hex(id, 32, h);
	snprintf(buf, len, "\n  %s  %-12s  %s  %s  %-7s  %s\n", h, first_record, first, last,
		 windows, tail);
}

static void
test_builds_and_maps(void **state)
{
	struct pc_test_log lg;
	struct pc_verify_policy p;
	const struct pc_config *maps[] = { &map_a, &map_b };
	uint8_t da[PC_DIGEST_LEN], db[PC_DIGEST_LEN];
	char row[512], h1[2 * 32 + 1], h2[2 * 32 + 1], ha[2 * 32 + 1], hb[2 * 32 + 1];

	(void)state;
	two_builds_two_maps(&lg);
	pc_verify_policy_init(&p);
	p.now_ns = T0 + 10 * WIN;
	p.nbuild_ids = 2;
	memcpy(p.build_ids[0], build_1, 32);
	memcpy(p.build_ids[1], build_2, 32);
	struct pc_test_run o = { .vk = &vk, .policy = &p, .maps = maps, .nmaps = 2 };
	struct pc_verify *v = pc_test_verify_signed(&o, key, &lg);
	assert_int_equal(pc_verify_nfailures(v), 0);
	pc_config_digest(&map_a, da);
	pc_config_digest(&map_b, db);
	pc_hex(build_1, 32, h1);
	pc_hex(build_2, 32, h2);
	pc_hex(da, 32, ha);
	pc_hex(db, 32, hb);

	char *text = pc_test_report(v, false);
	assert_contains(text, "\nbuilds:\n  build ");
	use_row(row, sizeof(row), build_1, "0", "2024-01-01T00:00:00Z", "2024-01-01T00:03:00Z",
		"3", "yes");
	assert_contains(text, row);
	use_row(row, sizeof(row), build_2, "6", "2024-01-01T00:04:00Z", "2024-01-01T00:06:00Z",
		"2", "yes");
	assert_contains(text, row);
	assert_contains(text, "\npod maps:\n  digest ");
	use_row(row, sizeof(row), da, "0", "2024-01-01T00:00:00Z", "2024-01-01T00:02:00Z", "2",
		"a.yaml");
	assert_contains(text, row);
	use_row(row, sizeof(row), db, "3", "2024-01-01T00:02:00Z", "2024-01-01T00:06:00Z", "3",
		"b.yaml");
	assert_contains(text, row);
	assert_contains(text, "\ntime not accounted for: 60s (gaps 0s, down before restarts 60s, "
			"real time across clock steps 0s); longest unbroken 60s, up to record 6\n");
	assert_contains(text, "\nmost windows one record covers: 1 (record 1)\n");
	assert_contains(text, "\nnewest window ends 2024-01-01T00:06:00Z; checkpoint age 240s at "
			"the verifier's now 2024-01-01T00:10:00Z\n");
	/* pinned builds and declared maps: only the trusted checkpoint is missing */
	assert_contains(text, "\n\nwarning: no trusted checkpoint (--state): ");
	assert_null(strstr(text, "warning: no --pod-map"));
	assert_null(strstr(text, "warning: no --build-id"));
	assert_contains(text, "\n\nverified: 9 records, 5 windows, ");
	free(text);

	char *json = pc_test_report(v, true);
	assert_json(json);
	assert_contains(json, "\"builds_total\": 2,\n  \"builds_listed\": 2,\n"
			"  \"builds_truncated\": false,\n  \"builds\": [\n");
	snprintf(row, sizeof(row), "{\"build\": \"%s\", \"first_record\": 0, \"first_window\": "
		 "\"2024-01-01T00:00:00Z\", \"last_end\": \"2024-01-01T00:03:00Z\", "
		 "\"windows\": 3, \"pinned\": true}", h1);
	assert_contains(json, row);
	snprintf(row, sizeof(row), "{\"build\": \"%s\", \"first_record\": 6, \"first_window\": "
		 "\"2024-01-01T00:04:00Z\", \"last_end\": \"2024-01-01T00:06:00Z\", "
		 "\"windows\": 2, \"pinned\": true}", h2);
	assert_contains(json, row);
	assert_contains(json, "\"pod_maps_total\": 2,\n");
	snprintf(row, sizeof(row), "{\"digest\": \"%s\", \"path\": \"a.yaml\", "
		 "\"first_record\": 0, \"first_window\": \"2024-01-01T00:00:00Z\", \"last_end\": "
		 "\"2024-01-01T00:02:00Z\", \"windows\": 2}", ha);
	assert_contains(json, row);
	snprintf(row, sizeof(row), "{\"digest\": \"%s\", \"path\": \"b.yaml\", "
		 "\"first_record\": 3, \"first_window\": \"2024-01-01T00:02:00Z\", \"last_end\": "
		 "\"2024-01-01T00:06:00Z\", \"windows\": 3}", hb);
	assert_contains(json, row);
	assert_contains(json, "\"unaccounted_ns\": 60000000000,\n");
	assert_contains(json, "\"unaccounted\": {\"total_ns\": 60000000000, \"saturated\": false, "
			"\"gaps_ns\": 0, \"down_ns\": 60000000000, \"clock_ns\": 0, "
			"\"longest_ns\": 60000000000, \"longest_record\": 6},\n");
	assert_contains(json, "\"merged_windows_max\": 1,\n  \"merged_windows_record\": 1,\n");
	assert_contains(json, "\"freshness\": {\"now\": \"2024-01-01T00:10:00Z\", \"newest_end\": "
			"\"2024-01-01T00:06:00Z\", \"age_ns\": 240000000000},\n");
	assert_contains(json, "\"warnings\": [\n    {\"warning\": \"no_trusted\", \"text\": "
			"\"no trusted checkpoint (--state): ");
	assert_null(strstr(json, "\"no_pod_map\""));
	free(json);
	pc_verify_free(v);
	pc_test_log_free(&lg);
}

/* No --pod-map, no --build-id, no --now: said, and nothing taken from the clock. */
static void
test_nothing_declared(void **state)
{
	struct pc_test_log lg;
	uint8_t db[PC_DIGEST_LEN];
	char row[512];

	(void)state;
	two_builds_two_maps(&lg);
	struct pc_test_run o = { .vk = &vk };
	struct pc_verify *v = pc_test_verify_signed(&o, key, &lg);
	assert_int_equal(pc_verify_nfailures(v), 0);
	pc_config_digest(&map_b, db);

	char *text = pc_test_report(v, false);
	use_row(row, sizeof(row), build_2, "6", "2024-01-01T00:04:00Z", "2024-01-01T00:06:00Z",
		"2", "no");
	assert_contains(text, row);
	use_row(row, sizeof(row), db, "3", "2024-01-01T00:02:00Z", "2024-01-01T00:06:00Z", "3",
		"-");
	assert_contains(text, row);
	assert_contains(text, "\n(map -: no --pod-map was given, the digests are the log's own)\n");
	assert_contains(text, "\nnewest window ends 2024-01-01T00:06:00Z; checkpoint age not "
			"stated: the verifier was given no now (--now)\n");
	assert_contains(text, "\n\nwarning: no --pod-map: the pods, caps and bursts checked are "
			"the log's own claims\nwarning: no --build-id: windows of any podcapd build "
			"were accepted\nwarning: no trusted checkpoint ");
	free(text);

	char *json = pc_test_report(v, true);
	assert_json(json);
	assert_contains(json, "\"pinned\": false}");
	assert_contains(json, "\"path\": null, \"first_record\": 3, ");
	assert_contains(json, "\"freshness\": {\"now\": null, \"newest_end\": "
			"\"2024-01-01T00:06:00Z\", \"age_ns\": null},\n");
	assert_contains(json, "\"warnings\": [\n    {\"warning\": \"no_pod_map\", \"text\": "
			"\"no --pod-map: the pods, caps and bursts checked are the log's own "
			"claims\"},\n"
			"    {\"warning\": \"any_build\", ");
	free(json);
	pc_verify_free(v);
	pc_test_log_free(&lg);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_json_check),
		cmocka_unit_test(test_gap_past_the_kept_events),
		cmocka_unit_test(test_resume_every_split),
		cmocka_unit_test(test_resume_past_the_kept_events),
		cmocka_unit_test(test_resume_older_state),
		cmocka_unit_test(test_failures_past_the_kept_ones),
		cmocka_unit_test(test_builds_and_maps),
		cmocka_unit_test(test_nothing_declared),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
