/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Big-endian (network order) loads and stores: the byte order of every
 * integer in podcap's records, ledger framing, key ids and frame headers.
 * The one place they are written; callers never shift bytes themselves.
 */
#ifndef PODCAP_BYTES_H
#define PODCAP_BYTES_H

#include <stdint.h>

static inline uint16_t
pc_load_be16(const uint8_t *p)
{
	return (uint16_t)((uint16_t)p[0] << 8 | p[1]);
}

static inline uint32_t
pc_load_be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static inline uint64_t
pc_load_be64(const uint8_t *p)
{
	return (uint64_t)pc_load_be32(p) << 32 | pc_load_be32(p + 4);
}

static inline void
pc_store_be16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static inline void
pc_store_be32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

static inline void
pc_store_be64(uint8_t *p, uint64_t v)
{
	pc_store_be32(p, (uint32_t)(v >> 32));
	pc_store_be32(p + 4, (uint32_t)v);
}

#endif /* PODCAP_BYTES_H */
