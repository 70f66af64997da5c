# SPDX-License-Identifier: BSD-3-Clause
"""What the fault tests share: their namespaces, the log as a verifier sees it.

Each fault test runs as root in its own mount and pid namespaces (enter()
re-executes the test there), so that its mounts vanish with it and every
podcapd it starts dies with it whatever happens.
"""
import json
import os
import re
import subprocess
import sys
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "integration"))
from daemon import Checks, Podcapd, private_dpdk_runtime, window_totals  # noqa: E402,F401
from frames import ETH_IPV4, eth, ipv4_packet, write_pcap  # noqa: E402,F401


def enter(why, net=False):
    """Re-executes the test in private mount and pid namespaces (root only),
    and a network namespace of its own with net=True."""
    if os.geteuid() != 0:
        print(f"SKIP: needs root ({why})")
        sys.exit(77)
    if os.environ.get("PODCAP_IN_UNSHARE") == "1":
        private_dpdk_runtime()
        return
    env = dict(os.environ, PODCAP_IN_UNSHARE="1")
    os.execvpe("unshare", ["unshare"] + (["--net"] if net else []) +
               ["--mount", "--propagation", "private", "--pid", "--fork",
                "--mount-proc", "--kill-child", sys.executable] + sys.argv, env)


def pod_map(d, name, memory="256MiB", extra_pods=0, cap="20Mbps", mode="shape"):
    """The pod map of the fault tests: pod-a (10.0.0.0/24) capped at 20 Mbit/s
    with 1-s windows, fed by traffic(d); extra_pods idle pods make every
    record larger."""
    text = f"""\
window: 1s
defaults:
  cap: {cap}
  burst: 50ms
  mode: {mode}
dpdk:
  lcores: 0-1
  memory: {memory}
  file_prefix: {name}-{os.getpid()}
uplinks:
  - name: up0
    pod_port: net_pcap0,rx_pcap={d}/in.pcap,tx_pcap=/dev/null,infinite_rx=1
    fabric_port: net_pcap1,rx_pcap={d}/empty.pcap,tx_pcap=/dev/null
pods:
  - id: pod-a
    uplink: up0
    prefixes: [10.0.0.0/24]
"""
    for i in range(1, extra_pods + 1):
        text += f"  - id: pod-{i:02d}\n    uplink: up0\n    prefixes: [10.{i}.0.0/16]\n"
    return text


def traffic(d, pod_ip="10.0.0.1", frames=32, size=986, to="10.0.0.200"):
    """A pod-side pcap that podcapd replays forever, and an empty fabric side."""
    write_pcap(f"{d}/in.pcap", [eth(ETH_IPV4, ipv4_packet(pod_ip, to, size))] * frames)
    write_pcap(f"{d}/empty.pcap", [])


def _get(port, path, timeout=10):
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    with opener.open(f"http://127.0.0.1:{port}{path}", timeout=timeout) as r:
        return r.read()


def metrics(port):
    """podcap_ledger_* from /metrics."""
    text = _get(port, "/metrics").decode()
    return {m[1]: float(m[2]) for m in re.finditer(r"^(podcap_ledger_\w+) (\S+)$", text, re.M)}


def pull(port):
    """The published checkpoint and every record it covers, as a verifier pulls them."""
    note = _get(port, "/v1/checkpoint")
    size = int(note.split(b"\n")[1])
    recs = []
    while len(recs) < size:
        body = _get(port, f"/v1/records?from={len(recs)}&count={min(1000, size - len(recs))}")
        off = 0
        while off < len(body):
            n = int.from_bytes(body[off:off + 4], "big")
            recs.append(body[off + 4:off + 4 + n])
            off += 4 + n
    return note, recs


def ledger_records(ledger):
    """The complete records of a ledger directory (a torn tail is left out)."""
    with open(f"{ledger}/records", "rb") as f:
        data = f.read()
    recs, off = [], 0
    while off + 4 <= len(data):
        n = int.from_bytes(data[off:off + 4], "big")
        if n == 0 or off + 4 + n + 32 > len(data):
            break
        recs.append(data[off + 4:off + 4 + n])
        off += 4 + n + 32
    return recs


def record_type(rec):
    """The type of an encoded record (docs/log-format.md): 'start', 'window', ..."""
    names = {1: "start", 2: "window", 3: "gap", 4: "reload", 5: "stop", 6: "clock"}
    return names.get(rec[1], "unknown")


def verify(verify_exe, pd, state=None, pod_map=True, extra=()):
    """podcap-verify --json on pd's ledger: (exit status, report, text for a failure)."""
    args = [verify_exe, "--key", pd.key + ".pub", "--ledger", pd.ledger, "--json", *extra]
    if pod_map:
        args += ["--pod-map", pd.config]
    if state:
        args += ["--state", state]
    r = subprocess.run(args, capture_output=True, text=True)
    try:
        out = json.loads(r.stdout)
    except json.JSONDecodeError:
        out = {}
    return r.returncode, out, r.stdout[-3000:] + r.stderr


def rates(stdout_lines, pod="pod-a", direction="up"):
    """The Mbit/s of each window podcapd printed for pod and direction."""
    return [float(ln.split()[-3]) for ln in stdout_lines if f" {pod} {direction} " in ln]
