/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * podcap-audit: the auditor's side of a pod map.
 *
 *   podcap-audit sign MAP --key FILE --not-before TIME --not-after TIME [--out FILE]
 *   podcap-audit verify MAP --auditor-key FILE... [--sig FILE] [--at TIME]
 *
 * sign writes MAP.sig, a C2SP signed note by an auditor key over the map's
 * canonical digest, its appliance id and the validity (docs/config.md,
 * "Auditor declarations"); verify checks one as podcapd does before it
 * runs a map. Exit status: 0 ok, 1 refused or an error, 2 usage.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sodium.h>

#include "base/buildid.h"
#include "base/clock.h"
#include "podmap/config.h"
#include "log/declaration.h"
#include "base/fileio.h"
#include "base/hex.h"
#include "base/keys.h"
#include "log/note.h"

#include "audit.h"

#define EXIT_USAGE 2

static const char usage_text[] =
    "usage: podcap-audit sign MAP --key FILE --not-before TIME --not-after TIME [--out FILE]\n"
    "       podcap-audit verify MAP --auditor-key FILE... [--sig FILE] [--at TIME]\n"
    "       podcap-audit assign --pods FILE --uplinks FILE (--seed HEX | --seed-file FILE)\n"
    "                    --template FILE --out DIR [--max-pods-per-uplink N]\n"
    "                    [--separate-cells] [--constraints FILE]\n"
    "                    [--commitment HEX] [--check]\n"
    "       podcap-audit commit (--seed HEX | --seed-file FILE)\n"
    "\n"
    "An auditor's declaration that pod map MAP may be enforced on its appliance\n"
    "between two times: a C2SP signed note over the map's canonical digest, its\n"
    "appliance.id and the validity. podcapd with appliance.auditor_keys set runs a\n"
    "map only while such a declaration is in force.\n"
    "\n"
    "sign: writes MAP.sig (or --out), never over an existing file.\n"
    "  -k, --key FILE         the auditor's secret key, named auditor/...\n"
    "  --not-before TIME      start of the validity, e.g. 2027-01-01T00:00:00Z\n"
    "  --not-after TIME       its end (exclusive); whole seconds, UTC or an offset\n"
    "  -o, --out FILE         where to write the declaration (default MAP.sig)\n"
    "verify: checks MAP.sig (or --sig) against MAP and the auditor keys.\n"
    "  -a, --auditor-key FILE an auditor's verifier key (FILE.pub); repeatable\n"
    "  -s, --sig FILE         the declaration (default MAP.sig)\n"
    "  --at TIME              check the validity at TIME (default: now)\n"
    "assign: the seeded random assignment of pods to uplinks, one pod map per\n"
    "appliance written to DIR/<appliance id>.yaml (docs/config.md).\n"
    "  --pods FILE            lines '<pod id> <cell or -> <prefix>[,<prefix>]... or -'\n"
    "  --uplinks FILE         lines '<appliance id> <uplink> <pod_port> <fabric_port>'\n"
    "  --seed HEX             the 32-byte seed, 64 hex digits (or --seed-file FILE)\n"
    "  --template FILE        the top of each map (@APPLIANCE@ is its id)\n"
    "  --out DIR              a new or empty directory for the maps, made whole at the end\n"
    "  --max-pods-per-uplink N  at most N pods on one uplink\n"
    "  --separate-cells       never two pods of one cell on one uplink\n"
    "  --constraints FILE     the same as lines 'max-pods-per-uplink N', 'separate-cells'\n"
    "  --commitment HEX       refuse a seed whose commitment is not HEX\n"
    "  --check                DIR holds exactly these maps, byte for byte; write nothing\n"
    "commit: prints the commitment to the seed, BLAKE2b-256 of its 32 bytes.\n"
    "\n"
    "  --version              print the version and the build id\n"
    "  -h, --help             this text\n"
    "Exit status: 0 ok, 1 refused or an error, 2 usage.\n";

struct args {
	const char *map;
	const char *key;
	const char *out;
	const char *sig;
	const char *not_before;
	const char *not_after;
	const char *at;
	const char *auditor_keys[PC_DECL_MAX_KEYS];
	size_t nkeys;
};

static int
fail(const struct pc_error *err)
{
	fputs("podcap-audit: ", stderr);
	pc_error_print(err, stderr);
	return EXIT_FAILURE;
}

int
audit_usage(const char *msg)
{
	if (msg != NULL)
		fprintf(stderr, "podcap-audit: %s\n", msg);
	fputs(usage_text, stderr);
	return EXIT_USAGE;
}

enum {
	OPT_NOT_BEFORE = 256,
	OPT_NOT_AFTER,
	OPT_AT,
	OPT_VERSION
};

static int
parse_args(int argc, char **argv, struct args *a)
{
	static const struct option opts[] = {
		{ "key", required_argument, NULL, 'k' },
		{ "out", required_argument, NULL, 'o' },
		{ "auditor-key", required_argument, NULL, 'a' },
		{ "sig", required_argument, NULL, 's' },
		{ "not-before", required_argument, NULL, OPT_NOT_BEFORE },
		{ "not-after", required_argument, NULL, OPT_NOT_AFTER },
		{ "at", required_argument, NULL, OPT_AT },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	while ((c = getopt_long(argc, argv, "k:o:a:s:", opts, NULL)) != -1) {
		switch (c) {
		case 'k':
			a->key = optarg;
			break;
		case 'o':
			a->out = optarg;
			break;
		case 's':
			a->sig = optarg;
			break;
		case OPT_NOT_BEFORE:
			a->not_before = optarg;
			break;
		case OPT_NOT_AFTER:
			a->not_after = optarg;
			break;
		case OPT_AT:
			a->at = optarg;
			break;
		case 'a':
			if (a->nkeys == PC_DECL_MAX_KEYS)
				return audit_usage("too many --auditor-key");
			a->auditor_keys[a->nkeys++] = optarg;
			break;
		default:
			return audit_usage(NULL);
		}
	}
	if (optind + 1 != argc)
		return audit_usage("give exactly one pod map");
	a->map = argv[optind];
	return 0;
}

/* Loads MAP for its appliance id and digest. */
static int
load_map(const char *path, struct pc_config *cfg, uint8_t digest[PC_DIGEST_LEN])
{
	struct pc_error err;

	if (pc_config_load(path, cfg, &err) != 0)
		return fail(&err);
	pc_config_digest(cfg, digest);
	return 0;
}

static int
parse_time(const char *opt, const char *s, uint64_t *ns)
{
	struct pc_error err;

	if (pc_utc_parse(s, ns, &err) != 0) {
		pc_error_prefix(&err, "%s", opt);
		return fail(&err);
	}
	return 0;
}

/* Writes the note to a new file: a declaration once issued is never replaced. */
static int
write_new(const char *path, const char *note, size_t len)
{
	struct pc_error err;
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);

	if (fd < 0 && errno == EEXIST) {
		pc_error_set(&err,
			     "%s exists: a declaration is never overwritten (a verifier "
			     "needs every one that was in force); use --out",
			     path);
		return fail(&err);
	}
	if (fd < 0 || pc_pwrite_all(fd, note, len, 0) != 0 || fsync(fd) != 0) {
		pc_error_errno(&err, "%s", path);
		if (fd >= 0) {
			close(fd);
			unlink(path);
		}
		return fail(&err);
	}
	close(fd);
	return 0;
}

/* The note for d signed by k, checked with k's public half before it is written. */
static int
make_note(const struct pc_signer_key *k, const struct pc_declaration *d, char *note, size_t *len)
{
	struct pc_verifier_key vk;
	struct pc_declaration back;
	char body[PC_DECL_BODY_MAX];
	struct pc_error err;
	uint8_t sig[64];
	size_t blen = pc_declaration_body(d, body, sizeof(body));

	if (blen == 0) {
		pc_error_set(&err,
			     "the validity must be whole seconds, not-after later than "
			     "not-before");
		return fail(&err);
	}
	pc_note_sign_body(k, body, blen, sig);
	*len = pc_note_format(body, blen, k->name, k->id, sig, note, PC_NOTE_MAX);
	sodium_memzero(sig, sizeof(sig));
	pc_signer_key_public(k, &vk);
	if (*len == 0 || pc_declaration_open(note, *len, &vk, 1, &back, NULL, &err) != 0) {
		pc_error_set(&err, "the new declaration does not verify with the key");
		return fail(&err);
	}
	return 0;
}

static void
print_declaration(const struct pc_declaration *d, const char *note, size_t len)
{
	char hex[2 * PC_DIGEST_LEN + 1], a[PC_UTC_LEN], b[PC_UTC_LEN];
	uint8_t hash[PC_DIGEST_LEN];

	pc_hex(d->podmap_digest, PC_DIGEST_LEN, hex);
	printf("appliance: %s\npod map digest: %s\n", d->appliance_id, hex);
	pc_utc_format(d->not_before_ns, a, sizeof(a));
	pc_utc_format(d->not_after_ns, b, sizeof(b));
	printf("valid: %s to %s\n", a, b);
	pc_declaration_hash(note, len, hash);
	pc_hex(hash, PC_DIGEST_LEN, hex);
	printf("declaration hash: %s\n", hex);
}

static int
cmd_sign(const struct args *a)
{
	struct pc_declaration d = { 0 };
	struct pc_config cfg;
	struct pc_signer_key *k;
	struct pc_error err;
	char note[PC_NOTE_MAX], path[PC_PATH_LEN];
	size_t len = 0;
	int rc;

	if (a->key == NULL || a->not_before == NULL || a->not_after == NULL || a->nkeys || a->sig ||
	    a->at)
		return audit_usage("sign takes MAP, --key, --not-before, --not-after and --out");
	if (parse_time("--not-before", a->not_before, &d.not_before_ns) != 0 ||
	    parse_time("--not-after", a->not_after, &d.not_after_ns) != 0 ||
	    load_map(a->map, &cfg, d.podmap_digest) != 0)
		return EXIT_FAILURE;
	snprintf(d.appliance_id, sizeof(d.appliance_id), "%s", cfg.appliance_id);
	pc_config_free(&cfg);
	if (a->out == NULL && pc_declaration_path(a->map, path, sizeof(path)) != 0)
		return audit_usage("the map's path is too long");
	k = pc_signer_key_load(a->key, &err);
	if (k == NULL)
		return fail(&err);
	if (strncmp(k->name, PC_DECL_KEY_PREFIX, strlen(PC_DECL_KEY_PREFIX)) != 0) {
		pc_error_set(
		    &err,
		    "%s: key %s is not an auditor key (its name must begin with " PC_DECL_KEY_PREFIX
		    ")",
		    a->key, k->name);
		pc_signer_key_free(k);
		return fail(&err);
	}
	rc = make_note(k, &d, note, &len);
	pc_signer_key_free(k);
	if (rc != 0 || write_new(a->out ? a->out : path, note, len) != 0)
		return EXIT_FAILURE;
	printf("wrote %s\n", a->out ? a->out : path);
	print_declaration(&d, note, len);
	return fflush(stdout) == 0 ? 0 : EXIT_FAILURE;
}

static int
cmd_verify(const struct args *a)
{
	struct pc_verifier_key keys[PC_DECL_MAX_KEYS];
	struct pc_declaration d;
	uint8_t digest[PC_DIGEST_LEN];
	struct pc_config cfg;
	struct pc_error err;
	char note[PC_NOTE_MAX], path[PC_PATH_LEN];
	uint64_t at = pc_now_ns();
	size_t which;
	long n;

	if (a->nkeys == 0 || a->key || a->out || a->not_before || a->not_after)
		return audit_usage("verify takes MAP, --auditor-key, --sig and --at");
	for (size_t i = 0; i < a->nkeys; i++) {
		if (pc_verifier_key_load(a->auditor_keys[i], &keys[i], &err) != 0)
			return fail(&err);
	}
	if ((a->at && parse_time("--at", a->at, &at) != 0) || load_map(a->map, &cfg, digest) != 0)
		return EXIT_FAILURE;
	if (a->sig == NULL && pc_declaration_path(a->map, path, sizeof(path)) != 0)
		return audit_usage("the map's path is too long");
	const char *sig = a->sig ? a->sig : path;
	n = pc_declaration_read(sig, note, &err);
	if (n < 0 || pc_declaration_open(note, (size_t)n, keys, a->nkeys, &d, &which, &err) != 0 ||
	    pc_declaration_check(&d, cfg.appliance_id, digest, at, NULL, &err) != 0) {
		pc_config_free(&cfg);
		if (n >= 0)
			pc_error_prefix(&err, "%s", sig);
		return fail(&err);
	}
	pc_config_free(&cfg);
	printf("declaration OK: %s, signed by %s+%08x\n", sig, keys[which].name,
	       (unsigned)keys[which].id);
	print_declaration(&d, note, (size_t)n);
	return fflush(stdout) == 0 ? 0 : EXIT_FAILURE;
}

int
main(int argc, char **argv)
{
	struct args a = { 0 };
	struct pc_error err;
	const char *cmd;

	if (argc >= 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
		fputs(usage_text, stdout);
		return 0;
	}
	if (argc >= 2 && strcmp(argv[1], "--version") == 0) {
		if (pc_version_print(stdout, "podcap-audit", PODCAP_VERSION, &err) == 0)
			return 0;
		return fail(&err);
	}
	if (argc < 2)
		return audit_usage(NULL);
	if (sodium_init() < 0) {
		fprintf(stderr, "podcap-audit: libsodium failed to initialise\n");
		return EXIT_FAILURE;
	}
	cmd = argv[1];
	if (strcmp(cmd, "assign") == 0)
		return audit_assign(argc - 1, argv + 1);
	if (strcmp(cmd, "commit") == 0)
		return audit_commit(argc - 1, argv + 1);
	if (parse_args(argc - 1, argv + 1, &a) != 0)
		return EXIT_USAGE;
	if (strcmp(cmd, "sign") == 0)
		return cmd_sign(&a);
	if (strcmp(cmd, "verify") == 0)
		return cmd_verify(&a);
	return audit_usage("the command is sign, verify, assign or commit");
}
