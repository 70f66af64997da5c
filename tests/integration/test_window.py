#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The two promises side by side: a burst after idle.

Three pods on one uplink, each with a cap of 1 Mbit/s and a burst of one
window (3 s at the cap, 375,000 bytes), are offered far more than their
cap without a pause (net_pcap infinite_rx). pod-w (police) and pod-s
(shape: its queue must not carry it past the budget either) are held to
the window promise, pod-e (police) to the envelope. podcapd is stopped early in a window
and started again on the same ledger: the new podcapd waits for the window
the ledger covers to end, forwarding nothing, while its buckets fill. In
the first window after that idle the envelope pod passes what its bucket
gathered plus cap x window, more than cap x window; the window pod passes
at most cap x window in every window, and still close to it once its full
start is over. A reload then holds pod-e to the window promise as well:
from the window it comes into force, pod-e too stays within cap x window.
podcap-verify, given both pod maps, accepts the log and names each pod's
promises; it refuses the log against a map that declares the envelope for
pod-w.
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
from daemon import Checks, Podcapd, query_telemetry  # noqa: E402
from frames import ETH_IPV4, eth, ipv4_packet, write_pcap  # noqa: E402

PODCAPD = os.environ.get("PODCAPD") or sys.argv[1]
KEYGEN = os.environ.get("PODCAP_KEYGEN") or sys.argv[2]
VERIFY = os.environ.get("PODCAP_VERIFY") or sys.argv[3]
WINDOW_S = 3
CAP_BPS = 1_000_000
BUDGET = CAP_BPS * WINDOW_S // 8          # cap x window, bytes: 375,000
FRAME = 1000

MAP = """\
window: {window}s
defaults:
  cap: 1Mbps
  burst: {window}s
  mode: police
dpdk:
  lcores: 0-1
  memory: 512MiB
  file_prefix: window-{pid}
uplinks:
  - name: up0
    pod_port: net_pcap0,rx_pcap={d}/in.pcap,tx_pcap=/dev/null,infinite_rx=1
    fabric_port: net_pcap1,rx_pcap={d}/empty.pcap,tx_pcap=/dev/null
pods:
  - id: pod-w
    uplink: up0
    prefixes: [10.0.0.0/26]
    promise: {promise}
  - id: pod-e
    uplink: up0
    prefixes: [10.0.0.64/26]
    promise: {promise_e}
  - id: pod-s
    uplink: up0
    prefixes: [10.0.0.128/26]
    mode: shape
    promise: window
"""


def records(text):
    """{pod: [(label, passed bytes)]} of direction up, in order."""
    return {pod: [(label, passed) for label, passed, _ in recs] for pod, recs in spans(text).items()}


def spans(text):
    """{pod: [(label, passed bytes, windows)]}: a control thread held up past
    a boundary makes one record of several windows, with their budgets; the
    line's rate (Mbit/s over the record's span) says how many."""
    out = {}
    for m in re.finditer(r"^window (\S+) (pod-[wes]) up passed (\d+) .* rate (\S+) ", text, re.M):
        passed, rate = int(m[3]), float(m[4])
        n = max(1, round(passed * 8 / (rate * 1e6) / WINDOW_S)) if passed and rate > 0 else 1
        out.setdefault(m[2], []).append((m[1], passed, n))
    return out


def wait_early_in_window():
    """Until 0.1 to 0.3 s into a window: a stop then leaves most of it to wait out."""
    while not 0.1 <= time.time() % WINDOW_S < 0.3:
        time.sleep(0.01)


def verify(pd, *podmaps):
    args = [VERIFY, "--key", pd.key + ".pub", "--ledger", pd.ledger, "--json"]
    for m in podmaps:
        args += ["--pod-map", m]
    r = subprocess.run(args, capture_output=True, text=True)
    try:
        return r.returncode, json.loads(r.stdout)
    except json.JSONDecodeError:
        return r.returncode, {"stderr": r.stderr}


def main():
    check = Checks()
    with tempfile.TemporaryDirectory(prefix="podcap-window-") as d:
        frames = []
        for i in range(16):
            frames.append(eth(ETH_IPV4, ipv4_packet(f"10.0.0.{1 + i}", "192.0.2.1", FRAME - 14)))
            frames.append(eth(ETH_IPV4, ipv4_packet(f"10.0.0.{65 + i}", "192.0.2.1", FRAME - 14)))
            frames.append(eth(ETH_IPV4, ipv4_packet(f"10.0.0.{129 + i}", "192.0.2.1", FRAME - 14)))
        write_pcap(f"{d}/in.pcap", frames)
        write_pcap(f"{d}/empty.pcap", [])
        pd = Podcapd(PODCAPD, KEYGEN, d, "window")
        config = pd.appliance_yaml() + MAP.format(d=d, pid=os.getpid(), window=WINDOW_S,
                                                   promise="{promise}", promise_e="{promise_e}")
        first_map = f"{d}/first.yaml"
        with open(first_map, "w") as f:
            f.write(config.format(promise="window", promise_e="envelope"))
        pd.write_config(config.format(promise="window", promise_e="envelope"))
        if not check(pd.start(), "podcapd starts, the pod port replaying its frames"):
            print(pd.log())
            return check.finish()
        time.sleep(3 * WINDOW_S)
        wait_early_in_window()
        check(pd.stop() == 0, "podcapd stops")
        first = len(records(pd.stdout()).get("pod-e", []))
        if not check(pd.start(), "podcapd starts again on the same ledger"):
            print(pd.log())
            return check.finish()
        time.sleep(2 * WINDOW_S)
        shown = [(query_telemetry(f"window-{os.getpid()}", f"/podcap/pod,{pod}") or {}).get("promise")
                 for pod in ("pod-w", "pod-e")]
        check(shown == ["window", "envelope"], f"telemetry shows each pod's promise ({shown})")
        # a reload holds pod-e to the window promise too: a new budget, full from the boundary
        pd.write_config(config.format(promise="window", promise_e="window"))
        pd.signal(signal.SIGHUP)
        check(pd.wait_log("in force from the next window", 10), "the reload to the window promise is accepted")
        time.sleep(4 * WINDOW_S)
        check(pd.stop() == 0, "podcapd stops again")
        text, log = pd.stdout(), pd.log()
        rc, rep = verify(pd, first_map, pd.config)
        with open(f"{d}/envelope.yaml", "w") as f:
            f.write(config.format(promise="envelope", promise_e="envelope"))
        rc_other, rep_other = verify(pd, f"{d}/envelope.yaml")
        rc_bare, rep_bare = verify(pd)

    recs = records(text)
    w, e = recs.get("pod-w", []), recs.get("pod-e", [])
    check(len(w) >= 7 and len(e) == len(w), f"podcapd logged the windows ({len(w)}, {len(e)})")
    for label, passed, n in spans(text).get("pod-w", []):
        check(passed <= n * BUDGET, f"pod-w (window) {label}: {passed} B <= {n} x cap x window = "
              f"{n * BUDGET} B")
    after = e[first:first + 1]
    check(bool(after) and after[0][1] > BUDGET,
          f"pod-e (envelope), the first window after the idle: {after} B > cap x window "
          f"= {BUDGET} B (its bucket's fill + cap x window)")
    check(max(p for _, p in e) <= 2 * BUDGET, "pod-e never passes more than burst + cap x window")
    reloads = [ev["time"] for ev in rep.get("events", []) if ev.get("event") == "reload"]
    check(len(reloads) == 1, f"the log has the reload ({reloads})")
    after_reload = [(label, p) for label, p in e if reloads and label >= reloads[0]]
    check(len(after_reload) >= 2, f"pod-e windows after the reload: {after_reload}")
    merged = {label: n for label, _, n in spans(text).get("pod-e", [])}
    for label, passed in after_reload:
        n = merged.get(label, 1)
        check(passed <= n * BUDGET, f"pod-e (window since the reload) {label}: {passed} B <= {n * BUDGET} B")
    sh = recs.get("pod-s", [])
    check(len(sh) == len(w), f"pod-s (shape, window) logged too ({len(sh)})")
    for label, passed, n in spans(text).get("pod-s", []):
        check(passed <= n * BUDGET, f"pod-s (shape, window) {label}: {passed} B <= {n * BUDGET} B")
    check(max((p for _, p in sh), default=0) >= BUDGET * 9 // 10,
          f"pod-s passes close to cap x window in some window (peak {max((p for _, p in sh), default=0)} B)")
    # not needlessly strict: past its full start, a window passes close to the budget
    check(max((p for _, p in w), default=0) >= BUDGET * 9 // 10,
          f"pod-w passes close to cap x window in some window (peak {max((p for _, p in w), default=0)} B)")

    pods = {(p["pod"], p["dir"]): p for p in rep.get("pods", [])}
    check(rc == 0 and rep.get("ok") is True,
          f"podcap-verify --pod-map accepts the log (exit {rc}): "
          f"{[f.get('message') for f in rep.get('failures', [])][:3]}")
    check(pods.get(("pod-w", "up"), {}).get("promises") == ["window"],
          "the report holds pod-w to the window promise")
    check(pods.get(("pod-e", "up"), {}).get("promises") == ["envelope", "window"],
          "the report holds pod-e to the envelope, then (the reload) to the window promise")
    widest = max((n for _, _, n in spans(text).get("pod-w", [])), default=1)
    check(pods.get(("pod-w", "up"), {}).get("peak_bytes", widest * BUDGET + 1) <= widest * BUDGET,
          f"the report's peak record of pod-w is within its windows' budgets ({widest} x cap x window)")
    check(pods.get(("pod-e", "up"), {}).get("peak_bytes", 0) > BUDGET,
          "the report's peak window of pod-e is above cap x window")
    # the promise is in the canonical form: the other promise is another map, whose digest the log does not name
    fails = [(f.get("check"), f.get("message", "")) for f in rep_other.get("failures", [])]
    check(rc_other == 1 and any(c == "podmap" and "none of the 1 declared" in m for c, m in fails),
          f"a pod map declaring the envelope for pod-w is refused (exit {rc_other}): {fails[:2]}")
    check(rc_bare == 0, f"without --pod-map the log verifies too (exit {rc_bare})")
    if check.failures:
        print("--- podcapd stdout\n" + text + "--- podcapd stderr\n" + log
              + "--- podcap-verify\n" + json.dumps(rep.get("failures", rep), indent=1)[:3000])
    return check.finish()


sys.exit(main())
