#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""podcap-witness on loopback, against podcapd's witness client.

Real HTTP both ways, ledgers written by podcap-ledger-gen and signed with
real keys. Checks, each failing if the feature breaks:
  - --print-key: a type 0x04 vkey whose id is SHA-256(name \\n 0x04 pk)[:4],
    computed here;
  - the first checkpoint is cosigned from size 0, a later one after a 409
    that tells the client the witness's size; each cosignature's timestamp
    is the witness's clock and its key id the vkey's;
  - every status tlog-witness defines, sent as raw HTTP: 409 with
    Content-Type text/x.tlog.size and body "<size>\\n", 400, 403, 404, 422
    (also for another root at the size held, and for a size-0 checkpoint
    without the empty tree's root), and 404/405/413 for other paths,
    methods and sizes;
  - GET /<origin hash>/checkpoint: 404 before the first cosignature, then
    the note last cosigned with its cosignature, after a restart too, and
    from a v1 state file once it cosigns again;
  - a forked log (same key, other records) is refused by a witness that saw
    the other branch, from the same size and from a larger one;
  - kill -9 in the middle of submissions, five times: the state file always
    holds a checkpoint the witness cosigned, never less than the last one it
    answered, and cosigning resumes after restart;
  - podcap-verify's --max-witness-delay holds T - E to exactly the delay
    given (its boundary, with the default --clock-skew beside it), and one
    witness's key given twice (even under another name) is exit 2;
  - a witness whose 200 carries a line of its name that does not verify,
    or whose 409 is not text/x.tlog.size, gets nothing kept;
  - a damaged state file or a second witness on the same directory stops it
    from starting.
"""
import base64
import hashlib
import json
import os
import re
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from report_sections import section_cells  # noqa: E402

WITNESS = os.environ["PODCAP_WITNESS"]
SUBMIT = os.environ["WITNESS_SUBMIT"]
KEYGEN = os.environ["PODCAP_KEYGEN"]
LEDGER_GEN = os.environ["PODCAP_LEDGER_GEN"]
SRC = os.environ["PODCAP_SOURCE_ROOT"]
VERIFY = os.environ.get("PODCAP_VERIFY")
FAKETIME_LIBS = ["/usr/lib/x86_64-linux-gnu/faketime/libfaketimeMT.so.1",
                 "/usr/lib/faketime/libfaketimeMT.so.1"]
PODMAP = os.path.join(SRC, "tests/vectors/podmap.yaml")

failures = []


def check(cond, what):
    print(("ok    " if cond else "FAIL  ") + what, flush=True)
    if not cond:
        failures.append(what)
    return cond


def run(*args, **kw):
    return subprocess.run(list(args), capture_output=True, text=True, timeout=60, **kw)


class Witness:
    def __init__(self, d, key, state, logs, env=None):
        self.args = [WITNESS, "--key", key, "--state", state, "--listen", "127.0.0.1:0"]
        for log in logs:
            self.args += ["--log", log]
        self.d = d
        self.env = env
        self.proc = None
        self.port = None

    def start(self):
        self.err = open(os.path.join(self.d, "witness.err"), "a+")
        self.err_start = self.err.seek(0, 2)
        self.proc = subprocess.Popen(self.args, stderr=self.err, env=self.env)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            m = re.search(r"listening on port (\d+)", self.log())
            if m:
                self.port = int(m[1])
                # a restart listens where its clients know it
                self.args[self.args.index("--listen") + 1] = f"127.0.0.1:{self.port}"
                return self
            if self.proc.poll() is not None:
                raise RuntimeError("podcap-witness exited: " + self.log())
            time.sleep(0.05)
        raise RuntimeError("podcap-witness did not start")

    def log(self):
        self.err.flush()
        with open(self.err.name) as f:
            f.seek(self.err_start)
            return f.read()

    @property
    def url(self):
        return f"http://127.0.0.1:{self.port}"

    def kill9(self):
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(timeout=30)

    def stop(self):
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(timeout=30)


def post(url, body, method="POST", path="/add-checkpoint"):
    req = urllib.request.Request(url + path, data=body, method=method)
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.status, r.headers.get("Content-Type", ""), r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.headers.get("Content-Type", ""), e.read()


def b64key(vkey):
    name, kid, data = vkey.strip().split("+", 2)
    return name, kid, base64.b64decode(data)


def ledger(d, name, key, *extra, podmap=PODMAP):
    out = os.path.join(d, name)
    r = run(LEDGER_GEN, "--key", key, "--pod-map", podmap, "--out", out, *extra)
    assert r.returncode == 0, r.stderr
    return out


def note_at(d, key, n, *extra):
    """The checkpoint of the first n records of the long log (--windows 40)."""
    path = os.path.join(d, f"note-{n}{'-'.join(extra)}")
    r = run(LEDGER_GEN, "--key", key, "--pod-map", PODMAP, "--out", os.path.join(d, "scratch"),
            "--windows", "40", "--note-at", str(n), path, *extra)
    shutil.rmtree(os.path.join(d, "scratch"))
    assert r.returncode == 0, r.stderr
    return path


def submit(w, vkey, led, note=None, old=None):
    args = [SUBMIT, w.url, vkey, led] + ([note] if note else []) + (["--old", str(old)] if old is not None else [])
    r = run(*args)
    lines = r.stdout.splitlines()
    head = lines[0].split() if lines else ["none", "0", "0", "0"]
    return r.returncode, head, lines[1] if len(lines) > 1 else r.stderr


def state_of(state_dir, origin):
    name = "log-" + hashlib.sha256(origin.encode()).hexdigest()
    with open(os.path.join(state_dir, name)) as f:
        return f.read().split("\n")


def test_statuses(d, wkey, wvkey, logkey, logpub, otherkey):
    st = os.path.join(d, "state")
    w = Witness(d, wkey, st, [logpub]).start()
    try:
        name, kid, data = b64key(open(wvkey).read())
        origin = open(logpub).read().split("+")[0]
        led = ledger(d, "led", logkey, "--note-at", "5", os.path.join(d, "note5"))
        note5 = os.path.join(d, "note5")
        t0 = int(time.time())
        rc, head, line = submit(w, wvkey, led, note5)
        t1 = int(time.time())
        check(rc == 0 and head[:3] == ["cosigned", "200", "5"], f"size 5 cosigned from 0 ({head})")
        raw = base64.b64decode(line.split(" ")[-1])
        ts = struct.unpack(">Q", raw[4:12])[0]
        check(line.startswith("\u2014 " + name + " ") and raw[:4].hex() == kid and len(raw) == 76,
              "the cosignature line: the witness's name, its 0x04 key id, 4 + 8 + 64 bytes")
        check(t0 <= ts <= t1, f"its timestamp is the witness's clock ({t0} <= {ts} <= {t1})")
        check(state_of(st, origin)[2] == "5", "the state file holds size 5")

        # 422: a proof from 5 with one hash changed, and none at all.
        body = run(SUBMIT, "--request", "5", led).stdout.encode()
        lines = body.split(b"\n")
        bad = bytearray(base64.b64decode(lines[1]))
        bad[0] ^= 1
        lines[1] = base64.b64encode(bytes(bad))
        s, ct, b = post(w.url, b"\n".join(lines))
        check(s == 422 and b"does not verify" in b, f"a changed proof hash: 422 ({s} {b!r})")
        noproof = b"old 5\n\n" + body.split(b"\n\n", 1)[1]
        s, ct, b = post(w.url, noproof)
        check(s == 422, f"no proof from 5 to 15: 422 ({s})")
        # 400: the old size past the checkpoint's; a body that does not parse.
        s, ct, b = post(w.url, b"old 16\n" + body.split(b"\n", 1)[1])
        check(s == 400, f"old 16 for a checkpoint of 15: 400 ({s} {b!r})")
        s, ct, b = post(w.url, b"old 05\n\n" + body.split(b"\n\n", 1)[1])
        check(s == 400 and b"old" in b, f"old 05: 400 with a reason ({s} {b!r})")
        # 403: the log's signature altered.
        i = body.rindex(b" ") + 20
        forged = body[:i] + (b"A" if body[i:i + 1] != b"A" else b"B") + body[i + 1:]
        s, ct, b = post(w.url, forged)
        check(s == 403 and b"bad signature" in b, f"a bad log signature: 403 ({s} {b!r})")
        # 404: a log the witness was not given.
        othermap = os.path.join(d, "other.yaml")
        with open(othermap, "w") as f:
            f.write(open(PODMAP).read().replace("id: vector-1", "id: other-1"))
        other = ledger(d, "other", otherkey, podmap=othermap)
        rc, head, why = submit(w, wvkey, other)
        check(rc == 4 and head[:2] == ["refused", "404"], f"an unknown origin: 404 ({head} {why})")
        # 409 exactly as tlog-witness says.
        body0 = run(SUBMIT, "--request", "0", led).stdout.encode()
        s, ct, b = post(w.url, body0)
        check(s == 409 and ct == "text/x.tlog.size" and b == b"5\n",
              f"old 0 when it holds 5: 409, text/x.tlog.size, '5\\n' ({s} {ct!r} {b!r})")
        # Other paths, methods and sizes.
        s, _, _ = post(w.url, body, path="/")
        check(s == 404, f"POST / is 404 ({s})")
        s, _, _ = post(w.url, None, method="GET")
        check(s == 405, f"GET /add-checkpoint is 405 ({s})")
        s, _, _ = post(w.url, b"old 0\n" + b"A" * 20000)
        check(s == 413, f"a 20 kB body is 413 ({s})")
        check(state_of(st, origin)[2] == "5", "none of those moved the state")

        # The client learns the size from the 409 and proves from it.
        rc, head, line = submit(w, wvkey, led)
        check(rc == 0 and head[:3] == ["cosigned", "200", "15"], f"size 15 cosigned after a 409 ({head})")
        root = open(os.path.join(led, "checkpoint")).read().split("\n")[2]
        check(state_of(st, origin)[2:4] == ["15", root], "the state file holds size 15 and its root")
        rc, head, line = submit(w, wvkey, led)
        check(rc == 0 and head[:2] == ["cosigned", "200"], "the same checkpoint again is cosigned again")

        # A fork: the same key, another second window.
        fork = ledger(d, "fork", logkey, "--over-cap", "--note-at", "5", os.path.join(d, "fork5"))
        check(open(os.path.join(fork, "checkpoint")).read() != open(os.path.join(led, "checkpoint")).read(),
              "the fork's checkpoint differs from the log's at the same size")
        rc, head, why = submit(w, wvkey, fork)
        check(rc == 3 and head[0] == "conflict", f"the fork at the same size is refused: conflict ({head} {why})")
        body = run(SUBMIT, "--request", "15", fork).stdout.encode()
        s, ct, b = post(w.url, body)
        check(s == 422 and b"different root" in b,
              f"... as 422 (v1.0.0 answered 409), a reason in the body ({s} {b!r})")
        rc, head, why = submit(w, wvkey, fork, os.path.join(d, "fork5"))
        check(rc == 3, f"the fork's smaller checkpoint is refused too ({head})")
        check(state_of(st, origin)[2:4] == ["15", root], "the witness still holds the honest log")
        w.stop()
        w2 = Witness(d, wkey, st, [logpub]).start()
        check("at size 15" in w2.log(), "restarted, it holds size 15")
        rc, head, why = submit(w2, wvkey, fork)
        check(rc == 3, "and still refuses the fork after the restart")
        w2.stop()
    finally:
        w.stop()


def sign_checkpoint(keyfile, body):
    """body signed with a podcap-keygen key file (PRIVATE+KEY+name+id+base64(0x01 seed)),
    for checkpoints podcap-ledger-gen cannot write (python3-cryptography)."""
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
    _, _, name, kid, data = open(keyfile).read().strip().split("+", 4)
    sk = Ed25519PrivateKey.from_private_bytes(base64.b64decode(data)[1:])
    sig = base64.b64encode(bytes.fromhex(kid) + sk.sign(body.encode())).decode()
    return (body + "\n\u2014 " + name + " " + sig + "\n").encode()


def get(url, path, method="GET"):
    return post(url, None, method=method, path=path)


def test_empty_tree(d, wkey, wvkey, logkey, logpub):
    """A checkpoint of size 0 is cosigned only with the empty tree's root, SHA-256 of ""
    (422 otherwise, and nothing stored); GET /<origin hash>/checkpoint serves the note last
    cosigned, with the log's signature and the cosignature, across a restart."""
    st = os.path.join(d, "state-empty")
    origin = open(logpub).read().split("+")[0]
    path = "/" + hashlib.sha256(origin.encode()).hexdigest() + "/checkpoint"
    w = Witness(d, wkey, st, [logpub]).start()
    try:
        s, ct, b = get(w.url, path)
        check(s == 404, f"GET {path} before any cosignature: 404 ({s} {b!r})")
        bad = base64.b64encode(b"\x5a" * 32).decode()
        s, ct, b = post(w.url, b"old 0\n\n" + sign_checkpoint(logkey, f"{origin}\n0\n{bad}\n"))
        check(s == 422 and b"empty tree" in b, f"size 0 with another root: 422 ({s} {b!r})")
        check(not os.path.exists(os.path.join(st, "log-" + path[1:65])),
              "... and no state stored for it")
        empty = base64.b64encode(hashlib.sha256(b"").digest()).decode()
        note0 = sign_checkpoint(logkey, f"{origin}\n0\n{empty}\n")
        s, ct, b = post(w.url, b"old 0\n\n" + note0)
        check(s == 200 and b.startswith("\u2014 witness.example/w1 ".encode()),
              f"size 0 with the empty tree's root: 200 ({s} {b!r})")
        check(state_of(st, origin)[2:4] == ["0", empty], "the state holds size 0 and the empty root")
        s, ct, got = get(w.url, path)
        check(s == 200 and got == note0 + b, f"GET serves that note and its cosignature ({s} {got!r})")
        led = ledger(d, "led-empty", logkey)
        rc, head, line = submit(w, wvkey, led)
        check(rc == 0 and head[2] == "15", f"the log then cosigned from size 0 ({head})")
        s, ct, got = get(w.url, path)
        note = open(os.path.join(led, "checkpoint")).read()
        check(s == 200 and got.decode() == note + line + "\n",
              f"GET serves the new note: body, the log's line, the cosignature ({s} {got!r})")
        with open(os.path.join(d, "served"), "wb") as f:
            f.write(got)
        r = run(SUBMIT, "--check", wvkey, os.path.join(d, "served"))
        check(r.returncode == 0, f"... whose cosignature verifies ({r.stdout} {r.stderr})")
        s, ct, b = get(w.url, path, method="HEAD")
        check(s == 200 and b == b"", f"HEAD: 200 without a body ({s})")
        for other, want in ((path.upper().replace("/CHECKPOINT", "/checkpoint"), 404),
                            ("/" + "0" * 64 + "/checkpoint", 404), ("/" + path[1:40] + "/checkpoint", 404)):
            s, ct, b = get(w.url, other)
            check(s == want, f"GET {other[:24]}...: {want} ({s})")
        s, ct, b = post(w.url, b"x", path=path)
        check(s == 405, f"POST {path[:12]}...: 405 ({s})")
        w.stop()
        w = Witness(d, wkey, st, [logpub]).start()
        s, ct, again = get(w.url, path)
        check(s == 200 and again == got, f"restarted, it serves the same note ({s})")
    finally:
        w.stop()
    # A state file of v1 (size and root, no note) still reads; its note comes with the next.
    v1 = "podcap-witness log v1\n" + "\n".join(state_of(st, origin)[1:4]) + "\n"
    with open(os.path.join(st, "log-" + path[1:65]), "w") as f:
        f.write(v1)
    w = Witness(d, wkey, st, [logpub]).start()
    try:
        check("at size 15" in w.log(), "a v1 state file is read: size 15")
        s, ct, b = get(w.url, path)
        check(s == 404, f"... with no note to serve until the next cosignature ({s})")
        rc, head, line = submit(w, wvkey, led, old=15)
        s, ct, got = get(w.url, path)
        check(rc == 0 and s == 200 and got.decode().endswith(line + "\n"),
              f"... which it then serves ({rc} {s})")
    finally:
        w.stop()


def test_kill9(d, wkey, wvkey, logkey, logpub):
    st = os.path.join(d, "state-kill")
    origin = open(logpub).read().split("+")[0]
    led = ledger(d, "long", logkey, "--windows", "40")
    sizes = list(range(2, 42, 3))
    notes = {n: note_at(d, logkey, n) for n in sizes}
    w = Witness(d, wkey, st, [logpub]).start()
    cosigned = 0
    i = 0
    try:
        for cycle in range(5):
            # Submit in a thread and kill -9 while it runs.
            results = []

            def go(n):
                results.append((n, submit(w, wvkey, led, notes[n])))

            start = i
            threads = []
            while i < len(sizes) and i < start + 3:
                th = threading.Thread(target=go, args=(sizes[i],))
                th.start()
                th.join()
                i += 1
            th = threading.Thread(target=go, args=(sizes[min(i, len(sizes) - 1)],))
            th.start()
            time.sleep(0.01 * cycle)
            w.kill9()
            th.join()
            for n, (rc, head, _) in results:
                if rc == 0:
                    cosigned = max(cosigned, n)
            held = int(state_of(st, origin)[2])
            check(held >= cosigned and held in sizes,
                  f"kill -9 #{cycle + 1}: the state holds {held}, a size cosigned, >= the last answered {cosigned}")
            w = Witness(d, wkey, st, [logpub]).start()
            check(f"at size {held}" in w.log(), f"restarted at size {held}")
        rc, head, _ = submit(w, wvkey, led)
        check(rc == 0 and head[2] == "41", f"cosigning resumes: the whole log (41 records) cosigned ({head})")
    finally:
        w.stop()


def test_lying_witness(d, wvkey, logkey):
    """A witness that answers 200 with a line of its name that does not verify, or a
    409 that is not text/x.tlog.size: the client keeps nothing (bad-answer)."""
    import http.server
    name, kid, _ = b64key(open(wvkey).read())
    answers = []

    class Liar(http.server.BaseHTTPRequestHandler):
        def do_POST(self):
            self.rfile.read(int(self.headers["Content-Length"]))
            status, ctype, body = answers.pop(0)
            self.send_response(status)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *a):
            pass

    srv = http.server.HTTPServer(("127.0.0.1", 0), Liar)
    th = threading.Thread(target=srv.serve_forever, daemon=True)
    th.start()
    fake = Witness(d, "", "", [])
    fake.port = srv.server_address[1]
    led = ledger(d, "liar", logkey)
    forged = base64.b64encode(bytes.fromhex(kid) + struct.pack(">Q", int(time.time())) + os.urandom(64))
    answers.append((200, "text/plain", ("\u2014 " + name + " ").encode() + forged + b"\n"))
    rc, head, why = submit(fake, wvkey, led)
    check(rc == 6 and head[0] == "bad-answer", f"a cosignature that does not verify is not kept ({head} {why})")
    answers.append((409, "text/plain", b"3\n"))
    rc, head, why = submit(fake, wvkey, led)
    check(rc == 6, f"a 409 that is not text/x.tlog.size is a bad answer ({head} {why})")
    srv.shutdown()


def test_verify_times(d, logkey, logpub):
    """podcap-verify --witness on logs the witnesses' clocks contradict.

    podcap-ledger-gen's windows are labelled 2024-01-01. Cosigned now, the
    newest window ended long before its first cosignature: a log written
    after the fact. Cosigned by witnesses whose clocks say 2023
    (libfaketime), its labels ran ahead of the cosignature times. Either
    way --witness-quorum 2 fails, naming the newest window and a witness;
    without --witness the same log passes."""
    if not VERIFY:
        return
    lib = next((x for x in FAKETIME_LIBS if os.path.exists(x)), None)
    led = ledger(d, "times", logkey)
    base = [VERIFY, "--key", logpub, "--ledger", led, "--now", "2024-06-01T00:00:00Z"]
    r = run(*base)
    check(r.returncode == 0, f"the log verifies without --witness ({r.returncode})")
    for case, env in (("now", None), ("2023", {"FAKETIME": "@2023-01-01 00:00:00"})):
        if env is not None:
            if not check(lib is not None, "libfaketime is installed (tools/setup installs it)"):
                continue
            # under AddressSanitizer (tools/sanitize) its runtime must come first
            asan = re.search(r"(\S*libasan\.so\S*) => (\S+)", run("ldd", WITNESS).stdout)
            preload = (asan[2] + " " if asan else "") + lib
            env = dict(os.environ, LD_PRELOAD=preload, FAKETIME_DONT_RESET="1", **env)
        note = open(os.path.join(led, "checkpoint")).read()
        vkeys = []
        for i in (1, 2):
            wd = os.path.join(d, f"times-{case}-{i}")
            os.mkdir(wd)
            key = os.path.join(wd, "w.key")
            run(KEYGEN, "--out", key, "--name", f"witness.example/t{i}")
            vk = run(WITNESS, "--key", key, "--print-key").stdout.strip()
            vkeys.append(vk)
            w = Witness(wd, key, os.path.join(wd, "state"), [logpub], env=env).start()
            try:
                vkf = os.path.join(wd, "vkey")
                with open(vkf, "w") as f:
                    f.write(vk + "\n")
                rc, head, line = submit(w, vkf, led)
                check(rc == 0, f"witness {i} ({case}) cosigns the log ({head})")
                note += line + "\n"
            finally:
                w.stop()
        cp = os.path.join(d, f"cosigned-{case}")
        with open(cp, "w") as f:
            f.write(note)
        args = base + ["--checkpoint", cp, "--witness", vkeys[0], "--witness", vkeys[1],
                       "--witness-quorum", "2"]
        r = run(*args)
        if case == "now":
            check(r.returncode == 1 and "after the fact" in r.stdout and "2024-01-01" in r.stdout
                  and "witnesses: 2 of 2 cosigned" in r.stdout,
                  f"cosigned years after its windows: exit 1, named ({r.returncode}: {r.stdout[-400:]})")
            r = run(*(args + ["--max-witness-delay", "30000h"]))
            check(r.returncode == 0, f"... and passes with a delay of 30000 h allowed ({r.returncode}: {r.stdout[-300:]})")
            delay_bound(args)
        else:
            check(r.returncode == 1 and "ran ahead of the witnesses' time" in r.stdout
                  and "witness.example/t" in r.stdout,
                  f"labels ahead of the cosignature times: exit 1, named ({r.returncode}: {r.stdout[-400:]})")
        if case == "now":
            distinct_witnesses(base + ["--checkpoint", cp, "--max-witness-delay", "30000h"], vkeys[0])
        xkey = os.path.join(d, f"x-{case}.key")
        run(KEYGEN, "--out", xkey, "--name", "witness.example/x")
        xvk = run(WITNESS, "--key", xkey, "--print-key").stdout.strip()
        r = run(*(base + ["--checkpoint", cp, "--witness", vkeys[0], "--witness", xvk,
                          "--max-witness-delay", "30000h"]))
        check(r.returncode == 1 and "witnesses: 1 of 2 cosigned the checkpoint, 2 required" in r.stdout
              and "no cosignature by witness.example/x+" in r.stdout,
              f"a witness that did not cosign fails the default quorum, all of them ({r.returncode})")
        if case == "now":
            reports_agree(d, base + ["--checkpoint", cp, "--witness", vkeys[0], "--witness", xvk,
                                     "--max-witness-delay", "30000h"], vkeys[0], xvk)


def distinct_witnesses(args, vk):
    """One witness's key given twice, as it is or under another name, is a usage error
    (exit 2, both named): counted twice, one cosignature would pass as 2 of 2."""
    r = run(*(args + ["--witness", vk, "--witness-quorum", "1"]))
    check(r.returncode == 0, f"one cosignature meets a quorum of 1 ({r.returncode}: {r.stdout[-200:]})")
    name, kid, data = b64key(vk)
    other = "witness.example/alias"
    alias_id = hashlib.sha256(other.encode() + b"\n" + data).digest()[:4].hex()
    alias = f"{other}+{alias_id}+" + base64.b64encode(data).decode()
    for twin, what in ((vk, "key"), (alias, "public key")):
        r = run(*(args + ["--witness", vk, "--witness", twin, "--witness-quorum", "2"]))
        check(r.returncode == 2 and f"has the {what} of the witness {name}+{kid} given before" in r.stderr
              and "witnesses:" not in r.stdout,
              f"--witness K twice ({what}): exit 2, not '2 of 2' ({r.returncode}: {r.stderr[:300]} {r.stdout[-200:]})")


def delay_bound(args):
    """--max-witness-delay is T - E exactly: the delay the report names passes,
    one second less fails, with the default --clock-skew (30 s) not added."""
    r = run(*(args + ["--max-witness-delay", "0s"]))
    m = re.search(r"first cosigned at \S+ by \S+, (\d+) s after it ended", r.stdout)
    if not check(r.returncode == 1 and m is not None, f"--max-witness-delay 0s names the delay ({r.stdout[-300:]})"):
        return
    delay = int(m[1])
    r = run(*(args + ["--max-witness-delay", f"{delay}s"]))
    check(r.returncode == 0, f"a delay of exactly {delay} s allowed passes ({r.returncode}: {r.stdout[-300:]})")
    r = run(*(args + ["--max-witness-delay", f"{delay - 1}s"]))
    check(r.returncode == 1 and f"{delay} s after it ended" in r.stdout,
          f"{delay - 1} s allowed fails, the 30 s of skew not added ({r.returncode}: {r.stdout[-300:]})")


def reports_agree(d, args, cosigned, missing):
    """--json's witnesses section, and --html's from the same run: one of two cosigned."""
    page = os.path.join(d, "witness.html")
    r = run(*(args + ["--json", "--html", page]))
    w = json.loads(r.stdout).get("witnesses") if r.stdout.startswith("{") else None
    key_of = lambda vk: vk.split("+")[0] + "+" + vk.split("+")[1]  # noqa: E731
    check(r.returncode == 1 and w is not None and not w["ok"] and w["cosigned"] == 1
          and w["required"] == 2 and w["keys_total"] == 2 == len(w["keys"])
          and [k["key"] for k in w["keys"]] == [key_of(cosigned), key_of(missing)]
          and w["keys"][0]["cosigned"] and w["keys"][0]["why"] is None
          and not w["keys"][1]["cosigned"] and w["keys"][1]["at"] is None
          and "no cosignature" in w["keys"][1]["why"]
          and w["failures_total"] == len(w["failures"]) >= 1,
          f"--json's witnesses: 1 of 2 cosigned, 2 required, the other named ({w})")
    with open(page) as f:
        cells = section_cells(f.read(), "witnesses")
    want = None if w is None else {
        "cosigned": [str(w["cosigned"])], "required": [str(w["required"])],
        "keys_total": [str(w["keys_total"])], "failure": w["failures"],
        "key": [k["key"] for k in w["keys"]], "at": [k["at"] or "-" for k in w["keys"]],
        "why": [k["why"] or "" for k in w["keys"]]}
    check(cells is not None and cells == want,
          f"--html's witnesses section has --json's figures ({cells} vs {want})")


def test_refusals(d, wkey, logpub):
    st = os.path.join(d, "state")
    w = Witness(d, wkey, st, [logpub]).start()
    try:
        r = run(WITNESS, "--key", wkey, "--state", st, "--log", logpub, "--listen", "127.0.0.1:0")
        check(r.returncode == 1 and "lock" in r.stderr, f"a second witness on the same state: exit 1 ({r.stderr.strip()})")
    finally:
        w.stop()
    origin = open(logpub).read().split("+")[0]
    path = os.path.join(st, "log-" + hashlib.sha256(origin.encode()).hexdigest())
    with open(path, "a") as f:
        f.write("junk\n")
    r = run(WITNESS, "--key", wkey, "--state", st, "--log", logpub, "--listen", "127.0.0.1:0")
    check(r.returncode == 1 and "damaged" in r.stderr, f"a damaged state file: exit 1 ({r.stderr.strip()})")


def main():
    with tempfile.TemporaryDirectory(prefix="podcap-witness-") as d:
        wkey = os.path.join(d, "w1.key")
        r = run(KEYGEN, "--out", wkey, "--name", "witness.example/w1")
        assert r.returncode == 0, r.stderr
        logkey = os.path.join(d, "log.key")
        shutil.copy(os.path.join(SRC, "tests/vectors/vector.key"), logkey)
        os.chmod(logkey, 0o600)
        logpub = os.path.join(SRC, "tests/vectors/vector.pub")
        otherkey = os.path.join(d, "other.key")
        assert run(KEYGEN, "--out", otherkey, "--name", "podcap/other-1").returncode == 0
        r = run(WITNESS, "--key", wkey, "--print-key")
        wvkey = os.path.join(d, "w1.vkey")
        with open(wvkey, "w") as f:
            f.write(r.stdout)
        name, kid, data = b64key(r.stdout)
        want = hashlib.sha256(name.encode() + b"\n\x04" + data[1:]).digest()[:4].hex()
        check(r.returncode == 0 and data[0] == 4 and len(data) == 33 and kid == want,
              f"--print-key: {name}+{kid}, type 0x04, id SHA-256(name \\n 0x04 pk)[:4] = {want}")
        test_statuses(d, wkey, wvkey, logkey, logpub, otherkey)
        test_empty_tree(d, wkey, wvkey, logkey, logpub)
        test_kill9(d, wkey, wvkey, logkey, logpub)
        test_lying_witness(d, wvkey, logkey)
        test_verify_times(d, logkey, logpub)
        test_refusals(d, wkey, logpub)
    print(f"{len(failures)} failed" if failures else "all passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
