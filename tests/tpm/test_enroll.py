#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""podcap-attest enroll and activate against swtpm, checked with tpm2-tools.

    test_enroll.py PODCAP_ATTEST

Two software TPMs, each started here: one manufactured with an EK
certificate (swtpm_setup and a local CA), one without. The enrolment file
must hold the EK that tpm2_createek makes from TCG's template and the EK
certificate tpm2_nvread reads, that certificate must certify that EK, the
AK's name must be its TPM name (SHA-256 of its public area) and its PEM
the same point as its TPM2B_PUBLIC. Enrolment is repeatable on one TPM and
differs between TPMs, never overwrites a file, and leaves no object loaded.
Credential activation (tpm2_makecredential as the auditor, with no TPM)
recovers the secret on the TPM it was made for, and on no other.
"""
import base64
import hashlib
import os
import struct
import subprocess
import sys
import tempfile

import yaml
from cryptography import x509
from cryptography.hazmat.primitives import serialization

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "integration"))
from daemon import Checks  # noqa: E402
from swtpm import Swtpm  # noqa: E402

ATTEST = sys.argv[1]
check = Checks()


def attest(tpm, *args):
    return subprocess.run([ATTEST, *args, "--tcti", tpm.tcti], capture_output=True, text=True,
                          timeout=120)


def enroll(tpm, path):
    r = attest(tpm, "enroll", "--out", path)
    check(r.returncode == 0 and r.stderr == "", f"enroll {path}: exit 0 ({r.stderr.strip()})")
    with open(path) as f:
        return yaml.safe_load(f)


def rsa_modulus(tpm2b_public):
    """n of an RSA TPM2B_PUBLIC: the last TPM2B of the public area (unique.rsa)."""
    (size,) = struct.unpack(">H", tpm2b_public[-258:-256])
    assert size == 256
    return int.from_bytes(tpm2b_public[-256:], "big")


def ecc_point(tpm2b_public):
    """(x, y) of an ECC TPM2B_PUBLIC: its last two TPM2Bs (unique.ecc)."""
    (ylen,) = struct.unpack(">H", tpm2b_public[-34:-32])
    (xlen,) = struct.unpack(">H", tpm2b_public[-68:-66])
    assert xlen == 32 and ylen == 32
    return int.from_bytes(tpm2b_public[-66:-34], "big"), int.from_bytes(tpm2b_public[-32:], "big")


def check_enrolment(tmp, tpm, e):
    ak = base64.b64decode(e["ak-public"])
    ek = base64.b64decode(e["ek-public"])
    check(e["enrolment"] == 1, "enrolment: 1")
    check(e["ak-name"] == "000b" + hashlib.sha256(ak[2:]).hexdigest(),
          "ak-name is SHA-256 (000b) of the AK's public area")
    pem = serialization.load_pem_public_key(e["ak-pem"].encode()).public_numbers()
    check((pem.x, pem.y) == ecc_point(ak) and pem.curve.name == "secp256r1",
          "ak-pem is the P-256 point of ak-public")
    # the AK is a restricted signing key: sign + restricted + fixedTPM + fixedParent
    (attrs,) = struct.unpack(">I", ak[6:10])
    check(attrs & 0x00050032 == 0x00050032 and attrs & 0x00020000 == 0,
          f"the AK is restricted, signing, fixedTPM, fixedParent, no decrypt (0x{attrs:08x})")
    ekpub = os.path.join(tmp, "tools-ek.pub")
    r = tpm.tool("tpm2_createek", "-c", os.path.join(tmp, "ek.ctx"), "-G", "rsa", "-u", ekpub)
    tpm.tool("tpm2_flushcontext", "-t")
    with open(ekpub, "rb") as f:
        check(r.returncode == 0 and f.read() == ek,
              "ek-public is the EK tpm2_createek makes from TCG's RSA template")
    return ek


def test_with_cert(tmp):
    with Swtpm(tmp, "certified") as tpm:
        path = os.path.join(tmp, "enrolment.yaml")
        e = enroll(tpm, path)
        ek = check_enrolment(tmp, tpm, e)
        check("ek-certificate" in e, "a manufactured TPM's enrolment has its EK certificate")
        der = base64.b64decode(e.get("ek-certificate", ""))
        certfile = os.path.join(tmp, "nv-cert.der")
        tpm.tool("tpm2_nvread", "0x01c00002", "-o", certfile)
        with open(certfile, "rb") as f:
            check(f.read() == der, "ek-certificate is NV index 0x01c00002 as tpm2_nvread reads it")
        cert = x509.load_der_x509_certificate(der)
        check(cert.public_key().public_numbers().n == rsa_modulus(ek),
              "the EK certificate certifies ek-public's key")
        check(tpm.transient_handles() == "", "enrolment leaves no transient object loaded")

        with open(path, "rb") as f:
            before = f.read()
        r = attest(tpm, "enroll", "--out", path)
        with open(path, "rb") as f:
            check(r.returncode == 1 and "exists" in r.stderr and f.read() == before,
                  f"enroll never overwrites a file: exit 1 ({r.stderr.strip()})")
        again = enroll(tpm, os.path.join(tmp, "again.yaml"))
        check(again == e, "enrolling the same TPM again gives the same keys")
        return e


def activate(tpm, tmp, ekpub_b64, name, tag):
    ekpub = os.path.join(tmp, f"{tag}-ek.pub")
    with open(ekpub, "wb") as f:
        f.write(base64.b64decode(ekpub_b64))
    secret = os.urandom(32)
    sfile, cred, out = (os.path.join(tmp, f"{tag}-{x}") for x in ("secret", "cred", "got"))
    with open(sfile, "wb") as f:
        f.write(secret)
    r = subprocess.run(["tpm2_makecredential", "-T", "none", "-e", ekpub, "-s", sfile,
                        "-n", name, "-o", cred], capture_output=True, text=True, timeout=60)
    check(r.returncode == 0, f"tpm2_makecredential (the auditor, no TPM): {r.stderr.strip()}")
    r = attest(tpm, "activate", "--credential", cred, "--out", out)
    got = None
    if os.path.exists(out):
        with open(out, "rb") as f:
            got = f.read()
        check(os.stat(out).st_mode & 0o077 == 0, "the recovered secret is written 0600")
    return r, got == secret


def main():
    with tempfile.TemporaryDirectory(prefix="podcap-enroll-") as tmp:
        e = test_with_cert(tmp)
        with Swtpm(tmp, "plain", ek_cert=False) as other:
            o = enroll(other, os.path.join(tmp, "other.yaml"))
            check_enrolment(tmp, other, o)
            check("ek-certificate" not in o, "a TPM without an EK certificate: none enrolled")
            check(o["ak-public"] != e["ak-public"] and o["ek-public"] != e["ek-public"],
                  "another TPM has another AK and EK")

            r, ok = activate(other, tmp, o["ek-public"], o["ak-name"], "own")
            check(r.returncode == 0 and ok,
                  f"activate recovers the secret made for this TPM's EK and AK ({r.stderr.strip()})")
            check(other.transient_handles() == "", "activation leaves no transient object loaded")
            r, ok = activate(other, tmp, e["ek-public"], o["ak-name"], "foreign-ek")
            check(r.returncode == 1 and not ok and "TPM2_ActivateCredential" in r.stderr,
                  f"a secret wrapped to another TPM's EK is not recovered: {r.stderr.strip()}")
            r, ok = activate(other, tmp, o["ek-public"], e["ak-name"], "foreign-ak")
            check(r.returncode == 1 and not ok and "TPM2_ActivateCredential" in r.stderr,
                  f"a secret for another TPM's AK name is not recovered: {r.stderr.strip()}")
            check(other.transient_handles() == "", "a failed activation leaves nothing loaded")
    return check.finish()


if __name__ == "__main__":
    sys.exit(main())
