# SPDX-License-Identifier: BSD-3-Clause
"""Frame builders and a minimal pcap reader/writer for podcap's tests."""
import struct

ETH_IPV4 = 0x0800
ETH_IPV6 = 0x86DD
ETH_ARP = 0x0806


def mac(i):
    return bytes([0x02, 0, 0, 0, 0, i & 0xFF])


def ipv4(addr):
    return bytes(int(x) for x in addr.split("."))


def ipv6(addr):
    import ipaddress
    return ipaddress.IPv6Address(addr).packed


def eth(ethertype, payload, vlans=(), src=1, dst=2):
    hdr = mac(dst) + mac(src)
    for tpid, vid in vlans:
        hdr += struct.pack("!HH", tpid, vid)
    return hdr + struct.pack("!H", ethertype) + payload


ETH_LLDP = 0x88CC
LLDP_NEAREST_BRIDGE = bytes([0x01, 0x80, 0xC2, 0x00, 0x00, 0x0E])


def lldp_tlv(tlv_type, value):
    return struct.pack("!H", tlv_type << 9 | len(value)) + value


def lldp(chassis, port, ttl=120, name=None, src=1, vlans=(), chassis_subtype=7,
         port_subtype=5):
    """An LLDP frame to the nearest-bridge group: chassis and port id (locally
    assigned and interface name unless told), TTL, system name, End."""
    pdu = (lldp_tlv(1, bytes([chassis_subtype]) + chassis)
           + lldp_tlv(2, bytes([port_subtype]) + port)
           + lldp_tlv(3, struct.pack("!H", ttl)))
    if name is not None:
        pdu += lldp_tlv(5, name)
    pdu += lldp_tlv(0, b"")
    hdr = LLDP_NEAREST_BRIDGE + mac(src)
    for tpid, vid in vlans:
        hdr += struct.pack("!HH", tpid, vid)
    return hdr + struct.pack("!H", ETH_LLDP) + pdu


def ipv4_packet(src, dst, size, proto=17):
    """An IPv4 packet of `size` bytes in all (header + zero payload)."""
    hdr = struct.pack("!BBHHHBBH4s4s", 0x45, 0, size, 0, 0, 64, proto, 0, ipv4(src), ipv4(dst))
    return hdr + bytes(size - len(hdr))


def ipv6_packet(src, dst, payload_len, nh=17):
    hdr = struct.pack("!IHBB16s16s", 6 << 28, payload_len, nh, 64, ipv6(src), ipv6(dst))
    return hdr + bytes(payload_len)


def arp(op, sender, target):
    return struct.pack("!HHBBH6s4s6s4s", 1, ETH_IPV4, 6, 4, op, mac(1), ipv4(sender),
                       bytes(6), ipv4(target))


def write_pcap(path, frames):
    with open(path, "wb") as f:
        f.write(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1))
        for i, fr in enumerate(frames):
            f.write(struct.pack("<IIII", 1, i, len(fr), len(fr)))
            f.write(fr)


def read_pcap(path):
    frames = []
    with open(path, "rb") as f:
        data = f.read()
    if len(data) < 24:
        return frames
    magic = struct.unpack("<I", data[:4])[0]
    endian = "<" if magic in (0xA1B2C3D4, 0xA1B23C4D) else ">"
    off = 24
    while off + 16 <= len(data):
        _, _, incl, _ = struct.unpack(endian + "IIII", data[off:off + 16])
        off += 16
        frames.append(data[off:off + incl])
        off += incl
    return frames
