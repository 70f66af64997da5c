#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""podcap-monitor reads its fleet file again on SIGHUP.

Three logs made by podcap-ledger-gen (gen-a, gen-b, gen-c). The monitor
starts on a fleet of gen-a and gen-b and verifies both; the file is
replaced by one of gen-b and gen-c and the monitor is sent SIGHUP: it
keeps running, says so, gen-a is gone from /status.json and /metrics,
gen-c is pulled and verified, and gen-b keeps what the monitor knew of it
(its pulls are counted on from before, its verification time is the one
it had until its next pull). A fleet file that does not load changes
nothing: the monitor says why and goes on with the fleet it had. And a
reload never races the pages: SIGHUPs swapping the fleet back and forth
while /status.json and /metrics are read without pause leave the monitor
running and answering.
"""
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from daemon import Checks  # noqa: E402

MONITOR, KEYGEN, LEDGER_GEN = sys.argv[1:4]
INTERVAL = 2  # seconds between pulls

MAP = """\
appliance:
  id: {name}
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


def wait_for(cond, timeout):
    """cond() once it is true, or its last value after timeout seconds."""
    deadline = time.time() + timeout
    while True:
        v = cond()
        if v or time.time() > deadline:
            return v
        time.sleep(0.2)


def make_log(d, name):
    with open(f"{d}/{name}.yaml", "w") as f:
        f.write(MAP.format(name=name))
    subprocess.run([KEYGEN, "--out", f"{d}/{name}-key", "--name", f"podcap/{name}"], check=True,
                   stdout=subprocess.DEVNULL)
    subprocess.run([LEDGER_GEN, "--key", f"{d}/{name}-key", "--pod-map", f"{d}/{name}.yaml",
                    "--out", f"{d}/{name}-log"], check=True, stdout=subprocess.DEVNULL)


def write_fleet(d, names, extra=""):
    tmp = f"{d}/fleet.yaml.tmp"
    with open(tmp, "w") as f:
        f.write("appliances:\n" + "".join(
            f"  - {{name: {n}, ledger: {n}-log, key: {n}-key.pub, pod_maps: [{n}.yaml], "
            f"interval: {INTERVAL}s}}\n" for n in names) + extra)
    os.replace(tmp, f"{d}/fleet.yaml")


def get(port, path):
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=10) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()
    except OSError as e:
        return None, str(e)


def status(port):
    code, body = get(port, "/status.json")
    try:
        return {a["name"]: a for a in json.loads(body)["appliances"]} if code == 200 else {}
    except (ValueError, KeyError):
        return {}


def pulls(port, name):
    _, body = get(port, "/metrics")
    return sum(int(m[1]) for m in re.finditer(
        rf'^podcap_monitor_pulls_total\{{appliance="{name}",result="[a-z]+"\}} (\d+)$', body,
        re.M))


def reloads_under_readers(check, d, p, port, log):
    """SIGHUPs swapping the fleet while readers hammer the pages: never a crash."""
    stop, answered = threading.Event(), [0]

    def reader():
        while not stop.is_set():
            for path in ("/status.json", "/metrics"):
                if get(port, path)[0] == 200:
                    answered[0] += 1
    readers = [threading.Thread(target=reader) for _ in range(3)]
    for t in readers:
        t.start()
    mark = len(log())
    try:
        for i in range(40):
            write_fleet(d, ["gen-a", "gen-b"] if i % 2 == 0 else ["gen-b", "gen-c"])
            p.send_signal(signal.SIGHUP)
            # the next SIGHUP once this one was read: a reload each time, not one for many
            wait_for(lambda: log()[mark:].count("read again") > i, 10)
            if p.poll() is not None:
                break
    finally:
        stop.set()
        for t in readers:
            t.join()
    reloads = log()[mark:].count("read again")
    check(p.poll() is None and reloads == 40 and answered[0] > 0,
          f"{reloads} reloads while the pages were read {answered[0]} times: the monitor "
          f"runs on (exit {p.poll()})")
    write_fleet(d, ["gen-b", "gen-c"])
    p.send_signal(signal.SIGHUP)
    check(wait_for(lambda: set(status(port)) == {"gen-b", "gen-c"}, 30), "and answers after")


def main():
    check = Checks()
    with tempfile.TemporaryDirectory(prefix="podcap-monitor-reload-") as d:
        for name in ("gen-a", "gen-b", "gen-c"):
            make_log(d, name)
        write_fleet(d, ["gen-a", "gen-b"])
        errpath = f"{d}/monitor.err"
        p = subprocess.Popen([MONITOR, "--fleet", f"{d}/fleet.yaml", "--state-dir",
                              f"{d}/state", "--listen", "127.0.0.1:0", "--interval",
                              f"{INTERVAL}s"], stdout=subprocess.DEVNULL,
                             stderr=open(errpath, "w"))
        log = lambda: open(errpath).read()  # noqa: E731
        try:
            found = wait_for(lambda: re.search(r"serving on port (\d+)", log()), 30)
            if not check(found, "the monitor starts"):
                print(log())
                return check.finish()
            port = int(found[1])
            both = wait_for(lambda: (lambda s: s if len(s) == 2 and all(
                a["status"] == "verified" for a in s.values()) else None)(status(port)), 60)
            if not check(both, f"gen-a and gen-b verify: {status(port)}"):
                return check.finish()
            b_before = both["gen-b"]
            n_before = pulls(port, "gen-b")

            write_fleet(d, ["gen-b", "gen-c"])
            p.send_signal(signal.SIGHUP)
            st = wait_for(lambda: (lambda s: s if set(s) == {"gen-b", "gen-c"} else None)(
                status(port)), 30)
            check(p.poll() is None and st, f"after SIGHUP it runs on the new fleet: {status(port)}")
            check(re.search(r"SIGHUP: .*fleet.yaml read again: 2 appliances, 1 added, 1 removed",
                            log()), "the journal says what changed")
            b_after = (st or {}).get("gen-b", {})
            check(b_after.get("status") == "verified"
                  and b_after.get("tree_size") == b_before["tree_size"]
                  and pulls(port, "gen-b") >= n_before >= 1,
                  f"gen-b keeps its verdict and counters ({n_before} pulls before, "
                  f"{pulls(port, 'gen-b')} after)")
            _, body = get(port, "/metrics")
            check('appliance="gen-a"' not in body and "podcap_monitor_appliances 2" in body,
                  "gen-a is gone from /metrics")
            c = wait_for(lambda: status(port).get("gen-c", {}).get("status") == "verified", 60)
            check(c, f"gen-c is pulled and verified: {status(port).get('gen-c')}")
            code, _ = get(port, "/appliances/gen-c/report.html")
            check(code == 200, f"gen-c's report is served ({code})")
            code, _ = get(port, "/appliances/gen-a/report.html")
            check(code == 404, f"gen-a's report is not ({code})")

            with open(f"{d}/fleet.yaml", "a") as f:
                f.write("  - {name: gen-b}\n")
            mark = len(log())
            p.send_signal(signal.SIGHUP)
            said = wait_for(lambda: re.search(r"SIGHUP: .*still watching the 2 appliances",
                                              log()[mark:]), 30)
            check(said and p.poll() is None and set(status(port)) == {"gen-b", "gen-c"},
                  f"a fleet file that does not load changes nothing ({log()[mark:][:300]})")
            reloads_under_readers(check, d, p, port, log)
            p.terminate()
            check(p.wait(timeout=30) == 0, "SIGTERM stops it, exit 0")
        finally:
            if p.poll() is None:
                p.kill()
                p.wait()
            if check.failures:
                print(log()[-3000:])
    return check.finish()


if __name__ == "__main__":
    sys.exit(main())
