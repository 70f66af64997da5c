#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""SIGHUP reloads the pod map atomically, at the next window.

A bad file leaves the map in force and the log says why (file:line:col); a
file that changes the uplinks is refused; a good file takes effect at the
next window boundary, with a new pod and a new cap.
"""
import os
import signal
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from daemon import Checks, Podcapd, query_telemetry  # noqa: E402
from frames import write_pcap  # noqa: E402

PODCAPD = os.environ.get("PODCAPD") or sys.argv[1]
KEYGEN = os.environ.get("PODCAP_KEYGEN") or sys.argv[2]

MAP = """\
window: 1s
dpdk:
  lcores: 0-1
  memory: 512MiB
  file_prefix: reload-{pid}
uplinks:
  - name: up0
    pod_port: net_pcap0,rx_pcap={d}/empty.pcap,tx_pcap={d}/to_pod.pcap
    fabric_port: net_pcap1,rx_pcap={d}/empty.pcap,tx_pcap={d}/to_fabric.pcap
pods:
  - id: pod-a
    uplink: up0
    prefixes: [10.0.0.0/26]
    cap: {cap_a}
"""

POD_C = """\
  - id: pod-c
    uplink: up0
    prefixes: [10.0.0.128/26]
"""


def pods_in_last_window(text):
    lines = [ln.split() for ln in text.splitlines() if ln.startswith("window ") and ln.split()[2] != "uplink"]
    if not lines:
        return {}
    last = lines[-1][1]
    return {ln[2]: float(ln[-1]) for ln in lines if ln[1] == last}


def main():
    check = Checks()
    with tempfile.TemporaryDirectory(prefix="podcap-reload-") as d:
        write_pcap(f"{d}/empty.pcap", [])
        pd = Podcapd(PODCAPD, KEYGEN, d, "reload")
        base = pd.appliance_yaml()
        pd.write_config(base + MAP.format(d=d, pid=os.getpid(), cap_a="1Gbps"))
        if not check(pd.start(), "podcapd starts"):
            print(pd.log())
            return 1
        time.sleep(1.5)
        check(pods_in_last_window(pd.stdout()) == {"pod-a": 1000.0}, "one pod at 1 Gbit/s in force")

        # a bad file: nothing changes, the log points at the mistake
        pd.write_config(base + MAP.format(d=d, pid=os.getpid(), cap_a="1Gbps") + "    bogus: 1\n")
        pd.signal(signal.SIGHUP)
        check(pd.wait_log("pod map in force stays", 10), "a bad file is refused and the map in force stays")
        check(f"{pd.config}:" in pd.log() and "unknown key 'bogus'" in pd.log(),
              "the refusal names file:line:col and the mistake")
        time.sleep(1.5)
        check(pods_in_last_window(pd.stdout()) == {"pod-a": 1000.0}, "still one pod at 1 Gbit/s")

        # a file that changes the uplinks needs a restart
        pd.write_config(base + MAP.format(d=d, pid=os.getpid(), cap_a="1Gbps")
                        .replace("to_fabric.pcap", "other.pcap"))
        pd.signal(signal.SIGHUP)
        check(pd.wait_log("the uplinks or their ports changed", 10), "a change of ports is refused")

        # a good file: in force from the next window, and pod-a keeps its bucket
        before = (query_telemetry(f"reload-{os.getpid()}", "/podcap/stats,pod-a") or {}).get("up_bucket_level_bytes")
        pd.write_config(base + MAP.format(d=d, pid=os.getpid(), cap_a="200Mbps") + POD_C)
        pd.signal(signal.SIGHUP)
        check(pd.wait_log("in force from the next window", 10), "a good file is accepted")
        want = {"pod-a": 200.0, "pod-c": 1000.0}
        deadline = time.time() + 15
        while time.time() < deadline and pods_in_last_window(pd.stdout()) != want:
            time.sleep(0.2)
        check(pods_in_last_window(pd.stdout()) == want,
              f"the new map is in force: {pods_in_last_window(pd.stdout())}")
        after = (query_telemetry(f"reload-{os.getpid()}", "/podcap/stats,pod-a") or {}).get("up_bucket_level_bytes")
        # a bucket started afresh would hold at most 200 Mbit/s x 3 s = 75 MB; this one held more before
        check(before is not None and after is not None and before > 75_000_000 and after >= before,
              f"pod-a's bucket kept its level across the reload ({before} -> {after} bytes)")
        check(pd.proc.poll() is None, "podcapd kept running through every reload")
        rc = pd.stop()
        check(rc == 0, f"podcapd exits 0 (got {rc})")
        if check.failures:
            print(pd.log())
    return check.finish()


sys.exit(main())
