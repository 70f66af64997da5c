# SPDX-License-Identifier: BSD-3-Clause
"""A software TPM for one test: swtpm on loopback, its state in a temporary dir.

Swtpm(tmp, ek_cert=True) manufactures the TPM with swtpm_setup first (an EK
certificate from a local CA of its own, in tmp), then serves it on two free
loopback ports. .tcti is the tpm2-tss TCTI string; .tools_env the environment
tpm2-tools need to reach it. stop() (also on leaving the with block) kills it;
start() serves it again, on the same ports and state (a TPM that was away).
"""
import os
import signal
import socket
import subprocess
import time


def free_ports():
    """Two free consecutive loopback ports: tpm2-tss's swtpm TCTI finds the
    control channel at the server's port + 1."""
    for _ in range(100):
        with socket.socket() as a, socket.socket() as b:
            a.bind(("127.0.0.1", 0))
            port = a.getsockname()[1]
            try:
                b.bind(("127.0.0.1", port + 1))
            except OSError:
                continue
            return port
    raise RuntimeError("no two free consecutive loopback ports")


def _manufacture(state, ca):
    os.makedirs(ca, exist_ok=True)
    conf = os.path.join(ca, "localca.conf")
    with open(conf, "w") as f:
        f.write(f"statedir = {ca}\nsigningkey = {ca}/signkey.pem\n"
                f"issuercert = {ca}/issuercert.pem\ncertserial = {ca}/certserial\n")
    setup = os.path.join(ca, "swtpm_setup.conf")
    with open(setup, "w") as f:
        f.write("create_certs_tool = /usr/bin/swtpm_localca\n"
                f"create_certs_tool_config = {conf}\n"
                "create_certs_tool_options = /etc/swtpm-localca.options\n"
                "active_pcr_banks = sha256\n")
    subprocess.run(["swtpm_setup", "--tpm2", "--tpmstate", state, "--config", setup,
                    "--create-ek-cert", "--overwrite"],
                   check=True, capture_output=True, timeout=120)


class Swtpm:
    def __init__(self, tmp, name="tpm", ek_cert=True):
        self.dir = os.path.join(tmp, name)
        self.state = os.path.join(self.dir, "state")
        os.makedirs(self.state)
        if ek_cert:
            _manufacture(self.state, os.path.join(self.dir, "ca"))
        self.port = free_ports()
        self.tcti = f"swtpm:host=127.0.0.1,port={self.port}"
        self.tools_env = dict(os.environ, TPM2TOOLS_TCTI=self.tcti)
        self.start()

    def start(self):
        ctrl = self.port + 1
        self.log = open(os.path.join(self.dir, "swtpm.log"), "a")
        self.proc = subprocess.Popen(
            ["swtpm", "socket", "--tpm2", "--tpmstate", f"dir={self.state}",
             "--server", f"type=tcp,port={self.port},bindaddr=127.0.0.1",
             "--ctrl", f"type=tcp,port={ctrl},bindaddr=127.0.0.1",
             "--flags", "not-need-init,startup-clear"],
            stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 30
        while True:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                break
            except OSError:
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"swtpm did not start (see {self.log.name})")
                time.sleep(0.05)

    def tool(self, *args, **kw):
        """Runs a tpm2-tools command against this TPM (the independent checker)."""
        return subprocess.run(list(args), env=self.tools_env, capture_output=True,
                              timeout=60, **kw)

    def transient_handles(self):
        r = self.tool("tpm2_getcap", "handles-transient", text=True)
        return r.stdout.strip()

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()
