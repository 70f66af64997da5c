/* SPDX-License-Identifier: BSD-3-Clause */
#include <ctype.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_ethdev.h>

#include "eal.h"
#include "daemon/log.h"

#define MAX_ARGS 128

/* "0000:3b:00.0" or "3b:00.0", optionally followed by ",key=value..." */
static bool
is_pci(const char *dev)
{
	unsigned dom, bus, slot, fn;
	char c;

	if (sscanf(dev, "%x:%x:%x.%x%c", &dom, &bus, &slot, &fn, &c) >= 4 &&
	    (c == ',' || strchr(dev, ',') == NULL))
		return true;
	return sscanf(dev, "%x:%x.%x", &bus, &slot, &fn) == 3 && isxdigit((unsigned char)dev[0]) &&
	       strchr(dev, ':') == strrchr(dev, ':');
}

/* The device name part: everything before the first comma. */
static void
dev_name(const char *dev, char *buf, size_t len)
{
	size_t n = strcspn(dev, ",");
	if (n >= len)
		n = len - 1;
	memcpy(buf, dev, n);
	buf[n] = '\0';
}

static bool
hugepages_available(void)
{
	FILE *f = fopen("/proc/meminfo", "r");
	char line[256];
	long free_pages = 0;

	if (f == NULL)
		return false;
	while (fgets(line, sizeof(line), f) != NULL)
		if (sscanf(line, "HugePages_Free: %ld", &free_pages) == 1)
			break;
	fclose(f);
	if (free_pages <= 0)
		return false;

	f = fopen("/proc/mounts", "r");
	if (f == NULL)
		return false;
	bool mounted = false;
	while (fgets(line, sizeof(line), f) != NULL)
		if (strstr(line, " hugetlbfs ") != NULL)
			mounted = true;
	fclose(f);
	return mounted;
}

static int
push(char **argv, int *argc, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static int
push(char **argv, int *argc, const char *fmt, ...)
{
	va_list ap;
	char *s;

	if (*argc >= MAX_ARGS - 1)
		return -1;
	va_start(ap, fmt);
	int rc = vasprintf(&s, fmt, ap);
	va_end(ap);
	if (rc < 0)
		return -1;
	argv[(*argc)++] = s;
	return 0;
}

int
pd_eal_init(const struct pc_config *cfg, int nextra, char **extra)
{
	/* ours: the strings live as long as the process, as EAL expects */
	static char *argv[MAX_ARGS];
	/* EAL's: it reorders these and overwrites one with argv[0] */
	static char *eal_argv[MAX_ARGS];
	int argc = 0;
	bool any_pci = false;
	int rc = 0;

	rc |= push(argv, &argc, "podcapd");
	/* -l takes lists, --lcores the same and lcores placed on CPUs (2@0) */
	rc |= push(argv, &argc, strchr(cfg->dpdk.lcores, '@') != NULL ? "--lcores" : "-l");
	rc |= push(argv, &argc, "%s", cfg->dpdk.lcores);
	rc |= push(argv, &argc, "--file-prefix=%s", cfg->dpdk.file_prefix);
	rc |= push(argv, &argc, "-m");
	rc |= push(argv, &argc, "%lu", (unsigned long)(cfg->dpdk.memory_bytes >> 20));
	if (!hugepages_available()) {
		PC_LOG(WARNING, "no free hugepages mounted: running with --no-huge "
		       "(fine for tests, slower on a real uplink)\n");
		rc |= push(argv, &argc, "--no-huge");
	}
	for (unsigned u = 0; u < cfg->nuplinks; u++) {
		const char *devs[2] = { cfg->uplinks[u].pod_port, cfg->uplinks[u].fabric_port };
		for (unsigned i = 0; i < 2; i++) {
			if (is_pci(devs[i])) {
				any_pci = true;
				rc |= push(argv, &argc, "-a");
			} else {
				rc |= push(argv, &argc, "--vdev");
			}
			rc |= push(argv, &argc, "%s", devs[i]);
		}
	}
	/* only the declared devices: never grab another NIC of the host */
	if (!any_pci)
		rc |= push(argv, &argc, "--no-pci");
	for (unsigned i = 0; i < cfg->dpdk.nargs; i++)
		rc |= push(argv, &argc, "%s", cfg->dpdk.args[i]);
	for (int i = 0; i < nextra; i++)
		rc |= push(argv, &argc, "%s", extra[i]);
	if (rc != 0) {
		PC_LOG(ERR, "too many EAL arguments\n");
		return -1;
	}

	char line[2048];
	size_t off = 0;
	for (int i = 0; i < argc && off < sizeof(line); i++)
		off += (size_t)snprintf(line + off, sizeof(line) - off, "%s%s", i ? " " : "", argv[i]);
	PC_LOG(INFO, "EAL arguments: %s\n", line);

	memcpy(eal_argv, argv, sizeof(eal_argv));
	if (rte_eal_init(argc, eal_argv) < 0) {
		PC_LOG(ERR, "cannot initialise DPDK's EAL: %s\n", rte_strerror(rte_errno));
		return -1;
	}
	return 0;
}

int
pd_eal_port_of(const char *devargs)
{
	char name[RTE_ETH_NAME_MAX_LEN];
	uint16_t port;

	dev_name(devargs, name, sizeof(name));
	if (rte_eth_dev_get_port_by_name(name, &port) == 0)
		return port;
	if (is_pci(devargs)) {
		char full[RTE_ETH_NAME_MAX_LEN + 8];
		snprintf(full, sizeof(full), "0000:%s", name);
		if (rte_eth_dev_get_port_by_name(full, &port) == 0)
			return port;
	}
	return -1;
}
