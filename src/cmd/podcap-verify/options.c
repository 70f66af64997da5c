/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * podcap-verify's command line (cmd/podcap-verify/options.h): the table of
 * long options, one setter per option that checks its value, and the rules
 * between options. Every message names the option as the command line
 * does, also when a fleet file gave the value.
 */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buildid.h"
#include "base/clock.h"
#include "base/hex.h"
#include "base/units.h"
#include "log/cosig.h"

#include "options.h"

/* The codes of the options that have no letter of their own. */
enum {
	OPT_TAP = 0x100,
	OPT_TAP_KEY,
	OPT_TAP_CLOCK_OFFSET,
	OPT_TAP_LINE_RATE,
	OPT_MAX_CLOCK_OFFSET,
	OPT_CA = 0x180,
	OPT_PIN,
	OPT_CERT,
	OPT_CERT_KEY,
};

static const struct option long_options[] = {
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
	{ "max-clock-offset", required_argument, NULL, OPT_MAX_CLOCK_OFFSET },
	{ "max-link-down", required_argument, NULL, 'W' },
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
	{ "tap", required_argument, NULL, OPT_TAP },
	{ "tap-key", required_argument, NULL, OPT_TAP_KEY },
	{ "tap-clock-offset", required_argument, NULL, OPT_TAP_CLOCK_OFFSET },
	{ "tap-line-rate", required_argument, NULL, OPT_TAP_LINE_RATE },
	{ "ca", required_argument, NULL, OPT_CA },
	{ "pin", required_argument, NULL, OPT_PIN },
	{ "cert", required_argument, NULL, OPT_CERT },
	{ "cert-key", required_argument, NULL, OPT_CERT_KEY },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, 'V' },
	{ NULL, 0, NULL, 0 },
};

void
vf_usage(FILE *f)
{
	static const char *const text[] = {
		"usage: podcap-verify --key VERIFIER_KEY (--url http://HOST:PORT | --ledger DIR)\n",
		"           [--pod-map FILE|DIR]... [--state FILE] [--checkpoint FILE] [--json]\n",
		"           [--now TIME] [--clock-skew DURATION] [--max-unaccounted DURATION]\n",
		"           [--max-gap DURATION] [--max-checkpoint-age DURATION]\n",
		"           [--max-merged-windows N] [--max-clock-offset DURATION]\n",
		"           [--build-id HEX]... [--max-link-down DURATION]\n",
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

void
vf_die_io(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	say(fmt, ap);
	va_end(ap);
	exit(2);
}

void
vf_die_usage(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	say(fmt, ap);
	va_end(ap);
	vf_usage(stderr);
	exit(2);
}

static uint64_t
arg_duration(const char *opt, const char *arg)
{
	struct pc_error err;
	uint64_t ns;

	if (pc_parse_duration(arg, &ns, &err) < 0)
		vf_die_usage("--%s %s: %s", opt, arg, err.msg);
	return ns;
}

static uint64_t
arg_count(const char *opt, const char *arg)
{
	char *end;

	errno = 0;
	unsigned long long n = strtoull(arg, &end, 10);
	if (errno != 0 || end == arg || *end != '\0' || arg[0] == '-')
		vf_die_usage("--%s %s: not a whole number", opt, arg);
	return (uint64_t)n;
}

/* The options of the verifier's policy; false when c is none of them. */
static bool
policy_arg(int c, const char *arg, struct pc_verify_policy *p)
{
	struct pc_error err;

	switch (c) {
	case 'n':
		if (pc_utc_parse(arg, &p->now_ns, &err) < 0)
			vf_die_usage("--now: %s", err.msg);
		/* 0 is the policy's "no --now": the epoch is refused rather than taken as none */
		if (p->now_ns == 0)
			vf_die_usage("--now: '%s' is not after 1970-01-01T00:00:00Z", arg);
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
	case 'W':
		p->max_link_down_ns = arg_duration("max-link-down", arg);
		return true;
	case OPT_MAX_CLOCK_OFFSET:
		/* 0 is the policy's "the taps' offset": no clock is that good */
		p->max_clock_offset_ns = arg_duration("max-clock-offset", arg);
		if (p->max_clock_offset_ns == 0)
			vf_die_usage("--max-clock-offset %s: not more than 0", arg);
		return true;
	case 'b':
		if (p->nbuild_ids == PC_VERIFY_MAX_BUILD_IDS)
			vf_die_usage("more than %d --build-id", PC_VERIFY_MAX_BUILD_IDS);
		if (!pc_unhex(arg, strlen(arg), p->build_ids[p->nbuild_ids], 32))
			vf_die_usage("--build-id %s: not 64 hex digits", arg);
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
			vf_die_usage("--witness %s: %s+%08x has the %s of the witness %s+%08x "
				     "given before; each --witness must be another witness",
				     arg, k->name, (unsigned)k->id, same, w->keys[i].name,
				     (unsigned)w->keys[i].id);
	}
}

/* --witness: a cosigner key, as a line or in a file, and not one given before. */
void
vf_add_witness(struct vf_options *o, const char *arg)
{
	struct pc_witness_policy *w = &o->witness;
	struct pc_error err, ferr;
	char line[512];
	FILE *f;

	if (w->nkeys == PC_VERIFY_MAX_WITNESSES)
		vf_die_usage("more than %d --witness", PC_VERIFY_MAX_WITNESSES);
	if (pc_cosig_vkey_parse(arg, &w->keys[w->nkeys], &err) != 0) {
		f = fopen(arg, "r");
		if (f == NULL)
			vf_die_usage("--witness %s: %s, and no such file", arg, err.msg);
		if (fgets(line, sizeof(line), f) == NULL)
			line[0] = '\0';
		fclose(f);
		if (pc_cosig_vkey_parse(line, &w->keys[w->nkeys], &ferr) != 0)
			vf_die_usage("--witness %s: %s", arg, ferr.msg);
	}
	witness_distinct(arg, w);
	w->nkeys++;
}

/* The options of the witness policy; false when c is none of them. */
static bool
witness_arg(int c, const char *arg, struct vf_options *o)
{
	switch (c) {
	case 'w':
		vf_add_witness(o, arg);
		return true;
	case 'Q':
		o->witness.quorum = (unsigned)arg_count("witness-quorum", arg);
		if (o->witness.quorum == 0)
			vf_die_usage("--witness-quorum must be at least 1");
		return true;
	case 'D':
		o->witness.max_delay_ns = arg_duration("max-witness-delay", arg);
		return true;
	}
	return false;
}

void
vf_add_tap(struct vf_options *o, const char *source)
{
	if (o->taps.n == PC_RECONCILE_MAX_TAPS)
		vf_die_io("--tap %s: too many taps", source);
	o->taps.source[o->taps.n++] = source;
}

void
vf_add_tap_key(struct vf_options *o, const char *path)
{
	if (o->taps.nkeys == PC_RECONCILE_MAX_TAPS)
		vf_die_io("--tap-key %s: too many taps", path);
	o->taps.key[o->taps.nkeys++] = path;
}

/* The tap options; false when c is none of them. */
static bool
tap_arg(int c, const char *arg, struct vf_options *o)
{
	struct pc_reconcile_policy *p = &o->taps.policy;
	struct pc_error err;

	switch (c) {
	case OPT_TAP:
		vf_add_tap(o, arg);
		return true;
	case OPT_TAP_KEY:
		vf_add_tap_key(o, arg);
		return true;
	case OPT_TAP_CLOCK_OFFSET:
		if (pc_parse_duration(arg, &p->offset_ns, &err) < 0)
			vf_die_io("--tap-clock-offset %s: %s", arg, err.msg);
		return true;
	case OPT_TAP_LINE_RATE:
		if (pc_parse_rate(arg, &p->line_bps, &err) < 0 || p->line_bps == 0)
			vf_die_io("--tap-line-rate %s: not a rate (e.g. 100Gbps)", arg);
		return true;
	}
	return false;
}

/* The https options; false when c is none of them. */
static bool
tls_arg(int c, const char *arg, struct vf_tls *t)
{
	switch (c) {
	case OPT_CA:
		t->ca = arg;
		return true;
	case OPT_PIN:
		vf_tls_add_pin(t, arg);
		return true;
	case OPT_CERT:
		t->cert = arg;
		return true;
	case OPT_CERT_KEY:
		t->key = arg;
		return true;
	}
	return false;
}

void
vf_add_pod_map(struct vf_options *o, const char *path)
{
	if (o->npod_maps == VF_MAX_MAPS)
		vf_die_usage("more than %d --pod-map", VF_MAX_MAPS);
	o->pod_maps[o->npod_maps++] = path;
}

/* --pod-maps DIR: its maps are declared ones, and its *.sig the auditor's declarations. */
void
vf_set_declarations(struct vf_options *o, const char *dir)
{
	if (o->decl_dir != NULL || o->npod_maps == VF_MAX_MAPS)
		vf_die_usage("--pod-maps is given once");
	o->decl_dir = dir;
	o->pod_maps[o->npod_maps++] = dir;
}

void
vf_add_auditor_key(struct vf_options *o, const char *path)
{
	if (o->nauditor_keys == PC_DECL_MAX_KEYS)
		vf_die_usage("more than %d --auditor-key", PC_DECL_MAX_KEYS);
	o->auditor_keys[o->nauditor_keys++] = path;
}

/* --model-size: transfer times for a model of that size, with the indicators. */
static void
model_size(struct vf_options *o, const char *arg)
{
	struct pc_error err;

	if (pc_parse_size(arg, &o->model_bytes, &err) < 0 || o->model_bytes == 0)
		vf_die_usage("--model-size %s: %s", arg,
			     o->model_bytes == 0 ? "not a size above 0" : err.msg);
	o->indicators = true;
}

/* The source, the pod maps, the auditor's and the reports' options; false for none. */
static bool
run_arg(int c, const char *arg, struct vf_options *o)
{
	switch (c) {
	case 'k':
		o->key = arg;
		return true;
	case 'u':
		o->url = arg;
		return true;
	case 'l':
		o->ledger = arg;
		return true;
	case 'p':
		vf_add_pod_map(o, arg);
		return true;
	case 's':
		o->state = arg;
		return true;
	case 'P':
		vf_set_declarations(o, arg);
		return true;
	case 'K':
		vf_add_auditor_key(o, arg);
		return true;
	case 'Y':
		o->max_map_age_ns = arg_duration("max-map-age", arg);
		return true;
	case 'Z':
		o->assignment = arg;
		return true;
	case 'T':
		o->attest = arg;
		return true;
	case 'c':
		o->checkpoint = arg;
		return true;
	}
	return false;
}

/* The report's options; false when c is none of them. */
static bool
report_arg(int c, const char *arg, struct vf_options *o)
{
	switch (c) {
	case 'j':
		o->json = true;
		return true;
	case 'H':
		o->html = arg;
		return true;
	case 'I':
		o->indicators = true;
		return true;
	case 'z':
		model_size(o, arg);
		return true;
	}
	return false;
}

/* One option by its code; false for --help, --version and getopt's '?'. */
static bool
set_option(struct vf_options *o, int c, const char *arg)
{
	return policy_arg(c, arg, &o->policy) || witness_arg(c, arg, o) || tap_arg(c, arg, o) ||
	    tls_arg(c, arg, &o->tls) || run_arg(c, arg, o) || report_arg(c, arg, o);
}

void
vf_options_init(struct vf_options *o)
{
	memset(o, 0, sizeof(*o));
	pc_verify_policy_init(&o->policy);
	/* until --max-clock-offset says otherwise, D is the taps' (vf_options_check) */
	o->policy.max_clock_offset_ns = 0;
	o->max_map_age_ns = PC_VERIFY_UNLIMITED;
	o->witness.max_delay_ns = PC_VERIFY_WITNESS_DELAY_NS;
	o->taps.policy.offset_ns = PC_RECONCILE_DEFAULT_OFFSET_NS;
	o->taps.policy.line_bps = PC_RECONCILE_DEFAULT_LINE_BPS;
}

bool
vf_option_set(struct vf_options *o, const char *name, const char *arg)
{
	int has_arg = arg != NULL ? required_argument : no_argument;

	for (const struct option *l = long_options; l->name != NULL; l++)
		if (strcmp(l->name, name) == 0 && l->has_arg == has_arg && l->val != 'h' &&
		    l->val != 'V')
			return set_option(o, l->val, arg);
	return false;
}

void
vf_options_check(struct vf_options *o)
{
	vf_tls_check(&o->tls);
	if ((o->nauditor_keys > 0 || o->max_map_age_ns != PC_VERIFY_UNLIMITED) &&
	    o->decl_dir == NULL)
		vf_die_usage(
		    "--auditor-key and --max-map-age check the declarations of --pod-maps DIR");
	if (o->decl_dir != NULL && o->nauditor_keys == 0)
		vf_die_usage("--pod-maps DIR needs the auditor's key (--auditor-key)");
	if (o->witness.quorum > o->witness.nkeys)
		vf_die_usage("--witness-quorum %u: only %zu --witness given", o->witness.quorum,
			     o->witness.nkeys);
	o->witness.skew_ns = o->policy.clock_skew_ns;
	if (o->policy.max_clock_offset_ns == 0)
		o->policy.max_clock_offset_ns = o->taps.policy.offset_ns;
	/* the verifier always says what time it is: its pulls are kept in the state */
	if (o->policy.now_ns == 0)
		o->policy.now_ns = pc_now_ns();
}

/* --help and --version: what they print, then exit. */
static void __attribute__((noreturn)) help_or_version(int c)
{
	struct pc_error err;

	if (c == 'h') {
		vf_usage(stdout);
		exit(0);
	}
	if (pc_version_print(stdout, "podcap-verify", PODCAP_VERSION, &err) != 0)
		vf_die_io("%s", err.msg);
	exit(0);
}

void
vf_parse_args(int argc, char **argv, struct vf_options *o)
{
	int c;

	while ((c = getopt_long(argc, argv, "h", long_options, NULL)) != -1) {
		if (set_option(o, c, optarg))
			continue;
		if (c == 'h' || c == 'V')
			help_or_version(c);
		vf_usage(stderr); /* getopt said what it did not know */
		exit(2);
	}
	vf_tls_check(&o->tls);
	if (optind != argc || o->key == NULL || (o->url == NULL) == (o->ledger == NULL)) {
		vf_usage(stderr);
		exit(2);
	}
	vf_options_check(o);
}
