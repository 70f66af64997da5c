/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * witness-submit: the log side of tlog-witness for the tests, over a ledger
 * directory (podcap-ledger-gen's or podcapd's), with podcapd's own client
 * (src/witness/client.c).
 *
 *   witness-submit URL WITNESS-VKEY-FILE LEDGER-DIR [NOTE-FILE] [--old N]
 *   witness-submit --request OLD LEDGER-DIR [NOTE-FILE]
 *   witness-submit --check WITNESS-VKEY-FILE NOTE-FILE
 *
 * Submits the ledger's published checkpoint (or NOTE-FILE's, of a prefix
 * of the ledger) from the size the client believes the witness holds (0,
 * or --old N), and prints the result, the last status and the cosignature.
 * Exit status: 0 cosigned, 1 usage or error, 3 conflict, 4 refused, 5
 * down, 6 a bad answer. --request prints the add-checkpoint body from OLD
 * instead, for tests that send altered requests themselves. --check
 * prints the timestamp of the witness's cosignature in NOTE-FILE (a note
 * podcapd served) and exits 0 when it verifies, 1 when it does not.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>
#include <sodium.h>

#include "log/cosig.h"
#include "log/ledger.h"
#include "log/note.h"
#include "log/tlog_witness.h"

#include "witness/client.h"

static const char *const names[] = { "cosigned", "conflict", "refused", "down", "bad-answer" };

static int
die(const char *what, const struct pc_error *err)
{
	fprintf(stderr, "witness-submit: %s: %s\n", what, err->msg);
	return 1;
}

/* The note: NOTE-FILE's, or the ledger's published one; and its body parsed. */
static long
read_note(struct pc_ledger *l, const char *path, char *note, size_t len, struct pc_checkpoint *cp)
{
	long n;
	FILE *f;

	if (path == NULL) {
		n = pc_ledger_checkpoint(l, note, len);
	} else {
		f = fopen(path, "rb");
		if (f == NULL)
			return -1;
		n = (long)fread(note, 1, len - 1, f);
		fclose(f);
	}
	if (n <= 0)
		return -1;
	note[n] = '\0';
	if (pc_checkpoint_parse_body(note, (size_t)(strstr(note, "\n\n") + 1 - note), cp, NULL) !=
	    0)
		return -1;
	return n;
}

static int
print_request(int argc, char **argv)
{
	static char note[PC_NOTE_MAX], body[PC_WITNESS_REQ_MAX];
	uint8_t proof[PC_MAX_PROOF][PC_HASH_LEN];
	struct pc_checkpoint cp;
	struct pc_ledger *l;
	struct pc_error err;
	uint64_t old;
	size_t np, n;
	long nl;

	if (argc < 4)
		return 1;
	old = strtoull(argv[2], NULL, 10);
	l = pc_ledger_open_ro(argv[3], &err);
	if (l == NULL)
		return die(argv[3], &err);
	nl = read_note(l, argc > 4 ? argv[4] : NULL, note, sizeof(note), &cp);
	if (nl < 0 || pc_merkle_consistency_proof(pc_ledger_leaf, l, old, cp.size, proof, &np) != 0)
		return 1;
	n = pc_add_checkpoint_format(old, (const uint8_t(*)[PC_HASH_LEN])proof, np, note,
				     (size_t)nl, body, sizeof(body));
	fwrite(body, 1, n, stdout);
	pc_ledger_close(l);
	return n == 0;
}

static int
check_note(int argc, char **argv)
{
	static char note[PC_NOTE_MAX + 4096];
	struct pc_verifier_key vk;
	struct pc_error err;
	char buf[512];
	uint64_t t;
	size_t n;
	FILE *f;

	if (argc != 4 || (f = fopen(argv[2], "r")) == NULL || fgets(buf, sizeof(buf), f) == NULL)
		return 1;
	fclose(f);
	if (pc_cosig_vkey_parse(buf, &vk, &err) != 0 || (f = fopen(argv[3], "rb")) == NULL)
		return 1;
	n = fread(note, 1, sizeof(note), f);
	fclose(f);
	if (pc_cosig_verify(note, n, &vk, &t, &err) != 0) {
		printf("%s\n", err.msg);
		return 1;
	}
	printf("%" PRIu64 "\n", t);
	return 0;
}

int
main(int argc, char **argv)
{
	static char note[PC_NOTE_MAX], line[PC_COSIG_LINE_MAX];
	struct pc_verifier_key vk;
	struct pc_checkpoint cp;
	struct pc_wclient c;
	struct pc_ledger *l;
	struct pc_error err;
	enum pc_wclient_result r;
	const char *note_path = NULL;
	uint64_t old = 0, t = 0;
	long status, nl;
	char buf[512];
	FILE *f;
	int i;

	if (sodium_init() < 0 || curl_global_init(CURL_GLOBAL_DEFAULT) != 0)
		return 1;
	if (argc > 1 && strcmp(argv[1], "--request") == 0)
		return print_request(argc, argv);
	if (argc > 1 && strcmp(argv[1], "--check") == 0)
		return check_note(argc, argv);
	for (i = 4; i < argc; i++) {
		if (strcmp(argv[i], "--old") == 0 && i + 1 < argc)
			old = strtoull(argv[++i], NULL, 10);
		else
			note_path = argv[i];
	}
	if (argc < 4)
		return 1;
	f = fopen(argv[2], "r");
	if (f == NULL || fgets(buf, sizeof(buf), f) == NULL)
		return 1;
	fclose(f);
	if (pc_cosig_vkey_parse(buf, &vk, &err) != 0)
		return die(argv[2], &err);
	l = pc_ledger_open_ro(argv[3], &err);
	if (l == NULL)
		return die(argv[3], &err);
	nl = read_note(l, note_path, note, sizeof(note), &cp);
	if (nl < 0) {
		fprintf(stderr, "witness-submit: no checkpoint to submit\n");
		return 1;
	}
	if (pc_wclient_init(&c, argv[1], &vk, 10000, &err) != 0)
		return die(argv[1], &err);
	c.size = old;
	r = pc_wclient_submit(&c, note, (size_t)nl, &cp, pc_ledger_leaf, l, line, sizeof(line), &t,
			      &status, &err);
	printf("%s %ld %" PRIu64 " %" PRIu64 "\n", names[r], status, c.size, t);
	if (r == PC_WCLIENT_COSIGNED)
		printf("%s", line);
	else
		printf("%s\n", err.msg);
	pc_wclient_free(&c);
	pc_ledger_close(l);
	return r == PC_WCLIENT_COSIGNED ? 0 : (int)r + 2;
}
