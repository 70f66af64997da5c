#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""A full disk never stops the cap, and the ledger catches up when it clears.

The ledger lives on a small tmpfs (in a private mount namespace). While
traffic loops through podcapd, the tmpfs is filled to the last byte: the
cap must keep holding window after window, /metrics must show the failed
appends and the records waiting, and once space is freed every window must
reach the ledger, which then verifies with no window missing.
"""
import os
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import faultlib  # noqa: E402
from faultlib import Checks, Podcapd, metrics, window_totals  # noqa: E402

faultlib.enter("a private mount namespace with a tmpfs")
PODCAPD, KEYGEN, VERIFY = sys.argv[1:4]
CAP = 20_000_000



def fill(path):
    """Writes until the file system is full."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        for size in (65536, 4096, 512, 1):
            try:
                while True:
                    os.write(fd, b"\0" * size)
            except OSError:
                pass
    finally:
        os.close(fd)


def main():
    check = Checks()
    with tempfile.TemporaryDirectory(prefix="podcap-diskfull-") as d:
        disk = f"{d}/disk"
        os.mkdir(disk)
        subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m", "podcap-test", disk], check=True)
        try:
            faultlib.traffic(d)
            pd = Podcapd(PODCAPD, KEYGEN, d, "diskfull")
            pd.ledger = f"{disk}/ledger"
            pd.write_config(pd.appliance_yaml() + faultlib.pod_map(
                # more pods make every record larger than a page, so no append
                # fits in the space a file already has
                d, "diskfull", memory="512MiB", extra_pods=23))
            if not check(pd.start(), "podcapd starts with its ledger on a 2 MiB tmpfs"):
                print(pd.log())
                return 1
            port = pd.port()
            time.sleep(2.5)
            fill(f"{disk}/filler")
            full_from = len(pd.stdout().splitlines())
            time.sleep(4)
            m = metrics(port)
            rates = faultlib.rates(pd.stdout().splitlines()[full_from:])
            check(len(rates) >= 3, f"windows kept closing while the disk was full ({len(rates)})")
            check(rates and all(r <= CAP / 1e6 * 1.06 for r in rates) and max(rates) >= CAP / 1e6 * 0.9,
                  f"the cap held at 20 Mbit/s while the disk was full: {rates}")
            check(m.get("podcap_ledger_append_errors_total", 0) > 0,
                  f"/metrics counts the failed appends ({m.get('podcap_ledger_append_errors_total')})")
            check(m.get("podcap_ledger_queued_records", 0) >= 2,
                  f"/metrics shows the records waiting for the disk ({m.get('podcap_ledger_queued_records')})")
            stuck = m.get("podcap_ledger_records", 0)

            os.unlink(f"{disk}/filler")
            time.sleep(3.5)
            m = metrics(port)
            check(m.get("podcap_ledger_records", 0) > stuck + 2 and m.get("podcap_ledger_queued_records") == 0,
                  f"the ledger caught up once space was freed ({stuck} -> {m.get('podcap_ledger_records')} "
                  f"records, {m.get('podcap_ledger_queued_records')} waiting)")
            check(pd.stop() == 0, "podcapd stops cleanly")
            printed = len([ln for ln in pd.stdout().splitlines() if " pod-a up " in ln])
            rc, out, text = faultlib.verify(VERIFY, pd, pod_map=False)
            check(rc == 0, f"the ledger verifies (exit {rc})")
            check(out.get("windows") == printed,
                  f"every window is in the ledger: {out.get('windows')} of {printed}")
            tot = window_totals(pd.stdout())[("pod-a", "up")][0]
            up = [p["bytes"] for p in out.get("pods", []) if p["pod"] == "pod-a" and p["dir"] == "up"]
            check(up == [tot], f"verified bytes {up} equal the windows podcapd printed ({tot})")
            if check.failures:
                print(text + pd.log()[-3000:])
        finally:
            subprocess.run(["umount", "-l", disk])
    return check.finish()


sys.exit(main())
