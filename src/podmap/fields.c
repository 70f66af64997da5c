/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The keys of a pod map: one handler per kind of value, and for each
 * mapping the table of its keys. A key's row is everything decided about
 * it: its handler and where the value goes, whether and how it is in the
 * digest (podmap/canon.c writes the canonical form from the rows), and
 * whether a reload may change it (podmap/schema.c). A handler reads one
 * value, checks it on its own and stores it; what depends on other keys is
 * podmap/check.c's.
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
#define US_NS                   1000ULL
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

static const struct quantity slice = {
	pc_parse_duration, 0, 0, US_NS, NULL, "must be a whole number of microseconds",
};

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

/*
 * Each row is a key's: its handler and where it writes (`INTO`), then its
 * columns: DIGEST (in the canonical form always, when not its default, or
 * never) with its LINE there, RELOAD (fixed for a run, applied, or read at
 * start), and where the loaded map KEEPs it, which a reload compares and
 * its line is written from.
 */

/* The handler writes `member` of `type`, bounded by its size. */
#define INTO(type, member) .off = offsetof(type, member), .size = sizeof(((type *)0)->member)
/* The loaded map keeps the value at `member` of `type`: bytes, or a string. */
#define KEEP(type, member)      .at = offsetof(type, member), .at_size = sizeof(((type *)0)->member)
#define KEEP_TEXT(type, member) KEEP(type, member), .at_text = true
#define DIGEST(d)               .digest = PC_DIGEST_##d
#define RELOAD(r)               .reload = PC_RELOAD_##r
/* Its lines in the canonical form: "name value", put writing the value. */
#define LINE(name, fn) .line = name, .put = fn
#define REQUIRED       .required = true

/* the auditor keys are compared as one span, their number and the keys */
_Static_assert(offsetof(struct pc_config, auditor_keys) ==
		   offsetof(struct pc_config, nauditor_keys) + sizeof(unsigned),
	       "no padding between nauditor_keys and auditor_keys");

/*
 * In the order a reload compares them (the first that differs is the one a
 * refusal names): the keys of the canonical form, then the endpoint's.
 */
static const struct field appliance_fields[] = {
	{ "id", handle_id, INTO(struct pc_config, appliance_id), REQUIRED, DIGEST(ALWAYS),
	  LINE("appliance", cfg_put_text), RELOAD(FIXED),
	  KEEP_TEXT(struct pc_config, appliance_id) },
	/* only when set: maps with the podcap/<id> origin keep their digests */
	{ "origin", handle_origin, INTO(struct pc_config, origin), DIGEST(UNLESS_DEFAULT),
	  LINE("origin", cfg_put_text), .dflt = "", RELOAD(FIXED),
	  KEEP_TEXT(struct pc_config, origin) },
	/* only a tap says so: every shaper's pod map keeps the digest it had */
	{ "role", handle_role, INTO(struct pc_config, role), DIGEST(UNLESS_DEFAULT),
	  LINE("role", cfg_put_role), .dflt = "shaper", RELOAD(FIXED),
	  KEEP(struct pc_config, role) },
	/* a tap's own line, only when set: maps without slices keep their digests */
	{ "slice", handle_quantity, INTO(struct pc_config, slice_ns), .data = &slice,
	  DIGEST(UNLESS_DEFAULT), LINE("slice", cfg_put_u64), .dflt = "0", RELOAD(FIXED),
	  KEEP(struct pc_config, slice_ns) },
	/*
	 * The handler fills auditor_keys[] and nauditor_keys of the ctx's
	 * config; only when set, so older digests stand. Who may declare maps
	 * is fixed for a run: a reload cannot drop the auditor.
	 */
	{ "auditor_keys", cfg_handle_auditor_keys, DIGEST(UNLESS_DEFAULT),
	  LINE("auditor_key", cfg_put_auditor_keys), .dflt = "", RELOAD(FIXED),
	  .at = offsetof(struct pc_config, nauditor_keys),
	  .at_size = sizeof(unsigned) + sizeof(((struct pc_config *)0)->auditor_keys) },
	/* the endpoint's socket and whether it speaks TLS are made once */
	{ "listen", handle_listen, INTO(struct pc_config, listen), DIGEST(NEVER), RELOAD(FIXED),
	  KEEP_TEXT(struct pc_config, listen) },
	{ "listen_plaintext", cfg_handle_bool, INTO(struct pc_config, listen_plaintext),
	  DIGEST(NEVER), RELOAD(FIXED), KEEP(struct pc_config, listen_plaintext) },
	/* fixed is whether it is there; its files are read again at each reload */
	{ "tls", cfg_handle_tls, INTO(struct pc_config, tls), .fields = cfg_tls_fields,
	  DIGEST(NEVER), RELOAD(FIXED), KEEP(struct pc_config, tls.enabled) },
	{ "access", cfg_handle_access, INTO(struct pc_config, access), .fields = cfg_access_fields,
	  .per_item = true, DIGEST(NEVER), RELOAD(APPLIED) },
	{ "signing_key", cfg_handle_text, INTO(struct pc_config, signing_key), DIGEST(NEVER),
	  RELOAD(AT_START) },
	{ "ledger", cfg_handle_text, INTO(struct pc_config, ledger), DIGEST(NEVER),
	  RELOAD(AT_START) },
	/* a reload keeps submitting to the witnesses podcapd started with */
	{ "witnesses", cfg_handle_witnesses, INTO(struct pc_config, witnesses),
	  .fields = cfg_witness_fields, .per_item = true, DIGEST(NEVER), RELOAD(AT_START) },
	/* podmap/attest.c: fills the defaults, then reads the keys */
	{ "attestation", cfg_handle_attestation, INTO(struct pc_config, attestation),
	  .fields = cfg_attestation_fields, DIGEST(NEVER), RELOAD(AT_START) },
	/* podmap/clock.c: declared readings are the auditor's promise (a SYNC
	 * per window), fixed for a run; only when set, so older digests stand */
	{ "clock", cfg_handle_clock, INTO(struct pc_config, clock), .fields = cfg_clock_fields,
	  DIGEST(UNLESS_DEFAULT), LINE("clock", cfg_put_clock), .dflt = "", RELOAD(FIXED),
	  KEEP(struct pc_config, clock.enabled) },
	{ NULL },
};

/*
 * In defaults, where the object is the limits_spec itself. In the digest
 * through each pod's resolved limits, which have the lines.
 */
static const struct field limits_fields[] = {
	{ "cap", handle_quantity, INTO(struct limits_spec, cap_bps), .data = &cap, DIGEST(ALWAYS),
	  RELOAD(APPLIED) },
	/* the handler sets burst and burst_is_time: it gets the whole struct */
	{ "burst", handle_burst, .size = sizeof(struct limits_spec), DIGEST(ALWAYS),
	  RELOAD(APPLIED) },
	{ "mode", handle_mode, INTO(struct limits_spec, mode), DIGEST(ALWAYS), RELOAD(APPLIED) },
	{ "queue_delay", handle_quantity, INTO(struct limits_spec, queue_delay_ns),
	  .data = &queue_delay, DIGEST(ALWAYS), RELOAD(APPLIED) },
	{ "promise", handle_promise, INTO(struct limits_spec, promise), DIGEST(UNLESS_DEFAULT),
	  RELOAD(APPLIED) },
	{ NULL },
};

/* The EAL's: how podcapd runs, read once before the EAL starts. */
static const struct field dpdk_fields[] = {
	{ "lcores", handle_lcores, INTO(struct pc_dpdk, lcores), DIGEST(NEVER), RELOAD(AT_START) },
	{ "memory", handle_quantity, INTO(struct pc_dpdk, memory_bytes), .data = &memory,
	  DIGEST(NEVER), RELOAD(AT_START) },
	{ "file_prefix", handle_id, INTO(struct pc_dpdk, file_prefix), DIGEST(NEVER),
	  RELOAD(AT_START) },
	/* the handler fills args[] and nargs: it gets the whole struct */
	{ "args", handle_args, .size = sizeof(struct pc_dpdk), DIGEST(NEVER), RELOAD(AT_START) },
	{ NULL },
};

/* The EAL and the ports were made from them: fixed for a run. */
#define UPLINK_CHANGED "the uplinks or their ports changed"
static const struct field uplink_fields[] = {
	{ "name", handle_id, INTO(struct uplink_state, up.name), REQUIRED, DIGEST(ALWAYS),
	  LINE("uplink", cfg_put_text), RELOAD(FIXED), KEEP_TEXT(struct pc_uplink, name),
	  .changed = UPLINK_CHANGED },
	{ "pod_port", handle_devargs, INTO(struct uplink_state, up.pod_port), REQUIRED,
	  DIGEST(ALWAYS), LINE("pod_port", cfg_put_port), RELOAD(FIXED),
	  KEEP_TEXT(struct pc_uplink, pod_port), .changed = UPLINK_CHANGED },
	{ "fabric_port", handle_devargs, INTO(struct uplink_state, up.fabric_port), REQUIRED,
	  DIGEST(ALWAYS), LINE("fabric_port", cfg_put_port), RELOAD(FIXED),
	  KEEP_TEXT(struct pc_uplink, fabric_port), .changed = UPLINK_CHANGED },
	/* only when set: the maps of one worker per uplink keep their digests */
	{ "workers", handle_workers, INTO(struct uplink_state, up.workers), DIGEST(UNLESS_DEFAULT),
	  LINE("workers", cfg_put_unsigned), .dflt = "1", RELOAD(FIXED),
	  KEEP(struct pc_uplink, workers), .changed = UPLINK_CHANGED },
	/* only when declared, so older maps keep their digests; the verifier reads them */
	{ "pod_neighbor", cfg_handle_neighbor, INTO(struct uplink_state, up.pod_neighbor),
	  .fields = cfg_neighbor_fields, DIGEST(UNLESS_DEFAULT),
	  LINE("pod_neighbor", cfg_put_neighbor), .dflt = "", RELOAD(APPLIED),
	  KEEP(struct pc_uplink, pod_neighbor) },
	{ "fabric_neighbor", cfg_handle_neighbor, INTO(struct uplink_state, up.fabric_neighbor),
	  .fields = cfg_neighbor_fields, DIGEST(UNLESS_DEFAULT),
	  LINE("fabric_neighbor", cfg_put_neighbor), .dflt = "", RELOAD(APPLIED),
	  KEEP(struct pc_uplink, fabric_neighbor) },
	{ "lldp_max_silence", cfg_handle_lldp_silence,
	  INTO(struct uplink_state, up.lldp_max_silence_ns), DIGEST(UNLESS_DEFAULT),
	  LINE("lldp_max_silence_ns", cfg_put_u64), .dflt = "0", RELOAD(APPLIED),
	  KEEP(struct pc_uplink, lldp_max_silence_ns) },
	{ NULL },
};

/* A pod's limits are its own or the defaults', resolved: the loaded pod's. */
static const struct field pod_fields[] = {
	{ "id", handle_id, INTO(struct pod_state, pod.id), REQUIRED, DIGEST(ALWAYS),
	  LINE("pod", cfg_put_text), RELOAD(APPLIED), KEEP_TEXT(struct pc_pod, id) },
	{ "gpus", handle_gpus, INTO(struct pod_state, pod.gpus), DIGEST(ALWAYS),
	  LINE("gpus", cfg_put_unsigned), RELOAD(APPLIED), KEEP(struct pc_pod, gpus) },
	{ "uplink", handle_id, INTO(struct pod_state, uplink), REQUIRED, DIGEST(ALWAYS),
	  LINE("uplink", cfg_put_pod_uplink), RELOAD(APPLIED), KEEP(struct pc_pod, uplink) },
	{ "cap", handle_quantity, INTO(struct pod_state, lim.cap_bps), .data = &cap, DIGEST(ALWAYS),
	  LINE("cap_bps", cfg_put_u64), RELOAD(APPLIED), KEEP(struct pc_pod, limits.cap_bps) },
	{ "burst", handle_burst, INTO(struct pod_state, lim), DIGEST(ALWAYS),
	  LINE("burst_bytes", cfg_put_u64), RELOAD(APPLIED),
	  KEEP(struct pc_pod, limits.burst_bytes) },
	{ "mode", handle_mode, INTO(struct pod_state, lim.mode), DIGEST(ALWAYS),
	  LINE("mode", cfg_put_mode), RELOAD(APPLIED), KEEP(struct pc_pod, limits.mode) },
	{ "queue_delay", handle_quantity, INTO(struct pod_state, lim.queue_delay_ns),
	  .data = &queue_delay, DIGEST(ALWAYS), LINE("queue_delay_ns", cfg_put_u64),
	  RELOAD(APPLIED), KEEP(struct pc_pod, limits.queue_delay_ns) },
	/* only when not the default, so that maps without the key keep their digests */
	{ "promise", handle_promise, INTO(struct pod_state, lim.promise), DIGEST(UNLESS_DEFAULT),
	  LINE("promise", cfg_put_promise), .dflt = "envelope", RELOAD(APPLIED),
	  KEEP(struct pc_pod, limits.promise) },
	/*
	 * Its tag stack (podmap/vlan.c); only when set, so maps without it keep
	 * their digests. Applied: only the table reads it, and a reload's table
	 * comes in force at a boundary, as prefixes do.
	 */
	{ "vlan", cfg_handle_vlan, INTO(struct pod_state, pod.vlan), DIGEST(UNLESS_DEFAULT),
	  LINE("vlan", cfg_put_vlan), .dflt = "", RELOAD(APPLIED), KEEP(struct pc_pod, vlan) },
	/* last: the canonical form writes a pod's prefixes after its limits */
	{ "prefixes", handle_prefixes, INTO(struct pod_state, pod), DIGEST(ALWAYS),
	  LINE("prefix", cfg_put_prefixes), RELOAD(APPLIED) },
	{ NULL },
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
 * The uplinks and the pods: a sequence of mappings, each read with the
 * row's `fields` into a state of its own in the context.
 */
struct sequence {
	unsigned max;
	size_t size;       /* of a state */
	size_t node, mark; /* where a state keeps its node and its mark */
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
	const struct field *f;
	char *v;
};

static int
read_state(struct ctx *c, unsigned i, yaml_node_t *item, void *obj)
{
	const struct seq_states *st = obj;
	char where[32], *state = st->v + i * st->seq->size;

	if (cfg_expect_item(c, st->f->key, i, item, YAML_MAPPING_NODE) < 0)
		return -1;
	*(yaml_node_t **)(state + st->seq->node) = item;
	*(struct pc_mark *)(state + st->seq->mark) = cfg_mark_of(item);
	snprintf(where, sizeof(where), "in %s[%u]", st->f->key, i);
	return cfg_parse_mapping(c, item, where, st->f->fields, state);
}

static int
handle_sequence(struct ctx *c, const struct field *f, yaml_node_t *v, void *dst)
{
	struct seq_states st = { f->data, f, NULL };
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
	PC_MAX_UPLINKS,
	sizeof(struct uplink_state),
	offsetof(struct uplink_state, node),
	offsetof(struct uplink_state, up.mark),
	keep_uplinks,
};

static const struct sequence pods = {
	PC_MAX_PODS,
	sizeof(struct pod_state),
	offsetof(struct pod_state, node),
	offsetof(struct pod_state, pod.mark),
	keep_pods,
};

static const struct cfg_items uplink_items = {
	offsetof(struct pc_config, nuplinks),
	offsetof(struct pc_config, uplinks),
	sizeof(struct pc_uplink),
};

static const struct cfg_items pod_items = {
	offsetof(struct pc_config, npods),
	offsetof(struct pc_config, pods),
	sizeof(struct pc_pod),
};

const struct field cfg_top_fields[] = {
	{ "appliance", handle_mapping, INTO(struct ctx, cfg), REQUIRED, .fields = appliance_fields,
	  DIGEST(ALWAYS), RELOAD(FIXED) },
	{ "window", handle_quantity, INTO(struct ctx, cfg.window_ns), .data = &window,
	  DIGEST(ALWAYS), LINE("window_ns", cfg_put_u64), RELOAD(FIXED),
	  KEEP(struct pc_config, window_ns) },
	{ "max_frame", handle_quantity, INTO(struct ctx, cfg.max_frame), .data = &max_frame,
	  DIGEST(ALWAYS), LINE("max_frame", cfg_put_u32), RELOAD(FIXED),
	  KEEP(struct pc_config, max_frame) },
	{ "defaults", handle_defaults, INTO(struct ctx, defaults), .fields = limits_fields,
	  DIGEST(ALWAYS), RELOAD(APPLIED) },
	{ "dpdk", handle_mapping, INTO(struct ctx, cfg.dpdk), .fields = dpdk_fields, DIGEST(NEVER),
	  RELOAD(AT_START) },
	/* these fill the context's uplink and pod states */
	{ "uplinks", handle_sequence, REQUIRED, .fields = uplink_fields, .data = &uplinks,
	  .per_item = true, .items = &uplink_items, DIGEST(ALWAYS), RELOAD(FIXED),
	  KEEP(struct pc_config, nuplinks), .changed = "the set of uplinks changed" },
	{ "pods", handle_sequence, REQUIRED, .fields = pod_fields, .data = &pods, .per_item = true,
	  .items = &pod_items, DIGEST(ALWAYS), RELOAD(APPLIED) },
	{ NULL },
};
