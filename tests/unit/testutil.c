/* SPDX-License-Identifier: BSD-3-Clause */
/* The unit tests' shared helpers (testutil.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <ftw.h>
#include <unistd.h>

#include "base/keys.h"
#include "log/ledger.h"
#include "log/merkle.h"
#include "log/note.h"
#include "log/record.h"
#include "verify/verify.h"

#include "testutil.h"

/* ---- scratch directories ---- */

static int
make_dir(char *buf, size_t len, const char *base, const char *name)
{
	if ((size_t)snprintf(buf, len, "%s/podcap-%s-XXXXXX", base, name) >= len)
		return -1;
	return mkdtemp(buf) == NULL ? -1 : 0;
}

int
pc_test_tmpdir(char *buf, size_t len, const char *name)
{
	const char *base = getenv("TMPDIR");

	return make_dir(buf, len, base != NULL && *base != '\0' ? base : "/tmp", name);
}

int
pc_test_shmdir(char *buf, size_t len, const char *name)
{
	if (access("/dev/shm", W_OK) != 0)
		return pc_test_tmpdir(buf, len, name);
	return make_dir(buf, len, "/dev/shm", name);
}

static int
rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

void
pc_test_rm_rf(const char *path)
{
	nftw(path, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

void
pc_test_load_map(struct pc_config *c, const char *text, const char *name)
{
	struct pc_error e;

	if (pc_config_load_buffer(name, text, strlen(text), c, &e) != 0)
		fail_msg("%s: %u:%u: %s", name, e.mark.line, e.mark.col, e.msg);
}

/* ---- keys and signed notes ---- */

struct pc_signer_key *
pc_test_key(const char *name, struct pc_verifier_key *vk)
{
	struct pc_signer_key *k = pc_signer_key_generate(name);

	assert_non_null(k);
	if (vk != NULL)
		pc_signer_key_public(k, vk);
	return k;
}

size_t
pc_test_sign_note(const struct pc_signer_key *k, const char *body, char *out, size_t len)
{
	uint8_t sig[64];

	pc_note_sign_body(k, body, strlen(body), sig);
	return pc_note_format(body, strlen(body), k->name, k->id, sig, out, len);
}

size_t
pc_test_checkpoint(const struct pc_signer_key *k, const char *origin, uint64_t size,
		   const uint8_t root[PC_HASH_LEN], char *note, size_t len)
{
	struct pc_checkpoint cp = { .size = size };
	char body[PC_NOTE_MAX];

	snprintf(cp.origin, sizeof(cp.origin), "%s", origin);
	memcpy(cp.root, root, PC_HASH_LEN);
	assert_true(pc_checkpoint_body(&cp, body, sizeof(body)) > 0);
	size_t n = pc_test_sign_note(k, body, note, len);
	assert_true(n > 0);
	return n;
}

void
pc_test_publish(struct pc_ledger *l, const struct pc_signer_key *k)
{
	char note[PC_NOTE_MAX];
	uint8_t root[PC_HASH_LEN];

	pc_ledger_root(l, root);
	size_t n = pc_test_checkpoint(k, k->name, pc_ledger_size(l), root, note, sizeof(note));
	assert_int_equal(pc_ledger_publish(l, note, n, NULL), 0);
}

/* ---- logs in memory ---- */

void
pc_test_log_push(struct pc_test_log *lg, const struct pc_record *r)
{
	uint8_t *b = malloc(PC_RECORD_MAX);

	assert_non_null(b);
	assert_true(lg->n < PC_TEST_MAXLOG);
	size_t n = pc_record_encode(r, b, PC_RECORD_MAX);
	assert_true(n > 0);
	lg->rec[lg->n] = b;
	lg->len[lg->n++] = n;
}

void
pc_test_attest(struct pc_record *r, struct pc_record_attest *att)
{
	memset(att, 0, sizeof(*att));
	att->quote_len = 4;
	memcpy(att->quote, "\xff\x54\x43\x47", 4);
	att->sig_len = 2;
	memcpy(att->sig, "\x00\x18", 2);
	att->pcr_alg = PC_TPM_ALG_SHA256;
	att->pcr_mask = 1u << 10;
	r->type = PC_REC_ATTEST;
	r->attest = att;
}

void
pc_test_log_copy(const struct pc_test_log *lg, struct pc_test_log *out)
{
	memset(out, 0, sizeof(*out));
	for (size_t i = 0; i < lg->n; i++) {
		out->rec[i] = malloc(lg->len[i]);
		assert_non_null(out->rec[i]);
		memcpy(out->rec[i], lg->rec[i], lg->len[i]);
		out->len[i] = lg->len[i];
	}
	out->n = lg->n;
}

void
pc_test_log_move(struct pc_test_log *lg, size_t from, size_t to)
{
	uint8_t *r = lg->rec[from];
	size_t l = lg->len[from];

	if (from < to) {
		memmove(&lg->rec[from], &lg->rec[from + 1], (to - from) * sizeof(lg->rec[0]));
		memmove(&lg->len[from], &lg->len[from + 1], (to - from) * sizeof(lg->len[0]));
	} else {
		memmove(&lg->rec[to + 1], &lg->rec[to], (from - to) * sizeof(lg->rec[0]));
		memmove(&lg->len[to + 1], &lg->len[to], (from - to) * sizeof(lg->len[0]));
	}
	lg->rec[to] = r;
	lg->len[to] = l;
}

void
pc_test_log_free(struct pc_test_log *lg)
{
	for (size_t i = 0; i < lg->n; i++)
		free(lg->rec[i]);
	lg->n = 0;
}

void
pc_test_log_root(const struct pc_test_log *lg, size_t n, uint8_t root[PC_HASH_LEN])
{
	struct pc_merkle_range r;
	uint8_t h[PC_HASH_LEN];

	pc_merkle_range_init(&r);
	for (size_t i = 0; i < n; i++) {
		pc_merkle_leaf_hash(lg->rec[i], lg->len[i], h);
		pc_merkle_range_append(&r, h);
	}
	pc_merkle_range_root(&r, root);
}

size_t
pc_test_log_checkpoint(const struct pc_test_log *lg, size_t n, const struct pc_signer_key *k,
		       char *note, size_t len)
{
	uint8_t root[PC_HASH_LEN];

	pc_test_log_root(lg, n, root);
	return pc_test_checkpoint(k, k->name, n, root, note, len);
}

/* ---- verifying them ---- */

/* What the source keeps beside record i: the leaf hash of o->stored's record i, or NULL. */
static const uint8_t *
stored_leaf(const struct pc_test_run *o, uint64_t i, uint8_t h[PC_HASH_LEN])
{
	if (o->stored == NULL || i >= o->stored->n)
		return NULL;
	pc_merkle_leaf_hash(o->stored->rec[i], o->stored->len[i], h);
	return h;
}

struct pc_verify *
pc_test_verify(const struct pc_test_run *o, const char *note, size_t len,
	       const struct pc_test_log *lg)
{
	struct pc_verify *v = o->nmaps > 0 ? pc_verify_new_maps(o->vk, o->maps, o->nmaps) :
			      pc_verify_new(o->vk, o->podmap);
	struct pc_error err;
	uint8_t h[PC_HASH_LEN];

	assert_non_null(v);
	if (o->policy != NULL)
		pc_verify_set_policy(v, o->policy);
	if (o->trusted != NULL)
		assert_int_equal(pc_verify_trusted(v, o->trusted, strlen(o->trusted), &err), 0);
	if (o->state != NULL)
		assert_int_equal(pc_verify_resume(v, o->state, o->state_len, &err), 0);
	if (pc_verify_checkpoint(v, note, len) == 0)
		for (uint64_t i = pc_verify_resume_at(v); i < pc_verify_size(v) && i < lg->n; i++)
			pc_verify_record(v, lg->rec[i], lg->len[i], stored_leaf(o, i, h));
	pc_verify_finish(v);
	return v;
}

struct pc_verify *
pc_test_verify_signed(const struct pc_test_run *o, const struct pc_signer_key *k,
		      const struct pc_test_log *lg)
{
	char note[PC_NOTE_MAX];
	size_t n = pc_test_log_checkpoint(lg, lg->n, k, note, sizeof(note));

	return pc_test_verify(o, note, n, lg);
}

void
pc_test_every_split(const struct pc_test_run *o, const struct pc_signer_key *k,
		    const struct pc_test_log *lg,
		    void (*same)(const struct pc_verify *full, const struct pc_verify *inc,
				 size_t n))
{
	struct pc_verify *full = pc_test_verify_signed(o, k, lg);
	char note[PC_NOTE_MAX];

	for (size_t n = 1; n < lg->n; n++) {
		size_t nl = pc_test_log_checkpoint(lg, n, k, note, sizeof(note));
		struct pc_verify *pre = pc_test_verify(o, note, nl, lg);
		char *st;
		size_t stlen;

		if (pc_verify_state_save(pre, &st, &stlen) < 0) {
			assert_true(pc_verify_nfailures(full) > 0);
			pc_verify_free(pre);
			continue;
		}
		pc_verify_free(pre);
		struct pc_test_run ro = *o;
		ro.state = st;
		ro.state_len = stlen;
		struct pc_verify *inc = pc_test_verify_signed(&ro, k, lg);
		assert_int_equal(pc_verify_resume_at(inc), n);
		same(full, inc, n);
		pc_verify_free(inc);
		free(st);
	}
	pc_verify_free(full);
}

void
pc_test_print_failures(const struct pc_verify *v)
{
	for (size_t i = 0; i < pc_verify_nfailures(v) && i < PC_VERIFY_MAX_KEPT; i++) {
		const struct pc_verify_failure *f = pc_verify_failure_at(v, i);
		print_message("  %s: record %lld: %s\n", pc_verify_check_name(f->check),
			      (long long)f->record, f->msg);
	}
}

char *
pc_test_report(const struct pc_verify *v, bool json)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	if (json)
		pc_verify_print_json(v, f);
	else
		pc_verify_print_text(v, f);
	assert_int_equal(fclose(f), 0);
	return buf;
}
