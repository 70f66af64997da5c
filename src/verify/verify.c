/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The verifier (docs/verify.md): its lifecycle, the checkpoint (check 1),
 * each record's way in (check 4: it decodes and names this appliance)
 * before the checks take it (check.h, in table order), the end of the log,
 * and the results.
 *
 * It trusts nothing but the verifier key (and, when given, the pod map and
 * the last checkpoint it trusted): every claim in the log is recomputed. It
 * streams: one pass over the records, memory bounded by the number of pods,
 * not by the length of the log.
 */
#include <stdlib.h>
#include <string.h>

#include "podmap/config.h"
#include "base/clock.h"
#include "base/id.h"
#include "log/merkle.h"
#include "log/note.h"
#include "log/record.h"
#include "log/origin.h"
#include "verify.h"

#include "verify_impl.h"

/* ---- lifecycle ---- */

struct pc_verify *
pc_verify_new_maps(const struct pc_verifier_key *key, const struct pc_config *const *maps,
		   size_t n)
{
	struct pc_verify *v = calloc(1, sizeof(*v));

	if (v == NULL)
		return NULL;
	int found = pcv_findings_init(&v->found);
	v->maps = calloc(n ? n : 1, sizeof(*v->maps));
	v->map_digest = calloc(n ? n : 1, sizeof(*v->map_digest));
	if (found < 0 || v->maps == NULL || v->map_digest == NULL || pcv_checks_new(v) < 0) {
		pc_verify_free(v);
		return NULL;
	}
	v->key = *key;
	for (size_t i = 0; i < n; i++) {
		v->maps[i] = maps[i];
		pc_config_digest(maps[i], v->map_digest[i]);
	}
	v->nmaps = n;
	pc_verify_policy_init(&v->policy);
	return v;
}

struct pc_verify *
pc_verify_new(const struct pc_verifier_key *key, const struct pc_config *podmap)
{
	return pc_verify_new_maps(key, &podmap, podmap != NULL ? 1 : 0);
}

void
pc_verify_free(struct pc_verify *v)
{
	if (v == NULL)
		return;
	pcv_checks_free(v);
	pcv_findings_free(&v->found);
	free(v->maps);
	free(v->map_digest);
	free(v->inforce);
	free(v->inforce_sum);
	free(v->pods);
	free(v->pod_ix.slots);
	free(v);
}

/* ---- the checkpoint ---- */

/* Parses and verifies a note with the key: 0, or -1 with the check and reason. */
static int
open_note(const struct pc_verify *v, const char *note, size_t len, struct pc_checkpoint *cp,
	  enum pc_verify_check *check, struct pc_error *err)
{
	size_t body_len;

	if (pc_note_verify(note, len, &v->key, &body_len, err) < 0) {
		*check = strcmp(err->msg, "malformed note") == 0 ? PC_VC_CHECKPOINT : PC_VC_SIGNATURE;
		return -1;
	}
	if (pc_checkpoint_parse_body(note, body_len, cp, err) < 0) {
		*check = PC_VC_CHECKPOINT;
		return -1;
	}
	if (strcmp(cp->origin, v->key.name) != 0) {
		*check = PC_VC_ORIGIN;
		return pc_error_set(err, "the checkpoint's origin is not the verifier key's name");
	}
	return 0;
}

int
pc_verify_trusted(struct pc_verify *v, const char *note, size_t len, struct pc_error *err)
{
	enum pc_verify_check c;
	struct pc_error e;

	if (open_note(v, note, len, &v->trusted, &c, &e) < 0)
		return pc_error_set(err, "%s: %s", pc_verify_check_name(c), e.msg);
	v->have_trusted = true;
	return 0;
}

uint64_t
pc_verify_trusted_size(const struct pc_verify *v)
{
	return v->have_trusted ? v->trusted.size : 0;
}

/* The declared maps are of this appliance (check 4) and of this log. */
static void
check_maps(struct pc_verify *v)
{
	for (size_t i = 0; i < v->nmaps; i++) {
		char origin[PC_ORIGIN_LEN];

		if (strcmp(v->maps[i]->appliance_id, v->appliance) != 0)
			pcv_fail(v, PC_VC_APPLIANCE, -1, NULL,
				 "pod map %s declares appliance '%s', "
				 "the log is %s",
				 v->maps[i]->path, v->maps[i]->appliance_id, v->cp.origin);
		else if (strcmp(pc_config_origin(v->maps[i], origin, sizeof(origin)),
				v->cp.origin) != 0)
			pcv_fail(v, PC_VC_APPLIANCE, -1, NULL,
				 "pod map %s declares the log '%s', "
				 "the checkpoint is of '%s'",
				 v->maps[i]->path, origin, v->cp.origin);
	}
}

int
pc_verify_checkpoint(struct pc_verify *v, const char *note, size_t len)
{
	enum pc_verify_check c;
	struct pc_error why;

	if (open_note(v, note, len, &v->cp, &c, &why) < 0) {
		char origin[PC_KEY_NAME_LEN];
		struct pc_checkpoint cp;
		const char *blank = memmem(note, len, "\n\n", 2);

		/* name the log the checkpoint claims, so a splice is plain to see */
		if (c != PC_VC_CHECKPOINT && blank != NULL &&
		    pc_checkpoint_parse_body(note, (size_t)(blank - note) + 1, &cp, NULL) == 0)
			snprintf(origin, sizeof(origin), "%s", cp.origin);
		else
			snprintf(origin, sizeof(origin), "?");
		if (c == PC_VC_ORIGIN)
			pcv_fail(v, c, -1, NULL, "checkpoint of log '%s', the key is for '%s'",
				 origin, v->key.name);
		else
			pcv_fail(v, c, -1, NULL, "checkpoint of log '%s': %s", origin, why.msg);
		return -1;
	}
	if (pc_origin_parse(v->cp.origin, v->appliance, &why) < 0) {
		pcv_fail(v, PC_VC_ORIGIN, -1, NULL, "origin '%s': %s", v->cp.origin, why.msg);
		return -1;
	}
	if (len > PC_NOTE_MAX) {
		pcv_fail(v, PC_VC_CHECKPOINT, -1, NULL, "checkpoint note longer than %u bytes",
			 PC_NOTE_MAX);
		return -1;
	}
	memcpy(v->note, note, len);
	v->note[len] = '\0';
	v->note_len = len;
	v->cp_ok = true;
	if (v->policy.now_ns == 0)
		v->policy.now_ns = pc_now_ns();
	check_maps(v);
	pcv_checks_begin(v);
	return 0;
}

const char *
pc_verify_checkpoint_note(const struct pc_verify *v, size_t *len)
{
	if (!v->cp_ok)
		return NULL;
	*len = v->note_len;
	return v->note;
}

uint64_t
pc_verify_size(const struct pc_verify *v)
{
	return v->cp_ok ? v->cp.size : 0;
}

/* ---- the records ---- */

/* A later podcapd's type (log-format.md, "Types added later"): signed, but not checked here. */
static void
later_type(struct pc_verify *v, uint64_t index, const struct pc_record *r)
{
	pcv_fail(v, PC_VC_DECODE, (int64_t)index, r,
		 "record type %u is not one this podcap-verify knows: its bytes are in the signed "
		 "tree, what it says is not checked (verify with a podcap-verify that knows it)",
		 r->type);
}

void
pc_verify_record(struct pc_verify *v, const uint8_t *rec, size_t len, const uint8_t *stored_leaf)
{
	struct pc_record r;
	struct pc_error why;

	if (!v->cp_ok || v->nrec >= v->cp.size || v->finished)
		return;
	uint64_t index = v->nrec++;
	pcv_checks_bytes(v, index, rec, len, stored_leaf);
	if (pc_record_decode(rec, len, &r, &why) < 0) {
		if (pc_record_decode_unknown(rec, len, &r, NULL) == 0)
			later_type(v, index, &r);
		else
			pcv_fail(v, PC_VC_DECODE, (int64_t)index, NULL,
				 "record does not decode: %s", why.msg);
		pc_record_free(&r);
		pcv_checks_undecodable(v, index);
		return;
	}
	if (strcmp(r.appliance_id, v->appliance) != 0)
		pcv_fail(v, PC_VC_APPLIANCE, (int64_t)index, &r,
			 "record of appliance '%s' in the log of '%s'", r.appliance_id,
			 v->appliance);
	pcv_checks_record(v, index, &r);
	pc_record_free(&r);
}

int
pc_verify_finish(struct pc_verify *v)
{
	if (v->finished)
		return v->found.nfails > 0;
	v->finished = true;
	pcv_events_close(&v->found);
	pcv_checks_finish(v);
	return v->found.nfails > 0;
}

/* ---- results ---- */

uint64_t
pc_verify_nfailures(const struct pc_verify *v)
{
	return v->found.nfails;
}

const struct pc_verify_failure *
pc_verify_failure_at(const struct pc_verify *v, size_t i)
{
	if (i >= pcv_kept(v->found.nfails))
		return NULL;
	return &v->found.fails[i];
}

const struct pc_verify_failure *
pc_verify_find(const struct pc_verify *v, enum pc_verify_check c)
{
	const struct pc_verify_failure_sum *fs = pc_verify_failure_sum(v, c);

	return fs != NULL && fs->count > 0 ? &fs->first : NULL;
}

const struct pc_verify_failure_sum *
pc_verify_failure_sum(const struct pc_verify *v, enum pc_verify_check c)
{
	if ((unsigned)c >= PC_VC_COUNT)
		return NULL;
	return &v->found.failsum[c];
}

uint64_t
pc_verify_nevents(const struct pc_verify *v)
{
	return v->found.nevents;
}

const struct pc_verify_event *
pc_verify_event_at(const struct pc_verify *v, size_t i)
{
	if (i >= pcv_kept(v->found.nevents))
		return NULL;
	return &v->found.events[i];
}

const struct pc_verify_event_sum *
pc_verify_event_sum(const struct pc_verify *v, enum pc_verify_event_kind k)
{
	if ((unsigned)k >= PC_VE_COUNT)
		return NULL;
	return &v->found.evsum[k];
}

unsigned __int128
pc_verify_unaccounted_ns(const struct pc_verify *v)
{
	return v->found.evsum[PC_VE_GAP].total_ns + v->found.evsum[PC_VE_RESTART].total_ns;
}

uint64_t
pc_verify_nrecords(const struct pc_verify *v)
{
	return v->nrec;
}

uint64_t
pc_verify_nwindows(const struct pc_verify *v)
{
	return v->nwindows;
}
