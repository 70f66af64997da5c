#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The ledger's file system turns read-only under traffic.

A tmpfs cannot be remounted read-only while podcapd holds its ledger files
open for writing (the kernel answers EBUSY), so the test does what a failing
disk does: the ledger lives on an ext4 image (loop device, private mount
namespace) mounted errors=remount-ro, and an ext4 error is triggered
(/sys/fs/ext4/<dev>/trigger_fs_error): the kernel makes the file system
read-only under podcapd's feet, and every write fails with EROFS. Then:

- the cap keeps holding at full rate, window after window, and /metrics
  shows the failed appends and the records waiting in memory;
- stopped, podcapd says how many records never reached the ledger and exits
  with status 1 (nothing is lost silently);
- the operator repairs the file system (umount, e2fsck, mount) and starts
  podcapd again: logging resumes, the windows that were only in memory are
  a GAP record, and the ledger verifies with every record published before
  the fault intact, byte for byte.
"""
import os
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import faultlib  # noqa: E402
from faultlib import Checks, Podcapd, metrics  # noqa: E402

faultlib.enter("a private mount namespace with an ext4 image on a loop device")
PODCAPD, KEYGEN, VERIFY = sys.argv[1:4]
CAP = 20_000_000



def mount(image, disk):
    subprocess.run(["mount", "-o", "loop,errors=remount-ro", image, disk], check=True)
    dev = subprocess.run(["findmnt", "-no", "SOURCE", disk], capture_output=True, text=True).stdout
    return os.path.basename(dev.strip())


def writable(path):
    try:
        fd = os.open(f"{path}/probe", os.O_WRONLY | os.O_CREAT, 0o600)
    except OSError:
        return False
    os.close(fd)
    os.unlink(f"{path}/probe")
    return True


def main():
    check = Checks()
    with tempfile.TemporaryDirectory(prefix="podcap-readonly-") as d:
        image, disk = f"{d}/ext4.img", f"{d}/disk"
        os.mkdir(disk)
        subprocess.run(["truncate", "-s", "16M", image], check=True)
        subprocess.run(["mkfs.ext4", "-q", "-F", "-O", "^has_journal", image], check=True)
        dev = mount(image, disk)
        try:
            faultlib.traffic(d)
            pd = Podcapd(PODCAPD, KEYGEN, d, "readonly")
            pd.ledger = f"{disk}/ledger"
            pd.write_config(pd.appliance_yaml() + faultlib.pod_map(d, "readonly"))
            if not check(pd.start(), "podcapd starts with its ledger on an ext4 image"):
                print(pd.log())
                return 1
            port = pd.port()
            time.sleep(2.5)
            _, before = faultlib.pull(port)

            with open(f"/sys/fs/ext4/{dev}/trigger_fs_error", "w") as f:
                f.write("podcap fault test")
            check(not writable(disk), "the file system is read-only now (EROFS)")
            ro_from = len(pd.stdout().splitlines())
            time.sleep(4)
            m = metrics(port)
            rates = faultlib.rates(pd.stdout().splitlines()[ro_from:])
            check(len(rates) >= 3, f"windows kept closing on a read-only ledger ({len(rates)})")
            check(rates and all(r <= CAP / 1e6 * 1.06 for r in rates) and min(rates[1:] or [0]) >= CAP / 1e6 * 0.9,
                  f"the cap held at full rate, 20 Mbit/s: {rates}")
            check(m.get("podcap_ledger_append_errors_total", 0) > 0,
                  f"/metrics counts the failed appends ({m.get('podcap_ledger_append_errors_total')})")
            check(m.get("podcap_ledger_queued_records", 0) >= 3,
                  f"/metrics shows the records held in memory ({m.get('podcap_ledger_queued_records')})")
            rc = pd.stop(timeout=60)
            check(rc == 1, f"stopped, podcapd exits with status 1: records were not logged (status {rc})")
            check("records could not be written to the ledger" in pd.log()[pd.err_mark:],
                  "and says how many records never reached the ledger")

            # the operator's repair: unmount, check, mount again
            subprocess.run(["umount", disk], check=True)
            subprocess.run(["e2fsck", "-f", "-y", image], capture_output=True)
            mount(image, disk)
            check(writable(disk), "the file system is writable again")
            check(pd.start(), "podcapd starts again on the repaired ledger")
            time.sleep(2.5)
            check(pd.stop() == 0, "and stops cleanly")

            rc, out, text = faultlib.verify(VERIFY, pd)
            check(rc == 0, f"the ledger verifies (exit {rc})")
            now = faultlib.ledger_records(pd.ledger)
            check(now[:len(before)] == before,
                  f"the {len(before)} records published before the fault are intact byte for byte")
            gaps = [e for e in out.get("events", []) if e.get("event") == "gap"]
            check(len(gaps) == 1 and gaps[0]["windows"] >= len(rates),
                  f"the windows held only in memory are one GAP record: {gaps} "
                  f"(at least {len(rates)} windows)")
            restarts = [e for e in out.get("events", []) if e.get("event") == "restart"]
            check(len(restarts) == 1 and not restarts[0]["clean"],
                  "the restart is on record, with no STOP before it")
            after = [faultlib.record_type(r) for r in now[len(before):]]
            check("window" in after[after.index("start"):] if "start" in after else False,
                  f"logging resumed after the restart: {after}")
            if check.failures:
                print(text + pd.log()[-3000:])
        finally:
            subprocess.run(["umount", "-l", disk], capture_output=True)
    return check.finish()


sys.exit(main())
