#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""podcapd starts with more shape-mode pods than DPDK has memzones.

Every shape-mode pod has a shaping queue per direction. DPDK 22.11 has
2560 memzones in all, so queues that each took a memzone (rte_ring_create)
stopped podcapd from starting with more than about 1200 such pods. With
1500 pods (3000 queues), the test checks that podcapd starts, forwards a
frame of the first and of the last pod and drops one of no pod, and stops
cleanly.
"""
import os
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from daemon import Checks, Podcapd  # noqa: E402
from frames import ETH_IPV4, eth, ipv4_packet, read_pcap, write_pcap  # noqa: E402

PODCAPD = os.environ.get("PODCAPD") or sys.argv[1]
KEYGEN = os.environ.get("PODCAP_KEYGEN") or sys.argv[2]
NPODS = 1500

HEAD = """\
window: 1s
defaults:
  cap: 1Gbps
  burst: 1MB
  mode: shape
  queue_delay: 0s
dpdk:
  lcores: 0-1
  memory: 1GiB
  file_prefix: itest-scale-{pid}
uplinks:
  - name: up0
    pod_port: net_pcap0,rx_pcap={d}/in_pod.pcap,tx_pcap={d}/out_pod.pcap
    fabric_port: net_pcap1,rx_pcap={d}/in_fab.pcap,tx_pcap={d}/out_fab.pcap
pods:
"""


def addr(i):
    return f"10.{i >> 8}.{i & 0xFF}.1"


def main():
    check = Checks()
    with tempfile.TemporaryDirectory(prefix="podcap-itest-") as d:
        first = eth(ETH_IPV4, ipv4_packet(addr(0), "192.168.0.1", 100))
        last = eth(ETH_IPV4, ipv4_packet(addr(NPODS - 1), "192.168.0.1", 120))
        stray = eth(ETH_IPV4, ipv4_packet("172.16.0.1", "192.168.0.1", 140))
        write_pcap(f"{d}/in_pod.pcap", [first, last, stray])
        write_pcap(f"{d}/in_fab.pcap", [])
        pods = "".join(f"  - {{id: p{i}, uplink: up0, prefixes: [10.{i >> 8}.{i & 0xFF}.0/24]}}\n"
                       for i in range(NPODS))
        pd = Podcapd(PODCAPD, KEYGEN, d, "itest-scale")
        pd.write_config(pd.appliance_yaml() + HEAD.format(d=d, pid=os.getpid()) + pods)
        started = pd.start(timeout=120)
        check(started, f"podcapd starts with {NPODS} shape-mode pods ({2 * NPODS} queues)")
        if not started:
            print(pd.log()[-2000:])
            pd.stop()
            return check.finish()
        time.sleep(1)   # the pcap port's three frames go through at the first polls
        pd.stop()
        check(pd.proc.returncode == 0, "podcapd stops with status 0")
        out = read_pcap(f"{d}/out_fab.pcap")
        check(out == [first, last], "the frames of the first and the last pod, and only those, "
              "reach the fabric")
    return check.finish()


if __name__ == "__main__":
    sys.exit(main())
