#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""LLDP frames into podcapd: read, named on /metrics, never forwarded.

Two uplinks between DPDK pcap ports: up0 tells its pods apart by prefixes,
up1 carries one pod without prefixes (whose frames are otherwise never
looked at). On each uplink a different "switch" speaks LLDP on the pod
side and on the fabric side (one frame captured from Debian's lldpd,
tests/unit/lldp/, the others built), among IPv4 frames of the pods; up0's
fabric side also sends an LLDP frame without its TTL TLV. /metrics must
then name the four neighbours, count the malformed frame as malformed and
the rest as ok, show every link up, and pass `promtool check metrics`; no
LLDP frame may appear in any port's tx pcap, while the pods' frames do,
and the LLDP frames are counted as frames of no pod (unmapped), as before.
"""
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from daemon import Checks, Podcapd  # noqa: E402
from frames import (ETH_IPV4, ETH_LLDP, LLDP_NEAREST_BRIDGE, eth, ipv4_packet, lldp,  # noqa: E402
                    lldp_tlv, mac, read_pcap, write_pcap)

PODCAPD = os.environ.get("PODCAPD") or sys.argv[1]
KEYGEN = os.environ.get("PODCAP_KEYGEN") or sys.argv[2]
PROMTOOL = os.environ.get("PROMTOOL") or shutil.which("promtool") or "/usr/bin/promtool"
SOURCE = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

CONFIG = """\
window: 1s
defaults:
  cap: 100Gbps
  burst: 1MB
  mode: police
dpdk:
  lcores: 0-1
  memory: 512MiB
  file_prefix: lldp-{pid}
uplinks:
  - name: up0
    pod_port: net_pcap0,rx_pcap={d}/in_pod0.pcap,tx_pcap={d}/out_pod0.pcap
    fabric_port: net_pcap1,rx_pcap={d}/in_fab0.pcap,tx_pcap={d}/out_fab0.pcap
  - name: up1
    pod_port: net_pcap2,rx_pcap={d}/in_pod1.pcap,tx_pcap={d}/out_pod1.pcap
    fabric_port: net_pcap3,rx_pcap={d}/in_fab1.pcap,tx_pcap={d}/out_fab1.pcap
pods:
  - id: pod-a
    uplink: up0
    prefixes: [10.0.0.0/26]
  - id: pod-c
    uplink: up1
"""


SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$')
LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')


def parse(text):
    """({(name, frozenset(labels)): value}, {family: type}, [samples of no family]);
    label values as written, escapes and all."""
    samples, types, stray = {}, {}, []
    for line in text.splitlines():
        m = re.match(r"# TYPE (\S+) (\S+)$", line)
        if m:
            types[m[1]] = m[2]
            continue
        if line.startswith("#") or not line:
            continue
        m = SAMPLE.match(line)
        if not m:
            stray.append(line)
            continue
        name = m[1]
        samples[(name, frozenset(LABEL.findall(m[2] or "")))] = float(m[3])
        fam = re.sub(r"_(sum|count)$", "", name) if name not in types else name
        if fam not in types:
            stray.append(name)
    return samples, types, stray


def value(samples, name, **labels):
    return samples.get((name, frozenset(labels.items())))


def lldpd_frame():
    with open(os.path.join(SOURCE, "tests", "unit", "lldp", "lldpd-mac.bin"), "rb") as f:
        return f.read()


# (uplink, side): the frames that side's switch sends, and who it says it is
SWITCHES = {
    ("up0", "pod"): ([lldpd_frame()], ("02:00:00:aa:00:01", "02:00:00:aa:00:01", "leaf-sw01")),
    ("up0", "fabric"): ([lldp(b"spine-7", b"Ethernet12", name=b"spine-7.fabric", src=7)] * 2,
                        ("spine-7", "Ethernet12", "spine-7.fabric")),
    ("up1", "pod"): ([lldp(b"tor-3", b"swp9", name=b'tor "3"\\', src=3,
                           vlans=[(0x8100, 100)])],
                     ("tor-3", "swp9", 'tor \\"3\\"\\\\\\\\')),
    ("up1", "fabric"): ([lldp(b"\x00\x1b\x21\x3c\x4d\x5e", b"Ethernet1/2", src=9,
                              chassis_subtype=4)],
                        ("00:1b:21:3c:4d:5e", "Ethernet1/2", "")),
}
# no TTL TLV: refused by the parser, counted as malformed
MALFORMED = (LLDP_NEAREST_BRIDGE + mac(5) + struct.pack("!H", ETH_LLDP)
             + lldp_tlv(1, b"\x07bad") + lldp_tlv(2, b"\x05p1"))


def inputs():
    """The frames into each port: a pod's IPv4 frames around its switch's LLDP frames."""
    up = [eth(ETH_IPV4, ipv4_packet("10.0.0.1", "10.0.0.200", 200))] * 3
    down = [eth(ETH_IPV4, ipv4_packet("10.0.0.200", "10.0.0.1", 300), src=2, dst=1)] * 3
    files = {}
    for (u, side), (frames, _) in SWITCHES.items():
        ip = up if side == "pod" else down
        extra = [MALFORMED] if (u, side) == ("up0", "fabric") else []
        files[f"in_{side[:3]}{u[-1]}"] = ip[:2] + frames + extra + ip[2:]
    return files


def get(url):
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    with opener.open(url, timeout=10) as r:
        return r.read()


def neighbor(s, uplink, side):
    """The labels of the one podcap_lldp_neighbor_info sample of a port, or None."""
    found = [dict(labels) for (name, labels), v in s.items()
             if name == "podcap_lldp_neighbor_info" and v == 1 and
             ("uplink", uplink) in labels and ("side", side) in labels]
    return found[0] if len(found) == 1 else None


def frames_ok(s):
    want = sum(len(f) for f, _ in SWITCHES.values())
    got = sum(value(s, "podcap_lldp_frames_total", uplink=u, side=sd, result="ok") or 0
              for (u, sd) in SWITCHES)
    bad = value(s, "podcap_lldp_frames_total", uplink="up0", side="fabric", result="malformed")
    return got == want and bad == 1


def promtool_check(check, d, body):
    if not os.access(PROMTOOL, os.X_OK):
        return False
    path = f"{d}/metrics.txt"
    with open(path, "wb") as f:
        f.write(body)
    with open(path, "rb") as f:
        r = subprocess.run([PROMTOOL, "check", "metrics"], stdin=f, capture_output=True, text=True)
    out = (r.stdout + r.stderr).strip()
    check(r.returncode == 0 and out == "",
          f"promtool check metrics: exit {r.returncode}, output {out or '(none)'!r}")
    return True


def check_ports(check, d, files):
    """No LLDP frame leaves; every IPv4 frame of a pod does, on the other port."""
    other = {"pod0": "fab0", "fab0": "pod0", "pod1": "fab1", "fab1": "pod1"}
    for port, peer in other.items():
        out = read_pcap(f"{d}/out_{port}.pcap")
        lldp_out = [f for f in out if any(f[o:o + 2] == b"\x88\xcc" for o in (12, 16, 20))]
        ip_in = [f for f in files[f"in_{peer}"] if f[12:14] == b"\x08\x00"]
        check(not lldp_out, f"out_{port}.pcap holds no LLDP frame ({len(lldp_out)})")
        check(out == ip_in, f"out_{port}.pcap holds the {len(ip_in)} IPv4 frames of in_{peer} "
              f"in order ({len(out)} frames)")


def check_metrics(check, s):
    for (u, side), (frames, (chassis, port, name)) in SWITCHES.items():
        n = neighbor(s, u, side)
        want = {"uplink": u, "side": side, "chassis_id": chassis, "port_id": port,
                "system_name": name}
        check(n == want, f"{u} {side}: neighbour {n}, want {want}")
        up = value(s, "podcap_link_up", uplink=u, side=side)
        check(up == 1, f"{u} {side}: podcap_link_up {up}")
        speed = value(s, "podcap_link_speed_bytes_per_second", uplink=u, side=side)
        check(speed == 10e9 / 8, f"{u} {side}: {speed} bytes per second, net_pcap's 10 Gbit/s")
        changes = value(s, "podcap_link_changes_total", uplink=u, side=side)
        check(changes == 0, f"{u} {side}: no link change ({changes})")
        ok = value(s, "podcap_lldp_frames_total", uplink=u, side=side, result="ok")
        check(ok == len(frames), f"{u} {side}: {ok} LLDP frames ok, sent {len(frames)}")
        for r in ("rate_limited", "queue_full"):
            got = value(s, "podcap_lldp_frames_total", uplink=u, side=side, result=r)
            check(got == 0, f"{u} {side}: {got} LLDP frames {r}")
    # the LLDP frames are no pod's: unmapped, as any frame of no pod
    lldp_up0 = len(SWITCHES[("up0", "fabric")][0]) + 1
    um = value(s, "podcap_uplink_dropped_frames_total", uplink="up0", direction="down",
               reason="unmapped")
    check(um == lldp_up0, f"up0 down: {um} frames unmapped, {lldp_up0} LLDP frames sent")
    um = value(s, "podcap_uplink_dropped_frames_total", uplink="up1", direction="up",
               reason="unmapped")
    check(um == 1, f"up1 up (one pod, no prefixes): {um} frames unmapped, 1 LLDP frame sent")
    passed = value(s, "podcap_passed_frames_total", pod="pod-c", direction="up")
    check(passed == 3, f"pod-c passed {passed} frames up: its 3 IPv4 frames, not the LLDP one")


def main():
    check = Checks()
    with tempfile.TemporaryDirectory(prefix="podcap-lldp-") as d:
        files = inputs()
        for name, frames in files.items():
            write_pcap(f"{d}/{name}.pcap", frames)
        pd = Podcapd(PODCAPD, KEYGEN, d, "lldp")
        pd.write_config(pd.appliance_yaml() + CONFIG.format(d=d, pid=os.getpid()))
        if not check(pd.start(), "podcapd starts"):
            print(pd.log())
            return 1
        deadline = time.time() + 20
        body = b""
        while time.time() < deadline:
            body = get(f"http://127.0.0.1:{pd.port()}/metrics")
            if frames_ok(parse(body.decode())[0]):
                break
            time.sleep(0.2)
        s, types, stray = parse(body.decode())
        check(frames_ok(s), "every LLDP frame was read: the good ones ok, the one without "
              "a TTL malformed")
        linted = promtool_check(check, d, body)
        check(not stray, f"every sample belongs to a declared family ({stray[:3]})")
        for fam in ("podcap_link_up", "podcap_link_speed_bytes_per_second",
                    "podcap_link_changes_total", "podcap_lldp_neighbor_info",
                    "podcap_lldp_frames_total"):
            check(fam in types, f"{fam} is declared")
        check_metrics(check, s)
        log = pd.log()
        check("LLDP neighbour chassis spine-7 port Ethernet12 (spine-7.fabric)" in log,
              "the log names a new neighbour")
        check("an LLDP frame refused (LLDPDU: no time to live TLV)" in log,
              "the log says why a frame was refused")
        rc = pd.stop()
        check(rc == 0, f"podcapd stops cleanly ({rc})")
        check_ports(check, d, files)
        if check.failures:
            print(body.decode())
            print(pd.log())
    rc = check.finish()
    if rc == 0 and not linted:
        print(f"SKIP: promtool not found ({PROMTOOL})")
        return 77
    return rc


sys.exit(main())
