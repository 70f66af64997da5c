/* SPDX-License-Identifier: BSD-3-Clause */
/* The keys of appliance.attestation (docs/config.md, docs/attestation.md). */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <yaml.h>

#include "config.h"

#include "config_impl.h"

#define MAX_EVERY 1000000u

/* A whole number 0..max from a scalar; -1 with nothing said if it is not one. */
static int
whole_number(const char *s, uint64_t max, uint64_t *out)
{
	uint64_t n = 0;

	if (*s == '\0' || s[strspn(s, "0123456789")] != '\0')
		return -1;
	for (; *s != '\0'; s++) {
		n = n * 10 + (uint64_t)(*s - '0');
		if (n > max)
			return -1;
	}
	*out = n;
	return 0;
}

static int
handle_every(struct ctx *c, const struct field *f, yaml_node_t *v, void *dst)
{
	const char *s;
	uint64_t n;

	if (cfg_get_scalar(c, f, v, &s) < 0)
		return -1;
	if (whole_number(s, MAX_EVERY, &n) < 0 || n == 0)
		return cfg_fail_value(c, f->key, v, "expected a number of windows, 1 to 1000000");
	*(uint32_t *)dst = (uint32_t)n;
	return 0;
}

static int
handle_pcrs(struct ctx *c, const struct field *f, yaml_node_t *v, void *dst)
{
	uint32_t mask = 0;

	if (cfg_expect(c, f, v, YAML_SEQUENCE_NODE) < 0)
		return -1;
	for (yaml_node_item_t *it = v->data.sequence.items.start; it < v->data.sequence.items.top;
	     it++) {
		yaml_node_t *item = cfg_node_at(c, *it);
		unsigned i = (unsigned)(it - v->data.sequence.items.start);
		uint64_t n;

		if (cfg_expect_item(c, f->key, i, item, YAML_SCALAR_NODE) < 0 ||
		    cfg_scalar_checked(c, f->key, item) < 0)
			return -1;
		const char *s = (const char *)item->data.scalar.value;
		if (whole_number(s, PC_ATTEST_MAX_PCR, &n) < 0)
			return cfg_fail_value(c, f->key, item, "expected a PCR number, 0 to 23");
		if (mask & (1u << n))
			return cfg_fail_value(c, f->key, item, "PCR listed twice");
		mask |= 1u << n;
	}
	if (mask == 0)
		return cfg_fail_at(c, cfg_mark_of(v), "empty PCR list in attestation");
	*(uint32_t *)dst = mask;
	return 0;
}

/* The signer opens the TPM once, before DPDK (src/daemon/signer_attest.c). */
#define ATTEST_FIELD(name, handler, member)                                              \
	.key = name, .fn = handler, .off = offsetof(struct pc_attestation, member),      \
	.size = sizeof(((struct pc_attestation *)0)->member), .digest = PC_DIGEST_NEVER, \
	.reload = PC_RELOAD_AT_START

const struct field cfg_attestation_fields[] = {
	{ ATTEST_FIELD("tpm", cfg_handle_text, tpm), .required = true },
	{ ATTEST_FIELD("every", handle_every, every) },
	{ ATTEST_FIELD("pcrs", handle_pcrs, pcrs) },
	{ ATTEST_FIELD("ima_log", cfg_handle_text, ima_log) },
	{ NULL },
};

int
cfg_handle_attestation(struct ctx *c, const struct field *f, yaml_node_t *v, void *dst)
{
	struct pc_attestation *a = dst;

	if (cfg_expect(c, f, v, YAML_MAPPING_NODE) < 0)
		return -1;
	memset(a, 0, sizeof(*a));
	a->enabled = true;
	a->every = PC_ATTEST_DEFAULT_EVERY;
	a->pcrs = PC_ATTEST_DEFAULT_PCRS;
	snprintf(a->ima_log, sizeof(a->ima_log), "%s", PC_ATTEST_DEFAULT_IMA);
	return cfg_parse_mapping(c, v, "in appliance.attestation", f->fields, a);
}
