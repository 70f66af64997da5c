#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Two builds of the same sources in different places give the same bytes.

tools/rebuild runs twice, in two directories of different names and depths,
with different SOURCE_DATE_EPOCH, time zones, locales and umasks. Every
program must print the same build id both times, that id must be the
BLAKE2b-256 of its file (computed here), and neither build's directory may
appear in any program. Quick mode (the default, what tools/check runs)
builds podcapd, podcap-verify and podcap-keygen; --full builds every target
and compares every executable.

    tests/repro/test_repro.py [--full]
"""
import hashlib
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
REBUILD = os.path.join(ROOT, "tools", "rebuild")
FULL = "--full" in sys.argv[1:]
failures = []


def check(ok, what):
    print(("ok    " if ok else "FAIL  ") + what)
    if not ok:
        failures.append(what)


def blake2b_256(path):
    h = hashlib.blake2b(digest_size=32)
    with open(path, "rb") as f:
        h.update(f.read())
    return h.hexdigest()


def rebuild(where, epoch, tz, lang, umask):
    env = dict(os.environ, SOURCE_DATE_EPOCH=str(epoch), TZ=tz, LANG=lang, LC_ALL=lang)
    old = os.umask(umask)
    try:
        r = subprocess.run([REBUILD] + (["--full"] if FULL else []) + [where],
                           capture_output=True, text=True, env=env, timeout=3600)
    finally:
        os.umask(old)
    check(r.returncode == 0, f"tools/rebuild {where}: exit {r.returncode} {r.stderr[-2000:]}")
    return r.stdout.splitlines()


def main():
    with tempfile.TemporaryDirectory(prefix="podcap-repro-") as tmp:
        a = os.path.join(tmp, "a")
        b = os.path.join(tmp, "second", "checkout-of-podcap")
        out_a = rebuild(a, 0, "UTC", "C", 0o022)
        out_b = rebuild(b, 1893456000, "Pacific/Auckland", "C.UTF-8", 0o077)
        ids = [ln for ln in out_a if re.fullmatch(r"\S+ \S+ build [0-9a-f]{64}", ln)]
        check(len(ids) >= 3, f"podcapd, podcap-verify and podcap-keygen print build ids: {out_a}")
        check(out_a == out_b, "both builds print the same build ids and file hashes:\n  "
              + "\n  ".join(sorted(set(out_a) ^ set(out_b))))
        for line in ids:
            prog, _, _, hexid = line.split()
            for top in (a, b):
                exe = subprocess.run(["find", os.path.join(top, "podcap", "build"), "-name", prog,
                                      "-type", "f"], capture_output=True, text=True).stdout.split()
                check(len(exe) == 1 and blake2b_256(exe[0]) == hexid,
                      f"{prog}'s build id is the BLAKE2b-256 of its file in {top}")
                if len(exe) == 1:
                    with open(exe[0], "rb") as f:
                        data = f.read()
                    check(tmp.encode() not in data, f"{prog} built in {top} names no build directory")
    if failures:
        print(f"{len(failures)} check(s) failed", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
