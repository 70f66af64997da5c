# SPDX-License-Identifier: BSD-3-Clause
"""Hostile frames for podcapd, each with the outcome the design gives it.

A case is (class, frame, outcome): the outcome is a pod id (the frame is
counted against that pod and forwarded), "unmapped" or "malformed" (the
frame is dropped and counted on its uplink with that reason). Cases are
generated for one uplink and one direction from the point of view of a
"home" pod on that uplink, an optional neighbour pod on the same uplink and
a foreign pod on another uplink, so the same classes run on every kind of
uplink.

The outcomes follow docs/design.md and src/shape/classify.h: the pod
side address (source going up, destination coming down; for ARP and IPv6
neighbour discovery the rules of classify.h) names the pod; a pod of another
uplink, or none, is unmapped; a frame under 14 bytes, over max_frame, or
with headers cut short is malformed.
"""
import ipaddress
import struct

from frames import ETH_ARP, ETH_IPV4, ETH_IPV6

UP, DOWN = "up", "down"
UNMAPPED, MALFORMED = "unmapped", "malformed"

ETH_VLAN, ETH_QINQ, ETH_QINQ_OLD = 0x8100, 0x88A8, 0x9100
BCAST = b"\xff" * 6
MCAST4 = bytes.fromhex("01005e000001")
MCAST6 = bytes.fromhex("333300000001")

FABRIC4, FABRIC6 = "192.0.2.1", "2001:db8::1"
NOBODY4, NOBODY6 = "10.9.9.9", "fd00:9::9"
UNSPEC6, ALL_NODES6, LINK_LOCAL6 = "::", "ff02::1", "fe80::1"

PROTO_HOPOPTS, PROTO_UDP = 0, 17
PROTO_ROUTING, PROTO_FRAGMENT, PROTO_ICMPV6 = 43, 44, 58
PROTO_NONE, PROTO_DSTOPTS = 59, 60
ND_NS, ND_NA = 135, 136


class Pod:
    """A pod as the generator sees it: an id and one address per family."""

    def __init__(self, pod_id, v4, v6):
        self.id, self.v4, self.v6 = pod_id, v4, v6


def a4(addr):
    return ipaddress.IPv4Address(addr).packed


def a6(addr):
    return ipaddress.IPv6Address(addr).packed


def solicited(addr):
    return "ff02::1:ff" + a6(addr)[13:].hex()[:2] + ":" + a6(addr)[14:].hex()


def ether(ethertype, payload, dst=b"\x02\0\0\0\0\x02", src=b"\x02\0\0\0\0\x01", tags=()):
    hdr = dst + src
    for tpid, vid in tags:
        hdr += struct.pack("!HH", tpid, vid)
    return hdr + struct.pack("!H", ethertype) + payload


def ip4(src, dst, payload=b"", proto=PROTO_UDP, options=b"", tot_len=None, ihl=None,
        ver=4, frag=0, ident=1):
    """An IPv4 packet; options are padded to 4 bytes; lengths may lie."""
    options += bytes(-len(options) % 4)
    hl = 5 + len(options) // 4 if ihl is None else ihl
    n = 20 + len(options) + len(payload) if tot_len is None else tot_len
    hdr = struct.pack("!BBHHHBBH4s4s", ver << 4 | hl, 0, n, ident, frag, 64, proto, 0,
                      a4(src), a4(dst))
    return hdr + options + payload


def ip6(src, dst, nh, payload=b"", plen=None, ver=6):
    n = len(payload) if plen is None else plen
    return struct.pack("!IHBB16s16s", ver << 28, n, nh, 64, a6(src), a6(dst)) + payload


def udp(n, tag=0):
    """A UDP datagram of n >= 8 bytes whose payload repeats tag."""
    return struct.pack("!HHHH", 40000, 9000, n, 0) + bytes([tag & 0xFF]) * (n - 8)


def opts_hdr(nh, units=0):
    """Hop-by-hop or destination options: PadN filling (units + 1) x 8 bytes."""
    pad = 8 * (units + 1) - 2
    return struct.pack("!BBBB", nh, units, 1, pad - 2) + bytes(pad - 2)


def routing_hdr(nh, segments, rtype=4):
    body = b"".join(a6(s) for s in segments)
    return struct.pack("!BBBBI", nh, 2 * len(segments), rtype, len(segments), 0) + body


def frag_hdr(nh, offset, more, ident=7):
    return struct.pack("!BBHI", nh, 0, offset << 3 | more, ident)


def nd(kind, target, options=b""):
    flags = 0x60000000 if kind == ND_NA else 0
    return struct.pack("!BBHI16s", kind, 0, 0, flags, a6(target)) + options


def arp_msg(sender, target, op=1, hrd=1, pro=ETH_IPV4, hln=6, pln=4):
    return (struct.pack("!HHBBH", hrd, pro, hln, pln, op) + b"\x02\0\0\0\0\x01" + a4(sender)
            + bytes(6) + a4(target))


class Gen:
    """Cases for one uplink and one direction."""

    def __init__(self, direction, home, neighbour=None, foreign=None, max_frame=9216):
        self.dir = direction
        self.home, self.neighbour, self.foreign = home, neighbour, foreign
        self.max_frame = max_frame
        self.cases = []
        self.tag = 0

    def add(self, cls, frame, outcome):
        self.cases.append((cls, frame, outcome))

    def macs(self, bcast=None):
        """Destination and source MAC of a frame travelling in this direction."""
        a, b = b"\x02\0\0\0\0\x02", b"\x02\0\0\0\0\x01"
        dst, src = (a, b) if self.dir == UP else (b, a)
        return {"dst": bcast or dst, "src": src}

    def pair(self, pod_addr, far_addr):
        """(src, dst) with the pod side address where this direction reads it."""
        return (pod_addr, far_addr) if self.dir == UP else (far_addr, pod_addr)

    def v4(self, pod_addr, size=100, far=FABRIC4, options=b"", **kw):
        """An IPv4/UDP frame of `size` bytes with pod_addr on the pod side."""
        self.tag += 1
        s, d = self.pair(pod_addr, far)
        payload = udp(size - 14 - 20 - len(options) - (-len(options) % 4), self.tag)
        return ether(ETH_IPV4, ip4(s, d, payload, options=options, **kw), **self.macs())

    def v6(self, pod_addr, size=120, far=FABRIC6, nh=PROTO_UDP, chain=b"", tags=()):
        self.tag += 1
        s, d = self.pair(pod_addr, far)
        body = chain + udp(size - 14 - 4 * len(tags) - 40 - len(chain), self.tag)
        return ether(ETH_IPV6, ip6(s, d, nh, body), tags=tags, **self.macs())

    def outside(self, size):
        """Outcome of a well-formed frame of the home pod: the size check comes first."""
        return self.home.id if 14 <= size <= self.max_frame else MALFORMED

    # -- the classes --------------------------------------------------------

    def runts(self):
        good = self.v4(self.home.v4, 60)
        for n in range(14):
            self.add("runt", bytes(n), MALFORMED)
            self.add("runt", good[:n], MALFORMED)
        # 14..59 bytes: short, but a complete header names the pod
        self.add("runt", ether(ETH_IPV4, ip4(*self.pair(self.home.v4, FABRIC4), proto=PROTO_NONE),
                               **self.macs()), self.home.id)
        self.add("runt", ether(0x88B5, b""), UNMAPPED)
        for n in range(14, 60, 5):
            self.add("runt", good[:n], MALFORMED)

    def vlan(self):
        good = ether(ETH_IPV4, ip4(*self.pair(self.home.v4, FABRIC4), udp(30)),
                     tags=[(ETH_VLAN, 7)], **self.macs())
        self.add("vlan", good, self.home.id)
        for n in range(14, 18 + 20):
            self.add("vlan truncated", good[:n], MALFORMED)
        for outer in (ETH_QINQ, ETH_QINQ_OLD, ETH_VLAN):
            tags = [(outer, 100), (ETH_VLAN, 7)]
            qinq = ether(ETH_IPV4, ip4(*self.pair(self.home.v4, FABRIC4), udp(30)), tags=tags,
                         **self.macs())
            self.add("qinq", qinq, self.home.id)
            for n in range(14, 22):
                self.add("qinq truncated", qinq[:n], MALFORMED)
        four = [(ETH_QINQ, 1), (ETH_VLAN, 2), (ETH_QINQ_OLD, 3), (ETH_VLAN, 4)]
        self.add("qinq", self.v6(self.home.v6, 200, tags=four), self.home.id)
        self.add("qinq five tags", self.v6(self.home.v6, 200, tags=four + [(ETH_VLAN, 5)]), MALFORMED)
        self.add("qinq only tags", ether(ETH_VLAN, struct.pack("!HH", 1, ETH_VLAN) * 20,
                                         tags=[(ETH_VLAN, 1)] * 3, **self.macs()), MALFORMED)

    def ipv4_headers(self):
        s, d = self.pair(self.home.v4, FABRIC4)
        good = ether(ETH_IPV4, ip4(s, d, udp(26)), **self.macs())
        for n in range(14, 34):
            self.add("ipv4 truncated", good[:n], MALFORMED)
        for ihl in range(5):
            self.add("ipv4 ihl < 5", ether(ETH_IPV4, ip4(s, d, udp(26), ihl=ihl), **self.macs()), MALFORMED)
        # IHL 15 says 60 bytes of header; the frame ends before that
        self.add("ipv4 ihl past end", ether(ETH_IPV4, ip4(s, d, udp(20), ihl=15), **self.macs()), MALFORMED)
        self.add("ipv4 ihl past end", ether(ETH_IPV4, ip4(s, d, ihl=6, tot_len=24), **self.macs()),
                 MALFORMED)
        # total length larger than the frame, smaller than the header
        self.add("ipv4 total length", ether(ETH_IPV4, ip4(s, d, udp(26), tot_len=47), **self.macs()),
                 MALFORMED)
        self.add("ipv4 total length", ether(ETH_IPV4, ip4(s, d, udp(26), tot_len=65535), **self.macs()),
                 MALFORMED)
        self.add("ipv4 total length", ether(ETH_IPV4, ip4(s, d, udp(26), tot_len=19), **self.macs()),
                 MALFORMED)
        self.add("ipv4 total length", ether(ETH_IPV4, ip4(s, d, udp(26), tot_len=0), **self.macs()),
                 MALFORMED)
        # total length smaller than the frame: Ethernet padding, and counted in full
        self.add("ipv4 padding", ether(ETH_IPV4, ip4(s, d, udp(26), tot_len=20) + bytes(600),
                                       **self.macs()), self.home.id)
        for ver in (0, 6, 15):
            self.add("ipv4 bad version", ether(ETH_IPV4, ip4(s, d, udp(26), ver=ver), **self.macs()),
                     MALFORMED)

    def ipv4_options(self):
        for opt in (b"\x01", b"\x94\x04\0\0",                     # NOP, router alert
                    b"\x07\x27\x04" + bytes(36),                    # record route, 40 bytes
                    b"\x44\x0c\x05\0" + bytes(8), b"\x83\x07\x04" + bytes(4)):
            self.add("ipv4 options", self.v4(self.home.v4, 300, options=opt), self.home.id)
        # 40 bytes of options that claim more than the header holds are not read
        self.add("ipv4 options", self.v4(self.home.v4, 120, options=b"\x07\xff\x04" + bytes(37)),
                 self.home.id)
        if self.neighbour:
            self.add("ipv4 options", self.v4(self.neighbour.v4, 300, options=b"\x01" * 8), self.neighbour.id)
        self.add("ipv4 options", self.v4(NOBODY4, 300, options=b"\x01" * 8), UNMAPPED)

    def fragments(self):
        for frag, name in ((0x2000, "first"), (0x2000 | 185, "middle"), (370, "last"),
                           (0x2000 | 1, "tiny")):
            self.add("ipv4 fragment " + name, self.v4(self.home.v4, 600 if name != "tiny" else 42,
                                                      frag=frag, ident=99), self.home.id)
            self.add("ipv4 fragment " + name, self.v4(NOBODY4, 600, frag=frag, ident=99), UNMAPPED)
        s, d = self.pair(self.home.v6, FABRIC6)
        for off, more, name in ((0, 1, "first"), (181, 1, "middle"), (362, 0, "last")):
            payload = frag_hdr(PROTO_UDP, off, more) + udp(1448 if more else 200)
            self.add("ipv6 fragment " + name, ether(ETH_IPV6, ip6(s, d, PROTO_FRAGMENT, payload),
                                                    **self.macs()), self.home.id)
        # a non-first fragment whose bytes look like an NS for another address
        payload = frag_hdr(PROTO_ICMPV6, 1, 0) + nd(ND_NS, NOBODY6)
        self.add("ipv6 fragment last", ether(ETH_IPV6, ip6(s, d, PROTO_FRAGMENT, payload), **self.macs()),
                 self.home.id)
        s, d = self.pair(NOBODY6, FABRIC6)
        self.add("ipv6 fragment first", ether(ETH_IPV6, ip6(s, d, PROTO_FRAGMENT,
                                                            frag_hdr(PROTO_UDP, 0, 1) + udp(500)),
                                              **self.macs()), UNMAPPED)

    def ipv6_headers(self):
        s, d = self.pair(self.home.v6, FABRIC6)
        good = ether(ETH_IPV6, ip6(s, d, PROTO_UDP, udp(40)), **self.macs())
        for n in range(14, 54, 3):
            self.add("ipv6 truncated", good[:n], MALFORMED)
        self.add("ipv6 truncated", good[:53], MALFORMED)
        self.add("ipv6 payload length", ether(ETH_IPV6, ip6(s, d, PROTO_UDP, udp(40), plen=41),
                                              **self.macs()), MALFORMED)
        self.add("ipv6 payload length", ether(ETH_IPV6, ip6(s, d, PROTO_UDP, udp(40), plen=65535),
                                              **self.macs()), MALFORMED)
        self.add("ipv6 padding", ether(ETH_IPV6, ip6(s, d, PROTO_UDP, udp(40), plen=8), **self.macs()),
                 self.home.id)
        for ver in (4, 0, 15):
            self.add("ipv6 bad version", ether(ETH_IPV6, ip6(s, d, PROTO_UDP, udp(40), ver=ver),
                                               **self.macs()), MALFORMED)

    def ipv6_ext(self):
        """Extension headers: podcap reads only the fixed header's addresses."""
        me = self.home.v6
        chains = {
            "hop-by-hop": (PROTO_HOPOPTS, opts_hdr(PROTO_UDP)),
            "destination options": (PROTO_DSTOPTS, opts_hdr(PROTO_UDP, 3)),
            "routing": (PROTO_ROUTING, routing_hdr(PROTO_UDP, [FABRIC6, "2001:db8::2"])),
            "fragment": (PROTO_FRAGMENT, frag_hdr(PROTO_UDP, 0, 1)),
            "hbh+routing+dst+frag": (PROTO_HOPOPTS, opts_hdr(PROTO_ROUTING)
                                     + routing_hdr(PROTO_DSTOPTS, [FABRIC6])
                                     + opts_hdr(PROTO_FRAGMENT) + frag_hdr(PROTO_UDP, 0, 1)),
            "long chain": (PROTO_DSTOPTS, b"".join(opts_hdr(PROTO_DSTOPTS, 1) for _ in range(99))
                           + opts_hdr(PROTO_UDP, 1)),
            "no next header": (PROTO_DSTOPTS, opts_hdr(PROTO_NONE)),
        }
        for name, (nh, chain) in chains.items():
            self.add("ipv6 ext " + name, self.v6(me, 120 + len(chain), nh=nh, chain=chain), self.home.id)
        # the last header's length points past the end of the packet
        s, d = self.pair(me, FABRIC6)
        cut = opts_hdr(PROTO_DSTOPTS) + struct.pack("!BB", PROTO_UDP, 30) + bytes(14)
        self.add("ipv6 ext truncated chain", ether(ETH_IPV6, ip6(s, d, PROTO_HOPOPTS, cut), **self.macs()),
                 self.home.id)
        self.add("ipv6 ext truncated chain", ether(ETH_IPV6, ip6(s, d, PROTO_HOPOPTS, b"\x11"),
                                                   **self.macs()), self.home.id)
        # a jumbogram option with payload length 0
        jumbo = struct.pack("!BBBBI", PROTO_UDP, 0, 0xC2, 4, 65536 + 8)
        self.add("ipv6 ext jumbogram", ether(ETH_IPV6, ip6(s, d, PROTO_HOPOPTS, jumbo + udp(64), plen=0),
                                             **self.macs()), self.home.id)
        # a routing header naming another pod as the final hop: the fixed header decides
        other = self.foreign.v6 if self.foreign else NOBODY6
        self.add("ipv6 ext routing to another pod",
                 self.v6(me, 200, nh=PROTO_ROUTING, chain=routing_hdr(PROTO_UDP, [other])), self.home.id)
        # neighbour discovery behind an extension header is not read as ND
        self.add("ipv6 ext nd behind hop-by-hop",
                 ether(ETH_IPV6, ip6(UNSPEC6, ALL_NODES6, PROTO_HOPOPTS, opts_hdr(PROTO_ICMPV6) + nd(ND_NS, me)),
                       **self.macs()), UNMAPPED)

    def arp(self):
        snd, tgt = (self.home.v4, FABRIC4) if self.dir == UP else (FABRIC4, self.home.v4)
        good = ether(ETH_ARP, arp_msg(snd, tgt), **self.macs(BCAST))
        self.add("arp", good, self.home.id)
        self.add("arp", ether(ETH_ARP, arp_msg(snd, tgt, op=2) + bytes(18), **self.macs()), self.home.id)
        for n in range(14, 14 + 28, 2):
            self.add("arp truncated", good[:n], MALFORMED)
        self.add("arp truncated", good[:41], MALFORMED)
        for kw in ({"hrd": 6}, {"pro": ETH_IPV6}, {"hln": 8}, {"pln": 16}):
            self.add("arp not ethernet/ipv4", ether(ETH_ARP, arp_msg(snd, tgt, **kw), **self.macs(BCAST)),
                     UNMAPPED)

    def nd(self):
        me = self.home.v6
        if self.dir == UP:
            ok = [
                ("nd ns", ip6(me, solicited(FABRIC6), PROTO_ICMPV6, nd(ND_NS, FABRIC6))),
                ("nd ns dad", ip6(UNSPEC6, solicited(me), PROTO_ICMPV6, nd(ND_NS, me))),
                ("nd na", ip6(LINK_LOCAL6, ALL_NODES6, PROTO_ICMPV6, nd(ND_NA, me, b"\x02\x01" + bytes(6)))),
            ]
            bad = ip6(me, solicited(FABRIC6), PROTO_ICMPV6, nd(ND_NS, FABRIC6))
        else:
            ok = [
                ("nd ns", ip6(LINK_LOCAL6, solicited(me), PROTO_ICMPV6, nd(ND_NS, me, b"\x01\x01" + bytes(6)))),
                ("nd na", ip6(FABRIC6, me, PROTO_ICMPV6, nd(ND_NA, FABRIC6))),
            ]
            bad = ip6(LINK_LOCAL6, solicited(me), PROTO_ICMPV6, nd(ND_NS, me))
            self.add("nd na to all nodes", ether(ETH_IPV6, ip6(FABRIC6, ALL_NODES6, PROTO_ICMPV6,
                                                               nd(ND_NA, FABRIC6)), **self.macs()), UNMAPPED)
        for name, pkt in ok:
            self.add(name, ether(ETH_IPV6, pkt, **self.macs()), self.home.id)
        # the ND message cut short: by the payload length, or by the frame
        for plen in (1, 4, 8, 20, 23):
            pkt = bad[:4] + struct.pack("!H", plen) + bad[6:40 + plen]
            self.add("nd truncated", ether(ETH_IPV6, pkt, **self.macs()), MALFORMED)
        frame = ether(ETH_IPV6, bad, **self.macs())
        for n in (14 + 40, 14 + 41, 14 + 48, 14 + 63):
            self.add("nd truncated", frame[:n], MALFORMED)
        na = ether(ETH_IPV6, ip6(LINK_LOCAL6, ALL_NODES6, PROTO_ICMPV6, nd(ND_NA, me)), **self.macs())
        self.add("nd truncated", na[:14 + 40 + 23], MALFORMED)

    def jumbo(self):
        for size in (1514, 1522, 1523, 4000, 9000, self.max_frame):
            self.add("jumbo", self.v4(self.home.v4, size), self.outside(size))
        self.add("jumbo", self.v6(self.home.v6, self.max_frame - 8), self.home.id)
        for size in (self.max_frame + 1, self.max_frame + 2, 9600, 12000, 16128, 16384, 32768, 65535):
            self.add("jumbo over max_frame", self.v4(self.home.v4, size), MALFORMED)
        self.add("jumbo over max_frame", self.v6(NOBODY6, 20000), MALFORMED)

    def spoof(self):
        """Addresses that are not the home pod's."""
        foreign = [self.foreign] if self.foreign else []
        for who in foreign:
            self.add("spoof other uplink's pod", self.v4(who.v4, 400), UNMAPPED)
            self.add("spoof other uplink's pod", self.v6(who.v6, 400), UNMAPPED)
            if self.dir == UP:
                self.add("spoof other uplink's pod", ether(ETH_ARP, arp_msg(who.v4, FABRIC4),
                                                           **self.macs(BCAST)), UNMAPPED)
                self.add("spoof other uplink's pod", ether(ETH_IPV6, ip6(UNSPEC6, solicited(who.v6),
                                                                         PROTO_ICMPV6, nd(ND_NS, who.v6)),
                                                           **self.macs()), UNMAPPED)
                self.add("spoof other uplink's pod", ether(ETH_IPV6, ip6(self.home.v6, ALL_NODES6,
                                                                         PROTO_ICMPV6, nd(ND_NA, who.v6)),
                                                           **self.macs()), UNMAPPED)
            else:
                self.add("spoof other uplink's pod", ether(ETH_ARP, arp_msg(FABRIC4, who.v4),
                                                           **self.macs(BCAST)), UNMAPPED)
                self.add("spoof other uplink's pod", ether(ETH_IPV6, ip6(LINK_LOCAL6, solicited(who.v6),
                                                                         PROTO_ICMPV6, nd(ND_NS, who.v6)),
                                                           **self.macs()), UNMAPPED)
        self.add("spoof no pod", self.v4(NOBODY4, 400), UNMAPPED)
        self.add("spoof no pod", self.v6(NOBODY6, 400), UNMAPPED)
        self.add("spoof no pod", self.v4("0.0.0.0", 400), UNMAPPED)
        self.add("spoof no pod", self.v6(UNSPEC6, 400), UNMAPPED)
        self.add("spoof no pod", self.v6(LINK_LOCAL6, 400), UNMAPPED)
        # the home pod's IPv4 address, mapped into IPv6, is no prefix of it
        self.add("spoof no pod", self.v6("::ffff:" + self.home.v4, 400), UNMAPPED)
        if self.dir == UP:
            # an ARP probe (RFC 5227) has no sender address: it names no pod
            self.add("spoof no pod", ether(ETH_ARP, arp_msg("0.0.0.0", self.home.v4), **self.macs(BCAST)),
                     UNMAPPED)
        if self.neighbour:
            # two pods on one port cannot be told apart but by address
            self.add("spoof neighbour on this uplink", self.v4(self.neighbour.v4, 400), self.neighbour.id)
            self.add("spoof neighbour on this uplink", self.v6(self.neighbour.v6, 400), self.neighbour.id)

    def broadcast(self):
        s4, d4 = self.pair(self.home.v4, "224.0.0.251")
        if self.dir == UP:
            self.add("multicast from a pod", ether(ETH_IPV4, ip4(s4, d4, udp(100)),
                                                   **self.macs(MCAST4)), self.home.id)
            self.add("broadcast dhcp", ether(ETH_IPV4, ip4("0.0.0.0", "255.255.255.255", udp(300)),
                                             **self.macs(BCAST)), UNMAPPED)
            self.add("multicast mld", ether(ETH_IPV6, ip6(LINK_LOCAL6, "ff02::16", PROTO_HOPOPTS,
                                                          opts_hdr(PROTO_ICMPV6) + bytes(28)),
                                            **self.macs(MCAST6)), UNMAPPED)
        else:
            self.add("broadcast", ether(ETH_IPV4, ip4(FABRIC4, "255.255.255.255", udp(300)),
                                        **self.macs(BCAST)), UNMAPPED)
            self.add("multicast", ether(ETH_IPV4, ip4(FABRIC4, "224.0.0.1", udp(100)),
                                        **self.macs(MCAST4)), UNMAPPED)
            self.add("multicast", ether(ETH_IPV6, ip6(FABRIC6, ALL_NODES6, PROTO_UDP, udp(100)),
                                        **self.macs(MCAST6)), UNMAPPED)
        self.add("broadcast arp", ether(ETH_ARP, arp_msg(NOBODY4, "10.9.9.10"), **self.macs(BCAST)),
                 UNMAPPED)
        self.add("other ethertype", ether(0x88CC, bytes(46), dst=bytes.fromhex("0180c200000e")), UNMAPPED)
        self.add("other ethertype", ether(0x8847, bytes(100), **self.macs()), UNMAPPED)
        self.add("other ethertype", ether(0x8035, arp_msg(self.home.v4, self.home.v4, op=3),
                                          **self.macs(BCAST)), UNMAPPED)
        # IEEE 802.3 length field and LLC, also behind a tag
        self.add("other ethertype", ether(46, b"\x42\x42\x03" + bytes(43), **self.macs()), UNMAPPED)
        self.add("other ethertype", ether(46, b"\xaa\xaa\x03" + bytes(43), tags=[(ETH_VLAN, 7)],
                                          **self.macs()), UNMAPPED)

    def flood(self, n):
        """n unmapped frames, half IPv4, half IPv6, from (to) addresses of no pod."""
        for i in range(n):
            if i % 2 == 0:
                addr = "10.%d.%d.%d" % (200 + (i >> 16) % 50, (i >> 8) & 0xFF, i & 0xFF)
                self.add("flood", self.v4(addr, 64 + i % 64), UNMAPPED)
            else:
                addr = "fd00:ee::%x" % i
                self.add("flood", self.v6(addr, 86 + i % 64), UNMAPPED)

    def all(self, flood=0):
        for step in (self.runts, self.vlan, self.ipv4_headers, self.ipv4_options, self.fragments,
                     self.ipv6_headers, self.ipv6_ext, self.arp, self.nd, self.jumbo, self.spoof,
                     self.broadcast):
            step()
        self.flood(flood)
        return self.cases


def is_lldp(fr):
    """Ethertype 0x88cc behind at most four tags: link-local, no pod's on any uplink."""
    off = 12
    for _ in range(5):
        if len(fr) < off + 2:
            return False
        t = struct.unpack("!H", fr[off:off + 2])[0]
        if t not in (ETH_VLAN, ETH_QINQ, ETH_QINQ_OLD):
            return t == 0x88CC
        off += 4
    return False


def as_sole_pod(cases, pod_id, max_frame):
    """The outcome of the same frames on an uplink of one pod without prefixes."""
    return [(cls, fr, MALFORMED if not 14 <= len(fr) <= max_frame else
             UNMAPPED if is_lldp(fr) else pod_id) for cls, fr, _ in cases]
