/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * C2SP signed notes (https://c2sp.org/signed-note) and the tlog checkpoint
 * body they carry (https://c2sp.org/tlog-checkpoint).
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <sodium.h>

#include "base/bytes.h"
#include "base/base64.h"
#include "note.h"

#include "base/utf8.h"

#define SIG_PREFIX "\xe2\x80\x94 "      /* U+2014 EM DASH, space */
#define SIG_PREFIX_LEN 4
#define SIG_MAX_LINES 100               /* bounds the work one note can cost */
#define SIG_MAX_BYTES 1024              /* decoded signature, any algorithm */
#define ROOT_B64_LEN 44                 /* base64 of 32 bytes, padded */

/* C2SP: a note is UTF-8 without control characters other than newline. */
static int
note_text_valid(const char *text, size_t len)
{
	const unsigned char *s = (const unsigned char *)text;
	uint32_t c;
	size_t i, n;

	for (i = 0; i < len; i += n) {
		n = pc_utf8_next(s + i, len - i, &c);
		if (n == 0 || (c < 0x20 && c != '\n') || c == 0x7f)
			return 0;
	}
	return 1;
}

/* A key name in a signature line: non-empty, no '+', no Unicode space. */
static int
sig_name_valid(const char *name, size_t len)
{
	const unsigned char *s = (const unsigned char *)name;
	uint32_t c;
	size_t i, n;

	if (len == 0)
		return 0;
	for (i = 0; i < len; i += n) {
		n = pc_utf8_next(s + i, len - i, &c);
		if (n == 0 || c == '+' || (c >= 0x20 && pc_utf8_space_or_control(c)))
			return 0;
	}
	return 1;
}

int
pc_decimal_parse(const char *s, size_t len, uint64_t *out)
{
	uint64_t v = 0;
	size_t i;

	if (len == 0 || len > 20 || (len > 1 && s[0] == '0'))
		return -1;
	for (i = 0; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		if (v > (UINT64_MAX - (uint64_t)(s[i] - '0')) / 10)
			return -1;
		v = v * 10 + (uint64_t)(s[i] - '0');
	}
	*out = v;
	return 0;
}

/* Extension lines: each non-empty and newline-terminated. */
static int
extra_valid(const char *s, size_t len)
{
	const char *nl;

	while (len > 0) {
		nl = memchr(s, '\n', len);
		if (nl == NULL || nl == s)
			return 0;
		len -= (size_t)(nl + 1 - s);
		s = nl + 1;
	}
	return 1;
}

size_t
pc_checkpoint_body(const struct pc_checkpoint *cp, char *buf, size_t len)
{
	char b64[sodium_base64_ENCODED_LEN(PC_HASH_LEN, sodium_base64_VARIANT_ORIGINAL)];
	size_t olen = strnlen(cp->origin, sizeof(cp->origin));
	size_t elen = strnlen(cp->extra, sizeof(cp->extra));
	int n;

	/* A checkpoint that would not parse back is not written either. */
	if (olen == 0 || olen == sizeof(cp->origin) || elen == sizeof(cp->extra) ||
	    !note_text_valid(cp->origin, olen) || memchr(cp->origin, '\n', olen) != NULL ||
	    !note_text_valid(cp->extra, elen) || !extra_valid(cp->extra, elen))
		return 0;
	sodium_bin2base64(b64, sizeof(b64), cp->root, PC_HASH_LEN, sodium_base64_VARIANT_ORIGINAL);
	n = snprintf(buf, len, "%s\n%" PRIu64 "\n%s\n%s", cp->origin, cp->size, b64, cp->extra);
	if (n < 0 || (size_t)n >= len)
		return 0;
	return (size_t)n;
}

/* The next line of [*s, end) without its newline; 0 or -1 if there is no complete line. */
static int
next_line(const char **s, const char *end, const char **line, size_t *len)
{
	const char *nl = memchr(*s, '\n', (size_t)(end - *s));

	if (nl == NULL)
		return -1;
	*line = *s;
	*len = (size_t)(nl - *s);
	*s = nl + 1;
	return 0;
}

int
pc_checkpoint_parse_body(const char *body, size_t len, struct pc_checkpoint *cp, struct pc_error *err)
{
	const char *p = body, *end = body + len, *line;
	size_t n, rlen;

	memset(cp, 0, sizeof(*cp));
	if (len == 0 || body[len - 1] != '\n') {
		return pc_error_set(err, "checkpoint does not end with a newline");
	}
	if (!note_text_valid(body, len)) {
		return pc_error_set(err, "checkpoint is not UTF-8 text");
	}
	if (next_line(&p, end, &line, &n) != 0 || n == 0) {
		return pc_error_set(err, "checkpoint origin line is empty");
	}
	if (n >= sizeof(cp->origin)) {
		return pc_error_set(err, "checkpoint origin is too long");
	}
	memcpy(cp->origin, line, n);
	if (next_line(&p, end, &line, &n) != 0 || pc_decimal_parse(line, n, &cp->size) != 0) {
		return pc_error_set(err, "checkpoint tree size is not a canonical decimal number");
	}
	if (next_line(&p, end, &line, &n) != 0 || n != ROOT_B64_LEN ||
	    pc_base64_decode(cp->root, PC_HASH_LEN, line, n, &rlen) != 0 || rlen != PC_HASH_LEN) {
		return pc_error_set(err, "checkpoint root hash is not base64 of 32 bytes");
	}
	n = (size_t)(end - p);
	if (!extra_valid(p, n)) {
		return pc_error_set(err, "checkpoint has an empty extension line");
	}
	if (n >= sizeof(cp->extra)) {
		return pc_error_set(err, "checkpoint extension lines are too long");
	}
	memcpy(cp->extra, p, n);
	return 0;
}

size_t
pc_note_format(const char *body, size_t body_len, const char *key_name, uint32_t key_id,
	       const uint8_t sig[64], char *out, size_t outlen)
{
	uint8_t raw[4 + 64];
	char b64[sodium_base64_ENCODED_LEN(sizeof(raw), sodium_base64_VARIANT_ORIGINAL)];
	size_t nlen = strlen(key_name), blen, total;
	char *p = out;

	if (body_len == 0 || body[body_len - 1] != '\n' || !sig_name_valid(key_name, nlen))
		return 0;
	pc_store_be32(raw, key_id);
	memcpy(raw + 4, sig, 64);
	sodium_bin2base64(b64, sizeof(b64), raw, sizeof(raw), sodium_base64_VARIANT_ORIGINAL);
	blen = strlen(b64);
	total = body_len + 1 + SIG_PREFIX_LEN + nlen + 1 + blen + 1;
	if (total >= outlen)
		return 0;
	memcpy(p, body, body_len);
	p += body_len;
	*p++ = '\n';
	memcpy(p, SIG_PREFIX, SIG_PREFIX_LEN);
	p += SIG_PREFIX_LEN;
	memcpy(p, key_name, nlen);
	p += nlen;
	*p++ = ' ';
	memcpy(p, b64, blen);
	p += blen;
	*p++ = '\n';
	*p = '\0';
	return total;
}

void
pc_note_sign_body(const struct pc_signer_key *k, const char *body, size_t body_len, uint8_t sig[64])
{
	crypto_sign_detached(sig, NULL, (const uint8_t *)body, body_len, k->sk);
}

/* Where the body ends: just after the newline that starts the last "\n\n". */
static int
split_note(const char *note, size_t len, size_t *body_len)
{
	size_t i;

	for (i = len; i >= 2; i--) {
		if (note[i - 2] == '\n' && note[i - 1] == '\n') {
			*body_len = i - 1;
			return 0;
		}
	}
	return -1;
}

struct sig_line {
	const char *name;
	size_t name_len;
	uint32_t id;
	uint8_t sig[SIG_MAX_BYTES];
	size_t sig_len;
};

static int
parse_sig_line(const char *line, size_t len, struct sig_line *sl)
{
	const char *sp, *b64;
	size_t n;

	if (len < SIG_PREFIX_LEN || memcmp(line, SIG_PREFIX, SIG_PREFIX_LEN) != 0)
		return -1;
	line += SIG_PREFIX_LEN;
	len -= SIG_PREFIX_LEN;
	sp = memchr(line, ' ', len);
	if (sp == NULL)
		return -1;
	sl->name = line;
	sl->name_len = (size_t)(sp - line);
	b64 = sp + 1;
	n = len - sl->name_len - 1;
	if (!sig_name_valid(sl->name, sl->name_len) || n == 0 ||
	    pc_base64_decode(sl->sig, sizeof(sl->sig), b64, n, &sl->sig_len) != 0 ||
	    sl->sig_len < 5)
		return -1;
	sl->id = pc_load_be32(sl->sig);
	return 0;
}

int
pc_note_each_sig(const char *note, size_t len, size_t *body_len, pc_note_sig_fn fn, void *ctx,
		 struct pc_error *err)
{
	static _Thread_local struct sig_line lines[SIG_MAX_LINES];
	const char *p, *end = note + len, *line;
	struct pc_note_sig s;
	size_t blen, n, i, count = 0;
	int rc;

	if (!note_text_valid(note, len) || split_note(note, len, &blen) != 0 ||
	    note[len - 1] != '\n' || blen + 1 == len)
		return pc_error_set(err, "malformed note");
	/* Every line is checked before the first call: a malformed note is refused whole. */
	for (p = note + blen + 1; p < end; count++) {
		if (next_line(&p, end, &line, &n) != 0 || count == SIG_MAX_LINES ||
		    parse_sig_line(line, n, &lines[count]) != 0)
			return pc_error_set(err, "malformed note");
	}
	*body_len = blen;
	for (i = 0; i < count; i++) {
		s.name = lines[i].name;
		s.name_len = lines[i].name_len;
		s.id = lines[i].id;
		s.sig = lines[i].sig + 4;
		s.sig_len = lines[i].sig_len - 4;
		rc = fn(ctx, &s);
		if (rc != 0)
			return rc;
	}
	return 0;
}

static _Thread_local char why_buf[PC_KEY_NAME_LEN + 64];

int
pc_note_verify(const char *note, size_t len, const struct pc_verifier_key *vk,
	       size_t *body_len, struct pc_error *err)
{
	struct sig_line sl;
	const char *p, *end = note + len, *line;
	size_t blen, n;
	int lines = 0, good = 0;

	if (!note_text_valid(note, len) || split_note(note, len, &blen) != 0 ||
	    note[len - 1] != '\n' || blen + 1 == len) {
		return pc_error_set(err, "malformed note");
	}
	for (p = note + blen + 1; p < end;) {
		if (next_line(&p, end, &line, &n) != 0 || ++lines > SIG_MAX_LINES ||
		    parse_sig_line(line, n, &sl) != 0) {
			return pc_error_set(err, "malformed note");
		}
		/* Signatures by other keys are allowed and ignored. */
		if (sl.id != vk->id || sl.name_len != strlen(vk->name) ||
		    memcmp(sl.name, vk->name, sl.name_len) != 0)
			continue;
		if (sl.sig_len != 4 + crypto_sign_BYTES ||
		    crypto_sign_verify_detached(sl.sig + 4, (const uint8_t *)note, blen, vk->pk) != 0) {
			snprintf(why_buf, sizeof(why_buf), "bad signature by key %s+%08x",
				 vk->name, (unsigned)vk->id);
			return pc_error_set(err, "%s", why_buf);
		}
		good = 1;
	}
	if (!good) {
		snprintf(why_buf, sizeof(why_buf), "no signature by key %s+%08x", vk->name,
			 (unsigned)vk->id);
		return pc_error_set(err, "%s", why_buf);
	}
	*body_len = blen;
	return 0;
}
