/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Frame classification: which address of a frame names its pod.
 *
 * The classifier parses Ethernet (skipping 802.1Q and QinQ tags: TPID
 * 0x8100, 0x88a8 and 0x9100, any number up to 4), IPv4, IPv6, ARP and IPv6
 * neighbour discovery, and returns the address on the pod side of the frame:
 *
 *   IPv4 / IPv6      up: source address        down: destination address
 *   ARP (IPv4)       up: sender protocol addr  down: target protocol addr
 *   ND solicitation  up: source (the target if the source is ::, as in DAD)
 *                    down: target address
 *   ND advertisement up: target address        down: destination address
 *
 * It also returns the frame's tag stack (key.vlan, below): a pod given
 * pods[].vlan is one only in frames of its stack (pc_vlan_admits), which the
 * pod's switch inserts and the pod cannot choose.
 *
 * An LLDP frame (ethertype 0x88cc, behind the same tags) is PC_CLASS_LLDP,
 * whatever its payload: it is addressed to the switch on the port it came
 * from, and pc_lldp_parse_frame() reads it.
 *
 * The prefix lookup itself is done by the caller (rte_lpm / rte_lpm6 in
 * podcapd). Pure function of the bytes: no allocation, no side effects.
 */
#ifndef PODCAP_CLASSIFY_H
#define PODCAP_CLASSIFY_H

#include <stdbool.h>
#include <stdint.h>

#include "base/bytes.h"

enum pc_dir {
	PC_DIR_UP = 0,    /* pod -> fabric */
	PC_DIR_DOWN = 1,  /* fabric -> pod */
	PC_DIR_COUNT = 2,
};

enum pc_class {
	PC_CLASS_IPV4 = 0,     /* key.addr[0..3] holds the address */
	PC_CLASS_IPV6,         /* key.addr[0..15] holds the address */
	PC_CLASS_OTHER,        /* well-formed, but carries no IP address (non-IPv4 ARP, MPLS) */
	PC_CLASS_MALFORMED,    /* runt or truncated headers, bad IP version/IHL, ... */
	PC_CLASS_LLDP,         /* ethertype 0x88cc (shape/lldp.h): link-local, never forwarded */
};

/*
 * A tag stack as one word, for the pod map and the classifier alike, so that
 * the data path compares one integer: no tag is PC_VLAN_NONE; one 802.1Q
 * tag (TPID 0x8100) is pc_vlan_one(vid); two tags, the outer an 802.1ad
 * S-tag (0x88a8) or an 802.1Q tag (0x8100, as switches configured for
 * double 802.1Q send) and the inner an 802.1Q tag, are pc_vlan_two(outer,
 * inner). Any other stack (a 0x9100 or a lone 0x88a8 tag, an inner 0x88a8,
 * three or four tags) is PC_VLAN_OTHER, which no pod has. Only the 12-bit
 * VLAN ids count: priority and DEI bits are the switch's business.
 */
#define PC_VLAN_NONE   0u
#define PC_VLAN_OTHER  (3u << 24)
#define PC_VLAN_ID_MAX 4094u

static inline uint32_t
pc_vlan_one(uint16_t vid)
{
	return (1u << 24) | (vid & 0xfffu);
}

static inline uint32_t
pc_vlan_two(uint16_t outer, uint16_t inner)
{
	return (2u << 24) | ((uint32_t)(outer & 0xfffu) << 12) | (inner & 0xfffu);
}

/* How many tags a stack of pc_vlan_one() or pc_vlan_two() has (0 for none). */
static inline unsigned
pc_vlan_tags(uint32_t vlan)
{
	return vlan >> 24;
}

/*
 * A pod whose stack is pod_vlan may own a frame of stack frame_vlan: any
 * frame for a pod without one (PC_VLAN_NONE, as before pods had tags), else
 * only a frame of exactly its stack.
 */
static inline bool
pc_vlan_admits(uint32_t pod_vlan, uint32_t frame_vlan)
{
	return pod_vlan == PC_VLAN_NONE || pod_vlan == frame_vlan;
}

struct pc_frame_key {
	uint8_t addr[16];      /* network byte order */
	uint16_t ethertype;    /* innermost ethertype, host order */
	uint16_t l3_offset;    /* byte offset of the L3 header */
	uint32_t vlan;         /* the tag stack, whatever the class; PC_VLAN_OTHER when cut
				  inside its tags or more than four */
};

enum pc_class pc_classify(const uint8_t *frame, uint32_t len, enum pc_dir dir,
			  struct pc_frame_key *key);

/*
 * The common frame, decided inline: untagged (its stack PC_VLAN_NONE) IPv4 with a 20-byte header and
 * a total length the frame holds. True, with the address that names the pod
 * (host order, as rte_lpm takes it), for such a frame; false for any other,
 * which pc_classify() must decide. Where it returns true, pc_classify()
 * returns PC_CLASS_IPV4 with the same address (tests/unit/test_classify.c).
 */
static inline bool
pc_classify_ipv4_plain(const uint8_t *frame, uint32_t len, enum pc_dir dir, uint32_t *addr)
{
	if (len < 14 + 20 || frame[12] != 0x08 || frame[13] != 0x00 || frame[14] != 0x45)
		return false;
	uint32_t tot_len = pc_load_be16(frame + 16);
	if (tot_len < 20 || tot_len > len - 14)
		return false;
	*addr = pc_load_be32(frame + 14 + (dir == PC_DIR_UP ? 12 : 16));
	return true;
}

const char *pc_dir_name(enum pc_dir dir);   /* "up" / "down" */

#endif /* PODCAP_CLASSIFY_H */
