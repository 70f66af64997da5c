#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The log's key sealed to the TPM's PCRs, unsealed by podcapd's signer.

    test_seal.py PODCAPD PODCAP_KEYGEN PODCAP_VERIFY PODCAP_ATTEST

podcap-attest seal seals podcap-keygen's key to PCRs 0 and 10 of a swtpm
the test starts (after the harness has played IMA for podcapd). podcapd
with the sealed file as appliance.signing_key starts, its log verifies
with the key's .pub, its quotes say the key is sealed and podcap-verify
--attest reports it. The sealed file holds no copy of the key's seed.
After PCR 10 is extended with another binary's hash, podcapd refuses to
start (exit 2) because the TPM will not unseal; another TPM cannot unseal
the file either; a sealed key without appliance.attestation is refused.
"""
import base64
import os
import re
import subprocess
import sys
import tempfile
import time

import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import test_quotes as tq  # noqa: E402
from attestlog import attest, file_sha256, records, rtype, template_hash  # noqa: E402
from swtpm import Swtpm  # noqa: E402

check = tq.check


def podmap(d, key, ledger, tcti):
    text = f"appliance:\n  id: quotes\n  signing_key: {key}\n  ledger: {ledger}\n  listen: 127.0.0.1:0\n"
    if tcti is not None:
        text += f"  attestation:\n    tpm: {tcti}\n    every: 3\n    pcrs: [0, 10]\n    ima_log: {d}/ima.txt\n"
    return text + tq.MAP.format(d=d, pid=os.getpid())


def newlog(pd):
    """What podcapd wrote to stderr in its last run only."""
    return pd.log()[pd.err_mark:]


def start(pd, text, seconds):
    pd.write_config(text)
    ok = pd.start(timeout=60)
    if ok:
        time.sleep(seconds)
        return ok, pd.stop()
    return ok, pd.proc.wait(timeout=30)


def main():
    with tempfile.TemporaryDirectory(prefix="podcap-seal-") as tmp:
        tq.write_pcap(f"{tmp}/empty.pcap", [])
        key = f"{tmp}/appliance.key"
        subprocess.run([tq.KEYGEN, "--out", key, "--name", "podcap/quotes"], check=True,
                       capture_output=True)
        with Swtpm(tmp, "a", ek_cert=False) as a, Swtpm(tmp, "b", ek_cert=False) as b:
            tq.play_ima(a, f"{tmp}/ima.txt", [(file_sha256(tq.PODCAPD), "/usr/sbin/podcapd")])
            sealed = f"{tmp}/appliance.sealed"
            r = subprocess.run([tq.ATTEST, "seal", "--tcti", a.tcti, "--key", key, "--pcrs", "0,10",
                                "--out", sealed], capture_output=True, text=True, timeout=60)
            check(r.returncode == 0, f"podcap-attest seal: exit 0 ({r.stderr.strip()})")
            with open(key) as f:
                seed_b64 = f.read().strip().split("+", 4)[4]  # PRIVATE+KEY+NAME+ID+BASE64
            with open(sealed) as f:
                text = f.read()
            seed = base64.b64decode(seed_b64)[1:]
            check(seed.hex() not in text and seed_b64 not in text
                  and os.stat(sealed).st_mode & 0o077 == 0,
                  "the sealed file (0600) holds no copy of the key's seed")
            check(a.transient_handles() == "", "sealing leaves nothing loaded in the TPM")

            pd = tq.Podcapd(tq.PODCAPD, tq.KEYGEN, f"{tmp}", "quotes")
            pd.key = key
            ok, code = start(pd, podmap(tmp, sealed, pd.ledger, a.tcti), 2.0)
            check(ok and code == 0, f"podcapd starts with the sealed key and stops (exit {code})")
            r = subprocess.run([tq.VERIFY, "--key", key + ".pub", "--ledger", pd.ledger],
                               capture_output=True, text=True, timeout=120)
            check(r.returncode == 0, "its log verifies with the key's .pub")
            recs = records(pd.ledger)
            quotes = [attest(x) for x in recs if rtype(x) == 7]
            check(quotes and all(q["key_kind"] == 1 for q in quotes),
                  f"its {len(quotes)} quotes say the key is sealed")
            enrol = f"{tmp}/enrolment.yaml"
            subprocess.run([tq.ATTEST, "enroll", "--tcti", a.tcti, "--out", enrol], check=True,
                           capture_output=True)
            with open(enrol) as f:
                e = yaml.safe_load(f)
            pol = f"{tmp}/policy.yaml"
            with open(pol, "w") as f:
                f.write("attestation-policy: 1\nmax-windows: 30\nak-pem: |\n"
                        + "".join("  " + ln + "\n" for ln in e["ak-pem"].splitlines()))
            r = subprocess.run([tq.VERIFY, "--key", key + ".pub", "--ledger", pd.ledger,
                                "--attest", pol], capture_output=True, text=True, timeout=120)
            check(r.returncode == 0 and "signing key: sealed to the TPM's PCRs" in r.stdout,
                  f"podcap-verify --attest reports a sealed key (exit {r.returncode})")
            if r.returncode != 0:
                print(r.stdout[-1500:])

            # another TPM cannot unseal it
            pd_b = tq.Podcapd(tq.PODCAPD, tq.KEYGEN, f"{tmp}", "quotes")
            ok, code = start(pd_b, podmap(tmp, sealed, f"{tmp}/ledger-b", b.tcti), 0)
            check(not ok and code == 2 and "TPM2_Load" in newlog(pd_b),
                  f"another TPM cannot unseal it: exit 2 ({newlog(pd_b).strip()[-200:]})")
            # no TPM named: refused
            ok, code = start(pd_b, podmap(tmp, sealed, f"{tmp}/ledger-c", None), 0)
            check(not ok and code == 2 and "needs appliance.attestation.tpm" in newlog(pd_b),
                  "a sealed key without appliance.attestation: exit 2 saying so")

            # the measured state changes: PCR 10 extended with another binary's measurement
            other = template_hash(file_sha256(tq.KEYGEN), "/usr/sbin/podcapd").hex()
            a.tool("tpm2_pcrextend", f"10:sha256={other}")
            ok, code = start(pd_b, podmap(tmp, sealed, pd.ledger, a.tcti), 0)
            log = newlog(pd_b)
            check(not ok and code == 2 and "PCRs are not those the key was sealed to" in log,
                  f"with PCR 10 changed the TPM does not unseal: exit 2 ({log.strip()[-250:]})")
            check(re.search(r"forwarding", log) is None, "and nothing is forwarded")
            check(a.transient_handles() == "", "a refused unseal leaves nothing loaded")
    return check.finish()


if __name__ == "__main__":
    sys.exit(main())
