/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * LLDP (IEEE 802.1AB): what a switch says of itself on a port, parsed as
 * hostile input, and what podcapd keeps of it per port; and the LLDPDU
 * podcapd sends of itself (pc_lldp_build_frame).
 *
 * pc_lldp_parse_frame() takes a whole Ethernet frame (802.1Q/802.1ad tags
 * as pc_classify() allows them, ethertype 0x88cc) and reads the LLDPDU:
 * the mandatory Chassis ID, Port ID and Time To Live TLVs, first and in
 * that order, then any optional TLVs up to an End TLV or the end of the
 * frame, of which only System Name is kept. Bytes after the End TLV are
 * Ethernet padding and are not read. Rejected, with the reason in err:
 * a TLV header or value past the end, the mandatory TLVs missing or out
 * of order or repeated, a chassis or port id of 0 or more than 255 bytes
 * (a subtype byte and 1..255 bytes of value), a MAC address subtype of
 * other than 6 bytes, a TTL TLV of other than 2 bytes, a second System
 * Name, an End TLV of non-zero length.
 *
 * Everything parsed is kept as bytes; pc_lldp_render() gives the one form
 * podcap shows (metrics labels, logs, and later the signed record):
 * a MAC address subtype as 6 lower-case hex pairs with colons, a network
 * address of family IPv4 or IPv6 as its usual text, and every other value
 * byte by byte, printable ASCII (0x20..0x7e) as itself except the
 * backslash, which is doubled, and any other byte as \xNN. The form is
 * therefore printable and reversible whatever a switch sends.
 *
 * No DPDK, no allocation: the daemon's control thread and the unit tests
 * and fuzzer use the same code.
 */
#ifndef PODCAP_LLDP_H
#define PODCAP_LLDP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/error.h"

#define PC_LLDP_ETHERTYPE 0x88cc
#define PC_LLDP_ID_MAX    255 /* 802.1AB: a chassis or port id is 1..255 bytes */
#define PC_LLDP_NAME_MAX  255 /* a System Name TLV holds at most 255 bytes */
/* the rendered form of 255 bytes at 4 characters each, and a NUL */
#define PC_LLDP_TEXT_LEN (4 * 255 + 1)

/* Chassis ID subtypes (802.1AB-2016 table 8-2) that the rendering reads. */
#define PC_LLDP_CHASSIS_MAC     4
#define PC_LLDP_CHASSIS_NETADDR 5
/* Port ID subtypes (table 8-3). */
#define PC_LLDP_PORT_MAC     3
#define PC_LLDP_PORT_NETADDR 4

/* A chassis or port id: its subtype and its 1..255 bytes. */
struct pc_lldp_id {
	uint8_t subtype;
	uint8_t len;
	uint8_t value[PC_LLDP_ID_MAX];
};

struct pc_lldp {
	struct pc_lldp_id chassis;
	struct pc_lldp_id port;
	uint16_t ttl;  /* seconds the neighbour holds; 0: it leaves (a shutdown LLDPDU) */
	bool has_name; /* a System Name TLV was there (it may be empty) */
	uint8_t name_len;
	uint8_t name[PC_LLDP_NAME_MAX];
};

/* The frame, from its Ethernet header; 0, or -1 with the reason in err. */
int pc_lldp_parse_frame(const uint8_t *frame, size_t len, struct pc_lldp *out,
			struct pc_error *err);

/* The LLDPDU alone, the bytes after the ethertype. */
int pc_lldp_parse(const uint8_t *pdu, size_t len, struct pc_lldp *out, struct pc_error *err);

/* An id in podcap's form (above) into out, PC_LLDP_TEXT_LEN bytes. Returns out. */
const char *pc_lldp_render_id(const struct pc_lldp_id *id, bool is_port, char *out);

/* Any bytes in that form, as for a system name: printable ASCII kept, \\ and \xNN. */
const char *pc_lldp_render_bytes(const uint8_t *b, size_t n, char *out);

/*
 * What podcapd says of itself on a port (its own LLDPDU, 802.1AB 8.5): a
 * frame to the nearest-bridge group 01:80:c2:00:00:0e from src_mac, with
 * Chassis ID (subtype MAC address), Port ID (subtype interface name),
 * Time To Live, Port Description, System Name, System Description and End,
 * zero-padded to Ethernet's 60 bytes. A ttl of 0 is the shutdown LLDPDU.
 */
#define PC_LLDP_PORT_IFNAME 5
/* the Ethernet header, then chassis, port, TTL, three texts and End at their largest */
#define PC_LLDP_FRAME_MAX (14 + 9 + 258 + 4 + 3 * 257 + 2)

struct pc_lldp_announce {
	uint8_t src_mac[6];     /* the port's own address */
	uint8_t chassis_mac[6]; /* the appliance's: the same on every port */
	const char *port_id;    /* 1..255 bytes: "uplink0/pod" */
	const char *port_desc;  /* 0..255 bytes each */
	const char *system_name;
	const char *system_desc;
	uint16_t ttl; /* seconds */
};

/*
 * The frame into buf, of cap bytes (PC_LLDP_FRAME_MAX always suffices);
 * its length in *len. 0, or -1 with err: an empty or longer than 255 bytes
 * port id, a text longer than 255 bytes, cap too small.
 */
int pc_lldp_build_frame(const struct pc_lldp_announce *a, uint8_t *buf, size_t cap, size_t *len,
			struct pc_error *err);

/*
 * The neighbour a port last heard, as the control thread keeps it. Times
 * are CLOCK_MONOTONIC (for the TTL) and CLOCK_REALTIME (for a person and
 * the record), both in ns.
 */
struct pc_lldp_neighbor {
	bool present;                          /* heard, and its TTL has not run out */
	struct pc_lldp lldp;                   /* what it said last */
	uint64_t first_mono_ns, first_real_ns; /* when this chassis and port were first heard */
	uint64_t last_mono_ns, last_real_ns;   /* when it was heard last */
	uint64_t changes; /* times another chassis or port id (or none) took the place */
};

/*
 * What an LLDPDU heard at (mono, real) does to the neighbour: the same
 * chassis and port id refresh it; another one replaces it (a change); a
 * TTL of 0 removes it (a change). Returns true when it changed.
 */
bool pc_lldp_neighbor_heard(struct pc_lldp_neighbor *n, const struct pc_lldp *l, uint64_t mono_ns,
			    uint64_t real_ns);

/* Its TTL ran out at mono: no neighbour any more (a change). Returns true when it did. */
bool pc_lldp_neighbor_expire(struct pc_lldp_neighbor *n, uint64_t mono_ns);

/*
 * What bounds the control thread's work per port: a bucket of `burst`
 * frames that refills one frame every `every_ns`. LLDP is one frame per
 * 30 s on a port; a flood beyond the rate is freed unparsed.
 */
struct pc_lldp_rate {
	uint64_t every_ns;
	uint32_t burst;
	uint32_t tokens;
	uint64_t last_ns; /* the refill's time */
};

void pc_lldp_rate_init(struct pc_lldp_rate *r, uint32_t burst, uint64_t every_ns, uint64_t now_ns);
/* True, and a frame's token taken, when a frame may be parsed at now. */
bool pc_lldp_rate_take(struct pc_lldp_rate *r, uint64_t now_ns);

#endif /* PODCAP_LLDP_H */
