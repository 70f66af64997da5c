#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""A shaper and two taps on DPDK pcap ports: the taps count what crossed.

A shaper caps pod-b and passes pod-a. A fabric-side tap is fed what the
shaper sent to the fabric (its tx pcap) and what came from the fabric; a
pod-side tap what the pod offered and what the shaper sent to the pod.
Each tap writes a ledger of its own, with its own key, that podcap-verify
accepts. The counts must agree exactly: the fabric-side tap's up is the
shaper's passed up, the pod-side tap's up its passed + dropped, and both
taps classify unmapped and malformed frames as the shaper does. Every
tap WINDOW is followed by an OBSERVE of the same span that says the pcap
ports lost nothing.

Two taps of other appliances run beside the shaper, seeing nothing: one
whose map puts the same pod ids on its own uplink, one whose pods are on
an uplink of the same name but hold other prefixes. Given as the
shaper's taps, each would agree with it over every idle window; the
first is refused from the logs alone, the second once --pod-map holds the
maps (exit 1, the tap and what differs named, the last line saying so).
"""
import json
import os
import struct
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from daemon import Checks, Podcapd, ledger_entries  # noqa: E402
from frames import ETH_IPV4, eth, ipv4_packet, read_pcap, write_pcap  # noqa: E402

PODCAPD = os.environ.get("PODCAPD") or sys.argv[1]
KEYGEN = os.environ.get("PODCAP_KEYGEN") or sys.argv[2]
VERIFY = os.environ.get("PODCAP_VERIFY") or sys.argv[3]

PODS = """\
window: 1s
defaults:
  cap: 100Gbps
  burst: 1MB
  mode: police
dpdk:
  lcores: 0-1
  memory: 512MiB
  file_prefix: {name}-{pid}
uplinks:
  - name: up0
    pod_port: net_pcap0,rx_pcap={rx_pod}{tx_pod}
    fabric_port: net_pcap1,rx_pcap={rx_fab}{tx_fab}
pods:
  - id: pod-a
    uplink: up0
    prefixes: [10.0.0.0/26]
  - id: pod-b
    uplink: up0
    prefixes: [10.0.0.64/26]
    cap: 100Mbps
    burst: 20000B
"""


def inputs():
    up, down = [], []
    for size in (46, 100, 576, 1000, 1500):
        up.append(eth(ETH_IPV4, ipv4_packet("10.0.0.1", "10.0.0.200", size)))
        down.append(eth(ETH_IPV4, ipv4_packet("10.0.0.200", "10.0.0.2", size), src=2, dst=1))
    for _ in range(60):  # pod-b: far more than its burst, at once
        up.append(eth(ETH_IPV4, ipv4_packet("10.0.0.70", "10.0.0.200", 986)))
        down.append(eth(ETH_IPV4, ipv4_packet("10.0.0.200", "10.0.0.71", 986)))
    up.append(eth(ETH_IPV4, ipv4_packet("10.0.0.130", "10.0.0.200", 400)))  # unmapped
    up.append(bytes(10))  # malformed: a runt
    down.append(eth(ETH_IPV4, ipv4_packet("10.0.0.200", "10.0.0.250", 300)))  # unmapped
    return up, down


def run(pd, yaml_text, seconds=2.5):
    pd.write_config(pd.appliance_yaml() + yaml_text)
    if not pd.start():
        print(pd.log())
        return None
    time.sleep(seconds)
    return pd.stop()


def verify(pd):
    r = subprocess.run([VERIFY, "--key", pd.key + ".pub", "--ledger", pd.ledger, "--json"],
                       capture_output=True, text=True, timeout=60)
    return r.returncode, json.loads(r.stdout) if r.stdout.startswith("{") else None, r.stderr


def totals(report):
    """{(pod, dir): (bytes, frames, dropped bytes, dropped frames)} and {(dir): link drops}."""
    pods = {}
    for p in report["pods"]:
        db = sum(v["bytes"] for v in p["drops"].values())
        df = sum(v["frames"] for v in p["drops"].values())
        pods[(p["pod"], p["dir"])] = (p["bytes"], p["frames"], db, df)
    links = {(k["dir"]): (k["unmapped"]["frames"], k["unmapped"]["bytes"],
                          k["malformed"]["frames"], k["malformed"]["bytes"])
             for k in report["links"]}
    return pods, links


def span(rec):
    """(type, window_start_ns, window_len_ns, window_count) of a record."""
    n = rec[2]
    return (rec[1],) + struct.unpack(">QQQ", rec[3 + n + 8:3 + n + 32])


def observe_losses(rec):
    """The side byte and the sum of every loss counter of an OBSERVE record."""
    n = rec[2]
    off = 3 + n + 32 + 64 + 8  # header, digests, npods = 0, nlinks = 0
    side = rec[off]
    nseen = struct.unpack(">I", rec[off + 1:off + 5])[0]
    off += 5
    lost = 0
    for _ in range(nseen):
        off += 1 + rec[off]
        lost += sum(struct.unpack(">6Q", rec[off:off + 48]))
        off += 48
    return side, nseen, lost, off == len(rec)


def check_observes(check, name, ledger, side):
    recs = ledger_entries(ledger)
    windows = observes = 0
    for i, r in enumerate(recs):
        if r[1] == 2:
            windows += 1
            ok = i + 1 < len(recs) and recs[i + 1][1] == 8 and span(recs[i + 1])[1:] == span(r)[1:]
            check(ok, f"{name}: window record {i} is followed by an observe record of its span")
        if r[1] == 8:
            observes += 1
            s, nseen, lost, exact = observe_losses(r)
            check(s == side and nseen == 1 and lost == 0 and exact,
                  f"{name}: observe record {i}: side {s}, {nseen} uplink, {lost} frames lost")
    check(windows > 0 and windows == observes, f"{name}: {windows} windows, {observes} observe records")


def other_tap(d, name, pid, edit):
    """A fabric-side tap of another appliance, on empty inputs: its map is the shaper's, edited."""
    os.makedirs(f"{d}/{name}")
    tap = Podcapd(PODCAPD, KEYGEN, f"{d}/{name}", name)
    text = edit(PODS.format(name=name, pid=pid, rx_pod=f"{d}/empty.pcap", tx_pod="",
                            rx_fab=f"{d}/empty.pcap", tx_fab=""))
    tap.write_config(tap.appliance_yaml() + "  role: fabric-tap\n" + text)
    return tap


def reconcile(shaper, tap, *opts):
    """podcap-verify --tap, text then JSON: (exit, last line, stderr, JSON report)."""
    args = [VERIFY, "--key", shaper.key + ".pub", "--ledger", shaper.ledger,
            "--tap", tap.ledger, "--tap-key", tap.key + ".pub", *opts]
    r = subprocess.run(args, capture_output=True, text=True, timeout=60)
    j = subprocess.run(args + ["--json"], capture_output=True, text=True, timeout=60)
    try:
        doc = json.loads(j.stdout)
    except ValueError:
        doc = {}
    return r.returncode, (r.stdout.strip().splitlines() or [""])[-1], r.stderr, doc


def check_others(check, shaper, others):
    """The other appliances' taps are refused, each naming what differs from the shaper."""
    uplink, prefixes = others
    maps = ["--pod-map", shaper.config, "--pod-map", uplink.config, "--pod-map", prefixes.config]
    want = "its uplinks are up1, the shaper's up0"
    for opts in ([], maps):
        rc, last, err, doc = reconcile(shaper, uplink, *opts)
        check(rc == 1 and f"--tap {uplink.ledger}: window " in err and want in err
              and last.startswith("RECONCILE FAILED: ") and "tap 1 refused: window " in last
              and want in last and doc.get("ok") is False,
              f"another appliance's tap, its pods on its own uplink{' (maps)' if opts else ''}: "
              f"exit {rc}, {last[:200]}")
    rc, last, err, doc = reconcile(shaper, prefixes)
    check(rc == 0 and last.startswith("reconciled: ") and "refused" not in last,
          f"a tap whose pods hold other prefixes cannot be told apart without the maps: exit {rc}, "
          f"{last[:120]}")
    rc, last, err, doc = reconcile(shaper, prefixes, *maps)
    want = ("its pod map (appliance prefix-tap) is not the shaper's (appliance shaper): "
            "'prefix 10.1.0.0/26' where the shaper's has 'prefix 10.0.0.0/26' (pod pod-a)")
    check(rc == 1 and want in err and want in last and doc.get("ok") is False
          and want in doc.get("reconciliation", {}).get("refused", [{}])[0].get("reason", ""),
          f"with the maps, a tap whose pods hold other prefixes is refused: exit {rc}, "
          f"{last[:300]}")


def main():
    up, down = inputs()
    check = Checks()
    pid = os.getpid()
    with tempfile.TemporaryDirectory(prefix="podcap-tap-") as d:
        write_pcap(f"{d}/in_pod.pcap", up)
        write_pcap(f"{d}/in_fab.pcap", down)
        write_pcap(f"{d}/empty.pcap", [])
        others = (other_tap(d, "uplink-tap", pid, lambda t: t.replace("up0", "up1")),
                  other_tap(d, "prefix-tap", pid, lambda t: t.replace("10.0.0.", "10.1.0.")))
        for o in others:
            check(o.start(), f"{o.id} starts")
        shaper = Podcapd(PODCAPD, KEYGEN, f"{d}", "shaper")
        rc = run(shaper, PODS.format(name="shaper", pid=pid, rx_pod=f"{d}/in_pod.pcap",
                                     tx_pod=f",tx_pcap={d}/out_pod.pcap", rx_fab=f"{d}/in_fab.pcap",
                                     tx_fab=f",tx_pcap={d}/out_fab.pcap"))
        check(rc == 0, f"the shaper exits 0 (got {rc})")
        time.sleep(1.2)  # the taps outlast the shaper's last window
        for o in others:
            check(o.stop() == 0, f"{o.id} exits 0")
        check_others(check, shaper, others)
        out_fab = read_pcap(f"{d}/out_fab.pcap")
        out_pod = read_pcap(f"{d}/out_pod.pcap")
        check(0 < len(out_fab) < len(up), f"the shaper passed {len(out_fab)} of {len(up)} frames up")

        taps = {}
        for name, side, rx_pod, rx_fab in (("fabric-tap", 2, "out_fab.pcap", "in_fab.pcap"),
                                           ("pod-tap", 1, "in_pod.pcap", "out_pod.pcap")):
            os.makedirs(f"{d}/{name}")
            tap = Podcapd(PODCAPD, KEYGEN, f"{d}/{name}", name)
            text = PODS.format(name=name, pid=pid, rx_pod=f"{d}/{rx_pod}", tx_pod="",
                               rx_fab=f"{d}/{rx_fab}", tx_fab="")
            tap.write_config(tap.appliance_yaml() + f"  role: {name}\n" + text)
            if not tap.start():
                print(tap.log())
                check(False, f"{name} starts")
                continue
            check("observing only, nothing is transmitted" in tap.log(),
                  f"{name}: says it only observes")
            time.sleep(2.5)
            rc = tap.stop()
            check(rc == 0, f"{name} exits 0 (got {rc})")
            check_observes(check, name, tap.ledger, side)
            vrc, report, err = verify(tap)
            check(vrc == 0 and report is not None and report["ok"],
                  f"{name}: podcap-verify accepts the tap's ledger with the tap's key ({vrc} {err})")
            taps[name] = report

        vrc, sreport, err = verify(shaper)
        check(vrc == 0, f"podcap-verify accepts the shaper's ledger ({vrc} {err})")
        if sreport is None or len(taps) != 2 or any(r is None for r in taps.values()):
            return check.finish()
        spods, slinks = totals(sreport)
        fpods, flinks = totals(taps["fabric-tap"])
        ppods, plinks = totals(taps["pod-tap"])
        for pod in ("pod-a", "pod-b"):
            s_up, s_down = spods[(pod, "up")], spods[(pod, "down")]
            check(fpods[(pod, "up")] == (s_up[0], s_up[1], 0, 0),
                  f"{pod} up: the fabric-side tap saw {fpods[(pod, 'up')][:2]}, "
                  f"the shaper passed {s_up[:2]}")
            check(ppods[(pod, "down")] == (s_down[0], s_down[1], 0, 0),
                  f"{pod} down: the pod-side tap saw {ppods[(pod, 'down')][:2]}, "
                  f"the shaper passed {s_down[:2]}")
            offered = (s_up[0] + s_up[2], s_up[1] + s_up[3])
            check(ppods[(pod, "up")][:2] == offered,
                  f"{pod} up: the pod-side tap saw {ppods[(pod, 'up')][:2]} offered, "
                  f"the shaper passed + dropped {offered}")
            offered = (s_down[0] + s_down[2], s_down[1] + s_down[3])
            check(fpods[(pod, "down")][:2] == offered,
                  f"{pod} down: the fabric-side tap saw {fpods[(pod, 'down')][:2]} offered, "
                  f"the shaper passed + dropped {offered}")
        check(spods[("pod-b", "up")][3] > 0, "the shaper dropped pod-b frames over the cap")
        check(plinks["up"] == slinks["up"] and flinks["down"] == slinks["down"],
              f"unmapped and malformed frames: taps {plinks['up']} {flinks['down']}, "
              f"shaper {slinks['up']} {slinks['down']}")
    return check.finish()


sys.exit(main())
