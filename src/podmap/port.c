/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The device a port names. A port is what the EAL takes for -a or --vdev:
 * a PCI address or a vdev name, then ",key=value" arguments. Two ports
 * are one device when their PCI addresses are equal however written, or
 * their vdev names are, or when both name the same iface=: the check that
 * no device serves two ports and the canonical form go by the same names.
 */

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "config.h"

#include "config_impl.h"

static bool
hex_field(const char **s, unsigned maxdigits, unsigned long *v)
{
	const char *p = *s;

	*v = 0;
	while (p - *s < (long)maxdigits &&
	       ((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f') ||
		(*p >= 'A' && *p <= 'F'))) {
		*v = *v * 16 + (unsigned long)(*p <= '9' ? *p - '0' :
		    (*p | 0x20) - 'a' + 10);
		p++;
	}
	if (p == *s)
		return false;
	*s = p;
	return true;
}

/* [domain:]bus:dev.fn, as the EAL takes it, to "dddd:bb:dd.f" */
static bool
pci_normalize(const char *s, char *out, size_t n)
{
	unsigned long a, b, dom = 0, bus, dev, fn;
	const char *p = s;

	if (!hex_field(&p, 8, &a) || *p++ != ':' || !hex_field(&p, 2, &b))
		return false;
	if (*p == ':') {
		p++;
		dom = a;
		bus = b;
		if (!hex_field(&p, 2, &dev))
			return false;
	} else {
		bus = a;
		dev = b;
		if (bus > 0xff)
			return false;
	}
	if (*p++ != '.' || !hex_field(&p, 1, &fn) || *p != '\0' ||
	    dev > 0x1f || fn > 7)
		return false;
	snprintf(out, n, "%04lx:%02lx:%02lx.%lx", dom, bus, dev, fn);
	return true;
}

size_t
cfg_port_device(const char *devargs, char *dev, size_t n)
{
	char name[PC_DEVARGS_LEN];
	size_t len = strcspn(devargs, ",");

	snprintf(name, sizeof(name), "%.*s", (int)len, devargs);
	if (!pci_normalize(name, dev, n))
		snprintf(dev, n, "%s", name);
	return len;
}

void
cfg_port_iface(const char *devargs, char *iface, size_t n)
{
	const char *p = strchr(devargs, ','), *e;
	size_t len;

	iface[0] = '\0';
	for (; p != NULL; p = e) {
		p++;
		e = strchr(p, ',');
		len = e != NULL ? (size_t)(e - p) : strlen(p);
		if (len > 6 && strncmp(p, "iface=", 6) == 0)
			snprintf(iface, n, "%.*s", (int)(len - 6), p + 6);
	}
}
