/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * podcap-keygen: make the Ed25519 key an appliance signs its ledger with,
 * or the one an auditor signs pod map declarations with (--auditor).
 */
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sodium.h>

#include "base/buildid.h"
#include "base/keys.h"
#include "log/note.h"

#define EXIT_USAGE 2

static void
usage(FILE *f)
{
	fprintf(f,
		"usage: podcap-keygen --out FILE [--name NAME | --auditor NAME]\n"
		"\n"
		"Generates an Ed25519 signing key for podcapd's ledger and writes it as two\n"
		"C2SP signed-note key files:\n"
		"  FILE      the secret key, mode 0600 (podcapd refuses a key that group or\n"
		"            others can read)\n"
		"  FILE.pub  the verifier key, one line: NAME+KEYID+BASE64; give it to whoever\n"
		"            runs podcap-verify\n"
		"Neither file is ever overwritten: if one exists, nothing is written.\n"
		"\n"
		"  -o, --out FILE   where to write the secret key\n"
		"  -n, --name NAME  the key name, which is also the log origin in every\n"
		"                   checkpoint: the pod map's appliance.origin, a domain you\n"
		"                   hold and the appliance id (podcap.example.net/dc1/<id>),\n"
		"                   or podcap/<appliance id> when it sets none (default:\n"
		"                   podcap/<hostname>). No spaces or '+'.\n"
		"  -a, --auditor NAME  an auditor's key instead, named auditor/NAME, for\n"
		"                   podcap-audit sign and appliance.auditor_keys\n"
		"  --version        print the version and the build id (BLAKE2b-256 of\n"
		"                   this executable)\n"
		"  -h, --help       this text\n"
		"\n"
		"Prints the key id (8 hex digits) and the verifier key line.\n"
		"Exit status: 0 ok, 1 error, 2 usage.\n");
}

/* Signs and verifies a note with the new key, so a broken key is never written. */
static int
self_test(const struct pc_signer_key *k)
{
	static const char body[] = "podcap-keygen self-test\n";
	struct pc_verifier_key vk;
	char note[PC_NOTE_MAX];
	uint8_t sig[64];
	size_t len, blen;

	pc_signer_key_public(k, &vk);
	pc_note_sign_body(k, body, sizeof(body) - 1, sig);
	len = pc_note_format(body, sizeof(body) - 1, k->name, k->id, sig, note, sizeof(note));
	if (len == 0 || pc_note_verify(note, len, &vk, &blen, NULL) != 0 ||
	    blen != sizeof(body) - 1)
		return -1;
	/* And a changed body must not verify. */
	note[0] ^= 0x01;
	if (pc_note_verify(note, len, &vk, &blen, NULL) == 0)
		return -1;
	return 0;
}

static int
default_name(char *buf, size_t len)
{
	char host[HOST_NAME_MAX + 1];

	if (gethostname(host, sizeof(host)) != 0)
		return -1;
	host[sizeof(host) - 1] = '\0';
	return snprintf(buf, len, "podcap/%s", host) < (int)len ? 0 : -1;
}

int
main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "out", required_argument, NULL, 'o' },
		{ "name", required_argument, NULL, 'n' },
		{ "auditor", required_argument, NULL, 'a' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	struct pc_verifier_key vk;
	struct pc_signer_key *k;
	char namebuf[PC_KEY_NAME_LEN + 64], line[512];
	struct pc_error err;
	const char *out = NULL, *name = NULL, *auditor = NULL;
	int c;

	while ((c = getopt_long(argc, argv, "o:n:a:h", opts, NULL)) != -1) {
		switch (c) {
		case 'o':
			out = optarg;
			break;
		case 'n':
			name = optarg;
			break;
		case 'a':
			auditor = optarg;
			break;
		case 'h':
			usage(stdout);
			return 0;
		case 'V':
			if (pc_version_print(stdout, "podcap-keygen", PODCAP_VERSION, &err) == 0)
				return 0;
			fprintf(stderr, "podcap-keygen: %s\n", err.msg);
			return EXIT_FAILURE;
		default:
			usage(stderr);
			return EXIT_USAGE;
		}
	}
	if (optind != argc || out == NULL || out[0] == '\0') {
		usage(stderr);
		return EXIT_USAGE;
	}
	if (name != NULL && auditor != NULL) {
		fprintf(stderr, "podcap-keygen: --name and --auditor exclude each other\n");
		return EXIT_USAGE;
	}
	if (auditor != NULL) {
		if (auditor[0] == '\0' ||
		    snprintf(namebuf, sizeof(namebuf), "auditor/%s", auditor) >=
			(int)sizeof(namebuf)) {
			fprintf(stderr, "podcap-keygen: invalid auditor name \"%s\"\n", auditor);
			return EXIT_USAGE;
		}
		name = namebuf;
	}
	if (name == NULL) {
		if (default_name(namebuf, sizeof(namebuf)) != 0) {
			fprintf(stderr, "podcap-keygen: cannot get the hostname; pass --name\n");
			return EXIT_FAILURE;
		}
		name = namebuf;
	}
	if (sodium_init() < 0) {
		fprintf(stderr, "podcap-keygen: libsodium failed to initialise\n");
		return EXIT_FAILURE;
	}
	k = pc_signer_key_generate(name);
	if (k == NULL) {
		fprintf(stderr, "podcap-keygen: invalid key name \"%s\": it must be non-empty UTF-8 "
			"of at most %d bytes without spaces, control characters or '+'\n",
			name, PC_KEY_NAME_LEN - 1);
		return EXIT_FAILURE;
	}
	if (self_test(k) != 0) {
		fprintf(stderr, "podcap-keygen: the new key failed its sign/verify self-test\n");
		pc_signer_key_free(k);
		return EXIT_FAILURE;
	}
	if (pc_signer_key_save(k, out, &err) != 0) {
		fprintf(stderr, "podcap-keygen: %s\n", err.msg);
		pc_signer_key_free(k);
		return EXIT_FAILURE;
	}
	pc_signer_key_public(k, &vk);
	pc_signer_key_free(k);
	if (pc_verifier_key_format(&vk, line, sizeof(line)) != 0)
		return EXIT_FAILURE;
	printf("key id: %08x\n", (unsigned)vk.id);
	printf("verifier key: %s\n", line);
	printf("wrote %s (secret, mode 0600) and %s.pub\n", out, out);
	return fflush(stdout) == 0 ? 0 : EXIT_FAILURE;
}
