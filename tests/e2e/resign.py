#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The operator's lie: a copy of a ledger with one window's bytes hidden, re-signed.

    resign.py LEDGER KEY OUT POD DIR HIDE_BYTES [SKIP_UTC...]

Copies the ledger LEDGER to OUT with the WINDOW record in which POD passed
the most bytes in direction DIR (up or down), of those not starting at a
SKIP_UTC time (e.g. 2024-01-01T00:00:03Z), claiming HIDE_BYTES fewer,
recomputes the leaf hashes and the RFC 6962 root, and signs a checkpoint
with the appliance's key KEY (libsodium, as podcapd's signer does): a log
that passes every check of podcap-verify on its own. Prints the window's
start (ns) and the bytes it now claims.
"""
import base64
import ctypes
import ctypes.util
import datetime
import hashlib
import os
import struct
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "integration"))
from daemon import ledger_entries  # noqa: E402


def pass_bytes_offsets(rec, pod, direction):
    """Offset of POD's pass_bytes for the direction in a WINDOW record, or None."""
    off = 3 + rec[2] + 32 + 64
    npods = struct.unpack(">I", rec[off:off + 4])[0]
    off += 4
    for _ in range(npods):
        idlen = rec[off]
        pid = rec[off + 1:off + 1 + idlen].decode()
        off += 1 + idlen
        off += 1 + rec[off]
        off += 8 + 8 + 1
        if pid == pod:
            return off + (0 if direction == "up" else 64) + 8
        off += 2 * 64
    return None


def leaf(rec):
    return hashlib.sha256(b"\x00" + bytes(rec)).digest()


def root(leaves):
    if not leaves:
        return hashlib.sha256(b"").digest()
    if len(leaves) == 1:
        return leaves[0]
    k = 1
    while k * 2 < len(leaves):
        k *= 2
    return hashlib.sha256(b"\x01" + root(leaves[:k]) + root(leaves[k:])).digest()


def sign(key_path, body):
    with open(key_path) as f:
        text = f.read().strip()
    # PRIVATE+KEY+<name>+<key id>+<base64(0x01 || seed)>; the base64 may hold '+'
    name, keyid, b64 = text[len("PRIVATE+KEY+"):].split("+", 2)
    keyid, blob = bytes.fromhex(keyid), base64.b64decode(b64)
    seed = blob[1:]
    sodium = ctypes.CDLL(ctypes.util.find_library("sodium") or "libsodium.so.23")
    pk, sk = ctypes.create_string_buffer(32), ctypes.create_string_buffer(64)
    sodium.crypto_sign_seed_keypair(pk, sk, seed)
    sig = ctypes.create_string_buffer(64)
    sodium.crypto_sign_detached(sig, None, body, ctypes.c_ulonglong(len(body)), sk)
    line = "\u2014 " + name + " " + base64.b64encode(keyid + sig.raw).decode() + "\n"
    return body + b"\n" + line.encode()


def main():
    ledger, key, out, pod, direction, hide = sys.argv[1:7]
    hide = int(hide)
    skip = {int(datetime.datetime.strptime(t, "%Y-%m-%dT%H:%M:%SZ").replace(
        tzinfo=datetime.timezone.utc).timestamp()) * 10**9 for t in sys.argv[7:]}
    recs = ledger_entries(ledger)
    best, best_bytes = None, -1
    for i, r in enumerate(recs):
        if r[1] != 2:
            continue
        o = pass_bytes_offsets(r, pod, direction)
        if struct.unpack(">Q", r[3 + r[2] + 8:3 + r[2] + 16])[0] in skip:
            continue
        if o is not None and struct.unpack(">Q", r[o:o + 8])[0] > best_bytes:
            best, best_bytes = i, struct.unpack(">Q", r[o:o + 8])[0]
    if best is None or best_bytes < hide:
        sys.exit(f"resign: no window of {pod} {direction} passed {hide} bytes")
    r = recs[best]
    o = pass_bytes_offsets(r, pod, direction)
    r[o:o + 8] = struct.pack(">Q", best_bytes - hide)
    os.makedirs(out, exist_ok=True)
    leaves = [leaf(x) for x in recs]
    with open(f"{out}/records", "wb") as f:
        for x, h in zip(recs, leaves):
            f.write(struct.pack(">I", len(x)) + bytes(x) + h)
    with open(f"{out}/hashes", "wb") as f:
        f.write(b"".join(leaves))
    with open(f"{ledger}/origin", "rb") as f:
        origin = f.read()
    with open(f"{out}/origin", "wb") as f:
        f.write(origin)
    body = (origin.decode().strip() + "\n" + str(len(recs)) + "\n" +
            base64.b64encode(root(leaves)).decode() + "\n").encode()
    with open(f"{out}/checkpoint", "wb") as f:
        f.write(sign(key, body))
    start = struct.unpack(">Q", r[3 + r[2] + 8:3 + r[2] + 16])[0]
    print(start, best_bytes - hide)


main()
