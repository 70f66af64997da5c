#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""--version: the release and the build id, as START records carry it.

podcapd, podcap-keygen and podcap-verify each print one line
"<program> <version> build <64 hex digits>", with meson.build's project
version (passed by tests/integration/meson.build) and the BLAKE2b-256 of
the program's own file, computed here independently. The build id podcapd
prints is the one its START record carries: podcapd runs a moment, and
podcap-verify --json shows the build of that start.
"""
import hashlib
import json
import os
import re
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from daemon import Checks, Podcapd  # noqa: E402
from frames import write_pcap  # noqa: E402

PODCAPD, KEYGEN, VERIFY, VERSION = sys.argv[1:5]

MAP = """\
window: 1s
dpdk:
  lcores: 0-1
  memory: 512MiB
  file_prefix: version-{pid}
uplinks:
  - name: up0
    pod_port: net_pcap0,rx_pcap={d}/empty.pcap,tx_pcap={d}/to_pod.pcap
    fabric_port: net_pcap1,rx_pcap={d}/empty.pcap,tx_pcap={d}/to_fabric.pcap
pods:
  - id: pod-a
    uplink: up0
"""


def blake2b_256(path):
    h = hashlib.blake2b(digest_size=32)
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 16), b""):
            h.update(chunk)
    return h.hexdigest()


def version_of(check, prog):
    """The build id prog --version prints, once its line is checked."""
    name = os.path.basename(prog)
    r = subprocess.run([prog, "--version"], capture_output=True, text=True, timeout=30)
    m = re.fullmatch(rf"{re.escape(name)} (\S+) build ([0-9a-f]{{64}})\n", r.stdout)
    check(r.returncode == 0 and m is not None and r.stderr == "",
          f"{name} --version: one line '{name} VERSION build HEX' (exit {r.returncode}: {r.stdout!r})")
    if m is None:
        return None
    check(m[1] == VERSION, f"{name}: version {m[1]}, meson.build's is {VERSION}")
    check(m[2] == blake2b_256(prog), f"{name}: the build id is the BLAKE2b-256 of its executable")
    return m[2]


def main():
    check = Checks()
    build = version_of(check, PODCAPD)
    version_of(check, KEYGEN)
    version_of(check, VERIFY)

    with tempfile.TemporaryDirectory(prefix="podcap-version-") as d:
        write_pcap(f"{d}/empty.pcap", [])
        pd = Podcapd(PODCAPD, KEYGEN, d, "version")
        pd.write_config(pd.appliance_yaml() + MAP.format(d=d, pid=os.getpid()))
        if not check(pd.start(), "podcapd starts"):
            print(pd.log())
            return 1
        time.sleep(1.5)
        check(pd.stop() == 0, "and stops")
        r = subprocess.run([VERIFY, "--key", pd.key + ".pub", "--ledger", pd.ledger, "--json"],
                           capture_output=True, text=True, timeout=60)
        try:
            out = json.loads(r.stdout)
        except json.JSONDecodeError:
            out = {}
        starts = [e for e in out.get("events", []) if e.get("event") == "start"]
        check(r.returncode == 0 and len(starts) == 1,
              f"podcap-verify accepts the ledger, with one start (exit {r.returncode})")
        got = starts[0].get("build") if starts else None
        check(build is not None and got == build,
              f"the START record's build id is the one podcapd --version prints ({got})")
        if check.failures:
            print(r.stdout + r.stderr)
            print(pd.log())
    return check.finish()


sys.exit(main())
