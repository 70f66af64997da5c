/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The randomized assignment (src/podmap/assign.h): its input files, the
 * seeded shuffle and the placement under the auditor's constraints.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <sodium.h>

#include "assign.h"
#include "base/bytes.h"
#include "base/id.h"

/* ---- the stream: prefix-stable, so a longer draw repeats the shorter one ---- */

struct stream {
	const uint8_t *seed;
	uint8_t *buf;
	size_t len, pos;
};

static uint32_t
next_word(struct stream *s)
{
	if (s->pos + 4 > s->len) {
		size_t len = s->len ? 2 * s->len : 4096;
		uint8_t *b = realloc(s->buf, len);

		if (b == NULL)
			abort();
		/* the same first bytes again, and more */
		randombytes_buf_deterministic(b, len, s->seed);
		s->buf = b;
		s->len = len;
	}
	uint32_t x = pc_load_be32(s->buf + s->pos);
	s->pos += 4;
	return x;
}

/* Uniform in [0, k), k >= 1: words at or above the largest multiple of k are drawn again. */
static uint32_t
below(struct stream *s, uint32_t k)
{
	uint32_t limit = (uint32_t)(0x100000000ULL - 0x100000000ULL % k);
	uint32_t x;

	do
		x = next_word(s);
	while (limit != 0 && x >= limit);
	return x % k;
}

/* Fisher-Yates from the identity, with the stream's next words. */
static void
shuffle(struct stream *s, uint32_t *perm, size_t n)
{
	for (size_t i = 0; i < n; i++)
		perm[i] = (uint32_t)i;
	for (size_t i = n; i > 1; i--) {
		uint32_t j = below(s, (uint32_t)i);
		uint32_t t = perm[i - 1];

		perm[i - 1] = perm[j];
		perm[j] = t;
	}
}

void
pc_assign_shuffle(const uint8_t seed[PC_ASSIGN_SEED_LEN], uint32_t *perm, size_t n)
{
	struct stream s = { .seed = seed };

	shuffle(&s, perm, n);
	free(s.buf);
}

void
pc_assign_commitment(const uint8_t seed[PC_ASSIGN_SEED_LEN], uint8_t out[PC_DIGEST_LEN])
{
	crypto_generichash(out, PC_DIGEST_LEN, seed, PC_ASSIGN_SEED_LEN, NULL, 0);
}

/* ---- placement ---- */

static bool
allowed(const struct pc_assign_pod *pods, const uint32_t *up, const uint32_t *count, size_t placed,
	const uint32_t *perm, uint32_t u, const struct pc_assign_pod *p,
	const struct pc_assign_rules *rules)
{
	if (rules->max_per_uplink != 0 && count[u] >= rules->max_per_uplink)
		return false;
	if (!rules->separate_cells || p->cell[0] == '\0')
		return true;
	for (size_t k = 0; k < placed; k++) {
		const struct pc_assign_pod *q = &pods[perm[k]];

		if (up[perm[k]] == u && strcmp(q->cell, p->cell) == 0)
			return false;
	}
	return true;
}

/*
 * One attempt: pods and uplinks shuffled with the stream's next words, the
 * pod at position i on the first uplink from position i mod m on that the
 * constraints allow. Returns the position of a pod that fitted nowhere, or
 * npods when all did.
 */
static size_t
attempt(struct stream *s, const struct pc_assign_pod *pods, size_t npods, size_t nups,
	const struct pc_assign_rules *rules, uint32_t *perm, uint32_t *uperm, uint32_t *count,
	uint32_t *up)
{
	shuffle(s, perm, npods);
	shuffle(s, uperm, nups);
	memset(count, 0, nups * sizeof(*count));
	for (size_t i = 0; i < npods; i++) {
		const struct pc_assign_pod *p = &pods[perm[i]];
		size_t t;

		for (t = 0; t < nups; t++) {
			uint32_t u = uperm[(i + t) % nups];

			if (allowed(pods, up, count, i, perm, u, p, rules)) {
				up[perm[i]] = u;
				count[u]++;
				break;
			}
		}
		if (t == nups)
			return i;
	}
	return npods;
}

int
pc_assign(const uint8_t seed[PC_ASSIGN_SEED_LEN], const struct pc_assign_pod *pods, size_t npods,
	  size_t nups, const struct pc_assign_rules *rules, uint32_t *up, struct pc_error *err)
{
	struct stream s = { .seed = seed };
	uint32_t *perm, *uperm, *count;
	size_t at = 0;
	int k;

	if (nups == 0 || npods == 0)
		return pc_error_set(err, "no %s to assign", nups == 0 ? "uplinks" : "pods");
	perm = calloc(npods, sizeof(*perm));
	uperm = calloc(nups, sizeof(*uperm));
	count = calloc(nups, sizeof(*count));
	if (perm == NULL || uperm == NULL || count == NULL)
		abort();
	/* an attempt the constraints stop draws again, from where the stream is */
	for (k = 0; k < PC_ASSIGN_ATTEMPTS; k++) {
		at = attempt(&s, pods, npods, nups, rules, perm, uperm, count, up);
		if (at == npods)
			break;
	}
	if (k == PC_ASSIGN_ATTEMPTS) {
		const struct pc_assign_pod *p = &pods[perm[at]];
		char why[128];

		if (rules->max_per_uplink != 0)
			snprintf(why, sizeof(why), "holds %u pods%s", rules->max_per_uplink,
				 rules->separate_cells && p->cell[0] ? " or a pod of its cell"
								     : "");
		else
			snprintf(why, sizeof(why), "holds a pod of its cell");
		pc_error_set(err,
			     "no assignment in %d attempts: the last left pod %s (cell %s) on "
			     "no uplink, each one %s",
			     PC_ASSIGN_ATTEMPTS, p->id, p->cell[0] ? p->cell : "-", why);
	}
	free(perm);
	free(uperm);
	free(count);
	free(s.buf);
	return k == PC_ASSIGN_ATTEMPTS ? -1 : 0;
}

/* ---- the input files ---- */

/* The next line's fields (at most max) and where each starts; -1 when the text ends. */
static int
fields(const char **p, char f[][PC_DEVARGS_LEN], unsigned *col, int max, unsigned *len_err)
{
	const char *s = *p, *line = s;
	int n = 0;

	if (*s == '\0')
		return -1;
	*len_err = 0;
	while (*s != '\0' && *s != '\n') {
		while (*s == ' ' || *s == '\t')
			s++;
		if (*s == '#' || *s == '\n' || *s == '\0')
			break;
		const char *b = s;
		while (*s != '\0' && *s != '\n' && *s != ' ' && *s != '\t')
			s++;
		if (n < max) {
			size_t l = (size_t)(s - b);
			if (l >= PC_DEVARGS_LEN) {
				*len_err = (unsigned)(b - line) + 1;
				l = PC_DEVARGS_LEN - 1;
			}
			memcpy(f[n], b, l);
			f[n][l] = '\0';
			col[n] = (unsigned)(b - line) + 1;
		}
		n++;
	}
	while (*s != '\0' && *s != '\n')
		s++;
	*p = *s == '\n' ? s + 1 : s;
	return n;
}

static int fail_at(struct pc_error *err, const char *name, unsigned line, unsigned col,
		   const char *fmt, ...) __attribute__((format(printf, 5, 6)));

static int
fail_at(struct pc_error *err, const char *name, unsigned line, unsigned col, const char *fmt, ...)
{
	char msg[PC_ERR_MSG_LEN];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	pc_error_set(err, "%s", msg);
	if (err != NULL) {
		snprintf(err->file, sizeof(err->file), "%s", name);
		err->mark.line = line;
		err->mark.col = col;
	}
	return -1;
}

/* s follows the id rule (or is ""): it fits. */
static void
copy_id(char dst[PC_ID_LEN], const char *s)
{
	memcpy(dst, s, strnlen(s, PC_ID_LEN - 1) + 1);
	dst[PC_ID_LEN - 1] = '\0';
}

static int
cmp_pod(const void *a, const void *b)
{
	return strcmp(((const struct pc_assign_pod *)a)->id, ((const struct pc_assign_pod *)b)->id);
}

static int
cmp_uplink(const void *a, const void *b)
{
	const struct pc_assign_uplink *x = a, *y = b;
	int c = strcmp(x->appliance, y->appliance);

	return c != 0 ? c : strcmp(x->name, y->name);
}

long
pc_assign_parse_pods(const char *name, const char *text, struct pc_assign_pod **out,
		     struct pc_error *err)
{
	char f[3][PC_DEVARGS_LEN];
	unsigned col[3], line = 0, long_at;
	struct pc_assign_pod *pods = NULL;
	size_t n = 0;
	int k;

	for (const char *p = text; (k = fields(&p, f, col, 3, &long_at)) >= 0;) {
		line++;
		if (k == 0)
			continue;
		if (k != 3 || long_at) {
			free(pods);
			return fail_at(err, name, line, k != 3 ? 1 : long_at,
				       "expected '<pod id> <cell or -> <prefixes or ->'");
		}
		if (!pc_id_valid(f[0]) || (strcmp(f[1], "-") != 0 && !pc_id_valid(f[1]))) {
			free(pods);
			return fail_at(err, name, line, col[pc_id_valid(f[0]) ? 1 : 0],
				       "'%s' is not an id (" PC_ID_RULE ")",
				       pc_id_valid(f[0]) ? f[1] : f[0]);
		}
		if (n == PC_MAX_PODS) {
			free(pods);
			return fail_at(err, name, line, 1, "more than %d pods", PC_MAX_PODS);
		}
		struct pc_assign_pod *np = realloc(pods, (n + 1) * sizeof(*pods));
		if (np == NULL)
			abort();
		pods = np;
		memset(&pods[n], 0, sizeof(pods[n]));
		copy_id(pods[n].id, f[0]);
		copy_id(pods[n].cell, strcmp(f[1], "-") == 0 ? "" : f[1]);
		snprintf(pods[n].prefixes, PC_ASSIGN_PREFIXES_LEN, "%s",
			 strcmp(f[2], "-") == 0 ? "" : f[2]);
		pods[n].line = line;
		n++;
	}
	if (n == 0)
		return fail_at(err, name, 0, 0, "no pods");
	qsort(pods, n, sizeof(*pods), cmp_pod);
	for (size_t i = 1; i < n; i++) {
		if (strcmp(pods[i - 1].id, pods[i].id) == 0) {
			unsigned l =
			    pods[i].line > pods[i - 1].line ? pods[i].line : pods[i - 1].line;
			char id[PC_ID_LEN];
			copy_id(id, pods[i].id);
			free(pods);
			return fail_at(err, name, l, 1, "pod '%s' is listed twice", id);
		}
	}
	*out = pods;
	return (long)n;
}

long
pc_assign_parse_uplinks(const char *name, const char *text, struct pc_assign_uplink **out,
			struct pc_error *err)
{
	char f[4][PC_DEVARGS_LEN];
	unsigned col[4], line = 0, long_at;
	struct pc_assign_uplink *ups = NULL;
	size_t n = 0;
	int k;

	for (const char *p = text; (k = fields(&p, f, col, 4, &long_at)) >= 0;) {
		line++;
		if (k == 0)
			continue;
		if (k != 4 || long_at) {
			free(ups);
			return fail_at(err, name, line, k != 4 ? 1 : long_at,
				       "expected '<appliance id> <uplink name> <pod_port> "
				       "<fabric_port>'");
		}
		for (int i = 0; i < 2; i++) {
			if (!pc_id_valid(f[i])) {
				free(ups);
				return fail_at(err, name, line, col[i],
					       "'%s' is not an id (" PC_ID_RULE ")", f[i]);
			}
		}
		if (n == PC_ASSIGN_MAX_UPLINKS) {
			free(ups);
			return fail_at(err, name, line, 1, "more than %d uplinks",
				       PC_ASSIGN_MAX_UPLINKS);
		}
		struct pc_assign_uplink *nu = realloc(ups, (n + 1) * sizeof(*ups));
		if (nu == NULL)
			abort();
		ups = nu;
		memset(&ups[n], 0, sizeof(ups[n]));
		copy_id(ups[n].appliance, f[0]);
		copy_id(ups[n].name, f[1]);
		snprintf(ups[n].pod_port, PC_DEVARGS_LEN, "%s", f[2]);
		snprintf(ups[n].fabric_port, PC_DEVARGS_LEN, "%s", f[3]);
		ups[n].line = line;
		n++;
	}
	if (n == 0)
		return fail_at(err, name, 0, 0, "no uplinks");
	qsort(ups, n, sizeof(*ups), cmp_uplink);
	for (size_t i = 1; i < n; i++) {
		if (cmp_uplink(&ups[i - 1], &ups[i]) == 0) {
			char what[2 * PC_ID_LEN + 2];
			unsigned l = ups[i].line > ups[i - 1].line ? ups[i].line : ups[i - 1].line;
			snprintf(what, sizeof(what), "%s %s", ups[i].appliance, ups[i].name);
			free(ups);
			return fail_at(err, name, l, 1, "uplink '%s' is listed twice", what);
		}
	}
	*out = ups;
	return (long)n;
}

/* ---- the maps ---- */

/*
 * Whether an id may be written as a plain YAML scalar: it starts with a
 * letter (so it is no number, timestamp, '.inf', '-' or '-x') and is none
 * of the words YAML 1.1 or 1.2 reads as a boolean or null, in any case. Any
 * other id is quoted, even where YAML would not need it: the rule must be
 * plainly safe, and ids that start with a letter keep their bytes.
 */
static bool
plain_ok(const char *id)
{
	static const char *const words[] = { "y",     "n",  "yes", "no",  "true",
					     "false", "on", "off", "null" };

	if (!((id[0] >= 'a' && id[0] <= 'z') || (id[0] >= 'A' && id[0] <= 'Z')))
		return false;
	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++)
		if (strcasecmp(id, words[i]) == 0)
			return false;
	return true;
}

/* An id as a YAML scalar that reads back as the same string (ids need no escapes). */
static void
put_id(FILE *f, const char *key, const char *id)
{
	fprintf(f, plain_ok(id) ? "%s: %s\n" : "%s: \"%s\"\n", key, id);
}

/* The template, with @APPLIANCE@ replaced, then the appliance's uplinks and their pods. */
int
pc_assign_write_map(FILE *f, const char *tmpl, const char *app, const struct pc_assign_uplink *ups,
		    size_t nups, const struct pc_assign_pod *pods, size_t npods, const uint32_t *up)
{
	const char *p = tmpl, *at;

	while ((at = strstr(p, "@APPLIANCE@")) != NULL) {
		fwrite(p, 1, (size_t)(at - p), f);
		fputs(app, f);
		p = at + strlen("@APPLIANCE@");
	}
	fputs(p, f);
	/* a last line without its newline would run into uplinks: */
	if (tmpl[0] != '\0' && tmpl[strlen(tmpl) - 1] != '\n')
		fputc('\n', f);
	fputs("uplinks:\n", f);
	for (size_t u = 0; u < nups; u++) {
		if (strcmp(ups[u].appliance, app) != 0)
			continue;
		put_id(f, "  - name", ups[u].name);
		fprintf(f, "    pod_port: %s\n    fabric_port: %s\n", ups[u].pod_port,
			ups[u].fabric_port);
	}
	fputs("pods:\n", f);
	for (size_t i = 0; i < npods; i++) {
		if (strcmp(ups[up[i]].appliance, app) != 0)
			continue;
		put_id(f, "  - id", pods[i].id);
		put_id(f, "    uplink", ups[up[i]].name);
		if (pods[i].prefixes[0] != '\0') {
			fputs("    prefixes: [", f);
			for (const char *q = pods[i].prefixes; *q; q++)
				fputs(*q == ',' ? ", " : (char[]){ *q, '\0' }, f);
			fputs("]\n", f);
		}
	}
	return ferror(f) ? -1 : 0;
}

/* The map of appliance app, in a malloc'd string, or NULL (out of memory). */
char *
pc_assign_map_text(const char *tmpl, const char *app, const struct pc_assign_uplink *ups,
		   size_t nups, const struct pc_assign_pod *pods, size_t npods, const uint32_t *up)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	if (f == NULL)
		return NULL;
	int rc = pc_assign_write_map(f, tmpl, app, ups, nups, pods, npods, up);
	if (fclose(f) != 0 || rc != 0) {
		free(text);
		return NULL;
	}
	return text;
}

int
pc_assign_parse_rules(const char *name, const char *text, struct pc_assign_rules *rules,
		      struct pc_error *err)
{
	char f[2][PC_DEVARGS_LEN], *end;
	unsigned col[2], line = 0, long_at;
	int k;

	memset(rules, 0, sizeof(*rules));
	for (const char *p = text; (k = fields(&p, f, col, 2, &long_at)) >= 0;) {
		line++;
		if (k == 0)
			continue;
		if (k == 1 && strcmp(f[0], "separate-cells") == 0) {
			rules->separate_cells = true;
			continue;
		}
		if (k == 2 && strcmp(f[0], "max-pods-per-uplink") == 0) {
			unsigned long n = strtoul(f[1], &end, 10);
			if (*end != '\0' || f[1][0] < '1' || f[1][0] > '9' || n > PC_MAX_PODS)
				return fail_at(err, name, line, col[1],
					       "'%s' is not a number of pods "
					       "from 1 to %d",
					       f[1], PC_MAX_PODS);
			rules->max_per_uplink = (unsigned)n;
			continue;
		}
		return fail_at(err, name, line, 1,
			       "expected 'max-pods-per-uplink N' or "
			       "'separate-cells'");
	}
	return 0;
}
