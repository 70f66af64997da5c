#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""podcap-verify --fleet holds each appliance to the evidence its entry asks for.

Three generated logs (podcap-ledger-gen), each honest. With no trust keys
the fleet verifies. Then each appliance's entry asks for evidence its log
does not carry, and only that appliance fails, for that reason, in its own
report: app-1 a witness (podcap-witness's key) and a quorum passed to the
whole fleet, app-2 a TPM policy (an AK no quote of the log was made with),
app-3 an auditor's declarations and key (no DECLARE in the log) and a tap
(a shaper's log given as a tap: not a tap). A fleet entry's trust paths
are taken from the fleet file's directory, as its other paths. A refused
tap (not a tap's log, or not one its key signed) makes the report's last
line and its JSON say so, as the exit status does. A bad fleet-wide value
is the fleet's usage error: exit 2, said once, no appliance verified.
"""
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from daemon import Checks  # noqa: E402

VERIFY, KEYGEN, LEDGER_GEN, WITNESS = sys.argv[1:5]
NOW = "2024-01-02T00:00:00Z"

MAP = """\
appliance:
  id: {id}
window: 1s
defaults:
  cap: 1Gbps
  burst: 1s
uplinks:
  - name: up0
    pod_port: 0000:3b:00.0
    fabric_port: 0000:3b:00.1
pods:
  - id: pod-a
    uplink: up0
"""


def ak_pem():
    """A P-256 public key no TPM of these logs holds (python3-cryptography)."""
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.hazmat.primitives import serialization
    k = ec.generate_private_key(ec.SECP256R1()).public_key()
    return k.public_bytes(serialization.Encoding.PEM,
                          serialization.PublicFormat.SubjectPublicKeyInfo).decode()


def fleet(d, name, extra):
    """A fleet file of app-1..3; extra[i] adds lines to app-i's entry."""
    lines = ["jobs: 2", "appliances:"]
    for i in (1, 2, 3):
        lines += [f"  - name: app-{i}", f"    ledger: log-{i}", f"    key: keys/app-{i}.pub",
                  f"    pod_maps: [app-{i}.yaml]"]
        lines += ["    " + x for x in extra.get(i, [])]
    path = f"{d}/{name}.yaml"
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    return path


def run_fleet(path, *opts):
    r = subprocess.run([VERIFY, "--fleet", path, "--now", NOW, "--json", *opts],
                       capture_output=True, text=True, timeout=120)
    try:
        doc = json.loads(r.stdout)
    except ValueError:
        doc = {}
    return r, {a["name"]: a for a in doc.get("appliances", [])}


def failures(app):
    """The record checks' failures and the witness section's, then what it said on stderr
    (warnings left out)."""
    rep = app.get("report") or {}
    rep = rep.get("shaper", rep)  # with taps, the appliance's own report is "shaper"
    out = [f.get("check", "") + ": " + f.get("message", "") for f in rep.get("failures", [])]
    out += ["witness: " + m for m in (rep.get("witnesses") or {}).get("failures", [])]
    return out + [ln for ln in app.get("stderr", "").splitlines() if "warning" not in ln]


def main():
    check = Checks()
    with tempfile.TemporaryDirectory(prefix="podcap-fleet-") as d:
        os.mkdir(f"{d}/keys", 0o700)
        for i in (1, 2, 3):
            with open(f"{d}/app-{i}.yaml", "w") as f:
                f.write(MAP.format(id=f"app-{i}"))
            subprocess.run([KEYGEN, "--out", f"{d}/keys/app-{i}", "--name", f"podcap/app-{i}"],
                           check=True, stdout=subprocess.DEVNULL)
            subprocess.run([LEDGER_GEN, "--key", f"{d}/keys/app-{i}", "--pod-map",
                            f"{d}/app-{i}.yaml", "--out", f"{d}/log-{i}"], check=True,
                           stdout=subprocess.DEVNULL)
        subprocess.run([KEYGEN, "--out", f"{d}/keys/witness", "--name", "witness.example"],
                       check=True, stdout=subprocess.DEVNULL)
        vkey = subprocess.run([WITNESS, "--key", f"{d}/keys/witness", "--print-key"], check=True,
                              capture_output=True, text=True).stdout.strip()
        with open(f"{d}/keys/witness.vkey", "w") as f:
            f.write(vkey + "\n")
        subprocess.run([KEYGEN, "--out", f"{d}/keys/auditor", "--auditor", "auditor.example"],
                       check=True, stdout=subprocess.DEVNULL)
        os.mkdir(f"{d}/signed")
        with open(f"{d}/signed/app-3.yaml", "w") as f:
            f.write(MAP.format(id="app-3"))
        with open(f"{d}/policy.yaml", "w") as f:
            f.write("attestation-policy: 1\nak-pem: |\n" +
                    "".join("  " + ln + "\n" for ln in ak_pem().splitlines()) +
                    "max-windows: 20\n")

        # a bad fleet-wide value is the fleet's usage error, said once: not every
        # appliance's error in a report that exits 1
        for opt in (["--max-gap", "bogus"], ["--witness-quorum", "0"], ["--build-id", "00"]):
            r = subprocess.run([VERIFY, "--fleet", fleet(d, "plain", {}), "--now", NOW, *opt],
                               capture_output=True, text=True, timeout=120)
            first = (r.stderr.splitlines() or [""])[0]
            check(r.returncode == 2 and r.stdout == "" and first.startswith(f"podcap-verify: {opt[0]}")
                  and "appliance" not in r.stderr,
                  f"--fleet {' '.join(opt)}: exit 2 and the reason once (exit {r.returncode}: "
                  f"{first[:120]})")

        r, apps = run_fleet(fleet(d, "plain", {}))
        why = "; ".join(f"{n}: {a.get('status')}: {a.get('stderr', '')[-200:]}"
                        for n, a in apps.items() if a.get("status") != "verified")
        check(r.returncode == 0 and all(a.get("status") == "verified" for a in apps.values())
              and len(apps) == 3,
              f"the fleet without trust keys verifies (exit {r.returncode}: {r.stderr.strip()} "
              f"{why})")

        path = fleet(d, "trust", {
            1: ["witnesses: [keys/witness.vkey]"],
            2: ["attest: policy.yaml"],
            3: ["declarations: signed", "auditor_keys: [keys/auditor.pub]",
                "taps:", "  - {ledger: log-1, key: keys/app-1.pub}"],
        })
        r, apps = run_fleet(path, "--witness-quorum", "1")
        check(r.returncode == 1, f"a fleet whose evidence is missing exits 1 (exit {r.returncode})")
        for i, want in ((1, "witness"), (2, "attest"), (3, "declaration")):
            a = apps.get(f"app-{i}", {})
            got = failures(a)
            check(a.get("status") == "failed" and any(want in x for x in got),
                  f"app-{i} fails for its {want} evidence alone: {a.get('status')} {got[:3]}")
            check(f"appliance app-{i} failed verification" in r.stderr,
                  f"stderr names app-{i}")
        got3 = " ".join(failures(apps.get("app-3", {})))
        check("not the log of a tap" in got3, f"app-3's tap was read and refused: {got3[-300:]}")
        check(not any("witness" in x for x in failures(apps.get("app-2", {})) +
                      failures(apps.get("app-3", {}))),
              "the witness asked of app-1 is asked of app-1 alone")

        # a shaper's log given as a tap's is refused, not reconciled as "nothing seen"
        r3 = subprocess.run([VERIFY, "--key", f"{d}/keys/app-3.pub", "--ledger", f"{d}/log-3",
                             "--pod-map", f"{d}/app-3.yaml", "--now", NOW,
                             "--tap", f"{d}/log-1", "--tap-key", f"{d}/keys/app-1.pub"],
                            capture_output=True, text=True, timeout=60)
        check(r3.returncode == 1 and "its log has no OBSERVE record: not the log of a tap"
              in r3.stderr, f"--tap with a shaper's log exits 1 naming why (exit {r3.returncode})")
        # the report's last line says what the exit status says: the tap was refused
        for name, key, why in (("a shaper's log", "app-1", "its log has no OBSERVE record"),
                               ("another key's log", "app-2",
                                "its log failed verification with its key")):
            args = [VERIFY, "--key", f"{d}/keys/app-3.pub", "--ledger", f"{d}/log-3",
                    "--pod-map", f"{d}/app-3.yaml", "--now", NOW,
                    "--tap", f"{d}/log-1", "--tap-key", f"{d}/keys/{key}.pub"]
            rt = subprocess.run(args, capture_output=True, text=True, timeout=60)
            last = (rt.stdout.strip().splitlines() or [""])[-1]
            check(rt.returncode == 1 and last.startswith("RECONCILE FAILED: ")
                  and f"tap 1 refused: {why}" in last,
                  f"--tap with {name}: exit {rt.returncode}, the last line says so: {last[:160]}")
            rj = subprocess.run(args + ["--json"], capture_output=True, text=True, timeout=60)
            try:
                doc = json.loads(rj.stdout)
            except ValueError:
                doc = {}
            rec = doc.get("reconciliation", {})
            refused = rec.get("refused", [])
            check(rj.returncode == 1 and doc.get("ok") is False and rec.get("ok") is False
                  and rec.get("refused_total") == 1 and len(refused) == 1
                  and refused[0].get("tap") == 1 and why in refused[0].get("reason", "")
                  and doc.get("result", "").startswith("RECONCILE FAILED: "),
                  f"--tap with {name}, --json: exit {rj.returncode}, ok {doc.get('ok')}, "
                  f"reconciliation ok {rec.get('ok')}, refused {refused}")
        # a shaper's log that fails its own verification fails the reconciliation's verdict too
        rs = subprocess.run([VERIFY, "--key", f"{d}/keys/app-2.pub", "--ledger", f"{d}/log-3",
                             "--now", NOW, "--tap", f"{d}/log-1", "--tap-key",
                             f"{d}/keys/app-1.pub"], capture_output=True, text=True, timeout=60)
        last = (rs.stdout.strip().splitlines() or [""])[-1]
        check(rs.returncode == 1 and last.startswith("RECONCILE FAILED: ")
              and last.endswith("; the shaper's log failed verification (its report above)"),
              f"a shaper's log that does not verify: exit {rs.returncode}, last line {last[-120:]}")

        # the same evidence asked of the whole fleet by hand is what the entry asked for
        r1 = subprocess.run([VERIFY, "--key", f"{d}/keys/app-1.pub", "--ledger", f"{d}/log-1",
                             "--pod-map", f"{d}/app-1.yaml", "--now", NOW, "--json",
                             "--witness", f"{d}/keys/witness.vkey", "--witness-quorum", "1"],
                            capture_output=True, text=True, timeout=60)
        alone = json.loads(r1.stdout).get("failures", []) if r1.stdout else []
        check(r1.returncode == 1 and
              [f.get("check") for f in alone] ==
              [f.get("check") for f in (apps.get("app-1", {}).get("report") or {}).get(
                  "failures", [])],
              "app-1's fleet report has the failures podcap-verify --witness gives alone")
    return check.finish()


if __name__ == "__main__":
    sys.exit(main())
