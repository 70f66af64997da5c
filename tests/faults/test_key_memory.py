#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The secret key stays in the signer's undumpable memory, and nowhere else.

podcapd runs with traffic and signs a few checkpoints. Then, while it runs:
- podcapd's own memory (every readable mapping, read through /proc/PID/mem:
  all that a core dump of it could hold) contains the key in no form: not
  the 32-byte seed, not the 64-byte libsodium secret key, not the expanded
  SHA-512 scalar and prefix, not the key's base64, hex or file text;
- in the signer, every copy of the seed or secret key lies in a mapping
  marked VmFlags `dd` (MADV_DONTDUMP: never in a core dump), at least one
  copy is found (else this test would prove nothing), and core dumps are off
  (RLIMIT_CORE 0);
- no log line of podcap-keygen or podcapd shows the key in any encoding.
"""
import base64
import hashlib
import os
import re
import subprocess
import sys
import tempfile
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "integration"))
sys.path.insert(0, HERE)
import faultlib  # noqa: E402
from faultlib import Checks, Podcapd  # noqa: E402

faultlib.enter("reads another process's memory")

PODCAPD, KEYGEN = sys.argv[1:3]



def key_material(path):
    """Every form of the secret: binary needles and text needles."""
    line = open(path).read().strip()
    # PRIVATE+KEY+name+id+data and name+id+data: the base64 data may hold a "+" itself
    key_b64 = line.split("+", 4)[4]
    data = base64.b64decode(key_b64)
    seed = data[1:]
    pub = open(path + ".pub").read().strip()
    pk = base64.b64decode(pub.split("+", 2)[2])[1:]
    h = bytearray(hashlib.sha512(seed).digest())
    scalar = bytes(h[:32])
    h[0] &= 248
    h[31] &= 127
    h[31] |= 64
    binary = {"seed": seed, "secret key": seed + pk, "SHA-512 scalar": scalar,
              "clamped scalar": bytes(h[:32]), "nonce prefix": bytes(h[32:])}
    text = {"key file line": line, "base64 of 0x01||seed": key_b64,
            "base64 of seed": base64.b64encode(seed).decode(),
            "base64 of secret key": base64.b64encode(seed + pk).decode(),
            "hex of seed": seed.hex(), "HEX of seed": seed.hex().upper(),
            "hex of secret key": (seed + pk).hex()}
    for k, v in list(text.items()):
        binary[k] = v.encode()
    return binary, text


def regions(pid):
    """(start, end, perms, name, vmflags) of every mapping, from smaps."""
    out, cur = [], None
    with open(f"/proc/{pid}/smaps") as f:
        for ln in f:
            m = re.match(r"([0-9a-f]+)-([0-9a-f]+) (\S+) \S+ \S+ \S+\s*(.*)", ln)
            if m:
                cur = [int(m[1], 16), int(m[2], 16), m[3], m[4], ""]
                out.append(cur)
            elif ln.startswith("VmFlags:") and cur is not None:
                cur[4] = ln.split(":", 1)[1].split()
    return out


def find_in_memory(pid, needles):
    """{needle name: [(address, region)]} over every readable mapping."""
    found = {k: [] for k in needles}
    scanned = 0
    with open(f"/proc/{pid}/mem", "rb", buffering=0) as mem:
        for reg in regions(pid):
            start, end, perms, name = reg[:4]
            if "r" not in perms or name in ("[vvar]", "[vsyscall]"):
                continue
            chunk = 1 << 22
            for off in range(start, end, chunk):
                # overlap by the longest needle so that none is cut in two
                n = min(chunk + 256, end - off)
                try:
                    mem.seek(off)
                    buf = mem.read(n)
                except OSError:
                    continue
                scanned += len(buf)
                for k, v in needles.items():
                    i = buf.find(v)
                    while i >= 0:
                        if i < chunk:
                            found[k].append((off + i, reg))
                        i = buf.find(v, i + 1)
    return found, scanned


def signer_of(pid):
    for p in os.listdir("/proc"):
        if not p.isdigit():
            continue
        try:
            stat = open(f"/proc/{p}/stat").read()
        except OSError:
            continue
        comm = stat[stat.index("(") + 1:stat.rindex(")")]
        ppid = int(stat[stat.rindex(")") + 2:].split()[1])
        if ppid == pid and comm == "podcap-signer":
            return int(p)
    return None


def main():
    check = Checks()
    with tempfile.TemporaryDirectory(prefix="podcap-keymem-") as d:
        faultlib.traffic(d, size=500)
        kg = subprocess.run([KEYGEN, "--out", f"{d}/appliance.key", "--name", "podcap/keymem"],
                            capture_output=True, text=True)
        check(kg.returncode == 0, "podcap-keygen makes a key")
        binary, text = key_material(f"{d}/appliance.key")
        pd = Podcapd(PODCAPD, KEYGEN, d, "keymem")
        pd.write_config(pd.appliance_yaml() + faultlib.pod_map(d, "keymem"))
        if not check(pd.start(), "podcapd starts"):
            print(pd.log())
            return 1
        time.sleep(3.5)
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        with opener.open(f"http://127.0.0.1:{pd.port()}/v1/checkpoint", timeout=10) as r:
            note = r.read().decode()
        check("\u2014 podcap/keymem " in note, "the signer has signed checkpoints with the key")

        t0 = time.time()
        found, scanned = find_in_memory(pd.proc.pid, binary)
        for k, hits in found.items():
            check(hits == [], f"podcapd's memory holds no {k} ({len(hits)} copies)")
        check(scanned > 200 << 20, f"all of podcapd's memory was read ({scanned >> 20} MiB, "
              f"{time.time() - t0:.1f} s)")

        spid = signer_of(pd.proc.pid)
        if check(spid is not None, "the signer process is found"):
            limits = open(f"/proc/{spid}/limits").read()
            check(re.search(r"Max core file size\s+0\s+0", limits) is not None,
                  "the signer writes no core dump (RLIMIT_CORE 0)")
            sfound, _ = find_in_memory(spid, binary)
            check(sfound["seed"] != [], f"the signer holds the key ({len(sfound['seed'])} copies of the seed)")
            for k, hits in sfound.items():
                loose = [(hex(a), r[3] or "anonymous", " ".join(r[4])) for a, r in hits if "dd" not in r[4]]
                check(loose == [], f"every copy of the {k} in the signer is in MADV_DONTDUMP "
                      f"memory ({len(hits)} copies; outside: {loose[:3]})")
        check(pd.stop() == 0, "podcapd stops cleanly")

        logs = kg.stdout + kg.stderr + pd.stdout() + pd.log()
        for k, v in text.items():
            check(v not in logs and v.lower() not in logs.lower(), f"no log shows the {k}")
    return check.finish()


sys.exit(main())
