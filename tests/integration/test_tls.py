#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""podcapd's endpoint over TLS, with client certificates and access per route.

podcapd runs between DPDK pcap ports replaying a pod's frames forever, its
endpoint served with appliance.tls and appliance.access: a CA made here for
one site, a verifier allowed the log, a Prometheus allowed /metrics (named
by its key). Python's ssl and curl are the independent clients:

- a client without a certificate, with one of another CA (of the same
  subject), with an expired one, with none of the rules, or asking for a
  part it was not given, gets 403 and is counted by reason in /metrics,
  which promtool still passes;
- TLS 1.2 is refused by default;
- every handshake that does not finish is counted by reason in /metrics
  (podcap_http_tls_handshake_failures_total, every reason declared from
  the start): TLS 1.2-only clients (Python, openssl s_client, curl) as
  protocol_version, clients that do not trust the appliance's certificate
  (curl without the site's CA, Python with another CA) as
  refused_by_client, plain HTTP on the TLS port as not_tls, a ClientHello
  cut off as closed, one that stalls as timeout once the endpoint drops it;
  a client without a certificate or with another CA's finishes its
  handshake and is refused with 403, counted there and not here;
- podcap-verify with the verifier's certificate pulls the log over https
  and verifies it; with --pin of another key, or without --ca, it refuses
  the server;
- podcapd submits its checkpoints to a podcap-witness served over TLS,
  holding it to the CA of appliance.witnesses[].ca;
- new certificate files on SIGHUP under traffic serve the connections made
  after it while every window is still recorded (the ledger verifies, its
  window labels follow each other); a bad file on SIGHUP is refused with
  file:line:col and the certificate in force stays; at start it is exit 2.
"""
import hashlib
import json
import os
import re
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from daemon import Checks, Podcapd  # noqa: E402
from frames import ETH_IPV4, eth, ipv4_packet, write_pcap  # noqa: E402
from tlsca import CA, spki_sha256  # noqa: E402

PODCAPD = os.environ.get("PODCAPD") or sys.argv[1]
KEYGEN = os.environ.get("PODCAP_KEYGEN") or sys.argv[2]
VERIFY = os.environ.get("PODCAP_VERIFY") or sys.argv[3]
WITNESS = os.environ.get("PODCAP_WITNESS") or sys.argv[4]
PROMTOOL = os.environ.get("PROMTOOL") or shutil.which("promtool") or "/usr/bin/promtool"

TLS = """\
  tls:
    certificate: {d}/server.crt
    key: {d}/server.key
    client_ca: {d}/ca.crt
  access:
    - client: "CN=verifier-1,O=Podcap Test Site"
      routes: [log]
    - client: {prom_key}
      routes: [metrics]
    - client: "CN=inspector,O=Podcap Test Site"
      routes: [log, attest]
"""

WITNESSES = """\
  witnesses:
    - url: https://127.0.0.1:{port}
      key: {key}
      ca: {d}/ca.crt
"""

MAP = """\
window: 1s
dpdk:
  lcores: 0-1
  memory: 512MiB
  file_prefix: tls-{pid}
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


def context(d, cert=None, tls12=False, ca=True):
    c = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    if ca:
        c.load_verify_locations(f"{d}/ca.crt")
    if tls12:
        c.maximum_version = ssl.TLSVersion.TLSv1_2
    if cert:
        c.load_cert_chain(f"{d}/{cert}.crt", f"{d}/{cert}.key")
    return c


def request(port, ctx, path):
    """(status, body, the server certificate's SHA-256) of one GET over a new connection."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as raw:
        with ctx.wrap_socket(raw, server_hostname="127.0.0.1") as s:
            der = s.getpeercert(binary_form=True)
            s.sendall(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
                      .encode())
            data = b""
            while True:
                chunk = s.recv(65536)
                if not chunk:
                    break
                data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    return int(head.split()[1]), body, hashlib.sha256(der).hexdigest()


def refused_counts(body):
    return {m[1]: int(m[2]) for m in
            re.finditer(r'^podcap_http_refused_total\{reason="([a-z_]+)"\} (\d+)$',
                        body.decode(), re.M)}


HANDSHAKE_REASONS = ["timeout", "not_tls", "protocol_version", "refused_by_client", "closed",
                     "other"]


def handshake_failures(body):
    return {m[1]: int(m[2]) for m in
            re.finditer(r'^podcap_http_tls_handshake_failures_total\{reason="([a-z_]+)"\} (\d+)$',
                        body.decode(), re.M)}


def client_hello(d):
    """The bytes of a real TLS 1.3 ClientHello (Python's, for the site's CA), as first sent."""
    c = context(d, "verifier")
    incoming, outgoing = ssl.MemoryBIO(), ssl.MemoryBIO()
    tls = c.wrap_bio(incoming, outgoing, server_hostname="127.0.0.1")
    try:
        tls.do_handshake()
    except ssl.SSLWantReadError:
        pass
    return outgoing.read()


def make_certs(d):
    ca = CA(f"{d}/ca")
    ca.issue(f"{d}/server", "podcapd.test", server=True)
    ca.issue(f"{d}/verifier", "verifier-1")
    ca.issue(f"{d}/inspector", "inspector")
    ca.issue(f"{d}/prom", "prometheus")
    ca.issue(f"{d}/stranger", "stranger")
    ca.issue(f"{d}/expired", "verifier-1", expired=True)
    # another CA's certificate of the very subject the rules name
    CA(f"{d}/other", cn="Another CA").issue(f"{d}/unknown", "verifier-1")
    ca.issue(f"{d}/server2", "podcapd.test", server=True)
    return ca


def check_refusals(check, d, port):
    cases = [(None, "/v1/checkpoint", "no_certificate"),
             ("unknown", "/v1/checkpoint", "untrusted_certificate"),
             ("expired", "/v1/checkpoint", "expired_certificate"),
             ("stranger", "/v1/checkpoint", "unknown_client"),
             ("prom", "/v1/checkpoint", "not_allowed"),
             ("prom", "/tile/0/000", "not_allowed"),
             ("verifier", "/metrics", "not_allowed"),
             ("verifier", "/v1/attest", "not_allowed")]
    for cert, path, reason in cases:
        st, body, _ = request(port, context(d, cert), path)
        check(st == 403 and reason.encode() in body,
              f"{cert or 'no certificate'} asking for {path}: 403 {reason} ({st} {body[:60]!r})")
    st, body, _ = request(port, context(d, "verifier"), "/v1/checkpoint")
    check(st == 200 and body.startswith(b"podcap/tls\n"), f"the verifier reads the checkpoint ({st})")
    st, _, _ = request(port, context(d, "inspector"), "/v1/pubkey")
    check(st == 200, f"the inspector reads the log ({st})")
    st, body, _ = request(port, context(d, "prom"), "/metrics")
    check(st == 200, f"Prometheus's key reads /metrics ({st})")
    counts = refused_counts(body)
    want = {"no_certificate": 1, "untrusted_certificate": 1, "expired_certificate": 1,
            "unknown_client": 1, "not_allowed": 4}
    check(counts == want, f"every refusal counted by reason: {counts}")
    if os.access(PROMTOOL, os.X_OK):
        r = subprocess.run([PROMTOOL, "check", "metrics"], input=body, capture_output=True)
        out = (r.stdout + r.stderr).decode().strip()
        check(r.returncode == 0 and out == "", f"promtool check metrics: exit {r.returncode} {out!r}")
    try:
        request(port, context(d, "verifier", tls12=True), "/v1/checkpoint")
        check(False, "a TLS 1.2 client is refused by default")
    except ssl.SSLError as e:
        check(True, f"a TLS 1.2 client is refused by default ({e.reason})")


def counters(d, port):
    """(handshake failures, refusals) by reason, as Prometheus reads them."""
    st, body, _ = request(port, context(d, "prom"), "/metrics")
    return (handshake_failures(body), refused_counts(body), body) if st == 200 else ({}, {}, b"")


def wait_delta(d, port, before, want, timeout=5, skip=()):
    """Polls /metrics until the handshake failures moved by want from before (or timeout
    passed): the endpoint counts a connection when its thread has cleaned it up."""
    deadline = time.time() + timeout
    while True:
        now, refused, _ = counters(d, port)
        delta = {k: now.get(k, 0) - before.get(k, 0) for k in now
                 if now.get(k, 0) != before.get(k, 0) and k not in skip}
        if delta == want or time.time() > deadline:
            return delta, now, refused
        time.sleep(0.1)


def failed_handshakes(d, port):
    """Each client whose handshake cannot finish: (what, the reason it must be counted under,
    a function that runs it)."""
    hello = client_hello(d)
    url = f"https://127.0.0.1:{port}/v1/checkpoint"

    def python_tls12():
        try:
            request(port, context(d, "verifier", tls12=True), "/v1/checkpoint")
        except (ssl.SSLError, OSError):
            pass

    def run(*cmd):
        subprocess.run(list(cmd), stdin=subprocess.DEVNULL, capture_output=True, timeout=30)

    def other_ca():
        c = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        c.load_verify_locations(f"{d}/other.crt")
        try:
            request(port, c, "/v1/checkpoint")
        except (ssl.SSLError, OSError):
            pass

    def cut_hello():
        with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
            s.sendall(hello[:len(hello) // 2])
            time.sleep(0.3)

    return [
        ("a TLS 1.2-only Python client", "protocol_version", python_tls12),
        ("openssl s_client -tls1_2", "protocol_version",
         lambda: run("openssl", "s_client", "-tls1_2", "-CAfile", f"{d}/ca.crt", "-connect",
                     f"127.0.0.1:{port}")),
        ("curl --tls-max 1.2", "protocol_version",
         lambda: run("curl", "-sS", "--cacert", f"{d}/ca.crt", "--tlsv1.2", "--tls-max", "1.2",
                     "-o", "/dev/null", url)),
        ("curl that does not trust the site's CA", "refused_by_client",
         lambda: run("curl", "-sS", "-o", "/dev/null", url)),
        ("a Python client trusting another CA", "refused_by_client", other_ca),
        ("plain HTTP on the TLS port", "not_tls",
         lambda: run("curl", "-sS", "-o", "/dev/null", f"http://127.0.0.1:{port}/v1/checkpoint")),
        ("half a ClientHello, then a close", "closed", cut_hello),
    ]


class Stalled(threading.Thread):
    """A connection that sends the start of a ClientHello and no more: how long the endpoint
    held it (its close_notify, in clear as no keys exist yet, then its close)."""

    def __init__(self, port, start):
        super().__init__()
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=30)
        self.sock.sendall(start)
        self.t0 = time.time()
        self.held = None
        self.start()

    def run(self):
        try:
            while self.sock.recv(100):
                pass
            self.held = round(time.time() - self.t0, 1)
        except OSError:
            pass
        self.sock.close()


def check_handshakes(check, d, port):
    before, refused0, body = counters(d, port)
    check(sorted(before) == sorted(HANDSHAKE_REASONS),
          f"every reason of podcap_http_tls_handshake_failures_total is declared ({before})")
    # a handshake that stalls: the endpoint drops it at its timeout, whatever else goes on
    stalled = Stalled(port, client_hello(d)[:20])
    for what, reason, run in failed_handshakes(d, port):
        run()
        delta, before, _ = wait_delta(d, port, before, {reason: 1}, skip=("timeout",))
        check(delta == {reason: 1}, f"{what}: counted as {reason} ({delta})")
    # who finishes the handshake without a certificate of the site's is refused with 403
    for cert, reason in ((None, "no_certificate"), ("unknown", "untrusted_certificate")):
        st, _, _ = request(port, context(d, cert), "/v1/checkpoint")
        time.sleep(0.3)
        now, refused, _ = counters(d, port)
        moved = {k: now[k] - before[k] for k in now if now[k] != before[k] and k != "timeout"}
        check(st == 403 and refused.get(reason, 0) == refused0.get(reason, 0) + 1 and not moved,
              f"{cert or 'no'} certificate: the handshake finishes, 403 {reason} is counted, "
              f"no handshake failure ({st}, {moved})")
        refused0 = refused
    stalled.join(30)
    check(stalled.held is not None and 9.5 <= stalled.held <= 14,
          f"a stalled handshake is dropped after the endpoint's 10 s ({stalled.held} s)")
    delta, _, _ = wait_delta(d, port, before, {"timeout": 1})
    check(delta == {"timeout": 1}, f"and counted as timeout ({delta})")
    _, _, body = counters(d, port)
    if os.access(PROMTOOL, os.X_OK):
        r = subprocess.run([PROMTOOL, "check", "metrics"], input=body, capture_output=True)
        out = (r.stdout + r.stderr).decode().strip()
        check(r.returncode == 0 and out == "",
              f"promtool check metrics with failures counted: exit {r.returncode} {out!r}")


def check_curl(check, d, port):
    url = f"https://127.0.0.1:{port}/v1/checkpoint"
    r = subprocess.run(["curl", "-sS", "--cacert", f"{d}/ca.crt", "--cert", f"{d}/verifier.crt",
                        "--key", f"{d}/verifier.key", "-o", "-", "-w", "\n%{http_code}", url],
                       capture_output=True, text=True, timeout=30)
    check(r.returncode == 0 and r.stdout.endswith("\n200") and r.stdout.startswith("podcap/tls\n"),
          f"curl with the verifier's certificate: 200 ({r.returncode} {r.stderr.strip()})")
    r = subprocess.run(["curl", "-sS", "--cacert", f"{d}/ca.crt", "-o", "/dev/null", "-w",
                        "%{http_code}", url], capture_output=True, text=True, timeout=30)
    check(r.stdout == "403", f"curl without a certificate: 403 ({r.stdout})")
    r = subprocess.run(["curl", "-sS", "-o", "/dev/null", url], capture_output=True, text=True,
                       timeout=30)
    check(r.returncode == 60, f"curl that does not trust the site's CA refuses the server ({r.returncode})")


def verify_url(pd, d, port, *extra):
    return subprocess.run([VERIFY, "--key", pd.key + ".pub", "--url", f"https://127.0.0.1:{port}",
                           "--json", *extra], capture_output=True, text=True, timeout=120)


def check_verifier(check, pd, d, port):
    tls = ["--ca", f"{d}/ca.crt", "--cert", f"{d}/verifier.crt", "--cert-key", f"{d}/verifier.key"]
    r = verify_url(pd, d, port, *tls, "--pin", spki_sha256(f"{d}/server.crt"))
    v = json.loads(r.stdout) if r.stdout.startswith("{") else {}
    check(r.returncode == 0 and v.get("ok") is True,
          f"podcap-verify pulls over https with its certificate and verifies (exit {r.returncode}, "
          f"{r.stderr.strip()[:200]})")
    r = verify_url(pd, d, port, *tls, "--pin", spki_sha256(f"{d}/server2.crt"))
    check(r.returncode == 2 and "does not match pinned" in r.stderr and "--pin" in r.stderr,
          f"a server key other than --pin's is refused (exit {r.returncode}: {r.stderr.strip()[:200]})")
    r = verify_url(pd, d, port, "--cert", f"{d}/verifier.crt", "--cert-key", f"{d}/verifier.key")
    check(r.returncode == 2 and "--ca" in r.stderr,
          f"a server of a CA not given is refused (exit {r.returncode}: {r.stderr.strip()[:200]})")
    r = verify_url(pd, d, port, "--ca", f"{d}/ca.crt")
    check(r.returncode == 2 and "403" in r.stderr,
          f"without a client certificate the log is refused: 403 (exit {r.returncode})")


def window_labels(text):
    return sorted({ln.split()[1] for ln in text.splitlines() if ln.startswith("window ")})


def check_reload(check, pd, d, port, conf):
    _, _, before = request(port, context(d, "verifier"), "/v1/checkpoint")
    keep = context(d, "verifier")
    held = socket.create_connection(("127.0.0.1", port), timeout=10)
    held = keep.wrap_socket(held, server_hostname="127.0.0.1")
    for ext in ("crt", "key"):
        shutil.copy(f"{d}/server2.{ext}", f"{d}/server.{ext}")
    pd.signal(signal.SIGHUP)
    check(pd.wait_log("TLS files reloaded", 10), "SIGHUP reloads the certificate files")
    st, _, after = request(port, context(d, "verifier"), "/v1/checkpoint")
    check(st == 200 and after != before and
          after == hashlib.sha256(ssl.PEM_cert_to_DER_cert(open(f"{d}/server2.crt").read())).hexdigest(),
          "a connection made after it gets the new certificate")
    held.sendall(b"GET /v1/pubkey HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    check(held.recv(100).startswith(b"HTTP/1.1 200"), "a connection made before it is still served")
    held.close()

    # a bad file: positioned, and what is in force stays
    pd.write_config(conf.replace(f"{d}/server.key", f"{d}/missing.key"))
    pd.signal(signal.SIGHUP)
    check(pd.wait_log("pod map in force stays", 10), "a bad TLS file on SIGHUP is refused")
    check(re.search(re.escape(pd.config) + r":\d+:\d+: cannot read the key .*missing.key", pd.log())
          is not None, "the refusal names file:line:col and the file")
    st, _, now = request(port, context(d, "verifier"), "/v1/checkpoint")
    check(st == 200 and now == after, "the certificate in force stays")
    pd.write_config(conf)


def check_start_errors(check, d, conf):
    bad = Podcapd(PODCAPD, KEYGEN, f"{d}/bad", "tls")
    bad.write_config(conf.replace(f"{d}/server.crt", f"{d}/ca.key"))
    r = subprocess.run([PODCAPD, "--config", bad.config], capture_output=True, text=True, timeout=60)
    check(r.returncode == 2 and re.search(r":\d+:\d+: GnuTLS refuses the certificate", r.stderr),
          f"a certificate GnuTLS refuses at start: exit 2, file:line:col ({r.returncode} {r.stderr.strip()[:160]})")
    bad.write_config(conf.replace("client_ca: ", "client_ca: /nonexistent"))
    r = subprocess.run([PODCAPD, "--check-config", bad.config], capture_output=True, text=True)
    check(r.returncode == 2 and "cannot read the client CA" in r.stderr,
          f"--check-config reads the TLS files too ({r.returncode})")


def start_witness(d, pd, name="witness", extra=()):
    """podcap-witness over TLS for podcapd's log: (process, port, its cosigner key line)."""
    if not os.path.exists(f"{d}/witness.key"):
        subprocess.run([KEYGEN, "--out", f"{d}/witness.key", "--name", "witness.test/w1"],
                       check=True, stdout=subprocess.DEVNULL)
    wkey = subprocess.run([WITNESS, "--key", f"{d}/witness.key", "--print-key"], check=True,
                          capture_output=True, text=True).stdout.strip()
    err = open(f"{d}/{name}.log", "w")
    w = subprocess.Popen([WITNESS, "--key", f"{d}/witness.key", "--state", f"{d}/{name}-state",
                          "--log", pd.key + ".pub", "--listen", "127.0.0.1:0",
                          "--tls-cert", f"{d}/server.crt", "--tls-key", f"{d}/server.key",
                          *extra], stderr=err)
    deadline = time.time() + 20
    while time.time() < deadline:
        m = re.search(r"listening on port (\d+)", open(f"{d}/{name}.log").read())
        if m:
            return w, int(m[1]), wkey
        time.sleep(0.05)
    return w, None, wkey


def check_witness(check, d, port, wport):
    """podcapd's submissions reach the TLS witness with the pod map's CA; others are refused."""
    deadline = time.time() + 15
    body = b""
    while time.time() < deadline:
        _, body, _ = request(port, context(d, "verifier"), "/v1/checkpoint")
        if "\u2014 witness.test/w1 ".encode() in body:
            break
        time.sleep(0.3)
    check("\u2014 witness.test/w1 ".encode() in body,
          "podcapd submits to an https:// witness with its CA, and serves the cosignature")
    r = subprocess.run(["curl", "-sS", "-o", "/dev/null", "-X", "POST",
                        f"https://127.0.0.1:{wport}/add-checkpoint"], capture_output=True, timeout=30)
    check(r.returncode == 60, f"a client that does not trust the witness's CA refuses it ({r.returncode})")


def check_witness_client_ca(check, d, pd):
    """--client-ca: a submitter without a certificate of that CA is refused with 403."""
    w, port, _ = start_witness(d, pd, "witness-ca", ["--client-ca", f"{d}/ca.crt"])
    url = f"https://127.0.0.1:{port}/add-checkpoint"

    def post(*cert):
        r = subprocess.run(["curl", "-sS", "--cacert", f"{d}/ca.crt", *cert, "-X", "POST",
                            "--data-binary", "x", "-o", "-", "-w", "\n%{http_code}", url],
                           capture_output=True, text=True, timeout=30)
        return r.stdout
    for what, cert in [("none", []), ("another CA's",
                       ["--cert", f"{d}/unknown.crt", "--key", f"{d}/unknown.key"]),
                       ("an expired", ["--cert", f"{d}/expired.crt", "--key", f"{d}/expired.key"])]:
        out = post(*cert)
        check(out.endswith("\n403") and "forbidden" in out,
              f"--client-ca: a submitter with {what} certificate gets 403 ({out.strip()!r})")
    out = post("--cert", f"{d}/verifier.crt", "--key", f"{d}/verifier.key")
    check(not out.endswith("403") and out.rsplit("\n", 1)[-1].isdigit(),
          f"--client-ca: one of its certificates is heard ({out.strip()!r})")
    w.terminate()
    w.wait(timeout=10)


def main():
    check = Checks()
    with tempfile.TemporaryDirectory(prefix="podcap-tls-") as d:
        os.makedirs(f"{d}/bad")
        make_certs(d)
        write_pcap(f"{d}/empty.pcap", [])
        write_pcap(f"{d}/pod.pcap", [eth(ETH_IPV4, ipv4_packet("10.0.0.1", "10.0.0.200", 1000))] * 8)
        pd = Podcapd(PODCAPD, KEYGEN, d, "tls")
        witness, wport, wkey = start_witness(d, pd)
        check(wport is not None, "podcap-witness listens over TLS")
        conf = (pd.appliance_yaml() + TLS.format(d=d, prom_key=spki_sha256(f"{d}/prom.crt")) +
                WITNESSES.format(d=d, port=wport, key=wkey) + MAP.format(d=d, pid=os.getpid()))
        pd.write_config(conf)
        check_start_errors(check, d, conf)
        if not check(pd.start(), "podcapd starts with TLS"):
            print(pd.log())
            return check.finish()
        port = pd.port()
        time.sleep(2.5)
        check_witness(check, d, port, wport)
        check_witness_client_ca(check, d, pd)
        check_refusals(check, d, port)
        check_handshakes(check, d, port)
        check_curl(check, d, port)
        check_verifier(check, pd, d, port)
        check_reload(check, pd, d, port, conf)
        time.sleep(2.5)
        check(pd.proc.poll() is None, "podcapd kept running")
        rc = pd.stop()
        check(rc == 0, f"podcapd exits 0 ({rc})")
        witness.terminate()
        witness.wait(timeout=10)
        # no time the ledger does not account for, across both SIGHUPs
        r = subprocess.run([VERIFY, "--key", pd.key + ".pub", "--ledger", pd.ledger, "--json",
                            "--max-unaccounted", "0s"], capture_output=True, text=True)
        v = json.loads(r.stdout) if r.stdout.startswith("{") else {}
        check(r.returncode == 0 and v.get("ok") is True,
              f"the ledger verifies after the reloads under traffic (exit {r.returncode}, "
              f"{v.get('failures', [])[:3]})")
        labels = window_labels(pd.stdout())
        check(len(labels) >= 6, f"windows recorded throughout: {len(labels)}")
        if check.failures:
            print(pd.log())
            print(pd.stdout())
    return check.finish()


sys.exit(main())
