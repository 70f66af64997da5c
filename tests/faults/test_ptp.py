#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""podcapd reads the clock discipline from a real ptp4l, and outlives it.

In network namespaces of its own, the test runs Debian's ptp4l twice over a
veth pair, software timestamps, layer 2: a grandmaster in namespace `gm`, a
slave-only clock in the test's own namespace, both --free_running (every
namespace shares the machine's one clock: neither may adjust it, they only
measure; the slave's port stays UNCALIBRATED, its servo never locking).

- podcapd's client (ptp4l_probe, one poll with src/discipline/ptp4l.c)
  reads what `pmc -u -b 0` prints for the same socket: offsetFromMaster,
  meanPathDelay, stepsRemoved, the grandmaster, gmPresent, the port
  state; the bound is |offset| + |mean path delay| rounded up to the ns;
- podcapd --ptp4l SOCKET shows the same on /metrics, promtool-clean;
- with no ptp4l at all (no socket) podcapd forwards, its windows close
  every second, the polls count as `down` and no reading is shown;
- with ptp4l stopped mid-run (SIGSTOP) the polls count as `timeout`, with
  it killed as `down`, and windows keep closing every second throughout;
  a ptp4l started again is read again; podcapd stops cleanly and leaves
  no socket of its own behind;
- a podcapd whose pod map declares `appliance.clock` writes a SYNC record
  after every window, signed like the rest: podcap-verify shows the
  grandmaster pmc prints and the worst bound; the windows read while ptp4l
  answered pass a clock offset of 1 s and are refused at 1 ns (every real
  bound includes a path delay, more than 1 ns); the windows of a ptp4l
  stopped for 3 s are refused as not locked whatever the offset, naming
  the record.
"""
import atexit
import math
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import faultlib  # noqa: E402
from faultlib import Checks, Podcapd  # noqa: E402

faultlib.enter("network namespaces and veths for ptp4l", net=True)
PODCAPD, KEYGEN, PROBE, VERIFY = sys.argv[1:5]
PROMTOOL = shutil.which("promtool") or "/usr/bin/promtool"
SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$', re.M)
PORT_STATES = {"INITIALIZING": 1, "FAULTY": 2, "DISABLED": 3, "LISTENING": 4, "PRE_MASTER": 5,
               "MASTER": 6, "PASSIVE": 7, "UNCALIBRATED": 8, "SLAVE": 9, "GRAND_MASTER": 10}
children = []


@atexit.register
def _kill_children():
    """ptp4l and podcapd die with the test, whatever happens (the pid namespace ends them too)."""
    for p in children:
        if p.poll() is None:
            p.kill()
            p.wait()


class ClockPodcapd(Podcapd):
    """Podcapd started with the clock discipline's options after --config."""

    def __init__(self, *args, extra=()):
        super().__init__(*args)
        self.extra = list(extra)

    def start(self, timeout=60):
        self.out = open(f"{self.dir}/stdout", "a+")
        self.err = open(f"{self.dir}/stderr", "a+")
        self.err_mark = self.err.seek(0, os.SEEK_END)
        self.proc = subprocess.Popen([self.podcapd, "--config", self.config] + self.extra,
                                     stdout=self.out, stderr=self.err)
        children.append(self.proc)
        return self.wait_log("forwarding", timeout)


def sh(*cmd):
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)


def network():
    """A veth pair, vgm in namespace gm and vsl here, both up."""
    os.makedirs("/run/netns", exist_ok=True)
    sh("mount", "-t", "tmpfs", "-o", "size=1m", "podcap-netns", "/run/netns")
    sh("ip", "netns", "add", "gm")
    sh("ip", "link", "add", "vsl", "type", "veth", "peer", "name", "vgm")
    sh("ip", "link", "set", "vgm", "netns", "gm")
    sh("ip", "link", "set", "vsl", "up")
    sh("ip", "netns", "exec", "gm", "ip", "link", "set", "vgm", "up")


def ptp4l(d, name, iface, netns=None, gm=False):
    """ptp4l on iface, its management socket d/name.sock; measures only, adjusts nothing."""
    cmd = ["ptp4l", "-S", "-2", "-i", iface, "-m", "--free_running=1",
           "--logAnnounceInterval=-1", f"--uds_address={d}/{name}.sock"]
    # a Sync every 4 s: a reading holds long enough to be compared with pmc's
    cmd += ["--priority1=1", "--logSyncInterval=2"] if gm else ["-s"]
    if netns:
        cmd = ["ip", "netns", "exec", netns] + cmd
    log = open(f"{d}/{name}.log", "a")
    p = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT)
    children.append(p)
    return p


def pmc(d, sock):
    """What `pmc -u -b 0` prints for the data sets podcap reads, as {field: value}."""
    r = subprocess.run(["pmc", "-u", "-b", "0", "-i", f"{d}/pmc.sock", "-s", sock,
                        "GET DEFAULT_DATA_SET", "GET TIME_STATUS_NP", "GET CURRENT_DATA_SET",
                        "GET PARENT_DATA_SET", "GET PORT_DATA_SET"],
                       capture_output=True, text=True, timeout=10)
    out, ports = {}, {}
    for block in re.split(r"\n\t(?=\S+ seq \d+ RESPONSE MANAGEMENT )", "\n" + r.stdout):
        m = re.match(r"(\S+) seq \d+ RESPONSE MANAGEMENT (\w+)", block)
        if not m:
            continue
        fields = dict(re.findall(r"^\t\t(\S+)\s+(.*?)\s*$", block, re.M))
        if m[2] == "PORT_DATA_SET":
            ports[int(fields["portIdentity"].rsplit("-", 1)[1])] = fields["portState"]
        else:
            out.update(fields)
    out["ports"] = ports
    return out


def probe(sock):
    r = subprocess.run([PROBE, sock], capture_output=True, text=True, timeout=10)
    out = {}
    for line in r.stdout.splitlines():
        k, _, v = line.partition(" ")
        out.setdefault(k, v)
        if k == "portState":
            out.setdefault("ports", {})[int(v.split()[0])] = v.split()[1]
    return out


def metrics(port):
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    with opener.open(f"http://127.0.0.1:{port}/metrics", timeout=10) as r:
        return r.read().decode()


def samples(text, name):
    """{labels text: value} of one family's samples."""
    return {m[2] or "": float(m[3]) for m in SAMPLE.finditer(text) if m[1] == name}


def one(text, name, default=None):
    v = samples(text, name)
    return next(iter(v.values())) if v else default


def polls(text):
    return {re.search(r'result="(\w+)"', k)[1]: v
            for k, v in samples(text, "podcap_clock_polls_total").items()}


def bound_ns(p):
    """The documented rule, from pmc's values: |offset| + |delay|, in ns, rounded up."""
    return math.ceil(abs(float(p["offsetFromMaster"])) + abs(float(p["meanPathDelay"])))


def wait(cond, timeout, step=0.25):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        v = cond()
        if v:
            return v
        time.sleep(step)
    return None


SYNC_KEYS = ("offsetFromMaster", "meanPathDelay", "ingress_time")


def stable_pmc(d, sock, between, keys=SYNC_KEYS):
    """pmc, between(), pmc again: (pmc's values before, between's, pmc's after) once none
    of keys changed in between."""
    for _ in range(12):
        before = pmc(d, sock)
        got = between()
        after = pmc(d, sock)
        if before.get("offsetFromMaster") and all(before.get(k) == after.get(k) for k in keys):
            return before, got, after
        time.sleep(0.3)
    return None, None, None


def check_probe(check, d, sock):
    p, got, _ = stable_pmc(d, sock, lambda: probe(sock))
    if not check(p is not None, "pmc reads the same CURRENT_DATA_SET twice around a poll"):
        return None
    check(got.get("result") == "ok", f"podcap's client reads ptp4l: {got.get('result')} {got.get('why', '')}")
    for k in ("offsetFromMaster", "meanPathDelay", "stepsRemoved", "grandmasterIdentity",
              "gmPresent", "clockIdentity", "ingress_time"):
        check(got.get(k) == p.get(k), f"{k}: podcap reads {got.get(k)}, pmc prints {p.get(k)}")
    check(got.get("ports") == p["ports"], f"port states: podcap {got.get('ports')}, pmc {p['ports']}")
    check(p["gmPresent"] == "true" and p["ports"].get(1) == "UNCALIBRATED",
          f"the slave follows the grandmaster (gmPresent {p['gmPresent']}, port {p['ports']})")
    check(got.get("bound_ns") == str(bound_ns(p)),
          f"the bound is |offset| + |mean path delay|: {got.get('bound_ns')} ns, "
          f"{bound_ns(p)} from pmc's values")
    return p


def check_metrics(check, d, sock, pd):
    def scrape():
        time.sleep(1.3)  # past a poll of podcapd's (every second) after pmc's first reading
        return time.time() - 1.3, metrics(pd.port())
    # a scrape spans a Delay_Resp or two (one a second), which may move ptp4l's median
    # path delay: only a Sync (every 4 s) must not come in between
    p, got, p2 = stable_pmc(d, sock, scrape, keys=("offsetFromMaster", "ingress_time"))
    if not check(p is not None, "pmc reads the same CURRENT_DATA_SET twice around a scrape"):
        return
    t0, text = got
    off = one(text, "podcap_clock_offset_seconds")
    check(off is not None and abs(off * 1e9 - float(p["offsetFromMaster"])) < 0.01,
          f"podcap_clock_offset_seconds {off}: pmc's offsetFromMaster {p['offsetFromMaster']} ns")
    # ptp4l's median filter can take the path delay away and back between two of pmc's
    # readings: within what pmc read before and after, give or take 100 ns, is enough
    delay = one(text, "podcap_clock_mean_path_delay_seconds")
    lo, hi = sorted((float(p["meanPathDelay"]), float(p2["meanPathDelay"])))
    check(delay is not None and lo - 100 < delay * 1e9 < hi + 100,
          f"podcap_clock_mean_path_delay_seconds {delay}: pmc's meanPathDelay "
          f"{p['meanPathDelay']} then {p2['meanPathDelay']} ns")
    b = one(text, "podcap_clock_offset_bound_seconds")
    check(b is not None and delay is not None and
          round(b * 1e9) == math.ceil(round(abs(off) * 1e9, 3) + round(abs(delay) * 1e9, 3)),
          f"podcap_clock_offset_bound_seconds {b}: |offset| + |mean path delay| of the same reading")
    states = samples(text, "podcap_clock_port_state")
    check(states == {'port="1"': PORT_STATES[p["ports"][1]]},
          f"podcap_clock_port_state {states}: pmc's {p['ports']}")
    gm = samples(text, "podcap_clock_grandmaster_info")
    check(list(gm) == [f'grandmaster="{p["grandmasterIdentity"]}",present="true"'],
          f"podcap_clock_grandmaster_info {list(gm)}: pmc's {p['grandmasterIdentity']}")
    read = one(text, "podcap_clock_read_timestamp_seconds", 0)
    check(read >= t0 - 0.01, f"the reading shown was taken after pmc's ({read - t0:+.3f} s)")
    check(one(text, "podcap_clock_discipline_up") == 1, "podcap_clock_discipline_up is 1")
    promtool(check, d, text)


def promtool(check, d, text):
    if not check(os.access(PROMTOOL, os.X_OK), "promtool is installed (tools/setup)"):
        return
    with open(f"{d}/metrics.txt", "w") as f:
        f.write(text)
    with open(f"{d}/metrics.txt") as f:
        r = subprocess.run([PROMTOOL, "check", "metrics"], stdin=f, capture_output=True, text=True)
    out = (r.stdout + r.stderr).strip()
    check(r.returncode == 0 and out == "", f"promtool check metrics: exit {r.returncode}, {out or 'no output'}")


def windows_during(pd, seconds):
    """How many windows closed in the next `seconds`."""
    mark = len(pd.stdout().splitlines())
    time.sleep(seconds)
    return len(faultlib.rates(pd.stdout().splitlines()[mark:]))


def start_podcapd(d, name, sock):
    """podcapd of its own ledger in d/name, fed by traffic."""
    d = f"{d}/{name}"
    os.mkdir(d)
    faultlib.traffic(d)
    pd = ClockPodcapd(PODCAPD, KEYGEN, d, name, extra=["--ptp4l", sock])
    pd.write_config(pd.appliance_yaml() + faultlib.pod_map(d, name))
    return pd, pd.start()


def no_discipline(check, d):
    """No ptp4l at all: counted, forwarding and windows as ever."""
    sock = f"{d}/missing.sock"
    pd, started = start_podcapd(d, "noptp", sock)
    if not check(started, "podcapd starts with --ptp4l naming no socket"):
        print(pd.log()[-3000:])
        return
    n = windows_during(pd, 3)
    text = metrics(pd.port())
    check(n >= 2, f"windows close every second without ptp4l: {n} in 3 s")
    got = polls(text)
    check(got.get("down", 0) >= 2 and got.get("ok") == 0,
          f"the polls count as down: {got}")
    check(one(text, "podcap_clock_discipline_up") == 0, "podcap_clock_discipline_up is 0")
    check(not samples(text, "podcap_clock_offset_seconds") and
          not samples(text, "podcap_clock_port_state"), "and no reading is shown")
    check("no reading (down)" in pd.log(), "the log says once why there is no reading")
    check(pd.log().count("no reading (down)") == 1, "and only once")
    check(pd.stop() == 0, "podcapd stops cleanly")


def outages(check, d, sock, slave, pd):
    """ptp4l stopped, resumed, killed, started again: counted, never a stalled window."""
    before = polls(metrics(pd.port()))
    slave.send_signal(signal.SIGSTOP)
    n = windows_during(pd, 3)
    text = metrics(pd.port())
    after = polls(text)
    check(n >= 2, f"windows close every second while ptp4l is stopped: {n} in 3 s")
    check(after.get("timeout", 0) - before.get("timeout", 0) >= 2,
          f"its polls count as timeouts: {before} then {after}")
    check(one(text, "podcap_clock_discipline_up") == 0 and
          not samples(text, "podcap_clock_offset_seconds"),
          "podcap_clock_discipline_up is 0 and no stale offset is shown")
    slave.send_signal(signal.SIGCONT)
    check(wait(lambda: one(metrics(pd.port()), "podcap_clock_discipline_up") == 1, 5),
          "read again once ptp4l resumes")
    slave.kill()
    slave.wait()
    before = polls(metrics(pd.port()))
    n = windows_during(pd, 3)
    after = polls(metrics(pd.port()))
    check(n >= 2, f"windows close every second once ptp4l is gone: {n} in 3 s")
    check(after.get("down", 0) - before.get("down", 0) >= 2, f"its polls count as down: {after}")
    check(pd.proc.poll() is None, "podcapd runs on")
    ptp4l(d, "ptp4l", "vsl")
    check(wait(lambda: one(metrics(pd.port()), "podcap_clock_discipline_up") == 1, 10),
          "a ptp4l started again is read again")


SYNC = 11  # the record type (docs/log-format.md)


def syncs(pd):
    """The indexes of pd's ledger's SYNC records."""
    return [i for i, r in enumerate(faultlib.ledger_records(pd.ledger)) if r[1] == SYNC]


def failures(report):
    return [(f.get("check"), f.get("record"), f.get("message", "")) for f in report.get("failures", [])]


def sync_records(check, d, sock, slave, gm):
    """appliance.clock: a SYNC after every window, judged against D by podcap-verify."""
    d = f"{d}/sync"
    os.mkdir(d)
    faultlib.traffic(d)
    pd = ClockPodcapd(PODCAPD, KEYGEN, d, "sync")
    pd.write_config(pd.appliance_yaml() + f"  clock:\n    ptp4l: {sock}\n" +
                    faultlib.pod_map(d, "sync"))
    if not check(pd.start(), "podcapd starts with appliance.clock naming ptp4l's socket"):
        print(pd.log()[-3000:])
        return
    check(wait(lambda: len(syncs(pd)) >= 3, 30), "SYNC records follow its windows")
    # every SYNC so far read a locked ptp4l: those are the honest windows
    honest = len(faultlib.ledger_records(pd.ledger))
    slave.send_signal(signal.SIGSTOP)
    time.sleep(3)
    slave.send_signal(signal.SIGCONT)
    stopped = len(faultlib.ledger_records(pd.ledger))
    check(wait(lambda: len([i for i in syncs(pd) if i >= stopped]) >= 2, 30),
          "and go on once ptp4l answers again")
    check(pd.stop() == 0, "podcapd with appliance.clock stops cleanly")

    rc, out, text = faultlib.verify(VERIFY, pd, extra=["--max-clock-offset", "1s"])
    clock = out.get("clock", {})
    check(clock.get("grandmaster") == gm,
          f"the report names pmc's grandmaster {gm}: {clock.get('grandmaster')}")
    check(clock.get("windows", 0) >= 5 and 0 < clock.get("locked_windows", 0) < clock["windows"],
          f"windows with readings, not all locked: {clock}")
    check(0 < clock.get("max_bound_ns", 0) < 10**9, f"a worst bound read: {clock.get('max_bound_ns')} ns")
    got = failures(out)
    late = [f for f in got if f[0] == "clock" and f[1] >= honest and
            re.search(r"not locked throughout|no reading bounds", f[2])]
    check(rc == 1 and late and all(f[0] == "clock" and f[1] >= honest for f in got),
          f"at 1 s, only the windows of the stopped ptp4l are refused, not locked or unread (exit {rc}): "
          f"{got[:4]}")

    rc, out, text = faultlib.verify(VERIFY, pd, extra=["--max-clock-offset", "1ns"])
    early = [f for f in failures(out) if f[0] == "clock" and f[1] < honest and
             re.search(r"bound [0-9]+ ns: over the \S+ the verifier accepts", f[2])]
    check(rc == 1 and early, f"at 1 ns the locked windows are refused too, with their bound (exit {rc}): "
          f"{failures(out)[:2]}")


def main():
    check = Checks()
    if not check(shutil.which("ptp4l") and shutil.which("pmc"),
                 "linuxptp's ptp4l and pmc are installed (tools/setup installs linuxptp)"):
        return check.finish()
    # the namespace's loopback: the endpoint /metrics is read from
    sh("ip", "link", "set", "lo", "up")
    with tempfile.TemporaryDirectory(prefix="podcap-ptp-") as d:
        no_discipline(check, d)
        network()
        ptp4l(d, "gm", "vgm", netns="gm", gm=True)
        slave = ptp4l(d, "ptp4l", "vsl")
        sock = f"{d}/ptp4l.sock"
        def measured():
            p = pmc(d, sock)
            # a mean path delay of 0: ptp4l has measured no delay, nor any offset yet
            return (p.get("ports", {}).get(1) == "UNCALIBRATED" and
                    p.get("gmPresent") == "true" and p.get("meanPathDelay", "0.0") != "0.0")
        follows = wait(measured, 40, step=0.5)
        if not check(follows, "the slave ptp4l follows the grandmaster across the veth and "
                     "has measured a Sync"):
            print(open(f"{d}/ptp4l.log").read()[-2000:] + open(f"{d}/gm.log").read()[-2000:])
            return check.finish()
        check_probe(check, d, sock)
        pd, started = start_podcapd(d, "ptp", sock)
        if not check(started, "podcapd starts with --ptp4l"):
            print(pd.log()[-3000:])
            return check.finish()
        check(wait(lambda: one(metrics(pd.port()), "podcap_clock_discipline_up") == 1, 5),
              "podcapd reads ptp4l")
        check_metrics(check, d, sock, pd)
        outages(check, d, sock, slave, pd)
        check(pd.stop() == 0, "podcapd stops cleanly")
        slave = children[-1]
        check(wait(measured, 40, step=0.5), "ptp4l follows the grandmaster again")
        sync_records(check, d, sock, slave, pmc(d, sock).get("grandmasterIdentity"))
        left = [f for f in os.listdir(d) if f.startswith("podcap.")]
        check(not left, f"and leaves no client socket behind: {left}")
        if check.failures:
            print(pd.log()[-3000:])
        _kill_children()
    return check.finish()


sys.exit(main())
