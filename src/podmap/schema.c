/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The pod map's keys as their rows say (podmap/fields.c): each key by its
 * path, with its decisions, and what a reload may not change, read from
 * the rows' reload column and compared where the loaded map keeps the
 * value. Paths name a mapping's keys after a dot and a sequence's items
 * with []: "appliance.tls.key", "pods[].cap".
 */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "config.h"

#include "config_impl.h"

/* Room for a path and a separator: "appliance.attestation.ima_log" is the longest. */
#define PATH_LEN 64

/* The separator between a row's path and its keys'. */
static const char *
joint(const struct field *f)
{
	return f->per_item ? "[]." : ".";
}

static const struct field *
find_in(const struct field *fields, const char *key, size_t len)
{
	for (; fields != NULL && fields->key != NULL; fields++)
		if (strlen(fields->key) == len && strncmp(fields->key, key, len) == 0)
			return fields;
	return NULL;
}

const struct field *
cfg_field_at(const char *path)
{
	const struct field *f = find_in(cfg_top_fields, path, strcspn(path, ".["));

	for (path += strcspn(path, ".["); f != NULL && *path != '\0';) {
		size_t j = strlen(joint(f));

		if (strncmp(path, joint(f), j) != 0)
			return NULL;
		path += j;
		f = find_in(f->fields, path, strcspn(path, ".["));
		path += strcspn(path, ".[");
	}
	return f;
}

static void
each_in(const struct field *fields, const char *prefix,
	void (*fn)(const struct pc_config_key *k, void *arg), void *arg)
{
	for (const struct field *f = fields; f->key != NULL; f++) {
		struct pc_config_key k = { f->key,  "",        f->required, f->fields != NULL,
					   f->line, f->digest, f->reload };

		snprintf(k.path, sizeof(k.path), "%s%s", prefix, f->key);
		fn(&k, arg);
		if (f->fields != NULL) {
			char sub[sizeof(k.path)];

			snprintf(sub, sizeof(sub), "%s%s", k.path, joint(f));
			each_in(f->fields, sub, fn, arg);
		}
	}
}

void
pc_config_each_key(void (*fn)(const struct pc_config_key *k, void *arg), void *arg)
{
	each_in(cfg_top_fields, "", fn, arg);
}

/* The value of f in a and in b, where the loaded map keeps it, is the same. */
static bool
same(const struct field *f, const void *a, const void *b)
{
	const char *x = (const char *)a + f->at, *y = (const char *)b + f->at;

	if (f->at_text)
		return strncmp(x, y, f->at_size) == 0;
	return memcmp(x, y, f->at_size) == 0;
}

static const char *
refuse(const struct field *f, const char *path, const void *b, char *why, size_t n)
{
	if (f->changed != NULL)
		snprintf(why, n, "%s", f->changed);
	else if (f->fields != NULL && !f->per_item)
		/* of a mapping, whether it is there */
		snprintf(why, n, "%s was %s", path,
			 *((const char *)b + f->at) ? "added" : "removed");
	else
		snprintf(why, n, "%s changed", path);
	return why;
}

static const char *fixed_in(const struct field *fields, const char *prefix, const void *a,
			    const void *b, char *why, size_t n);

/* The items of a sequence fixed for a run, one by one: their number is the same. */
static const char *
fixed_items(const struct field *f, const char *path, const struct pc_config *a,
	    const struct pc_config *b, char *why, size_t n)
{
	const struct cfg_items *it = f->items;
	unsigned count = *(const unsigned *)((const char *)a + it->count_at);
	const char *x = *(const char *const *)((const char *)a + it->items_at);
	const char *y = *(const char *const *)((const char *)b + it->items_at);
	char sub[PATH_LEN + 4];

	snprintf(sub, sizeof(sub), "%.*s[].", PATH_LEN - 1, path);
	for (unsigned i = 0; i < count; i++) {
		size_t off = i * it->item_size;

		if (fixed_in(f->fields, sub, x + off, y + off, why, n) != NULL)
			return why;
	}
	return NULL;
}

/*
 * The first fixed key of the table whose value a and b (the struct
 * pc_config, or an item of a sequence) do not share. A mapping's keys are
 * kept in the same struct as the mapping's; a sequence's items apart.
 */
static const char *
fixed_in(const struct field *fields, const char *prefix, const void *a, const void *b, char *why,
	 size_t n)
{
	for (const struct field *f = fields; f->key != NULL; f++) {
		char path[PATH_LEN];

		snprintf(path, sizeof(path), "%s%s", prefix, f->key);
		if (f->reload == PC_RELOAD_FIXED && f->at_size > 0 && !same(f, a, b))
			return refuse(f, path, b, why, n);
		if (f->items != NULL && f->reload == PC_RELOAD_FIXED) {
			if (fixed_items(f, path, a, b, why, n) != NULL)
				return why;
		} else if (f->fields != NULL && !f->per_item) {
			char sub[sizeof(path) + 1];

			snprintf(sub, sizeof(sub), "%s.", path);
			if (fixed_in(f->fields, sub, a, b, why, n) != NULL)
				return why;
		}
	}
	return NULL;
}

const char *
pc_config_fixed_change(const struct pc_config *a, const struct pc_config *b, char *why, size_t n)
{
	return fixed_in(cfg_top_fields, "", a, b, why, n);
}
