#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""appliance.origin: the log's globally unique name, end to end.

podcapd with `origin: podcap.example.net/dc1/<id>` and a key of that name
writes a log whose checkpoints carry that origin; podcap-verify, given the
pod map, accepts it and names the origin. The same key under a map without
an origin (so podcap/<id>) is refused before anything starts, naming the
name the key needs; so is a key named podcap/<id> under the map that sets
the origin. A ledger keeps its origin: a key and map of another origin
cannot take over the ledger the domain origin made.
"""
import json
import os
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from daemon import Checks, Podcapd  # noqa: E402
from frames import write_pcap  # noqa: E402

PODCAPD, KEYGEN, VERIFY = sys.argv[1:4]
ORIGIN = "podcap.example.net/dc1/origin-1"

MAP = """\
window: 1s
dpdk:
  lcores: 0-1
  memory: 512MiB
  file_prefix: origin-{pid}
uplinks:
  - name: up0
    pod_port: net_pcap0,rx_pcap={d}/empty.pcap,tx_pcap={d}/to_pod.pcap
    fabric_port: net_pcap1,rx_pcap={d}/empty.pcap,tx_pcap={d}/to_fabric.pcap
pods:
  - id: pod-a
    uplink: up0
"""


def main():
    check = Checks()
    with tempfile.TemporaryDirectory(prefix="podcap-origin-") as d:
        write_pcap(f"{d}/empty.pcap", [])
        subprocess.run([KEYGEN, "--out", f"{d}/domain.key", "--name", ORIGIN], check=True,
                       stdout=subprocess.DEVNULL)
        pd = Podcapd(PODCAPD, KEYGEN, d, "origin-1")   # its own key is podcap/origin-1
        body = MAP.format(d=d, pid=os.getpid())
        with_origin = pd.appliance_yaml().replace("appliance:\n", f"appliance:\n  origin: {ORIGIN}\n", 1)

        # a key named podcap/<id> under a map that sets the origin
        pd.write_config(with_origin + body)
        r = subprocess.run([PODCAPD, "--config", pd.config], capture_output=True, text=True, timeout=60)
        check(r.returncode != 0 and f"make its key with podcap-keygen --name {ORIGIN}" in r.stderr,
              f"a podcap/<id> key under origin {ORIGIN} is refused (exit {r.returncode})")
        check(not os.path.exists(f"{pd.ledger}/records"), "and no ledger records were written")

        # the domain key under the map that sets the origin: podcapd runs, and the log verifies
        pd.key = f"{d}/domain.key"
        with_origin = pd.appliance_yaml().replace("appliance:\n", f"appliance:\n  origin: {ORIGIN}\n", 1)
        pd.write_config(with_origin + body)
        if not check(pd.start(), "podcapd starts with the domain origin"):
            print(pd.log())
            return 1
        time.sleep(1.5)
        check(pd.stop() == 0, "and stops")
        with open(f"{pd.ledger}/checkpoint") as f:
            first = f.readline().strip()
        check(first == ORIGIN, f"the checkpoint's first line is the origin ({first!r})")
        r = subprocess.run([VERIFY, "--key", f"{d}/domain.key.pub", "--ledger", pd.ledger,
                            "--pod-map", pd.config, "--json"], capture_output=True, text=True, timeout=60)
        out = json.loads(r.stdout) if r.stdout.startswith("{") else {}
        check(r.returncode == 0 and out.get("ok") is True,
              f"podcap-verify --pod-map accepts the log (exit {r.returncode}: {r.stderr.strip()[:120]})")
        check(ORIGIN in r.stdout, "and its report names the origin")

        # the same log against a map without the origin: the declared log is podcap/origin-1
        plain = f"{d}/plain.yaml"
        with open(plain, "w") as f:
            f.write(pd.appliance_yaml() + body)
        r = subprocess.run([VERIFY, "--key", f"{d}/domain.key.pub", "--ledger", pd.ledger,
                            "--pod-map", plain], capture_output=True, text=True, timeout=60)
        check(r.returncode == 1 and "declares the log 'podcap/origin-1'" in r.stdout + r.stderr,
              f"against a map without the origin it is refused (exit {r.returncode})")

        # the domain key under a map without the origin: refused before anything starts
        pd.write_config(pd.appliance_yaml() + body)
        r = subprocess.run([PODCAPD, "--config", pd.config], capture_output=True, text=True, timeout=60)
        check(r.returncode != 0 and "make its key with podcap-keygen --name podcap/origin-1" in r.stderr,
              f"the domain key under the podcap/<id> origin is refused (exit {r.returncode})")

        # the old podcap/<id> key and map over the ledger the domain origin made
        pd.key = f"{d}/appliance.key"
        pd.write_config(pd.appliance_yaml() + body)
        r = subprocess.run([PODCAPD, "--config", pd.config], capture_output=True, text=True, timeout=60)
        check(r.returncode != 0 and f"belongs to log '{ORIGIN}', not 'podcap/origin-1'" in r.stderr,
              f"the ledger keeps its origin: podcap/origin-1 cannot take it over (exit {r.returncode})")
    return check.finish()


sys.exit(main())
