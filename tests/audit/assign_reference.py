#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""An independent implementation of podcap-audit assign, from its
definition in docs/config.md ("Randomized assignment"), in Python with the
ChaCha20 of python3-cryptography rather than libsodium: for several seeds and
constraints, the assignment podcap-audit prints must be this one, and its
commitment BLAKE2b-256 of the seed. Also the golden values of
tests/unit/test_assign.c.

  assign_reference.py PODCAP_AUDIT
"""
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile

from cryptography.hazmat.primitives.ciphers import Cipher, algorithms

AUDIT = os.path.abspath(sys.argv[1])


class Stream:
    """randombytes_buf_deterministic(seed): ChaCha20, nonce "LibsodiumDRG", counter 0."""

    def __init__(self, seed):
        # python3-cryptography's ChaCha20 takes a 16-byte nonce: the 32-bit
        # little-endian block counter, then the 96-bit nonce (RFC 8439)
        self.enc = Cipher(algorithms.ChaCha20(seed, b"\0\0\0\0" + b"LibsodiumDRG"), None).encryptor()

    def word(self):
        return int.from_bytes(self.enc.update(b"\0" * 4), "big")

    def below(self, k):
        limit = 2**32 - 2**32 % k
        while True:
            x = self.word()
            if x < limit:
                return x % k


def shuffle(s, n):
    perm = list(range(n))
    for i in range(n, 1, -1):
        j = s.below(i)
        perm[i - 1], perm[j] = perm[j], perm[i - 1]
    return perm


def assign(seed, pods, nups, max_per=0, separate=False):
    """pods: [(id, cell)] sorted by id; returns each pod's uplink index."""
    s = Stream(seed)
    for _ in range(1000):
        perm, uperm = shuffle(s, len(pods)), shuffle(s, nups)
        up, count, ok = {}, [0] * nups, True
        for i, p in enumerate(perm):
            for t in range(nups):
                u = uperm[(i + t) % nups]
                if max_per and count[u] >= max_per:
                    continue
                if separate and pods[p][1] and any(
                        up.get(q) == u and pods[q][1] == pods[p][1] for q in perm[:i]):
                    continue
                up[p], count[u] = u, count[u] + 1
                break
            else:
                ok = False
                break
        if ok:
            return [up[p] for p in range(len(pods))]
    return None


def main():
    failures = []
    seed0 = bytes(range(32))
    golden = shuffle(Stream(seed0), 10)
    print("shuffle of 10 under seed 00..1f:", golden)
    tmp = tempfile.mkdtemp(prefix="podcap-assign-ref-")
    try:
        pods = [(f"pod-{i:02d}", f"cell-{i // 3}") for i in range(12)]
        ups = sorted([("rack1", "up0"), ("rack1", "up1"), ("rack2", "up0"), ("rack2", "up1"),
                      ("rack3", "up0")])
        with open(f"{tmp}/pods.txt", "w") as f:
            for i, (pid, cell) in enumerate(reversed(pods)):
                f.write(f"{pid} {cell} 10.{i}.0.0/24\n")
        with open(f"{tmp}/uplinks.txt", "w") as f:
            for a, u in ups:
                f.write(f"{a} {u} net_null_{a}_{u}_p net_null_{a}_{u}_f\n")
        with open(f"{tmp}/tmpl.yaml", "w") as f:
            f.write("appliance:\n  id: @APPLIANCE@\n")
        cases = [(seed0, 0, False), (seed0, 3, True)]
        cases += [(hashlib.blake2b(bytes([k]), digest_size=32).digest(), k % 4, k % 2 == 1)
                  for k in range(12)]
        for n, (seed, max_per, separate) in enumerate(cases):
            want = assign(seed, pods, len(ups), max_per, separate)
            args = [AUDIT, "assign", "--pods", f"{tmp}/pods.txt", "--uplinks", f"{tmp}/uplinks.txt",
                    "--seed", seed.hex(), "--template", f"{tmp}/tmpl.yaml", "--out", f"{tmp}/out{n}"]
            if max_per:
                args += ["--max-pods-per-uplink", str(max_per)]
            if separate:
                args += ["--separate-cells"]
            p = subprocess.run(args, capture_output=True, text=True)
            if want is None:
                if p.returncode != 1:
                    failures.append(f"case {n}: no assignment, but podcap-audit exits {p.returncode}")
                continue
            got = {ln.split()[1]: (ln.split()[3], ln.split()[5]) for ln in p.stdout.splitlines()
                   if ln.startswith("pod ")}
            expect = {pid: ups[want[i]] for i, (pid, _) in enumerate(pods)}
            if p.returncode != 0 or got != expect:
                failures.append(f"case {n} (max {max_per}, separate {separate}): podcap-audit "
                                f"{got} (exit {p.returncode}: {p.stderr.strip()}), reference {expect}")
        c = subprocess.run([AUDIT, "commit", "--seed", seed0.hex()], capture_output=True, text=True)
        want_c = hashlib.blake2b(seed0, digest_size=32).hexdigest()
        if c.stdout.strip() != f"commitment {want_c}":
            failures.append(f"commitment {c.stdout.strip()!r}, reference {want_c}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    for f in failures:
        print("FAIL: " + f)
    print(f"{len(cases)} assignments compared, {len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
