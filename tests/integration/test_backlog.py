#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Frames held in a shaping queue are counted even if they never leave.

Two shaped pods on their own uplinks are fed far more than their cap at
once, so that most of their frames wait in the shaping queues (tens of
seconds of backlog). A reload then removes one pod while its queue is full,
and podcapd is stopped while the other's still is. Every frame received
must be counted once: passed (and then on the wire, in order), or dropped
as over_cap, in the window lines and in the signed ledger.
"""
import json
import os
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from daemon import Checks, Podcapd, query_telemetry_many, window_totals  # noqa: E402
from frames import ETH_IPV4, eth, ipv4_packet, read_pcap, write_pcap  # noqa: E402

PODCAPD = os.environ.get("PODCAPD") or sys.argv[1]
KEYGEN = os.environ.get("PODCAP_KEYGEN") or sys.argv[2]
VERIFY = os.environ.get("PODCAP_VERIFY") or sys.argv[3]
FRAMES = 3000   # of 1000 bytes: 24 s at 1 Mbit/s

MAP = """\
window: 1s
defaults:
  cap: 1Mbps
  burst: 10s
  mode: shape
  queue_delay: 60s
dpdk:
  lcores: 0-1
  memory: 512MiB
  file_prefix: {prefix}
uplinks:
  - name: up0
    pod_port: net_pcap0,rx_pcap={d}/e_in.pcap,tx_pcap={d}/e_down.pcap
    fabric_port: net_pcap1,rx_pcap={d}/empty.pcap,tx_pcap={d}/e_up.pcap
  - name: up1
    pod_port: net_pcap2,rx_pcap={d}/f_in.pcap,tx_pcap={d}/f_down.pcap
    fabric_port: net_pcap3,rx_pcap={d}/empty.pcap,tx_pcap={d}/f_up.pcap
pods:
  - id: pod-e
    uplink: up0
  - id: {pod_f}
    uplink: up1
    prefixes: [10.1.0.0/24]
"""


def poll(what, timeout=60):
    deadline = time.time() + timeout
    while time.time() < deadline:
        v = what()
        if v:
            return v
        time.sleep(0.5)
    return None


def main():
    check = Checks()
    prefix = f"backlog-{os.getpid()}"
    sent = {"pod-e": [eth(ETH_IPV4, ipv4_packet("10.0.0.1", "192.0.2.1", 986))] * FRAMES,
            "pod-f": [eth(ETH_IPV4, ipv4_packet("10.1.0.1", "192.0.2.1", 986))] * FRAMES}
    with tempfile.TemporaryDirectory(prefix="podcap-backlog-") as d:
        write_pcap(f"{d}/e_in.pcap", sent["pod-e"])
        write_pcap(f"{d}/f_in.pcap", sent["pod-f"])
        write_pcap(f"{d}/empty.pcap", [])
        pd = Podcapd(PODCAPD, KEYGEN, d, "backlog")
        pd.write_config(pd.appliance_yaml() + MAP.format(d=d, prefix=prefix, pod_f="pod-f"))
        if not check(pd.start(), "podcapd starts"):
            print(pd.log())
            return check.finish()

        def queued():
            st = query_telemetry_many(prefix, ["/podcap/stats,pod-e", "/podcap/stats,pod-f"])
            return st if st and all(s["up_queue_frames"] > FRAMES // 2 for s in st) else None

        st = poll(queued)
        check(st is not None, "both pods hold most of their frames in the shaping queue "
              f"({[s['up_queue_frames'] for s in st] if st else None})")
        # pod-f leaves the map with its queue full; pod-g takes its prefix
        pd.write_config(pd.appliance_yaml() + MAP.format(d=d, prefix=prefix, pod_f="pod-g"))
        pd.signal(signal.SIGHUP)
        pods = poll(lambda: (query_telemetry_many(prefix, ["/podcap/pods"]) or [None])[0] == ["pod-e", "pod-g"])
        check(pods is not None, "the reload that removes pod-f is in force")
        st = query_telemetry_many(prefix, ["/podcap/stats,pod-e"])
        check(st is not None and st[0]["up_queue_frames"] > 0,
              f"pod-e still has frames queued when podcapd is stopped ({st[0]['up_queue_frames'] if st else None})")
        rc = pd.stop()
        check(rc == 0, f"podcapd exits 0 on SIGTERM (got {rc})")
        text = pd.stdout()
        out = {"pod-e": read_pcap(f"{d}/e_up.pcap"), "pod-f": read_pcap(f"{d}/f_up.pcap")}
        # the ledger spans two pod maps: check everything but which one
        r = subprocess.run([VERIFY, "--key", pd.key + ".pub", "--ledger", pd.ledger, "--json"],
                           capture_output=True, text=True)
        log = pd.log()

    try:
        ver = json.loads(r.stdout)
    except json.JSONDecodeError:
        ver = {}
    check(r.returncode == 0 and ver.get("ok") is True,
          f"podcap-verify accepts the ledger (exit {r.returncode}): {ver.get('result')}")
    reloads = [e for e in ver.get("events", []) if e.get("event") == "reload"]
    check(len(reloads) == 1, f"the ledger records the reload ({len(reloads)})")
    tot = window_totals(text)
    by_pod = {(e["pod"], e["dir"]): e for e in ver.get("pods", [])}
    for pod, frames in sent.items():
        got = tot.get((pod, "up"), [0, 0, 0, 0])
        nbytes = sum(len(f) for f in frames)
        check(got[1] + got[3] == len(frames) and got[0] + got[2] == nbytes,
              f"{pod}: passed {got[1]} + dropped {got[3]} frames == the {len(frames)} received "
              f"({got[0]} + {got[2]} == {nbytes} B)")
        check(got[3] > 0, f"{pod}: the frames left in its queue are dropped ({got[3]})")
        check(out[pod] == frames[:got[1]], f"{pod}: the {got[1]} frames counted as passed are the ones "
              f"on the wire ({len(out[pod])})")
        e = by_pod.get((pod, "up"), {})
        over = e.get("drops", {}).get("over_cap", {})
        check(e.get("frames") == got[1] and over.get("frames") == got[3] and over.get("bytes") == got[2],
              f"{pod}: the ledger has {e.get('frames')} passed, {over.get('frames')} dropped over_cap")
    if check.failures:
        print("--- podcapd stdout\n" + text + "--- podcapd stderr\n" + log + "--- podcap-verify\n" + r.stdout)
    return check.finish()


sys.exit(main())
