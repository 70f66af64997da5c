/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Pod map loader tests.
 *
 * tests/config/bad/ holds one mistake per file; its first line says the
 * exact error ("# expect: line:col: message"), so adding a file adds a
 * case. tests/config/good/ holds maps that must load. The canonical form
 * is checked byte for byte against docs/config.md, and its digest against
 * one computed by coreutils' `b2sum -l 256`.
 */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "podmap/config.h"
#include "shape/classify.h"

#include "testutil.h"

#include "../config/key_edits.h"

#define BAD_DIR		PC_SOURCE_ROOT "/tests/config/bad"
#define GOOD_DIR	PC_SOURCE_ROOT "/tests/config/good"
#define EXAMPLE		PC_SOURCE_ROOT "/config/example-72gpu.yaml"
#define EXPECT		"# expect: "

struct names {
	char **v;
	size_t n;
};

static int
cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The *.yaml files of a directory, sorted, as full paths. */
static void
list_yaml(const char *dir, struct names *out)
{
	struct dirent *de;
	DIR *d = opendir(dir);
	size_t len;

	assert_non_null(d);
	out->v = NULL;
	out->n = 0;
	while ((de = readdir(d)) != NULL) {
		len = strlen(de->d_name);
		if (len < 6 || strcmp(de->d_name + len - 5, ".yaml") != 0)
			continue;
		out->v = realloc(out->v, (out->n + 1) * sizeof(*out->v));
		assert_non_null(out->v);
		assert_true(asprintf(&out->v[out->n], "%s/%s", dir,
				     de->d_name) > 0);
		out->n++;
	}
	closedir(d);
	qsort(out->v, out->n, sizeof(*out->v), cmp_str);
}

static void
free_names(struct names *n)
{
	size_t i;

	for (i = 0; i < n->n; i++)
		free(n->v[i]);
	free(n->v);
}

/* What pc_error_print writes, as a string the caller frees. */
static char *
printed(const struct pc_error *err)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	assert_non_null(f);
	pc_error_print(err, f);
	fclose(f);
	return text;
}

static bool
is_zero(const void *p, size_t n)
{
	const unsigned char *b = p;
	size_t i;

	for (i = 0; i < n; i++)
		if (b[i] != 0)
			return false;
	return true;
}

/*
 * Returns NULL if the file fails with exactly the error its first line
 * expects, else a description of what went wrong (to be freed).
 */
static char *
check_bad_file(const char *path)
{
	char expect[1024], *text, *got, *why = NULL;
	struct pc_config cfg;
	struct pc_error err;
	size_t plen = strlen(path);
	FILE *f = fopen(path, "r");

	if (f == NULL || fgets(expect, sizeof(expect), f) == NULL ||
	    strncmp(expect, EXPECT, strlen(EXPECT)) != 0) {
		if (f != NULL)
			fclose(f);
		assert_true(asprintf(&why, "%s: no '# expect:' first line",
				     path) > 0);
		return why;
	}
	fclose(f);
	expect[strcspn(expect, "\n")] = '\0';
	memset(&cfg, 0xa5, sizeof(cfg));
	if (pc_config_load(path, &cfg, &err) == 0) {
		pc_config_free(&cfg);
		assert_true(asprintf(&why, "%s: loaded, expected '%s'", path,
				     expect + strlen(EXPECT)) > 0);
		return why;
	}
	if (!is_zero(&cfg, sizeof(cfg))) {
		assert_true(asprintf(&why, "%s: cfg not zeroed on error",
				     path) > 0);
		return why;
	}
	text = printed(&err);
	text[strcspn(text, "\n")] = '\0';
	/* "path:7:15: msg" -> "7:15: msg"; "path: msg" -> "msg" */
	got = text;
	if (strncmp(got, path, plen) == 0 && got[plen] == ':') {
		got += plen + 1;
		if (*got == ' ')
			got++;
	}
	if (strcmp(got, expect + strlen(EXPECT)) != 0)
		assert_true(asprintf(&why, "%s:\n  expected: %s\n  got:      %s",
				     path, expect + strlen(EXPECT), text) > 0);
	free(text);
	return why;
}

static void
test_bad_corpus(void **state)
{
	struct names files;
	unsigned failures = 0;
	size_t i;
	char *why;

	(void)state;
	list_yaml(BAD_DIR, &files);
	assert_true(files.n >= 25);
	for (i = 0; i < files.n; i++) {
		why = check_bad_file(files.v[i]);
		if (why != NULL) {
			print_error("%s\n", why);
			free(why);
			failures++;
		}
	}
	free_names(&files);
	assert_int_equal(failures, 0);
}

static void
load_ok(const char *path, struct pc_config *cfg)
{
	struct pc_error err;

	if (pc_config_load(path, cfg, &err) != 0) {
		char *text = printed(&err);

		fail_msg("%s", text);
	}
}

static char *
canonical(const struct pc_config *cfg)
{
	size_t n = pc_config_canonical(cfg, NULL, 0);
	char *buf = malloc(n + 1);

	assert_non_null(buf);
	assert_int_equal(pc_config_canonical(cfg, buf, n + 1), n);
	assert_int_equal(strlen(buf), n);
	return buf;
}

static void
test_good_corpus(void **state)
{
	struct pc_config cfg;
	struct names files;
	size_t i;
	char *text;

	(void)state;
	list_yaml(GOOD_DIR, &files);
	assert_true(files.n >= 5);
	for (i = 0; i < files.n; i++) {
		load_ok(files.v[i], &cfg);
		assert_string_equal(cfg.path, files.v[i]);
		assert_true(cfg.nuplinks > 0 && cfg.uplinks != NULL);
		assert_true(cfg.npods > 0 && cfg.pods != NULL);
		text = canonical(&cfg);
		assert_memory_equal(text, "podcap-podmap-v1\n", 17);
		assert_int_equal(text[strlen(text) - 1], '\n');
		free(text);
		pc_config_free(&cfg);
		assert_null(cfg.pods);
		assert_int_equal(cfg.npods, 0);
	}
	free_names(&files);
}

static const struct pc_pod *
pod(const struct pc_config *cfg, const char *id)
{
	int i = pc_config_find_pod(cfg, id);

	if (i < 0)
		fail_msg("no pod '%s'", id);
	return &cfg->pods[i];
}

static void
test_defaults(void **state)
{
	struct pc_config cfg;
	const struct pc_pod *p;

	(void)state;
	load_ok(GOOD_DIR "/minimal.yaml", &cfg);
	assert_string_equal(cfg.appliance_id, "lab-1");
	assert_string_equal(cfg.signing_key, "");
	assert_string_equal(cfg.ledger, "");
	assert_string_equal(cfg.listen, "127.0.0.1:9180");
	assert_int_equal(cfg.window_ns, 60000000000ULL);
	assert_int_equal(cfg.max_frame, 1522);
	assert_int_equal(cfg.defaults.cap_bps, 1000000000ULL);
	assert_int_equal(cfg.defaults.burst_bytes, 7500000000ULL);
	assert_int_equal(cfg.defaults.mode, PC_MODE_SHAPE);
	assert_int_equal(cfg.defaults.queue_delay_ns, 50000000ULL);
	assert_string_equal(cfg.dpdk.lcores, "0-1");
	assert_int_equal(cfg.dpdk.memory_bytes, 1ULL << 30);
	assert_string_equal(cfg.dpdk.file_prefix, "podcap-lab-1");
	assert_int_equal(cfg.dpdk.nargs, 0);
	p = pod(&cfg, "pod-a");
	assert_memory_equal(&p->limits, &cfg.defaults, sizeof(p->limits));
	assert_int_equal(p->gpus, 0);
	assert_int_equal(p->nprefixes, 0);
	assert_int_equal(p->uplink, 0);
	assert_int_equal(cfg.uplinks[0].npods, 1);
	/* the 1-based position of "- id: pod-a" */
	assert_int_equal(p->mark.line, 9);
	assert_int_equal(p->mark.col, 5);
	pc_config_free(&cfg);
}

static void
test_full(void **state)
{
	static const uint8_t v6[16] = { 0xfd, 0, 0, 0, 0, 0, 0, 1 };
	struct pc_config cfg;
	const struct pc_pod *a, *b, *c;
	int up0, up1;

	(void)state;
	load_ok(GOOD_DIR "/full.yaml", &cfg);
	assert_string_equal(cfg.appliance_id, "full.test_1");
	assert_string_equal(cfg.signing_key, "/etc/podcap/appliance.key");
	assert_string_equal(cfg.ledger, "/var/lib/podcap/ledger");
	assert_string_equal(cfg.listen, "[::1]:9181");
	assert_int_equal(cfg.window_ns, 1500000000ULL);
	assert_int_equal(cfg.max_frame, 9216);
	assert_string_equal(cfg.dpdk.lcores, "0,2-3");
	assert_int_equal(cfg.dpdk.memory_bytes, 512ULL << 20);
	assert_string_equal(cfg.dpdk.file_prefix, "podcap-full");
	assert_int_equal(cfg.dpdk.nargs, 2);
	assert_string_equal(cfg.dpdk.args[0], "--log-level=pmd.net.af_packet:8");
	assert_string_equal(cfg.dpdk.args[1], "--no-telemetry");

	/* declared order is kept: up1 first */
	up1 = pc_config_find_uplink(&cfg, "up1");
	up0 = pc_config_find_uplink(&cfg, "up0");
	assert_int_equal(up1, 0);
	assert_int_equal(up0, 1);
	assert_int_equal(pc_config_find_uplink(&cfg, "up2"), -1);
	assert_int_equal(pc_config_find_pod(&cfg, "pod-z"), -1);
	assert_string_equal(cfg.uplinks[up0].pod_port, "net_af_packet0,iface=vpod0");
	assert_string_equal(cfg.uplinks[up1].pod_port, "3b:00.0");
	assert_int_equal(cfg.uplinks[up0].npods, 2);
	assert_int_equal(cfg.uplinks[up1].npods, 1);

	b = pod(&cfg, "pod-b");
	assert_ptr_equal(b, &cfg.pods[0]);
	assert_int_equal(b->uplink, up0);
	assert_int_equal(b->gpus, 8);
	assert_int_equal(b->limits.cap_bps, 10001);
	/* 10 s at 10001 bit/s is 12501.25 bytes: rounded down */
	assert_int_equal(b->limits.burst_bytes, 12501);
	assert_int_equal(b->limits.mode, PC_MODE_SHAPE);
	assert_int_equal(b->limits.queue_delay_ns, 1000000);
	assert_int_equal(b->nprefixes, 2);
	assert_int_equal(b->prefixes[0].family, 4);
	assert_int_equal(b->prefixes[0].len, 26);
	assert_memory_equal(b->prefixes[0].addr, "\x0a\x00\x00\x00", 4);
	assert_int_equal(b->prefixes[1].family, 6);
	assert_int_equal(b->prefixes[1].len, 64);
	assert_memory_equal(b->prefixes[1].addr, v6, 16);
	/* at the opening quote of "fd00:0:0:1::/64" */
	assert_int_equal(b->prefixes[1].mark.line, 30);
	assert_int_equal(b->prefixes[1].mark.col, 29);

	a = pod(&cfg, "pod-a");
	assert_int_equal(a->limits.cap_bps, 2500000000ULL);
	assert_int_equal(a->limits.burst_bytes, 7500000000ULL);
	assert_int_equal(a->limits.mode, PC_MODE_POLICE);
	assert_int_equal(a->limits.queue_delay_ns, 10000000);
	assert_int_equal(a->nprefixes, 2);
	assert_memory_equal(a->prefixes[1].addr, "\xc0\xa8\x00\x00", 4);

	/* a size burst in defaults stays a size at any cap */
	c = pod(&cfg, "pod-c");
	assert_int_equal(c->uplink, up1);
	assert_int_equal(c->limits.cap_bps, 400000000000ULL);
	assert_int_equal(c->limits.burst_bytes, 7500000000ULL);
	assert_int_equal(c->nprefixes, 0);
	pc_config_free(&cfg);
}

static void
test_scalar_styles(void **state)
{
	struct pc_config cfg;
	const struct pc_pod *p;

	(void)state;
	load_ok(GOOD_DIR "/scalar-styles.yaml", &cfg);
	assert_string_equal(cfg.appliance_id, "123");
	assert_string_equal(cfg.listen, "localhost:9180");
	assert_string_equal(cfg.uplinks[0].name, "7");
	assert_string_equal(cfg.uplinks[0].pod_port, "net_null0");
	p = pod(&cfg, "0x1f");
	assert_int_equal(p->gpus, 72);
	assert_int_equal(p->limits.burst_bytes, 7500000000ULL);
	pc_config_free(&cfg);
}

static void
test_example_72gpu(void **state)
{
	static const char *const ids[] = { "pod-00", "pod-01", "pod-02", "pod-03" };
	uint8_t d[PC_DIGEST_LEN];
	char hex[2 * PC_DIGEST_LEN + 1];
	struct pc_config cfg;
	const struct pc_pod *p;
	unsigned i;

	(void)state;
	load_ok(EXAMPLE, &cfg);
	assert_int_equal(cfg.nuplinks, 2);
	assert_int_equal(cfg.npods, 4);
	assert_string_equal(cfg.uplinks[0].pod_port, "0000:3b:00.0");
	for (i = 0; i < 4; i++) {
		p = pod(&cfg, ids[i]);
		assert_int_equal(p->gpus, 72);
		assert_int_equal(p->uplink, i / 2);
		assert_int_equal(p->nprefixes, 2);
	}
	assert_int_equal(cfg.uplinks[0].npods, 2);
	assert_int_equal(cfg.uplinks[1].npods, 2);
	assert_int_equal(pod(&cfg, "pod-00")->limits.burst_bytes, 7500000000ULL);
	/* a duration burst follows the pod's own cap: 60 s at 2 Gbit/s */
	p = pod(&cfg, "pod-03");
	assert_int_equal(p->limits.cap_bps, 2000000000ULL);
	assert_int_equal(p->limits.burst_bytes, 15000000000ULL);
	/* docs/config.md quotes this digest */
	pc_config_digest(&cfg, d);
	pc_hex(d, sizeof(d), hex);
	assert_string_equal(hex, "5010667da43bf3a9a75f0e6714eca3af"
			    "f7e148c54aef20b8b1f911fac96b4106");
	pc_config_free(&cfg);
}

static void
digest_of(const char *path, uint8_t d[PC_DIGEST_LEN], char **text)
{
	struct pc_config cfg;

	load_ok(path, &cfg);
	pc_config_digest(&cfg, d);
	*text = canonical(&cfg);
	pc_config_free(&cfg);
}

static void
test_digest_invariance(void **state)
{
	uint8_t a[PC_DIGEST_LEN], b[PC_DIGEST_LEN], c[PC_DIGEST_LEN];
	char *ta, *tb, *tc;

	(void)state;
	digest_of(GOOD_DIR "/invariance-a.yaml", a, &ta);
	digest_of(GOOD_DIR "/invariance-b.yaml", b, &tb);
	digest_of(GOOD_DIR "/invariance-cap.yaml", c, &tc);
	assert_string_equal(ta, tb);
	assert_memory_equal(a, b, PC_DIGEST_LEN);
	assert_string_not_equal(ta, tc);
	assert_memory_not_equal(a, c, PC_DIGEST_LEN);
	free(ta);
	free(tb);
	free(tc);
}

/*
 * promise: the defaults' applies unless a pod declares its own; only
 * window appears in the canonical form, so a map that spells out the
 * default envelope has the digest of one that does not name it.
 */
static void
test_promise(void **state)
{
	static const char base[] = "appliance:\n  id: lab-1\nuplinks:\n  - name: up0\n"
				   "    pod_port: net_null0\n    fabric_port: net_null1\n"
				   "pods:\n  - id: pod-a\n    uplink: up0\n";
	uint8_t a[PC_DIGEST_LEN], b[PC_DIGEST_LEN];
	struct pc_config cfg;
	struct pc_error err;
	char text[512], *ta, *tb;

	(void)state;
	load_ok(GOOD_DIR "/promise.yaml", &cfg);
	assert_int_equal(cfg.defaults.promise, PC_PROMISE_WINDOW);
	assert_int_equal(pod(&cfg, "pod-a")->limits.promise, PC_PROMISE_WINDOW);
	assert_int_equal(pod(&cfg, "pod-b")->limits.promise, PC_PROMISE_ENVELOPE);
	ta = canonical(&cfg);
	assert_non_null(strstr(ta, "pod pod-a\n"));
	assert_non_null(
	    strstr(ta, "queue_delay_ns 50000000\npromise window\nprefix 10.0.0.0/24\n"));
	assert_null(strstr(strstr(ta, "pod pod-b"), "promise"));
	free(ta);
	pc_config_free(&cfg);

	assert_int_equal(pc_config_load_buffer("a.yaml", base, strlen(base), &cfg, &err), 0);
	pc_config_digest(&cfg, a);
	ta = canonical(&cfg);
	pc_config_free(&cfg);
	snprintf(text, sizeof(text), "%s    promise: envelope\n", base);
	assert_int_equal(pc_config_load_buffer("b.yaml", text, strlen(text), &cfg, &err), 0);
	pc_config_digest(&cfg, b);
	tb = canonical(&cfg);
	pc_config_free(&cfg);
	assert_string_equal(ta, tb);
	assert_memory_equal(a, b, PC_DIGEST_LEN);
	free(tb);
	snprintf(text, sizeof(text), "%s    promise: window\n", base);
	assert_int_equal(pc_config_load_buffer("c.yaml", text, strlen(text), &cfg, &err), 0);
	pc_config_digest(&cfg, b);
	tb = canonical(&cfg);
	pc_config_free(&cfg);
	assert_memory_not_equal(a, b, PC_DIGEST_LEN);
	assert_int_equal(strlen(tb), strlen(ta) + strlen("promise window\n"));
	free(ta);
	free(tb);
}

/* docs/config.md shows this text; b2sum -l 256 gives the digest */
static const char full_canonical[] =
	"podcap-podmap-v1\n"
	"appliance full.test_1\n"
	"window_ns 1500000000\n"
	"max_frame 9216\n"
	"uplink up0\n"
	"pod_port net_af_packet0,iface=vpod0\n"
	"fabric_port net_af_packet1,iface=vfab0\n"
	"uplink up1\n"
	"pod_port 0000:3b:00.0\n"
	"fabric_port 0000:3b:00.1\n"
	"pod pod-a\n"
	"gpus 0\n"
	"uplink up0\n"
	"cap_bps 2500000000\n"
	"burst_bytes 7500000000\n"
	"mode police\n"
	"queue_delay_ns 10000000\n"
	"prefix 10.0.0.64/26\n"
	"prefix 192.168.0.0/16\n"
	"pod pod-b\n"
	"gpus 8\n"
	"uplink up0\n"
	"cap_bps 10001\n"
	"burst_bytes 12501\n"
	"mode shape\n"
	"queue_delay_ns 1000000\n"
	"prefix 10.0.0.0/26\n"
	"prefix fd00:0:0:1::/64\n"
	"pod pod-c\n"
	"gpus 0\n"
	"uplink up1\n"
	"cap_bps 400000000000\n"
	"burst_bytes 7500000000\n"
	"mode police\n"
	"queue_delay_ns 10000000\n";

static const char full_digest[] =
	"b7bb51153d7747ebb851781d527113575011e01cad5b95dfd89244b33b881891";

static void
test_canonical_bytes(void **state)
{
	uint8_t d[PC_DIGEST_LEN];
	char hex[2 * PC_DIGEST_LEN + 1], small[11], *text;
	struct pc_config cfg;
	size_t n;

	(void)state;
	load_ok(GOOD_DIR "/full.yaml", &cfg);
	text = canonical(&cfg);
	assert_string_equal(text, full_canonical);
	pc_config_digest(&cfg, d);
	pc_hex(d, sizeof(d), hex);
	assert_string_equal(hex, full_digest);

	/* too small a buffer: truncated, NUL-terminated, same length returned */
	n = strlen(full_canonical);
	memset(small, 'x', sizeof(small));
	assert_int_equal(pc_config_canonical(&cfg, small, sizeof(small)), n);
	assert_string_equal(small, "podcap-pod");
	assert_int_equal(pc_config_canonical(&cfg, NULL, 0), n);
	free(text);
	pc_config_free(&cfg);
}

static void
test_error_print(void **state)
{
	const char *path = BAD_DIR "/duplicate-pod-id.yaml";
	struct pc_config cfg;
	struct pc_error err;
	char *text, *want;

	(void)state;
	assert_int_equal(pc_config_load(path, &cfg, &err), -1);
	assert_int_equal(err.mark.line, 15);
	assert_int_equal(err.mark.col, 9);
	text = printed(&err);
	assert_true(asprintf(&want, "%s:15:9: duplicate pod id 'pod-00' "
			     "(first declared at 9:9)\n"
			     "  - id: pod-00\n"
			     "        ^\n", path) > 0);
	assert_string_equal(text, want);
	free(text);
	free(want);
}

static void
test_error_print_alignment(void **state)
{
	struct pc_error err;
	char *text;

	(void)state;
	memset(&err, 0, sizeof(err));
	snprintf(err.file, sizeof(err.file), "map.yaml");
	snprintf(err.msg, sizeof(err.msg), "bad");
	/* a tab stays a tab; a two-byte character is one column */
	snprintf(err.line_text, sizeof(err.line_text), "\tid: caf\xc3\xa9 x");
	err.mark.line = 3;
	err.mark.col = 11;
	text = printed(&err);
	assert_string_equal(text, "map.yaml:3:11: bad\n"
			    "\tid: caf\xc3\xa9 x\n"
			    "\t         ^\n");
	free(text);

	/* no position: no source line either */
	err.mark.line = 0;
	err.mark.col = 0;
	text = printed(&err);
	assert_string_equal(text, "map.yaml: bad\n");
	free(text);
}

static const char small_map[] =
	"appliance: {id: buf}\n"
	"uplinks: [{name: up0, pod_port: net_null0, fabric_port: net_null1}]\n"
	"pods: [{id: p0, uplink: up0}]\n";

/*
 * uplinks[].workers: 1 unless set; in the canonical form only when it is
 * not 1, so that the maps written before the key keep their digests.
 */
/*
 * pods[].vlan: one tag or [outer, inner], kept as shape/classify.h's stack
 * word; in the canonical form after the limits, before the prefixes, and
 * only for the pods that have one.
 */
static void
test_vlan(void **state)
{
	struct pc_config cfg;
	char *text;

	(void)state;
	load_ok(GOOD_DIR "/vlan.yaml", &cfg);
	assert_int_equal(pod(&cfg, "pod-a")->vlan, pc_vlan_one(100));
	assert_int_equal(pod(&cfg, "pod-b")->vlan, pc_vlan_two(200, 100));
	assert_int_equal(pod(&cfg, "pod-c")->vlan, PC_VLAN_NONE);
	text = canonical(&cfg);
	assert_non_null(strstr(text, "queue_delay_ns 50000000\nvlan 100\nprefix 10.0.0.0/24\n"));
	assert_non_null(
	    strstr(text, "queue_delay_ns 50000000\nvlan 200 100\nprefix 10.0.1.0/24\n"));
	assert_null(strstr(strstr(text, "pod pod-c"), "vlan"));
	free(text);
	pc_config_free(&cfg);
}

static void
test_uplink_workers(void **state)
{
	static const char *const maps[] = {
		"appliance: {id: w}\nuplinks:\n  - {name: up0, pod_port: 0000:3b:00.0, "
		"fabric_port: 0000:3b:00.1}\npods:\n  - {id: p0, uplink: up0, mode: police}\n",
		"appliance: {id: w}\nuplinks:\n  - {name: up0, pod_port: 0000:3b:00.0, "
		"fabric_port: 0000:3b:00.1, workers: 1}\npods:\n  - {id: p0, uplink: up0, mode: "
		"police}\n",
		"appliance: {id: w}\nuplinks:\n  - {name: up0, pod_port: 0000:3b:00.0, "
		"fabric_port: 0000:3b:00.1, workers: 2}\npods:\n  - {id: p0, uplink: up0, mode: "
		"police}\n",
	};
	uint8_t digest[3][PC_DIGEST_LEN];
	char *text[3];
	struct pc_config cfg;
	struct pc_error err;

	(void)state;
	for (unsigned i = 0; i < 3; i++) {
		assert_int_equal(
		    pc_config_load_buffer("inline", maps[i], strlen(maps[i]), &cfg, &err), 0);
		assert_int_equal(cfg.uplinks[0].workers, i == 2 ? 2 : 1);
		text[i] = canonical(&cfg);
		pc_config_digest(&cfg, digest[i]);
		pc_config_free(&cfg);
	}
	assert_string_equal(text[0], text[1]);
	assert_memory_equal(digest[0], digest[1], PC_DIGEST_LEN);
	assert_null(strstr(text[0], "workers"));
	assert_non_null(strstr(text[2], "fabric_port 0000:3b:00.1\nworkers 2\npod p0\n"));
	assert_memory_not_equal(digest[0], digest[2], PC_DIGEST_LEN);
	for (unsigned i = 0; i < 3; i++)
		free(text[i]);
}

static void
test_load_buffer(void **state)
{
	struct pc_config cfg;
	struct pc_error err;
	char *text;

	(void)state;
	assert_int_equal(pc_config_load_buffer("inline", small_map,
					       strlen(small_map), &cfg, &err), 0);
	assert_string_equal(cfg.path, "inline");
	assert_string_equal(cfg.pods[0].id, "p0");
	pc_config_free(&cfg);
	pc_config_free(&cfg);

	/* only `len` bytes count: cut off before "pods" */
	assert_int_equal(pc_config_load_buffer("inline", small_map,
					       strstr(small_map, "pods") - small_map,
					       &cfg, &err), -1);
	text = printed(&err);
	assert_string_equal(text, "inline:1:1: missing key 'pods' at the top level\n"
			    "appliance: {id: buf}\n"
			    "^\n");
	free(text);
}

static void
test_missing_file(void **state)
{
	struct pc_config cfg;
	struct pc_error err;
	char *text;

	(void)state;
	assert_int_equal(pc_config_load("/nonexistent/podmap.yaml", &cfg, &err), -1);
	assert_int_equal(err.mark.line, 0);
	text = printed(&err);
	assert_string_equal(text, "/nonexistent/podmap.yaml: cannot open: "
			    "No such file or directory\n");
	free(text);
}

/* Errors of the file as a whole: its name and the reason, no position. */
static void
test_file_errors(void **state)
{
	char dir[PC_PATH_LEN], *big, *want, *text;
	struct pc_config cfg;
	struct pc_error err;
	FILE *f;

	(void)state;
	assert_int_equal(pc_test_tmpdir(dir, sizeof(dir), "config"), 0);
	assert_int_equal(pc_config_load(dir, &cfg, &err), -1);
	assert_true(is_zero(&cfg, sizeof(cfg)));
	assert_string_equal(err.file, dir);
	assert_int_equal(err.mark.line, 0);
	text = printed(&err);
	assert_true(asprintf(&want, "%s: cannot read: Is a directory\n", dir) > 0);
	assert_string_equal(text, want);
	free(text);
	free(want);

	/* one byte over 16 MiB, all of it a comment */
	assert_true(asprintf(&big, "%s/big.yaml", dir) > 0);
	f = fopen(big, "w");
	assert_non_null(f);
	for (size_t i = 0; i <= 16u << 20; i++)
		fputc('#', f);
	assert_int_equal(fclose(f), 0);
	assert_int_equal(pc_config_load(big, &cfg, &err), -1);
	text = printed(&err);
	assert_true(asprintf(&want, "%s: larger than 16 MiB\n", big) > 0);
	assert_string_equal(text, want);
	free(text);
	free(want);
	free(big);
	pc_test_rm_rf(dir);
}

/* As everywhere in src/, a caller may pass no struct pc_error. */
static void
test_null_error(void **state)
{
	const char *bad = "appliance: {id: buf}\n";
	struct pc_config cfg;

	(void)state;
	assert_int_equal(pc_config_load_buffer("inline", bad, strlen(bad), &cfg, NULL), -1);
	assert_true(is_zero(&cfg, sizeof(cfg)));
	assert_int_equal(pc_config_load("/nonexistent/podmap.yaml", &cfg, NULL), -1);
	assert_int_equal(pc_config_load(BAD_DIR "/prefix-overlap-pods.yaml", &cfg, NULL), -1);
	assert_int_equal(pc_config_load_buffer("inline", small_map, strlen(small_map), &cfg,
					       NULL), 0);
	assert_string_equal(cfg.pods[0].id, "p0");
	pc_config_free(&cfg);
}

/*
 * A map of `npods` pods with `nprefixes` /30s each on one uplink. With
 * `overlap`, the last pod's last prefix falls inside the first pod's first.
 */
static char *
generated_map(unsigned npods, unsigned nprefixes, bool overlap)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	unsigned i, k, n = 0;

	assert_non_null(f);
	fprintf(f, "appliance: {id: big}\n"
		"uplinks: [{name: up0, pod_port: net_null0, fabric_port: net_null1}]\n"
		"pods:\n");
	for (i = 0; i < npods; i++) {
		fprintf(f, "  - {id: p%u, uplink: up0, prefixes: [", i);
		for (k = 0; k < nprefixes; k++, n++) {
			if (overlap && i == npods - 1 && k == nprefixes - 1)
				n = 0;
			fprintf(f, "%s10.%u.%u.%u/%u", k ? ", " : "",
				n >> 14 & 255, n >> 6 & 255, (n & 63) * 4,
				overlap && n == 0 && i > 0 ? 31 : 30);
		}
		fprintf(f, "]}\n");
	}
	fclose(f);
	return text;
}

static double
now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void
test_limits(void **state)
{
	struct pc_config cfg;
	struct pc_error err;
	char *text, *msg;
	double t;

	(void)state;
	/* the largest map allowed loads, and quickly */
	text = generated_map(PC_MAX_PODS, PC_MAX_PREFIXES, false);
	t = now_s();
	assert_int_equal(pc_config_load_buffer("max", text, strlen(text), &cfg,
					       &err), 0);
	t = now_s() - t;
	print_message("%u pods x %u prefixes loaded in %.3f s\n", PC_MAX_PODS,
		      PC_MAX_PREFIXES, t);
	assert_int_equal(cfg.npods, PC_MAX_PODS);
	assert_int_equal(cfg.pods[PC_MAX_PODS - 1].nprefixes, PC_MAX_PREFIXES);
	pc_config_free(&cfg);
	free(text);

	/* one overlap among 262144 prefixes is found and named */
	text = generated_map(PC_MAX_PODS, PC_MAX_PREFIXES, true);
	assert_int_equal(pc_config_load_buffer("max", text, strlen(text), &cfg,
					       &err), -1);
	assert_int_equal(err.mark.line, 3 + PC_MAX_PODS);
	assert_string_equal(err.msg, "prefix 10.0.0.0/31 overlaps 10.0.0.0/30 "
			    "of pod 'p0' (4:38)");
	free(text);

	/* one pod too many */
	text = generated_map(PC_MAX_PODS + 1, 1, false);
	assert_int_equal(pc_config_load_buffer("max", text, strlen(text), &cfg,
					       &err), -1);
	assert_int_equal(err.mark.line, 4 + PC_MAX_PODS);
	assert_int_equal(err.mark.col, 5);
	assert_true(asprintf(&msg, "too many pods (at most %d)", PC_MAX_PODS) > 0);
	assert_string_equal(err.msg, msg);
	free(msg);
	free(text);
}

/* appliance.witnesses: read in order, and not in the canonical form. */
static void
test_witnesses(void **state)
{
	struct pc_config a, b;
	uint8_t da[PC_DIGEST_LEN], db[PC_DIGEST_LEN];

	(void)state;
	load_ok(GOOD_DIR "/witnesses.yaml", &a);
	load_ok(GOOD_DIR "/minimal.yaml", &b);
	assert_int_equal(a.witnesses.n, 2);
	assert_int_equal(b.witnesses.n, 0);
	assert_string_equal(a.witnesses.w[0].url, "http://127.0.0.1:7380");
	assert_string_equal(a.witnesses.w[0].key.name, "witness.example/w1");
	assert_int_equal(a.witnesses.w[0].key.id, 0x918b6299);
	assert_string_equal(a.witnesses.w[1].url, "https://witness.example/");
	assert_int_equal(a.witnesses.w[1].key.id, 0xe22c9da6);
	assert_string_equal(a.witnesses.w[0].ca, "");
	assert_string_equal(a.witnesses.w[1].ca, "/etc/podcap/tls/witness-ca.crt");
	pc_config_digest(&a, da);
	pc_config_digest(&b, db);
	assert_memory_equal(da, db, PC_DIGEST_LEN);
	pc_config_free(&a);
	pc_config_free(&b);
}

/* appliance.tls and appliance.access: read as written, and not in the canonical form. */
static void
test_endpoint(void **state)
{
	struct pc_config a, b;
	uint8_t da[PC_DIGEST_LEN], db[PC_DIGEST_LEN];

	(void)state;
	load_ok(GOOD_DIR "/endpoint-tls-access.yaml", &a);
	load_ok(GOOD_DIR "/minimal.yaml", &b);
	assert_true(a.tls.enabled);
	assert_false(b.tls.enabled);
	assert_string_equal(a.tls.certificate, "/etc/podcap/tls/appliance.crt");
	assert_string_equal(a.tls.key, "/etc/podcap/tls/appliance.key");
	assert_string_equal(a.tls.client_ca, "/etc/podcap/tls/site-ca.crt");
	assert_string_equal(a.tls.priorities, "NORMAL:-VERS-ALL:+VERS-TLS1.3:+VERS-TLS1.2");
	assert_int_equal(a.tls.certificate_mark.line, 7);
	assert_int_equal(a.tls.certificate_mark.col, 18);
	assert_int_equal(a.access.n, 2);
	assert_false(a.access.r[0].by_key);
	assert_string_equal(a.access.r[0].subject, "CN=verifier-1,O=Example Site");
	assert_int_equal(a.access.r[0].routes, PC_ACCESS_LOG);
	assert_true(a.access.r[1].by_key);
	assert_int_equal(a.access.r[1].spki_sha256[0], 0x9f);
	assert_int_equal(a.access.r[1].spki_sha256[31], 0x08);
	assert_int_equal(a.access.r[1].routes, PC_ACCESS_METRICS | PC_ACCESS_ATTEST);
	pc_config_digest(&a, da);
	pc_config_digest(&b, db);
	assert_memory_equal(da, db, PC_DIGEST_LEN);
	pc_config_free(&a);
	/* TLS 1.3 only unless the map says otherwise */
	assert_string_equal(PC_TLS_DEFAULT_PRIORITIES, "NORMAL:-VERS-ALL:+VERS-TLS1.3");
	pc_config_free(&b);
}

/* The keys of the pod map, as pc_config_each_key() gives them. */
struct keys {
	struct pc_config_key k[128];
	unsigned n;
};

static void
keep_key(const struct pc_config_key *k, void *arg)
{
	struct keys *ks = arg;

	assert_true(ks->n < sizeof(ks->k) / sizeof(ks->k[0]));
	ks->k[ks->n++] = *k;
}

static void
all_keys(struct keys *ks)
{
	ks->n = 0;
	pc_config_each_key(keep_key, ks);
}

/*
 * Every row says both decisions, a line only for a key in the digest, and
 * every edit of tests/config/key_edits.h names a key.
 */
static void
test_key_decisions(void **state)
{
	static struct keys ks;

	(void)state;
	all_keys(&ks);
	assert_true(ks.n >= 50);
	for (unsigned i = 0; i < ks.n; i++) {
		const struct pc_config_key *k = &ks.k[i];

		print_message("%-32s digest %d reload %d\n", k->path, k->digest, k->reload);
		assert_int_not_equal(k->digest, PC_DIGEST_UNSAID);
		assert_int_not_equal(k->reload, PC_RELOAD_UNSAID);
		assert_true(k->line == NULL || k->digest != PC_DIGEST_NEVER);
	}
	for (size_t e = 0; e < sizeof(ke_edits) / sizeof(ke_edits[0]); e++) {
		unsigned i = 0;

		while (i < ks.n && strcmp(ks.k[i].path, ke_edits[e].path) != 0)
			i++;
		if (i == ks.n)
			fail_msg("an edit of %s, which is no key", ke_edits[e].path);
	}
}

static void
load_text(const char *text, struct pc_config *cfg)
{
	struct pc_error err;

	if (pc_config_load_buffer("edit", text, strlen(text), cfg, &err) != 0)
		fail_msg("%s:%u:%u: %s\n%s", err.file, err.mark.line, err.mark.col, err.msg, text);
}

/* The number of lines of the canonical form `text` that start with `key `. */
static unsigned
lines_of(const char *text, const char *key)
{
	unsigned n = 0;
	size_t len = strlen(key);

	for (const char *l = text; *l != '\0'; l = strchr(l, '\n') + 1)
		n += strncmp(l, key, len) == 0 && l[len] == ' ';
	return n;
}

/*
 * What the digest makes of each key is its row's: changing a key never in
 * it keeps the digest, changing any other changes it; a key always in it has
 * its line in a map that sets every key, one in it only when not its
 * default has none in the minimal map.
 */
static void
test_key_digests(void **state)
{
	static struct keys ks;
	static char text[8192];
	struct pc_config base, edited, minimal;
	uint8_t d0[PC_DIGEST_LEN], d1[PC_DIGEST_LEN];
	char *canon0, *canon_min;

	(void)state;
	all_keys(&ks);
	load_ok(GOOD_DIR "/minimal.yaml", &minimal);
	canon_min = canonical(&minimal);
	for (unsigned i = 0; i < ks.n; i++) {
		const struct pc_config_key *k = &ks.k[i];
		const struct ke_edit *e = ke_edit_of(k->path);

		if (e == NULL) {
			/* only a mapping the map must have cannot change as a whole */
			if (!k->required || !k->mapping)
				fail_msg("no edit of %s in tests/config/key_edits.h", k->path);
			continue;
		}
		load_text(ke_bases[e->base], &base);
		canon0 = canonical(&base);
		pc_config_digest(&base, d0);
		if (ke_apply(e, text, sizeof(text)) != 0)
			fail_msg("the edit of %s does not apply", k->path);
		load_text(text, &edited);
		pc_config_digest(&edited, d1);
		if ((memcmp(d0, d1, PC_DIGEST_LEN) == 0) != (k->digest == PC_DIGEST_NEVER))
			fail_msg("%s: changing it %s the digest", k->path,
				 k->digest == PC_DIGEST_NEVER ? "changes" : "keeps");
		if (k->line != NULL && k->digest == PC_DIGEST_ALWAYS &&
		    lines_of(canon0, k->line) == 0)
			fail_msg("%s: no line '%s' in the canonical form", k->path, k->line);
		if (k->line != NULL && k->digest == PC_DIGEST_UNLESS_DEFAULT &&
		    lines_of(canon_min, k->line) != 0)
			fail_msg("%s: a line '%s' for its default", k->path, k->line);
		free(canon0);
		pc_config_free(&base);
		pc_config_free(&edited);
	}
	free(canon_min);
	pc_config_free(&minimal);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bad_corpus),
		cmocka_unit_test(test_good_corpus),
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_full),
		cmocka_unit_test(test_witnesses),
		cmocka_unit_test(test_endpoint),
		cmocka_unit_test(test_scalar_styles),
		cmocka_unit_test(test_example_72gpu),
		cmocka_unit_test(test_digest_invariance),
		cmocka_unit_test(test_canonical_bytes),
		cmocka_unit_test(test_error_print),
		cmocka_unit_test(test_error_print_alignment),
		cmocka_unit_test(test_load_buffer),
		cmocka_unit_test(test_missing_file),
		cmocka_unit_test(test_file_errors),
		cmocka_unit_test(test_null_error),
		cmocka_unit_test(test_limits),
		cmocka_unit_test(test_promise),
		cmocka_unit_test(test_vlan),
		cmocka_unit_test(test_uplink_workers),
		cmocka_unit_test(test_key_decisions),
		cmocka_unit_test(test_key_digests),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
