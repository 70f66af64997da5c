/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The verifier's saved state (docs/log-format.md, "The verifier's state"):
 * written after a run in which every check held, read back to resume.
 *
 * Reading it is parsing hostile input. It is the verifier's own file, yet
 * a damaged one must never be taken for a good one: a checksum covers what
 * the checkpoint's signature does not, the saved tree edge must hash to the
 * signed root, and every line must parse to the letter.
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

/* ---- writing: numbers are decimal after a space, hashes lowercase hex ---- */

static void
put_u128(FILE *f, u128 x)
{
	fputc(' ', f);
	pcv_print_u128(f, x);
}

static void
put_i128(FILE *f, i128 x)
{
	fputs(x < 0 ? " -" : " ", f);
	pcv_print_u128(f, x < 0 ? (u128)-x : (u128)x);
}

static void
put_hex(FILE *f, const uint8_t *b, size_t n)
{
	char h[2 * PC_HASH_LEN + 1];

	pc_hex(b, n, h);
	fprintf(f, " %s", h);
}

static void
save_pod(FILE *f, const struct podsum *ps)
{
	fprintf(f, "pod %s %u\n", ps->id, (unsigned)ps->promises);
	for (int d = 0; d < PC_DIR_COUNT; d++) {
		const struct pc_verify_totals *t = &ps->t[d];
		const struct env *e = &ps->env[d];

		fprintf(f, "totals %d", d);
		put_u128(f, t->bytes);
		put_u128(f, t->frames);
		for (int k = 0; k < PC_POD_DROP_COUNT; k++) {
			put_u128(f, t->drop_frames[k]);
			put_u128(f, t->drop_bytes[k]);
		}
		fprintf(f, " %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 "\n",
			t->windows, t->peak_bytes, t->peak_window_start_ns, t->peak_permille,
			t->at_cap);
		/* a saved run never broke the envelope (it would have failed): no worst interval */
		fprintf(f, "env %d %d %" PRIu64 " %" PRIu64 " %s %" PRIu64, d, e->active ? 1 : 0,
			e->cap_bps, e->burst_bytes, e->active ? e->uplink : "-", e->listed);
		put_i128(f, e->level);
		fprintf(f, " %" PRIu64 " %" PRIu64 " %" PRIu64, e->at_ns, e->at_real_ns,
			e->anchor_ns);
		put_i128(f, e->anchor_tokens);
		put_i128(f, e->earned);
		put_u128(f, e->bytes);
		fprintf(f, " %d\n", e->mixed ? 1 : 0);
	}
}

/* An event's fields, after the word that starts its line. */
static void
put_event(FILE *f, const struct pc_verify_event *e)
{
	fprintf(f, " %d %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 " %d",
		(int)e->kind, e->record, e->window_start_ns, e->from_ns, e->window_len_ns,
		e->windows, e->clean ? 1 : 0);
	put_i128(f, e->step_ns);
	fprintf(f, " %" PRIu64, e->elapsed_ns);
	put_hex(f, e->podmap_digest, PC_DIGEST_LEN);
	put_hex(f, e->build_id, sizeof(e->build_id));
	fputc('\n', f);
}

/*
 * The events kept so far and the totals and worst of each kind, so that a
 * resumed report gives the whole log's, as a full one does.
 */
static void
save_events(const struct pc_verify *v, FILE *f)
{
	uint64_t kept = pcv_kept(v->found.nevents);

	fprintf(f, "events %" PRIu64 " %" PRIu64 "\n", v->found.nevents, kept);
	for (uint64_t i = 0; i < kept; i++) {
		fputs("event", f);
		put_event(f, &v->found.events[i]);
	}
	for (int k = 0; k < PC_VE_COUNT; k++) {
		const struct pc_verify_event_sum *es = &v->found.evsum[k];

		fprintf(f, "eventsum %d %" PRIu64, k, es->count);
		put_u128(f, es->total_ns);
		fprintf(f, " %" PRIu32 "\n", es->nworst);
		for (uint32_t i = 0; i < es->nworst; i++) {
			fprintf(f, "worst %" PRIu64, es->worst_seq[i]);
			put_event(f, &es->worst[i]);
		}
	}
}

/* The trusted tree: its right edge, and where the records after it start. */
static void
save_tree(const struct pc_verify *v, FILE *f)
{
	fprintf(f, "edge %" PRIu64 " %u\n", v->range.size, v->range.n);
	for (unsigned i = 0; i < v->range.n; i++) {
		fputs("hash", f);
		put_hex(f, v->range.hashes[i], PC_HASH_LEN);
		fputc('\n', f);
	}
	fprintf(f, "bytes %" PRIu64 "\n", v->rec_bytes);
}

/* The earlier pulls and this one, when its caller said what time it is. */
static void
save_pulls(const struct pc_verify *v, FILE *f)
{
	struct pc_verify_pull now = { v->policy.now_ns, v->nrec, v->cursor_ns };
	size_t n = v->npulls + (v->now_given ? 1 : 0);
	size_t from = n > PC_VERIFY_MAX_PULLS ? n - PC_VERIFY_MAX_PULLS : 0;

	fprintf(f, "pulls %zu\n", n - from);
	for (size_t i = from; i < n; i++) {
		const struct pc_verify_pull *p = i < v->npulls ? &v->pulls[i] : &now;

		fprintf(f, "pull %" PRIu64 " %" PRIu64 " %" PRIu64 "\n", p->now_ns, p->size,
			p->cursor_ns);
	}
}

/* What the records were checked against: a run under another policy checks them all again. */
static void
save_policy(const struct pc_verify *v, FILE *f)
{
	const struct pc_verify_policy *p = &v->policy;

	fprintf(f, "policy %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 " %zu\n", p->clock_skew_ns,
		p->max_unaccounted_ns, p->max_gap_ns, p->max_merged_windows, p->nbuild_ids);
	for (size_t i = 0; i < p->nbuild_ids; i++) {
		fputs("pin", f);
		put_hex(f, p->build_ids[i], 32);
		fputc('\n', f);
	}
	fprintf(f, "podmaps %zu\n", v->nmaps);
	for (size_t i = 0; i < v->nmaps; i++) {
		fputs("podmap", f);
		put_hex(f, v->map_digest[i], PC_DIGEST_LEN);
		fputc('\n', f);
	}
}

static void
save_uses(FILE *f, const char *what, const struct uses *u)
{
	fprintf(f, "uses %s %" PRIu64 " %" PRIu64, what, u->n, pcv_kept(u->n));
	put_i128(f, u->inforce);
	fputc('\n', f);
	for (uint64_t i = 0; i < pcv_kept(u->n); i++) {
		const struct pc_verify_use *e = &u->u[i];

		fputs("use", f);
		put_hex(f, e->id, 32);
		fprintf(f, " %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64, e->first_record,
			e->first_window_ns, e->last_end_ns, e->windows);
		put_i128(f, e->map);
		fputc('\n', f);
	}
}

/* What the sequence and the policy's checks carry to the next record. */
static void
save_sequence(const struct pc_verify *v, FILE *f)
{
	fprintf(f, "sequence %d %d %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64,
		v->started ? 1 : 0, v->stopped ? 1 : 0, v->cursor_ns, v->skipped_ns, v->window_ns,
		v->inforce_record, v->nwindows);
	put_hex(f, v->digest, PC_DIGEST_LEN);
	fprintf(f, "\ntime %" PRIu64 " %" PRIu64 " %" PRIu64, v->unacc_total_ns, v->unacc_run_ns,
		v->unacc_longest_ns);
	put_i128(f, v->unacc_longest_record);
	fprintf(f, " %" PRIu64, v->merged_most);
	put_i128(f, v->merged_record);
	fputs("\nbuild", f);
	put_hex(f, v->build, 32);
	fprintf(f, " %" PRIu64, v->build_record);
	put_i128(f, v->gap_build_record);
	put_hex(f, v->gap_build, 32);
	fputs("\ninforce-map", f);
	put_i128(f, v->inforce_map);
	fputc('\n', f);
	save_uses(f, "builds", &v->builds);
	save_uses(f, "maps", &v->mapuse);
	fprintf(f, "envelope %d %" PRIu64 " %d %" PRIu64 "\n", v->env_declared ? 1 : 0,
		v->env_inforce, v->env_window_seen ? 1 : 0, v->env_window_real_ns);
	fputs("observe", f);
	put_i128(f, v->observe_for);
	fprintf(f, " %" PRIu64 " %" PRIu64 "\n", v->observe_start_ns, v->observe_count);
}

static void
save_inforce(const struct pc_verify *v, FILE *f)
{
	fprintf(f, "inforce %" PRIu32 "\n", v->ninforce);
	for (uint32_t i = 0; i < v->ninforce; i++) {
		const struct podlim *pl = &v->inforce[i];

		fprintf(f, "limits %" PRIu32 " %s %s %" PRIu64 " %" PRIu64 " %u\n", v->inforce_sum[i],
			pl->id, pl->uplink, pl->cap_bps, pl->burst_bytes, pl->mode);
	}
}

static void
save_links(const struct pc_verify *v, FILE *f)
{
	fprintf(f, "links %" PRIu32 "\n", v->nlinks);
	for (uint32_t i = 0; i < v->nlinks; i++) {
		fprintf(f, "link %s", v->links[i].name);
		for (int d = 0; d < PC_DIR_COUNT; d++)
			for (int k = 0; k < PC_LINK_DROP_COUNT; k++) {
				put_u128(f, v->links[i].frames[d][k]);
				put_u128(f, v->links[i].bytes[d][k]);
			}
		fputc('\n', f);
	}
}

int
pc_verify_state_save(const struct pc_verify *v, char **out, size_t *outlen)
{
	char *buf = NULL, hex[2 * crypto_generichash_BYTES + 1];
	size_t len = 0;
	uint8_t sum[crypto_generichash_BYTES];

	if (!v->finished || v->found.nfails > 0 || !v->cp_ok || v->nrec != v->cp.size)
		return -1;
	FILE *f = open_memstream(&buf, &len);
	if (f == NULL)
		return -1;
	fwrite(v->note, 1, v->note_len, f);
	fputs(STATE_MAGIC, f);
	save_tree(v, f);
	save_pulls(v, f);
	save_policy(v, f);
	save_sequence(v, f);
	fprintf(f, "pods %" PRIu32 "\n", v->npods);
	for (uint32_t i = 0; i < v->npods; i++)
		save_pod(f, &v->pods[i]);
	save_inforce(v, f);
	save_links(v, f);
	save_events(v, f);
	if (fflush(f) != 0 || ferror(f)) {
		fclose(f);
		free(buf);
		return -1;
	}
	crypto_generichash(sum, sizeof(sum), (const uint8_t *)buf, len, NULL, 0);
	pc_hex(sum, sizeof(sum), hex);
	fprintf(f, SUM_TAG "%s\n", hex);
	if (fclose(f) != 0) {
		free(buf);
		return -1;
	}
	*out = buf;
	*outlen = len;
	return 0;
}
