/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The canonical form of a loaded pod map and its digest: what is enforced
 * and nothing else, in base units and a fixed order, so that two maps
 * declaring the same thing have the same bytes. docs/config.md documents
 * it byte for byte: a verifier recomputes the digest from it, so any change
 * here, or to a key's line or digest column in podmap/fields.c, is a change
 * of wire format and of CANONICAL_VERSION.
 *
 * Which keys are written, and when, is each key's row (podmap/fields.c):
 * its digest column, its line and how its value is written. This file
 * keeps the order of the map's own lines and how each kind of value is
 * written.
 */

#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "config.h"

#include "config_impl.h"

#define CANONICAL_VERSION	"podcap-podmap-v1"

/* Where canonical lines go: a buffer, a hash, or both. */
struct sink {
	char *buf;
	size_t len;
	size_t pos;
	crypto_generichash_state *hash;
};

static void emit(struct sink *s, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void
emit(struct sink *s, const char *fmt, ...)
{
	char line[PC_DEVARGS_LEN + 64];
	va_list ap;
	int n;
	size_t k;

	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	k = (size_t)n < sizeof(line) ? (size_t)n : sizeof(line) - 1;
	if (s->hash != NULL)
		crypto_generichash_update(s->hash, (const unsigned char *)line, k);
	if (s->buf != NULL && s->pos < s->len) {
		size_t room = s->len - s->pos;

		memcpy(s->buf + s->pos, line, k < room ? k : room);
	}
	s->pos += k;
}

/* The key being written: its row, the sink and the map it is in. */
struct cfg_lines {
	struct sink *s;
	const struct field *f;
	const struct pc_config *cfg;
};

void
cfg_put_line(struct cfg_lines *o, const char *fmt, ...)
{
	char value[PC_DEVARGS_LEN + 32];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(value, sizeof(value), fmt, ap);
	va_end(ap);
	if (o->f->digest == PC_DIGEST_UNLESS_DEFAULT && strcmp(value, o->f->dflt) == 0)
		return;
	emit(o->s, "%s %s\n", o->f->line, value);
}

const void *
cfg_put_value(const struct cfg_lines *o, const void *obj)
{
	return (const char *)obj + o->f->at;
}

bool
cfg_put_text(struct cfg_lines *o, const void *obj)
{
	cfg_put_line(o, "%s", (const char *)cfg_put_value(o, obj));
	return true;
}

bool
cfg_put_u64(struct cfg_lines *o, const void *obj)
{
	cfg_put_line(o, "%" PRIu64, *(const uint64_t *)cfg_put_value(o, obj));
	return true;
}

bool
cfg_put_u32(struct cfg_lines *o, const void *obj)
{
	cfg_put_line(o, "%" PRIu32, *(const uint32_t *)cfg_put_value(o, obj));
	return true;
}

bool
cfg_put_unsigned(struct cfg_lines *o, const void *obj)
{
	cfg_put_line(o, "%u", *(const unsigned *)cfg_put_value(o, obj));
	return true;
}

/* A PCI address in its full form, so that 3b:00.0 and 0000:3B:00.0 agree. */
bool
cfg_put_port(struct cfg_lines *o, const void *obj)
{
	const char *devargs = cfg_put_value(o, obj);
	char dev[PC_DEVARGS_LEN];
	size_t n = cfg_port_device(devargs, dev, sizeof(dev));

	cfg_put_line(o, "%s%s", dev, devargs + n);
	return true;
}

bool
cfg_put_role(struct cfg_lines *o, const void *obj)
{
	static const char *const names[] = {
		[PC_ROLE_SHAPER] = "shaper",
		[PC_ROLE_POD_TAP] = "pod-tap",
		[PC_ROLE_FABRIC_TAP] = "fabric-tap",
	};
	enum pc_role r = *(const enum pc_role *)cfg_put_value(o, obj);

	if ((unsigned)r >= sizeof(names) / sizeof(names[0]))
		return false;
	cfg_put_line(o, "%s", names[r]);
	return true;
}

bool
cfg_put_mode(struct cfg_lines *o, const void *obj)
{
	enum pc_mode m = *(const enum pc_mode *)cfg_put_value(o, obj);

	cfg_put_line(o, "%s", m == PC_MODE_POLICE ? "police" : "shape");
	return true;
}

bool
cfg_put_promise(struct cfg_lines *o, const void *obj)
{
	enum pc_promise p = *(const enum pc_promise *)cfg_put_value(o, obj);

	cfg_put_line(o, "%s", p == PC_PROMISE_WINDOW ? "window" : "envelope");
	return true;
}

/* The auditor keys, as verifier key lines in byte order. */
bool
cfg_put_auditor_keys(struct cfg_lines *o, const void *obj)
{
	const struct pc_config *cfg = obj;
	char line[PC_MAX_AUDITOR_KEYS][256], tmp[256];
	unsigned i, j, n = cfg->nauditor_keys;

	if (n > PC_MAX_AUDITOR_KEYS)
		return false;
	for (i = 0; i < n; i++) {
		if (pc_verifier_key_format(&cfg->auditor_keys[i], line[i], sizeof(line[i])) != 0)
			return false;
		for (j = i; j > 0 && strcmp(line[j - 1], line[j]) > 0; j--) {
			memcpy(tmp, line[j], sizeof(tmp));
			memcpy(line[j], line[j - 1], sizeof(tmp));
			memcpy(line[j - 1], tmp, sizeof(tmp));
		}
	}
	for (i = 0; i < n; i++)
		cfg_put_line(o, "%s", line[i]);
	return true;
}

/* A pod's uplink by its name, not its index in the file. */
bool
cfg_put_pod_uplink(struct cfg_lines *o, const void *obj)
{
	const struct pc_pod *p = obj;

	if (p->uplink >= o->cfg->nuplinks)
		return false;
	cfg_put_line(o, "%s", o->cfg->uplinks[p->uplink].name);
	return true;
}

static int
cmp_prefix_ptr(const void *a, const void *b)
{
	const struct pc_prefix *const *x = a, *const *y = b;

	return cfg_cmp_prefix(*x, *y);
}

bool
cfg_put_prefixes(struct cfg_lines *o, const void *obj)
{
	const struct pc_pod *p = obj;
	const struct pc_prefix *pfx[PC_MAX_PREFIXES];
	char text[64];
	unsigned i;

	if (p->nprefixes > PC_MAX_PREFIXES)
		return false;
	for (i = 0; i < p->nprefixes; i++)
		pfx[i] = &p->prefixes[i];
	qsort(pfx, p->nprefixes, sizeof(pfx[0]), cmp_prefix_ptr);
	for (i = 0; i < p->nprefixes; i++) {
		cfg_format_prefix(pfx[i], text, sizeof(text));
		cfg_put_line(o, "%s", text);
	}
	return true;
}

/* The lines of one key of obj, as its row says: none when it is never in the digest. */
static bool
put_key(struct sink *s, const struct pc_config *cfg, const struct field *f, const void *obj)
{
	struct cfg_lines o = { s, f, cfg };

	if (f == NULL)
		return false;
	if (f->digest == PC_DIGEST_NEVER || f->line == NULL)
		return true;
	return f->put(&o, obj);
}

/*
 * The map's own lines, in the order of the wire format. Each item of the
 * uplinks and the pods follows, its keys in its table's order.
 */
static const char *const map_lines[] = {
	"appliance.id", "appliance.origin", "appliance.role",         "appliance.slice",
	"window",       "max_frame",        "appliance.auditor_keys", "appliance.clock",
};

/* An item of a sequence and its name, to sort by. */
struct named_item {
	const char *name;
	const char *item;
};

static int
cmp_item(const void *a, const void *b)
{
	return strcmp(((const struct named_item *)a)->name, ((const struct named_item *)b)->name);
}

/* The items of a sequence in order of their name (its table's first key), each key in turn. */
static bool
put_items(struct sink *s, const struct pc_config *cfg, const struct field *seq)
{
	const struct cfg_items *it = seq->items;
	unsigned n = *(const unsigned *)((const char *)cfg + it->count_at);
	const char *items = *(const char *const *)((const char *)cfg + it->items_at);
	/* 256 KiB at PC_MAX_PODS: too much for a thread's stack */
	struct named_item *v = calloc(n ? n : 1, sizeof(*v));
	bool ok = v != NULL;

	for (unsigned i = 0; ok && i < n; i++) {
		v[i].item = items + i * it->item_size;
		v[i].name = v[i].item + seq->fields[0].at;
	}
	if (ok)
		qsort(v, n, sizeof(*v), cmp_item);
	for (unsigned i = 0; ok && i < n; i++)
		for (const struct field *f = seq->fields; ok && f->key != NULL; f++)
			ok = put_key(s, cfg, f, v[i].item);
	free(v);
	return ok;
}

/* Returns false for a configuration the loader could not have produced. */
static bool
emit_canonical(struct sink *s, const struct pc_config *cfg)
{
	bool ok = true;

	if (cfg->nuplinks > PC_MAX_UPLINKS || cfg->npods > PC_MAX_PODS)
		return false;
	for (unsigned i = 0; i < cfg->npods; i++)
		if (cfg->pods[i].uplink >= cfg->nuplinks ||
		    cfg->pods[i].nprefixes > PC_MAX_PREFIXES)
			return false;
	emit(s, "%s\n", CANONICAL_VERSION);
	for (size_t i = 0; ok && i < sizeof(map_lines) / sizeof(map_lines[0]); i++)
		ok = put_key(s, cfg, cfg_field_at(map_lines[i]), cfg);
	for (const struct field *f = cfg_top_fields; ok && f->key != NULL; f++)
		if (f->items != NULL && f->digest != PC_DIGEST_NEVER)
			ok = put_items(s, cfg, f);
	return ok;
}

size_t
pc_config_canonical(const struct pc_config *cfg, char *buf, size_t len)
{
	struct sink s = { buf, len, 0, NULL };

	if (!emit_canonical(&s, cfg))
		s.pos = 0;
	if (buf != NULL && len > 0)
		buf[s.pos < len ? s.pos : len - 1] = '\0';
	return s.pos;
}

void
pc_config_digest(const struct pc_config *cfg, uint8_t digest[PC_DIGEST_LEN])
{
	crypto_generichash_state st;
	struct sink s = { NULL, 0, 0, &st };

	/* BLAKE2b needs no sodium_init(): the portable code is the default */
	crypto_generichash_init(&st, NULL, 0, PC_DIGEST_LEN);
	/* nothing is hashed for a configuration the loader cannot produce */
	(void)emit_canonical(&s, cfg);
	crypto_generichash_final(&st, digest, PC_DIGEST_LEN);
}
