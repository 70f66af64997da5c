# SPDX-License-Identifier: BSD-3-Clause
"""What the attestation tests read of a ledger, written independently of podcap's C.

records(ledger_dir) -> [bytes]; rtype(rec); attest(rec) -> dict of an ATTEST
record's fields (docs/log-format.md); root(records, n) the RFC 6962 root of the
first n; qualifying(...) the qualifying data of src/log/attest.h; and
the IMA side the harness plays: ima_ng_line() and template_hash().
"""
import hashlib
import struct


def records(ledger):
    out = []
    with open(f"{ledger}/records", "rb") as f:
        data = f.read()
    off = 0
    while off < len(data):
        (n,) = struct.unpack(">I", data[off:off + 4])
        out.append(data[off + 4:off + 4 + n])
        off += 4 + n + 32
    return out


def rtype(rec):
    return rec[1]


def header(rec):
    n = rec[2]
    off = 3 + n
    t, start, wlen, count = struct.unpack(">QQQQ", rec[off:off + 32])
    digest = rec[off + 32:off + 64]
    build = rec[off + 64:off + 96]
    return {"appliance": rec[3:3 + n].decode(), "time": t, "start": start, "len": wlen, "count": count,
            "digest": digest, "build": build, "end": off + 96}


def attest(rec):
    h = header(rec)
    off = h["end"]
    npods, = struct.unpack(">I", rec[off:off + 4])
    nlinks, = struct.unpack(">I", rec[off + 4:off + 8])
    assert npods == 0 and nlinks == 0
    off += 8
    size, = struct.unpack(">Q", rec[off:off + 8])
    root = rec[off + 8:off + 40]
    key_kind = rec[off + 40]
    off += 41
    qlen, = struct.unpack(">H", rec[off:off + 2])
    quote = rec[off + 2:off + 2 + qlen]
    off += 2 + qlen
    slen, = struct.unpack(">H", rec[off:off + 2])
    sig = rec[off + 2:off + 2 + slen]
    off += 2 + slen
    alg, mask = struct.unpack(">HI", rec[off:off + 6])
    off += 6
    pcrs = {}
    for i in range(24):
        if mask & (1 << i):
            pcrs[i] = rec[off:off + 32]
            off += 32
    ilen, = struct.unpack(">I", rec[off:off + 4])
    ima = rec[off + 4:off + 4 + ilen]
    assert off + 4 + ilen == len(rec)
    return dict(h, size=size, root=root, key_kind=key_kind, quote=quote, sig=sig, alg=alg, mask=mask, pcrs=pcrs,
                ima=ima, tail=h["end"] + 8)


def _leaf(b):
    return hashlib.sha256(b"\x00" + b).digest()


def _node(a, b):
    return hashlib.sha256(b"\x01" + a + b).digest()


def _mth(leaves):
    if len(leaves) == 1:
        return leaves[0]
    k = 1
    while k * 2 < len(leaves):
        k *= 2
    return _node(_mth(leaves[:k]), _mth(leaves[k:]))


def root(recs, n):
    if n == 0:
        return hashlib.sha256(b"").digest()
    return _mth([_leaf(r) for r in recs[:n]])


def qualifying(vk_line, digest, build, size, root_, key_kind=0):
    """src/log/attest.h, from the verifier key line NAME+ID+BASE64."""
    import base64
    name, keyid, b64 = vk_line.strip().split("+", 2)  # no "+" in a name; base64 may have one
    raw = base64.b64decode(b64)
    pk = raw[1:]  # the signed-note key: an algorithm byte, then the Ed25519 key
    h = hashlib.blake2b(digest_size=32)
    h.update(b"podcap-attest-v1\n" + name.encode() + b"\n" + bytes.fromhex(keyid) + pk +
             digest + build + struct.pack(">Q", size) + root_ + bytes([key_kind]))
    return h.digest()


def template_hash(file_sha256, path):
    """The SHA-256 template hash of an ima-ng entry, as Linux computes it:
    each field with its 32-bit little-endian length: d-ng = "sha256:" NUL
    digest, n-ng = the path and a NUL."""
    d = b"sha256:\x00" + file_sha256
    n = path.encode() + b"\x00"
    return hashlib.sha256(struct.pack("<I", len(d)) + d + struct.pack("<I", len(n)) + n).digest()


def ima_ng_line(file_sha256, path):
    return f"10 {template_hash(file_sha256, path).hex()} ima-ng sha256:{file_sha256.hex()} {path}\n"


def file_sha256(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).digest()


def write_ledger(path, origin, recs, secret_key_file):
    """A ledger directory holding recs, with a checkpoint signed by the key:
    what an operator holding the appliance's key could write (a forger)."""
    import base64
    import os
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
    with open(secret_key_file) as f:
        _, _, name, keyid, b64 = f.read().strip().split("+", 4)
    sk = Ed25519PrivateKey.from_private_bytes(base64.b64decode(b64)[1:])
    os.makedirs(path)
    leaves = [_leaf(r) for r in recs]
    with open(f"{path}/origin", "w") as f:
        f.write(origin + "\n")
    with open(f"{path}/records", "wb") as f:
        for r, h in zip(recs, leaves):
            f.write(struct.pack(">I", len(r)) + r + h)
    with open(f"{path}/hashes", "wb") as f:
        f.write(b"".join(leaves))
    body = f"{origin}\n{len(recs)}\n{base64.b64encode(root(recs, len(recs))).decode()}\n"
    sig = sk.sign(body.encode())
    line = "\u2014 " + name + " " + base64.b64encode(bytes.fromhex(keyid) + sig).decode() + "\n"
    with open(f"{path}/checkpoint", "w") as f:
        f.write(body + "\n" + line)
