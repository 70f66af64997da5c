#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""kill -9 of podcapd, and of its signer, at random moments under traffic.

Traffic loops forever through podcapd (net_pcap infinite_rx, 1 s windows).
Twenty times each, in a seeded random order, the test pulls the published
log over HTTP as a verifier would, then kills either podcapd or its signer
(the forked key process) with SIGKILL at a random moment, and restarts
podcapd on the same ledger. After each kill:

- a signer's death stops podcapd by itself, with exit status 1 and a
  message naming the signer (docs/design.md): it neither forwards unsigned
  nor hangs, and its last window and a STOP are in the ledger;
- podcap-verify --state, with the state carried from run to run, accepts the
  ledger: it only ever grew, and the cap held;
- every record pulled before the kill is still in the ledger, byte for byte.

Last, a signer that stops answering (SIGSTOP) stops podcapd too, within its
10 s limit, instead of hanging it.

PODCAP_TEST_SEED repeats a run (the seed is printed first); PODCAP_KILLS
changes the number of kills of each kind (20).
"""
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
import urllib.error

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import faultlib  # noqa: E402
from faultlib import Checks, Podcapd  # noqa: E402

faultlib.enter("a pid namespace that takes every podcapd with it")
PODCAPD, KEYGEN, VERIFY = sys.argv[1:4]
KILLS = int(os.environ.get("PODCAP_KILLS", "20"))



def signer_of(pid):
    """The pid of podcapd's signer: its child named podcap-signer."""
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        comm = stat[stat.index("(") + 1:stat.rindex(")")]
        ppid = int(stat[stat.rindex(")") + 2:].split()[1])
        if ppid == pid and comm == "podcap-signer":
            return int(entry)
    return None


def main():
    check = Checks()
    seed = int(os.environ.get("PODCAP_TEST_SEED", time.time()))
    rnd = random.Random(seed)
    print(f"seed {seed} (PODCAP_TEST_SEED={seed} repeats this run)", flush=True)
    kinds = ["podcapd"] * KILLS + ["signer"] * KILLS
    rnd.shuffle(kinds)
    t0 = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="podcap-kill-") as d:
        faultlib.traffic(d)
        pd = Podcapd(PODCAPD, KEYGEN, d, "kill")
        pd.write_config(pd.appliance_yaml() + faultlib.pod_map(d, "kill"))
        state = f"{d}/verifier.state"
        pulled = []           # every record any pull saw, by index
        for i, kind in enumerate(kinds):
            if not check(pd.start(), f"run {i}: podcapd starts on the ledger the last kill left"):
                print(pd.log()[-3000:])
                return 1
            time.sleep(rnd.uniform(0.3, 1.8))
            try:
                _, recs = faultlib.pull(pd.port())
            except urllib.error.HTTPError:
                recs = []     # nothing published yet in this ledger
            for k, r in enumerate(recs):
                if k >= len(pulled):
                    pulled.append(r)
                elif pulled[k] != r:
                    check(False, f"run {i}: record {k} served now differs from what was pulled before")
            time.sleep(rnd.uniform(0, 0.6))
            if kind == "podcapd":
                pd.kill()
                what = "podcapd killed"
            else:
                spid = signer_of(pd.proc.pid)
                if not check(spid is not None, f"run {i}: podcapd's signer process is found"):
                    pd.kill()
                    continue
                os.kill(spid, 9)
                try:
                    rc = pd.proc.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    rc = None
                check(rc == 1, f"run {i}: its signer killed, podcapd stops by itself with status 1 "
                      f"(status {rc})")
                check("the signer process is lost (it was killed by signal 9)" in pd.log()[pd.err_mark:],
                      f"run {i}: and says that the signer was killed")
                if rc is None:
                    pd.kill()
                what = "signer killed"
            rc, out, text = faultlib.verify(VERIFY, pd, state)
            check(rc == 0, f"run {i}: {what} with {len(pulled)} records pulled; podcap-verify --state "
                  f"accepts the ledger (exit {rc})")
            if rc != 0:
                print(text)
            now = faultlib.ledger_records(pd.ledger)
            check(now[:len(pulled)] == pulled and out.get("tree_size", -1) >= len(pulled),
                  f"run {i}: all {len(pulled)} records pulled are still there byte for byte "
                  f"(tree size {out.get('tree_size')})")
        check(pd.start(), "podcapd starts after the last kill")
        time.sleep(2.5)
        spid = signer_of(pd.proc.pid)
        os.kill(spid, signal.SIGSTOP)
        try:
            rc = pd.proc.wait(timeout=40)
        except subprocess.TimeoutExpired:
            rc = None
            pd.kill()
        check(rc == 1, f"a signer that stops answering stops podcapd with status 1 (status {rc})")
        check("the signer process is lost (it stopped answering)" in pd.log()[pd.err_mark:],
              "and podcapd says so")
        check(not os.path.exists(f"/proc/{spid}"), "the silent signer is gone too")
        kinds.append("signer")
        check(pd.start(), "podcapd starts again")
        time.sleep(2.5)
        check(pd.stop() == 0, "and stops cleanly")
        rc, out, text = faultlib.verify(VERIFY, pd, state)
        check(rc == 0, f"the final ledger verifies (exit {rc})")
        if rc != 0:
            print(text)
        restarts = [e.get("clean") for e in out.get("events", []) if e.get("event") == "restart"]
        check(restarts == [k == "signer" for k in kinds],
              "every restart is on record, after a STOP exactly when the signer had died "
              f"({sum(1 for c in restarts if c)} clean of {len(restarts)})")
        check(out.get("windows", 0) >= len(kinds), f"{out.get('windows')} windows on record")
        if check.failures:
            print(pd.log()[-4000:])
    print(f"{len(kinds)} kills in {time.monotonic() - t0:.0f} s")
    return check.finish()


sys.exit(main())
