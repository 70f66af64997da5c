/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * podcap-verify's taps: verifying each tap's log with its own key, and the reconciliation's report after the shaper's. The tap's
 * own report (its envelope check included) is the verifier's evidence
 * that the cap held; the reconciliation ties it to the shaper's log.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/keys.h"

#include "fetch.h"
#include "taps.h"

static struct pc_reconcile *rc;
static int sink = -1; /* -1: the shaper's log; else the tap being read */
static bool json_out;

static void __attribute__((noreturn))
fail(int status, const char *what, const char *arg, const char *why)
{
	fprintf(stderr, "podcap-verify: %s %s: %s\n", what, arg, why);
	exit(status);
}

void
vf_taps_begin(const struct vf_taps *o, const struct pc_config *const *maps, size_t nmaps, bool json)
{
	if (o->n == 0)
		return;
	if (o->n != o->nkeys)
		fail(2, "--tap", o->source[0], "give each --tap its --tap-key, in the same order");
	rc = pc_reconcile_new(&o->policy, maps, nmaps);
	if (rc == NULL)
		fail(2, "--tap", o->source[0], "out of memory");
	json_out = json;
	if (json)
		fputs("{\"shaper\":", stdout);
}

size_t
vf_taps_maps_for(const struct vf_taps *o, const struct pc_verifier_key *key,
		 const struct pc_config *const *maps, size_t n, const struct pc_config **out)
{
	size_t k = 0;
	const char *id = strncmp(key->name, "podcap/", 7) == 0 ? key->name + 7 : key->name;

	for (size_t i = 0; i < n; i++)
		if (o->n == 0 || strcmp(maps[i]->origin, key->name) == 0 ||
		    (maps[i]->origin[0] == '\0' && strcmp(maps[i]->appliance_id, id) == 0))
			out[k++] = maps[i];
	return k;
}

void
vf_take_record(struct pc_verify *v, const uint8_t *rec, size_t len, const uint8_t *leaf)
{
	pc_verify_record(v, rec, len, leaf);
	if (rc == NULL)
		return;
	if (sink < 0)
		pc_reconcile_shaper(rc, rec, len);
	else
		pc_reconcile_tap_record(rc, sink, rec, len);
}

/*
 * Every failure of v is of a check of what passed against the cap (the
 * envelope, the window promise): the log itself is sound.
 */
static bool
only_cap_checks(const struct pc_verify *v)
{
	uint64_t n = pc_verify_nfailures(v);

	if (n == 0)
		return false;
	for (int c = 0; c < PC_VC_COUNT; c++)
		if (c != PC_VC_ENVELOPE && c != PC_VC_WINDOW &&
		    pc_verify_failure_sum(v, (enum pc_verify_check)c)->count)
			return false;
	return true;
}

/* Why v's log is no evidence: its first failure. */
static void
failed_why(const struct pc_verify *v, char *why, size_t len)
{
	const struct pc_verify_failure *f = pc_verify_failure_at(v, 0);

	if (f == NULL)
		snprintf(why, len, "its log failed verification with its key");
	else
		snprintf(why, len, "its log failed verification with its key: %s: %s",
			 pc_verify_check_name(f->check), f->msg);
}

/*
 * The tap's own verification: its key, the declared maps, the verifier's
 * policy. Its status; why it failed in why.
 */
static int
verify_tap(const struct vf_taps *o, size_t i, const struct pc_verify_policy *policy,
	   const struct vf_tls *tls, const struct pc_config *const *maps, size_t nmaps, FILE *out,
	   char *why, size_t why_len)
{
	struct pc_verifier_key key;
	struct pc_error err;

	if (pc_verifier_key_load(o->key[i], &key, &err) < 0)
		fail(2, "--tap-key", o->key[i], err.msg);
	const struct pc_config **mine = calloc(nmaps ? nmaps : 1, sizeof(*mine));
	if (mine == NULL)
		fail(2, "--tap", o->source[i], "out of memory");
	struct pc_verify *v =
	    pc_verify_new_maps(&key, mine, vf_taps_maps_for(o, &key, maps, nmaps, mine));
	free(mine);
	if (v == NULL)
		fail(2, "--tap", o->source[i], "out of memory");
	pc_verify_set_policy(v, policy);
	sink = pc_reconcile_tap(rc, o->source[i]);
	vf_fetch_log(v, o->source[i], tls);
	int status = pc_verify_finish(v);
	if (json_out)
		pc_verify_print_json(v, out);
	else
		pc_verify_print_text(v, out);
	if (status != 0 && only_cap_checks(v)) {
		/*
		 * A tap's windows lag the shaper's bucket by up to the clock offset,
		 * and the direction it sees before the shaper is what was offered,
		 * which no cap holds: the strict envelope is not the tap's rule. The
		 * reconciliation checks its passed direction with the offset allowed.
		 */
		if (!json_out)
			printf(
			    "tap %zu: the envelope and window checks above are the shaper's "
			    "rules; the tap's envelope is checked with the clock offset allowed, "
			    "below\n",
			    i + 1);
		status = 0;
	}
	if (status != 0)
		failed_why(v, why, why_len);
	pc_verify_free(v);
	sink = -1;
	return status;
}

int
vf_taps_run(const struct vf_taps *o, int status, const struct pc_verify_policy *policy,
	    const struct vf_tls *tls, FILE *html)
{
	const struct pc_config *const *maps = pc_reconcile_maps(rc, NULL);
	size_t nmaps;
	char why[PC_RECONCILE_WHY_LEN];

	(void)pc_reconcile_maps(rc, &nmaps);
	if (status != 0)
		pc_reconcile_shaper_failed(rc);
	if (json_out)
		printf(",\"taps_total\":%zu,\"taps\":[", o->n);
	for (size_t i = 0; i < o->n; i++) {
		if (json_out)
			fputs(i ? "," : "", stdout);
		else
			printf("\ntap %zu: %s (verified with its own key)\n", i + 1, o->source[i]);
		int s = verify_tap(o, i, policy, tls, maps, nmaps, stdout, why, sizeof(why));
		struct pc_error err;
		if (s == 0 && pc_reconcile_tap_pairs(rc, (int)i, &err) < 0) {
			/* a shaper's log given as a tap's, or another appliance's tap */
			snprintf(why, sizeof(why), "%s", err.msg);
			s = 1;
		}
		if (s != 0) {
			/* a tap log that does not verify is no evidence: nothing is reconciled with it */
			fprintf(stderr, "podcap-verify: --tap %s: %s\n", o->source[i], why);
			pc_reconcile_tap_refuse(rc, (int)i, why);
			status = status ? status : s;
		}
	}
	if (pc_reconcile_finish(rc) != 0 && status == 0)
		status = 1;
	if (json_out) {
		char line[2 * PC_RECONCILE_WHY_LEN];

		fputs("],\"reconciliation\":", stdout);
		pc_reconcile_print_json(rc, stdout);
		/* the whole run's verdict, as the exit status gives it */
		pc_reconcile_result_line(rc, line, sizeof(line));
		printf(",\"ok\":%s,\"result\":", status == 0 ? "true" : "false");
		pc_json_string(stdout, line);
		fputs("}\n", stdout);
	} else {
		pc_reconcile_print_text(rc, stdout);
	}
	if (html != NULL)
		pc_reconcile_print_html(rc, html);
	if (fflush(stdout) != 0)
		fail(2, "stdout", "", strerror(errno));
	pc_reconcile_free(rc);
	rc = NULL;
	return status;
}
