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
        good = open(f"{d}/k").read()
        pub = open(f"{d}/k.pub").read()

        def refused(what, want):
            r = run("--config", f"{d}/map.yaml")
            check(r.returncode == 2 and f"podcapd: signing key: {d}/k: " in r.stderr and want in r.stderr,
                  f"{what}: exit {r.returncode}: {r.stderr.strip()[:110]}")

        def put(text, mode=0o600):
            if os.path.islink(f"{d}/k") or os.path.isfile(f"{d}/k"):
                os.unlink(f"{d}/k")
            elif os.path.exists(f"{d}/k"):
                os.rmdir(f"{d}/k")
            with open(f"{d}/k", "w") as f:
                f.write(text)
            os.chmod(f"{d}/k", mode)

        for mode, word in ((0o640, "readable"), (0o604, "readable"), (0o620, "writable"), (0o602, "writable")):
            put(good, mode)
            refused(f"a secret key of mode {mode:04o}", f"{word} by group or others (mode {mode:04o}); chmod 600 it")
        put(good, 0o644)
        os.rename(f"{d}/k", f"{d}/k.real")
        os.symlink(f"{d}/k.real", f"{d}/k")
        refused("a link to a key of mode 0644", "readable by group or others (mode 0644)")
        os.unlink(f"{d}/k")
        os.mkdir(f"{d}/k")
        refused("a directory", "not a regular file")
        os.rmdir(f"{d}/k")
        os.mkfifo(f"{d}/k", 0o600)
        refused("a FIFO", "not a regular file")
        os.unlink(f"{d}/k")
        if os.geteuid() == 0:
            put(good)
            os.chown(f"{d}/k", 65534, 65534)
            refused("a key owned by another user", "owned by uid 65534")
        put("not a key\n")
        refused("a file that is no key", "not a podcap secret key: does not start with PRIVATE+KEY+")
        put(pub)
        refused("the verifier key given as the secret key", "this is a verifier key (the .pub file)")
        # PRIVATE+KEY+<name>+<id>+<base64>: the base64 itself may hold '+'
        name, kid, data = good.strip()[len("PRIVATE+KEY+"):].split("+", 2)
        head = f"PRIVATE+KEY+{name}+{kid}"
        put(f"{head}+{data[:-4]}\n")
        refused("a key 3 bytes short", "key data is not base64 of 33 bytes")
        put(f"{head}+{data}AAAA\n")
        refused("a key 3 bytes long", "key data is not base64 of 33 bytes")
        put(f"{head}+{data[:-2]}!!\n")
        refused("a key that is not base64", "key data is not base64 of 33 bytes")
        put(good.replace("PRIVATE+KEY+", "SECRET+KEY+"))
        refused("a key with the wrong header", "does not start with PRIVATE+KEY+")
        put(good, 0o600)
        r = run("--check-config", f"{d}/map.yaml")
        check(r.returncode == 0, "the same pod map with the key put right checks out")
        check(not os.path.exists(f"{d}/ledger"), "nothing was started: no ledger was created")
    return check.finish()


sys.exit(main())
