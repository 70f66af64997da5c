/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The cap envelope (docs/bucket.md, "What the verifier checks") against
 * two things written here without the verifier's code:
 *
 * - a brute force over every pair of boundaries a <= b of a bucket's life:
 *   bytes passed in [a, b) <= what the bucket could hold at a + what the
 *   caps in force earned over [a, b);
 * - podcapd's own bucket (src/shape/bucket.h), started, reconfigured
 *   and offered frames as podcapd does, whose window totals must always
 *   verify.
 *
 * Random logs (seeded, so a failure replays) mix reloads changing cap,
 * burst and uplink, restarts clean or not and within the window logged,
 * gaps and clock steps, with honest and inflated window totals. A forged
 * log of reloads alternating the burst by one byte is refused; and a
 * verification resumed from the state saved at any record gives the
 * full run's result.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>
#include <sodium.h>

#include "shape/bucket.h"
#include "base/keys.h"
#include "log/note.h"
#include "log/record.h"
#include "verify/verify.h"

#include "testutil.h"

#define APP "t-env"
#define ORIGIN "podcap/" APP
#define WIN 1000000000ULL                 /* 1 s windows, so that a burst spans several */
#define T0 (1704067200ULL * 1000000000ULL)
#define HZ 1000000000ULL                  /* the simulated bucket counts real nanoseconds */
#define NPODS 2
#define NDIR PC_DIR_COUNT
#define MAXREC 48                         /* records per log, below PC_TEST_MAXLOG */
#define CASES 2000
#define BYTE ((__int128)8 * 1000000000)    /* bit-ns per byte */

typedef __int128 i128;

static struct pc_signer_key *key;
static struct pc_verifier_key vk;

static const char *const pod_id[NPODS] = { "pod-a", "pod-b" };
static const char *const uplink_name[2] = { "up0", "up1" };

/* ---- a seeded generator ---- */

static uint64_t rng;

static uint64_t
rnd(void)
{
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return rng * 0x2545F4914F6CDD1DULL;
}

/* Uniform in [lo, hi]. */
static uint64_t
pick(uint64_t lo, uint64_t hi)
{
	return lo + rnd() % (hi - lo + 1);
}

static bool
chance(unsigned percent)
{
	return rnd() % 100 < percent;
}

/* ---- what the brute force is told: a pod's life, in real time ---- */

enum item_kind {
	IT_NEW,      /* a new bucket: no interval reaches back across it */
	IT_KEPT,     /* the bucket goes on under new limits (RELOAD on the same uplink) */
	IT_WINDOW,
};

struct item {
	enum item_kind kind;
	uint64_t t, end;           /* real ns: a declaration at t, a window [t, end) */
	uint64_t cap, burst;       /* in force from here on */
	i128 hold;                 /* IT_NEW, IT_KEPT: the most the bucket holds at t, bit-ns */
	uint64_t bytes;            /* IT_WINDOW */
	uint64_t index;            /* IT_WINDOW: its record */
};

#define MAXITEMS (2 * MAXREC)

struct life {
	struct item it[MAXITEMS];
	size_t n;
};

/* ---- the log being generated, and podcapd's buckets running beside it ---- */

struct podstate {
	bool listed;
	uint64_t cap, burst;
	unsigned uplink;
	struct pc_bucket b[NDIR];
	bool has_bucket;
};

struct gen {
	struct pc_test_log lg;
	uint64_t label;            /* the cursor */
	uint64_t real;             /* the same in real time */
	uint64_t last_window_real; /* the start of the last window logged */
	bool window_seen;
	unsigned maps;             /* pod maps put in force so far: digests */
	struct podstate pod[NPODS];
	struct life life[NPODS][NDIR];
	bool honest;
	unsigned inflate;          /* percent of the windows whose totals are inflated */
};

/*
 * Encodes r as lg's next record. These records are small: encoded here
 * rather than in a buffer of PC_RECORD_MAX, which MALLOC_PERTURB_ (as meson
 * test sets it) would fill for each of the thousands of records.
 */
static void
push(struct pc_test_log *lg, const struct pc_record *r)
{
	uint8_t buf[4096];
	size_t n = pc_record_encode(r, buf, sizeof(buf));

	assert_true(n > 0 && lg->n < PC_TEST_MAXLOG);
	lg->rec[lg->n] = malloc(n);
	assert_non_null(lg->rec[lg->n]);
	memcpy(lg->rec[lg->n], buf, n);
	lg->len[lg->n++] = n;
}

static void
life_add(struct gen *g, unsigned p, const struct item *it)
{
	for (int d = 0; d < NDIR; d++) {
		struct life *l = &g->life[p][d];

		assert_true(l->n < MAXITEMS);
		l->it[l->n++] = *it;
	}
}

static void
base(const struct gen *g, struct pc_record *r, uint8_t type, uint64_t start)
{
	memset(r, 0, sizeof(*r));
	r->type = type;
	snprintf(r->appliance_id, sizeof(r->appliance_id), "%s", APP);
	r->window_len_ns = WIN;
	r->window_start_ns = start;
	r->time_ns = start;
	memset(r->podmap_digest, (int)g->maps, PC_DIGEST_LEN);
}

static struct pc_limits
limits_of(const struct podstate *ps)
{
	struct pc_limits lim = { .cap_bps = ps->cap, .burst_bytes = ps->burst,
				 .mode = PC_MODE_POLICE };
	return lim;
}

/* The pods in force, as a START or RELOAD lists them and every WINDOW repeats them. */
static void
fill_pods(const struct gen *g, struct pc_record *r, struct pc_record_pod *pods)
{
	r->npods = 0;
	r->pods = pods;
	for (unsigned p = 0; p < NPODS; p++) {
		const struct podstate *ps = &g->pod[p];

		if (!ps->listed)
			continue;
		struct pc_record_pod *rp = &pods[r->npods++];
		memset(rp, 0, sizeof(*rp));
		snprintf(rp->id, PC_ID_LEN, "%s", pod_id[p]);
		snprintf(rp->uplink, PC_ID_LEN, "%s", uplink_name[ps->uplink]);
		rp->cap_bps = ps->cap;
		rp->burst_bytes = ps->burst;
		rp->mode = 1;
	}
}

/*
 * A WINDOW's link blocks, one per uplink its pods name, and frames for its
 * bytes that a port can carry (check 13): at most 9000 bytes a frame.
 */
static void
fill_links(struct pc_record *r, struct pc_record_link *links)
{
	r->nlinks = 0;
	r->links = links;
	for (unsigned u = 0; u < 2; u++)
		for (uint32_t i = 0; i < r->npods; i++)
			if (strcmp(r->pods[i].uplink, uplink_name[u]) == 0) {
				memset(&links[r->nlinks], 0, sizeof(links[0]));
				snprintf(links[r->nlinks++].name, PC_ID_LEN, "%s", uplink_name[u]);
				break;
			}
	for (uint32_t i = 0; i < r->npods; i++)
		for (int d = 0; d < NDIR; d++)
			r->pods[i].dir[d].pass_frames = (r->pods[i].dir[d].pass_bytes + 8999) / 9000;
}

/* New limits for pod p: often the same, or the burst by a byte, or anything. */
static void
new_limits(struct podstate *ps)
{
	switch (rnd() % 6) {
	case 0:
		ps->burst += 1;
		break;
	case 1:
		ps->burst = ps->burst > 20000 ? ps->burst - 1 : ps->burst;
		break;
	case 2:
		ps->cap = pick(1, 40) * 100000;            /* 0.1 to 4 Mbit/s */
		break;
	case 3:
		ps->burst = pick(20000, 1000000);
		break;
	default:
		break;
	}
}

/*
 * Frames offered to a bucket over the real interval [t0, t1): a few
 * instants, and at each frames until one is refused (or light traffic).
 */
static uint64_t
offer(struct pc_bucket *b, uint64_t t0, uint64_t t1)
{
	uint64_t passed = 0;
	unsigned bursts = (unsigned)pick(0, 4);

	if (t1 <= t0)
		return 0;
	for (unsigned k = 0; k < bursts; k++) {
		uint64_t t = k + 1 == bursts && chance(50) ? t1 - 1 : pick(t0, t1 - 1);
		uint64_t frame = pick(64, 9000);
		unsigned most = chance(30) ? (unsigned)pick(1, 5) : 100000;

		if (t < b->last)
			t = b->last;   /* the worker's clock does not run back */
		for (unsigned f = 0; f < most; f++) {
			if (pc_bucket_admit(b, t, frame) != PC_VERDICT_PASS)
				break;
			passed += frame;
		}
	}
	return passed;
}

/* Totals beyond the bucket's: by a little, by a burst, anything, or all a bucket could. */
static uint64_t
inflated(uint64_t passed, const struct podstate *ps, uint64_t len)
{
	uint64_t most = ps->burst + ps->cap / 8 * (len / HZ);

	switch (rnd() % 4) {
	case 0:
		return passed + pick(1, 9000);
	case 1:
		return passed + pick(1, ps->burst);
	case 2:
		return pick(0, 2 * most);
	default:
		return most;
	}
}

/* What a window's totals claim: the bucket's own, or inflated on purpose (never below a frame). */
static uint64_t
claim(const struct gen *g, uint64_t passed, const struct podstate *ps, uint64_t len)
{
	if (g->honest || !chance(g->inflate))
		return passed;
	uint64_t bytes = inflated(passed, ps, len);
	return bytes != 0 && bytes < 64 ? 64 : bytes;
}

static void
add_window(struct gen *g, uint64_t count, uint64_t t_end_offer)
{
	struct pc_record r;
	struct pc_record_pod pods[NPODS];
	struct pc_record_link links[2];
	uint64_t len = count * WIN;

	if (t_end_offer == 0)
		t_end_offer = g->real + len;
	base(g, &r, PC_REC_WINDOW, g->label);
	r.window_count = count;
	fill_pods(g, &r, pods);
	for (unsigned p = 0, k = 0; p < NPODS; p++) {
		struct podstate *ps = &g->pod[p];

		if (!ps->listed)
			continue;
		for (int d = 0; d < NDIR; d++) {
			uint64_t passed = offer(&ps->b[d], g->real, t_end_offer);
			uint64_t bytes = claim(g, passed, ps, len);
			struct item it = { .kind = IT_WINDOW, .t = g->real, .end = g->real + len,
					   .cap = ps->cap, .burst = ps->burst, .bytes = bytes,
					   .index = g->lg.n };

			pods[k].dir[d].pass_bytes = bytes;
			struct life *l = &g->life[p][d];
			l->it[l->n++] = it;
		}
		k++;
	}
	fill_links(&r, links);
	push(&g->lg, &r);
	/* of a record of several windows, the last: podcapd ran into it (docs/bucket.md) */
	g->last_window_real = g->real + len - WIN;
	g->window_seen = true;
	g->label += len;
	g->real += len;
}

/* Windows the appliance ran but did not log: the buckets passed traffic nobody counted. */
static void
add_gap(struct gen *g)
{
	struct pc_record r;
	uint64_t count = pick(1, 3);

	for (unsigned p = 0; p < NPODS; p++)
		if (g->pod[p].listed)
			for (int d = 0; d < NDIR; d++)
				(void)offer(&g->pod[p].b[d], g->real, g->real + count * WIN);
	base(g, &r, PC_REC_GAP, g->label);
	r.window_count = count;
	push(&g->lg, &r);
	g->label += count * WIN;
	g->real += count * WIN;
}

/* The wall clock stepped: forward, labels jump with some real time; back, they go on. */
static void
add_clock(struct gen *g)
{
	struct pc_record r;
	uint64_t skip = chance(70) ? pick(1, 5) * WIN : 0;
	uint64_t elapsed = skip ? pick(0, skip) : 0;

	base(g, &r, PC_REC_CLOCK, g->label + skip);
	r.clock.elapsed_ns = elapsed;
	r.clock.step_ns = skip ? (int64_t)(skip - elapsed) : -(int64_t)pick(2, 9) * (int64_t)WIN;
	push(&g->lg, &r);
	g->label += skip;
	g->real += elapsed;
}

/*
 * RELOAD at the boundary: a pod that stays on its uplink keeps its bucket
 * (pc_bucket_reconfigure); a new or moved one gets a bucket created when
 * the reload was prepared, up to a window before.
 */
static void
add_reload(struct gen *g)
{
	struct pc_record r;
	struct pc_record_pod pods[NPODS];

	g->maps++;
	for (unsigned p = 0; p < NPODS; p++) {
		struct podstate *ps = &g->pod[p];
		bool was = ps->listed;
		unsigned up = ps->uplink;
		uint64_t old_burst = ps->burst;

		if (p == 1 && chance(25))
			ps->listed = !ps->listed;
		if (!ps->listed)
			continue;
		new_limits(ps);
		if (chance(10))
			ps->uplink ^= 1;
		struct pc_limits lim = limits_of(ps);
		bool kept = was && up == ps->uplink;
		/* a larger burst grants nothing at once */
		i128 most = BYTE * (kept && old_burst < ps->burst ? old_burst : ps->burst);
		for (int d = 0; d < NDIR; d++) {
			if (kept)
				pc_bucket_reconfigure(&ps->b[d], &lim, g->real);
			else
				pc_bucket_init(&ps->b[d], &lim, HZ, g->real - pick(0, WIN));
		}
		ps->has_bucket = true;
		struct item it = { .kind = kept ? IT_KEPT : IT_NEW, .t = g->real, .cap = ps->cap,
				   .burst = ps->burst, .hold = most };
		life_add(g, p, &it);
	}
	base(g, &r, PC_REC_RELOAD, g->label);
	fill_pods(g, &r, pods);
	push(&g->lg, &r);
}

/* The most a new bucket at a START holds (what the verifier is to assume, written again here). */
static i128
start_hold(const struct gen *g, const struct podstate *ps)
{
	i128 most = BYTE * ps->burst;

	if (g->window_seen) {
		i128 since = (i128)ps->cap * (i128)(g->real - g->last_window_real);
		most = since < most ? since : most;
	}
	return most;
}

/*
 * A START. podcapd creates its buckets empty after the last one exited
 * (at t_end) and before the window it starts in, possibly waiting for the
 * window the ledger covers to end. With the same limits the bucket goes on
 * as if it had run on; otherwise it is a new one.
 */
static void
add_start(struct gen *g, uint64_t t_end)
{
	struct pc_record r;
	struct pc_record_pod pods[NPODS];

	g->maps++;
	for (unsigned p = 0; p < NPODS; p++) {
		struct podstate *ps = &g->pod[p];
		uint64_t cap = ps->cap, burst = ps->burst;
		bool had = ps->has_bucket;

		if (p == 1 && g->lg.n > 0 && chance(20))
			ps->listed = !ps->listed;
		if (!ps->listed)
			continue;
		if (g->lg.n > 0 && chance(40))
			new_limits(ps);
		struct pc_limits lim = limits_of(ps);
		uint64_t t_init = g->lg.n == 0 ? g->real : pick(t_end, g->real);
		for (int d = 0; d < NDIR; d++)
			pc_bucket_init(&ps->b[d], &lim, HZ, t_init);
		ps->has_bucket = true;
		bool same = had && cap == ps->cap && burst == ps->burst;
		struct item it = { .kind = same ? IT_KEPT : IT_NEW, .t = g->real, .cap = ps->cap,
				   .burst = ps->burst, .hold = start_hold(g, ps) };
		life_add(g, p, &it);
	}
	base(g, &r, PC_REC_START, g->label);
	fill_pods(g, &r, pods);
	push(&g->lg, &r);
}

/*
 * podcapd stops cleanly (its last window partial: traffic up to t_stop) or
 * crashes after a window; it is down for a while (a GAP, or time the START
 * says), or back within the window already logged.
 */
static void
add_restart(struct gen *g)
{
	struct pc_record r;
	uint64_t t_end = g->real;

	if (chance(50)) {
		uint64_t t_stop = g->real + pick(1, WIN - 1);

		add_window(g, 1, t_stop);
		base(g, &r, PC_REC_STOP, g->label);
		push(&g->lg, &r);
		t_end = t_stop;
	}
	uint64_t down = chance(50) ? 0 : pick(1, 3) * WIN;
	if (down != 0 && chance(50)) {
		base(g, &r, PC_REC_GAP, g->label);
		r.window_count = down / WIN;
		push(&g->lg, &r);
	}
	g->label += down;
	g->real += down;
	add_start(g, t_end);
}

static void
gen_log(struct gen *g, bool honest)
{
	memset(g, 0, sizeof(*g));
	g->honest = honest;
	g->inflate = (unsigned)pick(1, 8);
	g->label = T0 + pick(0, 100) * WIN;
	g->real = g->label;
	for (unsigned p = 0; p < NPODS; p++) {
		struct podstate *ps = &g->pod[p];

		ps->listed = p == 0 || chance(70);
		ps->cap = pick(1, 40) * 100000;
		ps->burst = pick(20000, 1000000);
		ps->uplink = (unsigned)pick(0, 1);
	}
	add_start(g, g->real);
	while (g->lg.n < MAXREC - 4) {
		unsigned k = (unsigned)pick(0, 99);

		if (k < 55)
			add_window(g, chance(10) ? pick(2, 3) : 1, 0);
		else if (k < 65)
			add_gap(g);
		else if (k < 80)
			add_reload(g);
		else if (k < 88)
			add_clock(g);
		else
			add_restart(g);
	}
}

/* ---- the brute force ---- */

/* What the brute force finds over one bucket's life: its worst interval. */
struct finding {
	unsigned pod;
	int dir;
	uint64_t record;           /* the window where the worst interval ends */
	uint64_t by;               /* its excess, bytes rounded up */
	uint64_t over;             /* windows where some interval ends over the envelope */
};

#define MAXFIND (NPODS * NDIR * MAXITEMS)

/*
 * Bit-ns earned over the real interval [a, b) by the caps in force: that of
 * declaration `decl` (in force at a), then those of the ones after it.
 */
static i128
earned(const struct life *l, size_t decl, uint64_t a, uint64_t b)
{
	i128 sum = 0;
	uint64_t cap = l->it[decl].cap;

	for (size_t i = decl + 1; i < l->n && a < b; i++) {
		if (l->it[i].kind == IT_WINDOW)
			continue;
		uint64_t t = l->it[i].t < b ? l->it[i].t : b;
		if (t > a) {
			sum += (i128)cap * (t - a);
			a = t;
		}
		cap = l->it[i].cap;
	}
	if (b > a)
		sum += (i128)cap * (b - a);
	return sum;
}

/* Bytes of the windows among items [from, to]. */
static i128
bytes_between(const struct life *l, size_t from, size_t to)
{
	i128 sum = 0;

	for (size_t k = from; k <= to; k++)
		if (l->it[k].kind == IT_WINDOW)
			sum += l->it[k].bytes;
	return sum;
}

/*
 * The largest excess of an interval from boundary (item a, its end if
 * `end`) to the end of window j: bytes passed less what the bucket could
 * hold at a and what the caps earned over it.
 */
static i128
excess(const struct life *l, size_t a, bool end, size_t j)
{
	const struct item *ia = &l->it[a];
	uint64_t t = ia->kind != IT_WINDOW ? ia->t : end ? ia->end : ia->t;
	i128 hold = ia->kind != IT_WINDOW ? ia->hold : BYTE * ia->burst;
	size_t decl = a;

	while (l->it[decl].kind == IT_WINDOW)
		decl--;
	return BYTE * bytes_between(l, a + (end ? 1 : 0), j) - hold -
	    earned(l, decl, t, l->it[j].end);
}

/*
 * Every pair of boundaries a <= b of each bucket's life (from one IT_NEW to
 * the next), b the end of a window: one finding per life that broke it.
 */
static size_t
brute_life(const struct life *l, unsigned pod, int dir, struct finding *out)
{
	size_t nf = 0;

	for (size_t run = 0; run < l->n;) {
		size_t next = run + 1;
		struct finding f = { .pod = pod, .dir = dir };
		i128 worst = 0;

		while (next < l->n && l->it[next].kind != IT_NEW)
			next++;
		for (size_t j = run; j < next; j++) {
			bool over = false;

			if (l->it[j].kind != IT_WINDOW)
				continue;
			for (size_t a = run; a <= j; a++)
				for (int end = 0; end <= 1; end++) {
					if (end && (l->it[a].kind != IT_WINDOW || a == j))
						continue;
					i128 ex = excess(l, a, end, j);
					if (ex <= 0)
						continue;
					over = true;
					if (ex > worst) {
						worst = ex;
						f.record = l->it[j].index;
					}
				}
			f.over += over;
		}
		if (f.over > 0) {
			f.by = (uint64_t)((worst + BYTE - 1) / BYTE);
			out[nf++] = f;
		}
		run = next;
	}
	return nf;
}

static int
cmp_finding(const void *a, const void *b)
{
	const struct finding *x = a, *y = b;

	if (x->pod != y->pod)
		return x->pod < y->pod ? -1 : 1;
	if (x->dir != y->dir)
		return x->dir < y->dir ? -1 : 1;
	if (x->record != y->record)
		return x->record < y->record ? -1 : 1;
	return 0;
}

static size_t
brute(const struct gen *g, struct finding *out)
{
	size_t n = 0;

	for (unsigned p = 0; p < NPODS; p++)
		for (int d = 0; d < NDIR; d++)
			n += brute_life(&g->life[p][d], p, d, out + n);
	qsort(out, n, sizeof(*out), cmp_finding);
	return n;
}

/* The verifier's envelope failures, read back from their messages. */
static size_t
verdicts(const struct pc_verify *v, struct finding *out)
{
	size_t n = 0;

	for (size_t i = 0; i < pc_verify_nfailures(v); i++) {
		const struct pc_verify_failure *f = pc_verify_failure_at(v, i);
		char id[PC_ID_LEN], dir[8];
		unsigned long long by, over;

		if (f->check != PC_VC_ENVELOPE) {
			print_message("unexpected failure: %s: record %lld: %s\n",
				      pc_verify_check_name(f->check), (long long)f->record, f->msg);
			fail();
		}
		assert_int_equal(sscanf(f->msg, "pod %63s %7[a-z]:", id, dir), 2);
		const char *tail = strstr(f->msg, " by ");
		assert_non_null(tail);
		assert_int_equal(sscanf(tail, " by %llu bytes (%llu window", &by, &over), 2);
		out[n].pod = strcmp(id, pod_id[0]) == 0 ? 0 : 1;
		out[n].dir = strcmp(dir, "up") == 0 ? PC_DIR_UP : PC_DIR_DOWN;
		out[n].record = (uint64_t)f->record;
		out[n].by = by;
		out[n].over = over;
		n++;
	}
	qsort(out, n, sizeof(*out), cmp_finding);
	return n;
}

static void
assert_same_findings(const struct finding *a, size_t na, const struct finding *b, size_t nb,
		     uint64_t seed)
{
	bool same = na == nb;

	for (size_t i = 0; same && i < na; i++)
		same = a[i].pod == b[i].pod && a[i].dir == b[i].dir && a[i].record == b[i].record &&
		    a[i].by == b[i].by && a[i].over == b[i].over;
	if (same)
		return;
	print_message("seed %llu: brute force %zu findings, verifier %zu\n",
		      (unsigned long long)seed, na, nb);
	for (size_t i = 0; i < na; i++)
		print_message("  brute    %s %d: record %llu by %llu (%llu over)\n", pod_id[a[i].pod],
			      a[i].dir, (unsigned long long)a[i].record,
			      (unsigned long long)a[i].by, (unsigned long long)a[i].over);
	for (size_t i = 0; i < nb; i++)
		print_message("  verifier %s %d: record %llu by %llu (%llu over)\n", pod_id[b[i].pod],
			      b[i].dir, (unsigned long long)b[i].record,
			      (unsigned long long)b[i].by, (unsigned long long)b[i].over);
	fail();
}

/* ---- the cases ---- */

/* The record type of lg's record i, read from its encoding (version, then type). */
static uint8_t
type_at(const struct pc_test_log *lg, size_t i)
{
	return lg->rec[i][1];
}

/*
 * A run resumed from the state after the first n records, when those
 * verify, gives the full run's result: at every n (`every`), else at one
 * START or RELOAD picked at random, where the state is all that carries
 * the envelope across it. Returns the resumed runs.
 */
static unsigned
check_resumes(const struct pc_test_log *lg, const struct pc_verify *full, bool every)
{
	struct pc_test_run o = { .vk = &vk };
	char note[PC_NOTE_MAX], full_note[PC_NOTE_MAX];
	size_t fl = pc_test_log_checkpoint(lg, lg->n, key, full_note, sizeof(full_note));
	size_t decl[MAXREC], ndecl = 0;
	unsigned runs = 0;

	for (size_t n = 1; n < lg->n; n++)
		if (type_at(lg, n) == PC_REC_START || type_at(lg, n) == PC_REC_RELOAD)
			decl[ndecl++] = n;
	size_t only = ndecl > 0 ? decl[rnd() % ndecl] : 0;
	for (size_t n = 1; n < lg->n; n++) {
		if (!every && n != only)
			continue;
		size_t nl = pc_test_log_checkpoint(lg, n, key, note, sizeof(note));
		struct pc_verify *v = pc_test_verify(&o, note, nl, lg);
		char *st = NULL;
		size_t stlen;

		if (pc_verify_state_save(v, &st, &stlen) != 0) {
			pc_verify_free(v);
			continue;   /* failed by record n: nothing saved */
		}
		pc_verify_free(v);
		struct pc_test_run ro = { .vk = &vk, .state = st, .state_len = stlen };
		struct pc_verify *inc = pc_test_verify(&ro, full_note, fl, lg);
		assert_int_equal(pc_verify_resume_at(inc), n);
		assert_int_equal(pc_verify_nfailures(inc), pc_verify_nfailures(full));
		for (size_t i = 0; i < pc_verify_nfailures(full); i++) {
			const struct pc_verify_failure *a = pc_verify_failure_at(full, i);
			const struct pc_verify_failure *b = pc_verify_failure_at(inc, i);

			assert_int_equal(a->record, b->record);
			assert_string_equal(a->msg, b->msg);
		}
		pc_verify_free(inc);
		free(st);
		runs++;
	}
	return runs;
}

static void
test_envelope_random(void **state)
{
	static struct gen g;
	static struct finding want[MAXFIND], got[MAXFIND];
	struct pc_test_run o = { .vk = &vk };
	struct timespec t0, t1;
	unsigned failing = 0, resumed = 0;

	(void)state;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (uint64_t c = 0; c < CASES; c++) {
		uint64_t seed = 0x9e3779b97f4a7c15ULL * (c + 1);
		bool honest = c % 2 == 0;

		rng = seed;
		gen_log(&g, honest);
		struct pc_verify *v = pc_test_verify_signed(&o, key, &g.lg);
		size_t nw = brute(&g, want), ng = verdicts(v, got);
		/* podcapd's own bucket is never over the envelope */
		if (honest)
			assert_same_findings(NULL, 0, got, ng, seed);
		assert_same_findings(want, nw, got, ng, seed);
		failing += ng > 0;
		if (!honest || c % 100 == 0)
			resumed += check_resumes(&g.lg, v, c % 100 == 0);
		pc_verify_free(v);
		pc_test_log_free(&g.lg);
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	print_message("envelope: %u random logs (%u honest, %u over the envelope), %u runs "
		      "resumed from a saved state, in %.2f s\n", CASES, CASES / 2, failing, resumed,
		      (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9);
}

/*
 * RELOADs that alternate pod-a's burst by one byte, each window passing a
 * whole burst on top of the cap: a new run at every change of limits would
 * hand it a fresh burst each time. The bucket keeps its level across them,
 * so from the second window on each passes a burst too much. The same log
 * with the totals podcapd's bucket gives, at its fullest, verifies.
 */
static void
build_alternating(struct gen *g, bool honest)
{
	struct pc_record r;
	struct pc_record_pod pods[NPODS];
	struct pc_record_link links[2];

	memset(g, 0, sizeof(*g));
	g->label = g->real = T0;
	g->pod[0] = (struct podstate){ .listed = true, .cap = 8000000, .burst = 3000000 };
	struct pc_limits lim = limits_of(&g->pod[0]);
	for (int d = 0; d < NDIR; d++)
		pc_bucket_init(&g->pod[0].b[d], &lim, HZ, g->real - WIN);  /* a full bucket */
	base(g, &r, PC_REC_START, g->label);
	fill_pods(g, &r, pods);
	push(&g->lg, &r);
	for (int w = 0; w < 6; w++) {
		struct podstate *ps = &g->pod[0];

		if (w > 0) {
			ps->burst += w % 2 ? 1 : -1ULL;
			lim = limits_of(ps);
			for (int d = 0; d < NDIR; d++)
				pc_bucket_reconfigure(&ps->b[d], &lim, g->real);
			g->maps++;
			base(g, &r, PC_REC_RELOAD, g->label);
			fill_pods(g, &r, pods);
			push(&g->lg, &r);
		}
		base(g, &r, PC_REC_WINDOW, g->label);
		r.window_count = 1;
		fill_pods(g, &r, pods);
		for (int d = 0; d < NDIR; d++) {
			/* at its fullest: all it holds at the start, then all it earns */
			uint64_t passed = 0;
			while (pc_bucket_admit(&ps->b[d], g->real, 1000) == PC_VERDICT_PASS)
				passed += 1000;
			while (pc_bucket_admit(&ps->b[d], g->real + WIN, 1000) == PC_VERDICT_PASS)
				passed += 1000;
			pods[0].dir[d].pass_bytes = honest ? passed : ps->burst + ps->cap / 8;
		}
		fill_links(&r, links);
		push(&g->lg, &r);
		g->label += WIN;
		g->real += WIN;
	}
}

static void
test_alternating_burst(void **state)
{
	static struct gen g;
	struct pc_test_run o = { .vk = &vk };

	(void)state;
	build_alternating(&g, false);
	struct pc_verify *v = pc_test_verify_signed(&o, key, &g.lg);
	const struct pc_verify_failure *f = pc_verify_find(v, PC_VC_ENVELOPE);
	assert_non_null(f);
	/* one failure per direction, at the last window: the worst interval is all of them */
	assert_int_equal(pc_verify_nfailures(v), 2);
	assert_int_equal(f->record, g.lg.n - 1);
	assert_int_equal(f->type, PC_REC_WINDOW);
	assert_non_null(strstr(f->msg, "pod pod-a up: 24000003 bytes passed from "
			       "2024-01-01T00:00:00Z to 2024-01-01T00:00:06Z (6s)"));
	assert_non_null(strstr(f->msg, "exceed the 3000000 bytes its bucket could hold at the "
			       "start + the 6000000 bytes it earned since by 15000003 bytes (5 windows over)"));
	pc_verify_free(v);
	pc_test_log_free(&g.lg);

	build_alternating(&g, true);
	v = pc_test_verify_signed(&o, key, &g.lg);
	assert_int_equal(pc_verify_nfailures(v), 0);
	pc_verify_free(v);
	pc_test_log_free(&g.lg);
}

static int
setup(void **state)
{
	(void)state;
	if (sodium_init() < 0)
		return -1;
	key = pc_test_key(ORIGIN, &vk);
	return 0;
}

static int
teardown(void **state)
{
	(void)state;
	pc_signer_key_free(key);
	return 0;
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_alternating_burst),
		cmocka_unit_test(test_envelope_random),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
