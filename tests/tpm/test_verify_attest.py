#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""podcap-verify --attest POLICY over real podcapd runs with swtpm TPMs.

    test_verify_attest.py PODCAPD PODCAP_KEYGEN PODCAP_VERIFY PODCAP_ATTEST

Run A: TPM A, the harness playing IMA honestly (PCR 10 and the list hold
podcapd's file). With the right policy (A's AK and name, PCR 0's value,
podcapd's build id and file SHA-256, max-windows 12) the log passes, every
window attested. Exit 1, naming the record and the reason, for: the AK of
another TPM (B) in the policy, by name and by key alone; another PCR 0 value; max-windows 1 (windows
between quotes unattested); run C, whose PCR 10 was extended with another
binary's hash while its IMA list names podcapd (the modified-podcapd
case); run D, whose IMA list honestly measures another binary as podcapd;
and logs an operator holding the key could write from run A: an old
quote replayed at a later point, the log of another key (run A2, same
TPM) re-signed as A's, every quote but the first taken out. A policy that
is not valid YAML or lacks a key is exit 2 with file:line:col.
"""
import os
import re
import subprocess
import sys
import tempfile

import json

import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))
from report_sections import section_cells  # noqa: E402
import test_quotes as tq  # noqa: E402
from attestlog import file_sha256, records, rtype, write_ledger  # noqa: E402
from swtpm import Swtpm  # noqa: E402

check = tq.check
ATTEST_T = 7


def enroll(tmp, tpm, name):
    path = os.path.join(tmp, f"{name}-enrolment.yaml")
    subprocess.run([tq.ATTEST, "enroll", "--tcti", tpm.tcti, "--out", path], check=True,
                   capture_output=True)
    with open(path) as f:
        return yaml.safe_load(f)


def policy(tmp, name, enrol, pcr0=None, max_windows=6, build=None, name_too=True):
    text = ("attestation-policy: 1\nak-pem: |\n"
            + "".join("  " + ln + "\n" for ln in enrol["ak-pem"].splitlines())
            + (f"ak-name: {enrol['ak-name']}\n" if name_too else "")
            + f"max-windows: {max_windows}\n")
    if pcr0 is not None:
        text += f"pcrs:\n  0: {pcr0}\n"
    if build is not None:
        text += f"builds:\n  - build-id: {build[0]}\n    sha256: {build[1]}\n"
    path = os.path.join(tmp, f"{name}.policy.yaml")
    with open(path, "w") as f:
        f.write(text)
    return path


def verify(key, ledger, pol):
    return subprocess.run([tq.VERIFY, "--key", key, "--ledger", ledger, "--attest", pol],
                          capture_output=True, text=True, timeout=120)


def reports_agree(tmp, key, ledger, pol, nquotes):
    """The attestation section of --json and of --html, from one run: the same figures."""
    page = os.path.join(tmp, "attest.html")
    r = subprocess.run([tq.VERIFY, "--key", key, "--ledger", ledger, "--attest", pol, "--json",
                        "--html", page], capture_output=True, text=True, timeout=120)
    a = json.loads(r.stdout).get("attestation") if r.returncode == 0 else None
    check(a is not None and a["quotes_ok"] == nquotes and a["quotes_refused"] == 0
          and a["windows_attested"] > 0 and a["windows_unattested"] == 0
          and a["signing_key"] == "file" and isinstance(a["last_quote"], int),
          f"--json's attestation: {nquotes} quotes verified, every window attested ({a})")
    with open(page) as f:
        cells = section_cells(f.read(), "attestation")
    want = {k: [str(a[k])] for k in ("quotes_ok", "quotes_refused", "windows_attested",
                                     "windows_unattested", "last_quote", "signing_key")} if a else None
    check(cells is not None and cells == want,
          f"--html's attestation section has --json's figures ({cells} vs {want})")


def expect_fail(r, what, record=None, reason=""):
    out = r.stdout
    named = re.search(rf"record {record}\b" if record is not None else r"record \d+", out)
    check(r.returncode == 1 and reason in out and named is not None,
          f"{what}: exit 1 naming the record and '{reason}' (exit {r.returncode})")
    if r.returncode != 1 or reason not in out:
        print(out[-1500:] + r.stderr[-500:])


def podcapd_run(tmp, name, tpm, files):
    d = os.path.join(tmp, name)
    os.mkdir(d)
    tq.write_pcap(f"{d}/empty.pcap", [])
    ima = os.path.join(d, "ima.txt")
    tq.play_ima(tpm, ima, files)
    pd = tq.run_podcapd(d, tpm, ima, every=3, seconds=3.0)
    return pd


def main():
    podcapd_sha = file_sha256(tq.PODCAPD)
    other_sha = file_sha256(tq.KEYGEN)
    build = subprocess.run([tq.PODCAPD, "--version"], capture_output=True,
                           text=True).stdout.split()[-1]
    with tempfile.TemporaryDirectory(prefix="podcap-verify-attest-") as tmp:
        with Swtpm(tmp, "a", ek_cert=False) as a, Swtpm(tmp, "b", ek_cert=False) as b:
            ea, eb = enroll(tmp, a, "a"), enroll(tmp, b, "b")
            pcr0 = a.tool("tpm2_pcrread", "sha256:0", text=True).stdout.split("0x")[-1].strip()
            pa = podcapd_run(tmp, "runA", a, [(podcapd_sha, "/usr/sbin/podcapd")])
            recs = records(pa.ledger)
            nquotes = sum(rtype(r) == ATTEST_T for r in recs)
            good = policy(tmp, "good", ea, pcr0.lower(), 12, (build, podcapd_sha.hex()))
            r = verify(pa.key + ".pub", pa.ledger, good)
            check(r.returncode == 0 and f": {nquotes} quotes verified, 0 refused;" in r.stdout
                  and re.search(r"windows attested, 0 not", r.stdout) is not None,
                  f"run A with the right policy: exit 0, every quote and window attested "
                  f"(exit {r.returncode}: {r.stdout[-300:]})")
            reports_agree(tmp, pa.key + ".pub", pa.ledger, good, nquotes)

            first = next(i for i, x in enumerate(recs) if rtype(x) == ATTEST_T)
            expect_fail(verify(pa.key + ".pub", pa.ledger,
                               policy(tmp, "other-tpm", eb, None, 6, (build, podcapd_sha.hex()))),
                        "a policy with another TPM's AK", first, "another key than the policy's AK")
            expect_fail(verify(pa.key + ".pub", pa.ledger,
                               policy(tmp, "other-pem", eb, None, 6, (build, podcapd_sha.hex()),
                                      name_too=False)),
                        "another TPM's AK, by its key alone", first,
                        "does not verify with the policy's AK")
            expect_fail(verify(pa.key + ".pub", pa.ledger,
                               policy(tmp, "pcr0", ea, "11" * 32, 6, (build, podcapd_sha.hex()))),
                        "another PCR 0 value", first, "PCR 0 is")
            expect_fail(verify(pa.key + ".pub", pa.ledger,
                               policy(tmp, "near", ea, None, 1, (build, podcapd_sha.hex()))),
                        "max-windows 1", None, "not attested")

            # an operator with the key rewrites run A's log
            quotes = [i for i, x in enumerate(recs) if rtype(x) == ATTEST_T]
            origin = "podcap/quotes"
            replay = recs[:quotes[1] + 1] + [recs[quotes[0]]] + recs[quotes[1] + 1:]
            write_ledger(f"{tmp}/replay", origin, replay, pa.key)
            expect_fail(verify(pa.key + ".pub", f"{tmp}/replay", good),
                        "an old quote replayed later", quotes[1] + 1, "a replayed quote")
            dropped = [x for i, x in enumerate(recs) if rtype(x) != ATTEST_T or i == quotes[0]]
            write_ledger(f"{tmp}/dropped", origin, dropped, pa.key)
            expect_fail(verify(pa.key + ".pub", f"{tmp}/dropped", good),
                        "every quote but the first taken out", None, "not attested")

            # run A2: the same TPM, another key; its log re-signed with A's key
            d2 = os.path.join(tmp, "runA2")
            os.mkdir(d2)
            tq.write_pcap(f"{d2}/empty.pcap", [])
            ima2 = os.path.join(d2, "ima.txt")
            with open(ima2, "w") as f, open(os.path.join(tmp, "runA", "ima.txt")) as g:
                f.write(g.read())
            pa2 = tq.run_podcapd(d2, a, ima2, every=3, seconds=2.0)
            recs2 = records(pa2.ledger)
            write_ledger(f"{tmp}/otherlog", origin, recs2, pa.key)
            q2 = next(i for i, x in enumerate(recs2) if rtype(x) == ATTEST_T)
            expect_fail(verify(pa.key + ".pub", f"{tmp}/otherlog", good),
                        "quotes made for another log", q2, "does not commit to this log")

        with Swtpm(tmp, "c", ek_cert=False) as c:
            ec = enroll(tmp, c, "c")
            # PCR 10 extended with another binary's measurement; the list claims podcapd
            d = os.path.join(tmp, "runC")
            os.mkdir(d)
            tq.write_pcap(f"{d}/empty.pcap", [])
            ima = os.path.join(d, "ima.txt")
            tq.play_ima(c, os.path.join(d, "real-ima.txt"), [(other_sha, "/usr/sbin/podcapd")])
            with open(ima, "w") as f:
                f.write(tq.ima_ng_line(podcapd_sha, "/usr/sbin/podcapd"))
            pc = tq.run_podcapd(d, c, ima, every=3, seconds=2.0)
            qc = next(i for i, x in enumerate(records(pc.ledger)) if rtype(x) == ATTEST_T)
            pol = policy(tmp, "c", ec, None, 6, (build, podcapd_sha.hex()))
            expect_fail(verify(pc.key + ".pub", pc.ledger, pol),
                        "PCR 10 extended with another binary's hash", qc,
                        "does not replay to the quoted PCR 10")
        with Swtpm(tmp, "d", ek_cert=False) as dt:
            ed = enroll(tmp, dt, "d")
            pd = podcapd_run(tmp, "runD", dt, [(other_sha, "/usr/sbin/podcapd")])
            qd = next(i for i, x in enumerate(records(pd.ledger)) if rtype(x) == ATTEST_T)
            pol = policy(tmp, "d", ed, None, 6, (build, podcapd_sha.hex()))
            expect_fail(verify(pd.key + ".pub", pd.ledger, pol),
                        "IMA measured another binary as podcapd", qd,
                        "has no measurement of this build's file")

        bad = os.path.join(tmp, "bad.policy.yaml")
        with open(bad, "w") as f:
            f.write("attestation-policy: 1\nmax-windows: 6\nak-pem: [\n")
        r = verify(pa.key + ".pub", pa.ledger, bad)
        check(r.returncode == 2 and re.search(r"bad\.policy\.yaml:\d+:\d+:", r.stderr),
              f"a policy that is not YAML: exit 2 with file:line:col ({r.stderr.strip()})")
        with open(bad, "w") as f:
            f.write("attestation-policy: 1\nmax-windows: 6\n")
        r = verify(pa.key + ".pub", pa.ledger, bad)
        check(r.returncode == 2 and "ak-pem" in r.stderr,
              f"a policy without ak-pem: exit 2 saying so ({r.stderr.strip()})")
    return check.finish()


if __name__ == "__main__":
    sys.exit(main())
