/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * podcap-bench-bucket: what the per-frame core costs, next to plain-C peers
 * timed in the same run.
 *
 *   podcap-bench-bucket [--rounds N] [--calls N] [--out FILE] [--no-callgrind]
 *
 * Each loop below makes --calls calls over a fixed mix of 100 frames
 * (IPv4 and IPv6 data and ACKs, VLAN and QinQ tags, ARP, neighbour
 * solicitations, LLDP, a runt) and is timed --rounds times, in a rotated
 * order each round, so that what else runs on the machine falls on all of
 * them alike. Reported: the median and the least nanoseconds per call, and
 * the ratio to the peer "memcpy of 64 bytes" (per round, then the median of
 * those; and of the least). On a shared machine the nanoseconds move; the
 * ratios move much less. The JSON file (--out) holds every round.
 *
 * When valgrind is on the PATH (and not with --no-callgrind), each loop is
 * also run once under callgrind, counting only inside the loop, for
 * instructions per call: exact and repeatable, unlike time.
 *
 * Times are in injected ticks of a 2.5 GHz clock (podcapd uses the TSC),
 * advanced by each frame's time on the wire at the offered load.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "shape/bucket.h"
#include "shape/classify.h"
#include "base/clock.h"
#include "podmap/config.h"
#include "base/units.h"

#define MIX_FRAMES	100
#define FRAME_MAX	1518
#define TICK_HZ		2500000000ull
#define QUEUE_SLOTS	(1u << 17)	/* a power of two, above any backlog below */
#define MAX_ROUNDS	101
/* each loop on its own cache lines: its timing must not depend on its neighbours' code */
#define NOINLINE	__attribute__((noinline, noclone, aligned(64)))

extern char **environ;

struct frame {
	uint8_t bytes[FRAME_MAX];
	uint32_t len;
	enum pc_dir dir;
	enum pc_class expect;
	uint64_t gap;		/* ticks on the wire at the offered load */
};

static struct frame mix[MIX_FRAMES];

/* What a loop decided, so a reader can see what was measured. */
struct verdicts {
	uint64_t pass;
	uint64_t queue;
	uint64_t drop;
};

/* The state of one bucket loop, set up outside the timed (and counted) part. */
struct bucket_run {
	struct pc_bucket b;
	uint64_t now;
	uint32_t q[QUEUE_SLOTS];	/* lengths of the queued frames, FIFO */
	uint32_t qhead;
	uint32_t qtail;
};

/* The peer of the bucket: the textbook token bucket, in double precision. */
struct float_bucket {
	double tokens;		/* bits */
	double depth;
	double bits_per_tick;
	uint64_t last;
};

static struct bucket_run brun;
static struct float_bucket fb;
static uint8_t copy_dst[64];
static volatile uint64_t sink;

/* ---- the frame mix ---- */

static uint8_t *
put_be16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
	return p + 2;
}

/* Ethernet header with `ntags` tags (QinQ outer first); returns the L3 start. */
static uint8_t *
put_eth(uint8_t *p, unsigned ntags, uint16_t type)
{
	static const uint8_t macs[12] = {
		0x02, 0, 0x0a, 0, 0, 0xc8, 0x02, 0, 0x0a, 0, 0, 0x01,
	};

	memcpy(p, macs, sizeof(macs));
	p += sizeof(macs);
	for (unsigned i = 0; i < ntags; i++) {
		p = put_be16(p, i == 0 && ntags > 1 ? 0x88a8 : 0x8100);
		p = put_be16(p, (uint16_t)(100 + i));
	}
	return put_be16(p, type);
}

static void
put_ipv4(struct frame *f, unsigned ntags, uint32_t len, uint8_t host)
{
	uint8_t *l3 = put_eth(f->bytes, ntags, 0x0800);
	uint32_t tot = len - (uint32_t)(l3 - f->bytes);

	l3[0] = 0x45;
	put_be16(l3 + 2, (uint16_t)tot);
	l3[8] = 64;
	l3[9] = 6;
	memcpy(l3 + 12, (const uint8_t[]){ 10, 0, 0, host }, 4);
	memcpy(l3 + 16, (const uint8_t[]){ 10, 0, 0, 200 }, 4);
	f->len = len;
	f->expect = PC_CLASS_IPV4;
}

static void
put_ipv6(struct frame *f, uint32_t len, uint8_t next, uint32_t plen)
{
	uint8_t *l3 = put_eth(f->bytes, 0, 0x86dd);

	l3[0] = 0x60;
	put_be16(l3 + 4, (uint16_t)plen);
	l3[6] = next;
	l3[7] = 64;
	l3[8] = 0xfd;
	l3[23] = 1;
	l3[24] = 0xfd;
	l3[25] = 0x0f;
	l3[39] = 1;
	f->len = len;
	f->expect = PC_CLASS_IPV6;
}

static void
put_ipv6_data(struct frame *f, uint32_t len)
{
	put_ipv6(f, len, 6, len - 14 - 40);
}

/* A neighbour solicitation with a source link-layer address option. */
static void
put_nd_ns(struct frame *f)
{
	put_ipv6(f, 14 + 40 + 32, 58, 32);
	f->bytes[14 + 40] = 135;
	f->bytes[14 + 40 + 8] = 0xfd;
	f->bytes[14 + 40 + 23] = 2;
}

static void
put_arp(struct frame *f)
{
	uint8_t *a = put_eth(f->bytes, 0, 0x0806);

	put_be16(a, 1);
	put_be16(a + 2, 0x0800);
	a[4] = 6;
	a[5] = 4;
	put_be16(a + 6, 1);
	memcpy(a + 14, (const uint8_t[]){ 10, 0, 0, 1 }, 4);
	memcpy(a + 24, (const uint8_t[]){ 10, 0, 0, 200 }, 4);
	f->len = 60;
	f->expect = PC_CLASS_IPV4;
}

static void
put_other(struct frame *f, uint16_t type, uint32_t len, enum pc_class expect)
{
	put_eth(f->bytes, 0, type);
	f->len = len;
	f->expect = expect;
}

static uint64_t
xorshift(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/*
 * Roughly what crosses an uplink that carries TCP: mostly full IPv4 data
 * frames and their ACKs, some IPv6 and tagged frames, a little ARP and
 * neighbour discovery, and the odd frame of no pod or no shape at all.
 */
static void
build_mix(void)
{
	unsigned n = 0, i;
	uint64_t seed = 0x9e3779b97f4a7c15ull;

	memset(mix, 0, sizeof(mix));
	for (i = 0; i < 38; i++)
		put_ipv4(&mix[n++], 0, 1514, 1);
	for (i = 0; i < 25; i++)
		put_ipv4(&mix[n++], 0, 60, 1);
	for (i = 0; i < 10; i++)
		put_ipv4(&mix[n++], 1, 1518, 2);
	for (i = 0; i < 5; i++)
		put_ipv4(&mix[n++], 2, 1000, 3);
	for (i = 0; i < 10; i++)
		put_ipv6_data(&mix[n++], 1514);
	for (i = 0; i < 4; i++)
		put_ipv6_data(&mix[n++], 74);
	for (i = 0; i < 3; i++)
		put_arp(&mix[n++]);
	for (i = 0; i < 2; i++)
		put_nd_ns(&mix[n++]);
	for (i = 0; i < 2; i++)
		put_other(&mix[n++], 0x88cc, 60, PC_CLASS_LLDP);
	put_other(&mix[n++], 0x0800, 12, PC_CLASS_MALFORMED);

	/* shuffled, so that the branch predictor cannot learn the order */
	for (i = MIX_FRAMES - 1; i > 0; i--) {
		unsigned j = (unsigned)(xorshift(&seed) % (i + 1));
		struct frame t = mix[i];
		mix[i] = mix[j];
		mix[j] = t;
	}
	for (i = 0; i < MIX_FRAMES; i++)
		mix[i].dir = (i & 1) ? PC_DIR_DOWN : PC_DIR_UP;
}

/* The mix must classify as built, or the numbers would describe another mix. */
static int
check_mix(void)
{
	struct pc_frame_key key;

	for (unsigned i = 0; i < MIX_FRAMES; i++) {
		enum pc_class c = pc_classify(mix[i].bytes, mix[i].len, mix[i].dir, &key);
		if (c != mix[i].expect) {
			fprintf(stderr, "podcap-bench-bucket: frame %u (%u bytes) classifies as %d, "
				"built as %d\n", i, mix[i].len, (int)c, (int)mix[i].expect);
			return -1;
		}
	}
	return 0;
}

/* Each frame's time on the wire at `offered_bps`, in ticks. */
static void
set_gaps(uint64_t offered_bps)
{
	for (unsigned i = 0; i < MIX_FRAMES; i++)
		mix[i].gap = (uint64_t)mix[i].len * 8 * TICK_HZ / offered_bps;
}

/* ---- the loops: each makes `calls` calls over the mix ---- */

/* Peer: copy the first 64 bytes of each frame where the compiler cannot drop it. */
static NOINLINE uint64_t
bench_memcpy64(uint64_t calls, struct verdicts *v)
{
	uint64_t acc = 0;
	unsigned k = 0;

	(void)v;
	for (uint64_t i = 0; i < calls; i++) {
		memcpy(copy_dst, mix[k].bytes, sizeof(copy_dst));
		__asm__ volatile("" : : "r"(copy_dst) : "memory");
		acc += copy_dst[i & 63];
		if (++k == MIX_FRAMES)
			k = 0;
	}
	return acc;
}

static NOINLINE uint64_t
bench_classify(uint64_t calls, struct verdicts *v)
{
	struct pc_frame_key key;
	uint64_t acc = 0;
	unsigned k = 0;

	(void)v;
	for (uint64_t i = 0; i < calls; i++) {
		acc += (uint64_t)pc_classify(mix[k].bytes, mix[k].len, mix[k].dir, &key) +
		    key.addr[3];
		if (++k == MIX_FRAMES)
			k = 0;
	}
	return acc;
}

static inline void
count(struct verdicts *v, enum pc_verdict d)
{
	v->pass += d == PC_VERDICT_PASS;
	v->queue += d == PC_VERDICT_QUEUE;
	v->drop += d == PC_VERDICT_DROP;
}

/* Police mode, or shape mode where nothing waits: admit only. */
static NOINLINE uint64_t
bench_admit(uint64_t calls, struct verdicts *v)
{
	struct pc_bucket *b = &brun.b;
	uint64_t now = brun.now;
	unsigned k = 0;

	for (uint64_t i = 0; i < calls; i++) {
		now += mix[k].gap;
		count(v, pc_bucket_admit(b, now, mix[k].len));
		if (++k == MIX_FRAMES)
			k = 0;
	}
	brun.now = now;
	return (uint64_t)b->level;
}

/*
 * Shape mode, as podcapd's worker does it: admit, hold what is queued, and
 * release the head of the queue whenever its tokens have accrued.
 */
static NOINLINE uint64_t
bench_shape(uint64_t calls, struct verdicts *v)
{
	struct bucket_run *r = &brun;
	uint64_t now = r->now;
	unsigned k = 0;

	for (uint64_t i = 0; i < calls; i++) {
		enum pc_verdict d;

		now += mix[k].gap;
		d = pc_bucket_admit(&r->b, now, mix[k].len);
		count(v, d);
		if (d == PC_VERDICT_QUEUE)
			r->q[r->qtail++ & (QUEUE_SLOTS - 1)] = mix[k].len;
		while (r->qhead != r->qtail &&
		    pc_bucket_release(&r->b, now, r->q[r->qhead & (QUEUE_SLOTS - 1)]))
			r->qhead++;
		if (++k == MIX_FRAMES)
			k = 0;
	}
	r->now = now;
	return r->b.backlog_bytes;
}

/* Peer of the bucket: the same police decisions, in floating point. */
static NOINLINE uint64_t
bench_float_bucket(uint64_t calls, struct verdicts *v)
{
	uint64_t now = brun.now;
	unsigned k = 0;

	for (uint64_t i = 0; i < calls; i++) {
		double bits = (double)mix[k].len * 8;

		now += mix[k].gap;
		fb.tokens += (double)(now - fb.last) * fb.bits_per_tick;
		fb.last = now;
		if (fb.tokens > fb.depth)
			fb.tokens = fb.depth;
		if (fb.tokens >= bits) {
			fb.tokens -= bits;
			v->pass++;
		} else {
			v->drop++;
		}
		if (++k == MIX_FRAMES)
			k = 0;
	}
	brun.now = now;
	return (uint64_t)fb.tokens;
}

/* ---- the benchmarks: a loop and the state it starts from ---- */

struct bench {
	const char *name;
	const char *what;
	uint64_t (*run)(uint64_t calls, struct verdicts *v);
	const char *fn;		/* the loop's symbol, for callgrind */
	uint64_t cap_bps;	/* bucket loops: the cap, and */
	uint64_t offered_bps;	/* the load offered to it */
	enum pc_mode mode;
	bool peer;
};

#define BENCH(f)	bench_##f, "bench_" #f

/* memcpy64 first: every ratio is to it */
enum { B_MEMCPY, B_CLASSIFY, B_ADMIT_PASS, B_ADMIT_POLICE, B_SHAPE, B_FLOAT, NBENCH };

static const struct bench benches[NBENCH] = {
	[B_MEMCPY] = { "memcpy64", "memcpy of 64 bytes (peer)", BENCH(memcpy64),
		       0, 0, PC_MODE_POLICE, true },
	[B_CLASSIFY] = { "classify", "pc_classify", BENCH(classify),
			 0, 0, PC_MODE_POLICE, false },
	[B_ADMIT_PASS] = { "admit_pass", "pc_bucket_admit, all pass (10G offered, 100G cap)",
			   BENCH(admit), 100000000000ull, 10000000000ull, PC_MODE_POLICE, false },
	[B_ADMIT_POLICE] = { "admit_police", "pc_bucket_admit, police (10G offered, 5G cap)",
			     BENCH(admit), 5000000000ull, 10000000000ull, PC_MODE_POLICE, false },
	[B_SHAPE] = { "shape", "pc_bucket_admit + release, shape (10G offered, 5G cap)",
		      BENCH(shape), 5000000000ull, 10000000000ull, PC_MODE_SHAPE, false },
	[B_FLOAT] = { "float_police", "double-precision bucket, police (peer; 10G/5G)",
		      BENCH(float_bucket), 5000000000ull, 10000000000ull, PC_MODE_POLICE, true },
};

/* Fresh state for a loop: a bucket that has had a second to fill. */
static void
setup(const struct bench *bm)
{
	struct pc_limits lim = {
		.cap_bps = bm->cap_bps ? bm->cap_bps : 1,
		.burst_bytes = bm->cap_bps ? bm->cap_bps / 8 / 10 : FRAME_MAX, /* 100 ms */
		.mode = bm->mode,
		.queue_delay_ns = 50 * 1000 * 1000,
	};

	memset(&brun, 0, sizeof(brun));
	pc_bucket_init(&brun.b, &lim, TICK_HZ, 0);
	brun.now = TICK_HZ;
	fb.depth = (double)lim.burst_bytes * 8;
	fb.bits_per_tick = (double)lim.cap_bps / (double)TICK_HZ;
	fb.tokens = 0;
	fb.last = 0;
	if (bm->offered_bps != 0)
		set_gaps(bm->offered_bps);
}

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double
median(const double *v, unsigned n)
{
	double s[MAX_ROUNDS];

	memcpy(s, v, n * sizeof(*s));
	qsort(s, n, sizeof(*s), cmp_double);
	return n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
}

/* ---- instructions per call, under callgrind ---- */

/*
 * Runs this program under callgrind for one loop and returns the
 * instructions counted inside it divided by `calls`, or -1.
 */
static double
callgrind_per_call(const char *self, const struct bench *bm, uint64_t calls)
{
	static char prog[] = "valgrind", tool[] = "--tool=callgrind", only_opt[] = "--only",
		    calls_opt[] = "--calls";
	char out[] = "/tmp/podcap-bench-callgrind.XXXXXX";
	char out_opt[64], toggle[64], calls_s[32], self_s[PATH_MAX], name[32];
	char line[512];
	double per_call = -1;
	pid_t pid;
	int fd, status;
	FILE *f;

	fd = mkstemp(out);
	if (fd < 0)
		return -1;
	close(fd);
	snprintf(out_opt, sizeof(out_opt), "--callgrind-out-file=%s", out);
	/* the compiler may give a static function a suffix, as in bench_x.part.0 */
	snprintf(toggle, sizeof(toggle), "--toggle-collect=%s*", bm->fn);
	snprintf(calls_s, sizeof(calls_s), "%" PRIu64, calls);
	snprintf(self_s, sizeof(self_s), "%s", self);
	snprintf(name, sizeof(name), "%s", bm->name);
	char *argv[] = {
		prog, tool, out_opt, toggle, self_s, only_opt, name, calls_opt, calls_s, NULL,
	};
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
	posix_spawn_file_actions_addopen(&fa, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
	int rc = posix_spawnp(&pid, "valgrind", &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	if (rc != 0 || waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) ||
	    WEXITSTATUS(status) != 0)
		goto out;

	f = fopen(out, "r");
	if (f == NULL)
		goto out;
	while (fgets(line, sizeof(line), f) != NULL) {
		unsigned long long ir;
		if (sscanf(line, "summary: %llu", &ir) == 1 ||
		    sscanf(line, "totals: %llu", &ir) == 1) {
			per_call = (double)ir / (double)calls;
			break;
		}
	}
	fclose(f);
out:
	unlink(out);
	return per_call;
}

static bool
have_valgrind(void)
{
	const char *path = getenv("PATH");
	char buf[PATH_MAX];

	while (path != NULL && *path != '\0') {
		size_t n = strcspn(path, ":");
		snprintf(buf, sizeof(buf), "%.*s/valgrind", (int)n, path);
		if (access(buf, X_OK) == 0)
			return true;
		path += n;
		if (*path == ':')
			path++;
	}
	return false;
}

/* ---- main ---- */

struct result {
	double ns[MAX_ROUNDS];
	double ratio[MAX_ROUNDS];	/* to memcpy64, per round */
	double ns_median;
	double ns_min;			/* the least disturbed round */
	double ratio_median;		/* median of the per-round ratios */
	double ratio_min;		/* of the minima */
	double instr;			/* per call; -1 when not counted */
	struct verdicts v;		/* of one round */
};

struct options {
	unsigned rounds;
	uint64_t calls;
	uint64_t cg_calls;
	const char *out;
	const char *only;
	bool callgrind;
};

static void
usage(FILE *f)
{
	fprintf(f, "usage: podcap-bench-bucket [--rounds N] [--calls N] [--out FILE] "
		"[--no-callgrind]\n");
}

/* 0, or the exit status to leave with. */
static int
parse_args(int argc, char **argv, struct options *o)
{
	static const struct option opts[] = {
		{ "rounds", required_argument, NULL, 'r' },
		{ "calls", required_argument, NULL, 'c' },
		{ "out", required_argument, NULL, 'o' },
		{ "only", required_argument, NULL, 'O' },
		{ "no-callgrind", no_argument, NULL, 'n' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	char *end;
	int c;

	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'r':
			o->rounds = (unsigned)strtoul(optarg, &end, 10);
			if (*end != '\0' || o->rounds < 1 || o->rounds > MAX_ROUNDS) {
				fprintf(stderr, "podcap-bench-bucket: --rounds wants 1 to %d\n",
					MAX_ROUNDS);
				return 2;
			}
			break;
		case 'c':
			errno = 0;
			o->calls = strtoull(optarg, &end, 10);
			if (*end != '\0' || errno != 0 || o->calls < MIX_FRAMES) {
				fprintf(stderr, "podcap-bench-bucket: --calls wants at least %d\n",
					MIX_FRAMES);
				return 2;
			}
			break;
		case 'o': o->out = optarg; break;
		case 'O': o->only = optarg; break;
		case 'n': o->callgrind = false; break;
		case 'h': usage(stdout); return EXIT_SUCCESS + 256;
		default: usage(stderr); return 2;
		}
	}
	if (optind != argc) {
		usage(stderr);
		return 2;
	}
	return 0;
}

static int
run_only(const char *name, uint64_t calls)
{
	for (unsigned i = 0; i < NBENCH; i++) {
		if (strcmp(benches[i].name, name) != 0)
			continue;
		struct verdicts v = { 0, 0, 0 };
		setup(&benches[i]);
		sink = benches[i].run(calls, &v);
		return EXIT_SUCCESS;
	}
	fprintf(stderr, "podcap-bench-bucket: no benchmark named '%s'\n", name);
	return 2;
}

/*
 * Every loop once per round, in a rotated order, so that a disturbance
 * lasting a few milliseconds falls on a different loop each round.
 */
static void
run_rounds(struct result *res, unsigned rounds, uint64_t calls)
{
	for (unsigned r = 0; r < rounds; r++) {
		for (unsigned j = 0; j < NBENCH; j++) {
			unsigned i = (j + r) % NBENCH;
			struct verdicts v = { 0, 0, 0 };
			setup(&benches[i]);
			uint64_t t0 = pc_mono_ns();
			sink = benches[i].run(calls, &v);
			res[i].ns[r] = (double)(pc_mono_ns() - t0) / (double)calls;
			res[i].v = v;
		}
		for (unsigned i = 0; i < NBENCH; i++)
			res[i].ratio[r] = res[i].ns[r] / res[B_MEMCPY].ns[r];
	}
	for (unsigned i = 0; i < NBENCH; i++) {
		res[i].ns_median = median(res[i].ns, rounds);
		res[i].ratio_median = median(res[i].ratio, rounds);
		res[i].ns_min = res[i].ns[0];
		for (unsigned r = 1; r < rounds; r++)
			if (res[i].ns[r] < res[i].ns_min)
				res[i].ns_min = res[i].ns[r];
		res[i].instr = -1;
	}
	for (unsigned i = 0; i < NBENCH; i++)
		res[i].ratio_min = res[i].ns_min / res[B_MEMCPY].ns_min;
}

static bool
count_instructions(struct result *res, uint64_t cg_calls)
{
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

	if (n <= 0 || !have_valgrind())
		return false;
	self[n] = '\0';
	for (unsigned i = 0; i < NBENCH; i++)
		res[i].instr = callgrind_per_call(self, &benches[i], cg_calls);
	return true;
}

static void
print_table(const struct result *res, const struct options *o, bool counted)
{
	const struct result *m = &res[B_MEMCPY];

	printf("podcap-bench-bucket: %u rounds x %" PRIu64 " calls over a mix of %d frames\n"
	       "ns: median and least over rounds; x memcpy64: median of the per-round ratios,\n"
	       "and the ratio of the least; instr: per call under callgrind (%" PRIu64 " calls)%s\n\n",
	       o->rounds, o->calls, MIX_FRAMES, o->cg_calls,
	       counted ? "" : ": valgrind not found or --no-callgrind");
	printf("%-56s %6s %6s %8s %8s %6s %8s  %s\n", "call", "ns", "least", "x mcpy", "x least",
	       "instr", "x instr", "pass/queue/drop");
	for (unsigned i = 0; i < NBENCH; i++) {
		const struct result *r = &res[i];
		char instr[32] = "-", xinstr[32] = "-", verd[80] = "";
		if (r->instr >= 0 && m->instr > 0) {
			snprintf(instr, sizeof(instr), "%.1f", r->instr);
			snprintf(xinstr, sizeof(xinstr), "%.2f", r->instr / m->instr);
		}
		if (benches[i].offered_bps != 0)
			snprintf(verd, sizeof(verd), "%" PRIu64 "/%" PRIu64 "/%" PRIu64,
			    r->v.pass, r->v.queue, r->v.drop);
		printf("%-56s %6.2f %6.2f %8.2f %8.2f %6s %8s  %s\n", benches[i].what,
		       r->ns_median, r->ns_min, r->ratio_median, r->ratio_min, instr, xinstr, verd);
	}
	/* the same decisions, exact 128-bit integers against doubles */
	const struct result *a = &res[B_ADMIT_POLICE], *fl = &res[B_FLOAT];
	printf("\npc_bucket_admit (police) / double-precision bucket: %.2f (medians), %.2f (least)",
	       a->ratio_median / fl->ratio_median, a->ns_min / fl->ns_min);
	if (a->instr > 0 && fl->instr > 0)
		printf(", %.2f (instructions)", a->instr / fl->instr);
	printf("\n");
}

static void
print_json(FILE *f, const struct result *res, const struct options *o)
{
	fprintf(f, "{\n  \"benchmark\": \"bucket\",\n  \"rounds\": %u,\n  \"calls\": %" PRIu64
		",\n  \"callgrind_calls\": %" PRIu64 ",\n  \"tick_hz\": %llu,\n  \"mix_frames\": %d,\n"
		"  \"peer\": \"memcpy64\",\n  \"results\": {\n", o->rounds, o->calls, o->cg_calls,
		(unsigned long long)TICK_HZ, MIX_FRAMES);
	for (unsigned i = 0; i < NBENCH; i++) {
		const struct result *r = &res[i];
		fprintf(f, "    \"%s\": {\n      \"what\": \"%s\",\n      \"peer\": %s,\n"
			"      \"ns_per_call_median\": %.4f,\n      \"ns_per_call_least\": %.4f,\n"
			"      \"ratio_to_memcpy64_median\": %.4f,\n"
			"      \"ratio_to_memcpy64_of_least\": %.4f,\n",
			benches[i].name, benches[i].what, benches[i].peer ? "true" : "false",
			r->ns_median, r->ns_min, r->ratio_median, r->ratio_min);
		if (r->instr >= 0)
			fprintf(f, "      \"instructions_per_call\": %.2f,\n", r->instr);
		else
			fprintf(f, "      \"instructions_per_call\": null,\n");
		fprintf(f, "      \"verdicts\": {\"pass\": %" PRIu64 ", \"queue\": %" PRIu64
			", \"drop\": %" PRIu64 "},\n      \"ns_per_call\": [", r->v.pass, r->v.queue,
			r->v.drop);
		for (unsigned k = 0; k < o->rounds; k++)
			fprintf(f, "%s%.4f", k ? ", " : "", r->ns[k]);
		fprintf(f, "],\n      \"ratio_to_memcpy64\": [");
		for (unsigned k = 0; k < o->rounds; k++)
			fprintf(f, "%s%.4f", k ? ", " : "", r->ratio[k]);
		fprintf(f, "]\n    }%s\n", i + 1 < NBENCH ? "," : "");
	}
	fprintf(f, "  }\n}\n");
}

static int
write_json(const struct result *res, const struct options *o)
{
	FILE *f = fopen(o->out, "w");

	if (f == NULL) {
		fprintf(stderr, "podcap-bench-bucket: %s: %s\n", o->out, strerror(errno));
		return -1;
	}
	print_json(f, res, o);
	if (fclose(f) != 0) {
		fprintf(stderr, "podcap-bench-bucket: %s: %s\n", o->out, strerror(errno));
		return -1;
	}
	printf("raw numbers: %s\n", o->out);
	return 0;
}

int
main(int argc, char **argv)
{
	static struct result res[NBENCH];
	struct options o = {
		.rounds = 31,
		.calls = 1u << 20,
		.cg_calls = 100000,
		.out = "/tmp/podcap-bench-bucket.json",
		.callgrind = true,
	};
	int rc = parse_args(argc, argv, &o);

	if (rc != 0)
		return rc & 255;
	build_mix();
	if (check_mix() != 0)
		return EXIT_FAILURE;
	if (o.only != NULL)
		return run_only(o.only, o.calls);

	run_rounds(res, o.rounds, o.calls);
	bool counted = o.callgrind && count_instructions(res, o.cg_calls);
	print_table(res, &o, counted);
	return write_json(res, &o) == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
