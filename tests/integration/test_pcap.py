#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""podcapd between two DPDK pcap ports: exact frames out, exact counters.

Frames of known pods, of no pod and malformed ones are fed to the pod-side
and the fabric-side port from pcap files. The test checks that exactly the
frames of declared pods come out on the other side, byte for byte and in
order, that every other frame is counted with its reason, and that the
capped pod's passed bytes stay within burst + cap x T.
"""
import os
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from daemon import Checks, Podcapd, query_telemetry, window_totals  # noqa: E402
from frames import (ETH_ARP, ETH_IPV4, ETH_IPV6, arp, eth, ipv4_packet,  # noqa: E402
                    ipv6_packet, read_pcap, write_pcap)

PODCAPD = os.environ.get("PODCAPD") or sys.argv[1]
KEYGEN = os.environ.get("PODCAP_KEYGEN") or sys.argv[2]
CAP_B_BPS = 100_000_000
BURST_B = 20000

CONFIG = """\
window: 1s
defaults:
  cap: 100Gbps
  burst: 1MB
  mode: police
dpdk:
  lcores: 0-1
  memory: 512MiB
  file_prefix: itest-{pid}
uplinks:
  - name: up0
    pod_port: net_pcap0,rx_pcap={d}/in_pod.pcap,tx_pcap={d}/out_pod.pcap
    fabric_port: net_pcap1,rx_pcap={d}/in_fab.pcap,tx_pcap={d}/out_fab.pcap
pods:
  - id: pod-a
    uplink: up0
    prefixes: [10.0.0.0/26, "fd00:a::/64"]
  - id: pod-b
    uplink: up0
    prefixes: [10.0.0.64/26]
    cap: 100Mbps
    burst: {burst}B
"""


def build_inputs():
    """Returns (frames up, frames down, expected per-pod/per-reason)."""
    up, down = [], []
    exp = {"a_up": [], "a_down": [], "b_up": [], "b_down": [],
           "unmapped_up": [], "unmapped_down": [], "malformed_up": [], "malformed_down": []}

    def add(lst, key, fr):
        lst.append(fr)
        exp[key].append(fr)

    for size in (46, 100, 576, 1000, 1500):
        add(up, "a_up", eth(ETH_IPV4, ipv4_packet("10.0.0.1", "10.0.0.200", size)))
        add(down, "a_down", eth(ETH_IPV4, ipv4_packet("10.0.0.200", "10.0.0.2", size), src=2, dst=1))
    add(up, "a_up", eth(ETH_IPV4, ipv4_packet("10.0.0.3", "10.0.0.200", 200), vlans=[(0x8100, 7)]))
    add(up, "a_up", eth(ETH_IPV4, ipv4_packet("10.0.0.4", "10.0.0.200", 200),
                        vlans=[(0x88A8, 100), (0x8100, 7)]))
    add(up, "a_up", eth(ETH_IPV6, ipv6_packet("fd00:a::1", "fd00:f::1", 300)))
    add(down, "a_down", eth(ETH_IPV6, ipv6_packet("fd00:f::1", "fd00:a::9", 300)))
    add(up, "a_up", eth(ETH_ARP, arp(1, "10.0.0.5", "10.0.0.254")))
    add(down, "a_down", eth(ETH_ARP, arp(2, "10.0.0.254", "10.0.0.5")))

    # no declared pod: fail closed
    add(up, "unmapped_up", eth(ETH_IPV4, ipv4_packet("10.0.0.130", "10.0.0.200", 400)))
    add(up, "unmapped_up", eth(ETH_IPV6, ipv6_packet("fd00:b::1", "fd00:f::1", 100)))
    add(up, "unmapped_up", eth(0x88CC, bytes(46)))  # LLDP carries no address
    add(down, "unmapped_down", eth(ETH_IPV4, ipv4_packet("10.0.0.200", "10.0.0.250", 400)))
    # malformed: runt, truncated IPv4 header, larger than max_frame
    add(up, "malformed_up", bytes(10))
    add(up, "malformed_up", eth(ETH_IPV4, ipv4_packet("10.0.0.1", "10.0.0.200", 60)[:12]))
    add(down, "malformed_down", eth(ETH_IPV4, ipv4_packet("10.0.0.200", "10.0.0.1", 1900)))

    # pod-b: far more than its burst, at once
    for _ in range(80):
        add(up, "b_up", eth(ETH_IPV4, ipv4_packet("10.0.0.70", "10.0.0.200", 986)))
        add(down, "b_down", eth(ETH_IPV4, ipv4_packet("10.0.0.200", "10.0.0.71", 986)))
    return up, down, exp


def main():
    up, down, exp = build_inputs()
    check = Checks()
    with tempfile.TemporaryDirectory(prefix="podcap-itest-") as d:
        write_pcap(f"{d}/in_pod.pcap", up)
        write_pcap(f"{d}/in_fab.pcap", down)
        pd = Podcapd(PODCAPD, KEYGEN, d, "itest")
        pd.write_config(pd.appliance_yaml() + CONFIG.format(d=d, pid=os.getpid(), burst=BURST_B))
        if not pd.start():
            print(pd.log())
            return 1
        time.sleep(2.5)
        telemetry = query_telemetry(f"itest-{os.getpid()}", "/podcap/stats,pod-a")
        rc = pd.stop()
        text = pd.stdout()
        log = pd.log()
        check(rc == 0, f"podcapd exits 0 on SIGTERM (got {rc})")
        out_fab = read_pcap(f"{d}/out_fab.pcap")
        out_pod = read_pcap(f"{d}/out_pod.pcap")

    tot = window_totals(text)
    a_fab = [f for f in out_fab if f not in exp["b_up"]]
    a_pod = [f for f in out_pod if f not in exp["b_down"]]
    check(a_fab == exp["a_up"], f"pod-a up: the {len(exp['a_up'])} frames come out on the fabric "
          f"port byte for byte, in order (got {len(a_fab)})")
    check(a_pod == exp["a_down"], f"pod-a down: the {len(exp['a_down'])} frames come out on the pod "
          f"port byte for byte, in order (got {len(a_pod)})")
    for key, lst in (("up", exp["a_up"]), ("down", exp["a_down"])):
        got = tot.get(("pod-a", key), [0, 0, 0, 0])
        want = [sum(len(f) for f in lst), len(lst), 0, 0]
        check(got == want, f"pod-a {key} counters passed/dropped {got} == {want}")
    for key, out_frames in (("up", out_fab), ("down", out_pod)):
        sent = exp["b_" + key]
        passed = [f for f in out_frames if f in sent]
        got = tot.get(("pod-b", key), [0, 0, 0, 0])
        check(got[1] == len(passed) and got[0] == sum(len(f) for f in passed),
              f"pod-b {key}: counted passed {got[1]} frames / {got[0]} B == {len(passed)} frames on the wire")
        check(got[1] + got[3] == len(sent) and got[0] + got[2] == sum(len(f) for f in sent),
              f"pod-b {key}: passed + dropped == offered ({got[1]}+{got[3]} == {len(sent)})")
        envelope = BURST_B + CAP_B_BPS / 8 * 0.01
        # all 80 frames are read within a few ms: the burst and a little more pass
        check(got[0] <= envelope, f"pod-b {key}: passed {got[0]} B <= burst + cap x 10 ms = {envelope:.0f} B")
        check(got[3] > 0, f"pod-b {key}: the cap dropped frames ({got[3]})")
        # the bucket starts empty and fills to its burst before the frames are read
        check(0 < got[1], f"pod-b {key}: the bucket let some frames through ({got[1]})")
    want = sum(len(f) for f in exp["a_up"])
    check(telemetry is not None and telemetry.get("up_passed_bytes") == want
          and telemetry.get("down_passed_frames") == len(exp["a_down"]),
          f"dpdk-telemetry.py /podcap/stats,pod-a shows the same counters ({want} B up)")
    for key in ("up", "down"):
        got = tot.get(("uplink", key), [0, 0, 0, 0])
        want = [sum(len(f) for f in exp["unmapped_" + key]), len(exp["unmapped_" + key]),
                sum(len(f) for f in exp["malformed_" + key]), len(exp["malformed_" + key])]
        check(got == want, f"uplink {key}: unmapped/malformed bytes,frames {got} == {want}")
    unexpected = [f for f in out_fab + out_pod
                  if f in exp["unmapped_up"] + exp["unmapped_down"] + exp["malformed_up"] + exp["malformed_down"]]
    check(not unexpected, "no unmapped or malformed frame crosses")
    if check.failures:
        print("--- podcapd stdout\n" + text + "--- podcapd stderr\n" + log)
    return check.finish()


sys.exit(main())
