#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""What podcapd tells systemd, read from a notify socket of the test's own.

sd_notify(3) sends to any AF_UNIX datagram socket NOTIFY_SOCKET names, so
podcapd runs between pcap ports with NOTIFY_SOCKET pointing at a socket
this test binds, and WATCHDOG_USEC set as systemd would set it. The test
checks that READY=1 comes once forwarding has started and before anything
else, a STATUS= line for each window closed, RELOADING=1 then READY=1
around a SIGHUP, WATCHDOG=1 at least every WATCHDOG_USEC, and STOPPING=1
on SIGTERM with no ping after it. It then wedges things, as the
watchdog is there for: one worker thread held still with ptrace (the
other threads run on), then the signer process stopped with SIGSTOP;
either way the pings stop and STATUS= says why, and they come back once
it runs again. (A real systemd would have restarted podcapd.)
"""
import calendar
import ctypes
import os
import re
import signal
import socket
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from daemon import Checks, Podcapd  # noqa: E402
from frames import write_pcap  # noqa: E402

PODCAPD = os.environ.get("PODCAPD") or sys.argv[1]
KEYGEN = os.environ.get("PODCAP_KEYGEN") or sys.argv[2]
WATCHDOG_S = 1.0          # WATCHDOG_USEC: pings every 0.5 s
WINDOW_S = 2              # room between two boundaries to wedge things in
HOLD_S = 1.2              # long enough for at least two checks to miss the ping
HOLD_MAX_S = 10.0         # how long a hold waits for podcapd to say why

MAP = """\
window: {window}s
dpdk:
  lcores: 0-1
  memory: 512MiB
  file_prefix: notify-{pid}
uplinks:
  - name: up0
    pod_port: net_pcap0,rx_pcap={d}/empty.pcap,tx_pcap={d}/to_pod.pcap
    fabric_port: net_pcap1,rx_pcap={d}/empty.pcap,tx_pcap={d}/to_fabric.pcap
pods:
  - id: pod-a
    uplink: up0
"""

PTRACE_DETACH, PTRACE_SEIZE, PTRACE_INTERRUPT = 17, 0x4206, 0x4207
WALL = 0x40000000


class Notifications:
    """Every datagram podcapd sends, with the monotonic time it came."""

    def __init__(self, path):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.sock.bind(path)
        self.sock.settimeout(0.1)
        self.msgs = []
        self.lock = threading.Lock()
        self.done = False
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self):
        while not self.done:
            try:
                data = self.sock.recv(4096)
            except socket.timeout:
                continue
            with self.lock:
                self.msgs.append((time.monotonic(), data.decode()))

    def since(self, t0=0.0):
        with self.lock:
            return [(t, m) for t, m in self.msgs if t >= t0]

    def wait(self, pred, timeout, t0=0.0):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for t, m in self.since(t0):
                if pred(m):
                    return t, m
            time.sleep(0.02)
        return None, None


def fields(msg):
    return dict(line.split("=", 1) for line in msg.split("\n") if "=" in line)


def pings(msgs):
    return [t for t, m in msgs if fields(m).get("WATCHDOG") == "1"]


def closed_windows(msgs):
    """(time, label, ledger records) of each STATUS= of a window closed."""
    out = []
    for t, m in msgs:
        s = re.match(r"forwarding: \d+ uplinks, \d+ pods, window (\S+) closed, ledger (\d+) records$",
                     fields(m).get("STATUS", ""))
        if s:
            out.append((t, s[1], int(s[2])))
    return out


def utc_seconds(label):
    return calendar.timegm(time.strptime(label, "%Y-%m-%dT%H:%M:%SZ"))


def worker_tid(pid):
    """The thread of the worker lcore (DPDK names it rte-worker-N or lcore-worker-N)."""
    for tid in os.listdir(f"/proc/{pid}/task"):
        with open(f"/proc/{pid}/task/{tid}/comm") as f:
            if re.fullmatch(r"(rte|lcore)-worker-\d+", f.read().strip()):
                return int(tid)
    return None


def signer_pid(pid):
    for tid in os.listdir(f"/proc/{pid}/task"):
        with open(f"/proc/{pid}/task/{tid}/children") as f:
            for child in f.read().split():
                with open(f"/proc/{child}/comm") as g:
                    if g.read().strip() == "podcap-signer":
                        return int(child)
    return None


class Ptrace:
    """Holds one thread still while the others of its process run on."""

    def __init__(self):
        self.libc = ctypes.CDLL(None, use_errno=True)
        self.libc.ptrace.argtypes = [ctypes.c_long, ctypes.c_long, ctypes.c_void_p, ctypes.c_void_p]

    def hold(self, tid):
        if self.libc.ptrace(PTRACE_SEIZE, tid, None, None) != 0:
            return os.strerror(ctypes.get_errno())
        if self.libc.ptrace(PTRACE_INTERRUPT, tid, None, None) != 0:
            return os.strerror(ctypes.get_errno())
        os.waitpid(tid, WALL)
        return None

    def release(self, tid):
        self.libc.ptrace(PTRACE_DETACH, tid, None, None)


def check_wedge(check, note, pd, what, hold, release, status_text, log_text, across=False):
    """Wedges something right after a window closed, well before the next
    boundary; or, `across`, 0.3 s before the next boundary (windows are UTC
    multiples of WINDOW_S), so the hold spans it: the control thread then
    waits for the worker at the boundary and must still say why the pings stop."""
    _, closed = note.wait(lambda m: " closed, ledger " in m, 10, time.monotonic())
    if not check(closed is not None, f"{what}: a window closes first"):
        return
    if across:
        time.sleep((-time.time() - 0.3) % WINDOW_S)
    resumed = pd.log().count("watchdog pings resume")
    logged = pd.log().count(log_text)
    err = hold()
    if err is not None:
        print(f"note: cannot hold the {what} ({err}): the unit test daemon-watchdog covers the rule")
        return
    # a ping already on its way when the hold took hold is not the hold's
    t0 = time.monotonic() + 0.05
    time.sleep(HOLD_S)
    # Held at least HOLD_S, and on until podcapd says why (a loaded machine
    # may run the checks late), at most HOLD_MAX_S: the pings must stop all along.
    said, _ = note.wait(lambda m: status_text in fields(m).get("STATUS", ""),
                        HOLD_MAX_S - HOLD_S, t0)
    t1 = time.monotonic()
    release()
    held = note.since(t0)
    during = [t for t in pings(held) if t <= t1]
    # the first check of the hold may still find it had run since the check before
    check(len(during) <= 1, f"{what} held for {t1 - t0:.1f} s: the pings stop ({len(during)} sent, "
          f"at most the first check's)")
    check(said is not None, f"{what}: STATUS says why: {status_text!r}")
    check(pd.log().count(log_text) > logged, f"{what}: the log says so: {log_text!r}")
    t_back, _ = note.wait(lambda m: fields(m).get("WATCHDOG") == "1", 3 * WATCHDOG_S, t1)
    check(t_back is not None, f"{what} runs again: the pings resume "
          f"({'%.2f s' % (t_back - t1) if t_back else 'none'} after)")
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and pd.log().count("watchdog pings resume") == resumed:
        time.sleep(0.05)
    check(pd.log().count("watchdog pings resume") > resumed, "and the log says so")


def main():
    check = Checks()
    with tempfile.TemporaryDirectory(prefix="podcap-notify-") as d:
        write_pcap(f"{d}/empty.pcap", [])
        note = Notifications(f"{d}/notify")
        pd = Podcapd(PODCAPD, KEYGEN, d, "notify")
        pd.write_config(pd.appliance_yaml() + MAP.format(window=WINDOW_S, d=d, pid=os.getpid()))
        # what systemd puts in the environment of a Type=notify service with WatchdogSec=
        os.environ["NOTIFY_SOCKET"] = f"{d}/notify"
        os.environ["WATCHDOG_USEC"] = str(int(WATCHDOG_S * 1e6))
        os.environ.pop("WATCHDOG_PID", None)
        if not check(pd.start(), "podcapd starts"):
            print(pd.log())
            return 1

        t_ready, ready = note.wait(lambda m: fields(m).get("READY") == "1", 10)
        check(ready is not None, "READY=1 arrives")
        log_at_ready = pd.log()
        check("worker 0 running" in log_at_ready and "forwarding:" in log_at_ready,
              "READY=1 comes once the worker runs and podcapd forwards")
        check(ready is not None and fields(ready).get("STATUS", "").startswith("forwarding: 1 uplinks, 1 pods"),
              f"READY=1 comes with a STATUS= ({ready!r})")
        first = note.since()[0][1] if note.since() else ""
        check(first == ready, f"nothing comes before READY=1 (first: {first!r})")

        time.sleep(3 * WINDOW_S + 0.5)
        msgs = note.since(t_ready or 0)
        wins = closed_windows(msgs)
        check(len(wins) >= 3, f"a STATUS= for each window closed: {len(wins)} in {3 * WINDOW_S + 0.5} s")
        labels = [utc_seconds(label) for _, label, _ in wins]
        check(all(b - a == WINDOW_S for a, b in zip(labels, labels[1:])),
              f"the windows closed are consecutive: {[label for _, label, _ in wins]}")
        records = [n for _, _, n in wins]
        check(records == sorted(records) and records[-1] > records[0],
              f"and the ledger grows: {records} records")
        ts = pings(msgs)
        gaps = [b - a for a, b in zip([t_ready] + ts, ts)] if t_ready else []
        check(len(ts) >= 8, f"WATCHDOG=1 every half interval: {len(ts)} pings in {3 * WINDOW_S + 0.5} s")
        check(gaps and max(gaps) < WATCHDOG_S,
              f"never more than WATCHDOG_USEC ({WATCHDOG_S} s) apart: the longest gap is "
              f"{max(gaps) if gaps else 0:.2f} s")

        t_hup = time.monotonic()
        pd.signal(signal.SIGHUP)
        t_reload, reloading = note.wait(lambda m: fields(m).get("RELOADING") == "1", 10, t_hup)
        check(reloading is not None and "MONOTONIC_USEC" in fields(reloading), "SIGHUP: RELOADING=1 arrives")
        t_done, done = note.wait(lambda m: fields(m).get("READY") == "1", 10, t_reload or t_hup)
        check(done is not None and "pod map reloaded" in fields(done).get("STATUS", ""),
              f"then READY=1, with the reload in STATUS= ({done!r})")

        tid = worker_tid(pd.proc.pid)
        ptrace = Ptrace()
        if check(tid is not None, "the worker lcore's thread is found"):
            check_wedge(check, note, pd, "the worker", lambda: ptrace.hold(tid), lambda: ptrace.release(tid),
                        "wedged: worker 0 (lcore 1) has not looped",
                        "worker 0 (lcore 1) has not looped in 0.5 s: no watchdog ping")
            check_wedge(check, note, pd, "the worker across a boundary", lambda: ptrace.hold(tid),
                        lambda: ptrace.release(tid), "wedged: worker 0 (lcore 1) has not looped",
                        "worker 0 (lcore 1) has not looped in 0.5 s: no watchdog ping",
                        across=True)
        spid = signer_pid(pd.proc.pid)
        if check(spid is not None, "the signer process is found"):
            def stop():
                os.kill(spid, signal.SIGSTOP)
            check_wedge(check, note, pd, "the signer", stop, lambda: os.kill(spid, signal.SIGCONT),
                        "wedged: the signer has not answered",
                        "the signer has not answered in 0.5 s: no watchdog ping")

        t_term = time.monotonic()
        rc = pd.stop()
        check(rc == 0, f"podcapd exits 0 on SIGTERM (got {rc})")
        time.sleep(0.2)
        after = note.since(t_term)
        stopping = [t for t, m in after if fields(m).get("STOPPING") == "1"]
        check(len(stopping) == 1, "STOPPING=1 arrives")
        check(stopping and not [t for t in pings(after) if t > stopping[0]], "no WATCHDOG=1 after STOPPING=1")
        note.done = True
        if check.failures:
            print("\n".join(f"{t:.2f} {m!r}" for t, m in note.since()))
            print(pd.log())
    return check.finish()


sys.exit(main())
