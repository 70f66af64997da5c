/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The pod map loader.
 *
 * The file is loaded whole with libyaml's document API, then walked with
 * tables of {key, handler}: any key not in the table is an error, so a typo
 * can never silently leave a default in force. Errors found while walking
 * come in document order; the cross-checks that need the whole map (names,
 * ports, references, bursts, prefixes) run after it, in a fixed order, so
 * the same file always yields the same first error.
 */

#include <arpa/inet.h>
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <yaml.h>

#include "podcap/config.h"
#include "podcap/units.h"

#include "config_impl.h"

#define DEFAULT_LISTEN		"127.0.0.1:9180"
#define DEFAULT_LCORES		"0-1"
#define DEFAULT_FILE_PREFIX	"podcap-"
#define DEFAULT_WINDOW_NS	(60 * PC_NS_PER_SEC)
#define DEFAULT_MAX_FRAME	1522
#define DEFAULT_CAP_BPS		1000000000ULL
#define DEFAULT_BURST_NS	(60 * PC_NS_PER_SEC)
#define DEFAULT_QUEUE_DELAY_NS	50000000ULL
#define DEFAULT_MEMORY		(1ULL << 30)
#define MIN_WINDOW_NS		100000000ULL
#define MS_NS			1000000ULL
#define MIN_MAX_FRAME		64
#define MAX_MAX_FRAME		16384
#define MAX_DPDK_ARGS		16
#define MAX_FILE_SIZE		(16u << 20)
#define QUOTE_LEN		64	/* characters of a value quoted in a message */

struct field;
typedef int (*handler_fn)(struct ctx *c, const struct field *f,
			  yaml_node_t *val, void *dst);

/* One key of a mapping: its handler writes at `off` into the object. */
struct field {
	const char *key;
	handler_fn fn;
	size_t off;
	size_t size;			/* of the destination, for strings */
	bool required;
};

static struct pc_mark
mark_of(const yaml_node_t *n)
{
	struct pc_mark m = { n->start_mark.line + 1, n->start_mark.column + 1 };

	return m;
}

/* Copies line `line` (1-based) of the text, without its line break. */
static void
source_line(const char *text, size_t len, unsigned line, char *out, size_t n)
{
	size_t i = 0, k = 0;
	unsigned l = 1;

	out[0] = '\0';
	if (text == NULL || line == 0)
		return;
	while (i < len && l < line) {
		if (text[i++] == '\n')
			l++;
	}
	if (l != line)
		return;
	while (i < len && text[i] != '\n' && text[i] != '\r' && k + 1 < n)
		out[k++] = text[i++];
	out[k] = '\0';
}

/* Printable, bounded copy of a value for a message. */
static const char *
quote(const char *s, char *buf, size_t n)
{
	size_t i, k = 0;

	for (i = 0; s[i] != '\0' && i < QUOTE_LEN && k + 1 < n; i++) {
		unsigned char ch = (unsigned char)s[i];

		buf[k++] = ch < 0x20 || ch == 0x7f ? '?' : (char)ch;
	}
	if (s[i] != '\0' && k + 4 < n) {
		memcpy(buf + k, "...", 3);
		k += 3;
	}
	buf[k] = '\0';
	return buf;
}

int
cfg_fail_at(struct ctx *c, struct pc_mark m, const char *fmt, ...)
{
	va_list ap;

	c->err->mark = m;
	va_start(ap, fmt);
	vsnprintf(c->err->msg, sizeof(c->err->msg), fmt, ap);
	va_end(ap);
	source_line(c->text, c->len, m.line, c->err->line_text,
		    sizeof(c->err->line_text));
	return -1;
}

/* "invalid KEY 'VALUE' in WHERE: WHY", at the value. */
static int
fail_value(struct ctx *c, const char *key, const yaml_node_t *v, const char *why)
{
	char q[QUOTE_LEN + 4];

	return cfg_fail_at(c, mark_of(v), "invalid %s '%s' %s: %s", key,
			   quote((const char *)v->data.scalar.value, q, sizeof(q)),
			   c->where, why);
}

static yaml_node_t *
node_at(const struct ctx *c, int index)
{
	return yaml_document_get_node(c->doc, index);
}

static bool
is_null(const yaml_node_t *n)
{
	const char *s;

	if (n->type != YAML_SCALAR_NODE)
		return false;
	s = (const char *)n->data.scalar.value;
	if (n->data.scalar.length == 0)
		return true;
	return n->data.scalar.style == YAML_PLAIN_SCALAR_STYLE &&
	    (strcmp(s, "~") == 0 || strcmp(s, "null") == 0 ||
	     strcmp(s, "Null") == 0 || strcmp(s, "NULL") == 0);
}

static const char *
kind(const yaml_node_t *n)
{
	switch (n->type) {
	case YAML_MAPPING_NODE:
		return "a mapping";
	case YAML_SEQUENCE_NODE:
		return "a sequence";
	default:
		return is_null(n) ? "nothing" : "a scalar";
	}
}

static const char *
type_name(yaml_node_type_t t)
{
	return t == YAML_MAPPING_NODE ? "a mapping" :
	    t == YAML_SEQUENCE_NODE ? "a sequence" : "a scalar";
}

/* The value of field `f` must be of type `t`, and a scalar not empty. */
static int
expect(struct ctx *c, const struct field *f, const yaml_node_t *v,
       yaml_node_type_t t)
{
	if (v->type == t && !(t == YAML_SCALAR_NODE && is_null(v)))
		return 0;
	if (t == YAML_SCALAR_NODE && is_null(v))
		return cfg_fail_at(c, mark_of(v), "missing value for '%s' %s",
				   f->key, c->where);
	return cfg_fail_at(c, mark_of(v), "expected %s for '%s' %s, got %s",
			   type_name(t), f->key, c->where, kind(v));
}

/* Item `i` of sequence `name` must be of type `t`. */
static int
expect_item(struct ctx *c, const char *name, unsigned i, const yaml_node_t *v,
	    yaml_node_type_t t)
{
	if (v->type == t && !(t == YAML_SCALAR_NODE && is_null(v)))
		return 0;
	return cfg_fail_at(c, mark_of(v), "expected %s for %s[%u], got %s",
			   type_name(t), name, i, kind(v));
}

static int
scalar_checked(struct ctx *c, const char *key, const yaml_node_t *v)
{
	if (strlen((const char *)v->data.scalar.value) != v->data.scalar.length)
		return fail_value(c, key, v, "contains a NUL character");
	return 0;
}

static int
get_scalar(struct ctx *c, const struct field *f, const yaml_node_t *v,
	   const char **s)
{
	if (expect(c, f, v, YAML_SCALAR_NODE) < 0 ||
	    scalar_checked(c, f->key, v) < 0)
		return -1;
	*s = (const char *)v->data.scalar.value;
	return 0;
}

static const struct field *
find_field(const struct field *fields, const char *key)
{
	for (; fields->key != NULL; fields++)
		if (strcmp(fields->key, key) == 0)
			return fields;
	return NULL;
}

static bool
same_scalar(const yaml_node_t *a, const yaml_node_t *b)
{
	return a->data.scalar.length == b->data.scalar.length &&
	    memcmp(a->data.scalar.value, b->data.scalar.value,
		   a->data.scalar.length) == 0;
}

/*
 * Walks a mapping with a field table. `where` names it in messages
 * ("in pods[2]"). The caller has checked that `node` is a mapping.
 */
static int
parse_mapping(struct ctx *c, yaml_node_t *node, const char *where,
	      const struct field *fields, void *obj)
{
	yaml_node_pair_t *pair, *prev, *start = node->data.mapping.pairs.start;
	const struct field *f;
	char saved[sizeof(c->where)], q[QUOTE_LEN + 4];
	uint64_t seen = 0;
	int rc = -1;

	memcpy(saved, c->where, sizeof(saved));
	snprintf(c->where, sizeof(c->where), "%s", where);
	for (pair = start; pair < node->data.mapping.pairs.top; pair++) {
		yaml_node_t *k = node_at(c, pair->key);
		yaml_node_t *v = node_at(c, pair->value);
		const char *key;

		if (k->type != YAML_SCALAR_NODE) {
			cfg_fail_at(c, mark_of(k), "expected a scalar key %s, got %s",
				    c->where, kind(k));
			goto out;
		}
		key = (const char *)k->data.scalar.value;
		for (prev = start; prev < pair; prev++) {
			yaml_node_t *pk = node_at(c, prev->key);

			if (pk->type == YAML_SCALAR_NODE && same_scalar(pk, k)) {
				struct pc_mark m = mark_of(pk);

				cfg_fail_at(c, mark_of(k),
					    "duplicate key '%s' %s (first at %u:%u)",
					    quote(key, q, sizeof(q)), c->where,
					    m.line, m.col);
				goto out;
			}
		}
		f = find_field(fields, key);
		if (f == NULL || strlen(key) != k->data.scalar.length) {
			cfg_fail_at(c, mark_of(k), "unknown key '%s' %s",
				    quote(key, q, sizeof(q)), c->where);
			goto out;
		}
		seen |= 1ULL << (f - fields);
		if (f->fn(c, f, v, (char *)obj + f->off) < 0)
			goto out;
	}
	for (f = fields; f->key != NULL; f++) {
		if (f->required && !(seen & (1ULL << (f - fields)))) {
			cfg_fail_at(c, mark_of(node), "missing key '%s' %s", f->key,
				    c->where);
			goto out;
		}
	}
	rc = 0;
out:
	memcpy(c->where, saved, sizeof(saved));
	return rc;
}

struct pc_mark
cfg_key_mark(const struct ctx *c, const yaml_node_t *map, const char *key)
{
	yaml_node_pair_t *pair;

	for (pair = map->data.mapping.pairs.start;
	     pair < map->data.mapping.pairs.top; pair++) {
		yaml_node_t *k = node_at(c, pair->key);

		if (k->type == YAML_SCALAR_NODE &&
		    strcmp((const char *)k->data.scalar.value, key) == 0)
			return mark_of(node_at(c, pair->value));
	}
	return mark_of(map);
}

/* Scalar handlers */

static int
handle_id(struct ctx *c, const struct field *f, yaml_node_t *v, void *dst)
{
	const char *s;

	if (get_scalar(c, f, v, &s) < 0)
		return -1;
	if (!pc_id_valid(s))
		return fail_value(c, f->key, v,
				  "use " PC_ID_RULE);
	snprintf(dst, f->size, "%s", s);
	return 0;
}

static int
handle_string(struct ctx *c, const struct field *f, yaml_node_t *v, void *dst)
{
	const char *s;
	char why[64];

	if (get_scalar(c, f, v, &s) < 0)
		return -1;
	if (strlen(s) >= f->size) {
		snprintf(why, sizeof(why), "longer than %zu characters",
			 f->size - 1);
		return fail_value(c, f->key, v, why);
	}
	snprintf(dst, f->size, "%s", s);
	return 0;
}

/* A DPDK device: one argv word for the EAL. */
static int
handle_devargs(struct ctx *c, const struct field *f, yaml_node_t *v, void *dst)
{
	const char *s;

	if (handle_string(c, f, v, dst) < 0)
		return -1;
	s = dst;
	if (s[strcspn(s, " \t\r\n\v\f")] != '\0')
		return fail_value(c, f->key, v, "must not contain whitespace");
	return 0;
}

static bool
valid_port(const char *s)
{
	char *end;
	unsigned long p;

	if (*s < '0' || *s > '9')
		return false;
	errno = 0;
	p = strtoul(s, &end, 10);
	return errno == 0 && *end == '\0' && p <= 65535;
}

static bool
valid_hostname(const char *s)
{
	size_t n = strlen(s);

	return n > 0 && strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
			       "abcdefghijklmnopqrstuvwxyz0123456789.-") == n;
}

/* host:port or [v6]:port, the host an IPv4 address or a name */
static int
handle_listen(struct ctx *c, const struct field *f, yaml_node_t *v, void *dst)
{
	static const char *const form = "expected host:port or [IPv6]:port";
	char host[128];
	const char *s, *colon, *close;
	unsigned char addr[16];

	if (handle_string(c, f, v, dst) < 0)
		return -1;
	s = dst;
	if (s[0] == '[') {
		close = strchr(s, ']');
		if (close == NULL || close[1] != ':')
			return fail_value(c, f->key, v, form);
		snprintf(host, sizeof(host), "%.*s", (int)(close - s - 1), s + 1);
		if (inet_pton(AF_INET6, host, addr) != 1)
			return fail_value(c, f->key, v, "not an IPv6 address in brackets");
		colon = close + 1;
	} else {
		colon = strrchr(s, ':');
		if (colon == NULL)
			return fail_value(c, f->key, v, form);
		snprintf(host, sizeof(host), "%.*s", (int)(colon - s), s);
		if (strchr(host, ':') != NULL)
			return fail_value(c, f->key, v,
					  "put an IPv6 address in brackets: [addr]:port");
		if (!valid_hostname(host))
			return fail_value(c, f->key, v, form);
	}
	if (!valid_port(colon + 1))
		return fail_value(c, f->key, v, "port must be 0 to 65535");
	return 0;
}

static int
handle_window(struct ctx *c, const struct field *f, yaml_node_t *v, void *dst)
{
	uint64_t *ns = dst;
	const char *s;
	struct pc_error e;

	if (get_scalar(c, f, v, &s) < 0)
		return -1;
	if (pc_parse_duration(s, ns, &e) < 0)
		return fail_value(c, f->key, v, e.msg);
	if (*ns < MIN_WINDOW_NS)
		return fail_value(c, f->key, v, "must be at least 100ms");
	if (*ns % MS_NS != 0)
		return fail_value(c, f->key, v,
				  "must be a whole number of milliseconds");
	return 0;
}

static int
handle_max_frame(struct ctx *c, const struct field *f, yaml_node_t *v, void *dst)
{
	uint32_t *max_frame = dst;
	const char *s;
	struct pc_error e;
	uint64_t bytes;

	if (get_scalar(c, f, v, &s) < 0)
		return -1;
	if (pc_parse_size(s, &bytes, &e) < 0)
		return fail_value(c, f->key, v, e.msg);
	if (bytes < MIN_MAX_FRAME || bytes > MAX_MAX_FRAME)
		return fail_value(c, f->key, v, "must be 64B to 16KiB");
	*max_frame = (uint32_t)bytes;
	return 0;
}

static int
handle_cap(struct ctx *c, const struct field *f, yaml_node_t *v, void *dst)
{
	struct limits_spec *lim = dst;
	const char *s;
	struct pc_error e;

	if (get_scalar(c, f, v, &s) < 0)
		return -1;
	if (pc_parse_rate(s, &lim->cap_bps, &e) < 0)
		return fail_value(c, f->key, v, e.msg);
	if (lim->cap_bps == 0)
		return fail_value(c, f->key, v, "must be greater than 0");
	lim->has_cap = true;
	return 0;
}

/* A size, or a duration at the cap: whichever unit the value carries. */
static int
handle_burst(struct ctx *c, const struct field *f, yaml_node_t *v, void *dst)
{
	struct limits_spec *lim = dst;
	const char *s;
	struct pc_error why_size, why_time;

	if (get_scalar(c, f, v, &s) < 0)
		return -1;
	if (pc_parse_size(s, &lim->burst, &why_size) == 0) {
		lim->burst_is_time = false;
	} else if (pc_parse_duration(s, &lim->burst, &why_time) == 0) {
		lim->burst_is_time = true;
	} else if (strncmp(why_size.msg, "unknown unit", 12) != 0) {
		return fail_value(c, f->key, v, why_size.msg);
	} else if (strncmp(why_time.msg, "unknown unit", 12) != 0) {
		return fail_value(c, f->key, v, why_time.msg);
	} else {
		return fail_value(c, f->key, v,
				  "unknown unit (use a size such as 7.5GB or "
				  "a duration such as 60s)");
	}
	lim->has_burst = true;
	return 0;
}

static int
handle_mode(struct ctx *c, const struct field *f, yaml_node_t *v, void *dst)
{
	struct limits_spec *lim = dst;
	const char *s;

	if (get_scalar(c, f, v, &s) < 0)
		return -1;
	if (strcmp(s, "shape") == 0)
		lim->mode = PC_MODE_SHAPE;
	else if (strcmp(s, "police") == 0)
		lim->mode = PC_MODE_POLICE;
	else
		return fail_value(c, f->key, v, "use shape or police");
	lim->has_mode = true;
	return 0;
}

static int
handle_queue_delay(struct ctx *c, const struct field *f, yaml_node_t *v,
		   void *dst)
{
	struct limits_spec *lim = dst;
	const char *s;
	struct pc_error e;

	if (get_scalar(c, f, v, &s) < 0)
		return -1;
	if (pc_parse_duration(s, &lim->queue_delay_ns, &e) < 0)
		return fail_value(c, f->key, v, e.msg);
	lim->has_queue_delay = true;
	return 0;
}

static int
handle_gpus(struct ctx *c, const struct field *f, yaml_node_t *v, void *dst)
{
	unsigned *gpus = dst;
	const char *s;
	uint64_t n = 0;

	if (get_scalar(c, f, v, &s) < 0)
		return -1;
	if (s[strspn(s, "0123456789")] != '\0')
		return fail_value(c, f->key, v, "expected a whole number, 0 or more");
	for (; *s != '\0'; s++) {
		n = n * 10 + (uint64_t)(*s - '0');
		if (n > UINT32_MAX)
			return fail_value(c, f->key, v, "too large");
	}
	*gpus = (unsigned)n;
	return 0;
}

/* An EAL -l core list: "0-1", "0,2-3" */
static bool
valid_lcores(const char *s)
{
	unsigned long lo, hi;
	char *end;

	for (;;) {
		if (*s < '0' || *s > '9')
			return false;
		lo = strtoul(s, &end, 10);
		hi = lo;
		if (*end == '-') {
			s = end + 1;
			if (*s < '0' || *s > '9')
				return false;
			hi = strtoul(s, &end, 10);
		}
		if (lo > hi || hi > 65535)
			return false;
		if (*end == '\0')
			return true;
		if (*end != ',')
			return false;
		s = end + 1;
	}
}

static int
handle_lcores(struct ctx *c, const struct field *f, yaml_node_t *v, void *dst)
{
	if (handle_string(c, f, v, dst) < 0)
		return -1;
	if (!valid_lcores(dst))
		return fail_value(c, f->key, v,
				  "expected a core list such as 0-1 or 0,2-3");
	return 0;
}

static int
handle_memory(struct ctx *c, const struct field *f, yaml_node_t *v, void *dst)
{
	uint64_t *bytes = dst;
	const char *s;
	struct pc_error e;

	if (get_scalar(c, f, v, &s) < 0)
		return -1;
	if (pc_parse_size(s, bytes, &e) < 0)
		return fail_value(c, f->key, v, e.msg);
	/* the EAL takes -m in MiB */
	if (*bytes == 0 || *bytes % (1ULL << 20) != 0)
		return fail_value(c, f->key, v,
				  "must be a whole number of MiB, at least 1MiB");
	return 0;
}

static int
handle_args(struct ctx *c, const struct field *f, yaml_node_t *v, void *dst)
{
	struct pc_dpdk *dpdk = dst;
	yaml_node_item_t *it, *start;
	char where[32];
	unsigned i;

	if (expect(c, f, v, YAML_SEQUENCE_NODE) < 0)
		return -1;
	start = v->data.sequence.items.start;
	for (it = start; it < v->data.sequence.items.top; it++) {
		yaml_node_t *a = node_at(c, *it);

		i = (unsigned)(it - start);
		if (i == MAX_DPDK_ARGS)
			return cfg_fail_at(c, mark_of(a),
					   "too many dpdk args (at most %d)",
					   MAX_DPDK_ARGS);
		if (expect_item(c, "dpdk.args", i, a, YAML_SCALAR_NODE) < 0)
			return -1;
		snprintf(where, sizeof(where), "args[%u]", i);
		if (scalar_checked(c, where, a) < 0)
			return -1;
		if (a->data.scalar.length >= PC_DEVARGS_LEN)
			return fail_value(c, where, a, "longer than 255 characters");
		snprintf(dpdk->args[i], PC_DEVARGS_LEN, "%s",
			 (const char *)a->data.scalar.value);
		dpdk->nargs = i + 1;
	}
	return 0;
}

/* Prefixes */

static int
parse_prefix(struct ctx *c, yaml_node_t *v, struct pc_prefix *p)
{
	struct pc_error e;

	if (cfg_parse_prefix((const char *)v->data.scalar.value, p, &e) < 0)
		return fail_value(c, "prefix", v, e.msg);
	p->mark = mark_of(v);
	return 0;
}

static int
handle_prefixes(struct ctx *c, const struct field *f, yaml_node_t *v, void *dst)
{
	struct pc_pod *pod = dst;
	yaml_node_item_t *it, *start;
	char name[64];
	unsigned i;

	if (expect(c, f, v, YAML_SEQUENCE_NODE) < 0)
		return -1;
	start = v->data.sequence.items.start;
	if (start == v->data.sequence.items.top)
		return cfg_fail_at(c, mark_of(v), "empty prefix list %s (leave out "
				   "'prefixes' for a pod alone on its uplink)",
				   c->where);
	for (it = start; it < v->data.sequence.items.top; it++) {
		yaml_node_t *p = node_at(c, *it);

		i = (unsigned)(it - start);
		if (i == PC_MAX_PREFIXES)
			return cfg_fail_at(c, mark_of(p),
					   "too many prefixes %s (at most %d)",
					   c->where, PC_MAX_PREFIXES);
		/* c->where is "in pods[N]" */
		snprintf(name, sizeof(name), "%s.prefixes", c->where + 3);
		if (expect_item(c, name, i, p, YAML_SCALAR_NODE) < 0 ||
		    scalar_checked(c, "prefix", p) < 0 ||
		    parse_prefix(c, p, &pod->prefixes[i]) < 0)
			return -1;
		pod->nprefixes = i + 1;
	}
	return 0;
}

/* Mappings */

/* A key whose handler writes `member` of `type`, bounded by its size. */
#define FIELD(key, fn, type, member, required) \
	{ key, fn, offsetof(type, member), sizeof(((type *)0)->member), required }
#define END_OF_FIELDS { NULL, NULL, 0, 0, false }

static const struct field appliance_fields[] = {
	FIELD("id", handle_id, struct pc_config, appliance_id, true),
	FIELD("signing_key", handle_string, struct pc_config, signing_key, false),
	FIELD("ledger", handle_string, struct pc_config, ledger, false),
	FIELD("listen", handle_listen, struct pc_config, listen, false),
	END_OF_FIELDS,
};

/* In defaults, where the object is the limits_spec itself. */
static const struct field limits_fields[] = {
	{ "cap", handle_cap, 0, sizeof(struct limits_spec), false },
	{ "burst", handle_burst, 0, sizeof(struct limits_spec), false },
	{ "mode", handle_mode, 0, sizeof(struct limits_spec), false },
	{ "queue_delay", handle_queue_delay, 0, sizeof(struct limits_spec), false },
	END_OF_FIELDS,
};

static const struct field dpdk_fields[] = {
	FIELD("lcores", handle_lcores, struct pc_dpdk, lcores, false),
	FIELD("memory", handle_memory, struct pc_dpdk, memory_bytes, false),
	FIELD("file_prefix", handle_id, struct pc_dpdk, file_prefix, false),
	/* the handler fills args[] and nargs: it gets the whole struct */
	{ "args", handle_args, 0, sizeof(struct pc_dpdk), false },
	END_OF_FIELDS,
};

static const struct field uplink_fields[] = {
	FIELD("name", handle_id, struct uplink_state, up.name, true),
	FIELD("pod_port", handle_devargs, struct uplink_state, up.pod_port, true),
	FIELD("fabric_port", handle_devargs, struct uplink_state, up.fabric_port, true),
	END_OF_FIELDS,
};

static const struct field pod_fields[] = {
	FIELD("id", handle_id, struct pod_state, pod.id, true),
	FIELD("gpus", handle_gpus, struct pod_state, pod.gpus, false),
	FIELD("uplink", handle_id, struct pod_state, uplink, true),
	FIELD("prefixes", handle_prefixes, struct pod_state, pod, false),
	FIELD("cap", handle_cap, struct pod_state, lim, false),
	FIELD("burst", handle_burst, struct pod_state, lim, false),
	FIELD("mode", handle_mode, struct pod_state, lim, false),
	FIELD("queue_delay", handle_queue_delay, struct pod_state, lim, false),
	END_OF_FIELDS,
};

static int
handle_appliance(struct ctx *c, const struct field *f, yaml_node_t *v, void *dst)
{
	if (expect(c, f, v, YAML_MAPPING_NODE) < 0)
		return -1;
	return parse_mapping(c, v, "in appliance", appliance_fields, dst);
}

static int
handle_defaults(struct ctx *c, const struct field *f, yaml_node_t *v, void *dst)
{
	if (expect(c, f, v, YAML_MAPPING_NODE) < 0)
		return -1;
	c->defaults_node = v;
	return parse_mapping(c, v, "in defaults", limits_fields, dst);
}

static int
handle_dpdk(struct ctx *c, const struct field *f, yaml_node_t *v, void *dst)
{
	if (expect(c, f, v, YAML_MAPPING_NODE) < 0)
		return -1;
	return parse_mapping(c, v, "in dpdk", dpdk_fields, dst);
}

/* Checks a non-empty sequence and allocates its states (at most `max`). */
static int
sequence_of(struct ctx *c, const struct field *f, yaml_node_t *v, unsigned max,
	    size_t size, void **states)
{
	size_t n;

	if (expect(c, f, v, YAML_SEQUENCE_NODE) < 0)
		return -1;
	n = (size_t)(v->data.sequence.items.top - v->data.sequence.items.start);
	if (n == 0)
		return cfg_fail_at(c, mark_of(v), "'%s' must not be empty", f->key);
	if (n > max)
		n = max;
	*states = calloc(n, size);
	if (*states == NULL)
		return cfg_fail_at(c, mark_of(v), "out of memory");
	return (int)n;
}

static int
handle_uplinks(struct ctx *c, const struct field *f, yaml_node_t *v, void *dst)
{
	yaml_node_item_t *it, *start;
	char where[32];
	void *states;
	unsigned i;

	(void)dst;
	if (sequence_of(c, f, v, PC_MAX_UPLINKS, sizeof(*c->uplinks), &states) < 0)
		return -1;
	c->uplinks = states;
	start = v->data.sequence.items.start;
	for (it = start; it < v->data.sequence.items.top; it++) {
		yaml_node_t *u = node_at(c, *it);

		i = (unsigned)(it - start);
		if (i == PC_MAX_UPLINKS)
			return cfg_fail_at(c, mark_of(u),
					   "too many uplinks (at most %d)",
					   PC_MAX_UPLINKS);
		if (expect_item(c, "uplinks", i, u, YAML_MAPPING_NODE) < 0)
			return -1;
		c->uplinks[i].node = u;
		c->uplinks[i].up.mark = mark_of(u);
		c->nuplinks = i + 1;
		snprintf(where, sizeof(where), "in uplinks[%u]", i);
		if (parse_mapping(c, u, where, uplink_fields, &c->uplinks[i]) < 0)
			return -1;
	}
	return 0;
}

static int
handle_pods(struct ctx *c, const struct field *f, yaml_node_t *v, void *dst)
{
	yaml_node_item_t *it, *start;
	char where[32];
	void *states;
	unsigned i;

	(void)dst;
	if (sequence_of(c, f, v, PC_MAX_PODS, sizeof(*c->pods), &states) < 0)
		return -1;
	c->pods = states;
	start = v->data.sequence.items.start;
	for (it = start; it < v->data.sequence.items.top; it++) {
		yaml_node_t *p = node_at(c, *it);

		i = (unsigned)(it - start);
		if (i == PC_MAX_PODS)
			return cfg_fail_at(c, mark_of(p),
					   "too many pods (at most %d)", PC_MAX_PODS);
		if (expect_item(c, "pods", i, p, YAML_MAPPING_NODE) < 0)
			return -1;
		c->pods[i].node = p;
		c->pods[i].pod.mark = mark_of(p);
		c->npods = i + 1;
		snprintf(where, sizeof(where), "in pods[%u]", i);
		if (parse_mapping(c, p, where, pod_fields, &c->pods[i]) < 0)
			return -1;
	}
	return 0;
}

static const struct field top_fields[] = {
	FIELD("appliance", handle_appliance, struct ctx, cfg, true),
	FIELD("window", handle_window, struct ctx, cfg.window_ns, false),
	FIELD("max_frame", handle_max_frame, struct ctx, cfg.max_frame, false),
	FIELD("defaults", handle_defaults, struct ctx, defaults, false),
	FIELD("dpdk", handle_dpdk, struct ctx, cfg.dpdk, false),
	/* these fill the context's uplink and pod states */
	{ "uplinks", handle_uplinks, 0, 0, true },
	{ "pods", handle_pods, 0, 0, true },
	END_OF_FIELDS,
};

/* Loading */

static void
set_defaults(struct ctx *c)
{
	struct pc_config *cfg = &c->cfg;

	snprintf(cfg->listen, sizeof(cfg->listen), "%s", DEFAULT_LISTEN);
	cfg->window_ns = DEFAULT_WINDOW_NS;
	cfg->max_frame = DEFAULT_MAX_FRAME;
	snprintf(cfg->dpdk.lcores, sizeof(cfg->dpdk.lcores), "%s", DEFAULT_LCORES);
	cfg->dpdk.memory_bytes = DEFAULT_MEMORY;
	c->defaults.cap_bps = DEFAULT_CAP_BPS;
	c->defaults.burst = DEFAULT_BURST_NS;
	c->defaults.burst_is_time = true;
	c->defaults.mode = PC_MODE_SHAPE;
	c->defaults.queue_delay_ns = DEFAULT_QUEUE_DELAY_NS;
}

/* 1-based line and column of a byte offset, for libyaml's reader errors. */
static struct pc_mark
offset_mark(const char *text, size_t len, size_t off)
{
	struct pc_mark m = { 1, 1 };
	size_t i;

	for (i = 0; i < off && i < len; i++) {
		if (text[i] == '\n') {
			m.line++;
			m.col = 1;
		} else if (((unsigned char)text[i] & 0xc0) != 0x80) {
			m.col++;
		}
	}
	return m;
}

static int
yaml_failure(struct ctx *c, const yaml_parser_t *p)
{
	struct pc_mark m = { p->problem_mark.line + 1, p->problem_mark.column + 1 };
	const char *problem = p->problem != NULL ? p->problem : "unknown error";

	switch (p->error) {
	case YAML_MEMORY_ERROR:
		return cfg_fail_at(c, (struct pc_mark){ 0, 0 }, "out of memory");
	case YAML_READER_ERROR:
		return cfg_fail_at(c, offset_mark(c->text, c->len, p->problem_offset),
				   "invalid YAML: %s", problem);
	default:
		if (p->context != NULL)
			return cfg_fail_at(c, m, "invalid YAML: %s (%s at %zu:%zu)",
					   problem, p->context,
					   p->context_mark.line + 1,
					   p->context_mark.column + 1);
		return cfg_fail_at(c, m, "invalid YAML: %s", problem);
	}
}

static void
finish_defaults(struct ctx *c)
{
	struct pc_dpdk *d = &c->cfg.dpdk;

	if (d->file_prefix[0] == '\0')
		snprintf(d->file_prefix, sizeof(d->file_prefix), "%s%.*s",
			 DEFAULT_FILE_PREFIX,
			 (int)(PC_ID_LEN - 1 - strlen(DEFAULT_FILE_PREFIX)),
			 c->cfg.appliance_id);
}

static int
move_out(struct ctx *c)
{
	struct pc_config *cfg = &c->cfg;
	unsigned i;

	cfg->uplinks = calloc(c->nuplinks, sizeof(*cfg->uplinks));
	cfg->pods = calloc(c->npods, sizeof(*cfg->pods));
	if (cfg->uplinks == NULL || cfg->pods == NULL) {
		free(cfg->uplinks);
		free(cfg->pods);
		cfg->uplinks = NULL;
		cfg->pods = NULL;
		return cfg_fail_at(c, (struct pc_mark){ 0, 0 }, "out of memory");
	}
	for (i = 0; i < c->nuplinks; i++)
		cfg->uplinks[i] = c->uplinks[i].up;
	for (i = 0; i < c->npods; i++)
		cfg->pods[i] = c->pods[i].pod;
	cfg->nuplinks = c->nuplinks;
	cfg->npods = c->npods;
	return 0;
}

static int
load_document(struct ctx *c, yaml_parser_t *parser)
{
	yaml_document_t extra;
	yaml_node_t *root, *more;
	int rc;

	root = yaml_document_get_root_node(c->doc);
	if (root == NULL)
		return cfg_fail_at(c, (struct pc_mark){ 0, 0 }, "the pod map is empty");
	if (root->type != YAML_MAPPING_NODE)
		return cfg_fail_at(c, mark_of(root),
				   "expected a mapping at the top level, got %s",
				   kind(root));
	if (!yaml_parser_load(parser, &extra))
		return yaml_failure(c, parser);
	more = yaml_document_get_root_node(&extra);
	rc = 0;
	if (more != NULL)
		rc = cfg_fail_at(c, mark_of(more), "more than one YAML document "
				 "(a pod map is a single document)");
	yaml_document_delete(&extra);
	if (rc < 0)
		return rc;
	if (parse_mapping(c, root, "at the top level", top_fields, c) < 0 ||
	    cfg_check(c) < 0)
		return -1;
	finish_defaults(c);
	return move_out(c);
}

int
pc_config_load_buffer(const char *name, const char *text, size_t len,
		      struct pc_config *cfg, struct pc_error *err)
{
	yaml_parser_t parser;
	yaml_document_t doc;
	struct ctx *c;
	int rc = -1;

	memset(cfg, 0, sizeof(*cfg));
	memset(err, 0, sizeof(*err));
	if (name == NULL)
		name = "<buffer>";
	snprintf(err->file, sizeof(err->file), "%s", name);
	/* a struct pc_config is large; keep it off the stack */
	c = calloc(1, sizeof(*c));
	if (c == NULL) {
		snprintf(err->msg, sizeof(err->msg), "out of memory");
		return -1;
	}
	c->text = text;
	c->len = len;
	c->err = err;
	c->doc = &doc;
	set_defaults(c);
	snprintf(c->cfg.path, sizeof(c->cfg.path), "%s", name);
	if (!yaml_parser_initialize(&parser)) {
		cfg_fail_at(c, (struct pc_mark){ 0, 0 }, "out of memory");
		goto out;
	}
	yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
	if (!yaml_parser_load(&parser, &doc)) {
		yaml_failure(c, &parser);
	} else {
		rc = load_document(c, &parser);
		yaml_document_delete(&doc);
	}
	yaml_parser_delete(&parser);
	if (rc == 0)
		*cfg = c->cfg;
out:
	free(c->uplinks);
	free(c->pods);
	free(c);
	return rc;
}

int
pc_config_load(const char *path, struct pc_config *cfg, struct pc_error *err)
{
	FILE *f;
	char *text;
	size_t n;
	int rc;

	memset(cfg, 0, sizeof(*cfg));
	memset(err, 0, sizeof(*err));
	snprintf(err->file, sizeof(err->file), "%s", path);
	f = fopen(path, "rb");
	if (f == NULL) {
		snprintf(err->msg, sizeof(err->msg), "cannot open: %s",
			 strerror(errno));
		return -1;
	}
	text = malloc(MAX_FILE_SIZE + 1);
	if (text == NULL) {
		fclose(f);
		snprintf(err->msg, sizeof(err->msg), "out of memory");
		return -1;
	}
	n = fread(text, 1, MAX_FILE_SIZE + 1, f);
	if (ferror(f)) {
		snprintf(err->msg, sizeof(err->msg), "cannot read: %s",
			 strerror(errno));
		rc = -1;
	} else if (n > MAX_FILE_SIZE) {
		snprintf(err->msg, sizeof(err->msg), "larger than %u MiB",
			 MAX_FILE_SIZE >> 20);
		rc = -1;
	} else {
		rc = pc_config_load_buffer(path, text, n, cfg, err);
	}
	fclose(f);
	free(text);
	return rc;
}

void
pc_config_free(struct pc_config *cfg)
{
	if (cfg == NULL)
		return;
	free(cfg->uplinks);
	free(cfg->pods);
	memset(cfg, 0, sizeof(*cfg));
}

int
pc_config_find_pod(const struct pc_config *cfg, const char *id)
{
	unsigned i;

	for (i = 0; i < cfg->npods; i++)
		if (strcmp(cfg->pods[i].id, id) == 0)
			return (int)i;
	return -1;
}

int
pc_config_find_uplink(const struct pc_config *cfg, const char *name)
{
	unsigned i;

	for (i = 0; i < cfg->nuplinks; i++)
		if (strcmp(cfg->uplinks[i].name, name) == 0)
			return (int)i;
	return -1;
}
