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
from frames import ETH_IPV4, eth, ipv4_packet, write_pcap  # noqa: E402
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
              f"{' '.join(args)}: serves plain HTTP ({code}: {body[:40]!r})")
        check(mon.stop() == 0, f"{' '.join(args)}: SIGTERM stops it, exit 0")


APP_TLS = """\
  tls:
    certificate: {d}/server.crt
    key: {d}/server.key
    client_ca: {d}/ca.crt
  access:
    - client: "CN=monitor,O=Podcap Test Site"
      routes: [log]
window: 1s
dpdk:
  lcores: 0-1
  memory: 512MiB
  file_prefix: monitor-tls-{pid}
uplinks:
  - name: up0
    pod_port: net_pcap0,rx_pcap={d}/pod.pcap,infinite_rx=1,tx_pcap=/dev/null
    fabric_port: net_pcap1,rx_pcap={d}/empty.pcap,tx_pcap=/dev/null
pods:
  - id: pod-a
    uplink: up0
    prefixes: [10.0.0.0/26]
    cap: 50Mbps
    mode: police
"""


def context(d, cert=None, tls12=False):
    c = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    c.load_verify_locations(f"{d}/ca.crt")
    if tls12:
        c.maximum_version = ssl.TLSVersion.TLSv1_2
    if cert:
        c.load_cert_chain(f"{d}/{cert}.crt", f"{d}/{cert}.key")
    return c


def status(port, ctx=None, scheme="http"):
    code, body = http_get(f"{scheme}://127.0.0.1:{port}/status.json", ctx)
    try:
        return {a["name"]: a for a in json.loads(body)["appliances"]} if code == 200 else {}
    except (ValueError, KeyError):
        return {}


def metrics(port, ctx=None, scheme="http"):
    """{(name, frozenset(labels)): value} of /metrics."""
    code, body = http_get(f"{scheme}://127.0.0.1:{port}/metrics", ctx)
    out = {}
    for line in body.splitlines() if code == 200 else []:
        m = re.match(r'^(\w+)(?:\{(.*)\})? (\S+)$', line)
        if m:
            out[(m[1], frozenset(re.findall(r'(\w+)="([^"]*)"', m[2] or "")))] = float(m[3])
    return out


def metric(ms, name, **labels):
    return ms.get((name, frozenset(labels.items())))


def check_listener(check, d, fleet):
    """TLS 1.3 with a client CA: the site's clients read every route, no one else does."""
    mon = Monitor(d, "tls", fleet, "--listen", "127.0.0.1:0", "--tls-cert", f"{d}/server.crt",
                  "--tls-key", f"{d}/server.key", "--client-ca", f"{d}/ca.crt")
    if not check(mon.port is not None, "the monitor listens over TLS"):
        print(mon.log())
        return
    base, good = f"https://127.0.0.1:{mon.port}", context(d, "prom")
    st = wait_for(lambda: status(mon.port, good, "https").get("gen", {}).get("status")
                  == "verified", 60)
    check(st, f"gen verifies, as /status.json says over TLS: {status(mon.port, good, 'https')}")
    for path, want in (("/metrics", "podcap_monitor_verified{"), ("/status.json", '"verified"'),
                       ("/", "<html"), ("/appliances/gen/report.html", "<html")):
        code, body = http_get(base + path, good)
        check(code == 200 and want in body,
              f"Python's ssl with the site's client certificate reads {path} ({code})")
    r = subprocess.run(["curl", "-sS", "--cacert", f"{d}/ca.crt", "--cert", f"{d}/prom.crt",
                        "--key", f"{d}/prom.key", "--tlsv1.3", "-w", "\n%{http_code}",
                        base + "/metrics"], capture_output=True, text=True, timeout=30)
    check(r.returncode == 0 and r.stdout.endswith("\n200") and "podcap_monitor_tree_size{"
          in r.stdout, f"curl with the client certificate reads /metrics (exit {r.returncode}, "
          f"{r.stdout[-4:]!r}, {r.stderr.strip()[:200]})")
    for what, cert, reason in (("no certificate", None, "no_certificate"),
                               ("a certificate of another CA", "unknown",
                                "untrusted_certificate"),
                               ("an expired certificate", "expired", "expired_certificate")):
        for path in ("/metrics", "/status.json", "/", "/appliances/gen/report.html"):
            code, body = http_get(base + path, context(d, cert))
            check(code == 403 and reason in body,
                  f"{what} is refused on {path} ({code}: {body.strip()[:120]})")
    args = ["curl", "-sS", "--cacert", f"{d}/ca.crt", "-o", "/dev/null", "-w", "%{http_code}"]
    r = subprocess.run(args + [base + "/metrics"], capture_output=True, text=True, timeout=30)
    check(r.stdout == "403", f"curl without a certificate is refused ({r.stdout})")
    try:
        code, body = http_get(base + "/metrics", context(d, "prom", tls12=True))
    except ssl.SSLError as e:
        code, body = None, str(e)
    check(code is None, f"a TLS 1.2-only client gets no answer ({code}: {body[:120]})")
    r = subprocess.run(args + ["--cert", f"{d}/prom.crt", "--key", f"{d}/prom.key", "--tlsv1.2",
                               "--tls-max", "1.2", base + "/metrics"],
                       capture_output=True, text=True, timeout=30)
    check(r.returncode != 0 and r.stdout != "200", f"curl --tls-max 1.2 fails ({r.returncode})")
    code, body = http_get(f"http://127.0.0.1:{mon.port}/metrics")
    check(code is None, f"plain HTTP to the TLS port gets no answer ({code}: {body[:120]})")
    with socket.create_connection(("127.0.0.1", mon.port), timeout=10) as raw:
        raw.sendall(b"GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        try:
            got = raw.recv(4096)
        except OSError:
            got = b""
    check(b"podcap_monitor" not in got and not got.startswith(b"HTTP/"),
          f"a plain GET on the TLS port reads nothing of the monitor's ({got[:40]!r})")
    check(mon.stop() == 0, "the TLS monitor stops on SIGTERM, exit 0")


def pull_fleet(d, pd):
    """Entries over https to the one podcapd, each with its own TLS to it."""
    pin_ok, pin_other = spki_sha256(f"{d}/server.crt"), spki_sha256(f"{d}/prom.crt")
    entries = {"by-ca": "", "by-pin": f", pin: '{pin_ok}'",
               "wrong-ca": f", ca: {d}/other.crt", "wrong-pin": f", pin: '{pin_other}'",
               "stranger": f", cert: {d}/prom.crt, cert_key: {d}/prom.key"}
    lines = ["appliances:"]
    for name, tls in entries.items():
        lines.append(f"  - {{name: {name}, url: 'https://127.0.0.1:{pd.port()}', "
                     f"key: {pd.key}.pub, pod_maps: [{pd.config}], interval: {INTERVAL}s{tls}}}")
    with open(f"{d}/pull-fleet.yaml", "w") as f:
        f.write("\n".join(lines) + "\n")
    return f"{d}/pull-fleet.yaml"


def start_podcapd(d):
    write_pcap(f"{d}/empty.pcap", [])
    write_pcap(f"{d}/pod.pcap", [eth(ETH_IPV4, ipv4_packet("10.0.0.1", "10.0.0.200", 1000))] * 8)
    os.makedirs(f"{d}/app")
    pd = Podcapd(PODCAPD, KEYGEN, f"{d}/app", "tls-app")
    pd.write_config(pd.appliance_yaml() + APP_TLS.format(d=d, pid=os.getpid()))
    return pd, pd.start()


def check_pulls(check, d):
    """podcapd serving its log over TLS to the monitor's certificate alone."""
    pd, ok = start_podcapd(d)
    if not check(ok, "podcapd starts with appliance.tls and appliance.access"):
        print(pd.log())
        return
    mon = None
    try:
        r = subprocess.run(["curl", "-sS", "--cacert", f"{d}/ca.crt", "-o", "/dev/null", "-w",
                            "%{http_code}", f"https://127.0.0.1:{pd.port()}/v1/checkpoint"],
                           capture_output=True, text=True, timeout=30)
        check(r.stdout == "403", f"podcapd refuses its log without the monitor's certificate "
              f"({r.stdout})")
        mon = Monitor(d, "pull", pull_fleet(d, pd), "--listen", "127.0.0.1:0", "--jobs", "5",
                      "--ca", f"{d}/ca.crt", "--cert", f"{d}/monitor.crt", "--cert-key",
                      f"{d}/monitor.key")
        if not check(mon.port is not None, "the monitor starts on the https fleet"):
            print(mon.log())
            return
        names = ("by-ca", "by-pin", "wrong-ca", "wrong-pin", "stranger")
        st = wait_for(lambda: (lambda s: s if all(s.get(n, {}).get("status") in
                                                  ("verified", "unreachable", "failed")
                                                  for n in names) else None)(status(mon.port)),
                      120)
        st = st or status(mon.port)
        ms = metrics(mon.port)
        for name, how in (("by-ca", "the CA file"), ("by-pin", "the CA file and a pinned key")):
            a = st.get(name, {})
            check(a.get("status") == "verified" and a.get("tree_size", 0) > 0
                  and metric(ms, "podcap_monitor_verified", appliance=name) == 1
                  and os.path.exists(f"{d}/state-pull/{name}.state"),
                  f"{name}: pulled over https with {how} and verified ({a})")
        for name, why in (("wrong-ca", "does not chain to --ca"),
                          ("wrong-pin", "is not the one --pin names"),
                          ("stranger", "403")):
            a = st.get(name, {})
            check(a.get("status") == "unreachable" and why in (a.get("error") or ""),
                  f"{name}: refused, and /status.json says why ({a.get('status')}: "
                  f"{a.get('error')})")
            check((metric(ms, "podcap_monitor_pulls_total", appliance=name,
                          result="unreachable") or 0) >= 1
                  and metric(ms, "podcap_monitor_verified", appliance=name) != 1
                  and (metric(ms, "podcap_monitor_consecutive_errors", appliance=name) or 0)
                  >= 1, f"{name}: the failed pull is counted on /metrics")
            check(re.search(rf"^podcap-monitor: {name}: pending -> unreachable: .*{re.escape(why)}",
                            mon.log(), re.M),
                  f"{name}: the journal line says why")
            check(not os.path.exists(f"{d}/state-pull/{name}.state"),
                  f"{name}: nothing written to its verifier state")
        check(mon.stop() == 0, "the pulling monitor stops on SIGTERM, exit 0")
    finally:
        if mon is not None:
            mon.stop()
        if check.failures and mon is not None:
            print(mon.log()[-3000:])
        pd.stop()


def main():
    check = Checks()
    with tempfile.TemporaryDirectory(prefix="podcap-monitor-tls-") as d:
        ca = CA(f"{d}/ca")
        ca.issue(f"{d}/server", "monitor-server", server=True)
        ca.issue(f"{d}/prom", "prometheus")
        ca.issue(f"{d}/expired", "prometheus", expired=True)
        CA(f"{d}/other", cn="Another CA").issue(f"{d}/unknown", "prometheus")
        fleet = make_log(d)
        check_listen(check, d, fleet)
        check_listener(check, d, fleet)
        if PODCAPD is not None:
            ca.issue(f"{d}/monitor", "monitor")
            check_pulls(check, d)
        else:
            print("skip  pulls over https: podcapd is not built")
    return check.finish()


if __name__ == "__main__":
    sys.exit(main())
