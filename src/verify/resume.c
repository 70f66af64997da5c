/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Reading the verifier's saved state back (docs/log-format.md, "The
 * verifier's state") to resume where the last clean run stopped. The file
 * is the verifier's own, but it is parsed as hostile input: every line must
 * parse to the letter, its checksum match and its tree edge hash to the
 * signed root, or the state is refused.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "shape/classify.h"
#include "shape/counters.h"
#include "base/hex.h"
#include "log/merkle.h"
#include "log/note.h"
#include "verify.h"

#include "verify_impl.h"

/* ---- reading: every line parses to the letter, or the state is refused ---- */

/* A cursor over the state's lines; every parse error names the line. */
struct lines {
	const char *p, *end;
	unsigned lineno;
	char line[4096];
};

static bool
next_line(struct lines *ls)
{
	const char *nl = memchr(ls->p, '\n', (size_t)(ls->end - ls->p));

	if (nl == NULL || (size_t)(nl - ls->p) >= sizeof(ls->line))
		return false;
	memcpy(ls->line, ls->p, (size_t)(nl - ls->p));
	ls->line[nl - ls->p] = '\0';
	ls->p = nl + 1;
	ls->lineno++;
	return true;
}

/* Next space-separated token of *s (advanced); NULL at the end. */
static const char *
token(char **s)
{
	char *t = *s;

	if (t == NULL || *t == '\0')
		return NULL;
	char *sp = strchr(t, ' ');
	if (sp != NULL) {
		*sp = '\0';
		*s = sp + 1;
	} else {
		*s = t + strlen(t);
	}
	return t;
}

static bool
get_u128(char **s, u128 *x)
{
	const char *t = token(s);

	if (t == NULL || *t == '\0' || strlen(t) > 39)
		return false;
	*x = 0;
	for (; *t != '\0'; t++) {
		u128 d = (u128)(*t - '0');
		if (*t < '0' || *t > '9' || *x > (~(u128)0 - d) / 10)
			return false;   /* not a digit, or past 2^128 - 1: refused, not wrapped */
		*x = *x * 10 + d;
	}
	return true;
}

static bool
get_u64(char **s, uint64_t *x)
{
	u128 y;

	if (!get_u128(s, &y) || y > UINT64_MAX)
		return false;
	*x = (uint64_t)y;
	return true;
}

static bool
get_i128(char **s, i128 *x)
{
	u128 y;
	bool neg = *s != NULL && **s == '-';

	if (neg)
		(*s)++;
	if (!get_u128(s, &y) || y > (u128)SAT)
		return false;
	*x = neg ? -(i128)y : (i128)y;
	return true;
}

static bool
get_hex(char **s, uint8_t *b, size_t n)
{
	const char *t = token(s);

	return t != NULL && pc_unhex(t, strlen(t), b, n);
}

static bool
get_id(char **s, char id[PC_ID_LEN])
{
	const char *t = token(s);

	if (t == NULL || *t == '\0' || strlen(t) >= PC_ID_LEN)
		return false;
	memcpy(id, t, strlen(t) + 1);
	return true;
}

static bool
get_i64(char **s, int64_t *x, int64_t lo, int64_t hi)
{
	i128 y;

	if (!get_i128(s, &y) || y < lo || y > hi)
		return false;
	*x = (int64_t)y;
	return true;
}

/* "word rest": rest in *s when the line starts with word. */
static bool
line_is(struct lines *ls, const char *word, char **s)
{
	size_t n = strlen(word);

	if (!next_line(ls) || strncmp(ls->line, word, n) != 0 ||
	    (ls->line[n] != ' ' && ls->line[n] != '\0'))
		return false;
	*s = ls->line + n + (ls->line[n] == ' ');
	return true;
}

static bool
load_pod(struct pc_verify *v, struct lines *ls)
{
	char *s, id[PC_ID_LEN];
	uint64_t dd, act, mixed, promises;
	char up[PC_ID_LEN];

	if (!line_is(ls, "pod", &s) || !get_id(&s, id) || !get_u64(&s, &promises) ||
	    promises > (PROMISE_ENVELOPE | PROMISE_WINDOW) || *s != '\0')
		return false;
	uint32_t before = v->npods, i = pcv_pod_index(v, id);
	if (i != before)
		return false;   /* listed twice */
	struct podsum *ps = &v->pods[i];
	ps->promises = (uint8_t)promises;
	for (int d = 0; d < PC_DIR_COUNT; d++) {
		struct pc_verify_totals *t = &ps->t[d];
		struct env *e = &ps->env[d];

		if (!line_is(ls, "totals", &s) || !get_u64(&s, &dd) || dd != (uint64_t)d ||
		    !get_u128(&s, &t->bytes) || !get_u128(&s, &t->frames))
			return false;
		for (int k = 0; k < PC_POD_DROP_COUNT; k++)
			if (!get_u128(&s, &t->drop_frames[k]) || !get_u128(&s, &t->drop_bytes[k]))
				return false;
		if (!get_u64(&s, &t->windows) || !get_u64(&s, &t->peak_bytes) ||
		    !get_u64(&s, &t->peak_window_start_ns) || !get_u64(&s, &t->peak_permille) ||
		    !get_u64(&s, &t->at_cap) || *s != '\0')
			return false;
		if (!line_is(ls, "env", &s) || !get_u64(&s, &dd) || dd != (uint64_t)d ||
		    !get_u64(&s, &act) || act > 1 || !get_u64(&s, &e->cap_bps) ||
		    !get_u64(&s, &e->burst_bytes) || !get_id(&s, up) || !get_u64(&s, &e->listed) ||
		    !get_i128(&s, &e->level) || !get_u64(&s, &e->at_ns) ||
		    !get_u64(&s, &e->at_real_ns) || !get_u64(&s, &e->anchor_ns) ||
		    !get_i128(&s, &e->anchor_tokens) || !get_i128(&s, &e->earned) ||
		    !get_u128(&s, &e->bytes) || !get_u64(&s, &mixed) || mixed > 1 || *s != '\0')
			return false;
		/* a run of a saved state never broke the envelope: a bound below zero is damage */
		if (e->level < 0 || (act == 1 && !pc_id_valid(up)))
			return false;
		e->active = act == 1;
		e->mixed = mixed == 1;
		memcpy(e->uplink, up, PC_ID_LEN);
	}
	return true;
}

/* What the envelope needs of the records before: the last START or RELOAD, the last window. */
static bool
load_envelope(struct pc_verify *v, struct lines *ls)
{
	char *s;
	uint64_t declared, seen;

	if (!line_is(ls, "envelope", &s) || !get_u64(&s, &declared) || declared > 1 ||
	    !get_u64(&s, &v->env_inforce) || !get_u64(&s, &seen) || seen > 1 ||
	    !get_u64(&s, &v->env_window_real_ns) || *s != '\0' ||
	    (declared == 1 && v->env_inforce >= v->trusted.size))
		return false;
	v->env_declared = declared == 1;
	v->env_window_seen = seen == 1;
	return true;
}

/* A tap's WINDOW whose OBSERVE may be the first record read. */
static bool
load_observe(struct pc_verify *v, struct lines *ls)
{
	char *s;

	return line_is(ls, "observe", &s) &&
	    get_i64(&s, &v->observe_for, -1, (int64_t)v->trusted.size - 1) &&
	    get_u64(&s, &v->observe_start_ns) && get_u64(&s, &v->observe_count) && *s == '\0';
}

static bool
load_inforce(struct pc_verify *v, struct lines *ls)
{
	char *s;
	uint64_t n, sum, mode;

	if (!line_is(ls, "inforce", &s) || !get_u64(&s, &n) || *s != '\0' || n > v->npods)
		return false;
	v->inforce = calloc(n ? n : 1, sizeof(*v->inforce));
	v->inforce_sum = calloc(n ? n : 1, sizeof(*v->inforce_sum));
	if (v->inforce == NULL || v->inforce_sum == NULL)
		abort();
	v->ninforce = (uint32_t)n;
	for (uint32_t i = 0; i < v->ninforce; i++) {
		struct podlim *pl = &v->inforce[i];

		if (!line_is(ls, "limits", &s) || !get_u64(&s, &sum) || sum >= v->npods ||
		    !get_id(&s, pl->id) || !get_id(&s, pl->uplink) || !get_u64(&s, &pl->cap_bps) ||
		    !get_u64(&s, &pl->burst_bytes) || !get_u64(&s, &mode) || mode > UINT8_MAX ||
		    *s != '\0' || strcmp(v->pods[sum].id, pl->id) != 0)
			return false;
		pl->mode = (uint8_t)mode;
		v->inforce_sum[i] = (uint32_t)sum;
	}
	pcv_inforce_uplinks(v);
	return true;
}

static bool
load_links(struct pc_verify *v, struct lines *ls)
{
	char *s, name[PC_ID_LEN];
	uint64_t n;

	if (!line_is(ls, "links", &s) || !get_u64(&s, &n) || *s != '\0' || n > UINT32_MAX / 2)
		return false;
	for (uint64_t i = 0; i < n; i++) {
		if (!line_is(ls, "link", &s) || !get_id(&s, name))
			return false;
		uint32_t before = v->nlinks, li = pcv_link_index(v, name);
		if (li != before)
			return false;
		for (int d = 0; d < PC_DIR_COUNT; d++)
			for (int k = 0; k < PC_LINK_DROP_COUNT; k++)
				if (!get_u128(&s, &v->links[li].frames[d][k]) ||
				    !get_u128(&s, &v->links[li].bytes[d][k]))
					return false;
		if (*s != '\0')
			return false;
	}
	return true;
}

/* The rest of an event's line (put_event); its record must be one the state covers. */
static bool
get_event(const struct pc_verify *v, char **s, struct pc_verify_event *e)
{
	uint64_t kind, clean;
	i128 step;

	memset(e, 0, sizeof(*e));
	if (!get_u64(s, &kind) || kind >= PC_VE_COUNT || !get_u64(s, &e->record) ||
	    !get_u64(s, &e->window_start_ns) || !get_u64(s, &e->from_ns) ||
	    !get_u64(s, &e->window_len_ns) || !get_u64(s, &e->windows) || !get_u64(s, &clean) ||
	    clean > 1 || !get_i128(s, &step) || step > INT64_MAX || step < INT64_MIN ||
	    !get_u64(s, &e->elapsed_ns) || !get_hex(s, e->podmap_digest, PC_DIGEST_LEN) ||
	    !get_hex(s, e->build_id, sizeof(e->build_id)) || **s != '\0' ||
	    e->record >= v->trusted.size)
		return false;
	e->kind = (enum pc_verify_event_kind)kind;
	e->clean = clean == 1;
	e->step_ns = (int64_t)step;
	return true;
}

/*
 * The totals of kind k: as many worst events as the count gives, each of
 * that kind, one of the events counted, in the order they are kept.
 */
static bool
load_event_sum(struct pc_verify *v, struct lines *ls, int k, uint64_t *counted)
{
	struct pc_verify_event_sum *es = &v->found.evsum[k];
	char *s;
	uint64_t kk, n;

	if (!line_is(ls, "eventsum", &s) || !get_u64(&s, &kk) || kk != (uint64_t)k ||
	    !get_u64(&s, &es->count) || !get_u128(&s, &es->total_ns) || !get_u64(&s, &n) ||
	    *s != '\0' || es->count > v->found.nevents - *counted ||
	    n != (es->count < PC_VERIFY_WORST ? es->count : PC_VERIFY_WORST) ||
	    (!pcv_event_sized((enum pc_verify_event_kind)k) && es->total_ns != 0))
		return false;
	*counted += es->count;
	es->nworst = (uint32_t)n;
	for (uint32_t i = 0; i < es->nworst; i++) {
		struct pc_verify_event *e = &es->worst[i];

		if (!line_is(ls, "worst", &s) || !get_u64(&s, &es->worst_seq[i]) ||
		    es->worst_seq[i] >= v->found.nevents || !get_event(v, &s, e) ||
		    e->kind != (enum pc_verify_event_kind)k ||
		    pc_verify_event_size(e) > es->total_ns ||
		    (i > 0 &&
		     !pcv_event_worse(&es->worst[i - 1], es->worst_seq[i - 1], e,
				      es->worst_seq[i])))
			return false;
	}
	return true;
}

static bool
load_events(struct pc_verify *v, struct lines *ls)
{
	char *s;
	uint64_t total, kept, counted = 0;

	if (!line_is(ls, "events", &s) || !get_u64(&s, &total) || !get_u64(&s, &kept) ||
	    *s != '\0' || kept != pcv_kept(total))
		return false;
	for (uint64_t i = 0; i < kept; i++)
		if (!line_is(ls, "event", &s) || !get_event(v, &s, &v->found.events[i]))
			return false;
	v->found.nevents = total;
	for (int k = 0; k < PC_VE_COUNT; k++)
		if (!load_event_sum(v, ls, k, &counted))
			return false;
	return counted == total;
}

static bool
load_pulls(struct pc_verify *v, struct lines *ls)
{
	char *s;
	uint64_t n;

	if (!line_is(ls, "pulls", &s) || !get_u64(&s, &n) || *s != '\0' || n > PC_VERIFY_MAX_PULLS)
		return false;
	for (uint64_t i = 0; i < n; i++) {
		struct pc_verify_pull *p = &v->pulls[i];

		if (!line_is(ls, "pull", &s) || !get_u64(&s, &p->now_ns) || !get_u64(&s, &p->size) ||
		    !get_u64(&s, &p->cursor_ns) || *s != '\0' ||
		    p->size > v->trusted.size)
			return false;
	}
	v->npulls = (size_t)n;
	return true;
}

/* 1 when the state's policy and pod maps are this run's, 0 when not, -1 when malformed. */
static int
load_policy(const struct pc_verify *v, struct lines *ls)
{
	const struct pc_verify_policy *p = &v->policy;
	char *s;
	uint64_t skew, unacc, gap, merged, npins, nmaps;
	uint8_t id[32];
	bool same;

	if (!line_is(ls, "policy", &s) || !get_u64(&s, &skew) || !get_u64(&s, &unacc) ||
	    !get_u64(&s, &gap) || !get_u64(&s, &merged) || !get_u64(&s, &npins) || *s != '\0' ||
	    npins > PC_VERIFY_MAX_BUILD_IDS)
		return -1;
	same = skew == p->clock_skew_ns && unacc == p->max_unaccounted_ns &&
	       gap == p->max_gap_ns && merged == p->max_merged_windows && npins == p->nbuild_ids;
	for (uint64_t i = 0; i < npins; i++) {
		if (!line_is(ls, "pin", &s) || !get_hex(&s, id, 32) || *s != '\0')
			return -1;
		same = same && memcmp(id, p->build_ids[i], 32) == 0;
	}
	if (!line_is(ls, "podmaps", &s) || !get_u64(&s, &nmaps) || *s != '\0' ||
	    nmaps > UINT32_MAX)
		return -1;
	same = same && nmaps == v->nmaps;
	for (uint64_t i = 0; i < nmaps; i++) {
		if (!line_is(ls, "podmap", &s) || !get_hex(&s, id, PC_DIGEST_LEN) || *s != '\0')
			return -1;
		same = same && memcmp(id, v->map_digest[i], PC_DIGEST_LEN) == 0;
	}
	return same ? 1 : 0;
}

static bool
load_uses(const struct pc_verify *v, struct lines *ls, const char *what, struct uses *u)
{
	char *s;
	uint64_t kept;

	if (!line_is(ls, "uses", &s) || strncmp(s, what, strlen(what)) != 0 ||
	    s[strlen(what)] != ' ')
		return false;
	s += strlen(what) + 1;
	if (!get_u64(&s, &u->n) || !get_u64(&s, &kept) || kept != pcv_kept(u->n) ||
	    !get_i64(&s, &u->inforce, -1, (int64_t)kept - 1) || *s != '\0')
		return false;
	for (uint64_t i = 0; i < kept; i++) {
		struct pc_verify_use *e = &u->u[i];
		int64_t map;

		if (!line_is(ls, "use", &s) || !get_hex(&s, e->id, 32) ||
		    !get_u64(&s, &e->first_record) || !get_u64(&s, &e->first_window_ns) ||
		    !get_u64(&s, &e->last_end_ns) || !get_u64(&s, &e->windows) ||
		    !get_i64(&s, &map, -1, (int64_t)v->nmaps - 1) || *s != '\0' ||
		    e->first_record >= v->trusted.size)
			return false;
		e->map = (int)map;
	}
	return true;
}

/* What the policy's checks carry: the time figures, the build in force, the uses. */
static bool
load_carried(struct pc_verify *v, struct lines *ls)
{
	char *s;
	int64_t map;

	if (!line_is(ls, "time", &s) || !get_u64(&s, &v->unacc_total_ns) || !get_u64(&s, &v->unacc_run_ns) ||
	    !get_u64(&s, &v->unacc_longest_ns) ||
	    !get_i64(&s, &v->unacc_longest_record, -1, INT64_MAX) ||
	    !get_u64(&s, &v->merged_most) || !get_i64(&s, &v->merged_record, -1, INT64_MAX) ||
	    *s != '\0')
		return false;
	if (!line_is(ls, "build", &s) || !get_hex(&s, v->build, 32) ||
	    !get_u64(&s, &v->build_record) ||
	    !get_i64(&s, &v->gap_build_record, -1, INT64_MAX) || !get_hex(&s, v->gap_build, 32) ||
	    *s != '\0')
		return false;
	if (!line_is(ls, "inforce-map", &s) || !get_i64(&s, &map, -1, (int64_t)v->nmaps - 1) ||
	    *s != '\0')
		return false;
	v->inforce_map = (int)map;
	return load_uses(v, ls, "builds", &v->builds) && load_uses(v, ls, "maps", &v->mapuse);
}

/* Everything after the magic line up to the sum line. */
static int
load_body(struct pc_verify *v, struct lines *ls, struct pc_error *err)
{
	char *s;
	uint64_t size, n, started, stopped, npods, bytes;
	uint8_t root[PC_HASH_LEN];
	struct pc_merkle_range r;

	pc_merkle_range_init(&r);
	if (!line_is(ls, "edge", &s) || !get_u64(&s, &size) || !get_u64(&s, &n) || *s != '\0' ||
	    n != (uint64_t)__builtin_popcountll(size) || size != v->trusted.size)
		goto bad;
	r.size = size;
	r.n = (unsigned)n;
	for (unsigned i = 0; i < r.n; i++)
		if (!line_is(ls, "hash", &s) || !get_hex(&s, r.hashes[i], PC_HASH_LEN) || *s != '\0')
			goto bad;
	if (!line_is(ls, "bytes", &s) || !get_u64(&s, &bytes) || *s != '\0' || bytes < size)
		goto bad;
	/* the edge must give the signed root: then it is the edge of the trusted tree */
	pc_merkle_range_root(&r, root);
	if (memcmp(root, v->trusted.root, PC_HASH_LEN) != 0)
		return pc_error_set(err, "the saved tree edge does not hash to the root of the saved "
			 "checkpoint");
	if (!load_pulls(v, ls))
		goto bad;
	int same = load_policy(v, ls);
	if (same < 0)
		goto bad;
	/* the records before were checked under this policy and these pod maps, or start over */
	if (same == 0 || pcv_audit_full(v))
		return 1;
	if (!line_is(ls, "sequence", &s) || !get_u64(&s, &started) || started > 1 ||
	    !get_u64(&s, &stopped) || stopped > 1 || !get_u64(&s, &v->cursor_ns) ||
	    !get_u64(&s, &v->skipped_ns) || !get_u64(&s, &v->window_ns) ||
	    !get_u64(&s, &v->inforce_record) || !get_u64(&s, &v->nwindows) ||
	    !get_hex(&s, v->digest, PC_DIGEST_LEN) || *s != '\0' ||
	    (size > 0 && (started != 1 || v->inforce_record >= size)))
		goto bad;
	v->started = started == 1;
	v->stopped = stopped == 1;
	if (!load_carried(v, ls) || !load_envelope(v, ls) || !load_observe(v, ls))
		goto bad;
	if (!line_is(ls, "pods", &s) || !get_u64(&s, &npods) || *s != '\0' || npods > UINT32_MAX / 2)
		goto bad;
	for (uint64_t i = 0; i < npods; i++)
		if (!load_pod(v, ls))
			goto bad;
	if (!load_inforce(v, ls) || !load_links(v, ls) || !load_events(v, ls) || ls->p != ls->end)
		goto bad;
	v->range = r;
	v->stored = r;   /* the source's stored leaves extend the same trusted edge */
	v->nrec = size;
	v->rec_bytes = bytes;
	memcpy(v->trusted_root_here, root, PC_HASH_LEN);
	v->trusted_root_seen = true;
	v->resumed = true;
	return 0;
bad:
	return pc_error_set(err, "malformed state at line %u after the checkpoint", ls->lineno);
}

int
pc_verify_resume(struct pc_verify *v, const char *state, size_t len, struct pc_error *err)
{
	const char *blank = memmem(state, len, "\n\n", 2);
	const char *magic = NULL;

	if (blank != NULL)
		magic = memmem(blank + 1, len - (size_t)(blank + 1 - state), "\n" STATE_MAGIC,
			       strlen(STATE_MAGIC) + 1);
	if (magic == NULL) {
		/* the checkpoint alone, or before an older state: trusted, every record verified again */
		const char *older = blank == NULL ? NULL :
		    memmem(blank + 1, len - (size_t)(blank + 1 - state), "\n" STATE_OLDER,
			   strlen(STATE_OLDER) + 1);
		size_t note_len = older != NULL ? (size_t)(older + 1 - state) : len;

		if (pc_verify_trusted(v, state, note_len, err) < 0)
			return -1;
		return 1;
	}
	magic++;
	/* the verifier's own file: a checksum finds damage the signature does not cover */
	uint8_t sum[crypto_generichash_BYTES], want[crypto_generichash_BYTES];
	if (len < SUM_LINE_LEN || state[len - 1] != '\n' ||
	    memcmp(state + len - SUM_LINE_LEN, SUM_TAG, strlen(SUM_TAG)) != 0 ||
	    !pc_unhex(state + len - SUM_LINE_LEN + strlen(SUM_TAG), 2 * sizeof(want), want,
		      sizeof(want)))
		return pc_error_set(err, "the state has no checksum line at its end (truncated?)");
	crypto_generichash(sum, sizeof(sum), (const uint8_t *)state, len - SUM_LINE_LEN, NULL, 0);
	if (sodium_memcmp(sum, want, sizeof(sum)) != 0)
		return pc_error_set(err, "the state's checksum does not match its contents: it is "
			 "damaged");
	if (pc_verify_trusted(v, state, (size_t)(magic - state), err) < 0)
		return -1;
	struct lines ls = { .p = magic + strlen(STATE_MAGIC), .end = state + len - SUM_LINE_LEN };
	return load_body(v, &ls, err);
}

uint64_t
pc_verify_resume_at(const struct pc_verify *v)
{
	return v->resumed ? v->trusted.size : 0;
}

uint64_t
pc_verify_resume_bytes(const struct pc_verify *v)
{
	return v->resumed ? v->rec_bytes : 0;
}
