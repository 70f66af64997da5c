#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Pods told apart by their VLAN tags on a shared uplink (pods[].vlan).

One uplink carries pod-a (802.1Q VLAN 100), pod-b (QinQ 200/300) and pod-c
(no vlan). Each side is fed the honest frames of each pod and the frames a
spoofing pod sends: a neighbour's source address under its own tags, the
neighbour's address untagged, under a wrong VLAN id or under half of a
QinQ stack, and the same towards the pods from the fabric. The test checks
that exactly the honest frames leave, byte for byte with their tags, in
order; that every spoofed frame is counted as spoofed in the window lines
and on /metrics and as unmapped in the signed ledger, which podcap-verify
accepts; that the honest pods' counters are their frames alone; and that
what each side received adds up to what was passed and dropped.
"""
import json
import os
import re
import subprocess
import sys
import tempfile
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from daemon import Checks, Podcapd  # noqa: E402
from frames import (ETH_ARP, ETH_IPV4, ETH_IPV6, arp, eth, ipv4_packet,  # noqa: E402
                    ipv6_packet, read_pcap, write_pcap)

PODCAPD = os.environ.get("PODCAPD") or sys.argv[1]
KEYGEN = os.environ.get("PODCAP_KEYGEN") or sys.argv[2]
VERIFY = os.environ.get("PODCAP_VERIFY") or sys.argv[3]
Q, AD = 0x8100, 0x88A8

CONFIG = """\
window: 1s
defaults:
  cap: 100Gbps
  burst: 1MB
  mode: police
dpdk:
  lcores: 0-1
  memory: 512MiB
  file_prefix: vlan-{pid}
uplinks:
  - name: up0
    pod_port: net_pcap0,rx_pcap={d}/in_pod.pcap,tx_pcap={d}/out_pod.pcap
    fabric_port: net_pcap1,rx_pcap={d}/in_fab.pcap,tx_pcap={d}/out_fab.pcap
pods:
  - id: pod-a
    uplink: up0
    prefixes: [10.0.0.0/26, "fd00:a::/64"]
    vlan: 100
  - id: pod-b
    uplink: up0
    prefixes: [10.0.0.64/26]
    vlan: [200, 300]
  - id: pod-c
    uplink: up0
    prefixes: [10.0.0.128/26]
"""

A_TAG = [(Q, 100)]
B_TAG = [(AD, 200), (Q, 300)]
FAB = "10.0.1.1"


def up4(src, vlans, size=200):
    return eth(ETH_IPV4, ipv4_packet(src, FAB, size), vlans=vlans)


def down4(dst, vlans, size=200):
    return eth(ETH_IPV4, ipv4_packet(FAB, dst, size), vlans=vlans, src=2, dst=1)


def build():
    """{dir: [(frame, outcome)]}: outcome a pod id, 'spoofed', 'unmapped' or 'malformed'."""
    up = []
    for size in (46, 500, 1500):
        up.append((up4("10.0.0.1", A_TAG, size), "pod-a"))
        up.append((up4("10.0.0.65", B_TAG, size), "pod-b"))
    # priority bits are the switch's: still pod-a's tag
    up.append((up4("10.0.0.2", [(Q, 0xA000 | 100)]), "pod-a"))
    # an outer 802.1Q tag, as a switch configured for double 802.1Q sends
    up.append((up4("10.0.0.66", [(Q, 200), (Q, 300)]), "pod-b"))
    up.append((eth(ETH_IPV6, ipv6_packet("fd00:a::1", "fd00:f::1", 300), vlans=A_TAG), "pod-a"))
    up.append((eth(ETH_ARP, arp(1, "10.0.0.5", "10.0.0.254"), vlans=A_TAG), "pod-a"))
    # a pod without vlan is its address's, tagged or not, as before
    up.append((up4("10.0.0.129", []), "pod-c"))
    up.append((up4("10.0.0.130", A_TAG), "pod-c"))
    # pod-b spends pod-a's cap with pod-a's address, and the other way round
    for _ in range(20):
        up.append((up4("10.0.0.3", B_TAG, 1400), "spoofed"))
    up.append((up4("10.0.0.67", A_TAG), "spoofed"))
    # pod-a's address untagged, under another VLAN id, under half a stack
    up.append((up4("10.0.0.1", []), "spoofed"))
    up.append((up4("10.0.0.1", [(Q, 101)]), "spoofed"))
    up.append((up4("10.0.0.65", [(AD, 200)]), "spoofed"))
    up.append((up4("10.0.0.65", [(Q, 300)]), "spoofed"))
    up.append((up4("10.0.0.65", [(AD, 300), (Q, 200)]), "spoofed"))
    up.append((up4("10.0.0.1", [(Q, 100), (Q, 100)]), "spoofed"))
    up.append((eth(ETH_IPV6, ipv6_packet("fd00:a::1", "fd00:f::1", 300)), "spoofed"))
    up.append((eth(ETH_ARP, arp(1, "10.0.0.5", "10.0.0.254")), "spoofed"))
    # pod-a's tag, an address of no pod: unmapped as ever
    up.append((up4("10.0.2.1", A_TAG), "unmapped"))
    # cut inside the inner tag
    up.append((eth(ETH_IPV4, b"", vlans=B_TAG)[:18], "malformed"))

    down = []
    for size in (46, 1500):
        down.append((down4("10.0.0.1", A_TAG, size), "pod-a"))
        down.append((down4("10.0.0.65", B_TAG, size), "pod-b"))
    down.append((down4("10.0.0.129", []), "pod-c"))
    down.append((down4("10.0.0.1", []), "spoofed"))
    down.append((down4("10.0.0.1", B_TAG), "spoofed"))
    down.append((down4("10.0.0.65", A_TAG), "spoofed"))
    return {"up": up, "down": down}


def want_counts(feed):
    """{(who, dir): [bytes, frames]} for pods and the three drop reasons."""
    want = {}
    for d, cases in feed.items():
        for fr, who in cases:
            c = want.setdefault((who, d), [0, 0])
            c[0] += len(fr)
            c[1] += 1
    return want


def window_lines(text):
    """The window lines summed: pods [pass B, F, drop B, F]; the uplink's by reason [B, F]."""
    tot = {}
    for line in text.splitlines():
        m = re.match(r"window \S+ (\S+) (up|down) passed (\d+) (\d+) dropped (\d+) (\d+) ", line)
        if m:
            t = tot.setdefault((m[1], m[2]), [0, 0, 0, 0])
            for i in range(4):
                t[i] += int(m[3 + i])
            continue
        m = re.match(r"window \S+ uplink up0 (up|down) unmapped (\d+) (\d+) malformed (\d+) (\d+)"
                     r"(?: spoofed (\d+) (\d+))?$", line)
        if m:
            for i, reason in enumerate(("unmapped", "malformed", "spoofed")):
                t = tot.setdefault((reason, m[1]), [0, 0])
                t[0] += int(m[2 + 2 * i] or 0)
                t[1] += int(m[3 + 2 * i] or 0)
    return tot


def metrics(port):
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    with opener.open(f"http://127.0.0.1:{port}/metrics", timeout=10) as r:
        text = r.read().decode()
    samples = {}
    for line in text.splitlines():
        m = re.match(r"^(\w+)\{(.*)\} (\S+)$", line)
        if m:
            samples[(m[1], frozenset(re.findall(r'(\w+)="([^"]*)"', m[2])))] = float(m[3])
    return samples


def sample(s, name, **labels):
    return s.get((name, frozenset(labels.items())))


def seen(s, d):
    """Frames of direction d that /metrics has counted, passed or dropped for any reason."""
    n = 0
    for p in ("pod-a", "pod-b", "pod-c"):
        n += sample(s, "podcap_passed_frames_total", pod=p, direction=d) or 0
        for r in ("over_cap", "queue_full", "tx_full"):
            n += sample(s, "podcap_dropped_frames_total", pod=p, direction=d, reason=r) or 0
    for r in ("unmapped", "malformed", "spoofed"):
        n += sample(s, "podcap_uplink_dropped_frames_total", uplink="up0", direction=d, reason=r) or 0
    return n


def wait_counted(pd, feed, timeout=90):
    """The scrape once /metrics counts every frame fed, or the last one at the deadline."""
    deadline = time.time() + timeout
    s = {}
    while time.time() < deadline:
        s = metrics(pd.port())
        if all(seen(s, d) == len(cases) for d, cases in feed.items()):
            return s
        time.sleep(0.2)
    return s


def main():
    check = Checks()
    feed = build()
    want = want_counts(feed)
    with tempfile.TemporaryDirectory(prefix="podcap-vlan-") as d:
        write_pcap(f"{d}/in_pod.pcap", [fr for fr, _ in feed["up"]])
        write_pcap(f"{d}/in_fab.pcap", [fr for fr, _ in feed["down"]])
        pd = Podcapd(PODCAPD, KEYGEN, d, "vlan")
        pd.write_config(pd.appliance_yaml() + CONFIG.format(d=d, pid=os.getpid()))
        if not check(pd.start(), "podcapd starts"):
            print(pd.log())
            return check.finish()
        s = wait_counted(pd, feed)
        rc = pd.stop()
        check(rc == 0, f"podcapd exits 0 on SIGTERM (got {rc})")
        text, log = pd.stdout(), pd.log()
        out = {"up": read_pcap(f"{d}/out_fab.pcap"), "down": read_pcap(f"{d}/out_pod.pcap")}
        r = subprocess.run([VERIFY, "--key", pd.key + ".pub", "--ledger", pd.ledger, "--pod-map",
                            pd.config, "--json"], capture_output=True, text=True)
    try:
        ver = json.loads(r.stdout)
    except json.JSONDecodeError:
        ver = {}
    check(r.returncode == 0 and ver.get("ok") is True,
          f"podcap-verify accepts the ledger (exit {r.returncode}): {ver.get('result')}")

    tot = window_lines(text)
    by_pod = {(e["pod"], e["dir"]): e for e in ver.get("pods", [])}
    by_link = {(e["link"], e["dir"]): e for e in ver.get("links", [])}
    for d, cases in feed.items():
        passing = [fr for fr, who in cases if who.startswith("pod-")]
        check(out[d] == passing, f"{d}: the {len(passing)} honest frames leave with their tags, "
              f"byte for byte, in order (got {len(out[d])})")
        for p in ("pod-a", "pod-b", "pod-c"):
            b, f = want.get((p, d), [0, 0])
            check(tot.get((p, d)) == [b, f, 0, 0],
                  f"{p} {d}: window lines passed/dropped {tot.get((p, d))} == {[b, f, 0, 0]}")
            e = by_pod.get((p, d), {})
            check([e.get("bytes"), e.get("frames")] == [b, f],
                  f"{p} {d}: the ledger passed {e.get('frames')} frames / {e.get('bytes')} B == {f} / {b} B")
            got = [sample(s, "podcap_passed_bytes_total", pod=p, direction=d),
                   sample(s, "podcap_passed_frames_total", pod=p, direction=d)]
            check(got == [b, f], f"{p} {d}: /metrics passed {got} == {[b, f]}")
        for reason in ("unmapped", "malformed", "spoofed"):
            w = want.get((reason, d), [0, 0])
            check(tot.get((reason, d), [0, 0]) == w,
                  f"{d}: window lines {reason} {tot.get((reason, d), [0, 0])} == {w} (bytes, frames)")
            got = [sample(s, "podcap_uplink_dropped_bytes_total", uplink="up0", direction=d, reason=reason),
                   sample(s, "podcap_uplink_dropped_frames_total", uplink="up0", direction=d, reason=reason)]
            check(got == w, f"{d}: /metrics {reason} {got} == {w}")
        # the records have two reasons for frames of no pod: spoofed ones are unmapped there
        e = by_link.get(("up0", d), {})
        w = [want.get(("unmapped", d), [0, 0])[i] + want.get(("spoofed", d), [0, 0])[i] for i in (0, 1)]
        got = [e.get("unmapped", {}).get("bytes"), e.get("unmapped", {}).get("frames")]
        check(got == w, f"{d}: the ledger's unmapped {got} == unmapped + spoofed {w}")
        m = want.get(("malformed", d), [0, 0])
        got = [e.get("malformed", {}).get("bytes"), e.get("malformed", {}).get("frames")]
        check(got == m, f"{d}: the ledger's malformed {got} == {m}")
        # every frame fed is counted once: passed by a pod, or dropped with a reason
        fed = [sum(len(fr) for fr, _ in cases), len(cases)]
        ledger = [sum((by_pod.get((p, d), {}).get(k) or 0) for p in ("pod-a", "pod-b", "pod-c"))
                  + sum((e.get(r, {}).get(k) or 0) for r in ("unmapped", "malformed"))
                  for k in ("bytes", "frames")]
        check(ledger == fed, f"{d}: the ledger's window totals {ledger} == what the port received {fed}")
    if check.failures:
        print("--- podcapd stdout\n" + text[-4000:] + "--- podcapd stderr\n" + log[-4000:])
        print(r.stdout[-2000:] + r.stderr[-2000:])
    return check.finish()


sys.exit(main())
