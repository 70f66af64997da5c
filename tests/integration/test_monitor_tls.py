#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""podcap-monitor's listener and pulls over TLS, with real parts.

A CA made here (tlsca.py), a log made by podcap-ledger-gen:

- plain HTTP is served on loopback only: --listen on another address
  without TLS is a usage error naming --listen-plaintext, and with it the
  monitor serves in clear;
- the listener over TLS 1.3 with --client-ca: curl and Python's ssl with
  the monitor's client certificate read /metrics, /status.json, the fleet
  page and a report; no certificate, one of another CA and an expired one
  are refused (403 with the reason: the set-up asks for a certificate,
  the routes want it); TLS 1.2 and plain HTTP to the TLS port fail;
- pulls over https from podcapd (pcap ports, appliance.tls and
  appliance.access serving the log only to the monitor's certificate):
  with the CA file, and with a pinned server key, the monitor pulls and
  verifies; with another CA or another pin it refuses the server, says
  why in /status.json and the journal line, counts the failed pull, and
  writes nothing to that appliance's state.
"""
import json
import os
import re
import socket
import ssl
import subprocess
import sys
import tempfile
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from daemon import Checks, Podcapd  # noqa: E402
from tlsca import CA, spki_sha256  # noqa: E402

MONITOR, KEYGEN, LEDGER_GEN = sys.argv[1:4]
PODCAPD = sys.argv[4] if len(sys.argv) > 4 else None
INTERVAL = 2  # seconds between pulls

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


def wait_for(cond, timeout):
    """cond() once it is true, or its last value after timeout seconds."""
    deadline = time.time() + timeout
    while True:
        v = cond()
        if v or time.time() > deadline:
            return v
        time.sleep(0.2)


class Monitor:
    """One podcap-monitor: its port once it serves, its stderr."""

    def __init__(self, d, tag, fleet, *args):
        self.errpath = f"{d}/monitor-{tag}.err"
        self.proc = subprocess.Popen(
            [MONITOR, "--fleet", fleet, "--state-dir", f"{d}/state-{tag}", "--interval",
             f"{INTERVAL}s", *args], stdout=subprocess.DEVNULL, stderr=open(self.errpath, "w"))
        found = wait_for(lambda: self.proc.poll() is not None or
                         re.search(r"serving on port (\d+)", self.log()), 30)
        self.port = int(found[1]) if isinstance(found, re.Match) else None

    def log(self):
        with open(self.errpath) as f:
            return f.read()

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        return self.proc.returncode


def make_log(d):
    with open(f"{d}/gen.yaml", "w") as f:
        f.write(GEN_MAP)
    subprocess.run([KEYGEN, "--out", f"{d}/gen-key", "--name", "podcap/gen"], check=True,
                   stdout=subprocess.DEVNULL)
    subprocess.run([LEDGER_GEN, "--key", f"{d}/gen-key", "--pod-map", f"{d}/gen.yaml", "--out",
                    f"{d}/gen-log"], check=True, stdout=subprocess.DEVNULL)
    with open(f"{d}/fleet.yaml", "w") as f:
        f.write("appliances:\n  - {name: gen, ledger: gen-log, key: gen-key.pub, "
                f"pod_maps: [gen.yaml], interval: {INTERVAL}s}}\n")
    return f"{d}/fleet.yaml"


def http_get(url, ctx=None):
    try:
        with urllib.request.urlopen(url, timeout=10, context=ctx) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()
    except OSError as e:
        return None, str(e)


def run_usage(*args):
    """(exit status, stderr) of a run expected to stop at once; None when it serves instead."""
    try:
        r = subprocess.run([MONITOR, *args], capture_output=True, text=True, timeout=20)
        return r.returncode, r.stderr
    except subprocess.TimeoutExpired as e:
        return None, (e.stderr or b"").decode()


def check_listen(check, d, fleet):
    """Plain HTTP beyond loopback only when the operator says so."""
    for addr in ("0.0.0.0:0", "[::]:0"):
        rc, err = run_usage("--fleet", fleet, "--state-dir", f"{d}/state-l", "--listen", addr)
        check(rc == 2 and "not a loopback address" in err and "--listen-plaintext" in err,
              f"--listen {addr} without TLS is a usage error naming --listen-plaintext "
              f"(exit {rc}: {err.strip()[:200]})")
    rc, err = run_usage("--fleet", fleet, "--state-dir", f"{d}/state-l", "--listen", "0.0.0.0:0",
                        "--listen-plaintext", "--tls-cert", f"{d}/server.crt", "--tls-key",
                        f"{d}/server.key")
    check(rc == 2 and "choose one" in err,
          f"--listen-plaintext with --tls-cert is a usage error (exit {rc})")
    for tag, args in (("plain", ["--listen", "0.0.0.0:0", "--listen-plaintext"]),
                      ("loop4", ["--listen", "127.0.0.1:0"]),
                      ("loop6", ["--listen", "[::1]:0"])):
        mon = Monitor(d, tag, fleet, *args)
        host = "[::1]" if tag == "loop6" else "127.0.0.1"
        code, body = (http_get(f"http://{host}:{mon.port}/status.json") if mon.port
                      else (None, mon.log()))
        check(code == 200 and '"appliances"' in body,
              f"{' '.join(args)}: serves plain HTTP ({code}: {body[:200]})")
        check(mon.stop() == 0, f"{' '.join(args)}: SIGTERM stops it, exit 0")


def main():
    check = Checks()
    with tempfile.TemporaryDirectory(prefix="podcap-monitor-tls-") as d:
        ca = CA(f"{d}/ca")
        ca.issue(f"{d}/server", "monitor-server", server=True)
        fleet = make_log(d)
        check_listen(check, d, fleet)
    return check.finish()


if __name__ == "__main__":
    sys.exit(main())
