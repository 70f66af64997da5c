#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""podcap-monitor verifies a fleet as its logs grow, and says so.

Two live podcapd appliances on pcap ports (app-a, app-b) and one log made
by podcap-ledger-gen (gen), served over HTTP by podcap-bench-serve behind
a forwarder of the test's, so that its operator can swap what is served:

- every appliance verifies: /metrics (promtool check metrics clean when
  promtool is there) and /status.json say so, the report pages and the
  fleet page are served self-contained with their CSP;
- gen's log is rewritten and re-signed (tests/e2e/resign.py: one window's
  bytes hidden, a valid checkpoint over the lie) and served in its place:
  the next pull that starts after it fails it as a fork, the failure
  metric and the status change, and the journal says so;
- app-b's podcapd is killed: its pulls fail, the backoff doubles, and once
  --stalled-after has passed without growth it is stalled (metric, status,
  journal line);
- the monitor is killed -9 and started again on its state directory: it
  says at once what it said before (from its states), and app-a's first
  pull reads only the records after its saved tree (the records it took
  from its state are counted apart), gen is still failed.
"""
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from daemon import Checks, Podcapd  # noqa: E402
from frames import ETH_IPV4, eth, ipv4_packet, write_pcap  # noqa: E402

PODCAPD, KEYGEN, MONITOR, LEDGER_GEN, SERVE = sys.argv[1:6]
HERE = os.path.dirname(os.path.abspath(__file__))
RESIGN = os.path.join(HERE, "..", "e2e", "resign.py")
INTERVAL = 2       # seconds between pulls of every appliance
STALLED_AFTER = 8  # seconds without growth
MAX_BACKOFF = 8

MAP = """\
window: 1s
defaults:
  cap: 50Mbps
  burst: 50ms
dpdk:
  lcores: 0-1
  memory: 512MiB
  file_prefix: monitor-{name}-{pid}
uplinks:
  - name: up0
    pod_port: net_pcap0,rx_pcap={d}/in.pcap,infinite_rx=1,tx_pcap=/dev/null
    fabric_port: net_pcap1,rx_pcap={d}/empty.pcap,tx_pcap=/dev/null
pods:
  - id: pod-a
    uplink: up0
    prefixes: [10.0.0.0/26]
    mode: police
"""

GEN_MAP = """\
appliance:
  id: gen
window: 1s
defaults:
  cap: 1Gbps
  burst: 1s
uplinks:
  - name: up0
    pod_port: 0000:3b:00.0
    fabric_port: 0000:3b:00.1
pods:
  - id: pod-a
    uplink: up0
"""


class Forwarder:
    """A loopback TCP port that forwards each connection to a backend port the test can
    change: the URL the monitor pulls stays the same when the operator swaps the server."""

    def __init__(self, backend):
        self.backend = backend
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.port = self.sock.getsockname()[1]
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while True:
            try:
                c, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(c,), daemon=True).start()

    def _serve(self, c):
        try:
            b = socket.create_connection(("127.0.0.1", self.backend), timeout=10)
        except OSError:
            c.close()
            return
        for src, dst in ((c, b), (b, c)):
            threading.Thread(target=self._pipe, args=(src, dst), daemon=True).start()

    @staticmethod
    def _pipe(src, dst):
        try:
            while True:
                data = src.recv(65536)
                if not data:
                    break
                dst.sendall(data)
        except OSError:
            pass
        for s in (src, dst):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


class Served:
    """podcap-bench-serve over one ledger directory: its port."""

    def __init__(self, d, ledger, tag):
        ports = f"{d}/ports-{tag}"
        self.proc = subprocess.Popen([SERVE, "--ports", ports, ledger],
                                     stderr=open(f"{d}/serve-{tag}.err", "w"))
        self.port = None
        deadline = time.time() + 30
        while time.time() < deadline and self.proc.poll() is None:
            if os.path.exists(ports):
                self.port = int(open(ports).read().split()[0])
                return
            time.sleep(0.05)

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait()


class Monitor:
    def __init__(self, d, fleet, state):
        self.d, self.fleet, self.state = d, fleet, state
        self.proc, self.port, self.errpath = None, None, f"{d}/monitor.err"

    def start(self):
        self.mark = os.path.getsize(self.errpath) if os.path.exists(self.errpath) else 0
        self.proc = subprocess.Popen(
            [MONITOR, "--fleet", self.fleet, "--state-dir", self.state, "--listen",
             "127.0.0.1:0", "--jobs", "2", "--stalled-after", f"{STALLED_AFTER}s",
             "--max-backoff", f"{MAX_BACKOFF}s", "--interval", f"{INTERVAL}s"],
            stdout=subprocess.DEVNULL, stderr=open(self.errpath, "a"))
        found = wait_for(lambda: re.search(r"serving on port (\d+)", self.log()), 30)
        self.port = int(found[1]) if found else None
        return self.port is not None

    def log(self):
        with open(self.errpath) as f:
            f.seek(self.mark)
            return f.read()

    def get(self, path):
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.port}{path}", timeout=10) as r:
                return r.status, dict(r.headers), r.read().decode()
        except urllib.error.HTTPError as e:
            return e.code, dict(e.headers), e.read().decode()
        except OSError as e:
            return None, {}, str(e)

    def status(self):
        code, _, body = self.get("/status.json")
        try:
            return {a["name"]: a for a in json.loads(body)["appliances"]} if code == 200 else {}
        except (ValueError, KeyError):
            return {}

    def metrics(self):
        """{(name, frozenset(labels)): value} of /metrics."""
        code, _, body = self.get("/metrics")
        out = {}
        for line in body.splitlines() if code == 200 else []:
            m = re.match(r'^(\w+)(?:\{(.*)\})? (\S+)$', line)
            if m:
                labels = frozenset(re.findall(r'(\w+)="([^"]*)"', m[2] or ""))
                out[(m[1], labels)] = float(m[3])
        return out

    def kill9(self):
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait()

    def stop(self):
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                return self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        return self.proc.returncode if self.proc else None


def wait_for(cond, timeout):
    """cond() once it is true, or its last value after timeout seconds: conditions, not
    sleeps, so a loaded machine is only slower."""
    deadline = time.time() + timeout
    while True:
        v = cond()
        if v or time.time() > deadline:
            return v
        time.sleep(0.2)


def metric(ms, name, **labels):
    return ms.get((name, frozenset(labels.items())))


def start_appliance(d, name):
    ad = f"{d}/{name}"
    os.makedirs(ad)
    write_pcap(f"{ad}/empty.pcap", [])
    write_pcap(f"{ad}/in.pcap", [eth(ETH_IPV4, ipv4_packet("10.0.0.1", "10.0.0.200", 1000))] * 8)
    pd = Podcapd(PODCAPD, KEYGEN, ad, name)
    pd.write_config(pd.appliance_yaml() + MAP.format(d=ad, name=name, pid=os.getpid()))
    return pd, pd.start()


def write_fleet(d, urls):
    lines = ["jobs: 2", "appliances:"]
    for name, url in urls.items():
        key = f"{name}/appliance.key.pub" if name != "gen" else "gen-key.pub"
        pmap = f"{name}/podmap.yaml" if name != "gen" else "gen.yaml"
        lines += [f"  - name: {name}", f"    url: {url}", f"    key: {key}",
                  f"    pod_maps: [{pmap}]", f"    interval: {INTERVAL}s"]
    with open(f"{d}/fleet.yaml", "w") as f:
        f.write("\n".join(lines) + "\n")
    return f"{d}/fleet.yaml"


def check_verified(check, mon):
    st = wait_for(lambda: (lambda s: s if len(s) == 3 and all(
        a["status"] == "verified" for a in s.values()) else None)(mon.status()), 120)
    check(st is not None, f"every appliance verifies: {mon.status()}")
    ms = mon.metrics()
    for name in ("app-a", "app-b", "gen"):
        check(metric(ms, "podcap_monitor_verified", appliance=name) == 1
              and (metric(ms, "podcap_monitor_tree_size", appliance=name) or 0) > 0
              and metric(ms, "podcap_monitor_verification_failures", appliance=name,
                         check="root") == 0,
              f"{name}: /metrics says verified, a tree size, no failure")
    check("app-a: pending -> verified at tree size" in mon.log(), "the journal line of app-a")
    promtool = shutil.which("promtool")
    if promtool:
        _, _, body = mon.get("/metrics")
        r = subprocess.run([promtool, "check", "metrics"], input=body, capture_output=True,
                           text=True)
        check(r.returncode == 0 and r.stdout.strip() == "" and r.stderr.strip() == "",
              f"promtool check metrics is clean: {(r.stdout + r.stderr).strip()[:300]}")
    else:
        print("note: no promtool; the metrics lint is skipped")


def check_pages(check, mon):
    code, hdr, body = mon.get("/appliances/app-a/report.html")
    csp = hdr.get("Content-Security-Policy", "")
    check(code == 200 and "<article" in body and "<script" not in body.lower()
          and csp.startswith("default-src 'none'"),
          f"app-a's report page: {code}, CSP {csp!r}, no script")
    code, hdr, body = mon.get("/")
    check(code == 200 and 'id="fleet-table"' in body and 'data-name="gen"' in body
          and "<script" not in body.lower()
          and hdr.get("Content-Security-Policy", "").startswith("default-src 'none'"),
          f"the fleet page: {code}")
    code, _, _ = mon.get("/appliances/nosuch/report.html")
    check(code == 404, f"an appliance not of the fleet: {code}")
    req = urllib.request.Request(f"http://127.0.0.1:{mon.port}/metrics", method="POST", data=b"x")
    try:
        code = urllib.request.urlopen(req, timeout=10).status
    except urllib.error.HTTPError as e:
        code = e.code
    check(code == 405, f"read-only: a POST is {code}")


def check_forged(check, mon, d, fwd):
    gen_pulls = lambda: sum(metric(mon.metrics(), "podcap_monitor_pulls_total", appliance="gen",
                                   result=r) or 0 for r in ("verified", "failed", "unreachable"))
    r = subprocess.run([sys.executable, RESIGN, f"{d}/gen-log", f"{d}/gen-key", f"{d}/gen-forged",
                        "pod-a", "up", "1000"], capture_output=True, text=True)
    if not check(r.returncode == 0, f"resign.py rewrites gen's log: {r.stderr.strip()[-200:]}"):
        return None
    forged = Served(d, f"{d}/gen-forged", "forged")
    before = gen_pulls()
    fwd.backend = forged.port
    st = wait_for(lambda: mon.status().get("gen", {}).get("status") == "failed", 60)
    after = gen_pulls()
    ms = mon.metrics()
    check(st, f"gen's status turns failed: {mon.status().get('gen')}")
    # the pull in flight at the swap may have read the old log; the next one is the rewrite's
    check(after - before <= 2, f"within one interval: {after - before} pulls after the swap")
    check((metric(ms, "podcap_monitor_verification_failures", appliance="gen", check="fork")
           or 0) > 0 and metric(ms, "podcap_monitor_verified", appliance="gen") == 0,
          "gen's fork failure on /metrics")
    check(re.search(r"gen: verified -> failed: the log failed verification \(.*fork", mon.log()),
          "the journal says gen failed, and why")
    return forged


def check_down(check, mon, pd_b):
    size_b = mon.status()["app-b"]["tree_size"]
    pd_b.kill()
    st = wait_for(lambda: (lambda a: a if a.get("status") == "unreachable" and
                           a.get("consecutive_errors", 0) >= 2 else None)(
        mon.status().get("app-b", {})), 60)
    check(st is not None, f"app-b unreachable, errors in a row: {mon.status().get('app-b')}")
    ms = mon.metrics()
    check((metric(ms, "podcap_monitor_backoff_seconds", appliance="app-b") or 0) > INTERVAL
          and metric(ms, "podcap_monitor_up", appliance="app-b") == 0,
          f"app-b backs off: {metric(ms, 'podcap_monitor_backoff_seconds', appliance='app-b')} s")
    st = wait_for(lambda: mon.status().get("app-b", {}).get("growth") == "stalled", 60)
    ms = mon.metrics()
    check(st and metric(ms, "podcap_monitor_stalled", appliance="app-b") == 1
          and (metric(ms, "podcap_monitor_log_growth_age_seconds", appliance="app-b") or 0)
          > STALLED_AFTER,
          f"app-b stalled after {STALLED_AFTER} s without growth: {mon.status().get('app-b')}")
    check("app-b: growing -> stalled" in mon.log() and "app-b: verified -> unreachable" in
          mon.log(), "the journal says app-b is unreachable, then stalled")
    check(mon.status()["app-b"]["tree_size"] == size_b, "app-b keeps its last verified size")


def saved(state, name):
    with open(f"{state}/{name}.monitor") as f:
        return dict(line.split() for line in f)


def children(pid):
    """{pid: argv} of the processes whose parent is pid."""
    out = {}
    for e in os.listdir("/proc"):
        try:
            with open(f"/proc/{e}/stat") as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
            if ppid == pid:
                with open(f"/proc/{e}/cmdline", "rb") as f:
                    out[int(e)] = f.read().split(b"\0")
        except (OSError, ValueError, IndexError):
            pass
    return out


def launcher_of(mon):
    kids = children(mon.proc.pid)
    found = [p for p, argv in kids.items() if argv[1:2] == [b"--pull-launcher"]]
    return (found[0] if len(found) == 1 and len(kids) == 1 else None), kids


def check_launcher(check, mon):
    """Pulls are forked by the one pull launcher; it killed, another takes its place."""
    launcher, kids = launcher_of(mon)
    if not check(launcher is not None,
                 f"the monitor's one child is the pull launcher: {sorted(kids)}"):
        return
    seen, others = set(), set()
    deadline = time.monotonic() + 3 * INTERVAL + 5
    while time.monotonic() < deadline and not seen:
        seen |= set(children(launcher))
        others |= set(children(mon.proc.pid)) - {launcher}
        time.sleep(0.02)
    check(seen and not others, f"pulls are the launcher's children ({len(seen)} seen), "
          f"none the monitor's ({sorted(others)})")
    before = metric(mon.metrics(), "podcap_monitor_pulls_total", appliance="app-a",
                    result="verified") or 0
    os.kill(launcher, signal.SIGKILL)
    said = wait_for(lambda: re.search(rf"the pull launcher \(pid {launcher}\) was killed by "
                                      r"signal 9: .*starting another", mon.log()), 10)
    check(said, "the journal says the launcher was lost and another started")
    again = wait_for(lambda: (lambda p: p if p not in (None, launcher) else None)(
        launcher_of(mon)[0]), 10)
    check(again is not None, f"a new launcher runs: {again}")
    ms = wait_for(lambda: (lambda m: m if (metric(m, "podcap_monitor_pulls_total",
                                                  appliance="app-a", result="verified") or 0)
                           > before else None)(mon.metrics()), 3 * INTERVAL + 10)
    check(ms is not None, "app-a verifies again through the new launcher")
    return again


def check_restart(check, mon, state):
    # a pull of app-a finished after the kill, and its size is what the state vouches for
    launcher, _ = launcher_of(mon)
    mon.kill9()
    gone = wait_for(lambda: launcher is not None and not os.path.exists(f"/proc/{launcher}"), 10)
    check(gone, f"the pull launcher ({launcher}) dies with the monitor killed -9")
    before = {n: saved(state, n) for n in ("app-a", "app-b", "gen")}
    check(all(b.get("verdict") for b in before.values()), "every state reads whole after kill -9")
    if not check(mon.start(), "the monitor starts again on its state directory"):
        return
    st = mon.status()
    check(st.get("gen", {}).get("status") == "failed" and st.get("app-b", {}).get("growth")
          == "stalled", f"at once, from its states: gen failed, app-b stalled: {st}")
    size_a = int(before["app-a"]["size"])
    ms = wait_for(lambda: (lambda m: m if (metric(m, "podcap_monitor_pulls_total",
                                                  appliance="app-a", result="verified") or 0)
                           >= 1 else None)(mon.metrics()), 60)
    if not check(ms is not None, "app-a verifies again after the restart"):
        return
    resumed = metric(ms, "podcap_monitor_pull_resumed_records", appliance="app-a")
    read = metric(ms, "podcap_monitor_pull_records", appliance="app-a")
    total = metric(ms, "podcap_monitor_records_read_total", appliance="app-a")
    size = metric(ms, "podcap_monitor_tree_size", appliance="app-a")
    check(resumed == size_a and read == size - size_a and total == read and read < size,
          f"app-a resumed at its saved tree ({resumed} of {size_a}), read only the "
          f"{read} records after it of {size}")
    st = wait_for(lambda: (metric(mon.metrics(), "podcap_monitor_pulls_total", appliance="gen",
                                  result="failed") or 0) >= 1, 60)
    check(st and mon.status().get("gen", {}).get("status") == "failed"
          and (metric(mon.metrics(), "podcap_monitor_verification_failures", appliance="gen",
                      check="fork") or 0) > 0,
          "gen fails again against the state it verified before the rewrite")


def main():
    check = Checks()
    with tempfile.TemporaryDirectory(prefix="podcap-monitor-") as d:
        apps, served, mon = [], [], None
        try:
            for name in ("app-a", "app-b"):
                pd, ok = start_appliance(d, name)
                apps.append(pd)
                if not check(ok, f"podcapd {name} starts"):
                    print(pd.log())
                    return check.finish()
            with open(f"{d}/gen.yaml", "w") as f:
                f.write(GEN_MAP)
            subprocess.run([KEYGEN, "--out", f"{d}/gen-key", "--name", "podcap/gen"], check=True,
                           stdout=subprocess.DEVNULL)
            subprocess.run([LEDGER_GEN, "--key", f"{d}/gen-key", "--pod-map", f"{d}/gen.yaml",
                            "--out", f"{d}/gen-log"], check=True, stdout=subprocess.DEVNULL)
            served.append(Served(d, f"{d}/gen-log", "honest"))
            if not check(served[0].port is not None, "podcap-bench-serve serves gen's log"):
                return check.finish()
            fwd = Forwarder(served[0].port)
            fleet = write_fleet(d, {"app-a": f"http://127.0.0.1:{apps[0].port()}",
                                    "app-b": f"http://127.0.0.1:{apps[1].port()}",
                                    "gen": f"http://127.0.0.1:{fwd.port}"})
            mon = Monitor(d, fleet, f"{d}/state")
            if not check(mon.start(), "podcap-monitor starts and listens"):
                print(mon.log())
                return check.finish()
            check_verified(check, mon)
            check_pages(check, mon)
            forged = check_forged(check, mon, d, fwd)
            if forged:
                served.append(forged)
            check_down(check, mon, apps[1])
            check_restart(check, mon, f"{d}/state")
            # last: the launcher's pulls in flight are lost with it (unreachable)
            check_launcher(check, mon)
            launcher, _ = launcher_of(mon)
            check(mon.stop() == 0, "SIGTERM stops it, exit 0")
            check(launcher is not None and not os.path.exists(f"/proc/{launcher}") and
                  not children(mon.proc.pid), "and its launcher and pulls with it")
        finally:
            if mon is not None:
                mon.stop()
                if check.failures:
                    print(mon.log()[-4000:])
            for s in served:
                s.stop()
            for pd in apps:
                pd.stop()
    return check.finish()


if __name__ == "__main__":
    sys.exit(main())
