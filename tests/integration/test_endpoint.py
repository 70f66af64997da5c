#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The verifier pull endpoint of a running podcapd.

podcap-verify --url accepts the log served by a live podcapd, and its byte
totals equal what came out of the ports; /metrics is Prometheus text that
the Prometheus client library's parser accepts, with the same counters;
bad requests get a 4xx with a reason.
"""
import json
import os
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from daemon import Checks, Podcapd  # noqa: E402
from frames import ETH_IPV4, eth, ipv4_packet, read_pcap, write_pcap  # noqa: E402

PODCAPD = os.environ.get("PODCAPD") or sys.argv[1]
KEYGEN = os.environ.get("PODCAP_KEYGEN") or sys.argv[2]
VERIFY = os.environ.get("PODCAP_VERIFY") or sys.argv[3]
# Debian's interpreter, which has python3-prometheus-client (tools/setup installs it)
SYSTEM_PYTHON = "/usr/bin/python3"

MAP = """\
window: 1s
defaults:
  cap: 10Mbps
  burst: 50ms
dpdk:
  lcores: 0-1
  memory: 512MiB
  file_prefix: endpoint-{pid}
uplinks:
  - name: up0
    pod_port: net_pcap0,rx_pcap={d}/in.pcap,tx_pcap={d}/to_pod.pcap,infinite_rx=1
    fabric_port: net_pcap1,rx_pcap={d}/empty.pcap,tx_pcap={d}/to_fabric.pcap
pods:
  - id: pod-a
    uplink: up0
"""

PARSE = """
import sys
from prometheus_client.parser import text_string_to_metric_families
out = {}
for fam in text_string_to_metric_families(sys.stdin.read()):
    for s in fam.samples:
        if s.name == "podcap_passed_bytes_total":
            out[s.labels["direction"]] = s.value
        out.setdefault("_families", []).append(fam.name)
import json
print(json.dumps(out))
"""


def get(url):
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with opener.open(url, timeout=10) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()


def main():
    check = Checks()
    with tempfile.TemporaryDirectory(prefix="podcap-endpoint-") as d:
        write_pcap(f"{d}/in.pcap", [eth(ETH_IPV4, ipv4_packet("10.0.0.1", "10.0.0.200", 986))] * 32)
        write_pcap(f"{d}/empty.pcap", [])
        pd = Podcapd(PODCAPD, KEYGEN, d, "endpoint")
        pd.write_config(pd.appliance_yaml() + MAP.format(d=d, pid=os.getpid()))
        if not check(pd.start(), "podcapd starts"):
            print(pd.log())
            return 1
        base = f"http://127.0.0.1:{pd.port()}"
        time.sleep(3.5)

        status, body = get(base + "/metrics")
        check(status == 200, f"GET /metrics: {status}")
        if os.path.exists(SYSTEM_PYTHON):
            r = subprocess.run([SYSTEM_PYTHON, "-c", PARSE], input=body.decode(), capture_output=True,
                               text=True)
            if "No module named" in r.stderr:
                print("note: python3-prometheus-client is not installed; parser check skipped")
            else:
                check(r.returncode == 0, "the Prometheus client parser accepts /metrics" +
                      ("" if r.returncode == 0 else ": " + r.stderr.strip().splitlines()[-1]))
                parsed = json.loads(r.stdout or "{}")
                check(parsed.get("up", 0) > 0, f"podcap_passed_bytes_total up = {parsed.get('up')}")
                for fam in ("podcap_bucket_level_bytes", "podcap_queue_frames",
                            "podcap_last_window_passed_bytes", "podcap_ledger_records",
                            "podcap_last_checkpoint_age_seconds"):
                    check(fam in parsed.get("_families", []), f"/metrics has {fam}")

        status, body = get(base + "/v1/pubkey")
        with open(pd.key + ".pub", "rb") as f:
            check(status == 200 and body == f.read(), "GET /v1/pubkey serves the verifier key")
        for path, want in (("/v1/records?from=0&count=0", 400), ("/v1/records?from=x", 400),
                           ("/v1/records?from=0&count=100000", 400), ("/v1/nothing", 404),
                           ("/v1/proof/consistency?old=5&new=2", 400)):
            status, body = get(base + path)
            check(status == want and len(body) > 0, f"GET {path}: {status} {body[:60]!r}")
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        req = urllib.request.Request(base + "/v1/checkpoint", data=b"x" * 5000, method="GET")
        try:
            with opener.open(req, timeout=10) as r:
                status = r.status
        except urllib.error.HTTPError as e:
            status = e.code
        check(status == 400, f"GET with a body is refused: {status}")

        rc = pd.stop()
        check(rc == 0, f"podcapd stops cleanly ({rc})")
        moved = sum(len(f) for f in read_pcap(f"{d}/to_fabric.pcap"))
        r = subprocess.run([VERIFY, "--key", pd.key + ".pub", "--ledger", pd.ledger, "--json"],
                           capture_output=True, text=True)
        out = json.loads(r.stdout) if r.returncode == 0 else {"pods": []}
        up = [p["bytes"] for p in out["pods"] if p["pod"] == "pod-a" and p["dir"] == "up"]
        check(up == [moved], f"after a clean stop the verified bytes up {up} are exactly the bytes the "
              f"fabric port sent ({moved})")

        # the ledger outlives the daemon: serve it again and verify over HTTP
        pd2 = Podcapd(PODCAPD, KEYGEN, d, "endpoint")
        check(pd2.start(), "podcapd restarts on its ledger")
        time.sleep(1.5)
        r = subprocess.run([VERIFY, "--key", pd.key + ".pub", "--url", f"http://127.0.0.1:{pd2.port()}",
                            "--pod-map", pd.config, "--json"], capture_output=True, text=True)
        pd2.stop()
        check(r.returncode == 0, f"podcap-verify --url accepts the served log (exit {r.returncode})")
        try:
            out = json.loads(r.stdout)
        except json.JSONDecodeError:
            print(r.stdout + r.stderr)
            return check.finish()
        up = [p for p in out["pods"] if p["pod"] == "pod-a" and p["dir"] == "up"]
        # the first run's bytes plus what the second run moved before the checkpoint it serves
        moved_all = moved + sum(len(f) for f in read_pcap(f"{d}/to_fabric.pcap"))
        check(up and moved <= up[0]["bytes"] <= moved_all,
              f"verified bytes up ({up[0]['bytes'] if up else None}) cover what the port moved "
              f"in the first run ({moved}) and no more than both runs ({moved_all})")
        if check.failures:
            print(r.stdout + r.stderr + pd.log())
    return check.finish()


sys.exit(main())
