/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Auditor declarations (src/log/declaration.h): the body's one
 * spelling, the signature by an auditor key, and the rules of appliance,
 * pod map and validity, each with the message a person sees.
 */
#include <setjmp.h>
#include <stdarg.h>
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

#include "testutil.h"

#define T0         1798761600ULL /* 2027-01-01T00:00:00Z */
#define S          1000000000ULL
#define DIGEST_HEX "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff"
#define GOLDEN_BODY                         \
	"podcap-declaration v1\n"           \
	"appliance lab-1\n"                 \
	"podmap " DIGEST_HEX "\n"           \
	"not-before 2027-01-01T00:00:00Z\n" \
	"not-after 2027-01-08T00:00:00Z\n"

static struct pc_signer_key *alice, *bob, *appliance;
static struct pc_verifier_key valice, vbob, vappliance;

static int
setup(void **state)
{
	(void)state;
	if (sodium_init() < 0)
		return -1;
	alice = pc_test_key("auditor/alice", &valice);
	bob = pc_test_key("auditor/bob", &vbob);
	appliance = pc_test_key("podcap/lab-1", &vappliance);
	return 0;
}

static int
teardown(void **state)
{
	(void)state;
	pc_signer_key_free(alice);
	pc_signer_key_free(bob);
	pc_signer_key_free(appliance);
	return 0;
}

static struct pc_declaration
golden(void)
{
	struct pc_declaration d = {
		.appliance_id = "lab-1",
		.not_before_ns = T0 * S,
		.not_after_ns = (T0 + 7 * 86400) * S,
	};

	assert_true(pc_unhex(DIGEST_HEX, 64, d.podmap_digest, PC_DIGEST_LEN));
	return d;
}

static void
body_is_golden(void **state)
{
	struct pc_declaration d = golden(), back;
	char buf[PC_DECL_BODY_MAX];
	size_t n;

	(void)state;
	n = pc_declaration_body(&d, buf, sizeof(buf));
	assert_int_equal(n, strlen(GOLDEN_BODY));
	assert_string_equal(buf, GOLDEN_BODY);
	assert_int_equal(pc_declaration_parse_body(buf, n, &back, NULL), 0);
	assert_memory_equal(&back, &d, sizeof(d));
	/* too small a buffer writes nothing it claims */
	assert_int_equal(pc_declaration_body(&d, buf, n), 0);
}

static void
body_refuses_invalid(void **state)
{
	struct pc_declaration d = golden();
	char buf[PC_DECL_BODY_MAX];

	(void)state;
	d.not_after_ns = d.not_before_ns;
	assert_int_equal(pc_declaration_body(&d, buf, sizeof(buf)), 0);
	d = golden();
	d.not_before_ns += 1; /* not a whole second */
	assert_int_equal(pc_declaration_body(&d, buf, sizeof(buf)), 0);
	d = golden();
	strcpy(d.appliance_id, "lab 1");
	assert_int_equal(pc_declaration_body(&d, buf, sizeof(buf)), 0);
}

/* Replaces the first `from` in GOLDEN_BODY with `to` and parses it; returns the message. */
static const char *
parse_edited(const char *from, const char *to)
{
	static struct pc_error err;
	struct pc_declaration d;
	char buf[PC_DECL_BODY_MAX];
	const char *at = strstr(GOLDEN_BODY, from);

	assert_non_null(at);
	snprintf(buf, sizeof(buf), "%.*s%s%s", (int)(at - GOLDEN_BODY), GOLDEN_BODY, to,
		 at + strlen(from));
	memset(&err, 0, sizeof(err));
	assert_int_equal(pc_declaration_parse_body(buf, strlen(buf), &d, &err), -1);
	return err.msg;
}

static void
parse_is_strict(void **state)
{
	(void)state;
	assert_string_equal(parse_edited("v1", "v2"),
			    "not a declaration: the first line is not 'podcap-declaration v1'");
	assert_string_equal(parse_edited("appliance ", "appliances "),
			    "declaration: expected a line 'appliance VALUE'");
	assert_string_equal(parse_edited("lab-1", "lab/1"),
			    "declaration: appliance id 'lab/1' is not " PC_ID_RULE);
	assert_string_equal(parse_edited("aabb", "AABB"),
			    "declaration: not in canonical form (lower-case hex, times as "
			    "2026-01-01T00:00:00Z)");
	assert_string_equal(parse_edited("eeff\n", "ee\n"),
			    "declaration: podmap is not 64 hex digits");
	assert_string_equal(
	    parse_edited("01T00:00:00Z", "01T00:00:00.5Z"),
	    "declaration: not-before '2027-01-01T00:00:00.5Z' is not a whole second");
	assert_string_equal(parse_edited("01T00:00:00Z", "01T01:00:00+01:00"),
			    "declaration: not in canonical form (lower-case hex, times as "
			    "2026-01-01T00:00:00Z)");
	assert_string_equal(parse_edited("2027-01-08", "2027-01-01"),
			    "declaration: not-after is not later than not-before");
	assert_string_equal(
	    parse_edited("2027-01-08", "2027-13-08"),
	    "declaration: not-after: '2027-13-08T00:00:00Z': no such time, or before "
	    "1970");
	assert_string_equal(parse_edited("08T00:00:00Z\n", "08T00:00:00Z\nextra line\n"),
			    "declaration: text after the not-after line");
	assert_string_equal(parse_edited("08T00:00:00Z\n", "08T00:00:00Z"),
			    "declaration: expected a line 'not-after VALUE'");
	assert_string_equal(parse_edited("not-before 2027", "not-after 2027"),
			    "declaration: expected a line 'not-before VALUE'");
}

static size_t
signed_golden(const struct pc_signer_key *k, char *note)
{
	size_t n = pc_test_sign_note(k, GOLDEN_BODY, note, PC_NOTE_MAX);

	assert_true(n > 0);
	return n;
}

static void
open_checks_the_signature(void **state)
{
	struct pc_verifier_key both[2] = { vbob, valice };
	struct pc_declaration d, want = golden();
	char note[PC_NOTE_MAX];
	struct pc_error err;
	size_t n = signed_golden(alice, note), which = 99;

	(void)state;
	assert_int_equal(pc_declaration_open(note, n, &valice, 1, &d, &which, &err), 0);
	assert_memory_equal(&d, &want, sizeof(d));
	assert_int_equal(which, 0);
	assert_int_equal(pc_declaration_open(note, n, both, 2, &d, &which, &err), 0);
	assert_int_equal(which, 1);

	/* wrong key */
	assert_int_equal(pc_declaration_open(note, n, &vbob, 1, &d, NULL, &err), -1);
	assert_true(strncmp(err.msg, "no signature by key auditor/bob+", 32) == 0);
	assert_int_equal(pc_declaration_open(note, n, both, 1, &d, NULL, &err), -1);
	both[1] = vbob;
	assert_int_equal(pc_declaration_open(note, n, both, 2, &d, NULL, &err), -1);
	assert_string_equal(err.msg, "no signature by any of the 2 auditor keys");

	/* an appliance's log key is not an auditor key, even when it signed */
	n = signed_golden(appliance, note);
	assert_int_equal(pc_declaration_open(note, n, &vappliance, 1, &d, NULL, &err), -1);
	assert_true(strstr(err.msg, "is not an auditor key (its name must begin with auditor/)") !=
		    NULL);
	assert_int_equal(pc_declaration_open(note, n, &vappliance, 0, &d, NULL, &err), -1);
	assert_string_equal(err.msg, "no auditor key given");
}

static void
open_refuses_forgeries(void **state)
{
	struct pc_declaration d;
	char note[PC_NOTE_MAX];
	struct pc_error err;
	size_t n = signed_golden(alice, note);

	(void)state;
	/* another validity under the same signature */
	note[strlen(GOLDEN_BODY) - 5] = '1';
	assert_int_equal(pc_declaration_open(note, n, &valice, 1, &d, NULL, &err), -1);
	assert_true(strncmp(err.msg, "bad signature by key auditor/alice+", 35) == 0);

	/* no signature line at all */
	assert_int_equal(
	    pc_declaration_open(GOLDEN_BODY, strlen(GOLDEN_BODY), &valice, 1, &d, NULL, &err), -1);
	assert_string_equal(err.msg, "malformed note");

	/* a signed text that is not a declaration */
	n = pc_test_sign_note(alice, "podcap/lab-1\n5\nAAAA\n", note, sizeof(note));
	assert_int_equal(pc_declaration_open(note, n, &valice, 1, &d, NULL, &err), -1);
	assert_string_equal(err.msg,
			    "not a declaration: the first line is not 'podcap-declaration v1'");
}

static void
check_rules(void **state)
{
	struct pc_declaration d = golden();
	uint8_t other[PC_DIGEST_LEN];
	enum pc_decl_refusal why = PC_DECL_REFUSALS;
	struct pc_error err;

	(void)state;
	memcpy(other, d.podmap_digest, sizeof(other));
	assert_int_equal(pc_declaration_check(&d, "lab-1", other, T0 * S, &why, &err), 0);
	assert_int_equal(
	    pc_declaration_check(&d, "lab-1", other, (T0 + 7 * 86400) * S - 1, &why, &err), 0);
	assert_int_equal(pc_declaration_check(&d, "lab-2", other, T0 * S, &why, &err), -1);
	assert_string_equal(err.msg, "declared for appliance lab-1, not lab-2");
	assert_string_equal(pc_declaration_refusal_name(why), "other_appliance");
	assert_int_equal(pc_declaration_check(&d, "lab-1", other, T0 * S - 1, &why, &err), -1);
	assert_string_equal(err.msg,
			    "not yet valid: valid from 2027-01-01T00:00:00Z (now "
			    "2026-12-31T23:59:59.999999999Z)");
	assert_int_equal(pc_declaration_check(&d, "lab-1", other, (T0 + 7 * 86400) * S, &why, &err),
			 -1);
	assert_string_equal(err.msg, "expired at 2027-01-08T00:00:00Z (now 2027-01-08T00:00:00Z)");
	assert_string_equal(pc_declaration_refusal_name(why), "expired");
	other[31] ^= 1;
	assert_int_equal(pc_declaration_check(&d, "lab-1", other, T0 * S, &why, &err), -1);
	assert_string_equal(err.msg,
			    "declared for pod map " DIGEST_HEX ", not this map "
			    "(00112233445566778899aabbccddeeff00112233445566778899aabbccddeefe)");
}

static void
load_from_file(void **state)
{
	struct pc_declaration d, want = golden();
	char dir[256], map[300], path[310], small[310], note[PC_NOTE_MAX];
	uint8_t hash[PC_DIGEST_LEN], expect[PC_DIGEST_LEN];
	enum pc_decl_refusal why;
	struct pc_error err;
	size_t n = signed_golden(alice, note);
	FILE *f;

	(void)state;
	assert_int_equal(pc_test_tmpdir(dir, sizeof(dir), "decl"), 0);
	snprintf(map, sizeof(map), "%s/map.yaml", dir);
	assert_int_equal(pc_declaration_path(map, path, sizeof(path)), 0);
	assert_true(strlen(path) == strlen(map) + 4 && strcmp(path + strlen(map), ".sig") == 0);
	assert_int_equal(pc_declaration_path(map, small, strlen(map) + 4), -1);

	assert_int_equal(pc_declaration_load(path, &valice, 1, "lab-1", want.podmap_digest, T0 * S,
					     &d, hash, &why, &err),
			 -1);
	assert_non_null(strstr(err.msg,
			       "map.yaml.sig: no declaration: the pod map is not signed "
			       "by an auditor"));

	f = fopen(path, "w");
	assert_non_null(f);
	assert_int_equal(fwrite(note, 1, n, f), n);
	assert_int_equal(fclose(f), 0);
	assert_int_equal(pc_declaration_load(path, &valice, 1, "lab-1", want.podmap_digest, T0 * S,
					     &d, hash, &why, &err),
			 0);
	pc_declaration_hash(note, n, expect);
	assert_memory_equal(hash, expect, sizeof(hash));
	assert_memory_equal(&d, &want, sizeof(d));
	/* the error names the file it is about */
	assert_int_equal(pc_declaration_load(path, &valice, 1, "lab-2", want.podmap_digest, T0 * S,
					     &d, hash, &why, &err),
			 -1);
	assert_true(strncmp(err.msg, path, strlen(path)) == 0);
	assert_non_null(strstr(err.msg, ": declared for appliance lab-1, not lab-2"));
	assert_int_equal(why, PC_DECL_OTHER_APPLIANCE);
	/* by another auditor, and not a signed note at all */
	assert_int_equal(pc_declaration_load(path, &vbob, 1, "lab-1", want.podmap_digest, T0 * S,
					     &d, hash, &why, &err),
			 -1);
	assert_int_equal(why, PC_DECL_BAD_SIGNATURE);
	f = fopen(path, "w");
	assert_non_null(f);
	assert_int_equal(fwrite(GOLDEN_BODY, 1, strlen(GOLDEN_BODY), f), strlen(GOLDEN_BODY));
	assert_int_equal(fclose(f), 0);
	assert_int_equal(pc_declaration_load(path, &valice, 1, "lab-1", want.podmap_digest, T0 * S,
					     &d, hash, &why, &err),
			 -1);
	assert_int_equal(why, PC_DECL_MALFORMED);
	assert_non_null(strstr(err.msg, ": malformed note"));
	pc_test_rm_rf(dir);
}

/* ---- the DECLARE record (type 9) ---- */

static struct pc_record
declare_record(void)
{
	struct pc_record r = {
		.type = PC_REC_DECLARE,
		.appliance_id = "lab-1",
		.time_ns = 5,
		.window_start_ns = 120 * S,
		.window_len_ns = 60 * S,
		.declare.not_before_ns = T0 * S,
		.declare.not_after_ns = (T0 + 7 * 86400) * S,
	};

	for (int i = 0; i < PC_DIGEST_LEN; i++) {
		r.podmap_digest[i] = (uint8_t)i;
		r.declare.hash[i] = (uint8_t)(0xa0 + i);
	}
	return r;
}

static void
declare_record_bytes(void **state)
{
	struct pc_record r = declare_record(), back;
	uint8_t buf[512];
	struct pc_error err;
	size_t n;

	(void)state;
	n = pc_record_encode(&r, buf, sizeof(buf));
	/* the common 107 bytes and the id, then hash and validity */
	assert_int_equal(n, 107 + 5 + 32 + 16);
	assert_int_equal(buf[1], 9);
	assert_memory_equal(buf + n - 48, r.declare.hash, 32);
	assert_int_equal(buf[n - 16 + 7], 0);
	assert_int_equal(pc_record_decode(buf, n, &back, &err), 0);
	assert_int_equal(back.type, PC_REC_DECLARE);
	assert_memory_equal(back.declare.hash, r.declare.hash, 32);
	assert_int_equal(back.declare.not_before_ns, r.declare.not_before_ns);
	assert_int_equal(back.declare.not_after_ns, r.declare.not_after_ns);
	assert_string_equal(pc_record_type_name(9), "declare");
	pc_record_free(&back);

	assert_int_equal(pc_record_decode(buf, n - 1, &back, &err), -1);
	assert_string_equal(err.msg, "record is truncated");
	/* not_after = not_before */
	memcpy(buf + n - 8, buf + n - 16, 8);
	assert_int_equal(pc_record_decode(buf, n, &back, &err), -1);
	assert_string_equal(err.msg, "declaration valid until no later than it is valid from");
	r.declare.not_after_ns = r.declare.not_before_ns;
	assert_int_equal(pc_record_encode(&r, buf, sizeof(buf)), 0);

	/* the fields are DECLARE's: a STOP is its common fields, whatever its union holds */
	r = declare_record();
	r.type = PC_REC_STOP;
	n = pc_record_encode(&r, buf, sizeof(buf));
	assert_int_equal(n, 107 + 5);
	/* a STOP's bytes relabelled as DECLARE are too short for its fields */
	buf[1] = 9;
	assert_int_equal(pc_record_decode(buf, n, &back, &err), -1);
	assert_string_equal(err.msg, "record is truncated");
	/* nor is a type no record has (the newest is LINK) */
	buf[1] = PC_REC_NEWEST + 1;
	assert_int_equal(pc_record_decode(buf, n, &back, &err), -1);
	assert_string_equal(err.msg, "unknown record type");
}

/* ---- appliance.auditor_keys ---- */

#define MAP_HEAD "appliance:\n  id: lab-1\n"
#define MAP_TAIL                                                                        \
	"uplinks:\n  - name: u0\n    pod_port: net_null0\n    fabric_port: net_null1\n" \
	"pods:\n  - id: p0\n    uplink: u0\n"

static void
write_pub(const char *path, const struct pc_verifier_key *vk)
{
	char line[256];
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	assert_int_equal(pc_verifier_key_format(vk, line, sizeof(line)), 0);
	fprintf(f, "%s\n", line);
	assert_int_equal(fclose(f), 0);
}

/* Loads MAP_HEAD + keys + MAP_TAIL; returns the error message or NULL. */
static const char *
load_with_keys(const char *keys, struct pc_config *cfg)
{
	static struct pc_error err;
	char text[2048];

	snprintf(text, sizeof(text), MAP_HEAD "%s" MAP_TAIL, keys);
	memset(&err, 0, sizeof(err));
	if (pc_config_load_buffer("map.yaml", text, strlen(text), cfg, &err) != 0)
		return err.msg;
	return NULL;
}

static void
config_auditor_keys(void **state)
{
	char dir[256], a[300], b[300], app[300], keys[1024], *canon;
	uint8_t with[PC_DIGEST_LEN], without[PC_DIGEST_LEN], swapped[PC_DIGEST_LEN];
	struct pc_config cfg;
	const char *msg;
	size_t n;

	(void)state;
	assert_int_equal(pc_test_tmpdir(dir, sizeof(dir), "auditor-keys"), 0);
	snprintf(a, sizeof(a), "%s/alice.pub", dir);
	snprintf(b, sizeof(b), "%s/bob.pub", dir);
	snprintf(app, sizeof(app), "%s/app.pub", dir);
	write_pub(a, &valice);
	write_pub(b, &vbob);
	write_pub(app, &vappliance);

	/* without the key the canonical form has no auditor_key line */
	assert_null(load_with_keys("", &cfg));
	pc_config_digest(&cfg, without);
	n = pc_config_canonical(&cfg, NULL, 0);
	canon = malloc(n + 1);
	assert_non_null(canon);
	pc_config_canonical(&cfg, canon, n + 1);
	assert_null(strstr(canon, "auditor_key"));
	assert_int_equal(cfg.nauditor_keys, 0);
	free(canon);
	pc_config_free(&cfg);

	snprintf(keys, sizeof(keys), "  auditor_keys: [%s, %s]\n", b, a);
	assert_null(load_with_keys(keys, &cfg));
	assert_int_equal(cfg.nauditor_keys, 2);
	assert_string_equal(cfg.auditor_keys[0].name, "auditor/bob");
	pc_config_digest(&cfg, with);
	n = pc_config_canonical(&cfg, NULL, 0);
	canon = malloc(n + 1);
	assert_non_null(canon);
	pc_config_canonical(&cfg, canon, n + 1);
	/* the keys themselves, in byte order, after max_frame */
	char *ka = strstr(canon, "\nauditor_key auditor/alice+");
	char *kb = strstr(canon, "\nauditor_key auditor/bob+");
	assert_non_null(ka);
	assert_non_null(kb);
	assert_true(ka < kb && strstr(canon, "max_frame") < ka && kb < strstr(canon, "uplink u0"));
	free(canon);
	pc_config_free(&cfg);
	assert_memory_not_equal(with, without, PC_DIGEST_LEN);
	/* a key given as its line is the same key */
	char line[256];
	assert_int_equal(pc_verifier_key_format(&valice, line, sizeof(line)), 0);
	snprintf(keys, sizeof(keys), "  auditor_keys: [\"%s\", %s]\n", line, b);
	assert_null(load_with_keys(keys, &cfg));
	pc_config_digest(&cfg, swapped);
	pc_config_free(&cfg);
	assert_memory_equal(with, swapped, PC_DIGEST_LEN);
	/* the order they are listed in does not matter */
	snprintf(keys, sizeof(keys), "  auditor_keys: [%s, %s]\n", a, b);
	assert_null(load_with_keys(keys, &cfg));
	pc_config_digest(&cfg, swapped);
	pc_config_free(&cfg);
	assert_memory_equal(with, swapped, PC_DIGEST_LEN);

	/* mistakes, each at its node */
	snprintf(keys, sizeof(keys), "  auditor_keys: [%s]\n", app);
	msg = load_with_keys(keys, &cfg);
	assert_non_null(msg);
	assert_non_null(strstr(msg, "not an auditor key: its name must begin with auditor/"));
	snprintf(keys, sizeof(keys), "  auditor_keys: [%s, %s]\n", a, a);
	msg = load_with_keys(keys, &cfg);
	assert_non_null(msg);
	assert_non_null(strstr(msg, "invalid auditor_keys[1]"));
	assert_non_null(strstr(msg, "the same key as an earlier one"));
	snprintf(keys, sizeof(keys), "  auditor_keys: [%s/missing.pub]\n", dir);
	msg = load_with_keys(keys, &cfg);
	assert_non_null(msg);
	assert_non_null(strstr(msg, "missing.pub"));
	assert_string_equal(
	    load_with_keys("  auditor_keys: []\n", &cfg),
	    "empty auditor_keys (leave the key out to run maps no auditor declared)");
	msg = load_with_keys("  auditor_keys: /etc/x.pub\n", &cfg);
	assert_non_null(msg);
	assert_non_null(strstr(msg, "auditor_keys"));
	pc_test_rm_rf(dir);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(body_is_golden),
		cmocka_unit_test(body_refuses_invalid),
		cmocka_unit_test(parse_is_strict),
		cmocka_unit_test(open_checks_the_signature),
		cmocka_unit_test(open_refuses_forgeries),
		cmocka_unit_test(check_rules),
		cmocka_unit_test(load_from_file),
		cmocka_unit_test(config_auditor_keys),
		cmocka_unit_test(declare_record_bytes),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
