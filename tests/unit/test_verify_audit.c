/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The verifier and the auditor (src/verify/declare.h): every
 * START and RELOAD bound by a DECLARE to a declaration the verifier holds,
 * signed by an auditor, for this appliance and map, valid over each window
 * and no older than --max-map-age. Each forged log is built byte for byte
 * and signed with the appliance key, so only these checks can refuse it.
 */
#include <inttypes.h>
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

#include "log/declaration.h"
#include "log/note.h"
#include "log/record.h"
#include "verify/verify.h"
#include "verify/declare.h"

#include "testutil.h"

#define APP "a-app"
#define NS  1000000000ULL
#define WIN (60 * NS)
#define T0  (1798761600ULL * NS) /* 2027-01-01T00:00:00Z */

static const char map_a_text[] =
    "appliance:\n  id: " APP "\nwindow: 60s\n"
    "uplinks:\n  - name: up0\n    pod_port: 0000:3b:00.0\n    fabric_port: 0000:3b:00.1\n"
    "pods:\n  - id: pod-a\n    uplink: up0\n";

static struct pc_signer_key *appkey, *alice, *eve;
static struct pc_verifier_key vapp, valice, veve;
static struct pc_config map_a, map_b;

static int
setup(void **state)
{
	(void)state;
	if (sodium_init() < 0)
		return -1;
	appkey = pc_test_key("podcap/" APP, &vapp);
	alice = pc_test_key("auditor/alice", &valice);
	eve = pc_test_key("auditor/eve", &veve);
	pc_test_load_map(&map_a, map_a_text, "a.yaml");
	/* the same pod at another cap */
	char b[1024];
	snprintf(b, sizeof(b), "%s    cap: 200Mbps\n", map_a_text);
	pc_test_load_map(&map_b, b, "b.yaml");
	return 0;
}

static int
teardown(void **state)
{
	(void)state;
	pc_signer_key_free(appkey);
	pc_signer_key_free(alice);
	pc_signer_key_free(eve);
	pc_config_free(&map_a);
	pc_config_free(&map_b);
	return 0;
}

/* A declaration file of cfg by k for [nb, na) windows from T0. */
struct decl {
	char note[PC_NOTE_MAX];
	size_t len;
	uint8_t hash[PC_DIGEST_LEN];
	struct pc_declaration d;
};

/* The same valid over [T0 + nb_ns, T0 + na_ns), bounds that need not be window boundaries. */
static void
declare_ns(struct decl *x, const struct pc_signer_key *k, const struct pc_config *cfg,
	   const char *appliance, uint64_t nb_ns, uint64_t na_ns)
{
	char body[PC_DECL_BODY_MAX];

	memset(x, 0, sizeof(*x));
	snprintf(x->d.appliance_id, sizeof(x->d.appliance_id), "%s", appliance);
	pc_config_digest(cfg, x->d.podmap_digest);
	x->d.not_before_ns = T0 + nb_ns;
	x->d.not_after_ns = T0 + na_ns;
	assert_true(pc_declaration_body(&x->d, body, sizeof(body)) > 0);
	x->len = pc_test_sign_note(k, body, x->note, sizeof(x->note));
	assert_true(x->len > 0);
	pc_declaration_hash(x->note, x->len, x->hash);
}

static void
declare(struct decl *x, const struct pc_signer_key *k, const struct pc_config *cfg,
	const char *appliance, uint64_t nb, uint64_t na)
{
	declare_ns(x, k, cfg, appliance, nb * WIN, na * WIN);
}

/* ---- logs ---- */

static struct pc_record_pod pods[1];
static struct pc_record_link links[1];

/* A record of `type` at window w; a WINDOW covers `count` windows. */
static void
push_n(struct pc_test_log *lg, uint8_t type, const struct pc_config *cfg, uint64_t w,
       uint64_t count, const struct decl *x)
{
	struct pc_record r = { .type = type,
			       .window_len_ns = WIN,
			       .window_start_ns = T0 + w * WIN };

	snprintf(r.appliance_id, sizeof(r.appliance_id), "%s", APP);
	r.time_ns = r.window_start_ns;
	pc_config_digest(cfg, r.podmap_digest);
	memset(pods, 0, sizeof(pods));
	memset(links, 0, sizeof(links));
	snprintf(pods[0].id, PC_ID_LEN, "pod-a");
	snprintf(pods[0].uplink, PC_ID_LEN, "up0");
	pods[0].cap_bps = cfg->pods[0].limits.cap_bps;
	pods[0].burst_bytes = cfg->pods[0].limits.burst_bytes;
	pods[0].mode = (uint8_t)cfg->pods[0].limits.mode;
	if (type == PC_REC_START || type == PC_REC_RELOAD || type == PC_REC_WINDOW) {
		r.npods = 1;
		r.pods = pods;
	}
	if (type == PC_REC_WINDOW) {
		r.window_count = count;
		r.nlinks = 1;
		r.links = links;
		snprintf(links[0].name, PC_ID_LEN, "up0");
	}
	if (type == PC_REC_DECLARE) {
		memcpy(r.declare.hash, x->hash, PC_DIGEST_LEN);
		r.declare.not_before_ns = x->d.not_before_ns;
		r.declare.not_after_ns = x->d.not_after_ns;
	}
	pc_test_log_push(lg, &r);
}

static void
push(struct pc_test_log *lg, uint8_t type, const struct pc_config *cfg, uint64_t w,
     const struct decl *x)
{
	push_n(lg, type, cfg, w, 1, x);
}

/*
 * START(a) DECLARE(da) windows 0..2, RELOAD(b) at 3, DECLARE(db) windows
 * 3..4, STOP at 5. A NULL declaration leaves its DECLARE out.
 */
static void
honest(struct pc_test_log *lg, const struct decl *da, const struct decl *db)
{
	memset(lg, 0, sizeof(*lg));
	push(lg, PC_REC_START, &map_a, 0, NULL);
	if (da != NULL)
		push(lg, PC_REC_DECLARE, &map_a, 0, da);
	for (uint64_t w = 0; w < 3; w++)
		push(lg, PC_REC_WINDOW, &map_a, w, NULL);
	push(lg, PC_REC_RELOAD, &map_b, 3, NULL);
	if (db != NULL)
		push(lg, PC_REC_DECLARE, &map_b, 3, db);
	for (uint64_t w = 3; w < 5; w++)
		push(lg, PC_REC_WINDOW, &map_b, w, NULL);
	push(lg, PC_REC_STOP, &map_b, 5, NULL);
}

/* What the verifier holds: the maps, the declarations given, the keys. */
static struct pc_verify *
verify_all(const struct pc_test_log *lg, const struct decl *const *given, size_t ngiven,
	   const struct pc_verifier_key *keys, size_t nkeys, uint64_t max_age,
	   const uint8_t (*digests)[32], const char *const *labels, size_t nassigned)
{
	const struct pc_config *maps[2] = { &map_a, &map_b };
	struct pc_verify_declaration d[4];
	struct pc_verify_policy p;
	char note[PC_NOTE_MAX], path[4][16];
	struct pc_error err;
	struct pc_verify *v = pc_verify_new_maps(&vapp, maps, 2);

	assert_non_null(v);
	pc_verify_policy_init(&p);
	p.now_ns = T0 + 2000 * WIN;
	pc_verify_set_policy(v, &p);
	for (size_t i = 0; i < ngiven; i++) {
		snprintf(path[i], sizeof(path[i]), "d%zu.sig", i);
		d[i] = (struct pc_verify_declaration){ path[i], given[i]->note, given[i]->len };
	}
	if (nkeys > 0 || ngiven > 0)
		assert_int_equal(pc_verify_set_auditors(v, keys, nkeys, d, ngiven, max_age, &err),
				 0);
	if (nassigned > 0)
		assert_int_equal(pc_verify_set_assignments(v, digests, labels, nassigned, &err), 0);
	size_t n = pc_test_log_checkpoint(lg, lg->n, appkey, note, sizeof(note));
	assert_int_equal(pc_verify_checkpoint(v, note, n), 0);
	for (size_t i = 0; i < lg->n; i++)
		pc_verify_record(v, lg->rec[i], lg->len[i], NULL);
	pc_verify_finish(v);
	return v;
}

static struct pc_verify *
verify(const struct pc_test_log *lg, const struct decl *const *given, size_t ngiven,
       const struct pc_verifier_key *keys, size_t nkeys, uint64_t max_age)
{
	return verify_all(lg, given, ngiven, keys, nkeys, max_age, NULL, NULL, 0);
}

/* The run's n failures, the first with this check, record and (part of) its message. */
static void
fails_n(struct pc_verify *v, size_t n, enum pc_verify_check c, int64_t record, const char *msg)
{
	if (pc_verify_nfailures(v) != n) {
		for (size_t i = 0; i < pc_verify_nfailures(v); i++)
			print_message("failure: record %" PRId64 ": %s\n",
				      pc_verify_failure_at(v, i)->record,
				      pc_verify_failure_at(v, i)->msg);
	}
	assert_int_equal(pc_verify_nfailures(v), n);
	const struct pc_verify_failure *f = pc_verify_failure_at(v, 0);
	assert_int_equal(f->check, c);
	assert_int_equal(f->record, record);
	if (strstr(f->msg, msg) == NULL)
		fail_msg("'%s' does not say '%s'", f->msg, msg);
	pc_verify_free(v);
}

static void
fails_once(struct pc_verify *v, enum pc_verify_check c, int64_t record, const char *msg)
{
	fails_n(v, 1, c, record, msg);
}

/* v's JSON (html false) or HTML report, in memory; the caller frees it. */
static char *
report(const struct pc_verify *v, bool html)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	if (html)
		pc_verify_print_html(v, f);
	else
		pc_verify_print_json(v, f);
	assert_int_equal(fclose(f), 0);
	return buf;
}

static void
has(const char *text, const char *needle)
{
	if (strstr(text, needle) == NULL)
		fail_msg("the report does not have '%s'", needle);
}

/* The declarations section of both reports: the same figures as pc_verify_declared_at's. */
static void
reports_declarations(const struct pc_verify *v)
{
	char *json = report(v, false), *html = report(v, true), want[256];

	has(json, "\"declarations_total\": 2,\n");
	has(html, "<section id=\"declarations\">");
	has(html, "<span data-k=\"declarations_total\">2</span>");
	for (size_t i = 0; i < 2; i++) {
		const struct pc_verify_declared *d = pc_verify_declared_at(v, i);

		snprintf(want, sizeof(want), "{\"record\": %" PRIu64 ", \"hash\": \"", d->record);
		has(json, want);
		snprintf(want, sizeof(want), "\"windows\": %" PRIu64 ", ", d->windows);
		has(json, want);
		snprintf(want, sizeof(want), "\"file\": \"d%zu.sig\"", i);
		has(json, want);
		snprintf(want, sizeof(want),
			 "<tr class=\"declaration-row\"><td class=\"n\" data-k=\"record\">%" PRIu64
			 "</td>",
			 d->record);
		has(html, want);
		snprintf(want, sizeof(want), "<td class=\"n\" data-k=\"windows\">%" PRIu64 "</td>",
			 d->windows);
		has(html, want);
		snprintf(want, sizeof(want), "<td data-k=\"file\">d%zu.sig</td>", i);
		has(html, want);
	}
	has(json, "\"windows\": 3, \"first_window\": \"2027-01-01T00:00:00Z\"");
	has(html,
	    "<td class=\"n\" data-k=\"windows\">3</td><td data-k=\"first_window\">"
	    "2027-01-01T00:00:00Z</td>");
	free(json);
	free(html);
}

static void
honest_log_verifies(void **state)
{
	struct decl da, db;
	const struct decl *given[2] = { &da, &db };
	struct pc_test_log lg;
	struct pc_verify *v;

	(void)state;
	declare(&da, alice, &map_a, APP, 0, 100);
	declare(&db, alice, &map_b, APP, 3, 100);
	honest(&lg, &da, &db);
	v = verify(&lg, given, 2, &valice, 1, PC_VERIFY_UNLIMITED);
	assert_int_equal(pc_verify_nfailures(v), 0);
	assert_int_equal(pc_verify_ndeclared(v), 2);
	const struct pc_verify_declared *d0 = pc_verify_declared_at(v, 0);
	const struct pc_verify_declared *d1 = pc_verify_declared_at(v, 1);
	assert_int_equal(d0->record, 1);
	assert_int_equal(d0->windows, 3);
	assert_int_equal(d0->first_window_ns, T0);
	assert_int_equal(d0->last_end_ns, T0 + 3 * WIN);
	assert_string_equal(pc_verify_declaration_path(v, d0->file), "d0.sig");
	assert_int_equal(d1->record, 6);
	assert_int_equal(d1->windows, 2);
	assert_string_equal(pc_verify_declaration_path(v, d1->file), "d1.sig");
	reports_declarations(v);
	pc_verify_free(v);

	/* without the auditor, DECLARE records are accepted and their validity still checked */
	v = verify(&lg, NULL, 0, NULL, 0, PC_VERIFY_UNLIMITED);
	assert_int_equal(pc_verify_nfailures(v), 0);
	assert_int_equal(pc_verify_ndeclared(v), 2);
	pc_verify_free(v);
	pc_test_log_free(&lg);
}

static void
forged_reload_is_refused(void **state)
{
	struct decl da, db, dx;
	const struct decl *given[2] = { &da, &db };
	struct pc_test_log lg;

	(void)state;
	declare(&da, alice, &map_a, APP, 0, 100);
	declare(&db, alice, &map_b, APP, 3, 100);
	/* a RELOAD to a map no auditor signed: no DECLARE at all */
	honest(&lg, &da, NULL);
	struct pc_verify *v = verify(&lg, given, 2, &valice, 1, PC_VERIFY_UNLIMITED);
	/* and the windows after it ran under none */
	assert_non_null(
	    strstr(pc_verify_failure_at(v, 1)->msg,
		   "window of 2027-01-01T00:03:00Z runs under no auditor's declaration"));
	fails_n(v, 2, PC_VC_PODMAP, 5, "reload record is not followed by a declare record");
	pc_test_log_free(&lg);
	/* ... or a DECLARE naming a declaration the auditor never issued */
	declare(&dx, eve, &map_b, APP, 3, 100);
	honest(&lg, &da, &dx);
	fails_once(verify(&lg, given, 2, &valice, 1, PC_VERIFY_UNLIMITED), PC_VC_PODMAP, 6,
		   "which is not among the signed declarations given (--pod-maps)");
	/* ... or one signed by someone else that the verifier holds */
	given[1] = &dx;
	fails_once(verify(&lg, given, 2, &valice, 1, PC_VERIFY_UNLIMITED), PC_VC_PODMAP, 6,
		   "d1.sig: no signature by key auditor/alice+");
	pc_test_log_free(&lg);
	/* ... or the declaration of another map */
	given[1] = &da;
	honest(&lg, &da, &da);
	v = verify(&lg, given, 2, &valice, 1, PC_VERIFY_UNLIMITED);
	assert_non_null(pc_verify_find(v, PC_VC_PODMAP));
	assert_non_null(strstr(pc_verify_find(v, PC_VC_PODMAP)->msg, "not this map"));
	pc_verify_free(v);
	pc_test_log_free(&lg);
	/* ... or of another appliance */
	declare(&dx, alice, &map_b, "b-app", 3, 100);
	given[1] = &dx;
	honest(&lg, &da, &dx);
	fails_once(verify(&lg, given, 2, &valice, 1, PC_VERIFY_UNLIMITED), PC_VC_PODMAP, 6,
		   "declared for appliance b-app, not " APP);
	pc_test_log_free(&lg);
}

static void
windows_within_validity(void **state)
{
	struct decl da, db;
	const struct decl *given[2] = { &da, &db };
	struct pc_test_log lg;

	(void)state;
	/* map a is declared for windows 0 and 1 only: window 2 runs after it expired */
	declare(&da, alice, &map_a, APP, 0, 2);
	declare(&db, alice, &map_b, APP, 3, 100);
	honest(&lg, &da, &db);
	fails_once(
	    verify(&lg, given, 2, &valice, 1, PC_VERIFY_UNLIMITED), PC_VC_PODMAP, 4,
	    "window of 2027-01-01T00:02:00Z after the declaration in force expired (record 1");
	/* the log's own word is enough for that: no auditor key needed */
	fails_once(verify(&lg, NULL, 0, NULL, 0, PC_VERIFY_UNLIMITED), PC_VC_PODMAP, 4,
		   "after the declaration in force expired");
	pc_test_log_free(&lg);
	/* map b declared from window 4 on: its first window, 3, is before */
	declare(&da, alice, &map_a, APP, 0, 100);
	declare(&db, alice, &map_b, APP, 4, 100);
	honest(&lg, &da, &db);
	fails_once(verify(&lg, given, 2, &valice, 1, PC_VERIFY_UNLIMITED), PC_VC_PODMAP, 7,
		   "before the declaration in force is valid");
	pc_test_log_free(&lg);
	/*
	 * re-randomized at most every 2 windows: map a's third window starts
	 * exactly 2 windows after not-before, and so is too old (D or more fails)
	 */
	declare(&db, alice, &map_b, APP, 3, 100);
	honest(&lg, &da, &db);
	fails_once(verify(&lg, given, 2, &valice, 1, 2 * WIN), PC_VC_PODMAP, 4,
		   "under a declaration older than --max-map-age");
	pc_test_log_free(&lg);
}

/* START(a) DECLARE(x), then one WINDOW of `count` windows from window 0. */
static void
merged(struct pc_test_log *lg, const struct decl *x, uint64_t count)
{
	memset(lg, 0, sizeof(*lg));
	push(lg, PC_REC_START, &map_a, 0, NULL);
	push(lg, PC_REC_DECLARE, &map_a, 0, x);
	push_n(lg, PC_REC_WINDOW, &map_a, 0, count, NULL);
}

/*
 * A record of several windows is judged by every window it covers, not by
 * its first: each must start within the declaration's validity and within
 * --max-map-age of its not-before.
 */
static void
merged_windows_within_validity(void **state)
{
	struct decl da;
	const struct decl *given[1] = { &da };
	struct pc_test_log lg;

	(void)state;
	/* a day of windows in one record, beginning inside a declaration of 3 */
	declare(&da, alice, &map_a, APP, 0, 3);
	merged(&lg, &da, 1440);
	fails_once(verify(&lg, given, 1, &valice, 1, PC_VERIFY_UNLIMITED), PC_VC_PODMAP, 2,
		   "window of 2027-01-01T00:03:00Z (of a record of 1440 windows from "
		   "2027-01-01T00:00:00Z) after the declaration in force expired");
	fails_once(verify(&lg, NULL, 0, NULL, 0, PC_VERIFY_UNLIMITED), PC_VC_PODMAP, 2,
		   "after the declaration in force expired");
	pc_test_log_free(&lg);
	/* its 3 windows exactly: they hold */
	merged(&lg, &da, 3);
	struct pc_verify *v = verify(&lg, given, 1, &valice, 1, PC_VERIFY_UNLIMITED);
	assert_int_equal(pc_verify_nfailures(v), 0);
	assert_int_equal(pc_verify_declared_at(v, 0)->windows, 3);
	pc_verify_free(v);
	/* re-randomized every 2 windows: the record's third window is too old */
	fails_once(verify(&lg, given, 1, &valice, 1, 2 * WIN), PC_VC_PODMAP, 2,
		   "window of 2027-01-01T00:02:00Z (of a record of 3 windows from "
		   "2027-01-01T00:00:00Z) under a declaration older than --max-map-age");
	v = verify(&lg, given, 1, &valice, 1, 3 * WIN);
	assert_int_equal(pc_verify_nfailures(v), 0);
	pc_verify_free(v);
	pc_test_log_free(&lg);

	/*
	 * A not-after inside a window: podcapd stops a second before it, so its
	 * last window starts before it and may end after. That window holds, the
	 * next does not.
	 */
	declare_ns(&da, alice, &map_a, APP, 0, 2 * WIN + 30 * NS);
	merged(&lg, &da, 3);
	v = verify(&lg, given, 1, &valice, 1, PC_VERIFY_UNLIMITED);
	assert_int_equal(pc_verify_nfailures(v), 0);
	pc_verify_free(v);
	pc_test_log_free(&lg);
	merged(&lg, &da, 4);
	fails_once(verify(&lg, given, 1, &valice, 1, PC_VERIFY_UNLIMITED), PC_VC_PODMAP, 2,
		   "window of 2027-01-01T00:03:00Z (of a record of 4 windows");
	pc_test_log_free(&lg);
}

static void
assignments(void **state)
{
	struct decl da, db;
	const struct decl *given[2] = { &da, &db };
	uint8_t digests[2][32];
	const char *labels[2] = { "w1.seed", "w2.seed" };
	struct pc_test_log lg;

	(void)state;
	declare(&da, alice, &map_a, APP, 0, 100);
	declare(&db, alice, &map_b, APP, 3, 100);
	honest(&lg, &da, &db);
	pc_config_digest(&map_a, digests[0]);
	pc_config_digest(&map_b, digests[1]);
	/* both maps are ones the revealed seeds draw */
	struct pc_verify *v =
	    verify_all(&lg, given, 2, &valice, 1, PC_VERIFY_UNLIMITED, digests, labels, 2);
	assert_int_equal(pc_verify_nfailures(v), 0);
	assert_int_equal(pc_verify_declared_at(v, 0)->assignment, 0);
	assert_int_equal(pc_verify_declared_at(v, 1)->assignment, 1);
	pc_verify_free(v);
	/* only map a is: the RELOAD to b fails, naming it */
	v = verify_all(&lg, given, 2, &valice, 1, PC_VERIFY_UNLIMITED, digests, labels, 1);
	assert_int_equal(pc_verify_declared_at(v, 1)->assignment, -1);
	fails_once(v, PC_VC_PODMAP, 5, "which none of the revealed seeds produces (--assignment)");
	pc_test_log_free(&lg);
}

static void
declare_sequence(void **state)
{
	struct decl da;
	struct pc_test_log lg;

	(void)state;
	declare(&da, alice, &map_a, APP, 0, 100);
	memset(&lg, 0, sizeof(lg));
	push(&lg, PC_REC_START, &map_a, 0, NULL);
	push(&lg, PC_REC_WINDOW, &map_a, 0, NULL);
	push(&lg, PC_REC_DECLARE, &map_a, 1, &da);
	push(&lg, PC_REC_WINDOW, &map_a, 1, NULL);
	fails_once(verify(&lg, NULL, 0, NULL, 0, PC_VERIFY_UNLIMITED), PC_VC_SEQUENCE, 2,
		   "declare record not right after a start or reload record");
	pc_test_log_free(&lg);
	/* the log ends on a START whose DECLARE never came */
	memset(&lg, 0, sizeof(lg));
	push(&lg, PC_REC_START, &map_a, 0, NULL);
	const struct decl *given[1] = { &da };
	fails_once(verify(&lg, given, 1, &valice, 1, PC_VERIFY_UNLIMITED), PC_VC_PODMAP, 0,
		   "start record is not followed by a declare record");
	pc_test_log_free(&lg);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(honest_log_verifies),
		cmocka_unit_test(forged_reload_is_refused),
		cmocka_unit_test(windows_within_validity),
		cmocka_unit_test(merged_windows_within_validity),
		cmocka_unit_test(declare_sequence),
		cmocka_unit_test(assignments),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
