# SPDX-License-Identifier: BSD-3-Clause
"""Runs podcapd for a test: a key, a ledger, a pod map, its output."""
import atexit
import json
import os
import re
import signal
import struct
import subprocess
import sys
import time


_running = []


@atexit.register
def _kill_leftovers():
    """A test that dies half-way must not leave a busy-polling podcapd behind."""
    for p in _running:
        if p.poll() is None:
            p.kill()
            p.wait()


# meson ends a test that times out with SIGTERM: exit through atexit then
signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))


def private_dpdk_runtime():
    """Gives DPDK a runtime directory of its own, in a private mount namespace.

    In a pid namespace every test is pid 1, so "<name>-<pid>" file prefixes
    repeat across tests run side by side; a tmpfs over /run/dpdk keeps their
    lock files and telemetry sockets apart and goes away with the namespace.
    """
    os.makedirs("/run/dpdk", exist_ok=True)
    subprocess.run(["mount", "-t", "tmpfs", "-o", "mode=0755", "podcap-dpdk", "/run/dpdk"],
                   check=True)


class Podcapd:
    def __init__(self, podcapd, keygen, workdir, appliance_id):
        self.podcapd = podcapd
        self.dir = workdir
        self.id = appliance_id
        self.key = f"{workdir}/appliance.key"
        self.ledger = f"{workdir}/ledger"
        self.config = f"{workdir}/podmap.yaml"
        self.proc = None
        if not os.path.exists(self.key):
            subprocess.run([keygen, "--out", self.key, "--name", f"podcap/{appliance_id}"],
                           check=True, stdout=subprocess.DEVNULL)

    def appliance_yaml(self, listen="127.0.0.1:0"):
        return (f"appliance:\n  id: {self.id}\n  signing_key: {self.key}\n"
                f"  ledger: {self.ledger}\n  listen: {listen}\n")

    def write_config(self, text):
        tmp = self.config + ".tmp"
        with open(tmp, "w") as f:
            f.write(text)
        os.replace(tmp, self.config)

    def start(self, timeout=60):
        self.out = open(f"{self.dir}/stdout", "a+")
        self.err = open(f"{self.dir}/stderr", "a+")
        self.err_mark = self.err.seek(0, os.SEEK_END)
        self.proc = subprocess.Popen([self.podcapd, "--config", self.config],
                                     stdout=self.out, stderr=self.err)
        _running.append(self.proc)
        return self.wait_log("forwarding", timeout)

    def log(self):
        self.err.flush()
        with open(f"{self.dir}/stderr") as f:
            return f.read()

    def stdout(self):
        self.out.flush()
        with open(f"{self.dir}/stdout") as f:
            return f.read()

    def wait_log(self, text, timeout):
        deadline = time.time() + timeout
        while time.time() < deadline:
            with open(f"{self.dir}/stderr") as f:
                f.seek(self.err_mark)
                if text in f.read():
                    return True
            if self.proc.poll() is not None:
                return False
            time.sleep(0.05)
        return False

    def port(self):
        m = re.search(r"verifier endpoint on \S+ \(port (\d+)\)", self.log()[self.err_mark:])
        return int(m[1]) if m else None

    def signal(self, sig):
        self.proc.send_signal(sig)

    def stop(self, timeout=30):
        if self.proc is None or self.proc.poll() is not None:
            return self.proc.returncode if self.proc else None
        self.proc.send_signal(signal.SIGTERM)
        try:
            return self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            return -9

    def kill(self):
        self.proc.kill()
        self.proc.wait()


def query_telemetry(prefix, command):
    """What dpdk-telemetry.py, the operator's tool, shows for a command."""
    try:
        r = subprocess.run(["dpdk-telemetry.py", "-f", prefix], input=command + "\n",
                           capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.TimeoutExpired):
        return None
    for line in reversed(r.stdout.splitlines()):
        if line.startswith("{"):
            return json.loads(line).get(command.split(",")[0])
    return None


def query_telemetry_many(prefix, commands):
    """The replies to several commands from one dpdk-telemetry.py, in order, or None."""
    try:
        r = subprocess.run(["dpdk-telemetry.py", "-f", prefix], input="".join(c + "\n" for c in commands),
                           capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None
    replies = [json.loads(line) for line in r.stdout.splitlines() if line.startswith("{")]
    if len(replies) != len(commands):
        return None
    return [rep.get(c.split(",")[0]) for rep, c in zip(replies, commands)]


def window_totals(text):
    """Sums of the per-window lines: {(pod, dir): [pass_B, pass_F, drop_B, drop_F]}."""
    tot = {}
    for line in text.splitlines():
        m = re.match(r"window \S+ (\S+) (up|down) passed (\d+) (\d+) dropped (\d+) (\d+) ", line)
        if m:
            t = tot.setdefault((m[1], m[2]), [0, 0, 0, 0])
            for i in range(4):
                t[i] += int(m[3 + i])
            continue
        m = re.match(r"window \S+ uplink (\S+) (up|down) unmapped (\d+) (\d+) malformed (\d+) (\d+)", line)
        if m:
            t = tot.setdefault(("uplink", m[2]), [0, 0, 0, 0])
            for i in range(4):
                t[i] += int(m[3 + i])
    return tot


class Checks:
    def __init__(self):
        self.failures = []

    def __call__(self, cond, what):
        print(("ok    " if cond else "FAIL  ") + what, flush=True)
        if not cond:
            self.failures.append(what)
        return cond

    def finish(self):
        print(f"{'PASS' if not self.failures else 'FAIL'}: {len(self.failures)} failed")
        return 1 if self.failures else 0


def ledger_entries(ledger):
    """Each record's bytes, in order, from a ledger directory's records file (its framing:
    a 4-byte length, the record, its 32-byte leaf hash); a torn tail is left out."""
    out = []
    with open(f"{ledger}/records", "rb") as f:
        data = f.read()
    off = 0
    while off + 4 <= len(data):
        n = struct.unpack(">I", data[off:off + 4])[0]
        if off + 4 + n + 32 > len(data):
            break
        out.append(bytearray(data[off + 4:off + 4 + n]))
        off += 4 + n + 32
    return out
