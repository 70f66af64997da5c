/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The fleet file: what it declares, relative paths from its directory,
 * and every mistake refused at its place (file:line:col).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "verify/fleet.h"

#include "testutil.h"

static char dir[PC_PATH_LEN], file[PC_PATH_LEN + 16];

static int
setup(void **state)
{
	(void)state;
	if (pc_test_tmpdir(dir, sizeof(dir), "fleet") < 0)
		return -1;
	snprintf(file, sizeof(file), "%s/fleet.yaml", dir);
	return 0;
}

static int
teardown(void **state)
{
	(void)state;
	pc_test_rm_rf(dir);
	return 0;
}

static void
write_fleet(const char *text)
{
	FILE *f = fopen(file, "w");

	assert_non_null(f);
	assert_int_equal(fputs(text, f) >= 0, 1);
	assert_int_equal(fclose(f), 0);
}

static void
test_load(void **state)
{
	struct pc_fleet fl;
	struct pc_error err;
	char want[PC_PATH_LEN + 64];

	(void)state;
	write_fleet("jobs: 3\nappliances:\n"
		    "  - name: rack7\n    url: http://10.1.2.3:9180\n    key: keys/rack7.pub\n"
		    "    pod_maps: [maps/a.yaml, /etc/podcap/maps]\n    state: rack7.state\n"
		    "  - name: rack8\n    ledger: /srv/rack8\n    key: /k/rack8.pub\n"
		    "    pod_maps: maps/b.yaml\n");
	assert_int_equal(pc_fleet_load(file, &fl, &err), 0);
	assert_int_equal(fl.jobs, 3);
	assert_int_equal(fl.n, 2);
	assert_string_equal(fl.a[0].name, "rack7");
	assert_string_equal(fl.a[0].url, "http://10.1.2.3:9180");
	assert_null(fl.a[0].ledger);
	snprintf(want, sizeof(want), "%s/keys/rack7.pub", dir);
	assert_string_equal(fl.a[0].key, want);
	assert_int_equal(fl.a[0].npod_maps, 2);
	assert_string_equal(fl.a[0].pod_maps[1], "/etc/podcap/maps");
	snprintf(want, sizeof(want), "%s/rack7.state", dir);
	assert_string_equal(fl.a[0].state, want);
	assert_string_equal(fl.a[1].ledger, "/srv/rack8");
	assert_null(fl.a[1].state);
	assert_int_equal(fl.a[1].npod_maps, 1);
	assert_int_equal(fl.a[1].line, 8);
	pc_fleet_free(&fl);

	write_fleet("appliances:\n  - {name: a, ledger: l, key: k}\n");
	assert_int_equal(pc_fleet_load(file, &fl, &err), 0);
	assert_int_equal(fl.jobs, PC_FLEET_DEFAULT_JOBS);
	assert_int_equal(fl.a[0].nwitnesses + fl.a[0].nauditor_keys + fl.a[0].ntaps, 0);
	assert_null(fl.a[0].attest);
	assert_null(fl.a[0].declarations);
	assert_null(fl.a[0].assignment);
	pc_fleet_free(&fl);
}

/* What an appliance's evidence must show beyond its log, each path from the file's directory. */
static void
test_load_trust(void **state)
{
	struct pc_fleet fl;
	struct pc_error err;
	char want[PC_PATH_LEN + 64];

	(void)state;
	write_fleet("appliances:\n"
		    "  - name: rack7\n    ledger: l\n    key: k\n"
		    "    witnesses: [keys/w1.vkey, /etc/podcap/w2.vkey]\n"
		    "    attest: policy.yaml\n    declarations: signed\n"
		    "    auditor_keys: keys/aud.pub\n    assignment: draw\n"
		    "    taps:\n      - {url: http://10.9.0.7:9180, key: keys/tap.pub}\n"
		    "      - {ledger: /srv/tap8, key: /k/tap8.pub}\n");
	if (pc_fleet_load(file, &fl, &err) != 0)
		fail_msg("%u:%u: %s", err.mark.line, err.mark.col, err.msg);
	const struct pc_fleet_appliance *a = &fl.a[0];
	assert_int_equal(a->nwitnesses, 2);
	snprintf(want, sizeof(want), "%s/keys/w1.vkey", dir);
	assert_string_equal(a->witnesses[0], want);
	assert_string_equal(a->witnesses[1], "/etc/podcap/w2.vkey");
	snprintf(want, sizeof(want), "%s/policy.yaml", dir);
	assert_string_equal(a->attest, want);
	snprintf(want, sizeof(want), "%s/signed", dir);
	assert_string_equal(a->declarations, want);
	assert_int_equal(a->nauditor_keys, 1);
	snprintf(want, sizeof(want), "%s/keys/aud.pub", dir);
	assert_string_equal(a->auditor_keys[0], want);
	snprintf(want, sizeof(want), "%s/draw", dir);
	assert_string_equal(a->assignment, want);
	assert_int_equal(a->ntaps, 2);
	assert_string_equal(a->taps[0].url, "http://10.9.0.7:9180");
	assert_null(a->taps[0].ledger);
	snprintf(want, sizeof(want), "%s/keys/tap.pub", dir);
	assert_string_equal(a->taps[0].key, want);
	assert_string_equal(a->taps[1].ledger, "/srv/tap8");
	assert_string_equal(a->taps[1].key, "/k/tap8.pub");
	pc_fleet_free(&fl);
}

/* Each appliance's TLS to its endpoint: its CA, pins and client certificate, paths as others. */
static void
test_load_tls(void **state)
{
	static const char pin1[] =
	    "sha256:177b6301ac53f465a2515ea5860d0a9005ac754a26cc49d8a48659f3ed791ea7";
	static const char pin2[] =
	    "sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08";
	struct pc_fleet fl;
	struct pc_error err;
	char text[1024], want[PC_PATH_LEN + 64];

	(void)state;
	snprintf(text, sizeof(text),
		 "appliances:\n"
		 "  - name: rack7\n    url: https://10.1.2.3:9180\n    key: k\n"
		 "    ca: tls/site-a.crt\n    pin: [%s, %s]\n"
		 "    cert: tls/verifier.crt\n    cert_key: /etc/podcap/verifier.key\n"
		 "  - name: rack8\n    url: https://10.1.2.4:9180\n    key: k\n    pin: %s\n"
		 "  - {name: rack9, url: http://10.1.2.5:9180, key: k}\n",
		 pin1, pin2, pin2);
	write_fleet(text);
	if (pc_fleet_load(file, &fl, &err) != 0)
		fail_msg("%u:%u: %s", err.mark.line, err.mark.col, err.msg);
	const struct pc_fleet_appliance *a = &fl.a[0];
	snprintf(want, sizeof(want), "%s/tls/site-a.crt", dir);
	assert_string_equal(a->ca, want);
	assert_int_equal(a->npins, 2);
	assert_string_equal(a->pins[0], pin1);
	assert_string_equal(a->pins[1], pin2);
	snprintf(want, sizeof(want), "%s/tls/verifier.crt", dir);
	assert_string_equal(a->cert, want);
	assert_string_equal(a->cert_key, "/etc/podcap/verifier.key");
	assert_null(fl.a[1].ca);
	assert_null(fl.a[1].cert);
	assert_int_equal(fl.a[1].npins, 1);
	assert_string_equal(fl.a[1].pins[0], pin2);
	assert_null(fl.a[2].ca);
	assert_null(fl.a[2].cert_key);
	assert_int_equal(fl.a[2].npins, 0);
	pc_fleet_free(&fl);
}

#define PIN64 "sha256:0000000000000000000000000000000000000000000000000000000000000000"

struct bad {
	const char *text;
	unsigned line, col;
	const char *msg;
};

static const struct bad bad[] = {
	{ "appliances:\n  - name: a\n    ledger: l\n    key: k\n    colour: red\n", 5, 5,
	  "unknown key 'colour' in an appliance" },
	{ "appliances:\n  - name: a\n    ledger: l\n    url: http://x\n    key: k\n", 2, 5,
	  "appliance a needs exactly one of url and ledger" },
	{ "appliances:\n  - name: a\n    ledger: l\n", 2, 5, "appliance a needs a key" },
	{ "appliances:\n  - name: a\n    url: ftp://x\n    key: k\n", 3, 10,
	  "url must begin with http:// or https://" },
	{ "appliances:\n  - {name: a, ledger: l, key: k}\n  - {name: a, ledger: m, key: k}\n", 3, 5,
	  "appliance a is named twice (first at line 2)" },
	{ "appliances:\n  - {name: 'a b', ledger: l, key: k}\n", 2, 12, "name 'a b' is not an id" },
	{ "jobs: 0\nappliances:\n  - {name: a, ledger: l, key: k}\n", 1, 7,
	  "jobs must be a whole number from 1 to 64" },
	{ "jobs: 4\n", 1, 1, "no appliances" },
	{ "appliances: []\n", 1, 13, "appliances is empty" },
	{ "appliance:\n  - {name: a, ledger: l, key: k}\n", 1, 1, "unknown key 'appliance'" },
	{ "appliances:\n  - {name: a, ledger: [l], key: k}\n", 2, 23,
	  "ledger must be a non-empty string" },
	{ "appliances:\n  - {name: a, ledger: l, key: k\n", 3, 1, "did not find expected" },
	{ "appliances:\n  - {name: a, ledger: l, key: k, auditor_keys: [x]}\n", 2, 5,
	  "appliance a has auditor_keys but no declarations to check" },
	{ "appliances:\n  - {name: a, ledger: l, key: k, attest: p, attest: q}\n", 2, 53,
	  "attest given twice" },
	{ "appliances:\n  - {name: a, ledger: l, key: k, taps: [{url: http://t}]}\n", 2, 41,
	  "a tap needs a key" },
	{ "appliances:\n  - {name: a, ledger: l, key: k, taps: [{key: t}]}\n", 2, 41,
	  "a tap needs exactly one of url and ledger" },
	{ "appliances:\n  - {name: a, ledger: l, key: k, taps: [{ledger: d, key: t, via: x}]}\n", 2,
	  61, "unknown key 'via' in a tap" },
	{ "appliances:\n  - {name: a, ledger: l, key: k, taps: {ledger: d, key: t}}\n", 2, 40,
	  "taps must be a list" },
	{ "appliances:\n  - {name: a, ledger: l, key: k, witnesses: {w: x}}\n", 2, 45,
	  "witnesses must be a list of paths" },
	{ "appliances:\n  - {name: a, ledger: l, key: k,\n     witnesses: [w1.vkey, w2.vkey, "
	  "w1.vkey]}\n",
	  3, 36, "w1.vkey given twice: one witness counted twice" },
	{ "appliances:\n  - {name: a, url: https://x, key: k, cert: c}\n", 2, 5,
	  "appliance a has cert but no cert_key: the two come together" },
	{ "appliances:\n  - {name: a, url: https://x, key: k, cert_key: c}\n", 2, 5,
	  "appliance a has cert_key but no cert: the two come together" },
	{ "appliances:\n  - {name: a, url: https://x, key: k, pin: sha256:00}\n", 2, 44,
	  "pin 'sha256:00' is not sha256: and 64 hex digits" },
	{ "appliances:\n  - {name: a, url: https://x, key: k, pin: [" PIN64 ", 0]}\n", 2, 118,
	  "pin '0' is not sha256: and 64 hex digits" },
	{ "appliances:\n  - {name: a, url: https://x, key: k,\n     pin: [" PIN64 ", " PIN64
	  ", " PIN64 ", " PIN64 ", " PIN64 "]}\n",
	  3, 304, "more than 4 in pin" },
	{ "appliances:\n  - {name: a, url: https://x, key: k, pin: {a: b}}\n", 2, 44,
	  "pin must be a list of sha256:HEX" },
	{ "appliances:\n  - {name: a, url: https://x, key: k, ca: c, ca: d}\n", 2, 50,
	  "ca given twice" },
	{ "appliances:\n  - {name: a, url: https://x, key: k, pin: " PIN64 ", pin: " PIN64 "}\n", 2,
	  0, "pin given twice" },
	{ "appliances:\n  - {name: a, url: https://x, key: k, pin: []}\n", 2, 44, "pin is empty" },
	{ "appliances:\n  - {name: a, ledger: l, key: k, interval: soon}\n", 2, 0, "interval: " },
	{ "appliances:\n  - {name: a, ledger: l, key: k, interval: 500ms}\n", 2, 0,
	  "interval must be from 1s to 24h" },
	{ "appliances:\n  - {name: a, ledger: l, key: k, interval: 25h}\n", 2, 0,
	  "interval must be from 1s to 24h" },
	{ "appliances:\n  - {name: a, ledger: l, key: k, interval: 1m, interval: 2m}\n", 2, 0,
	  "interval given twice" },
};

/* podcap-monitor's pull interval: a duration per entry, 0 when the entry gives none. */
static void
test_load_interval(void **state)
{
	struct pc_fleet fl;
	struct pc_error err;

	(void)state;
	write_fleet("appliances:\n"
		    "  - {name: a, ledger: l, key: k, interval: 5m}\n"
		    "  - {name: b, ledger: l, key: k, interval: 1s}\n"
		    "  - {name: c, ledger: l, key: k}\n");
	assert_int_equal(pc_fleet_load(file, &fl, &err), 0);
	assert_int_equal(fl.n, 3);
	assert_int_equal(fl.a[0].interval_ns, 300ull * 1000000000ull);
	assert_int_equal(fl.a[1].interval_ns, 1000000000ull);
	assert_int_equal(fl.a[2].interval_ns, 0);
	pc_fleet_free(&fl);
}

static void
test_refused(void **state)
{
	struct pc_fleet fl;
	struct pc_error err;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		write_fleet(bad[i].text);
		assert_int_equal(pc_fleet_load(file, &fl, &err), -1);
		if (strstr(err.msg, bad[i].msg) == NULL || err.mark.line != bad[i].line ||
		    (bad[i].col != 0 && err.mark.col != bad[i].col))
			fail_msg("case %zu: got %u:%u: %s", i, err.mark.line, err.mark.col,
				 err.msg);
		assert_string_equal(err.file, file);
		assert_int_equal(fl.n, 0);
	}
	assert_int_equal(pc_fleet_load("/nonexistent/fleet.yaml", &fl, &err), -1);
	assert_non_null(strstr(err.msg, "No such file"));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_load),     cmocka_unit_test(test_load_trust),
		cmocka_unit_test(test_load_tls), cmocka_unit_test(test_load_interval),
		cmocka_unit_test(test_refused),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
