/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The randomized assignment (src/podmap/assign.h): the stream is the
 * documented ChaCha20 keystream, the shuffle and the assignment of fixed
 * seeds are the golden ones (tests/audit/assign_reference.py recomputes
 * them independently), the shuffle is uniform over many seeds (a fixed
 * set of seeds and a generous threshold: the test cannot flake), the
 * constraints hold, bad input files get positioned errors, and the maps
 * written load back with every id the string it was.
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

#include "podmap/assign.h"
#include "base/bytes.h"
#include "podmap/config.h"
#include "base/hex.h"

static const char seed_hex[] = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f";

static void
seed_of(uint8_t seed[32])
{
	assert_true(pc_unhex(seed_hex, 64, seed, 32));
}

/* The i-th seed of the statistical tests: BLAKE2b-256 of i, 8 bytes big-endian. */
static void
nth_seed(uint64_t i, uint8_t seed[32])
{
	uint8_t b[8];

	pc_store_be64(b, i);
	crypto_generichash(seed, 32, b, sizeof(b), NULL, 0);
}

static void
stream_is_chacha20(void **state)
{
	static const uint8_t nonce[12] = { 'L', 'i', 'b', 's', 'o', 'd',
					   'i', 'u', 'm', 'D', 'R', 'G' };
	uint8_t seed[32], a[8192], b[8192], c[100];

	(void)state;
	seed_of(seed);
	randombytes_buf_deterministic(a, sizeof(a), seed);
	crypto_stream_chacha20_ietf(b, sizeof(b), nonce, seed);
	assert_memory_equal(a, b, sizeof(a));
	/* a shorter draw is a prefix of a longer one */
	randombytes_buf_deterministic(c, sizeof(c), seed);
	assert_memory_equal(a, c, sizeof(c));
}

static void
golden_shuffles(void **state)
{
	static const uint32_t want10[10] = { 5, 8, 1, 4, 7, 2, 3, 9, 0, 6 };
	uint8_t seed[32];
	uint32_t perm[10], one[1];

	(void)state;
	seed_of(seed);
	pc_assign_shuffle(seed, perm, 10);
	assert_memory_equal(perm, want10, sizeof(want10));
	pc_assign_shuffle(seed, one, 1);
	assert_int_equal(one[0], 0);
}

/* Chi-square of observed counts against equal expectations. */
static double
chi2(const uint64_t *count, size_t k, double expect)
{
	double x = 0;

	for (size_t i = 0; i < k; i++)
		x += ((double)count[i] - expect) * ((double)count[i] - expect) / expect;
	return x;
}

static void
shuffle_is_uniform(void **state)
{
	/* all 24 orders of 4 pods, over 24000 fixed seeds */
	uint64_t count[24] = { 0 };
	uint8_t seed[32];
	uint32_t perm[4];

	(void)state;
	for (uint64_t s = 0; s < 24000; s++) {
		nth_seed(s, seed);
		pc_assign_shuffle(seed, perm, 4);
		/* the permutation's rank: a mixed-radix number */
		unsigned rank = 0, used = 0;
		for (int i = 0; i < 4; i++) {
			unsigned smaller = 0;
			for (uint32_t j = 0; j < perm[i]; j++)
				smaller += !(used & (1u << j));
			used |= 1u << perm[i];
			rank = rank * (unsigned)(4 - i) + smaller;
		}
		count[rank]++;
	}
	double x = chi2(count, 24, 1000.0);
	print_message("chi-square over 24 orders, 23 degrees of freedom: %.2f\n", x);
	/* the 0.999999 quantile of chi-square(23) is about 66: a broken shuffle is far above */
	assert_true(x < 80.0);
	for (int i = 0; i < 24; i++)
		assert_true(count[i] > 0);
}

static void
uplinks_are_uniform(void **state)
{
	/* each pod's uplink, 10 pods on 4 uplinks, 8000 fixed seeds */
	struct pc_assign_pod pods[10];
	struct pc_assign_rules none = { 0 };
	uint64_t count[10][4] = { { 0 } };
	uint32_t up[10];
	uint8_t seed[32];

	(void)state;
	memset(pods, 0, sizeof(pods));
	for (int i = 0; i < 10; i++)
		snprintf(pods[i].id, sizeof(pods[i].id), "pod-%02d", i);
	for (uint64_t s = 0; s < 8000; s++) {
		nth_seed(s, seed);
		assert_int_equal(pc_assign(seed, pods, 10, 4, &none, up, NULL), 0);
		for (int i = 0; i < 10; i++)
			count[i][up[i]]++;
	}
	for (int i = 0; i < 10; i++) {
		double x = chi2(count[i], 4, 2000.0);
		/* chi-square(3): 0.999999 quantile about 31 */
		assert_true(x < 40.0);
	}
}

static struct pc_assign_pod *
cells(size_t n, unsigned per_cell)
{
	struct pc_assign_pod *p = calloc(n, sizeof(*p));

	assert_non_null(p);
	for (size_t i = 0; i < n; i++) {
		snprintf(p[i].id, sizeof(p[i].id), "pod-%03zu", i);
		snprintf(p[i].cell, sizeof(p[i].cell), "cell-%zu", i / per_cell);
	}
	return p;
}

static void
constraints_hold(void **state)
{
	/* 24 pods in cells of 3, 8 uplinks of at most 3: every seed places them apart */
	struct pc_assign_rules rules = { .max_per_uplink = 3, .separate_cells = true };
	struct pc_assign_pod *p = cells(24, 3);
	uint8_t seed[32];
	uint32_t up[24];
	struct pc_error err;

	(void)state;
	for (uint64_t s = 0; s < 500; s++) {
		nth_seed(s, seed);
		assert_int_equal(pc_assign(seed, p, 24, 8, &rules, up, &err), 0);
		unsigned per[8] = { 0 };
		for (int i = 0; i < 24; i++) {
			per[up[i]]++;
			for (int j = 0; j < i; j++)
				assert_false(up[i] == up[j] && strcmp(p[i].cell, p[j].cell) == 0);
		}
		for (int u = 0; u < 8; u++)
			assert_true(per[u] <= 3);
	}
	/* more pods than room */
	rules.separate_cells = false;
	assert_int_equal(pc_assign(seed, p, 24, 7, &rules, up, &err), -1);
	assert_string_equal(err.msg,
			    "no assignment in 1000 attempts: the last left pod pod-015 "
			    "(cell cell-5) on no uplink, each one holds 3 pods");
	/* a cell larger than the uplinks */
	struct pc_assign_rules apart = { .separate_cells = true };
	free(p);
	p = cells(6, 6);
	assert_int_equal(pc_assign(seed, p, 6, 5, &apart, up, &err), -1);
	assert_non_null(strstr(err.msg,
			       "(cell cell-0) on no uplink, each one holds a pod of its "
			       "cell"));
	free(p);
	assert_int_equal(pc_assign(seed, NULL, 0, 5, &apart, up, &err), -1);
	assert_string_equal(err.msg, "no pods to assign");
}

static const char pods_text[] = "# pod cell prefixes\n"
				"pod-00 cell-a 10.0.0.0/26\n"
				"pod-01 cell-a 10.0.0.64/26\n"
				"pod-02 cell-b 10.0.0.128/26,fd00:0:0:2::/64\n"
				"pod-03 cell-b 10.0.0.192/26\n"
				"pod-04 cell-c 10.0.1.0/26\n"
				"pod-05 cell-c 10.0.1.64/26\n";
static const char uplinks_text[] = "rack2 up0 0000:3b:00.0 0000:3b:00.1\n"
				   "rack1 up1 0000:3c:00.0 0000:3c:00.1\n"
				   "rack1 up0 0000:3b:00.0 0000:3b:00.1   # first\n";

static void
golden_assignment(void **state)
{
	struct pc_assign_rules rules = { .max_per_uplink = 2, .separate_cells = true };
	struct pc_assign_uplink *ups;
	struct pc_assign_pod *pods;
	uint8_t seed[32];
	uint32_t up[6];

	(void)state;
	seed_of(seed);
	assert_int_equal(pc_assign_parse_pods("pods", pods_text, &pods, NULL), 6);
	assert_int_equal(pc_assign_parse_uplinks("uplinks", uplinks_text, &ups, NULL), 3);
	/* sorted: rack1 up0, rack1 up1, rack2 up0 */
	assert_string_equal(ups[0].name, "up0");
	assert_string_equal(ups[0].appliance, "rack1");
	assert_string_equal(ups[2].appliance, "rack2");
	assert_string_equal(pods[2].prefixes, "10.0.0.128/26,fd00:0:0:2::/64");
	assert_int_equal(pc_assign(seed, pods, 6, 3, &rules, up, NULL), 0);
	static const uint32_t want[6] = { 2, 0, 2, 1, 1, 0 };
	assert_memory_equal(up, want, sizeof(want));
	free(pods);
	free(ups);
}

static void
parse_errors(void **state)
{
	struct pc_assign_pod *pods;
	struct pc_assign_uplink *ups;
	struct pc_error err;

	(void)state;
	assert_int_equal(pc_assign_parse_pods("p.txt", "pod-0 a -\npod-1 a\n", &pods, &err), -1);
	assert_string_equal(err.file, "p.txt");
	assert_int_equal(err.mark.line, 2);
	assert_string_equal(err.msg, "expected '<pod id> <cell or -> <prefixes or ->'");
	assert_int_equal(pc_assign_parse_pods("p.txt", "pod-0 a -\n\n  pod/1 - -\n", &pods, &err),
			 -1);
	assert_int_equal(err.mark.line, 3);
	assert_int_equal(err.mark.col, 3);
	assert_string_equal(err.msg, "'pod/1' is not an id (" PC_ID_RULE ")");
	assert_int_equal(pc_assign_parse_pods("p.txt", "b - -\na - -\nb x -\n", &pods, &err), -1);
	assert_int_equal(err.mark.line, 3);
	assert_string_equal(err.msg, "pod 'b' is listed twice");
	assert_int_equal(pc_assign_parse_pods("p.txt", "# nothing\n", &pods, &err), -1);
	assert_string_equal(err.msg, "no pods");
	assert_int_equal(pc_assign_parse_uplinks("u.txt", "r1 up0 a b\nr1 up0 c d\n", &ups, &err),
			 -1);
	assert_string_equal(err.msg, "uplink 'r1 up0' is listed twice");
	assert_int_equal(pc_assign_parse_uplinks("u.txt", "r1 up0 a\n", &ups, &err), -1);
	assert_string_equal(err.msg,
			    "expected '<appliance id> <uplink name> <pod_port> <fabric_port>'");
	assert_int_equal(pc_assign_parse_uplinks("u.txt", "r1 u:p a b\n", &ups, &err), -1);
	assert_int_equal(err.mark.col, 4);
}

/* The ordinary ids of the golden assignment are written as they are: these bytes are the map. */
static void
golden_map(void **state)
{
	struct pc_assign_rules rules = { .max_per_uplink = 2, .separate_cells = true };
	struct pc_assign_uplink *ups;
	struct pc_assign_pod *pods;
	uint8_t seed[32];
	uint32_t up[6];

	(void)state;
	seed_of(seed);
	assert_int_equal(pc_assign_parse_pods("pods", pods_text, &pods, NULL), 6);
	assert_int_equal(pc_assign_parse_uplinks("uplinks", uplinks_text, &ups, NULL), 3);
	assert_int_equal(pc_assign(seed, pods, 6, 3, &rules, up, NULL), 0);
	char *text =
	    pc_assign_map_text("appliance:\n  id: @APPLIANCE@\n", "rack1", ups, 3, pods, 6, up);
	assert_non_null(text);
	assert_string_equal(
	    text,
	    "appliance:\n  id: rack1\n"
	    "uplinks:\n"
	    "  - name: up0\n    pod_port: 0000:3b:00.0\n    fabric_port: 0000:3b:00.1\n"
	    "  - name: up1\n    pod_port: 0000:3c:00.0\n    fabric_port: 0000:3c:00.1\n"
	    "pods:\n"
	    "  - id: pod-01\n    uplink: up0\n    prefixes: [10.0.0.64/26]\n"
	    "  - id: pod-03\n    uplink: up1\n    prefixes: [10.0.0.192/26]\n"
	    "  - id: pod-04\n    uplink: up1\n    prefixes: [10.0.1.0/26]\n"
	    "  - id: pod-05\n    uplink: up0\n    prefixes: [10.0.1.64/26]\n");
	free(text);
	free(pods);
	free(ups);
}

/*
 * Ids the id rule allows that YAML would read as something else (null, a
 * boolean, a number, a timestamp, a sequence entry) are quoted; the map
 * loads, and each id is the one written.
 */
static void
odd_ids_load_back(void **state)
{
	static const char *const ids[] = {
		"null",  "NULL", "-",     "-x",    "-1",    "true", "False",      "yes",
		"No",    "on",   "OFF",   "y",     "N",     "1e3",  "0x10",       "017",
		"1_000", "1.5",  ".5",    ".inf",  "-.inf", ".nan", "2024-01-01", ".",
		"_",     "web",  "pod-0", "nulls", "Pod_9",
	};
	struct pc_assign_uplink ups[2] = { { "r1", "on", "net_null0", "net_null1", 1 },
					   { "r1", "up0", "net_null2", "net_null3", 2 } };
	struct pc_assign_pod pods[sizeof(ids) / sizeof(ids[0])];
	uint32_t up[sizeof(ids) / sizeof(ids[0])];
	const size_t N = sizeof(ids) / sizeof(ids[0]);
	struct pc_config cfg;
	struct pc_error err;

	(void)state;
	memset(pods, 0, sizeof(pods));
	for (size_t i = 0; i < N; i++) {
		snprintf(pods[i].id, sizeof(pods[i].id), "%s", ids[i]);
		snprintf(pods[i].prefixes, sizeof(pods[i].prefixes), "10.0.%zu.0/24", i);
		up[i] = (uint32_t)(i % 2);
	}
	char *text = pc_assign_map_text("appliance:\n  id: r1\n", "r1", ups, 2, pods, N, up);
	assert_non_null(text);
	assert_non_null(strstr(text, "  - id: \"null\"\n    uplink: \"on\"\n"));
	assert_non_null(strstr(text, "  - name: \"on\"\n"));
	assert_non_null(strstr(text, "  - id: \"-x\"\n    uplink: up0\n"));
	assert_non_null(strstr(text, "  - id: web\n"));
	assert_non_null(strstr(text, "  - id: nulls\n"));
	if (pc_config_load_buffer("odd.yaml", text, strlen(text), &cfg, &err) != 0)
		fail_msg("%s:%u:%u: %s\n%s", err.file, err.mark.line, err.mark.col, err.msg, text);
	assert_int_equal(cfg.npods, N);
	assert_string_equal(cfg.uplinks[0].name, "on");
	for (size_t i = 0; i < N; i++) {
		int k = pc_config_find_pod(&cfg, ids[i]);

		assert_true(k >= 0);
		assert_int_equal(cfg.pods[k].uplink, i % 2);
	}
	pc_config_free(&cfg);
	free(text);
}

/* A template whose last line has no newline gets one before uplinks:. */
static void
template_without_newline(void **state)
{
	struct pc_assign_uplink ups[1] = { { "r1", "up0", "net_null0", "net_null1", 1 } };
	struct pc_assign_pod pods[1] = { { "pod-0", "", "10.0.0.0/24", 1 } };
	uint32_t up[1] = { 0 };

	(void)state;
	char *a = pc_assign_map_text("appliance:\n  id: @APPLIANCE@", "r1", ups, 1, pods, 1, up);
	char *b = pc_assign_map_text("appliance:\n  id: @APPLIANCE@\n", "r1", ups, 1, pods, 1, up);
	assert_non_null(a);
	assert_non_null(b);
	assert_string_equal(a, b);
	free(a);
	free(b);
}

static void
commitment(void **state)
{
	uint8_t seed[32], c[32];
	char hex[65];

	(void)state;
	seed_of(seed);
	pc_assign_commitment(seed, c);
	pc_hex(c, 32, hex);
	/* BLAKE2b-256 of the 32 seed bytes, as b2sum -l 256 of them gives */
	assert_string_equal(hex,
			    "cb2f5160fc1f7e05a55ef49d340b48da2e5a78099d53393351cd579dd42503d6");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(stream_is_chacha20), cmocka_unit_test(golden_shuffles),
		cmocka_unit_test(shuffle_is_uniform), cmocka_unit_test(uplinks_are_uniform),
		cmocka_unit_test(constraints_hold),   cmocka_unit_test(golden_assignment),
		cmocka_unit_test(parse_errors),       cmocka_unit_test(golden_map),
		cmocka_unit_test(odd_ids_load_back),  cmocka_unit_test(template_without_newline),
		cmocka_unit_test(commitment),
	};

	if (sodium_init() < 0)
		return 1;
	return cmocka_run_group_tests(tests, NULL, NULL);
}
