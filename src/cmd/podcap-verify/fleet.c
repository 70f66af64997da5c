/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * podcap-verify --fleet FILE: every appliance of a fleet file verified,
 * `jobs` at a time, each in a process of its own that runs the one-appliance
 * verifier (its own transfers, its own state file, its own failures: one
 * unreachable appliance or one hostile log cannot disturb the others'
 * results), then one report of them all, the failed appliances first.
 * The fleet-wide options are read once, by the setters the command line
 * uses (options.h); each child runs on a copy of them with its appliance's
 * fields set from the fleet file.
 *
 * Exit status: 0 when every appliance verified, 1 when one did not (each is
 * named on stderr), 2 when the fleet file or the options are bad.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/fileio.h"
#include "verify/fleet.h"
#include "verify/verify.h"

#include "fleet.h"
#include "options.h"

struct run {
	const struct pc_fleet_appliance *a;
	pid_t pid;
	int status; /* the child's exit status; 2 when it died otherwise */
	char out[PC_PATH_LEN], err[PC_PATH_LEN], html[PC_PATH_LEN];
};

struct fleet_opts {
	const char *file;
	const char *html; /* the fleet's page; each child writes its own for it */
	int jobs;         /* --jobs, 0: the file's */
	/* every appliance's options: the policy, --json, --model-size, ... */
	struct vf_options common;
};

static void fleet_die(int status, const char *fmt, ...)
    __attribute__((format(printf, 2, 3), noreturn));

static void
fleet_die(int status, const char *fmt, ...)
{
	va_list ap;

	fputs("podcap-verify: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(status);
}

bool
vf_fleet_takes_arg(const char *opt)
{
	static const char *const with[] = { "--now",
					    "--clock-skew",
					    "--max-unaccounted",
					    "--max-gap",
					    "--max-checkpoint-age",
					    "--max-merged-windows",
					    "--max-clock-offset",
					    "--max-link-down",
					    "--build-id",
					    "--model-size",
					    "--witness-quorum",
					    "--max-witness-delay",
					    "--max-map-age",
					    "--tap-clock-offset",
					    "--tap-line-rate",
					    "--ca",
					    "--pin",
					    "--cert",
					    "--cert-key" };

	for (size_t i = 0; i < sizeof(with) / sizeof(with[0]); i++)
		if (strcmp(opt, with[i]) == 0)
			return true;
	return false;
}

/* The fleet's own options, and the others through the setters: a bad value is exit 2, once. */
static void
parse_fleet_args(int argc, char **argv, struct fleet_opts *o)
{
	vf_options_init(&o->common);
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (strcmp(a, "--fleet") == 0 && i + 1 < argc) {
			o->file = argv[++i];
		} else if (strcmp(a, "--html") == 0 && i + 1 < argc) {
			o->html = argv[++i];
		} else if (strcmp(a, "--json") == 0) {
			o->common.json = true;
		} else if (strcmp(a, "--jobs") == 0 && i + 1 < argc) {
			char *end;
			long j = strtol(argv[++i], &end, 10);
			if (*end != '\0' || j < 1 || j > PC_FLEET_MAX_JOBS)
				fleet_die(2, "--jobs %s: not a whole number from 1 to %d", argv[i],
					  PC_FLEET_MAX_JOBS);
			o->jobs = (int)j;
		} else if (strcmp(a, "--indicators") == 0) {
			vf_option_set(&o->common, a + 2, NULL);
		} else if (vf_fleet_takes_arg(a) && i + 1 < argc) {
			vf_option_set(&o->common, a + 2, argv[++i]);
		} else {
			fleet_die(
			    2,
			    "%s: not an option with --fleet (the fleet file names each "
			    "appliance's key, source, pod maps, state, witnesses, attestation "
			    "policy, declarations and taps)",
			    a);
		}
	}
	if (o->file == NULL)
		fleet_die(2, "--fleet needs a file");
	vf_tls_check(&o->common.tls);
}

/*
 * The fleet-wide options that concern appliance a: the witness, map-age
 * and tap options only an appliance whose entry names witnesses,
 * declarations or taps (for another, the rules between options would
 * refuse them).
 */
static void
scope(struct vf_options *o, const struct pc_fleet_appliance *a)
{
	if (a->nwitnesses == 0) {
		o->witness.quorum = 0;
		o->witness.max_delay_ns = PC_VERIFY_WITNESS_DELAY_NS;
	}
	if (a->declarations == NULL)
		o->max_map_age_ns = PC_VERIFY_UNLIMITED;
	if (a->ntaps == 0) {
		o->taps.policy.offset_ns = PC_RECONCILE_DEFAULT_OFFSET_NS;
		o->taps.policy.line_bps = PC_RECONCILE_DEFAULT_LINE_BPS;
	}
}

/*
 * What the fleet file says this appliance's evidence must show beyond its
 * own log: its witnesses, its TPM policy, the auditor's declarations and
 * draw, and the verifier's taps on its links.
 */
static void
trust(struct vf_options *o, const struct pc_fleet_appliance *a)
{
	for (size_t i = 0; i < a->nwitnesses; i++)
		vf_add_witness(o, a->witnesses[i]);
	o->attest = a->attest;
	if (a->declarations != NULL)
		vf_set_declarations(o, a->declarations);
	for (size_t i = 0; i < a->nauditor_keys; i++)
		vf_add_auditor_key(o, a->auditor_keys[i]);
	o->assignment = a->assignment;
	for (size_t i = 0; i < a->ntaps; i++) {
		vf_add_tap(o, a->taps[i].url != NULL ? a->taps[i].url : a->taps[i].ledger);
		vf_add_tap_key(o, a->taps[i].key);
	}
}

/*
 * The appliance's TLS to its endpoint and its taps': what its entry names
 * replaces the fleet-wide --ca, every --pin, and --cert with --cert-key.
 */
static void
tls(struct vf_options *o, const struct pc_fleet_appliance *a)
{
	if (a->ca != NULL)
		o->tls.ca = a->ca;
	if (a->npins > 0)
		o->tls.npins = 0;
	for (size_t i = 0; i < a->npins; i++)
		vf_tls_add_pin(&o->tls, a->pins[i]);
	if (a->cert != NULL) {
		o->tls.cert = a->cert;
		o->tls.key = a->cert_key;
	}
}

void
vf_fleet_appliance_options(struct vf_options *o, const struct pc_fleet_appliance *a,
			   const char *html)
{
	o->key = a->key;
	o->url = a->url;
	o->ledger = a->ledger;
	for (size_t i = 0; i < a->npod_maps; i++)
		vf_add_pod_map(o, a->pod_maps[i]);
	o->state = a->state;
	scope(o, a);
	trust(o, a);
	tls(o, a);
	o->html = html;
	vf_options_check(o);
}

/* The child: stdout and stderr to their files, then the one-appliance verifier. */
static void __attribute__((noreturn))
child(struct run *r, const struct fleet_opts *fo, vf_run_fn run)
{
	static struct vf_options o;
	int out = open(r->out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	int err = open(r->err, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

	if (out < 0 || err < 0 || dup2(out, 1) < 0 || dup2(err, 2) < 0)
		_exit(2);
	o = fo->common;
	vf_fleet_appliance_options(&o, r->a, fo->html != NULL ? r->html : NULL);
	fflush(NULL);
	exit(run(&o));
}

static void
start(struct run *r, const struct fleet_opts *o, vf_run_fn run)
{
	fflush(NULL);
	r->pid = fork();
	if (r->pid < 0)
		fleet_die(2, "fork: %s", strerror(errno));
	if (r->pid == 0)
		child(r, o, run);
}

/* Waits for one child; its run. */
static struct run *
reap(struct run *runs, size_t n)
{
	int st;
	pid_t pid;

	while ((pid = wait(&st)) < 0 && errno == EINTR)
		;
	if (pid < 0)
		fleet_die(2, "wait: %s", strerror(errno));
	for (size_t i = 0; i < n; i++)
		if (runs[i].pid == pid) {
			runs[i].status = WIFEXITED(st) ? WEXITSTATUS(st) : 2;
			runs[i].pid = 0;
			return &runs[i];
		}
	return NULL;
}

/* ---- the reports ---- */

/* What a child wrote to one of its files (empty when it wrote none). */
static char *
slurp(const char *path, size_t *len)
{
	char *buf = pc_read_file(path, SIZE_MAX - 2, len);

	if (buf == NULL && errno == ENOENT && (buf = calloc(1, 1)) != NULL)
		*len = 0;
	if (buf == NULL)
		fleet_die(2, "%s: %s", path, strerror(errno));
	return buf;
}

static const char *
verdict(const struct run *r)
{
	return r->status == 0 ? "verified" : r->status == 1 ? "FAILED" : "ERROR";
}

static const char *
source(const struct run *r)
{
	return r->a->url != NULL ? r->a->url : r->a->ledger;
}

static void
print_text(FILE *f, struct run *const *order, size_t n, size_t nfailed)
{
	for (size_t i = 0; i < n; i++) {
		const struct run *r = order[i];
		size_t len;
		char *out = slurp(r->out, &len), *err = slurp(r->err, &len);

		fprintf(f, "== %s (%s): %s\n%s", r->a->name, source(r), verdict(r), out);
		if (r->status == 2)
			fprintf(f, "%s", err);
		fputc('\n', f);
		free(out);
		free(err);
	}
	fprintf(f, "fleet: %zu appliance%s, %zu verified, %zu failed", n, n == 1 ? "" : "s",
		n - nfailed, nfailed);
	for (size_t i = 0; i < nfailed; i++)
		fprintf(f, "%s%s", i ? ", " : ": ", order[i]->a->name);
	fputc('\n', f);
}

static void
print_json(FILE *f, const char *file, struct run *const *order, size_t n, size_t nfailed)
{
	fprintf(f, "{\n  \"fleet\": ");
	pc_json_string(f, file);
	fprintf(f, ",\n  \"appliances_total\": %zu,\n  \"failed_total\": %zu,\n  \"failed\": [", n,
		nfailed);
	for (size_t i = 0; i < nfailed; i++) {
		fputs(i ? ", " : "", f);
		pc_json_string(f, order[i]->a->name);
	}
	fprintf(f, "],\n  \"appliances\": [");
	for (size_t i = 0; i < n; i++) {
		const struct run *r = order[i];
		size_t len, elen;
		char *out = slurp(r->out, &len), *err = slurp(r->err, &elen);

		while (len > 0 && out[len - 1] == '\n')
			out[--len] = '\0';
		fprintf(f, "%s\n    {\"name\": ", i ? "," : "");
		pc_json_string(f, r->a->name);
		fprintf(f, ", \"source\": ");
		pc_json_string(f, source(r));
		fprintf(f, ", \"status\": \"%s\", \"exit\": %d, \"stderr\": ",
			r->status == 0       ? "verified"
			    : r->status == 1 ? "failed"
					     : "error",
			r->status);
		pc_json_string(f, err);
		fprintf(f, ",\n     \"report\": %s}", r->status == 2 || len == 0 ? "null" : out);
		free(out);
		free(err);
	}
	fprintf(f, "\n  ],\n  \"ok\": %s\n}\n", nfailed == 0 ? "true" : "false");
}

/* What a child wrote to one of its files, or an empty string when path is NULL. */
static char *
slurp_or_empty(const char *path, size_t *len)
{
	char *buf;

	if (path != NULL)
		return slurp(path, len);
	if ((buf = calloc(1, 1)) == NULL)
		fleet_die(2, "out of memory");
	*len = 0;
	return buf;
}

/* The <article> of the appliance's own page, which its child wrote. */
static void
html_article(FILE *f, const struct vf_fleet_row *r)
{
	size_t len;
	char *page = slurp_or_empty(r->html, &len), *from = strstr(page, "<article"),
	     *to = from != NULL ? strstr(from, "</article>\n") : NULL;

	if (to != NULL) {
		fwrite(from, 1, (size_t)(to - from) + 11, f);
	} else {
		char *err = slurp_or_empty(r->err, &len);

		fputs("<article class=\"appliance\" data-ok=\"false\"><section class=\"verdict "
		      "failed\"><div class=\"line\">could not verify: <pre>",
		      f);
		pc_html_escape(f, err);
		fputs("</pre></div></section></article>\n", f);
		free(err);
	}
	free(page);
}

static const char *
row_verdict(const struct vf_fleet_row *r)
{
	return r->status == 0 ? "verified" : r->status == 1 ? "FAILED" : "ERROR";
}

void
vf_fleet_page(FILE *f, const struct vf_fleet_row *rows, size_t n, size_t nfailed)
{
	char title[128];

	snprintf(title, sizeof(title), "podcap fleet verification: %zu appliance%s, %zu failed", n,
		 n == 1 ? "" : "s", nfailed);
	pc_html_begin(f, title);
	fprintf(f,
		"<section id=\"fleet\" class=\"verdict %s\">\n<div class=\"line\">%s</div>\n"
		"<table id=\"fleet-table\">\n<tr><th>appliance</th><th>source</th><th>verdict</th>"
		"</tr>\n",
		nfailed ? "failed" : "ok",
		nfailed ? "FAILED: some appliances did not verify" : "every appliance verified");
	for (size_t i = 0; i < n; i++) {
		fprintf(
		    f,
		    "<tr class=\"fleet-row\" data-name=\"%s\" data-status=\"%d\"><td>%s</td><td>",
		    rows[i].name, rows[i].status, rows[i].name);
		pc_html_escape(f, rows[i].source);
		fprintf(f, "</td><td class=\"%s\">%s</td></tr>\n", rows[i].status ? "bad" : "held",
			row_verdict(&rows[i]));
	}
	fputs("</table>\n</section>\n", f);
	for (size_t i = 0; i < n; i++) {
		fprintf(f,
			"<section class=\"fleet-appliance\" data-name=\"%s\">\n<h2>%s: %s</h2>\n",
			rows[i].name, rows[i].name, row_verdict(&rows[i]));
		html_article(f, &rows[i]);
		fputs("</section>\n", f);
	}
	pc_html_end(f);
}

static void
print_html(const char *path, struct run *const *order, size_t n, size_t nfailed)
{
	FILE *f = fopen(path, "w");
	struct vf_fleet_row *rows = calloc(n, sizeof(*rows));

	if (f == NULL)
		fleet_die(2, "%s: %s", path, strerror(errno));
	if (rows == NULL)
		fleet_die(2, "out of memory");
	for (size_t i = 0; i < n; i++)
		rows[i] = (struct vf_fleet_row){ .name = order[i]->a->name,
						 .source = source(order[i]),
						 .status = order[i]->status,
						 .html = order[i]->html,
						 .err = order[i]->err };
	vf_fleet_page(f, rows, n, nfailed);
	free(rows);
	if (ferror(f) || fclose(f) != 0)
		fleet_die(2, "%s: %s", path, strerror(errno));
}

/* Every appliance verified, at most jobs at a time. */
static void
run_all(struct run *runs, size_t n, size_t jobs, const struct fleet_opts *o, vf_run_fn run)
{
	size_t running = 0, next = 0;

	while (next < n || running > 0) {
		if (next < n && running < jobs) {
			start(&runs[next++], o, run);
			running++;
			continue;
		}
		if (reap(runs, n) != NULL)
			running--;
	}
}

/* The failed first, each group in the file's order (made after the children exit). */
static struct run **
failed_first(struct run *runs, size_t n, size_t *nfailed)
{
	struct run **order = calloc(n, sizeof(*order));
	size_t k = 0;

	if (order == NULL)
		fleet_die(2, "out of memory");
	for (size_t i = 0; i < n; i++)
		if (runs[i].status != 0)
			order[k++] = &runs[i];
	*nfailed = k;
	for (size_t i = 0; i < n; i++)
		if (runs[i].status == 0)
			order[k++] = &runs[i];
	return order;
}

/* The fleet's report, text or JSON, and its page; each failed appliance named on stderr. */
static void
report(const struct fleet_opts *o, struct run *const *order, size_t n, size_t nfailed)
{
	if (o->common.json)
		print_json(stdout, o->file, order, n, nfailed);
	else
		print_text(stdout, order, n, nfailed);
	if (o->html != NULL)
		print_html(o->html, order, n, nfailed);
	for (size_t i = 0; i < nfailed; i++)
		fprintf(stderr, "podcap-verify: fleet: appliance %s %s\n", order[i]->a->name,
			order[i]->status == 1 ? "failed verification" : "could not be verified");
}

int
vf_fleet_main(int argc, char **argv, vf_run_fn run)
{
	static struct fleet_opts o;
	struct pc_fleet fl;
	struct pc_error err;
	char tmp[] = "/tmp/podcap-fleet.XXXXXX";
	size_t nfailed;

	parse_fleet_args(argc, argv, &o);
	if (pc_fleet_load(o.file, &fl, &err) < 0) {
		pc_error_print(&err, stderr);
		return 2;
	}
	if (mkdtemp(tmp) == NULL)
		fleet_die(2, "mkdtemp: %s", strerror(errno));
	/* one now for the whole fleet, unless --now gave it */
	if (o.common.policy.now_ns == 0)
		o.common.policy.now_ns = pc_now_ns();

	struct run *runs = calloc(fl.n, sizeof(*runs));
	if (runs == NULL)
		fleet_die(2, "out of memory");
	for (size_t i = 0; i < fl.n; i++) {
		runs[i].a = &fl.a[i];
		snprintf(runs[i].out, PC_PATH_LEN, "%s/%zu.out", tmp, i);
		snprintf(runs[i].err, PC_PATH_LEN, "%s/%zu.err", tmp, i);
		snprintf(runs[i].html, PC_PATH_LEN, "%s/%zu.html", tmp, i);
	}
	run_all(runs, fl.n, o.jobs > 0 ? (size_t)o.jobs : fl.jobs, &o, run);
	struct run **order = failed_first(runs, fl.n, &nfailed);
	report(&o, order, fl.n, nfailed);
	for (size_t i = 0; i < fl.n; i++) {
		unlink(runs[i].out);
		unlink(runs[i].err);
		unlink(runs[i].html);
	}
	rmdir(tmp);
	free(order);
	free(runs);
	pc_fleet_free(&fl);
	if (fflush(stdout) != 0)
		fleet_die(2, "stdout: %s", strerror(errno));
	return nfailed > 0 ? 1 : 0;
}
