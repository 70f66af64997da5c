#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Hostile traffic through podcapd, replayed from pcap files.

Three uplinks, both directions: up0 carries two pods told apart by their
prefixes, up1 one pod with prefixes, up2 one pod without (every frame on it
is that pod's). Each port is fed the classes of tests/integration/hostile.py:
runts, frames cut inside every header podcapd reads, lying lengths, IPv4
options, IPv6 extension chains, fragments, jumbo frames up to max_frame and
past it (multi-segment mbufs from net_pcap), addresses of pods on other
uplinks and of no pod, broadcast, multicast and a flood of frames of no pod.

The test checks that what leaves each port is exactly, byte for byte and in
order, the frames that should pass; that every frame is counted once, with
the right pod and direction or the right drop reason, in the per-window
lines, in the signed ledger (podcap-verify --json) and in telemetry; that
the counters add up to what the ports received and transmitted (ethdev
statistics); and that podcapd stops cleanly and its ledger verifies.
"""
import json
import os
import re
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from daemon import Checks, Podcapd, query_telemetry_many  # noqa: E402
from frames import read_pcap, write_pcap  # noqa: E402
import hostile  # noqa: E402
from hostile import DOWN, MALFORMED, UNMAPPED, UP, Gen, Pod  # noqa: E402

PODCAPD = os.environ.get("PODCAPD") or sys.argv[1]
KEYGEN = os.environ.get("PODCAP_KEYGEN") or sys.argv[2]
VERIFY = os.environ.get("PODCAP_VERIFY") or sys.argv[3]
MAX_FRAME = 9216
FLOOD = 20000   # frames of no pod per port of up0 and up1

MAP = """\
window: 100ms
max_frame: {max_frame}B
defaults:
  cap: 1Tbps
  burst: 64MB
  mode: police
dpdk:
  lcores: 0-1
  memory: 512MiB
  file_prefix: {prefix}
uplinks:
  - name: up0
    pod_port: net_pcap0,rx_pcap={d}/up0_pod_in.pcap,tx_pcap={d}/up0_pod_out.pcap
    fabric_port: net_pcap1,rx_pcap={d}/up0_fab_in.pcap,tx_pcap={d}/up0_fab_out.pcap
  - name: up1
    pod_port: net_pcap2,rx_pcap={d}/up1_pod_in.pcap,tx_pcap={d}/up1_pod_out.pcap
    fabric_port: net_pcap3,rx_pcap={d}/up1_fab_in.pcap,tx_pcap={d}/up1_fab_out.pcap
  - name: up2
    pod_port: net_pcap4,rx_pcap={d}/up2_pod_in.pcap,tx_pcap={d}/up2_pod_out.pcap
    fabric_port: net_pcap5,rx_pcap={d}/up2_fab_in.pcap,tx_pcap={d}/up2_fab_out.pcap
pods:
  - id: pod-a
    uplink: up0
    prefixes: [10.0.0.0/26, "fd00:a::/64"]
  - id: pod-c
    uplink: up0
    prefixes: [10.0.0.64/26, "fd00:c::/64"]
  - id: pod-b
    uplink: up1
    prefixes: [10.1.0.0/24, "fd00:b::/64"]
  - id: pod-d
    uplink: up2
"""

POD_A = Pod("pod-a", "10.0.0.1", "fd00:a::1")
POD_C = Pod("pod-c", "10.0.0.65", "fd00:c::1")
POD_B = Pod("pod-b", "10.1.0.1", "fd00:b::1")
PODS = {"up0": ("pod-a", "pod-c"), "up1": ("pod-b",), "up2": ("pod-d",)}
SIDE = {UP: "pod", DOWN: "fab"}
OTHER = {UP: "fab", DOWN: "pod"}


def build():
    """{(uplink, dir): [(class, frame, outcome)]}: what each port is fed."""
    feed = {}
    for d in (UP, DOWN):
        feed[("up0", d)] = Gen(d, POD_A, POD_C, POD_B, MAX_FRAME).all(flood=FLOOD)
        feed[("up1", d)] = Gen(d, POD_B, None, POD_A, MAX_FRAME).all(flood=FLOOD)
        # up2 gets the classes of up0 without the flood: all of it is pod-d's
        cases = Gen(d, POD_A, POD_C, POD_B, MAX_FRAME).all(flood=200)
        feed[("up2", d)] = hostile.as_sole_pod(cases, "pod-d", MAX_FRAME)
    return feed


def expected_counters(feed):
    """{(pod, dir): [pass B, pass F]} and {(uplink, dir): {reason: [B, F]}}."""
    pods = {(p, d): [0, 0] for ps in PODS.values() for p in ps for d in (UP, DOWN)}
    links = {(u, d): {UNMAPPED: [0, 0], MALFORMED: [0, 0]} for u in PODS for d in (UP, DOWN)}
    for (u, d), cases in feed.items():
        for _, fr, outcome in cases:
            c = links[(u, d)][outcome] if outcome in (UNMAPPED, MALFORMED) else pods[(outcome, d)]
            c[0] += len(fr)
            c[1] += 1
    return pods, links


def port_ids(log):
    """{(uplink, 'pod'|'fab'): DPDK port id} from podcapd's start-up lines."""
    ids = {}
    for m in re.finditer(r"uplink (\S+) (pod|fabric) port (\d+):", log):
        ids[(m[1], m[2][:3])] = int(m[3])
    return ids


def ethdev_stats(prefix, ids):
    keys = sorted(ids)
    res = query_telemetry_many(prefix, [f"/ethdev/stats,{ids[k]}" for k in keys])
    if res is None or len(res) != len(keys):
        return None
    return dict(zip(keys, res))


def wait_until_done(prefix, ids, want_rx, want_tx, timeout=90):
    """Polls the ports' statistics until every frame is read and the passed ones sent."""
    deadline = time.time() + timeout
    st = None
    while time.time() < deadline:
        st = ethdev_stats(prefix, ids)
        if st is not None and all(st[k]["ipackets"] == want_rx[k] and st[k]["opackets"] == want_tx[k]
                                  for k in ids):
            return st
        time.sleep(0.5)
    return st


def main():
    check = Checks()
    t0 = time.time()
    feed = build()
    want_pods, want_links = expected_counters(feed)
    prefix = f"hostile-{os.getpid()}"
    with tempfile.TemporaryDirectory(prefix="podcap-hostile-") as d:
        for (u, dr), cases in feed.items():
            write_pcap(f"{d}/{u}_{SIDE[dr]}_in.pcap", [fr for _, fr, _ in cases])
        total = sum(len(c) for c in feed.values())
        print(f"{total} frames in {len(feed)} pcap files, built in {time.time() - t0:.1f} s")
        pd = Podcapd(PODCAPD, KEYGEN, d, "hostile")
        pd.write_config(pd.appliance_yaml() + MAP.format(d=d, prefix=prefix, max_frame=MAX_FRAME))
        if not check(pd.start(), "podcapd starts"):
            print(pd.log())
            return check.finish()
        ids = port_ids(pd.log())
        if not check(len(ids) == 6, f"the log names the 6 ports ({ids})"):
            pd.stop()
            print(pd.log())
            return check.finish()
        want_rx = {(u, SIDE[dr]): len(c) for (u, dr), c in feed.items()}
        want_tx = {(u, OTHER[dr]): sum(1 for _, _, o in c if o not in (UNMAPPED, MALFORMED))
                   for (u, dr), c in feed.items()}
        st = wait_until_done(prefix, ids, want_rx, want_tx)
        check(st is not None, "dpdk-telemetry.py shows the ports' statistics")
        tel = query_telemetry_many(prefix, [f"/podcap/stats,{p}" for ps in PODS.values() for p in ps]
                                   + [f"/podcap/uplink_stats,{u}" for u in PODS]) or []
        check(pd.proc.poll() is None, "podcapd is still running after all the frames")
        rc = pd.stop()
        check(rc == 0, f"podcapd exits 0 on SIGTERM (got {rc})")
        text, log = pd.stdout(), pd.log()
        out = {(u, side): read_pcap(f"{d}/{u}_{side}_out.pcap") for u in PODS for side in ("pod", "fab")}
        r = subprocess.run([VERIFY, "--key", pd.key + ".pub", "--ledger", pd.ledger, "--pod-map", pd.config,
                            "--json"], capture_output=True, text=True)
    try:
        ver = json.loads(r.stdout)
    except json.JSONDecodeError:
        ver = {}
    check(r.returncode == 0 and ver.get("ok") is True,
          f"podcap-verify accepts the ledger (exit {r.returncode}): {ver.get('result')}")
    if r.returncode != 0:
        print(r.stdout + r.stderr)

    # what left each port: exactly the frames that should pass, in order
    for (u, dr), cases in sorted(feed.items()):
        side = OTHER[dr]
        want = [fr for _, fr, o in cases if o not in (UNMAPPED, MALFORMED)]
        got = out[(u, side)]
        ok = check(got == want, f"{u} {dr}: the {len(want)} frames that pass leave the {side} port "
                   f"byte for byte, in order (got {len(got)})")
        if not ok:
            wrong = {}
            gotset = set(got)
            for cls, fr, o in cases:
                passes = o not in (UNMAPPED, MALFORMED)
                if passes != (fr in gotset):
                    wrong.setdefault(cls, []).append((len(fr), o))
            for cls, items in sorted(wrong.items()):
                print(f"      class '{cls}': {len(items)} frames wrong, e.g. {items[:4]}")

    # the per-window lines, the ledger and telemetry agree with the expectation
    tot = window_totals_by_link(text)
    by_pod = {(e["pod"], e["dir"]): e for e in ver.get("pods", [])}
    by_link = {(e["link"], e["dir"]): e for e in ver.get("links", [])}
    for (p, dr), (b, f) in sorted(want_pods.items()):
        win = tot.get((p, dr), [0, 0, 0, 0])
        check(win == [b, f, 0, 0], f"{p} {dr}: window lines passed {win[1]} frames / {win[0]} B, "
              f"dropped {win[3]} == {f} / {b}, 0")
        e = by_pod.get((p, dr), {})
        drops = sum(v["frames"] for v in e.get("drops", {}).values()) if e else None
        check(e.get("bytes") == b and e.get("frames") == f and drops == 0,
              f"{p} {dr}: the ledger has {e.get('frames')} frames / {e.get('bytes')} B passed, "
              f"{drops} dropped")
    for (u, dr), reasons in sorted(want_links.items()):
        win = tot.get((u, dr), [0, 0, 0, 0])
        want = reasons[UNMAPPED] + reasons[MALFORMED]
        check(win == want, f"{u} {dr}: window lines unmapped {win[1]} / {win[0]} B, malformed "
              f"{win[3]} / {win[2]} B == {want[1]} / {want[0]} B, {want[3]} / {want[2]} B")
        e = by_link.get((u, dr), {})
        got = [e.get(UNMAPPED, {}).get("bytes"), e.get(UNMAPPED, {}).get("frames"),
               e.get(MALFORMED, {}).get("bytes"), e.get(MALFORMED, {}).get("frames")]
        check(got == want, f"{u} {dr}: the ledger's unmapped/malformed {got} == {want}")

    names = [p for ps in PODS.values() for p in ps]
    for i, p in enumerate(names):
        s = tel[i] if i < len(tel) and tel[i] else {}
        for dr in (UP, DOWN):
            b, f = want_pods[(p, dr)]
            dropped = sum(v for k, v in s.items() if k.startswith(dr + "_dropped_") and k.endswith("_frames"))
            check(s.get(f"{dr}_passed_bytes") == b and s.get(f"{dr}_passed_frames") == f and dropped == 0,
                  f"/podcap/stats,{p} {dr}: passed {s.get(dr + '_passed_frames')} / "
                  f"{s.get(dr + '_passed_bytes')} B, dropped {dropped}")
    for i, u in enumerate(PODS):
        j = len(names) + i
        s = tel[j] if j < len(tel) and tel[j] else {}
        for dr in (UP, DOWN):
            want = want_links[(u, dr)]
            got = {r: [s.get(f"{dr}_dropped_{r}_bytes"), s.get(f"{dr}_dropped_{r}_frames")]
                   for r in (UNMAPPED, MALFORMED)}
            check(got == want, f"/podcap/uplink_stats,{u} {dr}: {got} == {want}")

    # conservation: what the ports received is passed or dropped with a reason,
    # and what was passed is what the ports sent
    if st is not None:
        for u, ps in PODS.items():
            for dr in (UP, DOWN):
                rx = st[(u, SIDE[dr])]
                tx = st[(u, OTHER[dr])]
                win = tot.get((u, dr), [0, 0, 0, 0])
                frames = sum(tot.get((p, dr), [0] * 4)[1] + tot.get((p, dr), [0] * 4)[3] for p in ps)
                nbytes = sum(tot.get((p, dr), [0] * 4)[0] + tot.get((p, dr), [0] * 4)[2] for p in ps)
                check(frames + win[1] + win[3] == rx["ipackets"] and nbytes + win[0] + win[2] == rx["ibytes"],
                      f"{u} {dr}: passed + dropped = {frames + win[1] + win[3]} frames / "
                      f"{nbytes + win[0] + win[2]} B == received {rx['ipackets']} / {rx['ibytes']} B")
                passed = [sum(tot.get((p, dr), [0] * 4)[i] for p in ps) for i in (0, 1)]
                check(passed == [tx["obytes"], tx["opackets"]],
                      f"{u} {dr}: passed {passed[1]} / {passed[0]} B == sent {tx['opackets']} / {tx['obytes']} B")
                check(rx["ierrors"] == 0 and rx["imissed"] == 0 and rx["rx_nombuf"] == 0,
                      f"{u} {dr}: the port lost nothing before podcapd saw it "
                      f"(ierrors {rx['ierrors']}, imissed {rx['imissed']}, rx_nombuf {rx['rx_nombuf']})")
    busy = {line.split()[1] for line in text.splitlines()
            if line.startswith("window ") and (" uplink " in line or " passed 0 0 " not in line)}
    print(f"{total} frames checked in {time.time() - t0:.1f} s; they crossed {len(busy)} windows "
          f"of {ver.get('windows')} on record")
    if check.failures:
        print("--- podcapd stdout\n" + text[-4000:] + "--- podcapd stderr\n" + log[-4000:])
    return check.finish()


def window_totals_by_link(text):
    """Per-window lines summed: {(pod or uplink, dir): [B, F, B, F]} as daemon.window_totals()."""
    tot = {}
    for line in text.splitlines():
        m = re.match(r"window \S+ (\S+) (up|down) passed (\d+) (\d+) dropped (\d+) (\d+) ", line)
        key = None
        if m:
            key = (m[1], m[2])
        else:
            m = re.match(r"window \S+ uplink (\S+) (up|down) unmapped (\d+) (\d+) malformed (\d+) (\d+)", line)
            if m:
                key = (m[1], m[2])
        if key:
            t = tot.setdefault(key, [0, 0, 0, 0])
            for i in range(4):
                t[i] += int(m[3 + i])
    return tot


sys.exit(main())
