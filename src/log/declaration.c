/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Auditor declarations (src/log/declaration.h): the body, its strict
 * parse, the signature by an auditor key, and the rules a map must meet.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <sodium.h>

#include "base/clock.h"
#include "declaration.h"
#include "base/fileio.h"
#include "base/hex.h"
#include "base/id.h"
#include "note.h"

#define NS_PER_SEC 1000000000ULL

static bool
whole_seconds(uint64_t ns)
{
	return ns % NS_PER_SEC == 0;
}

size_t
pc_declaration_body(const struct pc_declaration *d, char *buf, size_t len)
{
	char hex[2 * PC_DIGEST_LEN + 1], nb[PC_UTC_LEN], na[PC_UTC_LEN];
	int n;

	if (!pc_id_valid(d->appliance_id) || !whole_seconds(d->not_before_ns) ||
	    !whole_seconds(d->not_after_ns) || d->not_after_ns <= d->not_before_ns)
		return 0;
	pc_hex(d->podmap_digest, PC_DIGEST_LEN, hex);
	pc_utc_format(d->not_before_ns, nb, sizeof(nb));
	pc_utc_format(d->not_after_ns, na, sizeof(na));
	n = snprintf(buf, len,
		     PC_DECL_HEADER "\nappliance %s\npodmap %s\nnot-before %s\nnot-after %s\n",
		     d->appliance_id, hex, nb, na);
	return n < 0 || (size_t)n >= len ? 0 : (size_t)n;
}

/* The value of line `key VALUE\n` at *p into out (NUL-terminated), and *p past it. */
static int
field(const char **p, const char *end, const char *key, char *out, size_t cap, struct pc_error *err)
{
	size_t klen = strlen(key);
	const char *nl = memchr(*p, '\n', (size_t)(end - *p));
	size_t vlen;

	if (nl == NULL || (size_t)(nl - *p) <= klen + 1 || memcmp(*p, key, klen) != 0 ||
	    (*p)[klen] != ' ')
		return pc_error_set(err, "declaration: expected a line '%s VALUE'", key);
	vlen = (size_t)(nl - *p) - klen - 1;
	if (vlen >= cap)
		return pc_error_set(err, "declaration: the %s line is too long", key);
	memcpy(out, *p + klen + 1, vlen);
	out[vlen] = '\0';
	*p = nl + 1;
	return 0;
}

static int
parse_time(const char *key, const char *s, uint64_t *ns, struct pc_error *err)
{
	if (pc_utc_parse(s, ns, err) != 0)
		return pc_error_prefix(err, "declaration: %s", key);
	if (!whole_seconds(*ns))
		return pc_error_set(err, "declaration: %s '%s' is not a whole second", key, s);
	return 0;
}

static int
parse_fields(const char *body, size_t len, struct pc_declaration *d, struct pc_error *err)
{
	const char *p = body, *end = body + len;
	char v[PC_UTC_LEN + 2 * PC_DIGEST_LEN];
	size_t hlen = strlen(PC_DECL_HEADER);

	if (len <= hlen || memcmp(body, PC_DECL_HEADER "\n", hlen + 1) != 0)
		return pc_error_set(err, "not a declaration: the first line is not '%s'",
				    PC_DECL_HEADER);
	p += hlen + 1;
	if (field(&p, end, "appliance", d->appliance_id, sizeof(d->appliance_id), err) != 0)
		return -1;
	if (!pc_id_valid(d->appliance_id))
		return pc_error_set(err, "declaration: appliance id '%s' is not " PC_ID_RULE,
				    d->appliance_id);
	if (field(&p, end, "podmap", v, sizeof(v), err) != 0)
		return -1;
	if (!pc_unhex(v, strlen(v), d->podmap_digest, PC_DIGEST_LEN))
		return pc_error_set(err, "declaration: podmap is not 64 hex digits");
	if (field(&p, end, "not-before", v, sizeof(v), err) != 0 ||
	    parse_time("not-before", v, &d->not_before_ns, err) != 0 ||
	    field(&p, end, "not-after", v, sizeof(v), err) != 0 ||
	    parse_time("not-after", v, &d->not_after_ns, err) != 0)
		return -1;
	if (d->not_after_ns <= d->not_before_ns)
		return pc_error_set(err, "declaration: not-after is not later than not-before");
	if (p != end)
		return pc_error_set(err, "declaration: text after the not-after line");
	return 0;
}

int
pc_declaration_parse_body(const char *body, size_t len, struct pc_declaration *d,
			  struct pc_error *err)
{
	char again[PC_DECL_BODY_MAX];
	size_t n;

	memset(d, 0, sizeof(*d));
	if (parse_fields(body, len, d, err) != 0)
		return -1;
	/* One spelling only (lower-case hex, "Z", no fraction): the hash names one text. */
	n = pc_declaration_body(d, again, sizeof(again));
	if (n != len || memcmp(again, body, len) != 0)
		return pc_error_set(err,
				    "declaration: not in canonical form (lower-case hex, "
				    "times as 2026-01-01T00:00:00Z)");
	return 0;
}

bool
pc_declaration_key_ok(const struct pc_verifier_key *vk)
{
	return strncmp(vk->name, PC_DECL_KEY_PREFIX, strlen(PC_DECL_KEY_PREFIX)) == 0 &&
	    vk->name[strlen(PC_DECL_KEY_PREFIX)] != '\0';
}

static int
refuse(enum pc_decl_refusal *why, enum pc_decl_refusal r)
{
	if (why != NULL)
		*why = r;
	return -1;
}

/*
 * The first key that signed the note. A malformed note, or a signature line
 * of a trusted key that does not verify, is refused whatever other keys say.
 */
static int
signed_by(const char *note, size_t len, const struct pc_verifier_key *keys, size_t nkeys,
	  size_t *body_len, size_t *which, enum pc_decl_refusal *why, struct pc_error *err)
{
	struct pc_error e = { 0 };

	for (size_t i = 0; i < nkeys; i++) {
		if (pc_note_verify(note, len, &keys[i], body_len, &e) == 0) {
			*which = i;
			return 0;
		}
		if (strncmp(e.msg, "no signature", 12) != 0) {
			/* a malformed note, or a line of a trusted key that does not verify */
			if (strcmp(e.msg, "malformed note") == 0)
				refuse(why, PC_DECL_MALFORMED);
			return pc_error_set(err, "%s", e.msg);
		}
	}
	refuse(why, PC_DECL_BAD_SIGNATURE);
	if (nkeys == 1)
		return pc_error_set(err, "%s", e.msg);
	return pc_error_set(err, "no signature by any of the %zu auditor keys", nkeys);
}

static int
open_note(const char *note, size_t len, const struct pc_verifier_key *keys, size_t nkeys,
	  struct pc_declaration *d, size_t *which, enum pc_decl_refusal *why, struct pc_error *err)
{
	size_t blen, k;

	refuse(why, PC_DECL_BAD_SIGNATURE);
	if (nkeys == 0)
		return pc_error_set(err, "no auditor key given");
	for (k = 0; k < nkeys; k++) {
		if (!pc_declaration_key_ok(&keys[k]))
			return pc_error_set(err,
					    "key %s+%08x is not an auditor key (its name must "
					    "begin with " PC_DECL_KEY_PREFIX ")",
					    keys[k].name, (unsigned)keys[k].id);
	}
	if (signed_by(note, len, keys, nkeys, &blen, &k, why, err) != 0)
		return -1;
	if (pc_declaration_parse_body(note, blen, d, err) != 0)
		return refuse(why, PC_DECL_MALFORMED);
	if (which != NULL)
		*which = k;
	return 0;
}

int
pc_declaration_open(const char *note, size_t len, const struct pc_verifier_key *keys, size_t nkeys,
		    struct pc_declaration *d, size_t *which, struct pc_error *err)
{
	return open_note(note, len, keys, nkeys, d, which, NULL, err);
}

const char *
pc_declaration_refusal_name(enum pc_decl_refusal r)
{
	static const char *const names[PC_DECL_REFUSALS] = {
		[PC_DECL_UNSIGNED] = "unsigned",
		[PC_DECL_MALFORMED] = "malformed",
		[PC_DECL_BAD_SIGNATURE] = "bad_signature",
		[PC_DECL_OTHER_APPLIANCE] = "other_appliance",
		[PC_DECL_OTHER_MAP] = "other_map",
		[PC_DECL_NOT_YET_VALID] = "not_yet_valid",
		[PC_DECL_EXPIRED] = "expired",
	};

	return (unsigned)r < PC_DECL_REFUSALS ? names[r] : "unknown";
}

int
pc_declaration_check(const struct pc_declaration *d, const char *appliance_id,
		     const uint8_t digest[PC_DIGEST_LEN], uint64_t t_ns, enum pc_decl_refusal *why,
		     struct pc_error *err)
{
	char want[2 * PC_DIGEST_LEN + 1], got[2 * PC_DIGEST_LEN + 1], a[PC_UTC_LEN], b[PC_UTC_LEN];

	if (strcmp(d->appliance_id, appliance_id) != 0) {
		refuse(why, PC_DECL_OTHER_APPLIANCE);
		return pc_error_set(err, "declared for appliance %s, not %s", d->appliance_id,
				    appliance_id);
	}
	if (sodium_memcmp(d->podmap_digest, digest, PC_DIGEST_LEN) != 0) {
		pc_hex(d->podmap_digest, PC_DIGEST_LEN, got);
		pc_hex(digest, PC_DIGEST_LEN, want);
		refuse(why, PC_DECL_OTHER_MAP);
		return pc_error_set(err, "declared for pod map %s, not this map (%s)", got, want);
	}
	pc_utc_format(t_ns, b, sizeof(b));
	if (t_ns < d->not_before_ns) {
		pc_utc_format(d->not_before_ns, a, sizeof(a));
		refuse(why, PC_DECL_NOT_YET_VALID);
		return pc_error_set(err, "not yet valid: valid from %s (now %s)", a, b);
	}
	if (t_ns >= d->not_after_ns) {
		pc_utc_format(d->not_after_ns, a, sizeof(a));
		refuse(why, PC_DECL_EXPIRED);
		return pc_error_set(err, "expired at %s (now %s)", a, b);
	}
	return 0;
}

void
pc_declaration_hash(const char *note, size_t len, uint8_t hash[PC_DIGEST_LEN])
{
	crypto_generichash(hash, PC_DIGEST_LEN, (const uint8_t *)note, len, NULL, 0);
}

int
pc_declaration_path(const char *map_path, char *out, size_t len)
{
	int n = snprintf(out, len, "%s" PC_DECL_SUFFIX, map_path);

	return n < 0 || (size_t)n >= len ? -1 : 0;
}

long
pc_declaration_read(const char *path, char *buf, struct pc_error *err)
{
	long n;

	n = pc_read_small_at(AT_FDCWD, path, buf, PC_NOTE_MAX);
	if (n < 0) {
		if (errno == EFBIG)
			return pc_error_set(err, "%s: longer than %d bytes: not a declaration",
					    path, PC_NOTE_MAX - 1);
		if (errno == ENOENT)
			return pc_error_set(err,
					    "%s: no declaration: the pod map is not signed by "
					    "an auditor (podcap-audit sign)",
					    path);
		return pc_error_errno(err, "%s", path);
	}
	buf[n] = '\0';
	return n;
}

int
pc_declaration_load(const char *path, const struct pc_verifier_key *keys, size_t nkeys,
		    const char *appliance_id, const uint8_t digest[PC_DIGEST_LEN], uint64_t t_ns,
		    struct pc_declaration *d, uint8_t hash[PC_DIGEST_LEN],
		    enum pc_decl_refusal *why, struct pc_error *err)
{
	char note[PC_NOTE_MAX];
	long n = pc_declaration_read(path, note, err);

	if (n < 0)
		return refuse(why, PC_DECL_UNSIGNED);
	if (open_note(note, (size_t)n, keys, nkeys, d, NULL, why, err) != 0 ||
	    pc_declaration_check(d, appliance_id, digest, t_ns, why, err) != 0)
		return pc_error_prefix(err, "%s", path);
	pc_declaration_hash(note, (size_t)n, hash);
	return 0;
}
