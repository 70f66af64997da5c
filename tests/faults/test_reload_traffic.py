#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Pod-map reloads while both ports receive as fast as podcapd can take frames.

Both pcap ports replay a fixed cycle of frames forever (net_pcap
infinite_rx), so what was sent is known exactly: the port's receive count
at stop (podcapd logs every port's totals) is K frames, which are the first
K frames of the endless cycle. Afterwards, for each pod and direction, the
sum over the windows of passed + every drop reason must equal that pod's
share of those K frames, the passed frames and bytes must equal what the
other port wrote to its tx pcap, and the frames counted as unmapped must be
exactly the cycle's frames of no pod: a frame of a pod that persists is
never lost, double-counted, given to another pod or left unmapped while the
tables swap.

  broken  a reload with a broken file (syntax, semantics, a missing file, a
          directory, a file caught half-written, an empty one): the map in
          force stays, the log names file:line:col, no RELOAD is recorded.
  late    podcapd stopped (SIGSTOP) across two window boundaries, three
          times: one record covers the windows missed, nothing else changes.
  swaps   a SIGHUP every 100-300 ms with maps that add and remove other pods
          and change the caps: the tables swap at every window boundary.
"""
import json
import os
import random
import re
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "integration"))
sys.path.insert(0, HERE)
import faultlib  # noqa: E402
from faultlib import Checks, Podcapd, window_totals  # noqa: E402
from frames import (ETH_ARP, ETH_IPV4, ETH_IPV6, arp, eth, ipv4_packet,  # noqa: E402
                    ipv6_packet, read_pcap, write_pcap)

faultlib.enter("private mount and pid namespaces")

MODE, PODCAPD, KEYGEN, VERIFY = sys.argv[1:5]

HEAD = """\
window: 1s
dpdk:
  lcores: 0-1
  memory: 512MiB
  file_prefix: reloadtraffic-{pid}
uplinks:
  - name: up0
    pod_port: net_pcap0,rx_pcap={d}/pod_in.pcap,tx_pcap={d}/to_pod.pcap,infinite_rx=1
    fabric_port: net_pcap1,rx_pcap={d}/fabric_in.pcap,tx_pcap={d}/to_fabric.pcap,infinite_rx=1
pods:
"""
# the pods that carry the traffic: in every map, same prefixes, caps may change
POD_A = "  - id: pod-a\n    uplink: up0\n    prefixes: [10.0.0.0/24]\n" \
        "    cap: {cap_a}\n    burst: 100ms\n    mode: police\n"
POD_B = "  - id: pod-b\n    uplink: up0\n    prefixes: [10.0.1.0/24, fd00:b::/64]\n" \
        "    cap: {cap_b}\n    burst: 100ms\n    mode: police\n"
# shaped far above what pcap ports move: its queue is empty whenever podcapd stops
POD_S = "  - id: pod-s\n    uplink: up0\n    prefixes: [10.0.9.0/24]\n" \
        "    cap: {cap_s}\n    burst: 10ms\n    mode: shape\n"
EXTRA = "  - id: pod-x{i}\n    uplink: up0\n    prefixes: [10.50.{i}.0/24, fd00:50:{i}::/48]\n" \
        "    cap: {cap}\n"


def build_cycle():
    """(frame, pod or None) per direction, in the order the ports replay them."""
    rnd = random.Random(7)
    up, down = [], []
    kinds = ["a"] * 150 + ["b4"] * 40 + ["b6"] * 40 + ["s"] * 2 + ["n4", "n6", "arp", "x"] * 6
    for direction, out in (("up", up), ("down", down)):
        order = kinds[:]
        rnd.shuffle(order)
        for i, k in enumerate(order):
            size = rnd.choice([46, 100, 333, 600, 1000, 1486])
            host = i % 200 + 1
            if k in ("a", "b4", "s", "n4", "x"):
                net = {"a": "10.0.0", "b4": "10.0.1", "s": "10.0.9", "n4": "10.77.0", "x": "10.50.3"}[k]
                mine, far = f"{net}.{host}", f"192.0.2.{host}"
                src, dst = (mine, far) if direction == "up" else (far, mine)
                fr = eth(ETH_IPV4, ipv4_packet(src, dst, size))
            elif k in ("b6", "n6"):
                mine = f"fd00:b::{host:x}" if k == "b6" else f"fd00:77::{host:x}"
                src, dst = (mine, "2001:db8::1") if direction == "up" else ("2001:db8::1", mine)
                fr = eth(ETH_IPV6, ipv6_packet(src, dst, size - 40))
            else:
                # an ARP of an address of no pod: unmapped on an uplink of several pods
                fr = eth(ETH_ARP, arp(1 if direction == "up" else 2, "10.77.0.9", "10.77.0.10"))
            pod = {"a": "pod-a", "b4": "pod-b", "b6": "pod-b", "s": "pod-s"}.get(k)
            # pod-x3 exists only in some maps, and never while this runs in "broken"
            # mode; in "swaps" mode its frames are its own only when it is in force,
            # so they are left out of the exact per-pod sums and checked as a total
            if k == "x":
                pod = "x"
            # distinct bytes per frame so that a transmitted frame names its pod
            if k != "arp":
                fr = fr[:-2] + bytes([i >> 8, i & 0xFF])
            out.append((fr, pod))
    return up, down


def expected(cycle, k):
    """{pod: [frames, bytes]} of the first k frames of the endless cycle."""
    full, rest = divmod(k, len(cycle))
    tot = {}
    for i, (fr, pod) in enumerate(cycle):
        n = full + (1 if i < rest else 0)
        t = tot.setdefault(pod, [0, 0])
        t[0] += n
        t[1] += n * len(fr)
    return tot


def tx_by_pod(path, cycle):
    owner = {fr: pod for fr, pod in cycle}
    tot = {}
    for fr in read_pcap(path):
        t = tot.setdefault(owner.get(fr, "?"), [0, 0])
        t[0] += 1
        t[1] += len(fr)
    return tot


def port_totals(log):
    return {m[1]: [int(m[i]) for i in range(2, 6)] for m in re.finditer(
        r"port \d+ \((\S+)\) totals: rx (\d+) frames (\d+) bytes, tx (\d+) frames (\d+) bytes", log)}


def write_map(pd, d, cap_a="4Mbps", cap_b="3Mbps", cap_s="40Gbps", extras=()):
    text = pd.appliance_yaml() + HEAD.format(d=d, pid=os.getpid())
    text += POD_A.format(cap_a=cap_a) + POD_B.format(cap_b=cap_b) + POD_S.format(cap_s=cap_s)
    for i, cap in extras:
        text += EXTRA.format(i=i, cap=cap)
    pd.write_config(text)
    return text


def broken_reloads(check, pd, d, good):
    """Each kind of broken file, SIGHUP, and the map in force stays."""
    cut = good.index("fd00:b::/64") + 6
    kinds = [
        ("a YAML syntax error", lambda: pd.write_config(good.replace("[10.0.0.0/24]", "[10.0.0.0/24")),
         r":\d+:\d+: "),
        ("a semantic error", lambda: pd.write_config(good.replace("cap: 4Mbps", "cap: 4Mbpz")),
         r":\d+:\d+: \S"),
        ("a second pod with pod-a's id", lambda: pd.write_config(good + POD_A.format(cap_a="1Gbps")),
         r":\d+:\d+: .*pod-a"),
        ("a missing file", lambda: os.unlink(pd.config), r": cannot open: No such file"),
        ("a directory", lambda: os.unlink(pd.config) or os.mkdir(pd.config), r": cannot read: Is a directory"),
        ("a file caught half-written", lambda: half_write(pd.config, good[:cut]), r":\d+:\d+: "),
        ("an empty file caught just after O_TRUNC", lambda: half_write(pd.config, ""), r"(:\d+:\d+)?: .*empty"),
    ]
    for what, breakit, pattern in kinds:
        mark = len(pd.log())
        breakit()
        pd.signal(signal.SIGHUP)
        deadline = time.time() + 15
        while time.time() < deadline and "pod map in force stays" not in pd.log()[mark:]:
            time.sleep(0.05)
        log = pd.log()[mark:]
        check("pod map in force stays" in log and "reloaded" not in log,
              f"{what}: refused, the map in force stays")
        check(re.search(re.escape(pd.config) + pattern, log) is not None,
              f"{what}: the log names the file and where: {log.strip().splitlines()[:1]}")
        if os.path.isdir(pd.config):
            os.rmdir(pd.config)
        pd.write_config(good)
        time.sleep(0.4)


def half_write(path, text):
    """What a reader sees of a file rewritten in place, between truncate and the last write."""
    with open(path, "w") as f:
        f.write(text)


def valid_reloads(check, pd, d, seconds):
    rnd = random.Random(11)
    n = 0
    end = time.time() + seconds
    while time.time() < end:
        extras = [(i, rnd.choice(["10Mbps", "1Gbps", "3Gbps"])) for i in range(1, 9) if rnd.random() < 0.5]
        write_map(pd, d, cap_a=rnd.choice(["2Mbps", "4Mbps", "6Mbps"]),
                  cap_b=rnd.choice(["1Mbps", "3Mbps", "5Mbps"]),
                  cap_s=rnd.choice(["40Gbps", "80Gbps"]), extras=extras)
        pd.signal(signal.SIGHUP)
        n += 1
        time.sleep(rnd.uniform(0.1, 0.3))
    return n


def held_up(pd):
    """Stops podcapd from just after a window boundary until two boundaries later.

    The control thread then moves the workers two windows on at once, as after
    a step of the realtime clock: the window it closes and the one the
    workers move to must still be counted in different banks.
    """
    for _ in range(3):
        while time.time() % 1.0 < 0.2 or time.time() % 1.0 > 0.3:
            time.sleep(0.01)
        pd.signal(signal.SIGSTOP)
        time.sleep(2.1)
        pd.signal(signal.SIGCONT)
        time.sleep(1.5)


def main():
    check = Checks()
    up, down = build_cycle()
    with tempfile.TemporaryDirectory(prefix="podcap-reloadtraffic-") as d:
        write_pcap(f"{d}/pod_in.pcap", [fr for fr, _ in up])
        write_pcap(f"{d}/fabric_in.pcap", [fr for fr, _ in down])
        pd = Podcapd(PODCAPD, KEYGEN, d, "reloadtraffic")
        good = write_map(pd, d)
        t0 = time.time()
        if not check(pd.start(), "podcapd starts, both ports replaying their cycle"):
            print(pd.log())
            return 1
        time.sleep(1.5)
        sighups = 0
        if MODE == "broken":
            broken_reloads(check, pd, d, good)
        elif MODE == "late":
            held_up(pd)
        else:
            sighups = valid_reloads(check, pd, d, 10)
        time.sleep(1.2)
        check(pd.proc.poll() is None, "podcapd kept running")
        check(pd.stop() == 0, "podcapd stops cleanly")
        print(f"ran {time.time() - t0:.1f} s, {sighups} SIGHUPs")

        log = pd.log()
        ports = port_totals(log)
        if not check("net_pcap0" in ports and "net_pcap1" in ports, "podcapd logged every port's totals"):
            print(log[-3000:])
            return check.finish()
        r = subprocess.run([VERIFY, "--key", pd.key + ".pub", "--ledger", pd.ledger, "--json"],
                           capture_output=True, text=True)
        v = json.loads(r.stdout) if r.stdout.startswith("{") else {}
        # The verifier holds each record to burst + cap x its length. The
        # workers switch windows at the boundary itself, however late the
        # control thread (on a core it shares with everything else here, or
        # stopped) gets to close it, so pods held at their caps stay within.
        fails = v.get("failures", [])
        check(r.returncode == 0 and v.get("ok") is True and not fails,
              f"the ledger verifies, envelope included (exit {r.returncode}, failures: {fails[:3]})")
        reloads = [e for e in v.get("events", []) if e["event"] == "reload"]
        windows = window_totals(pd.stdout())

        for direction, cycle, rx, tx, txfile in (("up", up, "net_pcap0", "net_pcap1", "to_fabric.pcap"),
                                                 ("down", down, "net_pcap1", "net_pcap0", "to_pod.pcap")):
            k = ports[rx][0]
            want = expected(cycle, k)
            sent = tx_by_pod(f"{d}/{txfile}", cycle)
            print(f"{direction}: {k} frames received, {ports[tx][2]} transmitted")
            check(k > 20 * len(cycle), f"{direction}: the port replayed its cycle many times ({k} frames)")
            vp = {p["pod"]: p for p in v.get("pods", []) if p["dir"] == direction}
            link = next((x for x in v.get("links", []) if x["dir"] == direction), {})
            counted_total = 0
            for pod in ("pod-a", "pod-b", "pod-s"):
                p = vp.get(pod, {})
                drops = p.get("drops", {})
                got_f = p.get("frames", 0) + sum(x["frames"] for x in drops.values())
                got_b = p.get("bytes", 0) + sum(x["bytes"] for x in drops.values())
                counted_total += got_f
                check([got_f, got_b] == want[pod],
                      f"{direction} {pod}: passed + dropped over the windows {[got_f, got_b]} "
                      f"= sent {want[pod]}")
                w = windows.get((pod, direction), [0, 0, 0, 0])
                check([w[1] + w[3], w[0] + w[2]] == want[pod],
                      f"{direction} {pod}: the printed windows agree with the ledger")
                check([p.get("frames", 0), p.get("bytes", 0)] == sent.get(pod, [0, 0]),
                      f"{direction} {pod}: passed {[p.get('frames'), p.get('bytes')]} "
                      f"= written by the other port {sent.get(pod)}")
                check(drops.get("queue_full", {}).get("frames", 1) == 0 and
                      drops.get("tx_full", {}).get("frames", 1) == 0,
                      f"{direction} {pod}: drops only over the cap ({ {k2: x['frames'] for k2, x in drops.items()} })")
            # the frames of pod-x3 are pod-x3's while a map has it, else unmapped
            x3 = vp.get("pod-x3", {})
            x3_f = x3.get("frames", 0) + sum(x["frames"] for x in x3.get("drops", {}).values())
            unmapped = link.get("unmapped", {}).get("frames")
            check(unmapped is not None and unmapped + x3_f == want[None][0] + want["x"][0],
                  f"{direction}: unmapped {unmapped} + pod-x3 {x3_f} = the cycle's frames of no "
                  f"persistent pod {want[None][0] + want['x'][0]}")
            check([x3.get("frames", 0), x3.get("bytes", 0)] == sent.get("x", [0, 0]),
                  f"{direction} pod-x3: passed = written by the other port {sent.get('x')}")
            if MODE != "swaps":
                check(x3_f == 0, f"{direction}: no pod-x3 ever in force")
            check(link.get("malformed", {}).get("frames") == 0, f"{direction}: nothing malformed")
            others = sum(p["frames"] + sum(x["frames"] for x in p["drops"].values())
                         for name, p in vp.items() if name not in ("pod-a", "pod-b", "pod-s", "pod-x3"))
            check(others == 0, f"{direction}: the pods added and removed saw no frame ({others})")
            check(counted_total + x3_f + (unmapped or 0) == k,
                  f"{direction}: every frame received is counted once ({counted_total + x3_f + (unmapped or 0)} of {k})")
            check(ports[tx][2] == sum(x[0] for x in sent.values()) and "?" not in sent,
                  f"{direction}: the tx pcap holds what the port sent, and only frames of the cycle")
        if MODE == "late":
            starts = sorted({ln.split()[1] for ln in pd.stdout().splitlines() if ln.startswith("window ")})
            secs = [time.mktime(time.strptime(x, "%Y-%m-%dT%H:%M:%SZ")) for x in starts]
            jumps = sum(1 for a, b in zip(secs, secs[1:]) if b - a >= 2)
            check(jumps >= 2, f"records covered the windows missed while stopped ({jumps} times)")
        if MODE != "swaps":
            check(reloads == [], f"no RELOAD was recorded ({len(reloads)})")
            check("reloaded" not in log, "no reload was logged")
        else:
            digests = {e["podmap"] for e in reloads}
            check(len(reloads) >= 5 and len(digests) >= 5,
                  f"the map was swapped at {len(reloads)} window boundaries ({len(digests)} maps)")
        if check.failures:
            print(json.dumps(v.get("failures"), indent=1)[:3000] + r.stderr)
            print(pd.stdout()[-6000:])
            print(log[-4000:])
    return check.finish()


sys.exit(main())
