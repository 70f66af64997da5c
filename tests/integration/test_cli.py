#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""podcapd's command line, as an operator meets it.

--check-config: 'configuration OK' and the digest for a good pod map (the
BLAKE2b-256 of the canonical form it prints with --canonical), and for every
bad pod map of tests/config/bad the expected file:line:col message and exit
status 2. --config refuses, before anything starts, a bad pod map (exit 2),
a pod map without signing key or ledger (exit 2), and a secret key that
group or others can read or that does not parse.

--check-config refuses what a start refuses before DPDK, with the same
message and exit 2: the shipped pod map (config/podmap.yaml, Debian's
/etc/podcap/podmap.yaml) as it is; and with its key and ledger set, a
signing key that does not exist or is named for another log, a ledger
whose directory cannot be made, that is a file or holds another log, a map
of auditor_keys without its declaration, and a TPM that cannot be reached.
The shipped map with a key and a ledger checks out, and the check creates
no ledger.
"""
import glob
import hashlib
import os
import socket
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from daemon import Checks  # noqa: E402

PODCAPD, KEYGEN = sys.argv[1:3]  # the harness also passes podcap-verify
ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))


def run(*args):
    return subprocess.run([PODCAPD, *args], capture_output=True, text=True, timeout=60)


def refused_alike(check, path, want, what):
    """--check-config and --config both refuse path, exit 2 and the same message."""
    c = run("--check-config", path)
    s = run("--config", path)
    check(c.returncode == 2 and s.returncode == 2 and want in c.stderr and c.stderr == s.stderr
          and c.stdout == "",
          f"{what}: --check-config exits {c.returncode}, --config {s.returncode}, the same "
          f"message ({c.stderr.strip()[-120:]!r} / {s.stderr.strip()[-120:]!r})")


def shipped_map(check, d):
    """The shipped pod map fails --check-config exactly when --config fails."""
    shipped = os.path.join(ROOT, "config", "podmap.yaml")
    refused_alike(check, shipped, "appliance.signing_key and appliance.ledger are required",
                  "the shipped pod map as it is")
    text = open(shipped, encoding="utf-8").read()
    check("#signing_key:" in text and "#ledger:" in text, "the shipped map has the key and ledger commented out")

    def variant(name, key, ledger, extra=""):
        path = f"{d}/{name}.yaml"
        with open(path, "w") as f:
            f.write(text.replace("#signing_key: /etc/podcap/appliance.key", f"signing_key: {key}")
                    .replace("#ledger: /var/lib/podcap/ledger", f"ledger: {ledger}")
                    .replace("  listen: ", extra + "  listen: ", 1))
        return path

    subprocess.run([KEYGEN, "--out", f"{d}/shipped.key", "--name", "podcap/podcap-1"], check=True,
                   stdout=subprocess.DEVNULL)
    subprocess.run([KEYGEN, "--out", f"{d}/other.key", "--name", "podcap/another-appliance"],
                   check=True, stdout=subprocess.DEVNULL)
    key, ledger = f"{d}/shipped.key", f"{d}/var/ledger"
    os.mkdir(f"{d}/var")
    refused_alike(check, variant("nokey", f"{d}/missing.key", ledger),
                  f"podcapd: signing key: {d}/missing.key: No such file or directory",
                  "a signing_key that does not exist")
    refused_alike(check, variant("otherkey", f"{d}/other.key", ledger),
                  f"podcapd: signing key: {d}/other.key is named 'podcap/another-appliance' but "
                  "this appliance's log is 'podcap/podcap-1'", "a key named for another log")
    refused_alike(check, variant("noparent", key, f"{d}/missing/ledger"),
                  f"{d}/missing/ledger", "a ledger whose parent directory does not exist")
    with open(f"{d}/var/afile", "w") as f:
        f.write("not a ledger\n")
    refused_alike(check, variant("fileledger", key, f"{d}/var/afile"), "afile: Not a directory",
                  "a ledger that is a file")
    os.mkdir(f"{d}/var/theirs")
    with open(f"{d}/var/theirs/origin", "w") as f:
        f.write("podcap/another-appliance\n")
    refused_alike(check, variant("otherledger", key, f"{d}/var/theirs"),
                  "belongs to log 'podcap/another-appliance', not 'podcap/podcap-1'",
                  "a ledger of another log")
    subprocess.run([KEYGEN, "--out", f"{d}/auditor.key", "--name", "auditor/cli"], check=True,
                   stdout=subprocess.DEVNULL)
    refused_alike(check, variant("undeclared", key, ledger,
                                 f"  auditor_keys: [{d}/auditor.key.pub]\n"),
                  "undeclared.yaml.sig", "auditor_keys without a declaration")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    refused_alike(check, variant("notpm", key, ledger,
                                 f"  attestation:\n    tpm: swtpm:host=127.0.0.1,port={port}\n"),
                  "TPM", "a TPM that cannot be reached")
    r = run("--check-config", variant("ready", key, ledger))
    check(r.returncode == 0 and "configuration OK" in r.stdout.splitlines(),
          f"the shipped map with its key and ledger set checks out ({r.returncode}: {r.stderr.strip()[-200:]})")
    check(sorted(os.listdir(f"{d}/var")) == ["afile", "theirs"] and os.listdir(f"{d}/var/theirs") == ["origin"],
          "and no check made or changed a ledger")


def main():
    check = Checks()
    example = os.path.join(ROOT, "config", "example-72gpu.yaml")
    r = run("--check-config", example, "--map-only")
    lines = r.stdout.splitlines()
    check(r.returncode == 0 and "configuration OK" in lines,
          f"--check-config example-72gpu.yaml --map-only: OK (exit {r.returncode})")
    if not os.path.exists("/etc/podcap/appliance.key"):
        r = run("--check-config", example)
        check(r.returncode == 2 and r.stdout == "",
              f"without --map-only, what it names is checked too: its key is not here ({r.returncode})")
    digest = next((ln.split()[1] for ln in lines if ln.startswith("digest ")), None)
    r = run("--check-config", example, "--map-only", "--canonical")
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

        subprocess.run([KEYGEN, "--out", f"{d}/k", "--name", "podcap/rack7-shaper-1"], check=True, stdout=subprocess.DEVNULL)
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
        shipped_map(check, d)
    return check.finish()


sys.exit(main())
