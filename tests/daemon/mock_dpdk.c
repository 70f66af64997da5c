/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What the control plane calls in DPDK that needs a running EAL (hugepage
 * heap, memzones, the measured TSC frequency), replaced at link time
 * (-Wl,--wrap, meson.build) for tests that run without one. Tables and
 * workers are allocated from the C library; prefix tables are tokens, since
 * only the data path looks anything up in them.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <rte_common.h>
#include <rte_lpm.h>
#include <rte_lpm6.h>

#define MOCK_ALIGN 64   /* RTE_CACHE_LINE_SIZE: the structs are declared __rte_cache_aligned */

void *__wrap_rte_zmalloc(const char *type, size_t size, unsigned align);
void *__wrap_rte_zmalloc_socket(const char *type, size_t size, unsigned align, int socket);
void __wrap_rte_free(void *p);
struct rte_lpm *__wrap_rte_lpm_create(const char *name, int socket,
				      const struct rte_lpm_config *cfg);
int __wrap_rte_lpm_add(struct rte_lpm *lpm, uint32_t ip, uint8_t depth, uint32_t next_hop);
void __wrap_rte_lpm_free(struct rte_lpm *lpm);
struct rte_lpm6 *__wrap_rte_lpm6_create(const char *name, int socket,
					const struct rte_lpm6_config *cfg);
int __wrap_rte_lpm6_add(struct rte_lpm6 *lpm, const uint8_t *ip, uint8_t depth,
			uint32_t next_hop);
void __wrap_rte_lpm6_free(struct rte_lpm6 *lpm);
uint64_t __wrap_rte_get_tsc_hz(void);

void *
__wrap_rte_zmalloc_socket(const char *type __rte_unused, size_t size, unsigned align,
			  int socket __rte_unused)
{
	size_t a = align > MOCK_ALIGN ? align : MOCK_ALIGN;
	void *p = aligned_alloc(a, (size + a - 1) / a * a);

	if (p != NULL)
		memset(p, 0, size);
	return p;
}

void *
__wrap_rte_zmalloc(const char *type, size_t size, unsigned align)
{
	return __wrap_rte_zmalloc_socket(type, size, align, -1);
}

void
__wrap_rte_free(void *p)
{
	free(p);
}

struct rte_lpm *
__wrap_rte_lpm_create(const char *name __rte_unused, int socket __rte_unused,
		      const struct rte_lpm_config *cfg __rte_unused)
{
	return malloc(MOCK_ALIGN);
}

int
__wrap_rte_lpm_add(struct rte_lpm *lpm __rte_unused, uint32_t ip __rte_unused,
		   uint8_t depth __rte_unused, uint32_t next_hop __rte_unused)
{
	return 0;
}

void
__wrap_rte_lpm_free(struct rte_lpm *lpm)
{
	free(lpm);
}

struct rte_lpm6 *
__wrap_rte_lpm6_create(const char *name __rte_unused, int socket __rte_unused,
		       const struct rte_lpm6_config *cfg __rte_unused)
{
	return malloc(MOCK_ALIGN);
}

int
__wrap_rte_lpm6_add(struct rte_lpm6 *lpm __rte_unused, const uint8_t *ip __rte_unused,
		    uint8_t depth __rte_unused, uint32_t next_hop __rte_unused)
{
	return 0;
}

void
__wrap_rte_lpm6_free(struct rte_lpm6 *lpm)
{
	free(lpm);
}

/* Large enough that a worker waited for in a test never looks stuck for "1 s". */
uint64_t
__wrap_rte_get_tsc_hz(void)
{
	return UINT64_C(1) << 50;
}
