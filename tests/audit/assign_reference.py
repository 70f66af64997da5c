#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""An independent implementation of podcap-audit assign, from its
definition in docs/config.md ("Randomized assignment"), in Python with the
ChaCha20 of python3-cryptography rather than libsodium: for several seeds and
constraints, the assignment podcap-audit prints must be this one, every map
it writes these bytes (ids YAML would read otherwise quoted, a template
without a final newline ended), and its commitment BLAKE2b-256 of the seed.
Also the golden values of tests/unit/test_assign.c.

  assign_reference.py PODCAP_AUDIT
"""
import hashlib
import os
import re
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


# Letters alone that YAML 1.1 or 1.2 reads as a boolean or null, in any case.
WORDS = {"y", "n", "yes", "no", "true", "false", "on", "off", "null"}


def scalar(s):
    """An id as the maps write it: as it is when it starts with a letter and is none of WORDS,
    in double quotes otherwise."""
    if re.fullmatch(r"[A-Za-z][A-Za-z0-9._-]*", s) and s.lower() not in WORDS:
        return s
    return f'"{s}"'


def write_map(tmpl, app, ups, pods, up):
    """ups: [(appliance, name, pod_port, fabric_port)] sorted; pods: [(id, cell, prefixes)]
    sorted by id; up: each pod's uplink index."""
    text = tmpl.replace("@APPLIANCE@", app)
    if text and not text.endswith("\n"):
        text += "\n"
    text += "uplinks:\n"
    for a, name, pp, fp in ups:
        if a == app:
            text += f"  - name: {scalar(name)}\n    pod_port: {pp}\n    fabric_port: {fp}\n"
    text += "pods:\n"
    for (pid, _, prefixes), u in zip(pods, up):
        if ups[u][0] == app:
            text += f"  - id: {scalar(pid)}\n    uplink: {scalar(ups[u][1])}\n"
            if prefixes:
                text += "    prefixes: [" + ", ".join(prefixes) + "]\n"
    return text


def write_inputs(tmp, pods, ups, tmpl):
    with open(f"{tmp}/pods.txt", "w") as f:
        for pid, cell, prefixes in reversed(pods):
            f.write(f"{pid} {cell or '-'} {','.join(prefixes) or '-'}\n")
    with open(f"{tmp}/uplinks.txt", "w") as f:
        for u in ups:
            f.write(" ".join(u) + "\n")
    with open(f"{tmp}/tmpl.yaml", "w") as f:
        f.write(tmpl)


def compare(tmp, n, seed, max_per, separate, pods, ups, tmpl):
    """One draw by podcap-audit and by the reference: the placements printed and the maps'
    bytes. Returns what differs."""
    want = assign(seed, [(pid, cell) for pid, cell, _ in pods], len(ups), max_per, separate)
    args = [AUDIT, "assign", "--pods", f"{tmp}/pods.txt", "--uplinks", f"{tmp}/uplinks.txt",
            "--seed", seed.hex(), "--template", f"{tmp}/tmpl.yaml", "--out", f"{tmp}/out{n}"]
    if max_per:
        args += ["--max-pods-per-uplink", str(max_per)]
    if separate:
        args += ["--separate-cells"]
    p = subprocess.run(args, capture_output=True, text=True)
    if want is None:
        return [] if p.returncode == 1 else [f"case {n}: no assignment, but podcap-audit exits "
                                             f"{p.returncode}"]
    got = {ln.split()[1]: (ln.split()[3], ln.split()[5]) for ln in p.stdout.splitlines()
           if ln.startswith("pod ")}
    expect = {pid: ups[want[i]][:2] for i, (pid, _, _) in enumerate(pods)}
    if p.returncode != 0 or got != expect:
        return [f"case {n} (max {max_per}, separate {separate}): podcap-audit {got} (exit "
                f"{p.returncode}: {p.stderr.strip()}), reference {expect}"]
    out = []
    apps = sorted({u[0] for u in ups})
    if sorted(os.listdir(f"{tmp}/out{n}")) != [f"{a}.yaml" for a in apps]:
        out.append(f"case {n}: podcap-audit wrote {sorted(os.listdir(f'{tmp}/out{n}'))}")
    for a in apps:
        path = f"{tmp}/out{n}/{a}.yaml"
        have = open(path).read() if os.path.exists(path) else None
        if have != write_map(tmpl, a, ups, pods, want):
            out.append(f"case {n}: {a}.yaml is not the reference's map:\n{have}\nreference:\n"
                       f"{write_map(tmpl, a, ups, pods, want)}")
    return out


# Ids the id rule allows that YAML would read otherwise, and ordinary ones beside them.
ODD_IDS = ["null", "NULL", "-", "-x", "-1", "true", "False", "yes", "No", "on", "OFF", "y", "1e3",
           "0x10", "017", "1_000", "1.5", ".5", ".inf", ".nan", "2024-01-01", ".", "_", "web",
           "pod-0", "nulls"]


def main():
    failures = []
    seed0 = bytes(range(32))
    golden = shuffle(Stream(seed0), 10)
    print("shuffle of 10 under seed 00..1f:", golden)
    tmp = tempfile.mkdtemp(prefix="podcap-assign-ref-")
    try:
        pods = sorted((f"pod-{i:02d}", f"cell-{i // 3}", [f"10.{11 - i}.0.0/24"])
                      for i in range(12))
        ups = sorted((a, u, f"net_null_{a}_{u}_p", f"net_null_{a}_{u}_f") for a, u in
                     [("rack1", "up0"), ("rack1", "up1"), ("rack2", "up0"), ("rack2", "up1"),
                      ("rack3", "up0")])
        tmpl = "appliance:\n  id: @APPLIANCE@\n"
        write_inputs(tmp, pods, ups, tmpl)
        cases = [(seed0, 0, False), (seed0, 3, True)]
        cases += [(hashlib.blake2b(bytes([k]), digest_size=32).digest(), k % 4, k % 2 == 1)
                  for k in range(12)]
        for n, (seed, max_per, separate) in enumerate(cases):
            failures += compare(tmp, n, seed, max_per, separate, pods, ups, tmpl)
        # ids and uplink names YAML would read otherwise, a template without a final newline
        pods = sorted((pid, "", [f"10.1.{i}.0/24", f"fd00:{i}::/64"] if i % 3 else [f"10.1.{i}.0/24"])
                      for i, pid in enumerate(ODD_IDS))
        ups = sorted((a, u, f"net_null_{a}{u}_p", f"net_null_{a}{u}_f") for a in ("rack1", "rack2")
                     for u in ("on", "-", "0x1", "up0"))
        tmpl = "appliance:\n  id: @APPLIANCE@\nwindow: 60s"
        write_inputs(tmp, pods, ups, tmpl)
        odd = [(hashlib.blake2b(b"odd" + bytes([k]), digest_size=32).digest(), 0, False)
               for k in range(6)]
        for n, (seed, max_per, separate) in enumerate(odd, start=len(cases)):
            failures += compare(tmp, n, seed, max_per, separate, pods, ups, tmpl)
        cases += odd
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
