#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Writes the seed corpora of the fuzz targets, tests/fuzz/TARGET/seed-*,
from the test vectors and podcap's frame builders. Run from anywhere after
a deliberate change of a format or of the vectors; inputs that once found
a bug are kept in the same directories under other names and are never
touched here.

  seeds.py           writes them
  seeds.py --check   writes them elsewhere and compares: exit 1 naming each
                     seed that is missing or not what this file makes (the
                     unit suite's fuzz-seeds: a vector changed, the seeds not)

The pod-map target also reads tests/config/good and tests/config/bad."""
import filecmp
import os
import struct
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tests", "integration"))
import frames as fr  # noqa: E402

VECTORS = os.path.join(ROOT, "tests", "vectors")
OUT = os.path.join(ROOT, "tests", "fuzz")


def write(target, name, data):
    d = os.path.join(OUT, target)
    os.makedirs(d, exist_ok=True)
    if isinstance(data, str):
        data = data.encode()
    with open(os.path.join(d, "seed-" + name), "wb") as f:
        f.write(data)


def vector_records():
    """The records of tests/vectors/ledger, each a 4-byte length, the record, its leaf hash."""
    with open(os.path.join(VECTORS, "ledger", "records"), "rb") as f:
        d = f.read()
    recs, off = [], 0
    while off < len(d):
        n = int.from_bytes(d[off:off + 4], "big")
        recs.append(d[off + 4:off + 4 + n])
        off += 4 + n + 32
    return recs


def read(*path):
    with open(os.path.join(*path), "rb") as f:
        return f.read()


def icmp6(src, dst, body):
    return struct.pack("!IHBB16s16s", 6 << 28, len(body), 58, 255, fr.ipv6(src),
                       fr.ipv6(dst)) + body


def classify():
    tcp = fr.ipv4_packet("10.1.0.5", "192.0.2.1", 60, proto=6)
    v6 = fr.ipv6_packet("fd00:1::5", "2001:db8::1", 20)
    ns = struct.pack("!BBHI16s", 135, 0, 0, 0, fr.ipv6("fd00:1::9"))
    na = struct.pack("!BBHI16s", 136, 0, 0, 0, fr.ipv6("fd00:1::9"))
    seeds = {
        "ipv4": fr.eth(fr.ETH_IPV4, tcp),
        "ipv6": fr.eth(fr.ETH_IPV6, v6),
        "vlan-ipv4": fr.eth(fr.ETH_IPV4, tcp, vlans=[(0x8100, 10)]),
        "qinq-ipv6": fr.eth(fr.ETH_IPV6, v6, vlans=[(0x88A8, 100), (0x8100, 10)]),
        "four-tags": fr.eth(fr.ETH_IPV4, tcp, vlans=[(0x9100, 1), (0x88A8, 2), (0x8100, 3),
                                                     (0x8100, 4)]),
        "arp": fr.eth(fr.ETH_ARP, fr.arp(1, "10.1.0.5", "10.1.0.1")),
        "nd-solicit": fr.eth(fr.ETH_IPV6, icmp6("::", "ff02::1:ff00:9", ns)),
        "nd-advert": fr.eth(fr.ETH_IPV6, icmp6("fd00:1::9", "fd00:1::1", na)),
        "lldp": fr.eth(0x88CC, bytes(46)),
        "ipv4-options": fr.eth(fr.ETH_IPV4, struct.pack("!BBHHHBBH4s4s", 0x46, 0, 28, 0, 0, 64,
                                                        17, 0, fr.ipv4("10.1.0.5"),
                                                        fr.ipv4("10.9.9.9")) + bytes(8)),
        "runt": fr.eth(fr.ETH_IPV4, b"\x45\x00"),
        # the tag stacks of pods[].vlan: priority bits, double 802.1Q, an S-tag alone,
        # ARP and ND behind QinQ, a frame cut inside its inner tag
        "vlan-priority-ipv4": fr.eth(fr.ETH_IPV4, tcp, vlans=[(0x8100, 0xE000 | 100)]),
        "qinq-8100-ipv4": fr.eth(fr.ETH_IPV4, tcp, vlans=[(0x8100, 200), (0x8100, 300)]),
        "stag-alone-ipv4": fr.eth(fr.ETH_IPV4, tcp, vlans=[(0x88A8, 200)]),
        "qinq-arp": fr.eth(fr.ETH_ARP, fr.arp(1, "10.1.0.5", "10.1.0.1"),
                           vlans=[(0x88A8, 200), (0x8100, 300)]),
        "qinq-nd-solicit": fr.eth(fr.ETH_IPV6, icmp6("::", "ff02::1:ff00:9", ns),
                                  vlans=[(0x88A8, 4094), (0x8100, 1)]),
        "qinq-cut-inner": fr.eth(fr.ETH_IPV4, tcp, vlans=[(0x88A8, 200), (0x8100, 300)])[:18],
    }
    for name, data in seeds.items():
        write("classify", name, data)


def config():
    # what tests/config does not show: anchors, flow style, CRLF, a BOM, IPv6
    write("config", "anchors.yaml", read(VECTORS, "podmap.yaml").decode()
          .replace("defaults:\n", "defaults: &d\n")
          .replace("    mode: shape\n", "    mode: shape\n    <<: *d\n"))
    write("config", "flow.yaml",
          "{appliance: {id: a1}, uplinks: [{name: u, pod_port: 'net_pcap0,iface=lo', "
          "fabric_port: 'net_pcap1,iface=lo'}], pods: [{id: p, uplink: u, "
          "prefixes: ['10.0.0.0/8', '2001:db8::/32']}]}\n")
    write("config", "crlf-bom.yaml", b"\xef\xbb\xbf" + read(VECTORS, "podmap.yaml")
          .replace(b"\n", b"\r\n"))
    write("config", "example-72gpu.yaml", read(ROOT, "config", "example-72gpu.yaml"))


def record():
    for i, r in enumerate(vector_records()):
        write("record", "vector-%02d" % i, r)
    # a later type (docs/log-format.md, "Types added later"): the STOP's
    # common fields under type 200, then 8 bytes of that type's own
    stop = next(r for r in vector_records() if r[1] == 5)
    write("record", "later-type", stop[:1] + b"\xc8" + stop[2:] + bytes([0, 0, 0, 1, 0, 0, 0, 2]))
    # LINK (type 12, docs/log-format.md): the STOP's common fields, a start's
    # ports: up0's pod port down and silent, its fabric port up facing leaf-1
    def port(side, up, neighbor):
        b = bytes([3]) + b"up0" + bytes([side])
        b += struct.pack(">QBBI", 1704067200 * 10**9, up, up, 100000 if up else 0)
        b += struct.pack(">QIB", 0, 0, 0)
        b += struct.pack(">BQQ", 1 if neighbor else 0, 1704067190 * 10**9 if neighbor else 0,
                         10**10)
        if neighbor:
            b += struct.pack(">H", 120) + bytes([4, 6, 2, 0, 0, 0, 0, 1])
            b += bytes([5, 4]) + b"swp1" + bytes([1, 6]) + b"leaf-1"
        return b
    own = struct.pack(">BQI", 1, 0, 2) + port(0, 0, False) + port(1, 1, True)
    write("record", "link", stop[:1] + b"\x0c" + stop[2:] + own)
    write("record", "sync", sync_of(stop))


def sync_of(stop):
    """A SYNC (docs/log-format.md, "SYNC") of one window, from a STOP's common fields:
    ptp4l, locked, 3 polls all bounded, offset -1.5 us, path delay 700 ns, bound 2200 ns."""
    count = 3 + stop[2] + 24
    head = stop[:1] + b"\x0b" + stop[2:count] + struct.pack("!Q", 1) + stop[count + 8:]
    return head + struct.pack("!BBIIIqqQ8s8sHBH", 1, 3, 3, 3, 3, -1500 << 16, 700 << 16, 2200,
                              b"\x11" * 8, b"\x22" * 8, 1, 9, 1)


def note():
    cp = read(VECTORS, "ledger", "checkpoint")
    write("note", "checkpoint", cp)
    write("note", "checkpoint-body", cp[:cp.index(b"\n\n") + 1])
    write("note", "body-extension", cp[:cp.index(b"\n\n") + 1] + b"an extension\n")
    write("note", "vector-pub", read(VECTORS, "vector.pub"))
    write("note", "other-pub", read(VECTORS, "other.pub"))


DECLARATION = ("podcap-declaration v1\nappliance lab-1\n"
               "podmap 00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff\n"
               "not-before 2027-01-01T00:00:00Z\nnot-after 2027-01-08T00:00:00Z\n")


def declaration():
    write("declaration", "body", DECLARATION)


def chunks(parts):
    return b"".join(struct.pack("!H", len(p)) + p for p in parts)


def verify():
    recs = vector_records()
    cp = read(VECTORS, "ledger", "checkpoint")
    # flags (fuzz_verify.c): 1 pod map, 2 trusted, 4 raw note, 8 stored leaves,
    # 0x10 alter, 0x20 hold back, 0x40 consistency proof, 0x80 extension
    for name, flags, tsel in [("plain", 0x00, 0), ("podmap", 0x01, 0),
                              ("trusted-proof", 0x4B, 8), ("altered-stored", 0x19, 2),
                              ("held-back", 0x21, 0), ("extension", 0x81, 0)]:
        write("verify", name, bytes([flags, tsel]) + chunks(recs))
    write("verify", "raw-note", bytes([0x05, 0]) + chunks([cp] + recs))
    write("verify", "first-five", bytes([0x43, 3]) + chunks(recs[:5]))


def lldp():
    for name in ("lldpd-mac", "lldpd-ifname", "lldpd-shutdown"):
        write("lldp", name, read(ROOT, "tests", "unit", "lldp", name + ".bin"))
    write("lldp", "tagged", fr.lldp(b"sw1", b"eth7", name=b"tor-1",
                                    vlans=[(0x88A8, 10), (0x8100, 20)]))
    write("lldp", "longest-ids", fr.lldp(b"c" * 255, b"p" * 255, name=b"n" * 255))
    write("lldp", "mac-ids", fr.lldp(bytes(6), bytes(6), chassis_subtype=4, port_subtype=3))
    write("lldp", "shutdown", fr.lldp(b"sw1", b"eth7", ttl=0))
    write("lldp", "nine-bit-length", fr.lldp(b"sw1", b"eth7")[:-2]
          + fr.lldp_tlv(127, bytes(300)) + fr.lldp_tlv(0, b""))


def http():
    for name, pub, line in [
        ("checkpoint", 13, "GET /v1/checkpoint"),
        ("pubkey", 13, "HEAD /v1/pubkey"),
        ("metrics", 13, "GET /metrics"),
        ("records", 13, "GET /v1/records?from=0&count=13"),
        ("records-escaped", 13, "GET /v1/records?fr%6fm=1&count=%31%32"),
        ("inclusion", 13, "GET /v1/proof/inclusion?index=5&size=13"),
        ("consistency", 13, "GET /v1/proof/consistency?old=8&new=13"),
        ("twice", 13, "GET /v1/records?from=0&from=1&count=2"),
        ("post", 13, "POST /v1/checkpoint"),
    ]:
        write("http", name, struct.pack("!H", pub) + line.encode())
    write("http", "huge-tree", b"\x80" + struct.pack("!Q", 2 ** 64 - 1)
          + b"GET /v1/records?from=18446744073709551614&count=1")
    # the access decision: the last byte says what TLS learned of the client
    # (% 5: 4 trusted; 0x40: the subject of the log's rule; 0x80: the key of /metrics's)
    write("http", "access-log", struct.pack("!H", 13) + b"GET /v1/checkpoint?\x45")
    write("http", "access-metrics", struct.pack("!H", 13) + b"GET /metrics?\x81")
    write("http", "access-refused", struct.pack("!H", 13) + b"GET /v1/attest?\xc2")
    write("http", "access-other-part", struct.pack("!H", 13) + b"GET /metrics?\x45")


def ptp():
    """ptp4l 3.1.1's answers over its management socket to GETs of port 0x1234
    (tests/unit/test_discipline.c holds the same), a refusal, and polls."""
    answers = {
        "default-data-set": "0d02004a0000000000000000000000000000000076a32efffe87d8a200000000047f"
                            "00000000000000001234000002000001001620000300000180fffeffff8076a32efffe87d8a20000",
        "time-status-np": "0d0200680000000000000000000000000000000076a32efffe87d8a200000001047f"
                          "000000000000000012340000020000010034c000fffffffffffffe9718ed4a64e4c9a695"
                          "0000000000000000000000000000000000000000000000000001ba0ae5fffe6d6601",
        "current-data-set": "0d0200480000000000000000000000000000000076a32efffe87d8a200000002047f"
                            "00000000000000001234000002000001001420010001fffffffffe9700000000000009fa0000",
        "parent-data-set": "0d0200560000000000000000000000000000000076a32efffe87d8a200000003047f"
                           "0000000000000000123400000200000100222002ba0ae5fffe6d660100010000ffff7fffffff"
                           "01f8feffff80ba0ae5fffe6d6601",
        "port-data-set": "0d0200500000000000000000000000000000000076a32efffe87d8a200010004047f"
                         "00000000000000001234000002000001001c200476a32efffe87d8a2000108000000000000000000ff0300010002",
        "no-such-id": "0d02003c0000000000000000000000000000000076a32efffe87d8a200010006047f"
                      "0000000000000000123400000200000200080002123400000000",
    }
    for name, hexed in answers.items():
        write("ptp", name, bytes.fromhex(hexed))
    # the TLVs alone, as the target also puts them behind a valid header
    write("ptp", "tlv-current-data-set", bytes.fromhex(answers["current-data-set"])[48:])
    write("ptp", "tlv-refusal-text", struct.pack("!HHHH4sB3s", 2, 12, 6, 0xC000, b"", 3, b"no!"))
    # polls (step, result, offset) and cuts (0xff): a slave's reading and the bound's corners
    write("ptp", "polls", bytes([1, 0, 5, 1, 2, 0, 3, 0, 0x80, 0, 0xff, 0, 1, 0, 0x7f, 0, 0xff, 0]))
    write("ptp", "bound-saturated", struct.pack("!qqBB3B", -2 ** 63, -2 ** 63, 0x0b, 1, 9, 8, 6))


def stale(made):
    """The seeds under made that tests/fuzz lacks or holds otherwise."""
    tree = os.path.join(ROOT, "tests", "fuzz")
    out = []
    for target in sorted(os.listdir(made)):
        for name in sorted(os.listdir(os.path.join(made, target))):
            have = os.path.join(tree, target, name)
            if not os.path.exists(have):
                out.append(f"{target}/{name}: missing")
            elif not filecmp.cmp(os.path.join(made, target, name), have, shallow=False):
                out.append(f"{target}/{name}: not what seeds.py makes")
    return out


def main():
    global OUT
    check = sys.argv[1:] == ["--check"]
    if sys.argv[1:] and not check:
        sys.exit("usage: seeds.py [--check]")
    with tempfile.TemporaryDirectory(prefix="podcap-seeds-") as tmp:
        if check:
            OUT = tmp
        for f in (classify, lldp, config, record, note, declaration, verify, http, ptp):
            f()
        if not check:
            return 0
        bad = stale(tmp)
    for line in bad:
        print(line)
    if bad:
        print(f"{len(bad)} seeds are stale: run tests/fuzz/seeds.py and commit what it writes")
        return 1
    print("every seed is what seeds.py makes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
