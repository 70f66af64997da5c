/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * podcap-audit assign and commit: the randomized pod-to-uplink assignment
 * (src/podmap/assign.h) and the commitment to its seed.
 *
 *   podcap-audit commit (--seed HEX | --seed-file FILE)
 *   podcap-audit assign --pods FILE --uplinks FILE (--seed HEX | --seed-file FILE)
 *                       --template FILE --out DIR [--max-pods-per-uplink N]
 *                       [--separate-cells] [--constraints FILE] [--commitment HEX]
 *                       [--check]
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "podmap/assign.h"
#include "podmap/config.h"
#include "base/fileio.h"
#include "base/hex.h"

#include "audit.h"

#define INPUT_LIMIT (16u << 20)

struct assign_args {
	const char *pods, *uplinks, *seed, *seed_file, *template, *out, *commitment;
	bool check; /* compare with the maps in out, write nothing */
	const char *constraints;
	struct pc_assign_rules rules;
};

static int die(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static int
die(const char *fmt, ...)
{
	va_list ap;

	fputs("podcap-audit: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return EXIT_FAILURE;
}

/* A whole input file, NUL-terminated (malloc'd), or NULL after saying why. */
static char *
slurp(const char *path)
{
	char *buf = malloc(INPUT_LIMIT);
	long n;

	if (buf == NULL)
		return NULL;
	n = pc_read_small_at(AT_FDCWD, path, buf, INPUT_LIMIT);
	if (n < 0) {
		die("%s: %s", path, strerror(errno));
		free(buf);
		return NULL;
	}
	buf[n] = '\0';
	return buf;
}

/* 64 hex digits, from the option or the first line of the file. */
static int
get_seed(const char *hex, const char *file, uint8_t seed[PC_ASSIGN_SEED_LEN])
{
	char *text = NULL;
	size_t n;

	if ((hex == NULL) == (file == NULL))
		return die("give the seed once: --seed HEX or --seed-file FILE");
	if (file != NULL) {
		text = slurp(file);
		if (text == NULL)
			return EXIT_FAILURE;
		text[strcspn(text, "\n")] = '\0';
		hex = text;
	}
	n = strlen(hex);
	bool ok = pc_unhex(hex, n, seed, PC_ASSIGN_SEED_LEN);
	free(text);
	if (!ok)
		return die("the seed is not 64 hex digits");
	return 0;
}

int
audit_commit(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "seed", required_argument, NULL, 's' },
		{ "seed-file", required_argument, NULL, 'f' },
		{ NULL, 0, NULL, 0 },
	};
	const char *hex = NULL, *file = NULL;
	uint8_t seed[PC_ASSIGN_SEED_LEN], c[PC_DIGEST_LEN];
	char out[2 * PC_DIGEST_LEN + 1];
	int o;

	while ((o = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (o == 's')
			hex = optarg;
		else if (o == 'f')
			file = optarg;
		else
			return audit_usage("commit takes --seed or --seed-file");
	}
	if (optind != argc)
		return audit_usage("commit takes no pod map");
	if (get_seed(hex, file, seed) != 0)
		return EXIT_FAILURE;
	pc_assign_commitment(seed, c);
	pc_hex(c, sizeof(c), out);
	printf("commitment %s\n", out);
	return fflush(stdout) == 0 ? 0 : EXIT_FAILURE;
}

static int
parse(int argc, char **argv, struct assign_args *a)
{
	static const struct option opts[] = {
		{ "pods", required_argument, NULL, 'p' },
		{ "uplinks", required_argument, NULL, 'u' },
		{ "seed", required_argument, NULL, 's' },
		{ "seed-file", required_argument, NULL, 'f' },
		{ "template", required_argument, NULL, 't' },
		{ "out", required_argument, NULL, 'o' },
		{ "commitment", required_argument, NULL, 'c' },
		{ "max-pods-per-uplink", required_argument, NULL, 'm' },
		{ "separate-cells", no_argument, NULL, 'C' },
		{ "check", no_argument, NULL, 'k' },
		{ "constraints", required_argument, NULL, 'r' },
		{ NULL, 0, NULL, 0 },
	};
	char *end;
	int o;

	while ((o = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (o) {
		case 'p':
			a->pods = optarg;
			break;
		case 'u':
			a->uplinks = optarg;
			break;
		case 's':
			a->seed = optarg;
			break;
		case 'f':
			a->seed_file = optarg;
			break;
		case 't':
			a->template = optarg;
			break;
		case 'o':
			a->out = optarg;
			break;
		case 'c':
			a->commitment = optarg;
			break;
		case 'C':
			a->rules.separate_cells = true;
			break;
		case 'k':
			a->check = true;
			break;
		case 'r':
			a->constraints = optarg;
			break;
		case 'm':
			errno = 0;
			a->rules.max_per_uplink = (unsigned)strtoul(optarg, &end, 10);
			if (errno != 0 || *end != '\0' || optarg[0] == '-' ||
			    a->rules.max_per_uplink == 0)
				return audit_usage("--max-pods-per-uplink is a number, at least 1");
			break;
		default:
			return audit_usage(NULL);
		}
	}
	if (optind != argc || a->pods == NULL || a->uplinks == NULL || a->template == NULL ||
	    a->out == NULL)
		return audit_usage("assign takes --pods, --uplinks, a seed, --template and --out");
	return 0;
}

/* One draw: what every map is made of. */
struct draw {
	const char *tmpl;
	const struct pc_assign_uplink *ups;
	size_t nups;
	const struct pc_assign_pod *pods;
	size_t npods;
	const uint32_t *up;
};

/* The appliance's map, malloc'd (NULL after saying so). */
static char *
map_text(const struct draw *d, const char *app)
{
	char *text = pc_assign_map_text(d->tmpl, app, d->ups, d->nups, d->pods, d->npods, d->up);

	if (text == NULL)
		die("out of memory");
	return text;
}

/* ups[u] is the first uplink of its appliance: each appliance once, in order. */
static bool
first_of_appliance(const struct draw *d, size_t u)
{
	return u == 0 || strcmp(d->ups[u - 1].appliance, d->ups[u].appliance) != 0;
}

/* The first uplink of the appliance whose map is called name, or -1. */
static long
appliance_of(const struct draw *d, const char *name)
{
	char want[PC_ID_LEN + 8];

	for (size_t u = 0; u < d->nups; u++) {
		snprintf(want, sizeof(want), "%s.yaml", d->ups[u].appliance);
		if (first_of_appliance(d, u) && strcmp(want, name) == 0)
			return (long)u;
	}
	return -1;
}

/* --check: DIR/name is, byte for byte, the map this seed gives appliance app. */
static int
same_as(int dfd, const char *dir, const char *name, const struct draw *d, const char *app)
{
	char *want = map_text(d, app), *have = malloc(INPUT_LIMIT);
	long n = -1;
	int rc = EXIT_FAILURE;

	if (want == NULL || have == NULL)
		goto out;
	n = pc_read_small_at(dfd, name, have, INPUT_LIMIT);
	if (n < 0 && errno != EFBIG)
		rc = die("%s/%s: %s", dir, name, strerror(errno));
	else if (n < 0 || (size_t)n != strlen(want) || memcmp(have, want, (size_t)n) != 0)
		rc = die("%s/%s is not the map this seed and these files give", dir, name);
	else
		rc = printf("%s/%s is the map this seed gives\n", dir, name) < 0 ? EXIT_FAILURE : 0;
out:
	free(want);
	free(have);
	return rc;
}

/* One entry of DIR under --check: a drawn map (marked seen) or a failure naming it. */
static int
check_entry(int dfd, const char *dir, const char *name, const struct draw *d, bool *seen)
{
	long u = appliance_of(d, name);
	struct stat st;

	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0)
		return die("%s/%s: %s", dir, name, strerror(errno));
	if (!S_ISREG(st.st_mode))
		return die("%s/%s: not a regular file, not one of the maps this seed draws", dir,
			   name);
	if (u < 0)
		return die("%s/%s: not one of the maps this seed draws", dir, name);
	seen[u] = true;
	return same_as(dfd, dir, name, d, d->ups[u].appliance);
}

static int
by_name(const struct dirent **x, const struct dirent **y)
{
	return strcmp((*x)->d_name, (*y)->d_name);
}

/*
 * --check: DIR holds the maps drawn and nothing else. Every entry is
 * looked at and every failure named, so one run says all that is wrong.
 */
static int
check_dir(const char *dir, const struct draw *d)
{
	bool *seen = calloc(d->nups, sizeof(*seen));
	struct dirent **ents = NULL;
	int n, dfd = -1, bad = 0;

	if (seen == NULL)
		return die("out of memory");
	n = scandir(dir, &ents, NULL, by_name);
	if (n < 0 || (dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
		bad = die("%s: %s", dir, strerror(errno));
	for (int i = 0; !bad && i < n; i++) {
		const char *name = ents[i]->d_name;

		if (strcmp(name, ".") != 0 && strcmp(name, "..") != 0)
			bad |= check_entry(dfd, dir, name, d, seen);
	}
	for (size_t u = 0; n >= 0 && dfd >= 0 && u < d->nups; u++)
		if (first_of_appliance(d, u) && !seen[u])
			bad |= die("%s/%s.yaml: missing: the map this seed draws for appliance %s",
				   dir, d->ups[u].appliance, d->ups[u].appliance);
	for (int i = 0; i < n; i++)
		free(ents[i]);
	free(ents);
	free(seen);
	if (dfd >= 0)
		close(dfd);
	return bad ? EXIT_FAILURE : 0;
}

/*
 * The map of app, loaded (a map that does not load is an error, named as
 * DIR/<app>.yaml) and written to tmp/<app>.yaml; what to print once DIR is
 * in place goes to report.
 */
static int
emit(const char *dir, const char *tmp, const struct draw *d, const char *app, FILE *report)
{
	char path[PC_PATH_LEN], file[PC_PATH_LEN], hex[2 * PC_DIGEST_LEN + 1];
	uint8_t digest[PC_DIGEST_LEN];
	struct pc_config cfg;
	struct pc_error err;
	char *text;

	if ((size_t)snprintf(path, sizeof(path), "%s/%s.yaml", dir, app) >= sizeof(path) ||
	    (size_t)snprintf(file, sizeof(file), "%s/%s.yaml", tmp, app) >= sizeof(file))
		return die("%s/%s.yaml: path too long", dir, app);
	if ((text = map_text(d, app)) == NULL)
		return EXIT_FAILURE;
	size_t len = strlen(text);
	if (pc_config_load_buffer(path, text, len, &cfg, &err) != 0) {
		free(text);
		fputs("podcap-audit: the map drawn does not load: ", stderr);
		pc_error_print(&err, stderr);
		return EXIT_FAILURE;
	}
	int fd = open(file, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	int rc = fd < 0 || pc_pwrite_all(fd, text, len, 0) != 0 || fsync(fd) != 0 ? -1 : 0;
	if ((fd >= 0 && close(fd) != 0) || rc != 0)
		rc = die("%s: %s", file, strerror(errno));
	pc_config_digest(&cfg, digest);
	pc_hex(digest, sizeof(digest), hex);
	fprintf(report, "wrote %s: %u pods on %u uplinks, digest %s\n", path, cfg.npods,
		cfg.nuplinks, hex);
	pc_config_free(&cfg);
	free(text);
	return rc;
}

/* DIR may become the maps' directory: it does not exist, or it is an empty directory. */
static int
new_or_empty(const char *dir)
{
	DIR *dp = opendir(dir);
	struct dirent *e;
	int rc = 0;

	if (dp == NULL)
		return errno == ENOENT ? 0 : die("%s: %s", dir, strerror(errno));
	while (rc == 0 && (e = readdir(dp)) != NULL)
		if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
			rc = die("%s: %s: the maps go to a new or empty directory", dir,
				 strerror(ENOTEMPTY));
	closedir(dp);
	return rc;
}

/* What a failed run wrote to tmp, removed: it leaves nothing behind. */
static void
remove_tmp(const char *tmp, const struct draw *d)
{
	char file[PC_PATH_LEN];

	for (size_t u = 0; u < d->nups; u++)
		if (first_of_appliance(d, u) &&
		    (size_t)snprintf(file, sizeof(file), "%s/%s.yaml", tmp, d->ups[u].appliance) <
			sizeof(file))
			unlink(file);
	rmdir(tmp);
}

/*
 * Every map into a temporary directory beside DIR, renamed to DIR once all
 * are written and load: DIR holds the whole draw or, after a failure,
 * stays as it was.
 */
static int
write_dir(const char *dir, const struct draw *d)
{
	char tmp[PC_PATH_LEN + 16], *report = NULL;
	size_t rlen = 0;
	int rc = 0;

	snprintf(tmp, sizeof(tmp), "%s.tmp-XXXXXX", dir);
	if (new_or_empty(dir) != 0)
		return EXIT_FAILURE;
	if (mkdtemp(tmp) == NULL)
		return die("%s: no directory beside it for the maps: %s", dir, strerror(errno));
	mode_t mask = umask(0);
	umask(mask);
	FILE *f = open_memstream(&report, &rlen);
	if (f == NULL || chmod(tmp, 0755 & ~mask) != 0)
		rc = die("%s: %s", tmp, strerror(errno));
	for (size_t u = 0; rc == 0 && u < d->nups; u++)
		if (first_of_appliance(d, u))
			rc = emit(dir, tmp, d, d->ups[u].appliance, f);
	if ((f != NULL && fclose(f) != 0) || rc != 0 || rename(tmp, dir) != 0) {
		if (rc == 0)
			rc = die("%s: %s", dir, strerror(errno));
		remove_tmp(tmp, d);
	} else {
		fputs(report, stdout);
	}
	free(report);
	return rc;
}

static int
check_commitment(const char *hex, const uint8_t seed[PC_ASSIGN_SEED_LEN])
{
	uint8_t want[PC_DIGEST_LEN], got[PC_DIGEST_LEN];

	if (!pc_unhex(hex, strlen(hex), want, sizeof(want)))
		return die("--commitment %s: not 64 hex digits", hex);
	pc_assign_commitment(seed, got);
	if (memcmp(want, got, sizeof(got)) != 0)
		return die("the seed does not match the commitment %s: it is not the seed "
			   "committed to",
			   hex);
	return 0;
}

static int
run(const struct assign_args *a, const uint8_t seed[PC_ASSIGN_SEED_LEN], const char *tpl,
    const char *ptext, const char *utext)
{
	struct pc_assign_pod *pods = NULL;
	struct pc_assign_uplink *ups = NULL;
	struct pc_error err;
	uint32_t *up = NULL;
	int rc = EXIT_FAILURE;
	long np = pc_assign_parse_pods(a->pods, ptext, &pods, &err), nu = -1;

	if (np >= 0)
		nu = pc_assign_parse_uplinks(a->uplinks, utext, &ups, &err);
	if (np < 0 || nu < 0) {
		fputs("podcap-audit: ", stderr);
		pc_error_print(&err, stderr);
		goto out;
	}
	up = calloc((size_t)np, sizeof(*up));
	if (up == NULL || pc_assign(seed, pods, (size_t)np, (size_t)nu, &a->rules, up, &err) != 0) {
		fputs("podcap-audit: ", stderr);
		pc_error_print(&err, stderr);
		goto out;
	}
	for (long i = 0; i < np; i++)
		printf("pod %s appliance %s uplink %s\n", pods[i].id, ups[up[i]].appliance,
		       ups[up[i]].name);
	struct draw d = { tpl, ups, (size_t)nu, pods, (size_t)np, up };
	char dir[PC_PATH_LEN];
	size_t len = strlen(a->out);
	/* DIR/ is DIR: the temporary directory goes beside it, and the names printed are one */
	while (len > 1 && a->out[len - 1] == '/')
		len--;
	if (len >= sizeof(dir)) {
		die("%s: path too long", a->out);
		goto out;
	}
	snprintf(dir, sizeof(dir), "%.*s", (int)len, a->out);
	if ((a->check ? check_dir(dir, &d) : write_dir(dir, &d)) != 0)
		goto out;
	rc = fflush(stdout) == 0 ? 0 : EXIT_FAILURE;
out:
	free(up);
	free(pods);
	free(ups);
	return rc;
}

int
audit_assign(int argc, char **argv)
{
	struct assign_args a = { 0 };
	uint8_t seed[PC_ASSIGN_SEED_LEN];
	int rc;

	if ((rc = parse(argc, argv, &a)) != 0)
		return rc;
	if (a.constraints != NULL) {
		struct pc_assign_rules more;
		struct pc_error err;
		char *text = slurp(a.constraints);

		if (text == NULL)
			return EXIT_FAILURE;
		rc = pc_assign_parse_rules(a.constraints, text, &more, &err);
		free(text);
		if (rc != 0) {
			fputs("podcap-audit: ", stderr);
			pc_error_print(&err, stderr);
			return EXIT_FAILURE;
		}
		/* the file and the options together: the stricter of each */
		if (more.max_per_uplink != 0 &&
		    (a.rules.max_per_uplink == 0 || more.max_per_uplink < a.rules.max_per_uplink))
			a.rules.max_per_uplink = more.max_per_uplink;
		a.rules.separate_cells |= more.separate_cells;
	}
	if (get_seed(a.seed, a.seed_file, seed) != 0 ||
	    (a.commitment != NULL && check_commitment(a.commitment, seed) != 0))
		return EXIT_FAILURE;
	char *tpl = slurp(a.template), *pt = tpl ? slurp(a.pods) : NULL,
	     *ut = pt ? slurp(a.uplinks) : NULL;
	rc = ut != NULL ? run(&a, seed, tpl, pt, ut) : EXIT_FAILURE;
	free(tpl);
	free(pt);
	free(ut);
	return rc;
}
