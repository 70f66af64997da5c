/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The prefixes of the pod map: read, written, ordered, and searched for
 * overlaps. An address belongs to one pod only, so no two prefixes of the
 * whole map may overlap; the canonical form writes them in their order.
 */

#include <arpa/inet.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "config.h"
#include "base/error.h"

#include "config_impl.h"


static bool
host_bits_clear(const uint8_t *addr, unsigned len, unsigned bits)
{
	unsigned i;

	for (i = len; i < bits; i++)
		if (addr[i / 8] & (0x80 >> (i % 8)))
			return false;
	return true;
}

static void
clear_host_bits(uint8_t *addr, unsigned len, unsigned bits)
{
	unsigned i;

	for (i = len; i < bits; i++)
		addr[i / 8] &= (uint8_t)~(0x80 >> (i % 8));
}

void
cfg_format_prefix(const struct pc_prefix *p, char *buf, size_t n)
{
	char a[INET6_ADDRSTRLEN];

	inet_ntop(p->family == 4 ? AF_INET : AF_INET6, p->addr, a, sizeof(a));
	snprintf(buf, n, "%s/%u", a, p->len);
}

int
cfg_parse_prefix(const char *s, struct pc_prefix *p, struct pc_error *err)
{
	const char *slash = strchr(s, '/'), *d;
	char host[INET6_ADDRSTRLEN + 1], net[64];
	unsigned bits, len = 0;

	memset(p, 0, sizeof(*p));
	if (slash == NULL)
		return pc_error_set(err, "missing /length");
	if ((size_t)(slash - s) >= sizeof(host))
		return pc_error_set(err, "not an IPv4 or IPv6 address");
	snprintf(host, sizeof(host), "%.*s", (int)(slash - s), s);
	if (inet_pton(AF_INET, host, p->addr) == 1) {
		p->family = 4;
		bits = 32;
	} else if (inet_pton(AF_INET6, host, p->addr) == 1) {
		p->family = 6;
		bits = 128;
	} else {
		return pc_error_set(err, "not an IPv4 or IPv6 address");
	}
	d = slash + 1;
	if (*d == '\0' || d[strspn(d, "0123456789")] != '\0' || strlen(d) > 3)
		len = bits + 1;
	else
		len = (unsigned)strtoul(d, NULL, 10);
	if (len > bits)
		return pc_error_set(err, "length must be 0 to %u", bits);
	p->len = (uint8_t)len;
	if (!host_bits_clear(p->addr, len, bits)) {
		struct pc_prefix n = *p;

		clear_host_bits(n.addr, len, bits);
		cfg_format_prefix(&n, net, sizeof(net));
		return pc_error_set(err, "host bits set (the network is %s)", net);
	}
	return 0;
}

int
cfg_cmp_prefix(const struct pc_prefix *a, const struct pc_prefix *b)
{
	int r;

	if (a->family != b->family)
		return a->family < b->family ? -1 : 1;
	r = memcmp(a->addr, b->addr, sizeof(a->addr));
	if (r != 0)
		return r;
	return a->len < b->len ? -1 : a->len > b->len;
}

static int
cmp_prefix_ref(const void *a, const void *b)
{
	const struct prefix_ref *x = a, *y = b;
	int r = cfg_cmp_prefix(x->p, y->p);

	if (r != 0)
		return r;
	return x->doc < y->doc ? -1 : x->doc > y->doc;
}

static bool
contains(const struct pc_prefix *a, const struct pc_prefix *b)
{
	unsigned full = a->len / 8, rest = a->len % 8;

	if (a->family != b->family || a->len > b->len)
		return false;
	if (memcmp(a->addr, b->addr, full) != 0)
		return false;
	return rest == 0 ||
	    ((a->addr[full] ^ b->addr[full]) & (uint8_t)(0xff << (8 - rest))) == 0;
}

static unsigned
min_u(unsigned a, unsigned b)
{
	return a < b ? a : b;
}

/*
 * Two prefixes overlap when one contains the other. In address order, the
 * prefixes containing an entry are the stack of open ones, and those it
 * contains are a run right after it. From that, each prefix learns the
 * earliest declared prefix it overlaps, in O(n log n); the error is the
 * earliest declared prefix that overlaps one declared before it.
 */
int
cfg_find_overlap(struct prefix_ref *e, unsigned n, unsigned *later,
		 unsigned *first)
{
	unsigned *end, *anc, *sub, *st, *pos, i, j, k, sp = 0, m;
	int found = 0;

	end = calloc(n, sizeof(*end));
	anc = calloc(n, sizeof(*anc));
	sub = calloc(n, sizeof(*sub));
	st = calloc(n, sizeof(*st));
	pos = calloc(n, sizeof(*pos));
	if (end == NULL || anc == NULL || sub == NULL || st == NULL ||
	    pos == NULL) {
		found = -1;
		goto out;
	}
	qsort(e, n, sizeof(*e), cmp_prefix_ref);
	for (j = 0; j < n; j++) {
		pos[e[j].doc] = j;
		while (sp > 0 && !contains(e[st[sp - 1]].p, e[j].p))
			end[st[--sp]] = j;
		anc[j] = sp == 0 ? UINT32_MAX :
		    min_u(anc[st[sp - 1]], e[st[sp - 1]].doc);
		st[sp++] = j;
	}
	while (sp > 0)
		end[st[--sp]] = n;
	for (i = n; i-- > 0;) {
		sub[i] = UINT32_MAX;
		for (k = i + 1; k < end[i]; k = end[k])
			sub[i] = min_u(sub[i], min_u(e[k].doc, sub[k]));
	}
	for (j = 0; j < n; j++) {
		m = min_u(anc[j], sub[j]);
		if (m < e[j].doc && (!found || e[j].doc < *later)) {
			*later = e[j].doc;
			*first = m;
			found = 1;
		}
	}
	if (found) {
		*later = pos[*later];
		*first = pos[*first];
	}
out:
	free(end);
	free(anc);
	free(sub);
	free(st);
	free(pos);
	return found;
}
