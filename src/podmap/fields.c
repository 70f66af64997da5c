/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The keys of a pod map: one handler per kind of value, and for each
 * mapping the table of its keys ({key, handler, where the value goes}).
 * A handler reads one value, checks it on its own and stores it; what
 * depends on other keys is podmap/check.c's.
 */

#include <arpa/inet.h>
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <yaml.h>

#include "config.h"
#include "base/id.h"
#include "log/origin.h"
#include "base/units.h"

#include "config_impl.h"

#define MIN_WINDOW_NS		100000000ULL
#define MS_NS			1000000ULL
#define MIN_MAX_FRAME		64
#define MAX_MAX_FRAME		16384
#define MAX_DPDK_ARGS		16
#define MIB			(1ULL << 20)

/* Scalar handlers */

static int
handle_id(struct ctx *c, const struct field *f, yaml_node_t *v, void *dst)
{
	const char *s;

	if (cfg_get_scalar(c, f, v, &s) < 0)
		return -1;
	if (!pc_id_valid(s))
		return cfg_fail_value(c, f->key, v,
				      "use " PC_ID_RULE);
	snprintf(dst, f->size, "%s", s);
	return 0;
}

/* appliance.origin: the log's globally unique name (log/origin.h). */
static int
handle_origin(struct ctx *c, const struct field *f, yaml_node_t *v, void *dst)
{
	const char *s;
	struct pc_error why;

	if (cfg_get_scalar(c, f, v, &s) < 0)
		return -1;
	if (pc_origin_parse(s, NULL, &why) < 0)
		return cfg_fail_value(c, f->key, v, why.msg);
	snprintf(dst, f->size, "%s", s);
	return 0;
}

int
cfg_handle_text(struct ctx *c, const struct field *f, yaml_node_t *v, void *dst)
{
	const char *s;
	char why[64];

	if (cfg_get_scalar(c, f, v, &s) < 0)
		return -1;
	if (strlen(s) >= f->size) {
		snprintf(why, sizeof(why), "longer than %zu characters",
			 f->size - 1);
		return cfg_fail_value(c, f->key, v, why);
	}
	snprintf(dst, f->size, "%s", s);
	return 0;
}

/* A DPDK device: one argv word for the EAL. */
static int
handle_devargs(struct ctx *c, const struct field *f, yaml_node_t *v, void *dst)
{
	const char *s;

	if (cfg_handle_text(c, f, v, dst) < 0)
		return -1;
	s = dst;
	if (s[strcspn(s, " \t\r\n\v\f")] != '\0')
		return cfg_fail_value(c, f->key, v, "must not contain whitespace");
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

	if (cfg_handle_text(c, f, v, dst) < 0)
		return -1;
	s = dst;
	if (s[0] == '[') {
		close = strchr(s, ']');
		if (close == NULL || close[1] != ':')
			return cfg_fail_value(c, f->key, v, form);
		snprintf(host, sizeof(host), "%.*s", (int)(close - s - 1), s + 1);
		if (inet_pton(AF_INET6, host, addr) != 1)
			return cfg_fail_value(c, f->key, v, "not an IPv6 address in brackets");
		colon = close + 1;
	} else {
		colon = strrchr(s, ':');
		if (colon == NULL)
			return cfg_fail_value(c, f->key, v, form);
		snprintf(host, sizeof(host), "%.*s", (int)(colon - s), s);
		if (strchr(host, ':') != NULL)
			return cfg_fail_value(c, f->key, v,
					      "put an IPv6 address in brackets: [addr]:port");
		if (!valid_hostname(host))
			return cfg_fail_value(c, f->key, v, form);
	}
	if (!valid_port(colon + 1))
		return cfg_fail_value(c, f->key, v, "port must be 0 to 65535");
	return 0;
}

typedef int (*quantity_fn)(const char *s, uint64_t *out, struct pc_error *err);

/*
 * A rate, size or duration (units.h) in base units: at least `min`, at most
 * `max` (0: no bound) and a whole number of `step` (0: any).
 */
struct quantity {
	quantity_fn parse;
	uint64_t min, max, step;
	const char *out_of_range;	/* why, below min or above max */
	const char *off_step;		/* why, not a whole number of steps */
};

static const struct quantity window = {
	pc_parse_duration, MIN_WINDOW_NS, 0, MS_NS,
	"must be at least 100ms", "must be a whole number of milliseconds",
};

static const struct quantity max_frame = {
	pc_parse_size, MIN_MAX_FRAME, MAX_MAX_FRAME, 0, "must be 64B to 16KiB", NULL,
};

static const struct quantity cap = {
	pc_parse_rate, 1, 0, 0, "must be greater than 0", NULL,
};

static const struct quantity queue_delay = { pc_parse_duration, 0, 0, 0, NULL, NULL };

/* the EAL takes -m in MiB */
static const struct quantity memory = {
	pc_parse_size, MIB, 0, MIB,
	"must be a whole number of MiB, at least 1MiB",
	"must be a whole number of MiB, at least 1MiB",
};

/* A quantity bounded as f->data says, into a uint64_t or (max_frame) a uint32_t. */
static int
handle_quantity(struct ctx *c, const struct field *f, yaml_node_t *v, void *dst)
{
	const struct quantity *q = f->data;
	const char *s;
	struct pc_error e;
	uint64_t n;

	if (cfg_get_scalar(c, f, v, &s) < 0)
		return -1;
	if (q->parse(s, &n, &e) < 0)
		return cfg_fail_value(c, f->key, v, e.msg);
	if (n < q->min || (q->max != 0 && n > q->max))
		return cfg_fail_value(c, f->key, v, q->out_of_range);
	if (q->step != 0 && n % q->step != 0)
		return cfg_fail_value(c, f->key, v, q->off_step);
	if (f->size == sizeof(uint32_t))
		*(uint32_t *)dst = (uint32_t)n;
	else
		*(uint64_t *)dst = n;
	return 0;
}

/* A size, or a duration at the cap: whichever unit the value carries. */
static int
handle_burst(struct ctx *c, const struct field *f, yaml_node_t *v, void *dst)
{
	struct limits_spec *lim = dst;
	const char *s;
	struct pc_error why_size, why_time;

	if (cfg_get_scalar(c, f, v, &s) < 0)
		return -1;
	if (pc_parse_size(s, &lim->burst, &why_size) == 0) {
		lim->burst_is_time = false;
	} else if (pc_parse_duration(s, &lim->burst, &why_time) == 0) {
		lim->burst_is_time = true;
	} else if (strncmp(why_size.msg, "unknown unit", 12) != 0) {
		return cfg_fail_value(c, f->key, v, why_size.msg);
	} else if (strncmp(why_time.msg, "unknown unit", 12) != 0) {
		return cfg_fail_value(c, f->key, v, why_time.msg);
	} else {
		return cfg_fail_value(c, f->key, v,
				      "unknown unit (use a size such as 7.5GB or "
				      "a duration such as 60s)");
	}
	return 0;
}

static int
handle_mode(struct ctx *c, const struct field *f, yaml_node_t *v, void *dst)
{
	enum pc_mode *mode = dst;
	const char *s;

	if (cfg_get_scalar(c, f, v, &s) < 0)
		return -1;
	if (strcmp(s, "shape") == 0)
		*mode = PC_MODE_SHAPE;
	else if (strcmp(s, "police") == 0)
		*mode = PC_MODE_POLICE;
	else
		return cfg_fail_value(c, f->key, v, "use shape or police");
	return 0;
}

static int
handle_promise(struct ctx *c, const struct field *f, yaml_node_t *v, void *dst)
{
	enum pc_promise *promise = dst;
	const char *s;

	if (cfg_get_scalar(c, f, v, &s) < 0)
		return -1;
	if (strcmp(s, "envelope") == 0)
		*promise = PC_PROMISE_ENVELOPE;
	else if (strcmp(s, "window") == 0)
		*promise = PC_PROMISE_WINDOW;
	else
		return cfg_fail_value(c, f->key, v, "use envelope or window");
	return 0;
}

static int
handle_role(struct ctx *c, const struct field *f, yaml_node_t *v, void *dst)
{
	enum pc_role *role = dst;
	const char *s;

	if (cfg_get_scalar(c, f, v, &s) < 0)
		return -1;
	if (strcmp(s, "shaper") == 0)
		*role = PC_ROLE_SHAPER;
	else if (strcmp(s, "pod-tap") == 0)
		*role = PC_ROLE_POD_TAP;
	else if (strcmp(s, "fabric-tap") == 0)
		*role = PC_ROLE_FABRIC_TAP;
	else
		return cfg_fail_value(c, f->key, v, "use shaper, pod-tap or fabric-tap");
	return 0;
}

static int
handle_gpus(struct ctx *c, const struct field *f, yaml_node_t *v, void *dst)
{
	unsigned *gpus = dst;
	const char *s;
	uint64_t n = 0;

	if (cfg_get_scalar(c, f, v, &s) < 0)
		return -1;
	if (s[strspn(s, "0123456789")] != '\0')
		return cfg_fail_value(c, f->key, v, "expected a whole number, 0 or more");
	for (; *s != '\0'; s++) {
		n = n * 10 + (uint64_t)(*s - '0');
		if (n > UINT32_MAX)
			return cfg_fail_value(c, f->key, v, "too large");
	}
	*gpus = (unsigned)n;
	return 0;
}

static int
handle_workers(struct ctx *c, const struct field *f, yaml_node_t *v, void *dst)
{
	unsigned *n = dst;

	if (handle_gpus(c, f, v, dst) < 0)
		return -1;
	if (*n < 1 || *n > PC_MAX_UPLINK_WORKERS)
		return cfg_fail_value(c, f->key, v, "expected 1 to 16");
	return 0;
}

/*
 * An EAL core list: "0-1", "0,2-3"; an item may name the CPU its lcores
 * run on (--lcores): "0-1,2@0" runs lcore 2 on CPU 0.
 */
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
		if (*end == '@') {
			s = end + 1;
			if (*s < '0' || *s > '9' || strtoul(s, &end, 10) > 65535)
				return false;
		}
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
	if (cfg_handle_text(c, f, v, dst) < 0)
		return -1;
	if (!valid_lcores(dst))
		return cfg_fail_value(c, f->key, v,
				      "expected a core list such as 0-1, 0,2-3 or 0-1,2@0");
	return 0;
}

/* Sequences */

typedef int (*item_fn)(struct ctx *c, unsigned i, yaml_node_t *item, void *obj);

/*
 * Calls `each` on the items of sequence v, at most `max` of them: one
 * more is "too many WHAT (at most MAX)", at it.
 */
static int
each_item(struct ctx *c, yaml_node_t *v, unsigned max, const char *what, item_fn each,
	  void *obj)
{
	yaml_node_item_t *it, *start = v->data.sequence.items.start;

	for (it = start; it < v->data.sequence.items.top; it++) {
		yaml_node_t *item = cfg_node_at(c, *it);
		unsigned i = (unsigned)(it - start);

		if (i == max)
			return cfg_fail_at(c, cfg_mark_of(item), "too many %s (at most %u)", what,
					   max);
		if (each(c, i, item, obj) < 0)
			return -1;
	}
	return 0;
}

static int
read_arg(struct ctx *c, unsigned i, yaml_node_t *a, void *obj)
{
	struct pc_dpdk *dpdk = obj;
	char where[32];

	if (cfg_expect_item(c, "dpdk.args", i, a, YAML_SCALAR_NODE) < 0)
		return -1;
	snprintf(where, sizeof(where), "args[%u]", i);
	if (cfg_scalar_checked(c, where, a) < 0)
		return -1;
	if (a->data.scalar.length >= PC_DEVARGS_LEN)
		return cfg_fail_value(c, where, a, "longer than 255 characters");
	snprintf(dpdk->args[i], PC_DEVARGS_LEN, "%s", (const char *)a->data.scalar.value);
	dpdk->nargs = i + 1;
	return 0;
}

static int
handle_args(struct ctx *c, const struct field *f, yaml_node_t *v, void *dst)
{
	if (cfg_expect(c, f, v, YAML_SEQUENCE_NODE) < 0)
		return -1;
	return each_item(c, v, MAX_DPDK_ARGS, "dpdk args", read_arg, dst);
}

static int
read_prefix(struct ctx *c, unsigned i, yaml_node_t *v, void *obj)
{
	struct pc_pod *pod = obj;
	struct pc_prefix *p = &pod->prefixes[i];
	struct pc_error e;
	char name[64];

	/* c->where is "in pods[N]" */
	snprintf(name, sizeof(name), "%s.prefixes", c->where + 3);
	if (cfg_expect_item(c, name, i, v, YAML_SCALAR_NODE) < 0 ||
	    cfg_scalar_checked(c, "prefix", v) < 0)
		return -1;
	if (cfg_parse_prefix((const char *)v->data.scalar.value, p, &e) < 0)
		return cfg_fail_value(c, "prefix", v, e.msg);
	p->mark = cfg_mark_of(v);
	pod->nprefixes = i + 1;
	return 0;
}

static int
handle_prefixes(struct ctx *c, const struct field *f, yaml_node_t *v, void *dst)
{
	char what[64];

	if (cfg_expect(c, f, v, YAML_SEQUENCE_NODE) < 0)
		return -1;
	if (v->data.sequence.items.start == v->data.sequence.items.top)
		return cfg_fail_at(c, cfg_mark_of(v), "empty prefix list %s (leave out "
				   "'prefixes' for a pod alone on its uplink)",
				   c->where);
	snprintf(what, sizeof(what), "prefixes %s", c->where);
	return each_item(c, v, PC_MAX_PREFIXES, what, read_prefix, dst);
}

/* Mappings */

/* A key whose handler writes `member` of `type`, bounded by its size. */
#define FIELD(key, fn, type, member, required) \
	{ key, fn, offsetof(type, member), sizeof(((type *)0)->member), required, NULL, NULL }
/* A rate, size or duration, within the bounds of `q`. */
#define QUANTITY(key, type, member, q, required) \
	{ key, handle_quantity, offsetof(type, member), sizeof(((type *)0)->member), required, \
	  NULL, q }
/* A key whose value is a mapping, read into `member` with its own table. */
#define MAPPING(key, fn, type, member, fields, required) \
	{ key, fn, offsetof(type, member), sizeof(((type *)0)->member), required, fields, NULL }
/* A key whose value is a sequence of mappings, each with a state of its own. */
#define SEQUENCE(key, items, required) \
	{ key, handle_sequence, 0, 0, required, NULL, items }
#define END_OF_FIELDS { NULL, NULL, 0, 0, false, NULL, NULL }

static const struct field appliance_fields[] = {
	FIELD("id", handle_id, struct pc_config, appliance_id, true),
	FIELD("origin", handle_origin, struct pc_config, origin, false),
	FIELD("signing_key", cfg_handle_text, struct pc_config, signing_key, false),
	FIELD("ledger", cfg_handle_text, struct pc_config, ledger, false),
	FIELD("listen", handle_listen, struct pc_config, listen, false),
	FIELD("listen_plaintext", cfg_handle_bool, struct pc_config, listen_plaintext, false),
	FIELD("tls", cfg_handle_tls, struct pc_config, tls, false),
	FIELD("access", cfg_handle_access, struct pc_config, access, false),
	/* the handler fills auditor_keys[] and nauditor_keys of the ctx's config */
	{ "auditor_keys", cfg_handle_auditor_keys, 0, 0, false, NULL, NULL },
	FIELD("witnesses", cfg_handle_witnesses, struct pc_config, witnesses, false),
	/* podmap/attest.c: fills the defaults, then reads the keys */
	{ "attestation", cfg_handle_attestation, offsetof(struct pc_config, attestation),
	  sizeof(struct pc_attestation), false, cfg_attestation_fields, NULL },
	FIELD("role", handle_role, struct pc_config, role, false),
	END_OF_FIELDS,
};

/* In defaults, where the object is the limits_spec itself. */
static const struct field limits_fields[] = {
	QUANTITY("cap", struct limits_spec, cap_bps, &cap, false),
	/* the handler sets burst and burst_is_time: it gets the whole struct */
	{ "burst", handle_burst, 0, sizeof(struct limits_spec), false },
	FIELD("mode", handle_mode, struct limits_spec, mode, false),
	QUANTITY("queue_delay", struct limits_spec, queue_delay_ns, &queue_delay, false),
	FIELD("promise", handle_promise, struct limits_spec, promise, false),
	END_OF_FIELDS,
};

static const struct field dpdk_fields[] = {
	FIELD("lcores", handle_lcores, struct pc_dpdk, lcores, false),
	QUANTITY("memory", struct pc_dpdk, memory_bytes, &memory, false),
	FIELD("file_prefix", handle_id, struct pc_dpdk, file_prefix, false),
	/* the handler fills args[] and nargs: it gets the whole struct */
	{ "args", handle_args, 0, sizeof(struct pc_dpdk), false },
	END_OF_FIELDS,
};

static const struct field uplink_fields[] = {
	FIELD("name", handle_id, struct uplink_state, up.name, true),
	FIELD("pod_port", handle_devargs, struct uplink_state, up.pod_port, true),
	FIELD("fabric_port", handle_devargs, struct uplink_state, up.fabric_port, true),
	FIELD("workers", handle_workers, struct uplink_state, up.workers, false),
	END_OF_FIELDS,
};

static const struct field pod_fields[] = {
	FIELD("id", handle_id, struct pod_state, pod.id, true),
	FIELD("gpus", handle_gpus, struct pod_state, pod.gpus, false),
	FIELD("uplink", handle_id, struct pod_state, uplink, true),
	FIELD("prefixes", handle_prefixes, struct pod_state, pod, false),
	QUANTITY("cap", struct pod_state, lim.cap_bps, &cap, false),
	FIELD("burst", handle_burst, struct pod_state, lim, false),
	FIELD("mode", handle_mode, struct pod_state, lim.mode, false),
	QUANTITY("queue_delay", struct pod_state, lim.queue_delay_ns, &queue_delay, false),
	FIELD("promise", handle_promise, struct pod_state, lim.promise, false),
	END_OF_FIELDS,
};

/* A mapping read with its own table; `where` in messages is "in KEY". */
static int
handle_mapping(struct ctx *c, const struct field *f, yaml_node_t *v, void *dst)
{
	char where[48];

	if (cfg_expect(c, f, v, YAML_MAPPING_NODE) < 0)
		return -1;
	snprintf(where, sizeof(where), "in %s", f->key);
	return cfg_parse_mapping(c, v, where, f->fields, dst);
}

/* The checks point at the defaults when a pod's limit comes from them. */
static int
handle_defaults(struct ctx *c, const struct field *f, yaml_node_t *v, void *dst)
{
	c->defaults_node = v;
	return handle_mapping(c, f, v, dst);
}

/*
 * The uplinks and the pods: a sequence of mappings, each read with
 * `fields` into a state of its own in the context.
 */
struct sequence {
	unsigned max;
	size_t size;			/* of a state */
	const struct field *fields;
	size_t node, mark;		/* where a state keeps its node and mark */
	/* gives the context its n states, zeroed, before they are filled */
	void (*keep)(struct ctx *c, void *states, unsigned n);
};

/* Checks a non-empty sequence and allocates its states (at most `max`). */
static int
sequence_of(struct ctx *c, const struct field *f, yaml_node_t *v, unsigned max,
	    size_t size, void **states)
{
	size_t n;

	if (cfg_expect(c, f, v, YAML_SEQUENCE_NODE) < 0)
		return -1;
	n = (size_t)(v->data.sequence.items.top - v->data.sequence.items.start);
	if (n == 0)
		return cfg_fail_at(c, cfg_mark_of(v), "'%s' must not be empty", f->key);
	if (n > max)
		n = max;
	*states = calloc(n, size);
	if (*states == NULL)
		return cfg_fail_at(c, cfg_mark_of(v), "out of memory");
	return (int)n;
}

/* The states of a sequence's items, as read_state() fills them. */
struct seq_states {
	const struct sequence *seq;
	const char *key;
	char *v;
};

static int
read_state(struct ctx *c, unsigned i, yaml_node_t *item, void *obj)
{
	const struct seq_states *st = obj;
	char where[32], *state = st->v + i * st->seq->size;

	if (cfg_expect_item(c, st->key, i, item, YAML_MAPPING_NODE) < 0)
		return -1;
	*(yaml_node_t **)(state + st->seq->node) = item;
	*(struct pc_mark *)(state + st->seq->mark) = cfg_mark_of(item);
	snprintf(where, sizeof(where), "in %s[%u]", st->key, i);
	return cfg_parse_mapping(c, item, where, st->seq->fields, state);
}

static int
handle_sequence(struct ctx *c, const struct field *f, yaml_node_t *v, void *dst)
{
	struct seq_states st = { f->data, f->key, NULL };
	void *states = NULL;
	int n;

	(void)dst;
	n = sequence_of(c, f, v, st.seq->max, st.seq->size, &states);
	if (n < 0)
		return -1;
	st.seq->keep(c, states, (unsigned)n);
	st.v = states;
	return each_item(c, v, st.seq->max, f->key, read_state, &st);
}

static void
keep_uplinks(struct ctx *c, void *states, unsigned n)
{
	c->uplinks = states;
	c->nuplinks = n;
}

static void
keep_pods(struct ctx *c, void *states, unsigned n)
{
	c->pods = states;
	c->npods = n;
}

static const struct sequence uplinks = {
	PC_MAX_UPLINKS, sizeof(struct uplink_state), uplink_fields,
	offsetof(struct uplink_state, node), offsetof(struct uplink_state, up.mark),
	keep_uplinks,
};

static const struct sequence pods = {
	PC_MAX_PODS, sizeof(struct pod_state), pod_fields,
	offsetof(struct pod_state, node), offsetof(struct pod_state, pod.mark),
	keep_pods,
};

const struct field cfg_top_fields[] = {
	MAPPING("appliance", handle_mapping, struct ctx, cfg, appliance_fields, true),
	QUANTITY("window", struct ctx, cfg.window_ns, &window, false),
	QUANTITY("max_frame", struct ctx, cfg.max_frame, &max_frame, false),
	MAPPING("defaults", handle_defaults, struct ctx, defaults, limits_fields, false),
	MAPPING("dpdk", handle_mapping, struct ctx, cfg.dpdk, dpdk_fields, false),
	/* these fill the context's uplink and pod states */
	SEQUENCE("uplinks", &uplinks, true),
	SEQUENCE("pods", &pods, true),
	END_OF_FIELDS,
};
