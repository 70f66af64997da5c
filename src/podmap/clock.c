/* SPDX-License-Identifier: BSD-3-Clause */
/* The keys of appliance.clock (docs/config.md, "The clock discipline"). */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <yaml.h>

#include "config.h"

#include "config_impl.h"

static int
handle_domain(struct ctx *c, const struct field *f, yaml_node_t *v, void *dst)
{
	const char *s;
	unsigned n = 0;

	if (cfg_get_scalar(c, f, v, &s) < 0)
		return -1;
	if (*s == '\0' || strlen(s) > 3 || s[strspn(s, "0123456789")] != '\0')
		return cfg_fail_value(c, f->key, v, "expected a PTP domain, 0 to 255");
	for (; *s != '\0'; s++)
		n = n * 10 + (unsigned)(*s - '0');
	if (n > 255)
		return cfg_fail_value(c, f->key, v, "expected a PTP domain, 0 to 255");
	*(uint8_t *)dst = (uint8_t)n;
	return 0;
}

/* podcapd opens the socket once, when it starts; a reload keeps what it reads. */
#define CLOCK_FIELD(name, handler, member)                                             \
	.key = name, .fn = handler, .off = offsetof(struct pc_clock_cfg, member),      \
	.size = sizeof(((struct pc_clock_cfg *)0)->member), .digest = PC_DIGEST_NEVER, \
	.reload = PC_RELOAD_AT_START

const struct field cfg_clock_fields[] = {
	{ CLOCK_FIELD("ptp4l", cfg_handle_text, ptp4l) },
	{ CLOCK_FIELD("domain", handle_domain, domain) },
	{ NULL },
};

int
cfg_handle_clock(struct ctx *c, const struct field *f, yaml_node_t *v, void *dst)
{
	struct pc_clock_cfg *k = dst;

	if (cfg_expect(c, f, v, YAML_MAPPING_NODE) < 0)
		return -1;
	memset(k, 0, sizeof(*k));
	k->enabled = true;
	snprintf(k->ptp4l, sizeof(k->ptp4l), "%s", PC_CLOCK_DEFAULT_PTP4L);
	return cfg_parse_mapping(c, v, "in appliance.clock", f->fields, k);
}

/* The line says which discipline the map declares; none without one, so older digests stand. */
bool
cfg_put_clock(struct cfg_lines *o, const void *obj)
{
	if (*(const bool *)cfg_put_value(o, obj))
		cfg_put_line(o, "%s", "ptp4l");
	return true;
}
