#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""A minimal podcap log server over a ledger directory, for tests.

Serves the read endpoints of docs/log-format.md ("HTTP endpoints") from the
files of a ledger directory, written from that document alone (Merkle
proofs included), so that podcap-verify --url is checked against an
independent implementation:

  serve.py --ledger DIR --port-file FILE [--max-records N]

Listens on 127.0.0.1 at a free port, writes the port to FILE, and exits by
itself after 300 seconds.
"""

import argparse
import base64
import hashlib
import http.server
import os
import sys
import time
import urllib.parse


def read_ledger(path):
    with open(path + "/records", "rb") as f:
        data = f.read()
    recs, off = [], 0
    while off + 4 <= len(data):
        n = int.from_bytes(data[off:off + 4], "big")
        if off + 4 + n + 32 > len(data):
            break
        recs.append(data[off + 4:off + 4 + n])
        off += 4 + n + 32
    with open(path + "/checkpoint", "rb") as f:
        note = f.read()
    return recs, note


def leaf_hash(rec):
    return hashlib.sha256(b"\x00" + rec).digest()


def node_hash(left, right):
    return hashlib.sha256(b"\x01" + left + right).digest()


def split(n):
    k = 1
    while k * 2 < n:
        k *= 2
    return k


def mth(hashes):
    if not hashes:
        return hashlib.sha256(b"").digest()
    if len(hashes) == 1:
        return hashes[0]
    k = split(len(hashes))
    return node_hash(mth(hashes[:k]), mth(hashes[k:]))


def subproof(m, hashes, complete):
    """RFC 9162 2.1.4.1 SUBPROOF(m, D[n], b)."""
    n = len(hashes)
    if m == n:
        return [] if complete else [mth(hashes)]
    k = split(n)
    if m <= k:
        return subproof(m, hashes[:k], complete) + [mth(hashes[k:])]
    return subproof(m - k, hashes[k:], False) + [mth(hashes[:k])]


def inclusion(index, hashes):
    """RFC 9162 2.1.3.1 PATH(m, D[n])."""
    n = len(hashes)
    if n == 1:
        return []
    k = split(n)
    if index < k:
        return inclusion(index, hashes[:k]) + [mth(hashes[k:])]
    return inclusion(index - k, hashes[k:]) + [mth(hashes[:k])]


class Handler(http.server.BaseHTTPRequestHandler):
    recs = []
    note = b""
    size = 0

    def log_message(self, fmt, *args):
        pass

    def reply(self, status, body, ctype="text/plain; charset=utf-8"):
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        url = urllib.parse.urlsplit(self.path)
        q = {k: int(v[0]) for k, v in urllib.parse.parse_qs(url.query).items()}
        hashes = [leaf_hash(r) for r in self.recs[:self.size]]
        try:
            if url.path == "/v1/checkpoint":
                self.reply(200, self.note)
            elif url.path == "/v1/records":
                first, count = q["from"], min(q["count"], 1000)
                body = b"".join(len(r).to_bytes(4, "big") + r
                                for r in self.recs[first:min(first + count, self.size)])
                self.reply(200, body, "application/octet-stream")
            elif url.path == "/v1/proof/consistency":
                old, new = q["old"], q["new"]
                if not 0 < old <= new <= self.size:
                    raise ValueError("bad sizes")
                proof = subproof(old, hashes[:new], True)
                self.reply(200, b"".join(base64.b64encode(h) + b"\n" for h in proof))
            elif url.path == "/v1/proof/inclusion":
                index, size = q["index"], q["size"]
                if not 0 <= index < size <= self.size:
                    raise ValueError("bad index")
                proof = inclusion(index, hashes[:size])
                self.reply(200, b"".join(base64.b64encode(h) + b"\n" for h in proof))
            else:
                self.reply(404, b"not found\n")
        except (KeyError, ValueError):
            self.reply(400, b"bad request\n")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ledger", required=True)
    ap.add_argument("--port-file", required=True)
    ap.add_argument("--max-records", type=int, default=None)
    a = ap.parse_args()
    recs, note = read_ledger(a.ledger)
    size = int(note.split(b"\n")[1])
    if a.max_records is not None:
        recs = recs[:a.max_records]
    Handler.recs, Handler.note, Handler.size = recs, note, min(size, len(recs))
    srv = http.server.HTTPServer(("127.0.0.1", 0), Handler)
    srv.timeout = 1
    with open(a.port_file + ".tmp", "w") as f:
        f.write(str(srv.server_address[1]))
    os.rename(a.port_file + ".tmp", a.port_file)
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        srv.handle_request()
    return 0


if __name__ == "__main__":
    sys.exit(main())
