#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""podcapd's command line, as an operator meets it.

--check-config: 'configuration OK' and the digest for a good pod map (the
BLAKE2b-256 of the canonical form it prints with --canonical), and for every
bad pod map of tests/config/bad the expected file:line:col message and exit
status 2. --config refuses, before anything starts, a bad pod map (exit 2),
a pod map without signing key or ledger (exit 2), and a secret key that
group or others can read or that does not parse.
"""
import glob
import hashlib
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from daemon import Checks  # noqa: E402

PODCAPD, KEYGEN = sys.argv[1:3]  # the harness also passes podcap-verify
ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))


def run(*args):
    return subprocess.run([PODCAPD, *args], capture_output=True, text=True, timeout=60)


def main():
    check = Checks()
    example = os.path.join(ROOT, "config", "example-72gpu.yaml")
    r = run("--check-config", example)
    lines = r.stdout.splitlines()
    check(r.returncode == 0 and "configuration OK" in lines, f"--check-config example-72gpu.yaml: OK (exit {r.returncode})")
    digest = next((ln.split()[1] for ln in lines if ln.startswith("digest ")), None)
    r = run("--check-config", example, "--canonical")
    canonical = r.stdout.split("configuration OK\n")[0].encode()
    check(digest is not None and hashlib.blake2b(canonical, digest_size=32).hexdigest() == digest,
          "the digest is BLAKE2b-256 of the canonical form, computed independently")

    bad = sorted(glob.glob(os.path.join(ROOT, "tests", "config", "bad", "*.yaml")))
    wrong = []
    for path in bad:
        with open(path, "rb") as f:
            expect = f.readline().decode().split("# expect: ", 1)[1].strip()
        r = subprocess.run([PODCAPD, "--check-config", path], capture_output=True, timeout=60)
        r.stderr = r.stderr.decode(errors="replace")
        first = r.stderr.splitlines()[0] if r.stderr else ""
        # a message with a position reads file:line:col: ..., one without file: ...
        want = f"{path}:{expect}" if expect[:1].isdigit() else f"{path}: {expect}"
        if r.returncode != 2 or first != want or r.stdout:
            wrong.append(f"{os.path.basename(path)}: exit {r.returncode}, {first!r}")
    check(bad and not wrong, f"{len(bad)} bad pod maps: each exits 2 with its file:line:col message"
          + ("" if not wrong else "; " + "; ".join(wrong[:3])))

    with tempfile.TemporaryDirectory(prefix="podcap-cli-") as d:
        r = run("--config", bad[0])
        check(r.returncode == 2 and r.stderr.startswith(bad[0] + ":"), f"--config on a bad pod map: exit {r.returncode}")

        plain = "".join(ln for ln in open(example, encoding="utf-8").read().splitlines(keepends=True)
                        if not ln.lstrip().startswith(("signing_key:", "ledger:")))
        nokey = f"{d}/nokey.yaml"
        with open(nokey, "w") as f:
            f.write(plain)
        r = run("--config", nokey)
        check(r.returncode == 2 and "signing_key and appliance.ledger are required" in r.stderr,
              f"--config without signing key and ledger: exit {r.returncode}: {r.stderr.strip()[:90]}")

        subprocess.run([KEYGEN, "--out", f"{d}/k", "--name", "podcap/cli"], check=True, stdout=subprocess.DEVNULL)
        text = plain.replace("appliance:\n", f"appliance:\n  signing_key: {d}/k\n  ledger: {d}/ledger\n", 1)
        with open(f"{d}/map.yaml", "w") as f:
            f.write(text)
        os.chmod(f"{d}/k", 0o640)
        r = run("--config", f"{d}/map.yaml")
        check(r.returncode != 0 and "readable by group or others" in r.stderr,
              f"a secret key of mode 0640 is refused: {r.stderr.strip()[:100]}")
        os.chmod(f"{d}/k", 0o600)
        with open(f"{d}/k", "w") as f:
            f.write("not a key\n")
        r = run("--config", f"{d}/map.yaml")
        check(r.returncode != 0 and "not a podcap secret key" in r.stderr,
              f"a secret key that does not parse is refused: {r.stderr.strip()[:100]}")
        check(not os.path.exists(f"{d}/ledger"), "nothing was started: no ledger was created")
    return check.finish()


sys.exit(main())
