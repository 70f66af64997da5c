#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Window records follow the boundary, not the control thread's wake-up.

A police-mode pod with a 2,000-byte burst is offered far more than its
1 Mbit/s cap without a pause (net_pcap infinite_rx), so in any interval T it
passes about cap x T and never more than burst + cap x T. podcapd's control
thread (its main thread) is held in a ptrace stop from before a window
boundary until well after it, while the worker goes on forwarding: twice
across one boundary, once across two. Every window record must still hold
only the bytes of the windows it covers: within burst + cap x its length,
the envelope podcap-verify holds it to, and podcap-verify must pass.
"""
import ctypes
import json
import os
import re
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from daemon import Checks, Podcapd  # noqa: E402
from frames import ETH_IPV4, eth, ipv4_packet, write_pcap  # noqa: E402

PODCAPD = os.environ.get("PODCAPD") or sys.argv[1]
KEYGEN = os.environ.get("PODCAP_KEYGEN") or sys.argv[2]
VERIFY = os.environ.get("PODCAP_VERIFY") or sys.argv[3]
CAP_BPS = 1_000_000
BURST_B = 2000
# (seconds into a window at which the control thread is stopped, for how long)
HOLDS = [(0.55, 0.9), (0.55, 0.9), (0.55, 2.3)]

MAP = """\
window: 1s
dpdk:
  lcores: 0-1
  memory: 512MiB
  file_prefix: boundary-{pid}
uplinks:
  - name: up0
    pod_port: net_pcap0,rx_pcap={d}/in.pcap,tx_pcap=/dev/null,infinite_rx=1
    fabric_port: net_pcap1,rx_pcap={d}/empty.pcap,tx_pcap=/dev/null
pods:
  - id: pod-p
    uplink: up0
    cap: 1Mbps
    burst: {burst}B
    mode: police
"""

PTRACE_DETACH = 17
PTRACE_SEIZE = 0x4206
PTRACE_INTERRUPT = 0x4207
WALL = 0x40000000
libc = ctypes.CDLL(None, use_errno=True)
libc.ptrace.argtypes = [ctypes.c_long, ctypes.c_long, ctypes.c_void_p, ctypes.c_void_p]
libc.ptrace.restype = ctypes.c_long


def hold_thread(tid, seconds):
    """Stops one thread of another process (not the others) for `seconds`."""
    if libc.ptrace(PTRACE_SEIZE, tid, None, None) != 0:
        print(f"ptrace seize {tid}: {os.strerror(ctypes.get_errno())}")
        return False
    try:
        if libc.ptrace(PTRACE_INTERRUPT, tid, None, None) != 0:
            return False
        _, status = os.waitpid(tid, WALL)
        if not os.WIFSTOPPED(status):
            return False
        time.sleep(seconds)
        return True
    finally:
        libc.ptrace(PTRACE_DETACH, tid, None, None)


def records(text):
    """[(label in s, passed bytes, dropped frames)] of pod-p up, in order."""
    out = []
    for m in re.finditer(r"^window (\S+) pod-p up passed (\d+) \d+ dropped \d+ (\d+) ", text, re.M):
        label = time.mktime(time.strptime(m[1], "%Y-%m-%dT%H:%M:%SZ"))
        out.append((label, int(m[2]), int(m[3])))
    return out


def main():
    check = Checks()
    with tempfile.TemporaryDirectory(prefix="podcap-boundary-") as d:
        write_pcap(f"{d}/in.pcap", [eth(ETH_IPV4, ipv4_packet("10.0.0.1", "192.0.2.1", 986))] * 32)
        write_pcap(f"{d}/empty.pcap", [])
        pd = Podcapd(PODCAPD, KEYGEN, d, "boundary")
        pd.write_config(pd.appliance_yaml() + MAP.format(d=d, pid=os.getpid(), burst=BURST_B))
        if not check(pd.start(), "podcapd starts, the pod port replaying its frames"):
            print(pd.log())
            return check.finish()
        time.sleep(1.5)
        for at, seconds in HOLDS:
            while not at <= time.time() % 1.0 < at + 0.1:
                time.sleep(0.01)
            check(hold_thread(pd.proc.pid, seconds),
                  f"the control thread is stopped at .{int(at * 100)} s for {seconds} s, the worker is not")
            time.sleep(1.5)
        check(pd.proc.poll() is None, "podcapd kept running")
        rc = pd.stop()
        check(rc == 0, f"podcapd exits 0 (got {rc})")
        r = subprocess.run([VERIFY, "--key", pd.key + ".pub", "--ledger", pd.ledger, "--json"],
                           capture_output=True, text=True)
        text, log = pd.stdout(), pd.log()

    recs = records(text)
    check(len(recs) >= 8, f"podcapd closed the windows ({len(recs)} records)")
    spans = [b[0] - a[0] for a, b in zip(recs, recs[1:])] + [1.0]
    check(any(s >= 2 for s in spans), f"a record covers the windows of the longest hold (spans {spans})")
    for (label, passed, dropped), span in zip(recs, spans):
        limit = BURST_B + CAP_BPS / 8 * span
        when = time.strftime("%H:%M:%S", time.gmtime(label))
        check(passed <= limit, f"window {when} ({span:.0f} s): passed {passed} B "
              f"<= burst + cap x {span:.0f} s = {limit:.0f} B")
        check(dropped > 0, f"window {when}: the pod was offered more than its cap ({dropped} frames dropped)")
    try:
        ver = json.loads(r.stdout)
    except json.JSONDecodeError:
        ver = {}
    fails = ver.get("failures", [])
    check(r.returncode == 0 and ver.get("ok") is True and not fails,
          f"podcap-verify passes (exit {r.returncode}): {[f.get('check') for f in fails]}")
    if check.failures:
        print("--- podcapd stdout\n" + text + "--- podcapd stderr\n" + log
              + "--- podcap-verify\n" + json.dumps(fails, indent=1)[:3000] + r.stderr)
    return check.finish()


sys.exit(main())
