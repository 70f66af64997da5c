/* SPDX-License-Identifier: BSD-3-Clause */
/* Log origins: podcap/<id>, or <domain>[/<path>]/<id> (src/log/origin.h). */
#include <stdio.h>
#include <string.h>

#include "podmap/config.h"
#include "origin.h"

static bool
label_char(char ch)
{
	return (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '-';
}

/* The n bytes at s are a DNS name of two labels or more (lower case: one spelling). */
static bool
domain_ok(const char *s, size_t n)
{
	size_t labels = 0, i = 0;

	while (i < n) {
		size_t start = i;

		while (i < n && s[i] != '.') {
			if (!label_char(s[i]))
				return false;
			i++;
		}
		if (i == start || i - start > 63 || s[start] == '-' || s[i - 1] == '-')
			return false;
		labels++;
		if (i < n && ++i == n) /* a trailing dot */
			return false;
	}
	return labels >= 2;
}

int
pc_origin_parse(const char *origin, char *id, struct pc_error *err)
{
	size_t n = strlen(origin);
	const char *slash = strchr(origin, '/');
	const char *last = strrchr(origin, '/');
	char elem[PC_ID_LEN];

	if (n == 0 || n >= PC_ORIGIN_LEN)
		return pc_error_set(err, "an origin is 1 to %d characters", PC_ORIGIN_LEN - 1);
	if (slash == NULL)
		return pc_error_set(err, "no '/': use " PC_ORIGIN_RULE);
	if (strncmp(origin, PC_ORIGIN_LEGACY, strlen(PC_ORIGIN_LEGACY)) != 0 &&
	    !domain_ok(origin, (size_t)(slash - origin)))
		return pc_error_set(err,
				    "it does not begin with a domain name: use " PC_ORIGIN_RULE);
	/* every path element follows the id rule; the last is the appliance's id */
	for (const char *p = slash + 1;; p = strchr(p, '/') + 1) {
		const char *end = strchr(p, '/');
		size_t len = end != NULL ? (size_t)(end - p) : strlen(p);

		if (len == 0 || len >= sizeof(elem))
			return pc_error_set(err, "an empty or overlong path element");
		memcpy(elem, p, len);
		elem[len] = '\0';
		if (!pc_id_valid(elem))
			return pc_error_set(err, "path element '%s' is not " PC_ID_RULE, elem);
		if (end == NULL)
			break;
	}
	if (strncmp(origin, PC_ORIGIN_LEGACY, strlen(PC_ORIGIN_LEGACY)) == 0 && last != slash)
		return pc_error_set(err, "podcap/ takes the appliance id alone");
	if (id != NULL)
		snprintf(id, PC_ID_LEN, "%s", last + 1);
	return 0;
}

const char *
pc_config_origin(const struct pc_config *cfg, char *buf, size_t len)
{
	if (cfg->origin[0] != '\0')
		snprintf(buf, len, "%s", cfg->origin);
	else
		snprintf(buf, len, PC_ORIGIN_LEGACY "%s", cfg->appliance_id);
	return buf;
}
