/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * podcap-ledger-gen: writes a small synthetic ledger, for the test vectors
 * (tests/vectors) and the tamper tests.
 *
 *   podcap-ledger-gen --key KEY --pod-map FILE --out DIR [--reload-map FILE] [--over-cap]
 *                     [--records N] [--no-clock-record] [--windows N]
 *                     [--note-at N FILE] [--later-type]
 *
 * Every value is a function of the pod map and the window index (fixed
 * times from 2024-01-01T00:00:00Z, fixed build id), and Ed25519 signatures
 * are deterministic, so the same inputs always give the same bytes.
 *
 * The log: START; WINDOW x3; GAP of 2 windows; RELOAD (--reload-map, or
 * the same map again); WINDOW x2; STOP; START after 2 windows down;
 * WINDOW x3; CLOCK (the wall clock stepped 120.4 s forward: labels jump two
 * windows, no real time passes); WINDOW; then a checkpoint over all of it. --over-cap makes the second
 * window pass three times what the cap allows (signed all the same), for
 * tests of the envelope check. --no-clock-record leaves the CLOCK record
 * out (the labels still jump): a forged jump, for the sequence check. --records N keeps only the first N records:
 * an earlier checkpoint of the same log, for tests of the trusted state.
 *
 * --windows N writes a long log instead, for benchmarks of the verifier:
 * START, then N consecutive WINDOW records. --note-at N FILE also writes to
 * FILE the signed checkpoint of the first N records, as a verifier that
 * checked the log at that size keeps it (podcap-verify --state), so that
 * one log serves both a full and an incremental verification.
 *
 * --later-type puts before the last WINDOW a record of type 200, which
 * this version does not know, framed as version 1 frames every type (the
 * common fields, no blocks, then 8 bytes of its own): what a later podcapd
 * would write, for the verifier's finding on a type it cannot check.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <sodium.h>

#include "podmap/config.h"
#include "log/origin.h"
#include "base/keys.h"
#include "log/ledger.h"
#include "log/note.h"
#include "log/record.h"

#define T0_NS (1704067200ULL * 1000000000ULL)   /* 2024-01-01T00:00:00Z */
#define MS (1000000ULL)

struct gen {
	struct pc_ledger *l;
	const struct pc_config *cfg;     /* the pod map in force */
	uint8_t digest[PC_DIGEST_LEN];
	uint8_t build_id[32];
	bool over_cap;
	bool no_clock;
	bool later_type;
	uint64_t limit;                  /* records to write */
	uint64_t windows;                /* --windows: a long log of this many windows */
	uint64_t note_at;                /* --note-at: records under the earlier checkpoint */
	const char *note_path;
	const struct pc_signer_key *key;
	char origin[PC_KEY_NAME_LEN];
	uint8_t *buf;
};

static void
usage(FILE *f)
{
	fprintf(f,
		"usage: podcap-ledger-gen --key KEY --pod-map FILE --out DIR "
		"[--reload-map FILE] [--over-cap] [--records N] [--no-clock-record]\n"
		"                         [--windows N] [--note-at N FILE] [--later-type]\n");
}

static uint64_t
window_start(const struct gen *g, uint64_t w)
{
	return T0_NS + w * g->cfg->window_ns;
}

static void
base_record(const struct gen *g, struct pc_record *r, uint8_t type, uint64_t w, uint64_t at_ns)
{
	memset(r, 0, sizeof(*r));
	r->type = type;
	snprintf(r->appliance_id, sizeof(r->appliance_id), "%s", g->cfg->appliance_id);
	r->window_len_ns = g->cfg->window_ns;
	r->window_start_ns = window_start(g, w);
	r->time_ns = at_ns;
	memcpy(r->podmap_digest, g->digest, PC_DIGEST_LEN);
	memcpy(r->build_id, g->build_id, sizeof(r->build_id));
}

static int write_note(const struct gen *g, const char *path);

/* The record of n bytes in g->buf goes into the ledger. */
static int
append(struct gen *g, size_t n)
{
	if (pc_ledger_append(g->l, g->buf, n) < 0) {
		fprintf(stderr, "podcap-ledger-gen: append: %s\n", strerror(errno));
		return -1;
	}
	if (g->note_path != NULL && pc_ledger_size(g->l) == g->note_at)
		return write_note(g, g->note_path);
	return 0;
}

static int
put(struct gen *g, const struct pc_record *r)
{
	size_t n = pc_record_encode(r, g->buf, PC_RECORD_MAX);

	if (pc_ledger_size(g->l) >= g->limit)
		return 0;
	if (n == 0) {
		fprintf(stderr, "podcap-ledger-gen: cannot encode a %s record\n",
			pc_record_type_name(r->type));
		return -1;
	}
	return append(g, n);
}

/* --later-type: a STOP's common fields under type 200, and 8 bytes of that type's own. */
static int
put_later_type(struct gen *g, uint64_t w, uint64_t at_ns)
{
	static const uint8_t own[8] = { 0, 0, 0, 1, 0, 0, 0, 2 };
	struct pc_record r;

	base_record(g, &r, PC_REC_STOP, w, at_ns);
	size_t n = pc_record_encode(&r, g->buf, PC_RECORD_MAX - sizeof(own));
	if (pc_ledger_size(g->l) >= g->limit)
		return 0;
	if (n == 0)
		return -1;
	g->buf[1] = 200;
	memcpy(g->buf + n, own, sizeof(own));
	return append(g, n + sizeof(own));
}

/* Share of the cap-window (in percent) pod p passes in window w, direction d. */
static uint64_t
share(const struct gen *g, unsigned p, int d, uint64_t w)
{
	static const uint8_t pct[2][12] = {
		{ 40, 100, 70, 0, 0, 55, 20, 0, 0, 10, 100, 35 },
		{ 15, 30, 99, 0, 0, 5, 60, 0, 0, 80, 25, 45 },
	};
	uint64_t v = pct[d][w % 12];

	if (g->over_cap && p == 0 && d == PC_DIR_UP && w == 1)
		return 300;
	return p % 2 ? (v * 3 + 10 * p) % 101 : v;
}

static void
fill_pod(const struct gen *g, struct pc_record_pod *rp, unsigned p, bool counters, uint64_t w)
{
	const struct pc_pod *pod = &g->cfg->pods[p];

	snprintf(rp->id, sizeof(rp->id), "%s", pod->id);
	snprintf(rp->uplink, sizeof(rp->uplink), "%s", g->cfg->uplinks[pod->uplink].name);
	rp->cap_bps = pod->limits.cap_bps;
	rp->burst_bytes = pod->limits.burst_bytes;
	rp->mode = pc_record_mode(&pod->limits);
	if (!counters)
		return;
	for (int d = 0; d < PC_DIR_COUNT; d++) {
		struct pc_pod_ctr *c = &rp->dir[d];
		/* bytes of a full window at the cap: cap x window / 8, exactly */
		unsigned __int128 full = (unsigned __int128)rp->cap_bps * g->cfg->window_ns /
					 (8 * 1000000000ULL);
		uint64_t s = share(g, p, d, w);
		uint64_t frame = d == PC_DIR_UP ? 1514 : 834;

		c->pass_bytes = (uint64_t)(full * s / 100);
		c->pass_frames = (c->pass_bytes + frame - 1) / frame;
		if (s >= 99) {
			c->drop_frames[PC_DROP_OVER_CAP] = 37 + p + w;
			c->drop_bytes[PC_DROP_OVER_CAP] = c->drop_frames[PC_DROP_OVER_CAP] * frame;
		}
		if (pod->limits.mode == PC_MODE_SHAPE && s >= 60) {
			c->drop_frames[PC_DROP_QUEUE_FULL] = 3 + w;
			c->drop_bytes[PC_DROP_QUEUE_FULL] = c->drop_frames[PC_DROP_QUEUE_FULL] * frame;
		}
		if (w == 10 && d == PC_DIR_DOWN) {
			c->drop_frames[PC_DROP_TX_FULL] = 2;
			c->drop_bytes[PC_DROP_TX_FULL] = 2 * frame;
		}
	}
}

/* START and RELOAD list the pods in force, with no counters. */
static int
put_declaration(struct gen *g, uint8_t type, uint64_t w, uint64_t at_ns)
{
	struct pc_record r;
	int rc;

	base_record(g, &r, type, w, at_ns);
	r.npods = g->cfg->npods;
	r.pods = calloc(r.npods ? r.npods : 1, sizeof(*r.pods));
	if (r.pods == NULL)
		return -1;
	for (unsigned p = 0; p < g->cfg->npods; p++)
		fill_pod(g, &r.pods[p], p, false, w);
	rc = put(g, &r);
	free(r.pods);
	return rc;
}

static int
put_window(struct gen *g, uint64_t w)
{
	struct pc_record r;
	int rc;

	/* closed 150 ms after its end, as the ledger thread would */
	base_record(g, &r, PC_REC_WINDOW, w, window_start(g, w + 1) + 150 * MS);
	r.window_count = 1;
	r.npods = g->cfg->npods;
	r.nlinks = g->cfg->nuplinks;
	r.pods = calloc(r.npods ? r.npods : 1, sizeof(*r.pods));
	r.links = calloc(r.nlinks ? r.nlinks : 1, sizeof(*r.links));
	if (r.pods == NULL || r.links == NULL) {
		free(r.pods);
		free(r.links);
		return -1;
	}
	for (unsigned p = 0; p < g->cfg->npods; p++)
		fill_pod(g, &r.pods[p], p, true, w);
	for (unsigned u = 0; u < g->cfg->nuplinks; u++) {
		struct pc_record_link *lk = &r.links[u];

		snprintf(lk->name, sizeof(lk->name), "%s", g->cfg->uplinks[u].name);
		lk->dir[PC_DIR_UP].drop_frames[PC_DROP_UNMAPPED] = w + 1 + u;
		lk->dir[PC_DIR_UP].drop_bytes[PC_DROP_UNMAPPED] = (w + 1 + u) * 90;
		lk->dir[PC_DIR_DOWN].drop_frames[PC_DROP_UNMAPPED] = 2 * w;
		lk->dir[PC_DIR_DOWN].drop_bytes[PC_DROP_UNMAPPED] = 2 * w * 64;
		if (w % 5 == 0) {
			lk->dir[PC_DIR_UP].drop_frames[PC_DROP_MALFORMED] = 1;
			lk->dir[PC_DIR_UP].drop_bytes[PC_DROP_MALFORMED] = 42;
		}
	}
	rc = put(g, &r);
	free(r.pods);
	free(r.links);
	return rc;
}

static int
put_simple(struct gen *g, uint8_t type, uint64_t w, uint64_t count, uint64_t at_ns)
{
	struct pc_record r;

	base_record(g, &r, type, w, at_ns);
	r.window_count = count;
	return put(g, &r);
}

static int
load_map(const char *path, struct pc_config *cfg)
{
	struct pc_error e;

	if (pc_config_load(path, cfg, &e) < 0) {
		pc_error_print(&e, stderr);
		return -1;
	}
	return 0;
}

/* The signed checkpoint of the records written so far, in note. */
static size_t
sign_note(const struct gen *g, char *note, size_t len)
{
	struct pc_checkpoint cp = { .size = pc_ledger_size(g->l) };
	char body[PC_NOTE_MAX];
	uint8_t sig[64];

	snprintf(cp.origin, sizeof(cp.origin), "%s", g->origin);
	pc_ledger_root(g->l, cp.root);
	size_t blen = pc_checkpoint_body(&cp, body, sizeof(body));
	if (blen == 0)
		return 0;
	pc_note_sign_body(g->key, body, blen, sig);
	return pc_note_format(body, blen, g->key->name, g->key->id, sig, note, len);
}

static int
sign_checkpoint(struct gen *g)
{
	char note[PC_NOTE_MAX];
	size_t n = sign_note(g, note, sizeof(note));
	struct pc_error err;

	if (n == 0 || pc_ledger_publish(g->l, note, n, &err) < 0) {
		fprintf(stderr, "podcap-ledger-gen: cannot publish the checkpoint: %s\n",
			n == 0 ? "note too long" : err.msg);
		return -1;
	}
	return 0;
}

static int
write_note(const struct gen *g, const char *path)
{
	char note[PC_NOTE_MAX];
	size_t n = sign_note(g, note, sizeof(note));
	FILE *f = fopen(path, "w");

	if (n == 0 || f == NULL || fwrite(note, 1, n, f) != n || fclose(f) != 0) {
		fprintf(stderr, "podcap-ledger-gen: cannot write the checkpoint to %s\n", path);
		if (f != NULL)
			fclose(f);
		return -1;
	}
	return 0;
}

/* --windows: START, then the windows one after the other, stopping at the first error. */
static int
write_long_log(struct gen *g, const struct pc_config *cfg)
{
	g->cfg = cfg;
	pc_config_digest(cfg, g->digest);
	if (put_declaration(g, PC_REC_START, 0, window_start(g, 0) + 250 * MS) < 0)
		return -1;
	for (uint64_t w = 0; w < g->windows; w++)
		if (put_window(g, w) < 0)
			return -1;
	return 0;
}

static int
write_log(struct gen *g, const struct pc_config *first, const struct pc_config *reload)
{
	int rc = 0;

	if (g->windows > 0)
		return write_long_log(g, first);
	g->cfg = first;
	pc_config_digest(first, g->digest);
	rc |= put_declaration(g, PC_REC_START, 0, window_start(g, 0) + 250 * MS);
	for (uint64_t w = 0; w < 3; w++)
		rc |= put_window(g, w);
	rc |= put_simple(g, PC_REC_GAP, 3, 2, window_start(g, 5) + 400 * MS);
	g->cfg = reload;
	pc_config_digest(reload, g->digest);
	rc |= put_declaration(g, PC_REC_RELOAD, 5, window_start(g, 5) + 420 * MS);
	for (uint64_t w = 5; w < 7; w++)
		rc |= put_window(g, w);
	rc |= put_simple(g, PC_REC_STOP, 7, 0, window_start(g, 7) + 160 * MS);
	rc |= put_declaration(g, PC_REC_START, 9, window_start(g, 9) + 700 * MS);
	for (uint64_t w = 9; w < 12; w++)
		rc |= put_window(g, w);
	struct pc_record r;
	base_record(g, &r, PC_REC_CLOCK, 14, window_start(g, 14) + 150 * MS);
	r.clock.step_ns = (int64_t)(120 * 1000 * MS + 400 * MS);
	if (!g->no_clock)
		rc |= put(g, &r);
	if (g->later_type)
		rc |= put_later_type(g, 14, window_start(g, 14) + 160 * MS);
	rc |= put_window(g, 14);
	return rc ? -1 : 0;
}

static int
parse_count(const char *opt, const char *arg, uint64_t *v)
{
	char *end;

	errno = 0;
	*v = strtoull(arg, &end, 10);
	if (errno != 0 || *end != '\0' || end == arg || *v == 0) {
		fprintf(stderr, "podcap-ledger-gen: %s wants a positive number\n", opt);
		return -1;
	}
	return 0;
}

int
main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "key", required_argument, NULL, 'k' },
		{ "pod-map", required_argument, NULL, 'p' },
		{ "reload-map", required_argument, NULL, 'r' },
		{ "out", required_argument, NULL, 'o' },
		{ "over-cap", no_argument, NULL, 'x' },
		{ "records", required_argument, NULL, 'n' },
		{ "no-clock-record", no_argument, NULL, 'C' },
		{ "windows", required_argument, NULL, 'w' },
		{ "note-at", required_argument, NULL, 'a' },
		{ "later-type", no_argument, NULL, 'L' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *key_path = NULL, *map_path = NULL, *reload_path = NULL, *out = NULL;
	struct gen g = { .limit = UINT64_MAX };
	char *end;
	struct pc_config cfg, cfg2;
	struct pc_error err;
	struct stat st;
	int c, rc = 1;

	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'k':
			key_path = optarg;
			break;
		case 'p':
			map_path = optarg;
			break;
		case 'r':
			reload_path = optarg;
			break;
		case 'o':
			out = optarg;
			break;
		case 'x':
			g.over_cap = true;
			break;
		case 'C':
			g.no_clock = true;
			break;
		case 'L':
			g.later_type = true;
			break;
		case 'n':
			errno = 0;
			g.limit = strtoull(optarg, &end, 10);
			if (errno != 0 || *end != '\0' || end == optarg || g.limit == 0) {
				fprintf(stderr, "podcap-ledger-gen: --records wants a positive number\n");
				return 2;
			}
			break;
		case 'w':
			if (parse_count("--windows", optarg, &g.windows) < 0)
				return 2;
			break;
		case 'a':
			if (parse_count("--note-at", optarg, &g.note_at) < 0 || optind >= argc) {
				usage(stderr);
				return 2;
			}
			g.note_path = argv[optind++];
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind != argc || key_path == NULL || map_path == NULL || out == NULL) {
		usage(stderr);
		return 2;
	}
	if (sodium_init() < 0)
		return 2;
	if (stat(out, &st) == 0) {
		fprintf(stderr, "podcap-ledger-gen: %s exists: give a new directory\n", out);
		return 2;
	}
	struct pc_signer_key *k = pc_signer_key_load(key_path, &err);
	if (k == NULL) {
		fprintf(stderr, "podcap-ledger-gen: %s\n", err.msg);
		return 2;
	}
	if (load_map(map_path, &cfg) < 0) {
		pc_signer_key_free(k);
		return 2;
	}
	if (load_map(reload_path ? reload_path : map_path, &cfg2) < 0)
		goto out_cfg;
	pc_config_origin(&cfg, g.origin, sizeof(g.origin));
	g.key = k;
	if (strcmp(g.origin, k->name) != 0) {
		fprintf(stderr, "podcap-ledger-gen: the key is named '%s', the log is '%s'\n",
			k->name, g.origin);
		goto out_cfg2;
	}
	crypto_generichash(g.build_id, sizeof(g.build_id), (const uint8_t *)"podcap-ledger-gen",
			   17, NULL, 0);
	g.buf = malloc(PC_RECORD_MAX);
	g.l = pc_ledger_open(out, g.origin, &err);
	if (g.buf == NULL || g.l == NULL) {
		fprintf(stderr, "podcap-ledger-gen: %s\n", g.l == NULL ? err.msg : "out of memory");
		goto out_all;
	}
	if (write_log(&g, &cfg, &cfg2) == 0 && sign_checkpoint(&g) == 0)
		rc = 0;
	if (rc == 0 && g.note_path != NULL && pc_ledger_size(g.l) < g.note_at) {
		fprintf(stderr, "podcap-ledger-gen: --note-at %" PRIu64 ": the log has only %" PRIu64
			" records\n", g.note_at, pc_ledger_size(g.l));
		rc = 1;
	}
out_all:
	pc_ledger_close(g.l);
	free(g.buf);
out_cfg2:
	pc_config_free(&cfg2);
out_cfg:
	pc_config_free(&cfg);
	pc_signer_key_free(k);
	return rc;
}
