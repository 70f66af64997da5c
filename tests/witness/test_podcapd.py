#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""podcapd with two podcap-witness on loopback (appliance.witnesses).

podcapd closes a window a second between DPDK pcap ports; each checkpoint
goes to two witnesses. Checks, each failing if the feature breaks:
  - the served checkpoint carries a valid cosignature of each witness
    (checked with the witness's key), whose time is the witness's clock,
    and podcap-verify --witness-quorum 2 passes the log it covers;
  - Go's golang.org/x/mod/sumdb/tlog reads the log as C2SP tlog-tiles and
    proves every record from the tiles to the checkpoint's root;
  - /metrics passes `promtool check metrics` and counts each witness's
    results and the size it last cosigned, which is the served size;
  - one witness killed -9: windows go on being recorded, one a second, the
    other witness goes on cosigning, and /metrics counts the failures; once
    restarted on its state it cosigns again and its state only grew;
  - the other witness stopped (SIGSTOP: it accepts connections and never
    answers): windows still close, one a second; once it goes on (SIGCONT)
    both cosign the served checkpoint again;
  - at SIGTERM podcapd submits its last checkpoint (the last WINDOW and
    the STOP) before it exits: the live witness's state holds the final
    tree size; and the hung one does not hold the stop (exit 0).
"""
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "integration"))
from daemon import Checks, Podcapd, ledger_entries  # noqa: E402
from frames import write_pcap  # noqa: E402
from test_witness import Witness  # noqa: E402

PODCAPD = os.environ["PODCAPD"]
KEYGEN = os.environ["PODCAP_KEYGEN"]
SUBMIT = os.environ["WITNESS_SUBMIT"]
WITNESS = os.environ["PODCAP_WITNESS"]
VERIFY = os.environ["PODCAP_VERIFY"]
PROMTOOL = shutil.which("promtool") or "/usr/bin/promtool"

MAP = """\
{appliance}  witnesses:
    - url: {u1}
      key: {k1}
    - url: {u2}
      key: {k2}
window: 1s
dpdk:
  lcores: 0-1
  memory: 512MiB
  file_prefix: witness-{pid}
uplinks:
  - name: up0
    pod_port: net_pcap0,rx_pcap={d}/empty.pcap,tx_pcap={d}/to_pod.pcap
    fabric_port: net_pcap1,rx_pcap={d}/empty.pcap,tx_pcap={d}/to_fabric.pcap
pods:
  - id: pod-a
    uplink: up0
"""


def get(port, path):
    """The body, or "" on 404 (no checkpoint yet)."""
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=30) as r:
            return r.read().decode()
    except urllib.error.HTTPError as e:
        if e.code == 404:
            return ""
        raise


def cosigned_by(d, vkey, note):
    """The timestamp of vkey's valid cosignature in note, or None."""
    path = os.path.join(d, "served")
    with open(path, "w") as f:
        f.write(note)
    r = subprocess.run([SUBMIT, "--check", vkey, path], capture_output=True, text=True, timeout=30)
    return int(r.stdout) if r.returncode == 0 else None


def metric(text, name, **labels):
    want = ",".join(f'{k}="{v}"' for k, v in labels.items())
    m = re.search(rf"^{name}{{{re.escape(want)}}} (\S+)$" if labels else rf"^{name} (\S+)$", text, re.M)
    return float(m[1]) if m else None


def size_of(note):
    return int(note.split("\n")[1]) if note else 0


def witness_size(w):
    """The size a witness's state holds for the log (its only one)."""
    d = os.path.join(w.d, "state")
    name = [f for f in os.listdir(d) if f.startswith("log-")][0]
    return int(open(os.path.join(d, name)).read().split("\n")[2])


def wait_until(pred, timeout):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        v = pred()
        if v:
            return v
        time.sleep(0.2)
    return None


def tiles_interop(check, d, port):
    """Go's golang.org/x/mod/sumdb/tlog reads the log as C2SP tlog-tiles
    (tests/interop/tiles_client.go), every tile checked against the
    checkpoint's root and every record proven; a path outside the format,
    or a tile past the tree, is 404."""
    go = shutil.which("go")
    if go is None or not os.path.isdir("/usr/share/gocode/src/golang.org/x/mod/sumdb"):
        print("skip  tlog-tiles interop: no Go or golang-golang-x-mod-dev (tools/setup installs them)")
        return
    env = dict(os.environ, GOPATH="/usr/share/gocode", GO111MODULE="off", GOFLAGS="",
               GOCACHE=f"{d}/gocache")
    r = subprocess.run([go, "run", os.path.join(HERE, "..", "interop", "tiles_client.go"),
                        f"http://127.0.0.1:{port}"], capture_output=True, text=True, env=env, timeout=300)
    check(r.returncode == 0 and "each proven from the tiles" in r.stdout,
          f"Go's sumdb/tlog reads the served tiles and proves every record ({r.stdout.strip()}{r.stderr.strip()})")
    for bad in ("/tile/0/x000/001", "/tile/0/1", "/tile/9/000", "/tile/0/999", "/tile/entries/000.p/0"):
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}{bad}", timeout=30)
            code = 200
        except urllib.error.HTTPError as e:
            code = e.code
        check(code == 404, f"GET {bad}: 404 ({code})")


def main():
    check = Checks()
    with tempfile.TemporaryDirectory(prefix="podcap-wd-") as d:
        write_pcap(f"{d}/empty.pcap", [])
        p = Podcapd(PODCAPD, KEYGEN, d, "witnessed-1")
        ws, vkeys = [], []
        for i in (1, 2):
            key = f"{d}/w{i}.key"
            subprocess.run([KEYGEN, "--out", key, "--name", f"witness.example/w{i}"], check=True,
                           stdout=subprocess.DEVNULL)
            r = subprocess.run([WITNESS, "--key", key, "--print-key"], capture_output=True, text=True, check=True)
            vkeys.append(f"{d}/w{i}.vkey")
            with open(vkeys[-1], "w") as f:
                f.write(r.stdout)
            wd = f"{d}/w{i}"
            os.mkdir(wd)
            ws.append(Witness(wd, key, f"{wd}/state", [p.key + ".pub"]).start())
        k = [open(v).read().strip() for v in vkeys]
        p.write_config(MAP.format(appliance=p.appliance_yaml(), u1=ws[0].url, u2=ws[1].url,
                                  k1=k[0], k2=k[1], d=d, pid=os.getpid()))
        try:
            if not check(p.start(), "podcapd starts with two witnesses"):
                print(p.log())
                return check.finish()
            port = p.port()

            def both():
                note = get(port, "/v1/checkpoint")
                t = [cosigned_by(d, v, note) for v in vkeys]
                return (note, t) if all(t) and size_of(note) >= 3 else None

            got = wait_until(both, 60)
            check(got is not None, "the served checkpoint carries a valid cosignature of each witness")
            if got:
                note, t = got
                now = time.time()
                check(all(now - 120 < x <= now + 1 for x in t), f"their times are the witnesses' clocks ({t})")
                cp = f"{d}/cosigned"
                with open(cp, "w") as f:
                    f.write(note)
                r = subprocess.run([VERIFY, "--key", p.key + ".pub", "--url", f"http://127.0.0.1:{port}",
                                    "--checkpoint", cp, "--witness", vkeys[0], "--witness", vkeys[1],
                                    "--witness-quorum", "2"], capture_output=True, text=True, timeout=120)
                check(r.returncode == 0 and "witnesses: 2 of 2 cosigned the checkpoint, 2 required" in r.stdout,
                      f"podcap-verify --witness-quorum 2 passes the honest log ({r.returncode}: {r.stdout[-500:]}{r.stderr})")
            tiles_interop(check, d, port)
            m = get(port, "/metrics")
            r = subprocess.run([PROMTOOL, "check", "metrics"], input=m, capture_output=True, text=True)
            check(r.returncode == 0 and r.stdout == "" and r.stderr == "",
                  f"promtool check metrics: clean ({r.stdout}{r.stderr})")
            cs = metric(m, "podcap_witness_submissions_total", witness="witness.example/w1", result="cosigned")
            check(cs is not None and cs >= 1, f"/metrics counts w1's cosigned submissions ({cs})")
            size1 = metric(m, "podcap_witness_cosigned_size", witness="witness.example/w1")
            check(size1 is not None and size1 >= 3, f"/metrics: the size w1 cosigned ({size1})")

            # w1 killed -9: windows go on, w2 goes on cosigning, failures are counted.
            ws[0].kill9()
            before = size_of(get(port, "/v1/checkpoint"))
            t0 = time.monotonic()
            time.sleep(6)
            note = get(port, "/v1/checkpoint")
            grew = size_of(note) - before
            check(grew >= 3, f"w1 down: {grew} records in {time.monotonic() - t0:.1f} s")
            ok2 = wait_until(lambda: cosigned_by(d, vkeys[1], get(port, "/v1/checkpoint")), 30)
            check(ok2 is not None, "w2 goes on cosigning the served checkpoint")
            m = get(port, "/metrics")
            down = metric(m, "podcap_witness_submissions_total", witness="witness.example/w1", result="down")
            check(down is not None and down >= 1, f"/metrics counts w1 down ({down})")
            held = witness_size(ws[0])
            ws[0].start()
            check(f"at size {held}" in ws[0].log(), f"w1 restarts on its state, at size {held}")
            back = wait_until(lambda: cosigned_by(d, vkeys[0], get(port, "/v1/checkpoint")), 60)
            check(back is not None, "w1 cosigns the served checkpoint again after the restart")
            held2 = witness_size(ws[0])
            check(held2 > held, f"and its state grew ({held} -> {held2})")

            # w2 hangs: it accepts connections and never answers.
            ws[1].proc.send_signal(signal.SIGSTOP)
            before = size_of(get(port, "/v1/checkpoint"))
            t0 = time.monotonic()
            time.sleep(8)
            grew = size_of(get(port, "/v1/checkpoint")) - before
            check(grew >= 4, f"w2 hung: {grew} records in {time.monotonic() - t0:.1f} s")
            ws[1].proc.send_signal(signal.SIGCONT)
            again = wait_until(both, 90)
            check(again is not None, "w2 on again: both cosign the served checkpoint")

            ws[1].proc.send_signal(signal.SIGSTOP)
            time.sleep(1.5)
            t0 = time.monotonic()
            rc = p.stop(timeout=30)
            took = time.monotonic() - t0
            # The bound is 3 s on top of what a stop takes without witnesses
            # (about 2 s on a quiet machine). Without it the hung witness
            # would hold the stop until p.stop's 30 s kill; 20 s leaves a
            # loaded machine room and still fails a stop that waits on w2.
            check(rc == 0 and took < 20, f"podcapd stops with exit 0 while w2 hangs, "
                  f"not waiting on it ({rc}, {took:.1f} s)")
            recs = ledger_entries(p.ledger)
            final = size_of(open(f"{p.ledger}/checkpoint").read())
            check(recs and recs[-1][1] == 5 and final == len(recs),
                  f"the last checkpoint covers the STOP ({final} of {len(recs)} records)")
            got = witness_size(ws[0])
            check(got == final, f"w1 cosigned the last checkpoint before podcapd exited "
                  f"(its state holds size {got}, the ledger {final})")
            ws[1].proc.send_signal(signal.SIGCONT)
        finally:
            p.stop()
            for w in ws:
                try:
                    w.proc.send_signal(signal.SIGCONT)
                except Exception:
                    pass
                w.stop()
        if check.failures:
            print(p.log()[-4000:])
    return check.finish()


if __name__ == "__main__":
    sys.exit(main())
