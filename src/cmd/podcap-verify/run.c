/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * podcap-verify's one-appliance run (run.h): the options (options.c) into
 * one run of the verifier over its source (fetch.c), with the auditor's
 * inputs (audit.c), the witnesses, the attestation policy and the taps
 * (taps.c), then the reports and the state. podcap-monitor compiles it
 * too: each of its pulls is this run, and what it found is also handed
 * back in a struct vf_outcome.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <libgen.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sodium.h>

#include "base/fileio.h"
#include "base/keys.h"
#include "log/record.h"
#include "podmap/config.h"
#include "verify/attest.h"
#include "verify/verify.h"
#include "verify/witness.h"

#include "audit.h"
#include "fetch.h"
#include "options.h"
#include "run.h"
#include "taps.h"

#define MAX_STATE ((size_t)256 << 20) /* largest --state file read */

/* ---- the state file ---- */

/* Reads a file; its contents (malloc'ed) and length, or NULL if it does not exist. */
static char *
read_file(const char *path, size_t *len)
{
	char *buf = pc_read_file(path, MAX_STATE, len);

	if (buf == NULL && errno == EFBIG)
		vf_die_io("%s: larger than %zu bytes", path, MAX_STATE);
	if (buf == NULL && errno != ENOENT)
		vf_die_io("%s: %s", path, strerror(errno));
	return buf;
}

/* Replaces the state atomically: a crash leaves the old state or the new, whole. */
static void
write_state(const char *path, const char *text, size_t len)
{
	char dirbuf[PC_PATH_LEN], basebuf[PC_PATH_LEN];

	if ((size_t)snprintf(dirbuf, sizeof(dirbuf), "%s", path) >= sizeof(dirbuf))
		vf_die_io("%s: path too long", path);
	snprintf(basebuf, sizeof(basebuf), "%s", path);
	int dfd = open(dirname(dirbuf), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0 || pc_replace_file_at(dfd, basename(basebuf), text, len, 0644) < 0)
		vf_die_io("%s: %s", path, strerror(errno));
	close(dfd);
}

/* --state: resume from what a run verified before, if it was saved; a bad one is exit 2. */
static void
resume(struct pc_verify *v, const char *path)
{
	struct pc_error err;
	size_t state_len = 0;
	char *state = read_file(path, &state_len);

	if (state != NULL && pc_verify_resume(v, state, state_len, &err) < 0)
		vf_die_io("%s: refused, the state is not a valid one: %s (remove it to verify "
			  "the whole log again)",
			  path, err.msg);
	free(state);
}

static void
save_state(const struct pc_verify *v, const char *path)
{
	char *text;
	size_t len;

	if (pc_verify_state_save(v, &text, &len) < 0)
		vf_die_io("%s: cannot build the state", path);
	write_state(path, text, len);
	free(text);
}

static void
close_html(const char *path, FILE *f)
{
	pc_html_end(f);
	if (ferror(f) || fclose(f) != 0)
		vf_die_io("%s: %s", path, strerror(errno));
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
		vf_die_io("%s: %s", path, strerror(errno));
	pc_verify_html_open(v, f);
	return f;
}

/* ---- the declared pod maps ---- */

struct maps {
	struct pc_config cfg[VF_MAX_MAPS];
	const struct pc_config *ptr[VF_MAX_MAPS];
	size_t n;
};

static void
load_map(struct maps *m, const char *path)
{
	struct pc_error err;

	if (m->n == VF_MAX_MAPS)
		vf_die_usage("more than %d pod maps", VF_MAX_MAPS);
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
			vf_die_io("%s: %s", arg, strerror(errno));
		load_map(m, arg);
		return;
	}
	closedir(d);
	int n = scandir(arg, &names, yaml_entry, alphasort);
	if (n < 0)
		vf_die_io("%s: %s", arg, strerror(errno));
	if (n == 0)
		vf_die_io("%s: no *.yaml pod map in it", arg);
	for (int i = 0; i < n; i++) {
		if ((size_t)snprintf(path, sizeof(path), "%s/%s", arg, names[i]->d_name) >=
		    sizeof(path))
			vf_die_io("%s/%s: path too long", arg, names[i]->d_name);
		load_map(m, path);
		free(names[i]);
	}
	free(names);
}

/* ---- the evidence beyond the log ---- */

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
		vf_die_io("--attest %s: %s", path, err.msg);
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

/* ---- one appliance ---- */

/* The verifier of the log key names, told everything o asks of that log. */
static struct pc_verify *
new_verifier(const struct vf_options *o, const struct pc_verifier_key *key, const struct maps *maps)
{
	static const struct pc_config *mine[VF_MAX_MAPS];
	struct pc_verify *v = pc_verify_new_maps(
	    key, mine, vf_taps_maps_for(&o->taps, key, maps->ptr, maps->n, mine));

	if (v == NULL)
		vf_die_io("out of memory");
	pc_verify_set_policy(v, &o->policy);
	if ((o->html != NULL || o->indicators) && pc_verify_keep_series(v, o->model_bytes) < 0)
		vf_die_io("out of memory");
	if (o->decl_dir != NULL)
		vf_load_auditing(v, o->decl_dir, o->auditor_keys, o->nauditor_keys,
				 o->max_map_age_ns);
	if (o->assignment != NULL)
		vf_load_assignment(v, o->assignment, key);
	if (o->attest != NULL)
		set_attest(v, o->attest);
	return v;
}

/* The log from --ledger or --url, as of --checkpoint when given. */
static void
read_log(struct pc_verify *v, const struct vf_options *o)
{
	char *cp = NULL;
	size_t cp_len = 0;

	if (o->checkpoint != NULL && (cp = read_file(o->checkpoint, &cp_len)) == NULL)
		vf_die_io("%s: %s", o->checkpoint, strerror(ENOENT));
	if (o->ledger != NULL)
		vf_fetch_ledger(v, o->ledger, cp, cp_len);
	else
		vf_fetch_url(v, o->url, &o->tls, cp, cp_len);
	free(cp);
}

/* What this run took on the log's word: said even when the report is read by a program. */
static void
print_warnings(const struct pc_verify *v)
{
	for (int w = 0; w < PC_VW_COUNT; w++)
		if (pc_verify_warnings(v) & (1u << w))
			fprintf(stderr, "podcap-verify: warning: %s\n",
				pc_verify_warning_text((enum pc_verify_warning)w));
}

/* The shaper's report, its witnesses' (into wr) and its quotes'; false when the witnesses' rule failed. */
static bool
report(struct pc_verify *v, const struct vf_options *o, struct pc_witness_report *wr)
{
	bool witnessed = o->witness.nkeys == 0 || judge_witnesses(v, &o->witness, wr) == 0;

	if (o->witness.nkeys > 0)
		pc_verify_set_witness_result(v, &o->witness, wr);
	print_warnings(v);
	if (o->json)
		pc_verify_print_json(v, stdout);
	else
		pc_verify_print_text(v, stdout);
	if (o->witness.nkeys > 0)
		pc_witness_report_print(&o->witness, wr, o->json ? stderr : stdout);
	if (o->attest != NULL && !o->json)
		print_attest(v, o->attest);
	if (fflush(stdout) != 0)
		vf_die_io("stdout: %s", strerror(errno));
	return witnessed;
}

/* The largest share of cap x window any pod of the maps used in one window, in 1/1000. */
static uint64_t
peak_permille(const struct pc_verify *v)
{
	uint64_t peak = 0;
	struct pc_verify_totals t;

	for (size_t m = 0; m < pc_verify_nmaps(v); m++) {
		const struct pc_config *cfg = pc_verify_map_at(v, m);

		for (unsigned p = 0; p < cfg->npods; p++)
			for (int d = 0; d < 2; d++)
				if (pc_verify_pod_totals(v, cfg->pods[p].id, (enum pc_dir)d, &t) ==
					0 &&
				    t.peak_permille != UINT64_MAX && t.peak_permille > peak)
					peak = t.peak_permille;
	}
	return peak;
}

/* What the run found, for podcap-monitor: read from v before it is freed. */
static void
observe(const struct pc_verify *v, const struct vf_options *o, const struct pc_witness_report *wr,
	struct vf_outcome *out)
{
	struct pc_verify_attest_summary s;
	uint64_t now;

	out->size = pc_verify_size(v);
	out->resumed_at = pc_verify_resume_at(v);
	/* the count runs from record 0: the resumed ones are counted, not read */
	out->records =
	    pc_verify_nrecords(v) > out->resumed_at ? pc_verify_nrecords(v) - out->resumed_at : 0;
	pc_verify_freshness(v, &now, &out->newest_end_ns, &out->age_ns);
	for (int c = 0; c < PC_VC_COUNT; c++)
		out->failures[c] = pc_verify_failure_sum(v, (enum pc_verify_check)c)->count;
	out->witness_keys = (unsigned)o->witness.nkeys;
	if (o->witness.nkeys > 0) {
		out->witnesses_valid = wr->nvalid;
		out->witness_quorum = wr->quorum;
	}
	out->attest = o->attest != NULL && pc_verify_attest_summary(v, &s) == 0;
	if (out->attest) {
		out->windows_attested = s.windows_attested;
		out->windows_unattested = s.windows_unattested;
	}
	out->peak_permille = peak_permille(v);
}

int
vf_run(const struct vf_options *o, struct vf_outcome *out)
{
	static struct maps maps;
	struct pc_verifier_key key;
	struct pc_witness_report wr;
	struct pc_error err;
	FILE *html = NULL;

	if (sodium_init() < 0)
		vf_die_io("cannot initialise libsodium");
	if (pc_verifier_key_load(o->key, &key, &err) < 0)
		vf_die_io("%s", err.msg);
	for (size_t i = 0; i < o->npod_maps; i++)
		load_maps(&maps, o->pod_maps[i]);
	struct pc_verify *v = new_verifier(o, &key, &maps);
	vf_taps_begin(&o->taps, maps.ptr, maps.n, o->json);
	if (o->state != NULL)
		resume(v, o->state);
	read_log(v, o);
	int rc = pc_verify_finish(v);
	memset(&wr, 0, sizeof(wr));
	bool witnessed = report(v, o, &wr);
	if (o->html != NULL)
		html = open_html(o->html, v);
	if (rc == 0 && !witnessed)
		rc = 1;
	if (rc == 0 && o->state != NULL)
		save_state(v, o->state);
	if (out != NULL) {
		observe(v, o, &wr, out);
		out->witnessed = witnessed;
	}
	pc_verify_free(v);
	if (o->taps.n > 0) {
		int shaper = rc;

		rc = vf_taps_run(&o->taps, rc, &o->policy, &o->tls, html);
		if (out != NULL) {
			out->taps = (unsigned)o->taps.n;
			out->taps_agree = rc <= shaper;
		}
	}
	if (html != NULL)
		close_html(o->html, html);
	for (size_t i = 0; i < maps.n; i++)
		pc_config_free(&maps.cfg[i]);
	if (out != NULL)
		out->rc = rc;
	return rc;
}
