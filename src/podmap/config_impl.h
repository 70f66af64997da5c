/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What the files of the pod map loader share. Internal: nothing here is
 * part of src/podmap/config.h.
 *
 *	podmap/load.c	a file or buffer to a struct pc_config; free, find
 *	podmap/walk.c	the YAML document: mappings, types, positioned errors
 *	podmap/fields.c	one handler per kind of value, one table per mapping: each
 *			key's row, its handler and its decisions (digest, reload)
 *	podmap/check.c	what needs the whole map, once every key is read
 *	podmap/prefix.c	prefixes: read, written, ordered, overlaps found
 *	podmap/port.c	the device a port names
 *	podmap/canon.c	the canonical form and its digest, written from the keys' rows
 *	podmap/schema.c	the keys' rows walked: paths, and what a reload may not change
 *	podmap/tls.c	the endpoint: appliance.tls, appliance.access
 *	podmap/vlan.c	pods[].vlan: a pod's tag stack
 */
#ifndef PODCAP_CONFIG_IMPL_H
#define PODCAP_CONFIG_IMPL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <yaml.h>

#include "config.h"
#include "base/error.h"

/* The loader's state while it reads one pod map */

/*
 * What a pod or the defaults declare. A pod's limit counts only when its
 * mapping has the key; the rest come from the defaults (podmap/check.c).
 */
struct limits_spec {
	uint64_t cap_bps;
	uint64_t burst;			/* bytes, or ns when burst_is_time */
	bool burst_is_time;		/* resolved against the pod's own cap */
	enum pc_mode mode;
	uint64_t queue_delay_ns;
	enum pc_promise promise;
};

struct uplink_state {
	struct pc_uplink up;
	yaml_node_t *node;
};

struct pod_state {
	struct pc_pod pod;
	char uplink[PC_ID_LEN];
	struct limits_spec lim;
	yaml_node_t *node;
};

struct ctx {
	const char *name;		/* of the file, for errors */
	const char *text;
	size_t len;
	yaml_document_t *doc;
	struct pc_error *err;
	struct pc_config cfg;
	struct limits_spec defaults;
	yaml_node_t *defaults_node;
	char where[48];			/* "in pods[3]", for messages */
	unsigned nuplinks;
	struct uplink_state *uplinks;
	unsigned npods;
	struct pod_state *pods;
};

/* The walker (podmap/walk.c): mappings read with tables of keys */

struct field;
typedef int (*handler_fn)(struct ctx *c, const struct field *f,
			  yaml_node_t *val, void *dst);

/* The canonical lines of one key of one object being written (podmap/canon.c). */
struct cfg_lines;
/*
 * Writes the key's lines from `obj`, the struct pc_config, pc_uplink or
 * pc_pod that holds it in the loaded map, each with cfg_put_line(). False
 * for a value the loader cannot have produced.
 */
typedef bool (*put_fn)(struct cfg_lines *o, const void *obj);

/*
 * The items of a sequence of mappings in the loaded map: `count_at` an
 * unsigned and `items_at` a pointer to them in the struct pc_config, each
 * item `item_size` bytes. Its table's first key names an item (the
 * canonical form sorts the items by it).
 */
struct cfg_items {
	size_t count_at, items_at, item_size;
};

/*
 * One key of a mapping: its handler writes at `off` into the object. The
 * rest are its columns after reading: what the digest and a reload make of
 * it, and where the loaded map keeps it.
 */
struct field {
	const char *key;
	handler_fn fn;
	size_t off;
	size_t size;			/* of the destination, for strings */
	bool required;
	const struct field *fields;	/* a mapping's keys */
	const void *data;		/* for the handler: bounds, a sequence's items */
	/* `fields` are those of each item of a sequence */
	bool per_item;
	/* a sequence of mappings whose items the loaded map keeps apart */
	const struct cfg_items *items;
	enum pc_key_digest digest;
	enum pc_key_reload reload;
	/*
	 * Where the loaded map keeps the value: `at_size` bytes at `at` of
	 * the struct pc_config (the top level and the appliance's mappings)
	 * or of the item (struct pc_uplink, pc_pod); a string when at_text.
	 * What a reload compares (of a mapping: whether it is there) and the
	 * canonical lines are written from. at_size 0: kept nowhere as one.
	 */
	size_t at, at_size;
	bool at_text;
	/*
	 * Its lines in the canonical form, "line value" as put writes the
	 * value; of PC_DIGEST_UNLESS_DEFAULT, none whose value is dflt. A key
	 * in the digest without a line of its own is there through others'
	 * (the defaults, through each pod's limits).
	 */
	const char *line;
	put_fn put;
	const char *dflt;
	/* a reload's refusal, when not "PATH changed" */
	const char *changed;
};

struct pc_mark cfg_mark_of(const yaml_node_t *n);
yaml_node_t *cfg_node_at(const struct ctx *c, int index);
/* "a mapping", "a sequence", "a scalar" or "nothing": what a node is, for messages. */
const char *cfg_kind(const yaml_node_t *n);

/*
 * Walks a mapping with a field table: every key must be in it, once, and
 * every required one present. `where` names the mapping in messages ("in
 * pods[2]"). The caller has checked that `node` is a mapping.
 */
int cfg_parse_mapping(struct ctx *c, yaml_node_t *node, const char *where,
		      const struct field *fields, void *obj);
/* The value of field `f` must be of type `t`, and a scalar not empty. */
int cfg_expect(struct ctx *c, const struct field *f, const yaml_node_t *v,
	       yaml_node_type_t t);
/* Item `i` of sequence `name` must be of type `t`. */
int cfg_expect_item(struct ctx *c, const char *name, unsigned i,
		    const yaml_node_t *v, yaml_node_type_t t);
/* The scalar v holds no NUL (libyaml allows "\0" escapes); `key` names it. */
int cfg_scalar_checked(struct ctx *c, const char *key, const yaml_node_t *v);
/* The value of field `f` as a string: a scalar, not empty, with no NUL. */
int cfg_get_scalar(struct ctx *c, const struct field *f, const yaml_node_t *v,
		   const char **s);
/* The value of `key` in mapping `map`, or NULL (also when map is NULL). */
const yaml_node_t *cfg_value_of(const struct ctx *c, const yaml_node_t *map, const char *key);
/* Of the value of `key` in mapping `map`, or of the mapping itself. */
struct pc_mark cfg_key_mark(const struct ctx *c, const yaml_node_t *map,
			    const char *key);

/* The position of an error of the whole file: "file: msg", no line, no caret. */
#define CFG_NO_MARK ((struct pc_mark){ 0, 0 })

/*
 * Places the error already set in err (pc_error_set, pc_error_errno) in
 * `file` at m, with the line of text at m for the caret. Returns -1.
 */
int cfg_error_at(struct pc_error *err, const char *file, const char *text, size_t len,
		 struct pc_mark m);
/* pc_error_set() on c->err, then cfg_error_at() in the file being read. Returns -1. */
int cfg_fail_at(struct ctx *c, struct pc_mark m, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* "invalid KEY 'VALUE' in WHERE: WHY", at the value v (a scalar). */
int cfg_fail_value(struct ctx *c, const char *key, const yaml_node_t *v,
		   const char *why);

/* Lookups (podmap/load.c) */

/*
 * Index of the first of n items, size bytes apart, whose name (a string
 * at `off` in each) is `name`; -1 if none.
 */
int cfg_find_name(const void *items, unsigned n, size_t size, size_t off, const char *name);

/* appliance.auditor_keys (podmap/auditor.c): fills c->cfg's keys. */
int cfg_handle_auditor_keys(struct ctx *c, const struct field *f, yaml_node_t *v, void *dst);
/* appliance.clock (podmap/clock.c) */
extern const struct field cfg_clock_fields[];
int cfg_handle_clock(struct ctx *c, const struct field *f, yaml_node_t *v, void *dst);
bool cfg_put_clock(struct cfg_lines *o, const void *obj);
/* appliance.attestation (podmap/attest.c) */
/* podmap/neighbor.c: uplinks[].pod_neighbor, fabric_neighbor and lldp_max_silence */
extern const struct field cfg_neighbor_fields[];
int cfg_handle_neighbor(struct ctx *c, const struct field *f, yaml_node_t *v, void *dst);
int cfg_handle_lldp_silence(struct ctx *c, const struct field *f, yaml_node_t *v, void *dst);
bool cfg_put_neighbor(struct cfg_lines *o, const void *obj);
extern const struct field cfg_attestation_fields[];
int cfg_handle_attestation(struct ctx *c, const struct field *f, yaml_node_t *v, void *dst);

/* appliance.tls, appliance.access, listen_plaintext (podmap/tls.c) */
extern const struct field cfg_tls_fields[];
extern const struct field cfg_access_fields[];
int cfg_handle_tls(struct ctx *c, const struct field *f, yaml_node_t *v, void *dst);
int cfg_handle_access(struct ctx *c, const struct field *f, yaml_node_t *v, void *dst);
/* "true" or "false" into a bool */
int cfg_handle_bool(struct ctx *c, const struct field *f, yaml_node_t *v, void *dst);
/*
 * The endpoint as a whole: access needs a client CA and the other way
 * round; plain HTTP only on loopback or with listen_plaintext. 0 or -1.
 */
int cfg_check_endpoint(struct ctx *c);

/* The keys of a pod map (podmap/fields.c) */

/* A string that fits the destination (f->size with its NUL): a path, a TCTI, a name. */
int cfg_handle_text(struct ctx *c, const struct field *f, yaml_node_t *v, void *dst);

/* The top level; the object it fills is the struct ctx. */
extern const struct field cfg_top_fields[];
/* appliance.witnesses (podmap/witness.c): writes a struct pc_witnesses. */
extern const struct field cfg_witness_fields[];
int cfg_handle_witnesses(struct ctx *c, const struct field *f, yaml_node_t *v, void *dst);

/* pods[].vlan (podmap/vlan.c): its handler, its canonical line, its check against the others */
int cfg_handle_vlan(struct ctx *c, const struct field *f, yaml_node_t *v, void *dst);
bool cfg_put_vlan(struct cfg_lines *o, const void *obj);
int cfg_check_vlans(struct ctx *c);

/* The schema (podmap/schema.c) */

/* The row of the key at `path` ("appliance.role", "pods[].cap"), or NULL. */
const struct field *cfg_field_at(const char *path);

/* The canonical form (podmap/canon.c) */

/* One line of the key being written: "line value\n", unless value is its dflt. */
void cfg_put_line(struct cfg_lines *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The value at the key's `at` in obj, and the put_fn of each kind of value. */
const void *cfg_put_value(const struct cfg_lines *o, const void *obj);
bool cfg_put_text(struct cfg_lines *o, const void *obj);
bool cfg_put_u64(struct cfg_lines *o, const void *obj);
bool cfg_put_u32(struct cfg_lines *o, const void *obj);
bool cfg_put_unsigned(struct cfg_lines *o, const void *obj);
bool cfg_put_port(struct cfg_lines *o, const void *obj);
bool cfg_put_role(struct cfg_lines *o, const void *obj);
bool cfg_put_mode(struct cfg_lines *o, const void *obj);
bool cfg_put_promise(struct cfg_lines *o, const void *obj);
/* appliance.auditor_keys, a pod's uplink and prefixes: of the whole config or pod */
bool cfg_put_auditor_keys(struct cfg_lines *o, const void *obj);
bool cfg_put_pod_uplink(struct cfg_lines *o, const void *obj);
bool cfg_put_prefixes(struct cfg_lines *o, const void *obj);

/* The checks that need the whole map (podmap/check.c) */

/*
 * Once every key is read: names unique, references resolved, ports used
 * once, uplinks shared only by pods with prefixes, limits resolved and
 * bursts at least max_frame, no prefixes overlapping, the vlans of an
 * uplink's pods apart; in that order, so
 * the same file always gives the same first error. Returns 0 or -1.
 */
int cfg_check(struct ctx *c);

/* Prefixes (podmap/prefix.c) */

/*
 * "address/length", IPv4 or IPv6, with no bits set past the length.
 * Returns 0, or -1 with err saying why; p->mark is left to the caller.
 */
int cfg_parse_prefix(const char *s, struct pc_prefix *p, struct pc_error *err);
/* "10.0.0.0/24", "fd00:0:0:1::/64": as the canonical form writes them. */
void cfg_format_prefix(const struct pc_prefix *p, char *buf, size_t n);
/* IPv4 first, then by address, then shorter first. */
int cfg_cmp_prefix(const struct pc_prefix *a, const struct pc_prefix *b);

/* A prefix of the map, with its pod and its place in the file. */
struct prefix_ref {
	const struct pc_prefix *p;
	unsigned pod;
	unsigned doc;			/* position in the file */
};

/*
 * Of the n prefixes e[] (in file order, doc = index; reordered here), the
 * earliest declared that overlaps one declared before it: returns 1 with
 * e[*later] that prefix and e[*first] the earliest it overlaps; 0 when
 * none overlap; -1 when out of memory.
 */
int cfg_find_overlap(struct prefix_ref *e, unsigned n, unsigned *later,
		     unsigned *first);

/* Ports (podmap/port.c) */

/*
 * Writes the device a port's devargs name to dev: a PCI address in full
 * form ("0000:3b:00.0", however it was written), else the name as it is.
 * Returns the length of the name in devargs, where its ",key=value"
 * arguments start.
 */
size_t cfg_port_device(const char *devargs, char *dev, size_t n);
/* The value of the port's last iface= argument, "" when it has none. */
void cfg_port_iface(const char *devargs, char *iface, size_t n);

#endif /* PODCAP_CONFIG_IMPL_H */
