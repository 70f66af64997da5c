#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The verifier endpoint under abuse, while podcapd forwards at full rate.

podcapd forwards an endless pcap (net_pcap infinite_rx) from the pod port to
the fabric port. In a private network namespace, clients on many loopback
addresses, pinned to the control core (taskset; the worker has core 1),
abuse the HTTP endpoint: thousands of connections from one address, slow
clients trickling headers a byte at a time and never finishing, silent
connections, oversized request lines, URLs, query strings and headers,
bodies on GET, garbage methods and bytes, and pipelined requests. Then a
crowd on a hundred addresses opens more connections than the endpoint's
limit and holds them.

Asserted: the limits hold (per address, in total, idle timeout, request
size: a 4xx or a close, never a 2xx for a bad request), a verifier on its
own address gets every request answered during the abuse (but for the
crowd) and after it, podcapd stays up, and the data path's rate during the
abuse is at least half of what it was before.
"""
import calendar
import json
import os
import re
import resource
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "integration"))

PER_IP = 8          # PC_HTTP_MAX_PER_CLIENT
TOTAL = 256         # PC_HTTP_MAX_CONNECTIONS
IDLE_TIMEOUT = 10   # PC_HTTP_IDLE_TIMEOUT, seconds
ABUSE_SECONDS = 24
VERIFIER_IP = "127.0.0.200"


# ---- the abusers (a separate process, pinned off the worker's core) ----

def conn(src, port, timeout=5):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind((src, 0))
    s.settimeout(timeout)
    s.connect(("127.0.0.1", port))
    return s


def closed_by_peer(s):
    try:
        return s.recv(65536, socket.MSG_PEEK | socket.MSG_DONTWAIT) == b""
    except BlockingIOError:
        return False
    except OSError:
        return True


def exchange(src, port, data, read_for=5.0):
    """Sends data, returns what came back until the server closed or read_for passed."""
    try:
        s = conn(src, port)
    except OSError as e:
        return f"connect: {e}".encode()
    out = b""
    try:
        s.sendall(data)
    except OSError:
        pass
    end = time.time() + read_for
    try:
        while time.time() < end:
            s.settimeout(max(0.05, end - time.time()))
            chunk = s.recv(65536)
            if not chunk:
                break
            out += chunk
    except OSError:
        pass
    s.close()
    return out


def status_of(reply):
    m = re.match(rb"HTTP/1\.[01] (\d{3})", reply)
    return int(m[1]) if m else "closed"


def bad_requests(port, src):
    """Each malformed request and what the endpoint answered."""
    big = "a" * 70000
    cases = {
        "URL of 70 KB": f"GET /v1/{big} HTTP/1.1\r\nHost: x\r\n\r\n",
        "query string of 70 KB": f"GET /v1/checkpoint?{big} HTTP/1.1\r\nHost: x\r\n\r\n",
        "header of 40 KB": f"GET /v1/checkpoint HTTP/1.1\r\nHost: x\r\nX-Big: {'b' * 40000}\r\n\r\n",
        "3000 headers": "GET /v1/checkpoint HTTP/1.1\r\nHost: x\r\n" +
                        "".join(f"X-{i}: {i}\r\n" for i in range(3000)) + "\r\n",
        "GET with a 1 MB body": "GET /v1/checkpoint HTTP/1.1\r\nHost: x\r\nContent-Length: 1000000\r\n\r\n"
                                + "z" * 1000000,
        "method FOO": "FOO /v1/checkpoint HTTP/1.1\r\nHost: x\r\n\r\n",
        "method POST": "POST /v1/checkpoint HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello",
        "a NUL in the method": "G\0T /v1/checkpoint HTTP/1.1\r\nHost: x\r\n\r\n",
        "HTTP/9.9": "GET /v1/checkpoint HTTP/9.9\r\nHost: x\r\n\r\n",
        "a TLS hello": "\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03" + "\x00" * 64,
        "binary garbage": "".join(chr(i % 256) for i in range(7, 3000, 7)),
        "no version": "GET /v1/checkpoint\r\n\r\n",
    }
    return {k: status_of(exchange(src, port, v.encode("latin-1"))) for k, v in cases.items()}


def pipelined(port, src, n=60):
    """Answers to n pipelined requests, and whether the endpoint then closed."""
    t0 = time.time()
    reply = exchange(src, port, b"GET /v1/pubkey HTTP/1.1\r\nHost: x\r\n\r\n" * n, read_for=8)
    return len(re.findall(rb"HTTP/1\.1 200 ", reply)), time.time() - t0 < 7


def flood_one_address(port, src, n=2000):
    """n connections from one address: how many did the endpoint keep?"""
    socks = []
    for _ in range(n):
        try:
            socks.append(conn(src, port, timeout=2))
        except OSError:
            pass
    time.sleep(2)
    kept = sum(1 for s in socks if not closed_by_peer(s))
    for s in socks:
        s.close()
    return len(socks), kept


def slowloris(port, ips, stop):
    """PER_IP connections per address, trickling one header byte per second."""
    socks = []
    for ip in ips:
        for _ in range(PER_IP):
            try:
                s = conn(ip, port)
                s.sendall(b"GET /v1/checkpoint HTTP/1.1\r\nHost: x\r\nX-Slow: ")
                socks.append(s)
            except OSError:
                pass
    answered = 0
    while not stop.is_set():
        for s in socks:
            try:
                s.send(b"a")
            except OSError:
                pass
        time.sleep(1)
    for s in socks:
        try:
            if s.recv(65536, socket.MSG_DONTWAIT).startswith(b"HTTP/"):
                answered += 1
        except OSError:
            pass
        s.close()
    return len(socks), answered


def silent(port, src, n=4):
    """Connections that never send: seconds until the endpoint closed each."""
    t0 = time.time()
    socks = [conn(src, port) for _ in range(n)]
    closed = {}
    while len(closed) < n and time.time() - t0 < 3 * IDLE_TIMEOUT:
        for i, s in enumerate(socks):
            if i not in closed and closed_by_peer(s):
                closed[i] = round(time.time() - t0, 1)
        time.sleep(0.2)
    for s in socks:
        s.close()
    return sorted(closed.values())


def crowd(port, hold=4):
    """30 connections from each of 100 addresses, held: more than the total limit."""
    socks = []
    for a in range(100):
        for _ in range(30):
            try:
                socks.append(conn(f"127.0.1.{a + 1}", port, timeout=1))
            except OSError:
                pass
    time.sleep(hold)
    n = len(socks)
    for s in socks:
        s.close()
    return n


def abuse(port, out):
    resource.setrlimit(resource.RLIMIT_NOFILE, (8192, 8192))
    res = {}
    stop = threading.Event()
    t0 = time.time()
    threads = [
        threading.Thread(target=lambda: res.__setitem__(
            "slowloris", slowloris(port, [f"127.0.0.{i}" for i in range(10, 20)], stop))),
        threading.Thread(target=lambda: res.__setitem__("silent", silent(port, "127.0.0.30"))),
    ]
    for t in threads:
        t.start()
    res["flood"] = []
    res["bad"] = []
    res["pipelined"] = []
    i = 0
    while time.time() - t0 < ABUSE_SECONDS:
        src = f"127.0.0.{40 + i % 20}"
        res["flood"].append(flood_one_address(port, "127.0.0.2"))
        res["bad"].append(bad_requests(port, src))
        res["pipelined"].append(pipelined(port, src))
        i += 1
    stop.set()
    for t in threads:
        t.join()
    res["abuse_end"] = time.time()
    with open(out + ".phase", "w") as f:
        f.write("crowd")
    res["crowd_connected"] = crowd(port)
    res["crowd_end"] = time.time()
    with open(out, "w") as f:
        json.dump(res, f)


if len(sys.argv) > 1 and sys.argv[1] == "--abuse":
    abuse(int(sys.argv[2]), sys.argv[3])
    sys.exit(0)


# ---- the test ----

sys.path.insert(0, HERE)
import faultlib  # noqa: E402
from faultlib import Checks, Podcapd  # noqa: E402

faultlib.enter("a private network namespace", net=True)

PODCAPD, KEYGEN, VERIFY = sys.argv[1:4]



def frames_per_window(stdout, t_from, t_to):
    """Frames the worker handled in each whole window inside [t_from, t_to]."""
    rates = []
    for ln in stdout.splitlines():
        m = re.match(r"window (\S+) pod-a up passed \d+ (\d+) dropped \d+ (\d+) ", ln)
        if m:
            start = calendar.timegm(time.strptime(m[1], "%Y-%m-%dT%H:%M:%SZ"))
            if start >= t_from and start + 1 <= t_to:
                rates.append(int(m[2]) + int(m[3]))
    return rates


class Verifier(threading.Thread):
    """A legitimate verifier on its own address, pulling every half second."""

    def __init__(self, port):
        super().__init__()
        self.port = port
        self.stop = threading.Event()
        self.paused = threading.Event()
        self.results = []

    def get(self, path):
        try:
            s = conn(VERIFIER_IP, self.port, timeout=10)
            s.sendall(f"GET {path} HTTP/1.1\r\nHost: podcap\r\nConnection: close\r\n\r\n".encode())
            reply = b""
            while True:
                chunk = s.recv(65536)
                if not chunk:
                    break
                reply += chunk
            s.close()
            return status_of(reply), reply
        except OSError as e:
            return f"error {e}", b""

    def run(self):
        while not self.stop.is_set():
            if not self.paused.is_set():
                for path in ("/v1/checkpoint", "/v1/pubkey", "/metrics"):
                    st, _ = self.get(path)
                    self.results.append((time.time(), path, st))
            time.sleep(0.5)


def socket_fds(pid):
    n = 0
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            if os.readlink(f"/proc/{pid}/fd/{fd}").startswith("socket:"):
                n += 1
        except OSError:
            pass
    return n


def main():
    check = Checks()
    subprocess.run(["ip", "link", "set", "lo", "up"], check=True)
    with tempfile.TemporaryDirectory(prefix="podcap-abuse-") as d:
        faultlib.traffic(d, frames=64, size=500, to="192.0.2.1")
        pd = Podcapd(PODCAPD, KEYGEN, d, "abuse")
        pd.write_config(pd.appliance_yaml() + faultlib.pod_map(d, "abuse", memory="512MiB", cap="100Gbps", mode="police"))
        if not check(pd.start(), "podcapd starts"):
            print(pd.log())
            return 1
        port = pd.port()
        base_sockets = socket_fds(pd.proc.pid)
        t_before = time.time()
        time.sleep(6)
        ver = Verifier(port)
        ver.start()
        t_abuse = time.time()
        out = f"{d}/abuse.json"
        # the abusers share core 0 with podcapd's control and HTTP threads, never the worker's core 1
        ab = subprocess.Popen(["taskset", "-c", "0", sys.executable, __file__, "--abuse", str(port), out])
        max_sockets = 0
        while ab.poll() is None:
            if os.path.exists(out + ".phase") and not ver.paused.is_set():
                ver.paused.set()
            max_sockets = max(max_sockets, socket_fds(pd.proc.pid) - base_sockets)
            time.sleep(0.2)
        ver.paused.clear()
        check(ab.returncode == 0, f"the abusers ran (exit {ab.returncode})")
        res = json.load(open(out))
        time.sleep(1.5)
        after = [ver.get(p)[0] for p in ("/v1/checkpoint", "/v1/pubkey", "/metrics")]
        ver.stop.set()
        ver.join()

        check(pd.proc.poll() is None, "podcapd is still running")
        during = [r for r in ver.results if t_abuse <= r[0] <= res["abuse_end"]]
        bad = [r for r in during if r[2] != 200]
        check(len(during) >= 30 and not bad,
              f"the verifier was answered 200 throughout the abuse ({len(during)} requests, failed: {bad[:3]})")
        check(after == [200, 200, 200], f"and after it ({after})")
        r = subprocess.run([VERIFY, "--key", pd.key + ".pub", "--url", f"http://127.0.0.1:{port}"],
                           capture_output=True, text=True, env=dict(os.environ, no_proxy="*"))
        check(r.returncode == 0, f"podcap-verify pulls and verifies the ledger after the abuse (exit {r.returncode})")

        floods = res["flood"]
        check(floods and all(kept <= PER_IP for _, kept in floods) and all(n >= 1000 for n, _ in floods),
              f"2000 connections from one address: at most {PER_IP} kept (connected, kept: {floods[:4]})")
        check(max_sockets <= TOTAL + 2,
              f"podcapd never held more than {TOTAL} connections (at most {max_sockets} sockets beyond its own)")
        check(res["crowd_connected"] > TOTAL,
              f"the crowd opened more connections than the limit ({res['crowd_connected']})")
        n_slow, answered = res["slowloris"]
        check(n_slow == 10 * PER_IP and answered == 0,
              f"{n_slow} slow clients were held without an answer while they trickled")
        check(len(res["silent"]) == 4, f"silent connections were closed by the idle timeout ({res['silent']} s)")
        worst = {}
        for b in res["bad"]:
            for k, st in b.items():
                worst.setdefault(k, set()).add(st)
        for k, sts in worst.items():
            check(all(st == "closed" or 400 <= st < 600 for st in sts), f"{k}: {sorted(map(str, sts))}")
        # libmicrohttpd 0.9.75 answers the first of pipelined requests and closes:
        # the client must reconnect, and nothing hangs
        check(res["pipelined"] and all(n >= 1 and closed for n, closed in res["pipelined"]),
              f"pipelined requests: answered, then closed ({res['pipelined'][:4]}; answers of 60, closed)")

        before = frames_per_window(pd.stdout(), t_before, t_abuse)
        while time.time() < res["crowd_end"] + 1.5:
            time.sleep(0.1)
        abused = frames_per_window(pd.stdout(), t_abuse, res["crowd_end"])
        # medians: one window in which another tenant of the machine took the core counts little
        rb = statistics.median(before) if before else 0
        ra = statistics.median(abused) if abused else 0
        ratio = ra / rb if rb else 0
        print(f"data path (median of 1 s windows): {rb / 1e6:.2f} Mframes/s before ({len(before)} windows), "
              f"{ra / 1e6:.2f} Mframes/s during the abuse ({len(abused)} windows): ratio {ratio:.2f}")
        # The machine is shared and its load changes from second to second, so
        # only a collapse counts: half the rate would mean the endpoint reaches
        # into the worker's core or its memory path, which the abusers here,
        # pinned to the other core, must not be able to do.
        check(len(before) >= 3 and len(abused) >= 10 and ratio >= 0.5,
              f"the data path kept at least half its rate under abuse ({ratio:.2f})")
        check(pd.stop() == 0, "podcapd stops cleanly")
        if check.failures:
            print(json.dumps(res)[:3000])
            print(pd.log()[-3000:])
    return check.finish()


sys.exit(main())
