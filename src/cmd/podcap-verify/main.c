/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * podcap-verify: checks a podcap log as someone who does not trust the
 * operator who runs it.
 *
 *   podcap-verify --key VERIFIER_KEY (--url http://HOST:PORT | --ledger DIR)
 *                 [--pod-map FILE|DIR]... [--state FILE] [--checkpoint FILE] [--json]
 *                 [--now TIME] [--clock-skew DURATION] [--max-unaccounted DURATION]
 *                 [--max-gap DURATION] [--max-checkpoint-age DURATION]
 *                 [--max-merged-windows N] [--build-id HEX]...
 *                 [--pod-maps DIR --auditor-key FILE... [--max-map-age DURATION]]
 *                 [--assignment DIR] [--attest POLICY]
 *                 [--tap URL|DIR --tap-key KEY]... [--tap-clock-offset DURATION]
 *                 [--tap-line-rate RATE]
 *                 [--ca FILE] [--pin sha256:HEX]... [--cert FILE --cert-key FILE]
 *
 * --assignment DIR holds the auditor's draw (podcap-audit assign): pods.txt,
 * uplinks.txt, template.yaml, constraints.txt (optional) and the revealed
 * seeds, *.seed; every START and RELOAD must put in force the map one of
 * the seeds produces for this appliance.
 *
 * --tap (repeatable) verifies the log of a tap the verifier owns with its
 * own key, then reconciles the shaper's windows with it (cmd/podcap-verify/taps.c,
 * docs/reconcile.md).
 *
 * --pod-map may be repeated, and a directory stands for every *.yaml in
 * it: every START and RELOAD must name one of the maps. The verifier's now
 * is its own clock, or --now for an audit of an old log; the limits and
 * the pinned build ids are its policy (docs/threat-model.md says which to
 * set).
 *
 * --state FILE keeps what a successful run verified: the checkpoint, the
 * Merkle tree's right edge at its size and what the record checks carry
 * over (docs/log-format.md, "The verifier's state"). The next run reads
 * and checks only the records after it. A state that does not check out
 * is refused (exit 2); a state holding only the checkpoint, or saved under
 * another --pod-map, makes the run read every record.
 *
 * --pod-maps DIR is --pod-map DIR and, with --auditor-key, every *.sig in
 * it is an auditor's declaration: every START and RELOAD must be followed
 * by a DECLARE naming one of them, signed by an auditor key, and every
 * window must start while it is valid (verify/declare.h).
 * --witness KEY (repeatable), --witness-quorum K, --max-witness-delay D:
 * the checkpoint must carry K valid cosignatures of those witnesses, and
 * their times bound the newest window (src/verify/witness.h).
 *
 * --checkpoint FILE verifies the log as of that signed checkpoint (one
 * kept earlier, or obtained from elsewhere) instead of the newest the
 * source offers.
 *
 * Exit status: 0 when every check holds, 1 when one fails, 2 for usage or
 * I/O errors (unreachable server, unreadable files). Links src/verify,
 * libsodium and libcurl only.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <libgen.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <curl/curl.h>
#include <sodium.h>

#include "base/base64.h"
#include "base/buildid.h"
#include "base/bytes.h"
#include "base/clock.h"
#include "podmap/config.h"
#include "base/fileio.h"
#include "base/hex.h"
#include "base/keys.h"
#include "log/ledger.h"
#include "log/note.h"
#include "verify/tap.h"
#include "log/record.h"
#include "base/units.h"
#include "log/cosig.h"
#include "verify/verify.h"
#include "log/declaration.h"
#include "verify/declare.h"

#include "audit.h"
#include "verify/witness.h"
#include "verify/attest.h"

#include "fleet.h"
#ifdef PC_HAVE_LIBCRYPTO
#include "log/sha256_libcrypto.h"
#endif
#include "taps.h"
#include "tls.h"

#define CHUNK 1000                         /* records per /v1/records request */
#define MAX_BODY ((size_t)512 << 20)       /* largest HTTP response accepted */
#define MAX_STATE ((size_t)256 << 20)      /* largest --state file read */

#define MAX_MAPS 64                        /* --pod-map files, directories counted by file */

struct opts {
	const char *key;
	const char *url;
	const char *ledger;
	const char *pod_maps[MAX_MAPS];  /* files and directories, as given */
	size_t npod_maps;
	const char *state;
	const char *checkpoint;          /* verify this signed checkpoint, not the source's newest */
	bool json;
	const char *html;     /* also write the HTML report there */
	bool indicators;      /* state the indicators in the text or JSON report */
	uint64_t model_bytes; /* --model-size: transfer times for it */
	struct pc_verify_policy policy;
	const char *decl_dir; /* --pod-maps */
	const char *auditor_keys[PC_DECL_MAX_KEYS];
	size_t nauditor_keys;
	uint64_t max_map_age_ns; /* PC_VERIFY_UNLIMITED unless --max-map-age */
	const char *assignment;  /* --assignment DIR: the draw's inputs and revealed seeds */
	struct pc_witness_policy witness; /* --witness, --witness-quorum, --max-witness-delay */
	const char *attest;               /* --attest: the attestation policy file */
	struct vf_taps taps;
};

static void
usage(FILE *f)
{
	static const char *const text[] = {
		"usage: podcap-verify --key VERIFIER_KEY (--url http://HOST:PORT | --ledger DIR)\n",
		"           [--pod-map FILE|DIR]... [--state FILE] [--checkpoint FILE] [--json]\n",
		"           [--now TIME] [--clock-skew DURATION] [--max-unaccounted DURATION]\n",
		"           [--max-gap DURATION] [--max-checkpoint-age DURATION]\n",
		"           [--max-merged-windows N] [--build-id HEX]...\n",
		"           [--pod-maps DIR --auditor-key FILE... [--max-map-age DURATION]]\n",
		"           [--assignment DIR]\n",
		"           [--witness VKEY|FILE]... [--witness-quorum K]\n",
		"           [--max-witness-delay DURATION]\n",
		"           [--attest POLICY]\n",
		"       podcap-verify --fleet FILE [--jobs N] [--json] [--html FILE] [options]\n",
		"       podcap-verify --version | --help\n",
		"report options: [--html FILE] [--indicators] [--model-size SIZE]\n",
		"tap options: [--tap URL|DIR --tap-key KEY]... [--tap-clock-offset DURATION]\n",
		"             [--tap-line-rate RATE]\n",
		"https options: [--ca FILE] [--pin sha256:HEX]... [--cert FILE --cert-key FILE]\n",
	};

	for (size_t i = 0; i < sizeof text / sizeof text[0]; i++)
		fputs(text[i], f);
}

/* "podcap-verify: <message>" on stderr. */
static void
say(const char *fmt, va_list ap)
{
	fputs("podcap-verify: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

static void
die_io(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void
die_usage(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

static void
die_io(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	say(fmt, ap);
	va_end(ap);
	exit(2);
}

/* A bad option argument: exit 2, as for any usage error. */
static void
die_usage(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	say(fmt, ap);
	va_end(ap);
	usage(stderr);
	exit(2);
}

/* ---- HTTP ---- */

struct body {
	uint8_t *p;
	size_t len, cap;
	bool too_big;
};

static size_t
on_data(char *data, size_t size, size_t n, void *arg)
{
	struct body *b = arg;
	size_t add = size * n;

	if (add > MAX_BODY - b->len) {
		b->too_big = true;
		return 0;
	}
	if (b->len + add + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 65536;
		while (cap < b->len + add + 1)
			cap *= 2;
		uint8_t *p = realloc(b->p, cap);
		if (p == NULL)
			return 0;
		b->p = p;
		b->cap = cap;
	}
	memcpy(b->p + b->len, data, add);
	b->len += add;
	b->p[b->len] = '\0';
	return add;
}

/* --ca, --pin, --cert, --cert-key: for every URL fetched (cmd/podcap-verify/tls.h) */
static struct vf_tls tls_opts;
static char curl_err[CURL_ERROR_SIZE];

/* GETs base + path; the body on 200, exits 2 otherwise. */
static void
http_get(CURL *curl, const char *base, const char *path, struct body *b)
{
	char url[2048];
	long status = 0;

	snprintf(url, sizeof(url), "%s%s", base, path);
	free(b->p);
	memset(b, 0, sizeof(*b));
	curl_easy_setopt(curl, CURLOPT_URL, url);
	curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, on_data);
	curl_easy_setopt(curl, CURLOPT_WRITEDATA, b);
	CURLcode rc = curl_easy_perform(curl);
	if (b->too_big)
		die_io("%s: response larger than %zu bytes", url, MAX_BODY);
	if (rc != CURLE_OK) {
		char why[CURL_ERROR_SIZE + 256];
		vf_tls_reason(rc, curl_err, why, sizeof(why));
		die_io("%s: %s", url, why);
	}
	curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
	if (status != 200)
		die_io("%s: HTTP status %ld", url, status);
	if (b->p == NULL) {
		b->p = calloc(1, 1);
		if (b->p == NULL)
			die_io("out of memory");
	}
}

static CURL *
http_open(void)
{
	CURL *curl;

	if (curl_global_init(CURL_GLOBAL_DEFAULT) != 0 || (curl = curl_easy_init()) == NULL)
		die_io("cannot initialise libcurl");
	curl_easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT, 10L);
	curl_easy_setopt(curl, CURLOPT_TIMEOUT, 600L);
	curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(curl, CURLOPT_USERAGENT, "podcap-verify");
	vf_tls_apply(curl, &tls_opts, curl_err);
	return curl;
}

static void
verify_url(struct pc_verify *v, const char *url_arg, const char *cp, size_t cp_len)
{
	char base[1024], path[128];
	struct body b = { 0 };
	size_t n = strlen(url_arg);

	while (n > 0 && url_arg[n - 1] == '/')
		n--;
	if (n == 0 || n >= sizeof(base))
		die_io("bad --url");
	memcpy(base, url_arg, n);
	base[n] = '\0';

	CURL *curl = http_open();
	if (cp == NULL) {
		http_get(curl, base, "/v1/checkpoint", &b);
		cp = (const char *)b.p;
		cp_len = b.len;
	}
	if (pc_verify_checkpoint(v, cp, cp_len) == 0) {
		uint64_t size = pc_verify_size(v), from = pc_verify_resume_at(v);

		while (from < size) {
			uint64_t count = size - from < CHUNK ? size - from : CHUNK, got = 0;

			snprintf(path, sizeof(path), "/v1/records?from=%" PRIu64 "&count=%" PRIu64,
				 from, count);
			http_get(curl, base, path, &b);
			for (size_t off = 0; off < b.len && got < count; got++) {
				if (b.len - off < 4)
					die_io("%s%s: malformed response", base, path);
				uint32_t len = pc_load_be32(b.p + off);
				if (len > PC_RECORD_MAX || b.len - off - 4 < len)
					die_io("%s%s: malformed response", base, path);
				vf_take_record(v, b.p + off + 4, len, NULL);
				off += 4 + (size_t)len;
			}
			if (got == 0)
				break;   /* the server has no more: reported as missing records */
			from += got;
		}
		uint64_t old = pc_verify_trusted_size(v);
		if (old > 0 && old < size) {
			uint8_t proof[PC_MAX_PROOF][PC_HASH_LEN];
			size_t np = 0;
			char *save = NULL;

			snprintf(path, sizeof(path), "/v1/proof/consistency?old=%" PRIu64 "&new=%" PRIu64,
				 old, size);
			http_get(curl, base, path, &b);
			for (char *line = strtok_r((char *)b.p, "\n", &save); line != NULL;
			     line = strtok_r(NULL, "\n", &save)) {
				size_t bin;
				if (np == PC_MAX_PROOF ||
				    pc_base64_decode(proof[np], PC_HASH_LEN, line, strlen(line),
						     &bin) != 0 ||
				    bin != PC_HASH_LEN)
					die_io("%s%s: malformed proof", base, path);
				np++;
			}
			pc_verify_consistency(v, (const uint8_t(*)[PC_HASH_LEN])proof, np);
		}
	}
	free(b.p);
	curl_easy_cleanup(curl);
	curl_global_cleanup();
}

/* ---- ledger directory ---- */

static void
verify_ledger(struct pc_verify *v, const char *dir, const char *cp, size_t cp_len)
{
	struct pc_error err;
	char note[PC_NOTE_MAX + 1];
	/* resumed: seek past the records verified before rather than walk them */
	struct pc_ledger *l = pc_ledger_open_ro_from(dir, pc_verify_resume_at(v),
						     pc_verify_resume_bytes(v), &err);

	if (l == NULL)
		die_io("%s", err.msg);
	if (cp == NULL) {
		long n = pc_ledger_checkpoint(l, note, sizeof(note));
		if (n <= 0)
			die_io("ledger %s has no checkpoint to verify", dir);
		cp = note;
		cp_len = (size_t)n;
	}
	if (pc_verify_checkpoint(v, cp, cp_len) == 0) {
		uint64_t size = pc_verify_size(v), have = pc_ledger_size(l);
		uint8_t *buf = malloc(PC_RECORD_MAX), leaf[PC_HASH_LEN];

		if (buf == NULL)
			die_io("out of memory");
		for (uint64_t i = pc_verify_resume_at(v); i < size && i < have; i++) {
			long len = pc_ledger_record(l, i, buf, PC_RECORD_MAX);
			if (len < 0)
				die_io("%s: record %" PRIu64 ": %s", dir, i, strerror(errno));
			bool stored = pc_ledger_leaf(l, i, leaf) == 0;
			vf_take_record(v, buf, (size_t)len, stored ? leaf : NULL);
		}
		free(buf);
	}
	pc_ledger_close(l);
}

/* A tap's log, from a URL or a directory as --url and --ledger read. */
static void
read_tap(struct pc_verify *v, const char *source)
{
	if (strncmp(source, "http://", 7) == 0 || strncmp(source, "https://", 8) == 0)
		verify_url(v, source, NULL, 0);
	else
		verify_ledger(v, source, NULL, 0);
}

/* ---- the state file ---- */

/* Reads a file; its contents (malloc'ed) and length, or NULL if it does not exist. */
static char *
read_file(const char *path, size_t *len)
{
	char *buf = pc_read_file(path, MAX_STATE, len);

	if (buf == NULL && errno == EFBIG)
		die_io("%s: larger than %zu bytes", path, MAX_STATE);
	if (buf == NULL && errno != ENOENT)
		die_io("%s: %s", path, strerror(errno));
	return buf;
}

/* Replaces the state atomically: a crash leaves the old state or the new, whole. */
static void
write_state(const char *path, const char *text, size_t len)
{
	char dirbuf[PC_PATH_LEN], basebuf[PC_PATH_LEN];

	if ((size_t)snprintf(dirbuf, sizeof(dirbuf), "%s", path) >= sizeof(dirbuf))
		die_io("%s: path too long", path);
	snprintf(basebuf, sizeof(basebuf), "%s", path);
	int dfd = open(dirname(dirbuf), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0 || pc_replace_file_at(dfd, basename(basebuf), text, len, 0644) < 0)
		die_io("%s: %s", path, strerror(errno));
	close(dfd);
}

static void
close_html(const char *path, FILE *f)
{
	pc_html_end(f);
	if (ferror(f) || fclose(f) != 0)
		die_io("%s: %s", path, strerror(errno));
}

/*
 * The HTML report, whatever the verdict: a failed log is the one most
 * worth a look. Left open for the taps' section: they are verified after
 * the shaper's log.
 */
static FILE *
open_html(const char *path, const struct pc_verify *v)
{
	FILE *f = fopen(path, "w");

	if (f == NULL)
		die_io("%s: %s", path, strerror(errno));
	pc_verify_html_open(v, f);
	return f;
}

static uint64_t
arg_duration(const char *opt, const char *arg)
{
	struct pc_error err;
	uint64_t ns;

	if (pc_parse_duration(arg, &ns, &err) < 0)
		die_usage("--%s %s: %s", opt, arg, err.msg);
	return ns;
}

static uint64_t
arg_count(const char *opt, const char *arg)
{
	char *end;

	errno = 0;
	unsigned long long n = strtoull(arg, &end, 10);
	if (errno != 0 || end == arg || *end != '\0' || arg[0] == '-')
		die_usage("--%s %s: not a whole number", opt, arg);
	return (uint64_t)n;
}

/* The options of the verifier's policy; false when c is none of them. */
static bool
policy_arg(int c, const char *arg, struct pc_verify_policy *p)
{
	struct pc_error err;

	switch (c) {
	case 'n':
		if (pc_utc_parse(arg, &p->now_ns, &err) < 0 || p->now_ns == 0)
			die_usage("--now: %s", err.msg);
		return true;
	case 'S':
		p->clock_skew_ns = arg_duration("clock-skew", arg);
		return true;
	case 'U':
		p->max_unaccounted_ns = arg_duration("max-unaccounted", arg);
		return true;
	case 'G':
		p->max_gap_ns = arg_duration("max-gap", arg);
		return true;
	case 'A':
		p->max_checkpoint_age_ns = arg_duration("max-checkpoint-age", arg);
		return true;
	case 'M':
		p->max_merged_windows = arg_count("max-merged-windows", arg);
		return true;
	case 'b':
		if (p->nbuild_ids == PC_VERIFY_MAX_BUILD_IDS)
			die_usage("more than %d --build-id", PC_VERIFY_MAX_BUILD_IDS);
		if (!pc_unhex(arg, strlen(arg), p->build_ids[p->nbuild_ids], 32))
			die_usage("--build-id %s: not 64 hex digits", arg);
		p->nbuild_ids++;
		return true;
	}
	return false;
}

/*
 * A --witness key that is an earlier one's witness is a usage error, not
 * a second cosigner: counted twice, one cosignature would meet a quorum of 2.
 */
static void
witness_distinct(const char *arg, const struct pc_witness_policy *w)
{
	const struct pc_verifier_key *k = &w->keys[w->nkeys];

	for (size_t i = 0; i < w->nkeys; i++) {
		const char *same = pc_cosig_vkey_same(k, &w->keys[i]);

		if (same != NULL)
			die_usage("--witness %s: %s+%08x has the %s of the witness %s+%08x given "
				  "before; each --witness must be another witness",
				  arg, k->name, (unsigned)k->id, same, w->keys[i].name,
				  (unsigned)w->keys[i].id);
	}
}

/* --witness: a cosigner key, as a line or in a file, and not one given before. */
static void
witness_key(const char *arg, struct pc_witness_policy *w)
{
	struct pc_error err, ferr;
	char line[512];
	FILE *f;

	if (w->nkeys == PC_VERIFY_MAX_WITNESSES)
		die_usage("more than %d --witness", PC_VERIFY_MAX_WITNESSES);
	if (pc_cosig_vkey_parse(arg, &w->keys[w->nkeys], &err) != 0) {
		f = fopen(arg, "r");
		if (f == NULL)
			die_usage("--witness %s: %s, and no such file", arg, err.msg);
		if (fgets(line, sizeof(line), f) == NULL)
			line[0] = '\0';
		fclose(f);
		if (pc_cosig_vkey_parse(line, &w->keys[w->nkeys], &ferr) != 0)
			die_usage("--witness %s: %s", arg, ferr.msg);
	}
	witness_distinct(arg, w);
	w->nkeys++;
}

/* The options of the witness policy; false when c is none of them. */
static bool
witness_arg(int c, const char *arg, struct pc_witness_policy *w)
{
	switch (c) {
	case 'w':
		witness_key(arg, w);
		return true;
	case 'Q':
		w->quorum = (unsigned)arg_count("witness-quorum", arg);
		if (w->quorum == 0)
			die_usage("--witness-quorum must be at least 1");
		return true;
	case 'D':
		w->max_delay_ns = arg_duration("max-witness-delay", arg);
		return true;
	}
	return false;
}

static void
parse_args(int argc, char **argv, struct opts *o)
{
	static const struct option opts[] = {
		{ "key", required_argument, NULL, 'k' },
		{ "url", required_argument, NULL, 'u' },
		{ "ledger", required_argument, NULL, 'l' },
		{ "pod-map", required_argument, NULL, 'p' },
		{ "state", required_argument, NULL, 's' },
		{ "checkpoint", required_argument, NULL, 'c' },
		{ "json", no_argument, NULL, 'j' },
		{ "now", required_argument, NULL, 'n' },
		{ "clock-skew", required_argument, NULL, 'S' },
		{ "max-unaccounted", required_argument, NULL, 'U' },
		{ "max-gap", required_argument, NULL, 'G' },
		{ "max-checkpoint-age", required_argument, NULL, 'A' },
		{ "max-merged-windows", required_argument, NULL, 'M' },
		{ "build-id", required_argument, NULL, 'b' },
		{ "html", required_argument, NULL, 'H' },
		{ "indicators", no_argument, NULL, 'I' },
		{ "model-size", required_argument, NULL, 'z' },
		{ "pod-maps", required_argument, NULL, 'P' },
		{ "auditor-key", required_argument, NULL, 'K' },
		{ "max-map-age", required_argument, NULL, 'Y' },
		{ "assignment", required_argument, NULL, 'Z' },
		{ "witness", required_argument, NULL, 'w' },
		{ "witness-quorum", required_argument, NULL, 'Q' },
		{ "max-witness-delay", required_argument, NULL, 'D' },
		{ "attest", required_argument, NULL, 'T' },
		VF_TAP_OPTIONS,
		VF_TLS_OPTIONS,
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	struct pc_error err;
	int c;

	pc_verify_policy_init(&o->policy);
	o->max_map_age_ns = PC_VERIFY_UNLIMITED;
	o->witness.max_delay_ns = PC_VERIFY_WITNESS_DELAY_NS;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		if (policy_arg(c, optarg, &o->policy) || witness_arg(c, optarg, &o->witness) ||
		    vf_tap_arg(c, optarg, &o->taps) || vf_tls_arg(c, optarg, &tls_opts))
			continue;
		switch (c) {
		case 'k':
			o->key = optarg;
			break;
		case 'u':
			o->url = optarg;
			break;
		case 'l':
			o->ledger = optarg;
			break;
		case 'p':
			if (o->npod_maps == MAX_MAPS)
				die_usage("more than %d --pod-map", MAX_MAPS);
			o->pod_maps[o->npod_maps++] = optarg;
			break;
		case 's':
			o->state = optarg;
			break;
		case 'P':
			if (o->decl_dir != NULL || o->npod_maps == MAX_MAPS)
				die_usage("--pod-maps is given once");
			o->decl_dir = optarg;
			o->pod_maps[o->npod_maps++] = optarg;
			break;
		case 'K':
			if (o->nauditor_keys == PC_DECL_MAX_KEYS)
				die_usage("more than %d --auditor-key", PC_DECL_MAX_KEYS);
			o->auditor_keys[o->nauditor_keys++] = optarg;
			break;
		case 'Y':
			o->max_map_age_ns = arg_duration("max-map-age", optarg);
			break;
		case 'Z':
			o->assignment = optarg;
			break;
		case 'T':
			o->attest = optarg;
			break;
		case 'c':
			o->checkpoint = optarg;
			break;
		case 'j':
			o->json = true;
			break;
		case 'H':
			o->html = optarg;
			break;
		case 'I':
			o->indicators = true;
			break;
		case 'z':
			if (pc_parse_size(optarg, &o->model_bytes, &err) < 0 || o->model_bytes == 0)
				die_usage("--model-size %s: %s", optarg,
					  o->model_bytes == 0 ? "not a size above 0" : err.msg);
			o->indicators = true;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		case 'V':
			if (pc_version_print(stdout, "podcap-verify", PODCAP_VERSION, &err) != 0)
				die_io("%s", err.msg);
			exit(0);
		default:
			usage(stderr);
			exit(2);
		}
	}
	vf_tls_check(&tls_opts);
	if (optind != argc || o->key == NULL || (o->url == NULL) == (o->ledger == NULL)) {
		usage(stderr);
		exit(2);
	}
	if ((o->nauditor_keys > 0 || o->max_map_age_ns != PC_VERIFY_UNLIMITED) &&
	    o->decl_dir == NULL)
		die_usage(
		    "--auditor-key and --max-map-age check the declarations of --pod-maps DIR");
	if (o->decl_dir != NULL && o->nauditor_keys == 0)
		die_usage("--pod-maps DIR needs the auditor's key (--auditor-key)");
	if (o->witness.quorum > o->witness.nkeys)
		die_usage("--witness-quorum %u: only %zu --witness given", o->witness.quorum,
			  o->witness.nkeys);
	o->witness.skew_ns = o->policy.clock_skew_ns;
	/* the verifier always says what time it is: its pulls are kept in the state */
	if (o->policy.now_ns == 0)
		o->policy.now_ns = pc_now_ns();
}

/* ---- the declared pod maps ---- */

struct maps {
	struct pc_config cfg[MAX_MAPS];
	const struct pc_config *ptr[MAX_MAPS];
	size_t n;
};

static void
load_map(struct maps *m, const char *path)
{
	struct pc_error err;

	if (m->n == MAX_MAPS)
		die_usage("more than %d pod maps", MAX_MAPS);
	if (pc_config_load(path, &m->cfg[m->n], &err) < 0) {
		pc_error_print(&err, stderr);
		exit(2);
	}
	m->ptr[m->n] = &m->cfg[m->n];
	m->n++;
}

static int
yaml_entry(const struct dirent *e)
{
	size_t n = strlen(e->d_name);

	return e->d_name[0] != '.' && n > 5 && strcmp(e->d_name + n - 5, ".yaml") == 0;
}

/* A file, or a directory: every *.yaml in it, in name order. */
static void
load_maps(struct maps *m, const char *arg)
{
	struct dirent **names;
	char path[PC_PATH_LEN];
	DIR *d = opendir(arg);

	if (d == NULL) {
		if (errno != ENOTDIR)
			die_io("%s: %s", arg, strerror(errno));
		load_map(m, arg);
		return;
	}
	closedir(d);
	int n = scandir(arg, &names, yaml_entry, alphasort);
	if (n < 0)
		die_io("%s: %s", arg, strerror(errno));
	if (n == 0)
		die_io("%s: no *.yaml pod map in it", arg);
	for (int i = 0; i < n; i++) {
		if ((size_t)snprintf(path, sizeof(path), "%s/%s", arg, names[i]->d_name) >= sizeof(path))
			die_io("%s/%s: path too long", arg, names[i]->d_name);
		load_map(m, path);
		free(names[i]);
	}
	free(names);
}

/* The witness policy on the checkpoint verified (with its cosignature lines). */
static int
judge_witnesses(const struct pc_verify *v, const struct pc_witness_policy *p,
		struct pc_witness_report *r)
{
	uint64_t now, newest_end, age;
	size_t len = 0;
	const char *note = pc_verify_checkpoint_note(v, &len);

	pc_verify_freshness(v, &now, &newest_end, &age);
	if (note == NULL) {
		memset(r, 0, sizeof(*r));
		r->first = -1;
		r->quorum = p->quorum != 0 ? p->quorum : (unsigned)p->nkeys;
		r->nfail = 1;
		snprintf(r->fail[0], sizeof(r->fail[0]), "no verified checkpoint to judge");
		return -1;
	}
	return pc_witness_judge(p, note, len, newest_end, r);
}

/* --attest POLICY: the quotes' checks (docs/attestation.md); a bad policy is exit 2. */
static void
set_attest(struct pc_verify *v, const char *path)
{
	static struct pc_attest_policy p;
	struct pc_error err;

	if (pc_attest_policy_load(path, &p, &err) != 0) {
		fputs("podcap-verify: --attest: ", stderr);
		pc_error_print(&err, stderr);
		exit(2);
	}
	if (pc_verify_set_attest(v, &p, &err) != 0)
		die_io("--attest %s: %s", path, err.msg);
}

static void
print_attest(const struct pc_verify *v, const char *path)
{
	struct pc_verify_attest_summary s;

	if (pc_verify_attest_summary(v, &s) != 0)
		return;
	printf("\nattestation (%s): %" PRIu64 " quotes verified, %" PRIu64 " refused; %" PRIu64
	       " windows attested, %" PRIu64 " not\n",
	       path, s.quotes_ok, s.quotes_refused, s.windows_attested, s.windows_unattested);
	if (s.last_quote >= 0)
		printf("signing key: %s (record %" PRId64 ", the newest valid quote)\n",
		       s.key_kind == PC_KEY_SEALED
			   ? "sealed to the TPM's PCRs, unsealed by the signer"
			   : "a key file",
		       s.last_quote);
}

/* One appliance: the options on the command line, or those of a fleet's child. */
static int
verify_main(int argc, char **argv)
{
	static struct opts o;
	static struct maps maps;
	struct pc_verifier_key key;
	struct pc_error err;

	parse_args(argc, argv, &o);
	if (sodium_init() < 0)
		die_io("cannot initialise libsodium");
	if (pc_verifier_key_load(o.key, &key, &err) < 0)
		die_io("%s", err.msg);
	for (size_t i = 0; i < o.npod_maps; i++)
		load_maps(&maps, o.pod_maps[i]);
	static const struct pc_config *mine[MAX_MAPS];
	struct pc_verify *v =
	    pc_verify_new_maps(&key, mine, vf_taps_maps_for(&o.taps, &key, maps.ptr, maps.n, mine));
	if (v == NULL)
		die_io("out of memory");
	pc_verify_set_policy(v, &o.policy);
	if ((o.html != NULL || o.indicators) && pc_verify_keep_series(v, o.model_bytes) < 0)
		die_io("out of memory");
	if (o.decl_dir != NULL)
		vf_load_auditing(v, o.decl_dir, o.auditor_keys, o.nauditor_keys, o.max_map_age_ns);
	if (o.assignment != NULL)
		vf_load_assignment(v, o.assignment, &key);
	if (o.attest != NULL)
		set_attest(v, o.attest);
	vf_taps_begin(&o.taps, maps.ptr, maps.n, o.json);
	if (o.state != NULL) {
		size_t state_len = 0;
		char *state = read_file(o.state, &state_len);

		if (state != NULL && pc_verify_resume(v, state, state_len, &err) < 0)
			die_io("%s: refused, the state is not a valid one: %s (remove it to verify "
			       "the whole log again)", o.state, err.msg);
		free(state);
	}
	char *cp = NULL;
	size_t cp_len = 0;
	if (o.checkpoint != NULL && (cp = read_file(o.checkpoint, &cp_len)) == NULL)
		die_io("%s: %s", o.checkpoint, strerror(ENOENT));
	if (o.ledger != NULL)
		verify_ledger(v, o.ledger, cp, cp_len);
	else
		verify_url(v, o.url, cp, cp_len);
	free(cp);
	int rc = pc_verify_finish(v);
	struct pc_witness_report wr;
	int witnessed = o.witness.nkeys == 0 || judge_witnesses(v, &o.witness, &wr) == 0;
	if (o.witness.nkeys > 0)
		pc_verify_set_witness_result(v, &o.witness, &wr);
	/* what this run took on the log's word: said even when the report is read by a program */
	for (int w = 0; w < PC_VW_COUNT; w++)
		if (pc_verify_warnings(v) & (1u << w))
			fprintf(stderr, "podcap-verify: warning: %s\n",
				pc_verify_warning_text((enum pc_verify_warning)w));
	if (o.json)
		pc_verify_print_json(v, stdout);
	else
		pc_verify_print_text(v, stdout);
	if (o.witness.nkeys > 0)
		pc_witness_report_print(&o.witness, &wr, o.json ? stderr : stdout);
	if (o.attest != NULL && !o.json)
		print_attest(v, o.attest);
	if (fflush(stdout) != 0)
		die_io("stdout: %s", strerror(errno));
	if (o.html != NULL)
		o.taps.html = open_html(o.html, v);
	if (rc == 0 && !witnessed)
		rc = 1;
	if (rc == 0 && o.state != NULL) {
		char *text;
		size_t len;

		if (pc_verify_state_save(v, &text, &len) < 0)
			die_io("%s: cannot build the state", o.state);
		write_state(o.state, text, len);
		free(text);
	}
	pc_verify_free(v);
	if (o.taps.n > 0)
		rc = vf_taps_run(&o.taps, rc, &o.policy, read_tap);
	if (o.taps.html != NULL)
		close_html(o.html, o.taps.html);
	for (size_t i = 0; i < maps.n; i++)
		pc_config_free(&maps.cfg[i]);
	return rc;
}

int
main(int argc, char **argv)
{
#ifdef PC_HAVE_LIBCRYPTO
	/* the same bytes as libsodium's, faster: checked before it is used */
	if (pc_sha256_use_libcrypto() < 0)
		fprintf(stderr,
			"podcap-verify: warning: libcrypto's SHA-256 disagrees with "
			"libsodium's; hashing with libsodium\n");
#endif
	for (int i = 1; i < argc; i++)
		if (strcmp(argv[i], "--fleet") == 0)
			return vf_fleet_main(argc, argv, verify_main);
	return verify_main(argc, argv);
}
