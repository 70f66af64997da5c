#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Two workers on one uplink: every frame counted once, one cap for both.

Each port of the uplink has two RX and two TX queues (net_pcap with two
rx_pcap and two tx_pcap files), and the uplink two workers (the second
sharing a CPU with the control thread on a 2-core machine).

  exact    each queue replays its own file once: the frames of the pod on
           RX queue q leave on TX queue q of the other port, byte for byte
           and in order, and the counters equal what was offered.
  shared   both queues replay a capped pod's frames forever, each alone
           well above the cap; the sum the workers pass stays within
           burst + cap x T (podcap-verify checks every window of the
           signed ledger against it), does not fall far below the cap, and
           a reload that changes the cap comes in force under traffic, at a
           window boundary. The windows' passed + dropped + unmapped equal
           what the ports received, their passed what the other port sent.
"""
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from daemon import Checks, Podcapd, window_totals  # noqa: E402
from frames import ETH_IPV4, eth, ipv4_packet, read_pcap, write_pcap  # noqa: E402

PODCAPD = os.environ.get("PODCAPD") or sys.argv[1]
KEYGEN = os.environ.get("PODCAP_KEYGEN") or sys.argv[2]
VERIFY = os.environ.get("PODCAP_VERIFY") or sys.argv[3]

HEAD = """\
window: 1s
defaults:
  cap: 100Gbps
  burst: 1MB
  mode: police
dpdk:
  lcores: 0-1,2@0
  memory: 512MiB
  file_prefix: workers-{pid}
uplinks:
  - name: up0
    pod_port: net_pcap0,rx_pcap={d}/pod0.pcap,rx_pcap={d}/pod1.pcap,{tx}{inf}
    fabric_port: net_pcap1,rx_pcap={d}/fab0.pcap,rx_pcap={d}/fab1.pcap,{tx2}{inf}
    workers: 2
pods:
  - id: pod-a
    uplink: up0
    prefixes: [10.0.0.0/26]
  - id: pod-b
    uplink: up0
    prefixes: [10.0.0.64/26]
    cap: {cap_b}
    burst: 100ms
"""


def up_frame(src, size):
    return eth(ETH_IPV4, ipv4_packet(src, "10.0.0.200", size))


def down_frame(dst, size):
    return eth(ETH_IPV4, ipv4_packet("10.0.0.200", dst, size), src=2, dst=1)


def tx_files(stem):
    return f"tx_pcap={stem}0.pcap,tx_pcap={stem}1.pcap"


def port_totals(log):
    return {m[1]: [int(m[i]) for i in range(2, 6)] for m in re.finditer(
        r"port \d+ \((\S+)\) totals: rx (\d+) frames (\d+) bytes, tx (\d+) frames (\d+) bytes", log)}


def exact(check, d):
    """Each queue's file once; pod-a uncapped, plus frames of no pod."""
    q = {"pod0": [], "pod1": [], "fab0": [], "fab1": []}
    for i in range(200):
        q["pod0"].append(up_frame(f"10.0.0.{1 + i % 30}", 60 + i * 7 % 1400))
        q["pod1"].append(up_frame(f"10.0.0.{31 + i % 30}", 60 + i * 11 % 1400))
        q["fab%d" % (i % 2)].append(down_frame(f"10.0.0.{1 + i % 60}", 60 + i * 13 % 1400))
    unmapped = [up_frame("10.0.0.150", 300) for _ in range(7)]
    q["pod1"] += unmapped
    for name, frames in q.items():
        write_pcap(f"{d}/{name}.pcap", frames)
    pd = Podcapd(PODCAPD, KEYGEN, d, "workers")
    pd.write_config(pd.appliance_yaml() + HEAD.format(
        d=d, pid=os.getpid(), tx=tx_files(f"{d}/to_pod"), tx2=tx_files(f"{d}/to_fab"), inf="",
        cap_b="1Gbps"))
    if not check(pd.start(), "podcapd starts with two workers on the uplink"):
        print(pd.log())
        return
    time.sleep(2.5)
    check(pd.stop() == 0, "podcapd stops cleanly")
    tot = window_totals(pd.stdout())
    for qi in (0, 1):
        want = [f for f in q[f"pod{qi}"] if f not in unmapped]
        got = read_pcap(f"{d}/to_fab{qi}.pcap")
        check(got == want, f"up: RX queue {qi}'s {len(want)} frames leave on TX queue {qi}, "
              f"in order (got {len(got)})")
        want = q[f"fab{qi}"]
        got = read_pcap(f"{d}/to_pod{qi}.pcap")
        check(got == want, f"down: RX queue {qi}'s {len(want)} frames leave on TX queue {qi}, "
              f"in order (got {len(got)})")
    ups = [f for f in q["pod0"] + q["pod1"] if f not in unmapped]
    downs = q["fab0"] + q["fab1"]
    for key, lst in (("up", ups), ("down", downs)):
        want = [sum(map(len, lst)), len(lst), 0, 0]
        got = tot.get(("pod-a", key))
        check(got == want, f"pod-a {key}: counted once over both workers {got} == {want}")
    got = tot.get(("uplink", "up"), [0, 0, 0, 0])
    check(got[:2] == [sum(map(len, unmapped)), len(unmapped)],
          f"up: the {len(unmapped)} frames of no pod are counted unmapped ({got[:2]})")


def pod_b_windows(pd):
    """(rate, cap) in Mbit/s of each of pod-b's up records so far."""
    return [(float(m[1]), float(m[2])) for m in re.finditer(
        r"window \S+ pod-b up passed .* rate (\S+) cap (\S+)", pd.stdout())]


def wait_windows(pd, cap, n, timeout=60):
    """Waits until n records of pod-b at cap (Mbit/s) are out; False on timeout."""
    deadline = time.time() + timeout
    while time.time() < deadline and pd.proc.poll() is None:
        if sum(1 for _, c in pod_b_windows(pd) if c == cap) >= n:
            return True
        time.sleep(0.1)
    return False


def shared(check, d):
    """Both queues replay pod-b (capped) and pod-a frames forever."""
    cycle = [up_frame("10.0.0.70", 1000), up_frame("10.0.0.71", 500), up_frame("10.0.0.5", 200)]
    for name in ("pod0", "pod1"):
        write_pcap(f"{d}/{name}.pcap", cycle)
    for name in ("fab0", "fab1"):
        write_pcap(f"{d}/{name}.pcap", [down_frame("10.0.0.70", 800)])
    caps = (20_000_000, 40_000_000)
    pd = Podcapd(PODCAPD, KEYGEN, d, "workers")
    null = "tx_pcap=/dev/null,tx_pcap=/dev/null"
    conf = HEAD.format(d=d, pid=os.getpid(), tx=null, tx2=null, inf=",infinite_rx=1",
                       cap_b="{cap_b}")
    pd.write_config(pd.appliance_yaml() + conf.format(cap_b="20Mbps"))
    if not check(pd.start(), "podcapd starts, both queues of both ports replaying"):
        print(pd.log())
        return
    t0 = time.time()
    # counted in windows, not seconds: on a busy machine podcapd starts and
    # reloads late, and a fixed sleep left too few whole windows to judge
    check(wait_windows(pd, 20.0, 5), "podcapd closed 5 windows of pod-b at the first cap")
    pd.write_config(pd.appliance_yaml() + conf.format(cap_b="40Mbps"))
    pd.signal(signal.SIGHUP)
    check(wait_windows(pd, 40.0, 3), "podcapd closed 3 windows of pod-b at the reloaded cap")
    check(pd.proc.poll() is None, "podcapd kept running")
    check(pd.stop() == 0, "podcapd stops cleanly")
    print(f"ran {time.time() - t0:.1f} s")
    log = pd.log()
    ports = port_totals(log)
    r = subprocess.run([VERIFY, "--key", pd.key + ".pub", "--ledger", pd.ledger, "--json"],
                       capture_output=True, text=True)
    v = json.loads(r.stdout) if r.stdout.startswith("{") else {}
    fails = v.get("failures", [])
    check(r.returncode == 0 and v.get("ok") is True and not fails,
          f"the ledger verifies, every window within burst + cap x T (exit {r.returncode}, "
          f"failures: {fails[:3]})")
    reloads = [e for e in v.get("events", []) if e["event"] == "reload"]
    check(len(reloads) == 1, f"the reload is in the ledger ({len(reloads)})")
    tot = window_totals(pd.stdout())
    counted = sum(tot.get((p, "up"), [0, 0, 0, 0])[1] + tot.get((p, "up"), [0, 0, 0, 0])[3]
                  for p in ("pod-a", "pod-b", "uplink"))
    rx = ports.get("net_pcap0", [0])[0]
    check(rx > 10000 and counted == rx,
          f"up: every frame received counted once: {counted} == {rx} received")
    passed = sum(tot.get((p, "up"), [0, 0, 0, 0])[1] for p in ("pod-a", "pod-b"))
    check(passed == ports.get("net_pcap1", [0, 0, 0])[2],
          f"up: passed {passed} == sent by the fabric port {ports.get('net_pcap1', [0, 0, 0])[2]}")
    # each record's rate over its length (a late close makes one record of two windows)
    b = pod_b_windows(pd)
    whole = b[1:-1]  # the first starts with the workers, the last ends at the stop
    check(len(whole) >= 4 and all(rate >= 0.5 * cap for rate, cap in whole),
          f"pod-b: whole windows pass at least half the cap, not starved by the leases ({b})")
    # burst is 100 ms at the cap: over a window of 1 s or more, 1.1 x the cap at most
    check(all(rate <= 1.1 * cap for rate, cap in b[:-1]),
          f"pod-b: no window passed more than burst + cap x its length ({b})")
    check({cap for _, cap in b} == {c / 1e6 for c in caps} and
          any(rate > 0.75 * caps[1] / 1e6 for rate, cap in whole if cap == caps[1] / 1e6),
          f"pod-b: the higher cap came in force after the reload, under traffic ({b})")
    if check.failures:
        print(log[-4000:])
        print("\n".join(l for l in pd.stdout().splitlines() if "pod-b up" in l or "reload" in l))


def main():
    check = Checks()
    with tempfile.TemporaryDirectory(prefix="podcap-workers-") as d:
        exact(check, d)
    with tempfile.TemporaryDirectory(prefix="podcap-workers-") as d:
        shared(check, d)
    return check.finish()


sys.exit(main())
