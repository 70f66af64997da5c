#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The wall clock stepped forward and back by minutes under traffic.

CLOCK_REALTIME cannot be stepped on a shared machine (and time namespaces
do not cover it), so podcapd runs under libfaketime (LD_PRELOAD): its wall
clock is the real one plus an offset read from a file at every call, while
CLOCK_MONOTONIC is left alone (FAKETIME_DONT_FAKE_MONOTONIC=1). With traffic
looping at the cap, the offset goes +0 -> +10 min -> back to +0 (10 min
back) -> +2 min. Then:

- windows keep closing once per second of real time throughout (the step
  back does not stop them for minutes), each record covering one window:
  the step forward is not 600 windows of allowance;
- window labels only ever increase, and each step is in the ledger as a
  CLOCK record that podcap-verify reports, with its size;
- the ledger verifies, envelope included (computed on real time), at the
  appliance's now: a verifier on its own clock refuses the labels that ran ahead.
"""
import datetime
import os
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import faultlib  # noqa: E402
from faultlib import Checks, Podcapd  # noqa: E402

faultlib.enter("a private mount namespace for libfaketime's shared memory")
PODCAPD, KEYGEN, VERIFY = sys.argv[1:4]
FAKETIME_LIBS = ["/usr/lib/x86_64-linux-gnu/faketime/libfaketimeMT.so.1",
                 "/usr/lib/faketime/libfaketimeMT.so.1"]
CAP = 20_000_000
# offset of the wall clock in seconds, and how long to hold it
STEPS = [(0, 3), (600, 4), (0, 4), (120, 3)]



def set_offset(path, seconds):
    with open(path + ".tmp", "w") as f:
        f.write(f"{seconds:+d}\n")
    os.replace(path + ".tmp", path)


def main():
    check = Checks()
    lib = next((p for p in FAKETIME_LIBS if os.path.exists(p)), None)
    if not check(lib is not None, "libfaketime is installed (tools/setup installs it)"):
        return check.finish()
    with tempfile.TemporaryDirectory(prefix="podcap-clock-") as d:
        # libfaketime keeps state in /dev/shm: a private one goes away with the test
        subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "podcap-shm", "/dev/shm"], check=True)
        faultlib.traffic(d)
        pd = Podcapd(PODCAPD, KEYGEN, d, "clock")
        pd.write_config(pd.appliance_yaml() + faultlib.pod_map(d, "clock"))
        offset = f"{d}/faketime"
        set_offset(offset, 0)
        saved = dict(os.environ)
        os.environ.update(LD_PRELOAD=lib, FAKETIME_TIMESTAMP_FILE=offset, FAKETIME_NO_CACHE="1",
                          FAKETIME_DONT_FAKE_MONOTONIC="1")
        try:
            started = pd.start()
        finally:
            os.environ.clear()
            os.environ.update(saved)
        if not check(started, "podcapd starts under libfaketime"):
            print(pd.log()[-3000:])
            return 1
        t0 = time.monotonic()
        closed = []           # windows printed while each offset held
        for sec, hold in STEPS:
            set_offset(offset, sec)
            mark = len(pd.stdout().splitlines())
            time.sleep(hold)
            closed.append(len(faultlib.rates(pd.stdout().splitlines()[mark:])))
        check(pd.stop() == 0, "podcapd stops cleanly")
        real = time.monotonic() - t0
        check(all(n >= 2 for n in closed[1:]),
              f"windows kept closing after every step, forward and back: {closed} while each offset held")
        rates = faultlib.rates(pd.stdout().splitlines())
        check(rates and max(rates) <= CAP / 1e6 * 1.06 and max(rates) >= CAP / 1e6 * 0.9,
              f"the cap held at 20 Mbit/s throughout: {rates}")

        recs = faultlib.ledger_records(pd.ledger)
        labels, counts, ends = [], [], 0
        monotonic = True
        for r in recs:
            kind = faultlib.record_type(r)
            n = r[2]
            start, length, count = (int.from_bytes(r[3 + n + 8 + 8 * k:3 + n + 16 + 8 * k], "big")
                                    for k in range(3))
            if kind in ("window", "gap"):
                monotonic &= start >= ends
                ends = start + count * length
                if kind == "window":
                    labels.append(start)
                    counts.append(count)
            else:
                monotonic &= start >= ends
        check(monotonic and labels == sorted(set(labels)),
              "window labels only increase: none earlier than or overlapping one already logged")
        check(counts and set(counts) == {1},
              f"every window record covers one window, none the minutes the clock jumped: {sorted(set(counts))}")
        check(len(labels) <= real + 2,
              f"{len(labels)} windows for {real:.1f} s of real time: labels skipped, no windows invented")
        span = (labels[-1] - labels[0]) / 1e9 if labels else 0
        check(span >= 600, f"the labels follow the wall clock forward ({span:.0f} s from first to last)")

        # The labels ran 600 s ahead of real time: a verifier on its own clock
        # refuses windows that end in its future...
        rc, out, text = faultlib.verify(VERIFY, pd)
        check(rc == 1 and out.get("failure_checks", {}).get("time", 0) > 0,
              f"a verifier on real time refuses the labels that ran ahead of it (exit {rc}, "
              f"{out.get('result', '')[:120]})")
        # ...and one that takes the appliance's clock as now verifies the rest
        ahead = datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(seconds=900)
        rc, out, text = faultlib.verify(VERIFY, pd, extra=["--now", ahead.strftime("%Y-%m-%dT%H:%M:%SZ")])
        check(rc == 0, f"the ledger verifies at the appliance's now, envelope on real time (exit {rc})")
        steps = [e for e in out.get("events", []) if e.get("event") == "clock"]
        got = [round(e["step_ns"] / 1e9) for e in steps]
        want = [b - a for (a, _), (b, _) in zip(STEPS, STEPS[1:])]
        check(len(got) == len(want) and all(abs(g - w) <= 1 for g, w in zip(got, want)),
              f"each step is recorded and reported with its size: {got} s, stepped {want} s")
        check(all(e.get("elapsed_ns") == 0 for e in steps), "and no real time is claimed for a jump")
        if check.failures:
            print(text + pd.log()[-3000:])
    return check.finish()


sys.exit(main())
