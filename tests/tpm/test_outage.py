#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""A TPM that is away for a while mid-run: podcapd quotes again once it is back.

    test_outage.py PODCAPD PODCAP_KEYGEN PODCAP_VERIFY PODCAP_ATTEST

podcapd runs between DPDK pcap ports with appliance.attestation (a quote
every 2 windows of 200 ms, PCRs 0 and 7, an empty IMA list) on a swtpm. Once it
has quoted, the swtpm is stopped and, 2.5 s later, served again on the same
port and state (its connection is refused meanwhile). Then: the quotes
that could not be had are logged and leave their windows unattested, the
run goes on, and quotes come back: ATTEST records made after the TPM
returned, periodic ones and not only the last before the STOP, each
committing to the checkpoint before it and accepted by tpm2_checkquote
with the enrolled AK; podcap-verify --attest accepts the whole log with a
policy whose max-windows covers the outage, and refuses it with one that
does not (the windows the TPM was away for are unattested).
"""
import json
import os
import subprocess
import sys
import tempfile
import time

import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "integration"))
from attestlog import attest, header, qualifying, records, root, rtype  # noqa: E402
from daemon import Checks, Podcapd  # noqa: E402
from frames import write_pcap  # noqa: E402
from swtpm import Swtpm  # noqa: E402
import test_quotes as tq  # noqa: E402

PODCAPD, KEYGEN, VERIFY, ATTEST = sys.argv[1:5]
ATTEST_T = 7
AWAY_S = 2.5
check = Checks()


def wait_for(pred, timeout):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if pred():
            return True
        time.sleep(0.1)
    return False


def quotes(pd):
    return [r for r in records(pd.ledger) if rtype(r) == ATTEST_T]


def policy(d, enrol, pcr0, max_windows):
    path = os.path.join(d, f"policy-{max_windows}.yaml")
    with open(path, "w") as f:
        f.write("attestation-policy: 1\nak-pem: |\n"
                + "".join("  " + ln + "\n" for ln in enrol["ak-pem"].splitlines())
                + f"ak-name: {enrol['ak-name']}\nmax-windows: {max_windows}\n"
                + f"pcrs:\n  0: {pcr0}\n")
    return path


def check_quotes_after(d, pd, ak_pem, back_ns):
    recs = records(pd.ledger)
    with open(pd.key + ".pub") as f:
        vk = f.read()
    after = [i for i, r in enumerate(recs) if rtype(r) == ATTEST_T and header(r)["time"] > back_ns]
    # the last one is the quote before the STOP: at least two more are periodic
    check(len(after) >= 3, f"quotes once the TPM is back: {len(after)} ATTEST records after it")
    for i in after:
        a = attest(recs[i])
        want = qualifying(vk, a["digest"], a["build"], a["size"], a["root"], a["key_kind"])
        check(a["size"] == i and a["root"] == root(recs, i),
              f"record {i}: the quote commits to the checkpoint of size {i}")
        r = tq.checkquote(d, ak_pem, a, want)
        check(r.returncode == 0, f"record {i}: tpm2_checkquote accepts it ({r.stderr.strip()})")
    return recs


def main():
    with tempfile.TemporaryDirectory(prefix="podcap-outage-") as tmp:
        write_pcap(f"{tmp}/empty.pcap", [])
        with Swtpm(tmp, "tpm", ek_cert=False) as tpm:
            enrol_path = os.path.join(tmp, "enrolment.yaml")
            subprocess.run([ATTEST, "enroll", "--tcti", tpm.tcti, "--out", enrol_path],
                           check=True, capture_output=True)
            with open(enrol_path) as f:
                enrol = yaml.safe_load(f)
            ak_pem = os.path.join(tmp, "ak.pem")
            with open(ak_pem, "w") as f:
                f.write(enrol["ak-pem"])
            pcr0 = tpm.tool("tpm2_pcrread", "sha256:0", text=True).stdout.split("0x")[-1].strip()

            open(f"{tmp}/ima.txt", "w").close()  # IMA measured nothing: not checked here
            pd = Podcapd(PODCAPD, KEYGEN, tmp, "outage")
            pd.write_config(pd.appliance_yaml()
                            + f"  attestation:\n    tpm: {tpm.tcti}\n    every: 2\n"
                            + f"    pcrs: [0, 7]\n    ima_log: {tmp}/ima.txt\n"
                            + tq.MAP.format(d=tmp, pid=os.getpid()))
            if not check(pd.start(), "podcapd starts with appliance.attestation"):
                print(pd.log()[-3000:])
                return check.finish()
            try:
                check(wait_for(lambda: len(quotes(pd)) >= 2, 30), "podcapd quotes")
                tpm.stop()
                time.sleep(AWAY_S)
                away = len(quotes(pd))
                tpm.start()
                back_ns = time.time_ns()
                time.sleep(4)
                check(pd.proc.poll() is None, "podcapd runs on while the TPM is away")
            finally:
                rc = pd.stop()
            check(rc == 0, f"and stops cleanly ({rc})")
            log = pd.log()
            check("no quote" in log, "the quotes that could not be had are logged")
            recs = check_quotes_after(tmp, pd, ak_pem, back_ns)
            check(len(quotes(pd)) > away, f"ATTEST records: {away} before the TPM came back, "
                  f"{len(quotes(pd))} at the end")
            r = subprocess.run([VERIFY, "--key", pd.key + ".pub", "--ledger", pd.ledger,
                                "--attest", policy(tmp, enrol, pcr0.lower(), 200), "--json"],
                               capture_output=True, text=True, timeout=120)
            a = json.loads(r.stdout).get("attestation", {}) if r.stdout.startswith("{") else {}
            check(r.returncode == 0 and a.get("quotes_ok") == len(quotes(pd))
                  and a.get("quotes_refused") == 0,
                  f"podcap-verify --attest accepts the log with max-windows 200, every quote "
                  f"verified ({r.returncode}: {a or r.stdout[-600:]})")
            r = subprocess.run([VERIFY, "--key", pd.key + ".pub", "--ledger", pd.ledger,
                                "--attest", policy(tmp, enrol, pcr0.lower(), 3)],
                               capture_output=True, text=True, timeout=120)
            check(r.returncode == 1, f"and refuses it with max-windows 3: the windows the TPM "
                  f"was away for are unattested ({r.returncode})")
            check(tpm.transient_handles() == "", "podcapd's signer leaves no object in the TPM")
            if check.failures:
                print(log[-3000:])
                print(f"{len(recs)} records: {[rtype(x) for x in recs]}")
    return check.finish()


if __name__ == "__main__":
    sys.exit(main())
