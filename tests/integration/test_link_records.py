#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""podcapd writes LINK records, and podcap-verify holds them to the declared cables.

One uplink between DPDK pcap ports; on its pod side a switch speaks LLDP
(a frame captured from Debian's lldpd), on its fabric side another (a
built frame). podcapd runs twice, each time under a pod map that declares
the uplink's neighbours: once the two switches it faces, once another
fabric switch. Each ledger must hold a LINK of kind 1 after its START
and one of kind 3 after each WINDOW (with the WINDOW's span), the later
ones naming the switch each port faced; podcap-verify with the first map
must pass, and with the second must exit 1 naming the record, the uplink,
the side, the neighbour declared and the one seen.
"""
import json
import os
import struct
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from daemon import Checks, Podcapd, ledger_entries  # noqa: E402
from frames import ETH_IPV4, eth, ipv4_packet, lldp, write_pcap  # noqa: E402

PODCAPD = os.environ.get("PODCAPD") or sys.argv[1]
KEYGEN = os.environ.get("PODCAP_KEYGEN") or sys.argv[2]
VERIFY = os.environ.get("PODCAP_VERIFY") or sys.argv[3]
SOURCE = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

REC_WINDOW, REC_LINK = 2, 12
KIND_START, KIND_WINDOW = 1, 3
WINDOW_NS = 1_000_000_000
WINDOWS = 3  # LINKs of windows to wait for, each with both neighbours

# the pod side's switch: lldpd's frame, chassis and port its MAC
POD_SW = ("02:00:00:aa:00:01", "02:00:00:aa:00:01")
FABRIC_SW = ("spine-7", "Ethernet12")

CONFIG = """\
window: 1s
defaults:
  cap: 100Gbps
  burst: 1MB
  mode: police
dpdk:
  lcores: 0-1
  memory: 512MiB
  file_prefix: linkrec-{pid}
uplinks:
  - name: up0
    pod_port: net_pcap0,rx_pcap={d}/in_pod.pcap,tx_pcap={d}/out_pod.pcap
    fabric_port: net_pcap1,rx_pcap={d}/in_fab.pcap,tx_pcap={d}/out_fab.pcap
    pod_neighbor: {{chassis_id: "{pc}", port_id: "{pp}"}}
    fabric_neighbor: {{chassis_id: "{fc}", port_id: "{fp}"}}
pods:
  - id: pod-a
    uplink: up0
    prefixes: [10.0.0.0/26]
"""


def lldpd_frame():
    with open(os.path.join(SOURCE, "tests", "unit", "lldp", "lldpd-mac.bin"), "rb") as f:
        return f.read()


def write_inputs(d):
    up = [eth(ETH_IPV4, ipv4_packet("10.0.0.1", "10.0.0.200", 200))] * 2
    down = [eth(ETH_IPV4, ipv4_packet("10.0.0.200", "10.0.0.1", 300), src=2, dst=1)] * 2
    write_pcap(f"{d}/in_pod.pcap", up[:1] + [lldpd_frame()] + up[1:])
    write_pcap(f"{d}/in_fab.pcap",
               down[:1] + [lldp(FABRIC_SW[0].encode(), FABRIC_SW[1].encode(), src=7)] + down[1:])


def common(rec):
    """(type, window_start_ns, window_len_ns, window_count, offset of the type's own fields)."""
    n = rec[2]
    off = 3 + n + 8
    start, length, count = struct.unpack(">QQQ", rec[off:off + 24])
    off += 24 + 64
    return rec[1], start, length, count, off + 8


def link_of(rec):
    """A LINK's kind, span and {(uplink, side): (up, chassis bytes or None)}."""
    _, _, _, _, off = common(rec)
    kind = rec[off]
    span, nports = struct.unpack(">QI", rec[off + 1:off + 13])
    off += 13
    ports = {}
    for _ in range(nports):
        n = rec[off]
        uplink = rec[off + 1:off + 1 + n].decode()
        off += 1 + n
        side = rec[off]
        up = rec[off + 9]
        off += 1 + 14 + 8
        nlisted = rec[off + 4]
        off += 5 + 14 * nlisted
        neighbor = rec[off]
        off += 1 + 16
        chassis = None
        if neighbor:
            off += 2
            chassis = bytes(rec[off + 2:off + 2 + rec[off + 1]])
            off += 2 + rec[off + 1]
            off += 2 + rec[off + 1]
            off += 2 + rec[off + 1]
        ports[(uplink, side)] = (up, chassis)
    return kind, span, ports


def links_heard(ledger):
    """The LINKs of windows in the ledger that name both switches."""
    n = 0
    for rec in ledger_entries(ledger):
        if rec[1] == REC_LINK:
            kind, _, ports = link_of(rec)
            if kind == KIND_WINDOW and ports.get(("up0", 1), (0, None))[1] == b"spine-7":
                n += 1
    return n


def check_ledger(check, ledger):
    """START's LINK, then a LINK after each WINDOW with its span, the ports up."""
    recs = ledger_entries(ledger)
    types = [r[1] for r in recs]
    check(REC_LINK in types, f"the ledger holds LINK records ({types})")
    kinds = []
    for i, rec in enumerate(recs):
        if rec[1] != REC_LINK:
            continue
        kind, span, ports = link_of(rec)
        kinds.append(kind)
        prev = recs[i - 1]
        if kind == KIND_START:
            check(prev[1] == 1, f"record {i}: the LINK of kind 1 follows the START ({prev[1]})")
            check(span == 0, f"record {i}: a START's LINK has no span ({span})")
        if kind == KIND_WINDOW:
            t, _, length, count, _ = common(prev)
            check(t == REC_WINDOW and span == length * count,
                  f"record {i}: the LINK of kind 3 follows its WINDOW ({t}) with its span "
                  f"({span}, {length * count})")
        check(set(ports) == {("up0", 0), ("up0", 1)} and all(p[0] == 1 for p in ports.values()),
              f"record {i}: both ports of up0, up ({ports})")
    check(kinds and kinds[0] == KIND_START and kinds.count(KIND_START) == 1,
          f"one LINK of kind 1, the first ({kinds})")
    check(kinds.count(KIND_WINDOW) == types.count(REC_WINDOW),
          f"a LINK for every WINDOW ({kinds.count(KIND_WINDOW)}, {types.count(REC_WINDOW)})")


def run(check, d, name, neighbors):
    """podcapd under a map declaring neighbors until WINDOWS LINKs name both switches;
    the ledger and the map's path."""
    os.makedirs(d)
    write_inputs(d)
    pd = Podcapd(PODCAPD, KEYGEN, d, "linkrec")
    pc, pp, fc, fp = neighbors
    pd.write_config(pd.appliance_yaml() + CONFIG.format(d=d, pid=os.getpid(), pc=pc, pp=pp,
                                                        fc=fc, fp=fp))
    if not check(pd.start(), f"{name}: podcapd starts"):
        print(pd.log())
        return None
    deadline = time.time() + 60
    while time.time() < deadline and links_heard(pd.ledger) < WINDOWS:
        time.sleep(0.2)
    check(links_heard(pd.ledger) >= WINDOWS,
          f"{name}: {WINDOWS} LINKs of windows name the fabric switch")
    rc = pd.stop()
    check(rc == 0, f"{name}: podcapd stops cleanly ({rc})")
    if check.failures:
        print(pd.log())
    return pd


def verify(pd, *opts):
    r = subprocess.run([VERIFY, "--key", pd.key + ".pub", "--ledger", pd.ledger,
                        "--pod-map", pd.config, *opts], capture_output=True, text=True)
    return r.returncode, r.stdout, r.stderr


def main():
    check = Checks()
    with tempfile.TemporaryDirectory(prefix="podcap-linkrec-") as d:
        good = run(check, f"{d}/good", "the cables declared", POD_SW + FABRIC_SW)
        if good is not None:
            check_ledger(check, good.ledger)
            rc, out, err = verify(good, "--json")
            check(rc == 0, f"podcap-verify passes the declared cables ({rc}: {err.strip()})")
            cables = json.loads(out).get("cables", {}) if rc == 0 else {}
            sides = {(p["uplink"], p["side"], p["down_ns"]) for p in cables.get("ports", [])}
            check(sides == {("up0", "pod", 0), ("up0", "fabric", 0)},
                  f"the report states both ports, never down ({cables})")
        moved = run(check, f"{d}/moved", "another fabric switch", POD_SW + ("spine-9", "swp1"))
        if moved is not None:
            rc, out, err = verify(moved)
            err = out + err
            want = ("uplink up0 fabric side: declared neighbour chassis spine-9 port swp1, "
                    "seen chassis spine-7 port Ethernet12")
            check(rc == 1 and want in err and "record " in err,
                  f"podcap-verify refuses another fabric switch, naming it ({rc}: {err.strip()})")
            check("pod side: declared" not in err,
                  f"the pod side, as declared, is not refused ({err.strip()})")
    return check.finish()


sys.exit(main())
