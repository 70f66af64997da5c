/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Frame classifier: finds the address that names the pod of a frame.
 *
 * This runs on every forwarded frame, so it only bounds-checks and loads
 * the few header bytes it needs. Loads go through byte arithmetic or
 * fixed-size memcpy so that unaligned frame buffers are safe under strict
 * aliasing and still compile to plain loads.
 */
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include "base/bytes.h"
#include "classify.h"
#include "lldp.h"

#define ETH_HLEN		14
#define ETH_TYPE_OFF		12
#define VLAN_TAG_LEN		4
#define VLAN_MAX_TAGS		4

#define ETHERTYPE_IPV4		0x0800
#define ETHERTYPE_ARP		0x0806
#define ETHERTYPE_IPV6		0x86dd
#define ETHERTYPE_VLAN		0x8100
#define ETHERTYPE_QINQ		0x88a8
#define ETHERTYPE_QINQ_OLD	0x9100

#define IPV4_MIN_HLEN		20
#define IPV4_SRC_OFF		12
#define IPV4_DST_OFF		16

#define IPV6_HLEN		40
#define IPV6_PLEN_OFF		4
#define IPV6_NH_OFF		6
#define IPV6_SRC_OFF		8
#define IPV6_DST_OFF		24
#define IPV6_ADDR_LEN		16

#define IPPROTO_ICMPV6_NUM	58
#define ND_NEIGHBOR_SOLICIT	135
#define ND_NEIGHBOR_ADVERT	136
/* type, code, checksum, reserved/flags, target address */
#define ND_MIN_LEN		24
#define ND_TARGET_OFF		8

#define ARP_LEN			28
#define ARP_HRD_ETHER		1
#define ARP_SPA_OFF		14
#define ARP_TPA_OFF		24

static inline bool
is_vlan_tpid(uint16_t type)
{
	return type == ETHERTYPE_VLAN || type == ETHERTYPE_QINQ ||
	    type == ETHERTYPE_QINQ_OLD;
}

/*
 * The stack of a frame's tags (classify.h), from the TPID and TCI of its
 * first two and how many it has.
 */
static inline uint32_t
vlan_stack(unsigned tags, const uint16_t tpid[2], const uint16_t tci[2])
{
	if (tags == 0)
		return PC_VLAN_NONE;
	if (tags == 1)
		return tpid[0] == ETHERTYPE_VLAN ? pc_vlan_one(tci[0]) : PC_VLAN_OTHER;
	if (tags == 2 && (tpid[0] == ETHERTYPE_QINQ || tpid[0] == ETHERTYPE_VLAN) &&
	    tpid[1] == ETHERTYPE_VLAN)
		return pc_vlan_two(tci[0], tci[1]);
	return PC_VLAN_OTHER;
}

static inline void
key_set_v4(struct pc_frame_key *key, const uint8_t *addr)
{
	memcpy(key->addr, addr, 4);
	memset(key->addr + 4, 0, sizeof(key->addr) - 4);
}

static inline void
key_set_v6(struct pc_frame_key *key, const uint8_t *addr)
{
	memcpy(key->addr, addr, IPV6_ADDR_LEN);
}

static inline bool
ipv6_addr_is_unspecified(const uint8_t *addr)
{
	uint64_t hi, lo;

	memcpy(&hi, addr, sizeof(hi));
	memcpy(&lo, addr + 8, sizeof(lo));
	return (hi | lo) == 0;
}

static enum pc_class
classify_ipv4(const uint8_t *l3, uint32_t rem, enum pc_dir dir,
    struct pc_frame_key *key)
{
	uint32_t hlen, tot_len;

	if (rem < IPV4_MIN_HLEN || (l3[0] >> 4) != 4)
		return PC_CLASS_MALFORMED;
	hlen = (uint32_t)(l3[0] & 0x0f) * 4;
	if (hlen < IPV4_MIN_HLEN || hlen > rem)
		return PC_CLASS_MALFORMED;
	/* rem may exceed tot_len: short packets carry Ethernet padding. */
	tot_len = pc_load_be16(l3 + 2);
	if (tot_len < hlen || tot_len > rem)
		return PC_CLASS_MALFORMED;

	key_set_v4(key, l3 + (dir == PC_DIR_UP ? IPV4_SRC_OFF : IPV4_DST_OFF));
	return PC_CLASS_IPV4;
}

/*
 * Neighbour discovery is sent between a host and the router, so the
 * source/destination pair does not always hold the pod address: a DAD
 * solicitation comes from ::, and advertisements often go to the
 * all-nodes group. The target address names the pod in those cases.
 * Returns the offset of the chosen address from the IPv6 header, or 0 when
 * the packet is not NS/NA (an ICMPv6 payload without even a type byte is
 * not), or -1 when the ND message is truncated.
 */
static int
nd_addr_off(const uint8_t *l3, uint32_t plen, enum pc_dir dir)
{
	uint8_t type;

	if (l3[IPV6_NH_OFF] != IPPROTO_ICMPV6_NUM || plen < 1)
		return 0;
	type = l3[IPV6_HLEN];
	if (type != ND_NEIGHBOR_SOLICIT && type != ND_NEIGHBOR_ADVERT)
		return 0;
	if (plen < ND_MIN_LEN)
		return -1;

	if (type == ND_NEIGHBOR_SOLICIT) {
		if (dir == PC_DIR_UP &&
		    !ipv6_addr_is_unspecified(l3 + IPV6_SRC_OFF))
			return IPV6_SRC_OFF;
		return IPV6_HLEN + ND_TARGET_OFF;
	}
	if (dir == PC_DIR_UP)
		return IPV6_HLEN + ND_TARGET_OFF;
	return IPV6_DST_OFF;
}

static enum pc_class
classify_ipv6(const uint8_t *l3, uint32_t rem, enum pc_dir dir,
    struct pc_frame_key *key)
{
	uint32_t plen;
	int off;

	if (rem < IPV6_HLEN || (l3[0] >> 4) != 6)
		return PC_CLASS_MALFORMED;
	plen = pc_load_be16(l3 + IPV6_PLEN_OFF);
	if (plen > rem - IPV6_HLEN)
		return PC_CLASS_MALFORMED;

	off = nd_addr_off(l3, plen, dir);
	if (off < 0)
		return PC_CLASS_MALFORMED;
	if (off == 0)
		off = dir == PC_DIR_UP ? IPV6_SRC_OFF : IPV6_DST_OFF;

	key_set_v6(key, l3 + off);
	return PC_CLASS_IPV6;
}

static enum pc_class
classify_arp(const uint8_t *l3, uint32_t rem, enum pc_dir dir,
    struct pc_frame_key *key)
{
	if (rem < ARP_LEN)
		return PC_CLASS_MALFORMED;
	/* Only Ethernet/IPv4 ARP carries an address we can look up. */
	if (pc_load_be16(l3) != ARP_HRD_ETHER ||
	    pc_load_be16(l3 + 2) != ETHERTYPE_IPV4 || l3[4] != 6 || l3[5] != 4)
		return PC_CLASS_OTHER;

	key_set_v4(key, l3 + (dir == PC_DIR_UP ? ARP_SPA_OFF : ARP_TPA_OFF));
	return PC_CLASS_IPV4;
}

enum pc_class
pc_classify(const uint8_t *frame, uint32_t len, enum pc_dir dir,
    struct pc_frame_key *key)
{
	enum pc_class cls;
	uint32_t off = ETH_TYPE_OFF;
	uint16_t type, tpid[2] = { 0, 0 }, tci[2] = { 0, 0 };
	unsigned int tags = 0;

	key->ethertype = 0;
	key->l3_offset = 0;
	key->vlan = PC_VLAN_NONE;
	if (len < ETH_HLEN)
		goto malformed;

	type = pc_load_be16(frame + off);
	while (is_vlan_tpid(type)) {
		/* The tag's TCI plus the next type field must be present. */
		if (++tags > VLAN_MAX_TAGS || len - off < VLAN_TAG_LEN + 2) {
			key->vlan = PC_VLAN_OTHER;
			goto malformed;
		}
		if (tags <= 2) {
			tpid[tags - 1] = type;
			tci[tags - 1] = pc_load_be16(frame + off + 2);
		}
		off += VLAN_TAG_LEN;
		type = pc_load_be16(frame + off);
	}
	off += 2;
	key->vlan = vlan_stack(tags, tpid, tci);
	key->ethertype = type;
	key->l3_offset = (uint16_t)off;

	switch (type) {
	case ETHERTYPE_IPV4:
		cls = classify_ipv4(frame + off, len - off, dir, key);
		break;
	case ETHERTYPE_IPV6:
		cls = classify_ipv6(frame + off, len - off, dir, key);
		break;
	case ETHERTYPE_ARP:
		cls = classify_arp(frame + off, len - off, dir, key);
		break;
	case PC_LLDP_ETHERTYPE:
		cls = PC_CLASS_LLDP;
		break;
	default:
		cls = PC_CLASS_OTHER;
		break;
	}
	if (cls == PC_CLASS_IPV4 || cls == PC_CLASS_IPV6)
		return cls;
	/* Callers must not see a stale address from an earlier frame. */
	memset(key->addr, 0, sizeof(key->addr));
	return cls;

malformed:
	memset(key->addr, 0, sizeof(key->addr));
	return PC_CLASS_MALFORMED;
}

const char *
pc_dir_name(enum pc_dir dir)
{
	switch (dir) {
	case PC_DIR_UP:
		return "up";
	case PC_DIR_DOWN:
		return "down";
	default:
		return "unknown";
	}
}
