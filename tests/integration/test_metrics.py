#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""GET /metrics of a running podcapd: lint-free Prometheus text, right values.

podcapd forwards frames of two pods, of no pod and a malformed one between
DPDK pcap ports; one pod's small bucket drops most of its frames. Once the
windows have counted every frame, /metrics must pass `promtool check
metrics` with no output at all, and its counters must equal what the test
sent, what the per-window lines say and what came out of the ports; the
cap is in bytes per second and every sample belongs to a declared family.
Without promtool (Debian's prometheus package, which tools/setup installs)
the values are still checked and the test then reports a skip.
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from daemon import Checks, Podcapd, window_totals  # noqa: E402
from frames import ETH_IPV4, eth, ipv4_packet, read_pcap, write_pcap  # noqa: E402

PODCAPD = os.environ.get("PODCAPD") or sys.argv[1]
KEYGEN = os.environ.get("PODCAP_KEYGEN") or sys.argv[2]
PROMTOOL = os.environ.get("PROMTOOL") or shutil.which("promtool") or "/usr/bin/promtool"
BURST_B = 3000

CONFIG = """\
window: 1s
defaults:
  cap: 100Gbps
  burst: 1MB
  mode: police
dpdk:
  lcores: 0-1
  memory: 512MiB
  file_prefix: metrics-{pid}
uplinks:
  - name: up0
    pod_port: net_pcap0,rx_pcap={d}/in_pod.pcap,tx_pcap={d}/out_pod.pcap
    fabric_port: net_pcap1,rx_pcap={d}/in_fab.pcap,tx_pcap={d}/out_fab.pcap
pods:
  - id: pod-a
    uplink: up0
    prefixes: [10.0.0.0/26]
  - id: pod-b
    uplink: up0
    prefixes: [10.0.0.64/26]
    cap: 8000001bps
    burst: {burst}B
"""

SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$')
LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')


def parse(text):
    """({(name, frozenset(labels)): value}, {family: type}, [sample names of no family])."""
    samples, types, stray = {}, {}, []
    for line in text.splitlines():
        m = re.match(r"# TYPE (\S+) (\S+)$", line)
        if m:
            types[m[1]] = m[2]
            continue
        if line.startswith("#") or not line:
            continue
        m = SAMPLE.match(line)
        if not m:
            stray.append(line)
            continue
        name, labels = m[1], frozenset(LABEL.findall(m[2] or ""))
        samples[(name, labels)] = float(m[3])
        fam = re.sub(r"_(sum|count)$", "", name) if name not in types else name
        if fam not in types or (fam != name and types[fam] != "summary"):
            stray.append(name)
    return samples, types, stray


def value(samples, name, **labels):
    return samples.get((name, frozenset(labels.items())))


def build_inputs():
    """Frames into the pod port and the fabric port, and what each pod sent."""
    a_up = [eth(ETH_IPV4, ipv4_packet("10.0.0.1", "10.0.0.200", n)) for n in (46, 100, 576, 1000, 1500)] * 4
    a_down = [eth(ETH_IPV4, ipv4_packet("10.0.0.200", "10.0.0.2", n), src=2, dst=1) for n in (64, 900)] * 3
    b_up = [eth(ETH_IPV4, ipv4_packet("10.0.0.65", "10.0.0.200", 1000))] * 10
    unmapped = [eth(ETH_IPV4, ipv4_packet("10.0.1.1", "10.0.0.200", 400))] * 3
    malformed = [bytes(10)]
    return a_up + b_up + unmapped + malformed, a_down, {
        "a_up": a_up, "a_down": a_down, "b_up": b_up, "unmapped": unmapped, "malformed": malformed}


def size(frames):
    return sum(len(f) for f in frames)


def counted(tot, sent):
    """Whether the per-window lines account for every frame sent."""
    a_up, a_down = tot.get(("pod-a", "up"), [0] * 4), tot.get(("pod-a", "down"), [0] * 4)
    b_up, link = tot.get(("pod-b", "up"), [0] * 4), tot.get(("uplink", "up"), [0] * 4)
    return (a_up[1] == len(sent["a_up"]) and a_down[1] == len(sent["a_down"]) and
            b_up[1] + b_up[3] == len(sent["b_up"]) and
            link[1] == len(sent["unmapped"]) and link[3] == len(sent["malformed"]))


def get(url):
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    with opener.open(url, timeout=10) as r:
        return r.status, r.headers.get("Content-Type"), r.read()


def promtool_check(check, d, body):
    """promtool check metrics < file: exit 0, nothing printed. False if there is no promtool."""
    if not os.access(PROMTOOL, os.X_OK):
        return False
    path = f"{d}/metrics.txt"
    with open(path, "wb") as f:
        f.write(body)
    with open(path, "rb") as f:
        r = subprocess.run([PROMTOOL, "check", "metrics"], stdin=f, capture_output=True, text=True)
    out = (r.stdout + r.stderr).strip()
    check(r.returncode == 0 and out == "",
          f"promtool check metrics: exit {r.returncode}, output {out or '(none)'!r}")
    return True


def check_values(check, s, tot, sent):
    a_up, a_down, b_up = tot[("pod-a", "up")], tot[("pod-a", "down")], tot[("pod-b", "up")]
    got = value(s, "podcap_passed_bytes_total", pod="pod-a", direction="up")
    check(got == size(sent["a_up"]) == a_up[0],
          f"pod-a passed bytes up: /metrics {got}, sent {size(sent['a_up'])}, windows {a_up[0]}")
    got = value(s, "podcap_passed_frames_total", pod="pod-a", direction="up")
    check(got == len(sent["a_up"]) == a_up[1],
          f"pod-a passed frames up: /metrics {got}, sent {len(sent['a_up'])}, windows {a_up[1]}")
    got = value(s, "podcap_passed_bytes_total", pod="pod-a", direction="down")
    check(got == size(sent["a_down"]) == a_down[0],
          f"pod-a passed bytes down: /metrics {got}, sent {size(sent['a_down'])}, windows {a_down[0]}")

    passed = value(s, "podcap_passed_bytes_total", pod="pod-b", direction="up")
    over = value(s, "podcap_dropped_bytes_total", pod="pod-b", direction="up", reason="over_cap")
    check(passed == b_up[0] and over == b_up[2] and passed + over == size(sent["b_up"]) and
          passed <= BURST_B and over > 0,
          f"pod-b up: /metrics passed {passed} + dropped over_cap {over} = sent "
          f"{size(sent['b_up'])}, windows {b_up[0]} + {b_up[2]}, passed within the burst "
          "(the bucket starts empty)")
    over_f = value(s, "podcap_dropped_frames_total", pod="pod-b", direction="up", reason="over_cap")
    check(over_f == b_up[3], f"pod-b dropped frames over_cap: /metrics {over_f}, windows {b_up[3]}")

    link = tot[("uplink", "up")]
    um = value(s, "podcap_uplink_dropped_bytes_total", uplink="up0", direction="up", reason="unmapped")
    mf = value(s, "podcap_uplink_dropped_frames_total", uplink="up0", direction="up", reason="malformed")
    check(um == size(sent["unmapped"]) == link[0] and mf == len(sent["malformed"]) == link[3],
          f"up0 dropped: unmapped {um} bytes (sent {size(sent['unmapped'])}), malformed {mf} "
          f"frames (sent {len(sent['malformed'])})")

    cap_a = value(s, "podcap_cap_bytes_per_second", pod="pod-a", direction="up")
    cap_b = value(s, "podcap_cap_bytes_per_second", pod="pod-b", direction="down")
    check(cap_a == 100e9 / 8 and cap_b == 1000000.125,
          f"caps in bytes per second: pod-a {cap_a}, pod-b {cap_b} (8000001 bps)")
    burst = value(s, "podcap_burst_bytes", pod="pod-b", direction="up")
    check(burst == BURST_B, f"pod-b burst {burst} bytes")


def check_window_close(check, s):
    bad = []
    for st in ("collect", "print", "encode", "queue", "append", "fsync", "sign", "publish", "total"):
        n = value(s, "podcap_window_close_seconds_count", stage=st)
        tot = value(s, "podcap_window_close_seconds_sum", stage=st)
        top = value(s, "podcap_window_close_max_seconds", stage=st)
        last = value(s, "podcap_window_close_last_seconds", stage=st)
        if None in (n, tot, top, last) or n < 1 or not 0 <= last <= top <= tot:
            bad.append(f"{st}: count {n} sum {tot} max {top} last {last}")
    check(not bad, "window close stages in seconds: count >= 1, 0 <= last <= max <= sum" +
          ("" if not bad else ": " + "; ".join(bad)))


SOURCE = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SHIPPED = [os.path.join(SOURCE, "contrib", "prometheus", "podcapd.rules.yml"),
           os.path.join(SOURCE, "contrib", "grafana", "podcapd.json")]


def check_shipped(check, types):
    """Every podcap_ metric the shipped alert rules and dashboard name is a
    family podcapd declares (families of features this run lacks, such as
    witnesses or attestation, are declared with no samples)."""
    for path in SHIPPED:
        names = set(re.findall(r"\bpodcap_[a-z0-9_]+", open(path).read()))
        unknown = sorted(n for n in names
                         if n not in types and re.sub(r"_(sum|count)$", "", n) not in types)
        check(names and not unknown,
              f"{os.path.basename(path)}: its {len(names)} podcap metrics are podcapd's "
              f"(unknown: {unknown})")


def main():
    check = Checks()
    with tempfile.TemporaryDirectory(prefix="podcap-metrics-") as d:
        up, down, sent = build_inputs()
        write_pcap(f"{d}/in_pod.pcap", up)
        write_pcap(f"{d}/in_fab.pcap", down)
        pd = Podcapd(PODCAPD, KEYGEN, d, "metrics")
        pd.write_config(pd.appliance_yaml() + CONFIG.format(d=d, pid=os.getpid(), burst=BURST_B))
        if not check(pd.start(), "podcapd starts"):
            print(pd.log())
            return 1
        deadline = time.time() + 20
        while not counted(window_totals(pd.stdout()), sent) and time.time() < deadline:
            time.sleep(0.2)
        tot = window_totals(pd.stdout())
        if not check(counted(tot, sent), "the window lines count every frame sent"):
            print(pd.stdout())
        # a window close that follows the last counted one: every stage timed at least once
        time.sleep(1.5)
        status, ctype, body = get(f"http://127.0.0.1:{pd.port()}/metrics")
        check(status == 200 and ctype.startswith("text/plain; version=0.0.4"),
              f"GET /metrics: {status} {ctype}")
        linted = promtool_check(check, d, body)
        s, types, stray = parse(body.decode())
        check(not stray, f"every sample belongs to a declared family ({stray[:3]})")
        check(all(t != "counter" or f.endswith("_total") for f, t in types.items()),
              "every counter ends in _total")
        check("podcap_cap_bits_per_second" not in types, "no family in bits")
        check_shipped(check, types)
        if counted(tot, sent):
            check_values(check, s, tot, sent)
        check_window_close(check, s)
        check((value(s, "podcap_ledger_records") or 0) >= 2, "the ledger has records")
        rc = pd.stop()
        check(rc == 0, f"podcapd stops cleanly ({rc})")
        out = size(read_pcap(f"{d}/out_fab.pcap"))
        passed = sum(value(s, "podcap_passed_bytes_total", pod=p, direction="up") or 0
                     for p in ("pod-a", "pod-b"))
        check(out == passed, f"the fabric port sent {out} bytes, /metrics passed {passed} up")
        if check.failures:
            print(body.decode())
            print(pd.log())
    rc = check.finish()
    if rc == 0 and not linted:
        print(f"SKIP: promtool not found ({PROMTOOL}); install Debian's prometheus package "
              "(tools/setup does) to lint /metrics")
        return 77
    return rc


sys.exit(main())
