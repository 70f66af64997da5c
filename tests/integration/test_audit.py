#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""podcapd under appliance.auditor_keys: only maps an auditor declared run.

At start, a map that is unsigned, expired, not yet valid, signed by another
key or declared for another appliance is refused (exit 2, the reason on
stderr). While running, SIGHUP with each of those is refused: the map in
force stays, the log says why and /metrics counts it by reason (and passes
promtool). A map the auditor signed is put in force, and the log, with a
DECLARE after every START and RELOAD, verifies. A declaration that runs
out stops forwarding (exit 1) before its end.

  test_audit.py PODCAPD PODCAP_KEYGEN PODCAP_VERIFY PODCAP_AUDIT
"""
import datetime
import os
import re
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from daemon import Checks, Podcapd  # noqa: E402
from frames import write_pcap  # noqa: E402

PODCAPD, KEYGEN, VERIFY, AUDIT = sys.argv[1:5]
PROMTOOL = shutil.which("promtool") or "/usr/bin/promtool"

MAP = """\
window: 1s
dpdk:
  lcores: 0-1
  memory: 512MiB
  file_prefix: audit-{pid}
uplinks:
  - name: up0
    pod_port: net_pcap0,rx_pcap={d}/empty.pcap,tx_pcap={d}/to_pod.pcap
    fabric_port: net_pcap1,rx_pcap={d}/empty.pcap,tx_pcap={d}/to_fabric.pcap
pods:
  - id: pod-a
    uplink: up0
    prefixes: [10.0.0.0/26]
    cap: {cap}
"""


def utc(t):
    return datetime.datetime.fromtimestamp(int(t), datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def run(*args):
    return subprocess.run(list(args), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


class Auditor:
    """The auditor's side: keys, and a signed copy of each map in an archive."""

    def __init__(self, d):
        self.d = f"{d}/auditor"
        os.makedirs(self.d)
        for name in ("acme", "eve"):
            run(KEYGEN, "--auditor", name, "--out", f"{self.d}/{name}.key")
        self.n = 0

    def sign(self, text, key="acme", nb=None, na=None):
        """Writes text as a new map in the archive, signs it; returns the map's path."""
        self.n += 1
        path = f"{self.d}/map-{self.n}.yaml"
        with open(path, "w") as f:
            f.write(text)
        now = time.time()
        p = run(AUDIT, "sign", path, "--key", f"{self.d}/{key}.key",
                "--not-before", utc(nb if nb is not None else now - 3600),
                "--not-after", utc(na if na is not None else now + 3600))
        if p.returncode != 0:
            raise RuntimeError(p.stderr)
        return path


def install(pd, archived, sig_from=None):
    """The operator puts an archived map (and a declaration) where podcapd reads it."""
    shutil.copy(archived, pd.config + ".new")
    os.replace(pd.config + ".new", pd.config)
    sig = (sig_from or archived) + ".sig"
    if os.path.exists(pd.config + ".sig"):
        os.unlink(pd.config + ".sig")
    if sig_from is not False and os.path.exists(sig):
        shutil.copy(sig, pd.config + ".sig")


def metrics(pd):
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    with opener.open(f"http://127.0.0.1:{pd.port()}/metrics", timeout=10) as r:
        return r.read()


def refused(body, reason):
    m = re.search(rb'^podcap_reload_refused_total\{reason="%s"\} (\d+)$' % reason.encode(), body, re.M)
    return int(m[1]) if m else None


def promtool_ok(check, d, body):
    if not os.access(PROMTOOL, os.X_OK):
        check(False, "promtool is installed (tools/setup)")
        return
    r = subprocess.run([PROMTOOL, "check", "metrics"], input=body, capture_output=True)
    out = (r.stdout + r.stderr).decode().strip()
    check(r.returncode == 0 and out == "", f"promtool check metrics: exit {r.returncode}, {out or 'no output'}")


def last_window_cap(pd):
    lines = [ln.split() for ln in pd.stdout().splitlines()
             if ln.startswith("window ") and ln.split()[2] == "pod-a"]
    return float(lines[-1][-1]) if lines else None


def ledger_records(ledger):
    """(type, window_start_ns) of each record in the ledger directory, read with its framing."""
    out = []
    with open(f"{ledger}/records", "rb") as f:
        data = f.read()
    off = 0
    while off + 4 <= len(data):
        n = struct.unpack(">I", data[off:off + 4])[0]
        rec = data[off + 4:off + 4 + n]
        idl = rec[2]
        start = struct.unpack(">Q", rec[3 + idl + 8:3 + idl + 16])[0]
        out.append((rec[1], start, rec))
        off += 4 + n + 32   # and its leaf hash
    return out


def start_refusals(check, pd, aud, text):
    now = time.time()
    cases = [
        ("unsigned", aud.sign(text), False, "no declaration: the pod map is not signed by an auditor"),
        ("expired", aud.sign(text, nb=now - 7200, na=now - 3600), None, "expired at"),
        ("not yet valid", aud.sign(text, nb=now + 3600, na=now + 7200), None, "not yet valid"),
        ("signed by another key", aud.sign(text, key="eve"), None, "no signature by key auditor/acme+"),
        ("for another appliance", aud.sign(text.replace("id: audit\n", "id: audit-2\n")), None,
         "declared for appliance audit-2, not audit"),
    ]
    for what, archived, sig, msg in cases:
        if what == "for another appliance":
            install(pd, aud.sign(text), sig_from=archived)
        else:
            install(pd, archived, sig_from=sig)
        p = run(PODCAPD, "--config", pd.config)
        check(p.returncode == 2 and "refusing to run" in p.stderr and msg in p.stderr,
              f"start refused, map {what}: exit {p.returncode}, {p.stderr.strip()!r}")


def reload_refusals(check, pd, aud, text, d):
    now = time.time()
    other = text.replace("cap: 1Gbps", "cap: 200Mbps")
    cases = [
        ("unsigned", aud.sign(other), False, "no declaration"),
        ("expired", aud.sign(other, nb=now - 7200, na=now - 3600), None, "expired at"),
        ("not_yet_valid", aud.sign(other, nb=now + 3600, na=now + 7200), None, "not yet valid"),
        ("bad_signature", aud.sign(other, key="eve"), None, "no signature by key auditor/acme+"),
        ("other_appliance", aud.sign(other), aud.sign(other.replace("id: audit\n", "id: audit-2\n")),
         "declared for appliance audit-2"),
    ]
    for reason, archived, sig, msg in cases:
        before = refused(metrics(pd), reason)
        install(pd, archived, sig_from=sig)
        mark = len(pd.log())
        pd.signal(signal.SIGHUP)
        deadline = time.time() + 10
        while time.time() < deadline and "pod map in force stays" not in pd.log()[mark:]:
            time.sleep(0.05)
        line = [ln for ln in pd.log()[mark:].splitlines() if "refused" in ln]
        check(bool(line) and msg in line[0] and "the pod map in force stays" in line[0],
              f"reload refused, map {reason}: {line[0] if line else pd.log()[mark:]!r}")
        body = metrics(pd)
        check(before is not None and refused(body, reason) == before + 1,
              f"/metrics counts the refusal: reason={reason} {before} -> {refused(body, reason)}")
        time.sleep(1.2)
        check(last_window_cap(pd) == 1000.0, f"the map in force stays after the {reason} map: "
              f"cap {last_window_cap(pd)} Mbit/s")
    promtool_ok(check, d, metrics(pd))


def main():
    check = Checks()
    with tempfile.TemporaryDirectory(prefix="podcap-audit-") as d:
        write_pcap(f"{d}/empty.pcap", [])
        pd = Podcapd(PODCAPD, KEYGEN, d, "audit")
        aud = Auditor(d)
        # the key itself in the map: the map reads the same on the verifier's machine
        with open(f"{aud.d}/acme.key.pub") as f:
            acme = f.read().strip()
        keys = f'  auditor_keys: ["{acme}"]\n'
        text = pd.appliance_yaml() + keys + MAP.format(d=d, pid=os.getpid(), cap="1Gbps")
        start_refusals(check, pd, aud, text)

        first = aud.sign(text)
        install(pd, first)
        if not check(pd.start(), "podcapd starts under the auditor's declaration"):
            print(pd.log())
            return 1
        time.sleep(1.5)
        check(last_window_cap(pd) == 1000.0, "pod-a at 1 Gbit/s in force")
        body = metrics(pd)
        check(re.search(rb"^podcap_declaration_not_after_seconds \d+$", body, re.M) is not None,
              "/metrics shows when the declaration in force ends")
        reload_refusals(check, pd, aud, text, d)

        # dropping the auditor by SIGHUP is refused too
        install(pd, aud.sign(text.replace(keys, "")))
        mark = len(pd.log())
        pd.signal(signal.SIGHUP)
        check(pd.wait_log("appliance.auditor_keys changed", 10) and "auditor_keys changed" in pd.log()[mark:],
              "a reload without auditor_keys is refused")

        second = aud.sign(text.replace("cap: 1Gbps", "cap: 200Mbps"))
        install(pd, second)
        pd.signal(signal.SIGHUP)
        check(pd.wait_log("in force from the next window", 10), "the auditor's second map is accepted")
        deadline = time.time() + 15
        while time.time() < deadline and last_window_cap(pd) != 200.0:
            time.sleep(0.2)
        check(last_window_cap(pd) == 200.0, f"the second map is in force: {last_window_cap(pd)}")
        time.sleep(1.2)
        rc = pd.stop()
        check(rc == 0, f"podcapd exits 0 (got {rc})")

        recs = ledger_records(pd.ledger)
        types = [r[0] for r in recs]
        pairs = [(types[i], types[i + 1] if i + 1 < len(types) else None)
                 for i in range(len(types)) if types[i] in (1, 4)]
        check(pairs and all(b == 9 for _, b in pairs) and types.count(9) == len(pairs) == 2,
              f"a DECLARE (9) right after each START (1) and RELOAD (4): {pairs}")
        check(all(recs[i][1] == recs[i + 1][1] for i in range(len(recs) - 1) if recs[i][0] in (1, 4)),
              "each DECLARE names the window of its START or RELOAD")
        v = run(VERIFY, "--key", pd.key + ".pub", "--ledger", pd.ledger, "--pod-map", first,
                "--pod-map", second)
        if not check(v.returncode == 0, f"podcap-verify with both maps: exit {v.returncode}"):
            print(v.stdout[-3000:], v.stderr)
        # what the auditor published for this appliance: the two maps and their declarations
        pub = f"{d}/published"
        os.makedirs(pub)
        for m in (first, second):
            for suffix in ("", ".sig"):
                shutil.copy(m + suffix, f"{pub}/{os.path.basename(m)}{suffix}")
        v = run(VERIFY, "--key", pd.key + ".pub", "--ledger", pd.ledger, "--pod-maps", pub,
                "--auditor-key", f"{aud.d}/acme.key.pub", "--max-map-age", "2h")
        if not check(v.returncode == 0, f"podcap-verify --pod-maps --auditor-key: exit {v.returncode}"):
            print(v.stdout[-3000:], v.stderr)
        decl = v.stdout.split("declarations (")[1].split("\n\n")[0] if "declarations (" in v.stdout else ""
        check(os.path.basename(first) + ".sig" in decl and os.path.basename(second) + ".sig" in decl,
              f"the report says which signed declaration was in force when:\n{decl}")
        v = run(VERIFY, "--key", pd.key + ".pub", "--ledger", pd.ledger, "--pod-maps", pub,
                "--auditor-key", f"{aud.d}/eve.key.pub")
        check(v.returncode == 1 and "no signature by key auditor/eve+" in v.stdout,
              f"with another auditor's key the log does not verify: exit {v.returncode}")
        # the first map is the one the auditor's seed draws; the second is not drawn
        asg = f"{d}/assignment"
        os.makedirs(asg)
        with open(f"{asg}/pods.txt", "w") as f:
            f.write("pod-a - 10.0.0.0/26\n")
        with open(f"{asg}/uplinks.txt", "w") as f:
            f.write(f"audit up0 net_pcap0,rx_pcap={d}/empty.pcap,tx_pcap={d}/to_pod.pcap "
                    f"net_pcap1,rx_pcap={d}/empty.pcap,tx_pcap={d}/to_fabric.pcap\n")
        with open(f"{asg}/template.yaml", "w") as f:
            f.write(pd.appliance_yaml() + keys + "window: 1s\n")
        with open(f"{asg}/week1.seed", "w") as f:
            f.write("00" * 32 + "\n")
        v = run(VERIFY, "--key", pd.key + ".pub", "--ledger", pd.ledger, "--pod-maps", pub,
                "--auditor-key", f"{aud.d}/acme.key.pub", "--assignment", asg)
        reload_rec = [i for i, r in enumerate(recs) if r[0] == 4][0]
        check(v.returncode == 1 and f"record {reload_rec}" in v.stdout and
              "which none of the revealed seeds produces (--assignment)" in v.stdout,
              f"--assignment: the reload to a map no seed draws fails at record {reload_rec}")
        check(re.search(r"record 1 .*map-\d+\.yaml\.sig  assigned by .*/week1\.seed", v.stdout) is not None,
              "the report says the first map in force is the one week1.seed draws")
        os.unlink(f"{pub}/{os.path.basename(second)}.sig")
        v = run(VERIFY, "--key", pd.key + ".pub", "--ledger", pd.ledger, "--pod-maps", pub,
                "--auditor-key", f"{aud.d}/acme.key.pub")
        check(v.returncode == 1 and "not among the signed declarations given" in v.stdout,
              f"without the second declaration the log does not verify: exit {v.returncode}")

        # a declaration that runs out: forwarding stops before its end, exit 1
        end = int(time.time()) + 4
        install(pd, aud.sign(text, nb=int(time.time()) - 60, na=end))
        if check(pd.start(), "podcapd starts under a declaration ending in 4 s"):
            try:
                rc = pd.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                rc = None
            check(rc == 1, f"at the declaration's end podcapd stops forwarding, exit 1 (got {rc})")
            check("auditor's declaration of the pod map in force expires at " + utc(end) in pd.log(),
                  "the log says the declaration expired")
            wins = [r for r in ledger_records(pd.ledger) if r[0] == 2]
            check(bool(wins) and wins[-1][1] < end * 10**9,
                  "the last window starts before the declaration's end")
            check(ledger_records(pd.ledger)[-1][0] == 5, "the last record is a STOP")
            p = run(PODCAPD, "--config", pd.config)
            check(p.returncode == 2 and "expire" in p.stderr, "and it does not start again under it")
        if check.failures:
            print(pd.log())
    return check.finish()


sys.exit(main())
