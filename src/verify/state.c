/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The verifier's saved state (docs/log-format.md, "The verifier's state"):
 * written after a run in which every check held, read back to resume. The
 * file is the checkpoint note, a magic line, every check's sections in
 * the file's order below, and a sum line; each section is written and read
 * by its check (check.h, sections).
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

#include "base/hex.h"
#include "log/note.h"
#include "verify.h"

#include "lines.h"
#include "verify_impl.h"

#define STATE_MAGIC  "podcap-verify-state 7\n"
#define STATE_OLDER  "podcap-verify-state " /* another version: its checkpoint alone is used */
#define SUM_TAG      "sum "
#define SUM_LINE_LEN (sizeof(SUM_TAG) - 1 + 2 * crypto_generichash_BYTES + 1)

/* A section of the file: check `check`'s section `tag`, or, for check -1, the core's own. */
struct part {
	int check;
	const char *tag;
	void (*save)(const struct pc_verify *v, FILE *f);
	int (*load)(struct pc_verify *v, struct pcv_lines *ls, struct pc_error *err);
};

static void
save_events(const struct pc_verify *v, FILE *f)
{
	pcv_findings_save(&v->found, f);
}

static int
load_events(struct pc_verify *v, struct pcv_lines *ls, struct pc_error *err)
{
	return pcv_findings_load(&v->found, v->trusted.size, ls, err);
}

#define SECTION(id, tag)                \
	{                               \
		(id), (tag), NULL, NULL \
	}
#define OWN(tag, save, load)              \
	{                                 \
		-1, (tag), (save), (load) \
	}

/* What is read whatever policy the state was saved under; the policy's lines follow. */
static const struct part head[] = {
	SECTION(PCV_TREE, "edge"),  /* the trusted tree's edge, the bytes before record n */
	SECTION(PCV_TIME, "pulls"), /* the earlier runs' nows */
};

/* What the checks carry from one record to the next: read only under the same policy. */
static const struct part carried[] = {
	SECTION(PCV_SEQUENCE, "sequence"),         /* where the log is */
	SECTION(PCV_LIMIT, "time"),                /* time no window covers, the most merged */
	SECTION(PCV_BUILD, "build"),               /* the build in force */
	SECTION(PCV_PODMAP, "inforce-map"),        /* the declared map in force */
	SECTION(PCV_BUILD, "uses builds"),         /* every build seen */
	SECTION(PCV_PODMAP, "uses maps"),          /* every map digest seen */
	SECTION(PCV_ENVELOPE, "envelope"),         /* the last START or RELOAD and window */
	SECTION(PCV_SEQUENCE, "observe"),          /* a WINDOW awaiting its OBSERVE */
	OWN("pods", pcv_pods_save, pcv_pods_load), /* each pod, then each check's lines of it */
	SECTION(PCV_SEQUENCE, "inforce"),          /* the pods in force */
	SECTION(PCV_TOTALS, "links"),              /* each link's drops */
	OWN("events", save_events, load_events),   /* the events, their totals and worst */
};

static void
save_part(const struct pc_verify *v, const struct part *p, FILE *f)
{
	if (p->check < 0)
		p->save(v, f);
	else
		pcv_check_section(p->check, p->tag)->save(v, v->state[p->check], f);
}

static int
load_part(struct pc_verify *v, const struct part *p, struct pcv_lines *ls, struct pc_error *err)
{
	if (p->check < 0)
		return p->load(v, ls, err);
	return pcv_check_section(p->check, p->tag)->load(v, v->state[p->check], ls, err);
}

/* Whether the order above places section `tag` of check id exactly once. */
static int
placed(int id, const char *tag)
{
	int n = 0;

	for (size_t i = 0; i < sizeof(head) / sizeof(head[0]); i++)
		n += head[i].check == id && strcmp(head[i].tag, tag) == 0;
	for (size_t i = 0; i < sizeof(carried) / sizeof(carried[0]); i++)
		n += carried[i].check == id && strcmp(carried[i].tag, tag) == 0;
	return n;
}

int
pcv_state_order_check(char *why, size_t len)
{
	for (int id = 0; id < PCV_CHECK_COUNT; id++)
		for (const struct pcv_section *s = pcv_checks[id]->sections; s != NULL && s->tag;
		     s++)
			if (placed(id, s->tag) != 1) {
				snprintf(why, len, "%s's section %s is in the state %d times",
					 pcv_checks[id]->name, s->tag, placed(id, s->tag));
				return -1;
			}
	for (size_t i = 0; i < sizeof(carried) / sizeof(carried[0]); i++)
		if (carried[i].check >= 0 &&
		    pcv_check_section(carried[i].check, carried[i].tag) == NULL) {
			snprintf(why, len, "%s has no section %s",
				 pcv_checks[carried[i].check]->name, carried[i].tag);
			return -1;
		}
	return 0;
}

/* ---- writing ---- */

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
	for (size_t i = 0; i < sizeof(head) / sizeof(head[0]); i++)
		save_part(v, &head[i], f);
	pcv_policy_save(v, f);
	for (size_t i = 0; i < sizeof(carried) / sizeof(carried[0]); i++)
		save_part(v, &carried[i], f);
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

/* ---- reading: every line parses to the letter, or the state is refused ---- */

/* Everything after the magic line up to the sum line: 0 to resume, 1 to read every record. */
static int
load_body(struct pc_verify *v, struct pcv_lines *ls, struct pc_error *err)
{
	for (size_t i = 0; i < sizeof(head) / sizeof(head[0]); i++)
		if (load_part(v, &head[i], ls, err) < 0)
			return -1;
	int same = pcv_policy_load(v, ls, err);
	if (same < 0)
		return -1;
	/* the records before were checked under this policy and these pod maps, or start over */
	if (same == 0 || pcv_checks_reread(v))
		return 1;
	for (size_t i = 0; i < sizeof(carried) / sizeof(carried[0]); i++)
		if (load_part(v, &carried[i], ls, err) < 0)
			return -1;
	if (ls->p != ls->end)
		return pcv_lines_bad(ls, err);
	pcv_checks_resume(v);
	v->nrec = v->trusted.size;
	v->resumed = true;
	return 0;
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
		const char *older = blank == NULL
		    ? NULL
		    : memmem(blank + 1, len - (size_t)(blank + 1 - state), "\n" STATE_OLDER,
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
		return pc_error_set(err,
				    "the state's checksum does not match its contents: it is "
				    "damaged");
	if (pc_verify_trusted(v, state, (size_t)(magic - state), err) < 0)
		return -1;
	struct pcv_lines ls = { .p = magic + strlen(STATE_MAGIC),
				.end = state + len - SUM_LINE_LEN };
	return load_body(v, &ls, err);
}

uint64_t
pc_verify_resume_at(const struct pc_verify *v)
{
	return v->resumed ? v->trusted.size : 0;
}
