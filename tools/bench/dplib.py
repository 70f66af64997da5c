# SPDX-License-Identifier: BSD-3-Clause
"""Shared by tools/bench/forward-rate, pod-scale and window-close.

Each runs podcapd (and dpdk-testpmd) between DPDK virtual ports that cost
little: the pod side is net_pcap with infinite_rx=1 (the frames of a pcap
file, preloaded into mbufs and copied into a fresh mbuf on every receive),
the fabric side net_null with no-rx=1 (transmit frees the mbuf). Rates come
from DPDK telemetry (/ethdev/stats) over the telemetry socket.

A script calls setup(), which re-executes it (once) inside new mount and
PID namespaces with a private /run/dpdk: every process it starts dies with
it, on failure or Ctrl-C too; it also stops them itself on exit.
"""
import argparse
import atexit
import glob
import json
import os
import re
import shutil
import signal
import socket
import statistics
import struct
import subprocess
import sys
import tempfile
import time

SKIP = 77
FWD_LCORE = 1      # podcapd's worker and testpmd's forwarding core

_procs = []
TMP = None
NAME = "bench"
COMMANDS = []


def log(msg):
    print(f"{NAME}: {msg}", file=sys.stderr, flush=True)


def die(msg):
    log("error: " + msg)
    sys.exit(1)


def _cleanup():
    for p in _procs:
        if p.poll() is None:
            p.terminate()
    for p in _procs:
        try:
            p.wait(timeout=20)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
    if TMP and not os.environ.get("BENCH_KEEP_TMP"):
        subprocess.run(["rm", "-rf", TMP])
    elif TMP:
        log(f"logs kept in {TMP}")


def setup(name, description, net=False):
    """Parses the common options, enters the sandbox, returns the options. net: in a
    network namespace of its own too (loopback up, /sys of that namespace), where veth
    links can be made that nothing else sees."""
    global NAME, TMP
    NAME = name
    ap = argparse.ArgumentParser(prog=name, description=description)
    ap.add_argument("--build", required=True, help="an optimized podcap build directory")
    ap.add_argument("--out", required=True, help="where to write the section's JSON")
    ap.add_argument("--quick", action="store_true", help="tiny sizes and durations")
    args = ap.parse_args()
    args.build = os.path.abspath(args.build)
    args.out = os.path.abspath(args.out)
    args.podcapd = f"{args.build}/src/cmd/podcapd/podcapd"
    args.keygen = f"{args.build}/src/cmd/podcap-keygen/podcap-keygen"
    if os.geteuid() != 0:
        log("SKIP: needs root")
        sys.exit(SKIP)
    for exe in (args.podcapd, args.keygen):
        if not os.access(exe, os.X_OK):
            die(f"{exe} is missing: build podcap into {args.build} first")
    if os.environ.get("PODCAP_DP_SANDBOX") != "1":
        env = dict(os.environ, PODCAP_DP_SANDBOX="1")
        argv = ["unshare", "--mount", "--pid", "--fork", "--mount-proc",
                "--kill-child=SIGTERM"] + (["--net"] if net else []) + [
                "--", sys.executable, os.path.abspath(sys.argv[0])]
        os.execvpe("unshare", argv + sys.argv[1:], env)
    subprocess.run(["mount", "--make-rprivate", "/"], check=True)
    if net:
        subprocess.run(["ip", "link", "set", "lo", "up"], check=True)
        # sysfs shows the network namespace of whoever mounts it
        subprocess.run(["mount", "-t", "sysfs", "bench-sys", "/sys"], check=True)
    os.makedirs("/run/dpdk", exist_ok=True)
    subprocess.run(["mount", "-t", "tmpfs", "-o", "mode=0755", "bench-dpdk", "/run/dpdk"],
                   check=True)
    TMP = tempfile.mkdtemp(prefix=f"podcap-{name}.")
    atexit.register(_cleanup)
    _hugepages(HUGE_PAGES)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    signal.signal(signal.SIGINT, lambda *_: sys.exit(130))
    return args


# --- hugepages ------------------------------------------------------------------

HUGE_PAGES = 1280   # 2.5 GiB of 2 MiB pages: podcapd's 2 GiB with room to spare
HUGE_DIR = None     # the hugetlbfs mount of this run, or None: --no-huge
_huge_added = 0


def _sysctl_pages(n=None):
    path = "/proc/sys/vm/nr_hugepages"
    if n is not None:
        with open(path, "w") as f:
            f.write(str(n))
    with open(path) as f:
        return int(f.read())


def _hugepages(pages):
    """Raises the machine's 2 MiB hugepages by `pages` for this run and mounts hugetlbfs
    in the run's own mount namespace, as on a production appliance; puts the count back
    at exit, also on failure. Without them (PODCAP_BENCH_NO_HUGE=1, or the kernel could
    not find the memory) every DPDK process runs --no-huge."""
    global HUGE_DIR, _huge_added
    if os.environ.get("PODCAP_BENCH_NO_HUGE") == "1":
        return
    try:
        old = _sysctl_pages()
        _huge_added = _sysctl_pages(old + pages) - old
    except OSError as e:
        log(f"no hugepages ({e}): --no-huge")
        return
    atexit.register(_hugepages_release)
    if _huge_added < pages:
        log(f"only {_huge_added} of {pages} hugepages: --no-huge")
        return
    d = f"{TMP}/hugepages"
    os.makedirs(d)
    if subprocess.run(["mount", "-t", "hugetlbfs", "-o", "pagesize=2M", "bench-huge", d]).returncode:
        log("cannot mount hugetlbfs: --no-huge")
        return
    HUGE_DIR = d
    COMMANDS.append(f"echo $((nr_hugepages + {pages})) > /proc/sys/vm/nr_hugepages; "
                    "mount -t hugetlbfs -o pagesize=2M nodev DIR  # put back at the end")
    log(f"{pages} hugepages of 2 MiB mounted on {d}")


def hugepages_clear():
    """Frees what a stopped DPDK process left in the mount: the next one starts with all."""
    if HUGE_DIR:
        for f in glob.glob(f"{HUGE_DIR}/*"):
            os.unlink(f)


def _hugepages_release():
    global HUGE_DIR
    if HUGE_DIR:
        hugepages_clear()
        subprocess.run(["umount", HUGE_DIR])
        HUGE_DIR = None
    if _huge_added:
        _sysctl_pages(max(_sysctl_pages() - _huge_added, 0))


def memory_note():
    return ("2 MiB hugepages the benchmark reserved and mounted" if HUGE_DIR else
            "--no-huge (no hugepages could be reserved, or PODCAP_BENCH_NO_HUGE=1)")


def eal_memory_args():
    return ["--huge-dir", HUGE_DIR] if HUGE_DIR else ["--no-huge"]


def spawn(cmd, logname, **kw):
    COMMANDS.append(" ".join(cmd))
    out = open(f"{TMP}/{logname}.out", "w")
    err = open(f"{TMP}/{logname}.log", "w")
    p = subprocess.Popen(cmd, stdout=out, stderr=err, stdin=subprocess.DEVNULL, **kw)
    p.logpath = f"{TMP}/{logname}.log"
    p.outpath = f"{TMP}/{logname}.out"
    _procs.append(p)
    return p


def wait_text(p, path, pattern, timeout):
    deadline = time.monotonic() + timeout
    rx = re.compile(pattern)
    while time.monotonic() < deadline:
        with open(path, errors="replace") as f:
            if rx.search(f.read()):
                return True
        if p.poll() is not None:
            return False
        time.sleep(0.05)
    return False


def stop(p, timeout=30):
    if p.poll() is None:
        p.send_signal(signal.SIGTERM)
        try:
            p.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            log(f"pid {p.pid} ignored SIGTERM; killing it")
            p.kill()
            p.wait()
    if p in _procs:
        _procs.remove(p)
    return p.returncode


# --- frames and pcap files -------------------------------------------------

def pod_addr(i):
    """The address of pod i: 10.(i >> 8 & 0xff).(i & 0xff).1, one /24 each up to 65536 pods."""
    return f"10.{(i >> 8) & 0xFF}.{i & 0xFF}.1"


def pod_prefix(i):
    return f"10.{(i >> 8) & 0xFF}.{i & 0xFF}.0/24"


def _csum(b):
    s = sum(struct.unpack(f"!{len(b) // 2}H", b))
    s = (s >> 16) + (s & 0xFFFF)
    s += s >> 16
    return ~s & 0xFFFF


def udp_frame(src, dst, size, dst_mac="020000000002"):
    """An Ethernet/IPv4/UDP frame of `size` bytes (no FCS) from src to dst."""
    ip_len = size - 14
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, ip_len, 0, 0, 64, 17, 0,
                     socket.inet_aton(src), socket.inet_aton(dst))
    ip = ip[:10] + struct.pack("!H", _csum(ip)) + ip[12:]
    udp = struct.pack("!HHHH", 4000, 5001, ip_len - 20, 0)
    eth = bytes.fromhex(dst_mac + "0200000000010800")
    return eth + ip + udp + bytes(ip_len - 28)


def write_pcap(path, frames):
    with open(path, "wb") as f:
        f.write(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1))
        for i, fr in enumerate(frames):
            f.write(struct.pack("<IIII", 1, i, len(fr), len(fr)))
            f.write(fr)


def pod_pcap(path, npods, size, nframes=None):
    """Frames going up, spread evenly over the pods: frame k comes from pod k * npods / n."""
    n = nframes or npods
    write_pcap(path, [udp_frame(pod_addr(k * npods // n), "192.168.0.1", size) for k in range(n)])


# --- DPDK telemetry ---------------------------------------------------------

class Telemetry:
    """A client of a DPDK process's telemetry socket (what dpdk-telemetry.py uses)."""

    def __init__(self, prefix, timeout=30):
        path = f"/run/dpdk/{prefix}/dpdk_telemetry.v2"
        deadline = time.monotonic() + timeout
        while True:
            try:
                self.s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
                self.s.connect(path)
                break
            except OSError:
                self.s.close()
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.1)
        info = json.loads(self.s.recv(65536))
        self.max_len = info.get("max_output_len", 16384)

    def query(self, cmd):
        self.s.send(cmd.encode())
        reply = json.loads(self.s.recv(self.max_len * 2))
        return reply.get(cmd.split(",")[0])

    def close(self):
        self.s.close()


def port_stats(tel, port):
    st = tel.query(f"/ethdev/stats,{port}")
    return st["ipackets"], st["opackets"], st["ibytes"], st["obytes"]


def measure_rate(tel, rx_ports, tx_ports, warmup, secs, pid):
    """Frames per second received on rx_ports and sent on tx_ports over secs, after
    warmup, the CPU seconds per second the forwarding threads ran (cpu, summed over them)
    and the share of that time they waited for their cores (wait, their mean), from their
    schedstat."""
    time.sleep(warmup)
    s0 = worker_sched(pid)
    t0 = time.monotonic()
    rx0 = sum(port_stats(tel, p)[0] for p in rx_ports)
    tx0 = sum(port_stats(tel, p)[1] for p in tx_ports)
    time.sleep(secs)
    t1 = time.monotonic()
    rx1 = sum(port_stats(tel, p)[0] for p in rx_ports)
    tx1 = sum(port_stats(tel, p)[1] for p in tx_ports)
    s1 = worker_sched(pid)
    dt = t1 - t0
    r = {"rx_pps": (rx1 - rx0) / dt, "tx_pps": (tx1 - tx0) / dt, "cpu": None, "wait": None}
    if s0 and s1:
        r["cpu"] = (s1[0] - s0[0]) / 1e9 / dt
        r["wait"] = (s1[1] - s0[1]) / 1e9 / dt / s1[2]
    return r


def per_cpu(rate, m):
    """A rate per second of the forwarding threads' CPU time: what one would do on a core
    of its own, to first order (the threads only poll)."""
    return rate / m["cpu"] if m.get("cpu") else None


def heap_info(tel):
    h = tel.query("/eal/heap_info,0") or {}
    return {k: h.get(k) for k in ("Heap_size", "Alloc_size", "Free_size")}


def vmrss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return None


def worker_sched(pid):
    """(cpu ns, wait ns, threads) summed over the forwarding threads, from their schedstat,
    or None."""
    cpu = wait = n = 0
    for tid in worker_tids(pid):
        try:
            c, w, _ = open(f"/proc/{pid}/task/{tid}/schedstat").read().split()
        except OSError:
            continue
        cpu, wait, n = cpu + int(c), wait + int(w), n + 1
    return (cpu, wait, n) if n else None


# --- where the forwarding thread's time goes -----------------------------------

def perf_available():
    return shutil.which("perf") is not None


# Processes whose main thread is a forwarding thread (DPDK examples that poll
# on the main lcore too, run with the main lcore on the forwarding CPU).
MAIN_THREAD_FORWARDS = set()


def worker_tids(pid):
    tids = [str(pid)] if pid in MAIN_THREAD_FORWARDS else []
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            comm = open(f"/proc/{pid}/task/{tid}/comm").read().strip()
        except OSError:
            continue
        if comm.startswith(("rte-worker", "lcore-worker")):
            tids.append(tid)
    return tids


def profile(pid, secs, out, top=12):
    """Samples the forwarding threads of pid with perf (cpu-clock, 4 kHz: a virtual
    machine has no hardware counters) for secs and returns [(share, symbol)], the `top`
    symbols by share of the samples (those of 0.5 % at least), with '(other)' for the
    rest, or None without perf."""
    tids = worker_tids(pid)
    if not perf_available() or not tids:
        return None
    cmd = ["perf", "record", "-q", "-e", "cpu-clock", "-F", "4000", "-t", ",".join(tids),
           "-o", out, "--", "sleep", str(secs)]
    COMMANDS.append(" ".join(cmd))
    if subprocess.run(cmd, capture_output=True).returncode != 0:
        return None
    rep = ["perf", "report", "-i", out, "--stdio", "--no-children", "--sort", "dso,sym",
           "--percent-limit", "0"]
    COMMANDS.append(" ".join(rep))
    r = subprocess.run(rep, capture_output=True, text=True)
    shares = {}
    for line in r.stdout.splitlines():
        m = re.match(r"\s*([\d.]+)%\s+(\S+)\s+\[([.k])\]\s+(\S+)", line)
        if not m:
            continue
        dso, sym = m[2], m[4]
        # a stripped library's static functions have no name: counted as the library's
        name = f"{dso} (no symbols)" if sym.startswith("0x") or m[3] == "k" and dso == "[unknown]" \
            else sym if m[3] == "." else f"{sym} [kernel]"
        shares[name] = shares.get(name, 0) + float(m[1]) / 100
    if not shares:
        return None
    rows = sorted(((v, k) for k, v in shares.items()), reverse=True)
    # what is under 0.5 % of the samples (the kernel's ticks, mostly) is one row
    shown = [r for r in rows[:top] if r[0] >= 0.005]
    rest = sum(x for x, _ in rows) - sum(x for x, _ in shown)
    return shown + ([(rest, "(other)")] if rest > 0 else [])


# --- podcapd and testpmd ---------------------------------------------------

def lcores(workers):
    """The control lcore, then one lcore per worker: lcore 1 on CPU 1, any more on CPU 0,
    which they share with the control thread on a 2-core machine."""
    extra = "".join(f",{FWD_LCORE + i}@0" for i in range(1, workers))
    return f"0-{FWD_LCORE}{extra}"


class Podcapd:
    def __init__(self, args, tag):
        self.args = args
        self.dir = f"{TMP}/{tag}"
        os.makedirs(self.dir)
        self.tag = tag
        self.prefix = f"bench-{tag}-{os.getpid()}"
        self.key = f"{self.dir}/appliance.key"
        subprocess.run([args.keygen, "--out", self.key, "--name", f"podcap/{tag}"], check=True,
                       stdout=subprocess.DEVNULL)
        COMMANDS.append(f"{args.keygen} --out {self.key} --name podcap/{tag}")
        self.proc = None

    def write_map(self, pod_port, fabric_port, pods, window="60s", memory="1GiB",
                  mode="police", cap="100Gbps", burst="10ms", queue_delay="1ms", workers=1,
                  role=None, promise=None, lcores_arg=None):
        """pods: a list of prefixes lists, one per pod; workers: the uplink's; role:
        appliance.role (pod-tap: monitor mode); promise: the pods' (docs/bucket.md)."""
        lines = [
            "appliance:", f"  id: {self.tag}", f"  signing_key: {self.key}",
            f"  ledger: {self.dir}/ledger", "  listen: 127.0.0.1:0"]
        if role:
            lines.append(f"  role: {role}")
        lines += [
            f"window: {window}", "max_frame: 1518B",
            "defaults:", f"  cap: {cap}", f"  burst: {burst}", f"  mode: {mode}",
            f"  queue_delay: {queue_delay}"]
        if promise:
            lines.append(f"  promise: {promise}")
        lines += [
            "dpdk:", f"  lcores: {lcores_arg or lcores(workers)}", f"  memory: {memory}",
            f"  file_prefix: {self.prefix}",
            "uplinks:", "  - name: up0", f"    pod_port: {pod_port}",
            f"    fabric_port: {fabric_port}"]
        if workers != 1:
            lines.append(f"    workers: {workers}")
        lines.append("pods:")
        for i, prefixes in enumerate(pods):
            lines.append(f"  - {{id: p{i}, uplink: up0, prefixes: [{', '.join(prefixes)}]}}")
        self.config = f"{self.dir}/podmap.yaml"
        with open(self.config, "w") as f:
            f.write("\n".join(lines) + "\n")

    def start(self, timeout=120):
        self.proc = spawn([self.args.podcapd, "--config", self.config], f"{self.tag}-podcapd")
        if not wait_text(self.proc, self.proc.logpath, r"forwarding: ", timeout):
            sys.stderr.write(open(self.proc.logpath).read()[-3000:])
            die(f"podcapd ({self.tag}) did not start")
        self.tel = Telemetry(self.prefix)
        return self

    def stop(self):
        self.tel.close()
        rc = stop(self.proc)
        hugepages_clear()
        if rc != 0:
            log(f"podcapd ({self.tag}) exited with status {rc}")
        return rc

    def log_text(self):
        return open(self.proc.logpath).read()


class Testpmd:
    def __init__(self, tag, vdevs, mbufs, cores=1, mode="io"):
        """cores: forwarding cores, each with its own RX/TX queue pair, placed as podcapd's
        workers are (lcores()); mode: the forwarding mode (io, rxonly)."""
        self.prefix = f"bench-{tag}-{os.getpid()}"
        cmd = ["dpdk-testpmd", "--lcores" if cores > 1 else "-l", lcores(cores)]
        cmd += eal_memory_args() + ["-m", "1024", f"--file-prefix={self.prefix}", "--no-pci"]
        cmd += [f"--vdev={v}" for v in vdevs]
        cmd += ["--", f"--forward-mode={mode}", f"--total-num-mbufs={mbufs}",
                "--stats-period=3600", "--auto-start", "--burst=32", "--rxd=1024", "--txd=1024"]
        if cores > 1:
            cmd += [f"--nb-cores={cores}", f"--rxq={cores}", f"--txq={cores}"]
        self.proc = spawn(cmd, f"{tag}-testpmd")
        if not wait_text(self.proc, self.proc.outpath,
                         r"Start automatic packet forwarding|\w+ packet forwarding", 120):
            sys.stderr.write(open(self.proc.outpath).read()[-3000:])
            die("dpdk-testpmd did not start")
        self.tel = Telemetry(self.prefix)

    def stop(self):
        self.tel.close()
        rc = stop(self.proc)
        hugepages_clear()
        return rc


def testpmd_mbufs(pcap_frames):
    # the pcap port holds a copy of every frame of its file, per port
    return max(16384, 2 * pcap_frames + 8192)


def machine():
    info = {}
    try:
        cpu = open("/proc/cpuinfo").read()
        m = re.search(r"model name\s*:\s*(.*)", cpu)
        info["cpu"] = m[1] if m else "?"
    except OSError:
        pass
    info["cpus"] = os.cpu_count()
    info["kernel"] = os.uname().release
    info["loadavg"] = open("/proc/loadavg").read().split()[:3]
    return info


def write_result(args, section, columns, rows, targets, notes, extra=None):
    res = {"section": section, "columns": columns, "rows": rows, "targets": targets,
           "notes": notes, "commands": COMMANDS}
    res["machine"] = machine()
    res["quick"] = bool(args.quick)
    if extra:
        res.update(extra)
    tmp = args.out + ".tmp"
    with open(tmp, "w") as f:
        json.dump(res, f, indent=1)
        f.write("\n")
    os.replace(tmp, args.out)


def median(xs):
    return statistics.median(xs) if xs else None


def r3(x):
    return None if x is None else round(x, 3)


# --- OVS-DPDK as a peer -------------------------------------------------------

OVS_VSWITCHD = "/usr/lib/openvswitch-switch-dpdk/ovs-vswitchd-dpdk"
OVS_RUN = "/run/openvswitch"


def ovs_available():
    return os.access(OVS_VSWITCHD, os.X_OK) and shutil.which("ovs-vsctl") is not None


def _alive(pid):
    """Running, not exited (a zombie's memory is already freed)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


class OvsError(Exception):
    """OVS could not be set up as a peer: the step's message and ovs-vswitchd's errors."""


def _ovs(*cmd, log=None):
    COMMANDS.append(" ".join(cmd))
    r = subprocess.run(list(cmd), capture_output=True, text=True)
    if r.returncode != 0:
        raise OvsError(f"{' '.join(cmd)}: {r.stderr.strip()}{_ovs_errors(log)}")
    return r.stdout.strip()


def _ovs_errors(log):
    try:
        with open(log, errors="replace") as f:
            errs = [line.strip() for line in f if "|ERR|" in line]
    except (OSError, TypeError):
        return ""
    return "; ovs-vswitchd: " + " / ".join(errs[-3:]) if errs else ""


class Ovs:
    """Debian's ovs-vswitchd-dpdk with one PMD thread on lcore 1's CPU, a netdev bridge
    between two dpdk ports given as vdevs, and one flow from the pod port to the fabric
    port (through an OpenFlow 1.3 meter when meter_kbps is set). Its database, run and log
    directories are tmpfs mounts of the bench's own mount namespace. Raises OvsError, with
    everything it started stopped again, when OVS cannot be set up."""

    DIRS = (OVS_RUN, "/etc/openvswitch", "/var/lib/openvswitch", "/var/log/openvswitch")

    def __init__(self, tag, pod_vdev, fab_vdev, meter_kbps=None):
        self.tag = tag
        self.dir = f"{TMP}/{tag}"
        self.ctl = f"{OVS_RUN}/ovs-vswitchd.ctl"
        self.log = f"{self.dir}/ovs-vswitchd.log"
        os.makedirs(self.dir, exist_ok=True)
        for d in self.DIRS:
            os.makedirs(d, exist_ok=True)
            subprocess.run(["mount", "-t", "tmpfs", "-o", "mode=0755", f"bench-ovs-{tag}", d],
                           check=True)
        try:
            self._setup(pod_vdev, fab_vdev, meter_kbps)
        except OvsError:
            self.stop()
            raise

    def _setup(self, pod_vdev, fab_vdev, meter_kbps):
        db = "/etc/openvswitch/conf.db"
        _ovs("ovsdb-tool", "create", db, "/usr/share/openvswitch/vswitch.ovsschema")
        _ovs("ovsdb-server", db, f"--remote=punix:{OVS_RUN}/db.sock", "--pidfile", "--detach",
             f"--log-file={self.dir}/ovsdb-server.log")
        _ovs("ovs-vsctl", "--no-wait", "init")
        prefix = f"bench-{self.tag}-{os.getpid()}"
        # per-port-memory: a mempool sized to each port's queues; the shared default
        # asks for 262144 mbufs at MTU 1500, more than -m 1024 holds.
        _ovs("ovs-vsctl", "--no-wait", "set", "Open_vSwitch", ".",
             "other_config:dpdk-init=true",
             f'other_config:dpdk-extra="{" ".join(eal_memory_args())} -m 1024 --no-pci '
             f'--legacy-mem --file-prefix={prefix}"',
             f"other_config:pmd-cpu-mask={1 << FWD_LCORE:#x}", "other_config:dpdk-lcore-mask=0x1",
             "other_config:per-port-memory=true")
        _ovs(OVS_VSWITCHD, f"unix:{OVS_RUN}/db.sock", "--pidfile", "--detach",
             f"--log-file={self.log}", f"--unixctl={self.ctl}")
        _ovs("ovs-vsctl", "add-br", "ovsbr0", "--", "set", "bridge", "ovsbr0", "datapath_type=netdev",
             "protocols=OpenFlow13", log=self.log)
        for name, vdev in (("pod", pod_vdev), ("fab", fab_vdev)):
            _ovs("ovs-vsctl", "add-port", "ovsbr0", name, "--", "set", "Interface", name,
                 "type=dpdk", f"options:dpdk-devargs={vdev}", log=self.log)
            # ovs-vsctl exits 0 when only the datapath refused the port
            err = _ovs("ovs-vsctl", "get", "Interface", name, "error", log=self.log)
            if err not in ("", "[]"):
                raise OvsError(f"port {name} ({vdev}): {err}{_ovs_errors(self.log)}")
        _ovs("ovs-ofctl", "-O", "OpenFlow13", "del-flows", "ovsbr0", log=self.log)
        action = "output:fab"
        if meter_kbps:
            _ovs("ovs-ofctl", "-O", "OpenFlow13", "add-meter", "ovsbr0",
                 f"meter=1,kbps,band=type=drop,rate={meter_kbps}", log=self.log)
            action = "meter:1,output:fab"
        _ovs("ovs-ofctl", "-O", "OpenFlow13", "add-flow", "ovsbr0", f"in_port=pod,actions={action}",
             log=self.log)

    def stats(self, port):
        """(rx packets, tx packets) of a bridge port, from the datapath itself (the
        database's Interface statistics are refreshed only every few seconds)."""
        out = _ovs("ovs-ofctl", "-O", "OpenFlow13", "dump-ports", "ovsbr0", port)
        rx = re.search(r"rx pkts=(\d+)", out)
        tx = re.search(r"tx pkts=(\d+)", out)
        return int(rx[1]) if rx else 0, int(tx[1]) if tx else 0

    def measure_rate(self, warmup, secs):
        time.sleep(warmup)
        t0 = time.monotonic()
        rx0, tx0 = self.stats("pod")[0], self.stats("fab")[1]
        time.sleep(secs)
        rx1, tx1 = self.stats("pod")[0], self.stats("fab")[1]
        dt = time.monotonic() - t0
        return {"rx_pps": (rx1 - rx0) / dt, "tx_pps": (tx1 - tx0) / dt, "cpu": None,
                "wait": None}

    def stop(self):
        pids = []
        for p in glob.glob(f"{OVS_RUN}/*.pid"):
            try:
                with open(p) as f:
                    pids.append(int(f.read().strip()))
            except (OSError, ValueError):
                pass
        subprocess.run(["ovs-appctl", "-t", self.ctl, "exit"], capture_output=True)
        for p in glob.glob(f"{OVS_RUN}/ovsdb-server.*.ctl"):
            subprocess.run(["ovs-appctl", "-t", p, "exit"], capture_output=True)
        # a daemon that did not exit in 5 s is killed: its hugepages go with it
        deadline = time.monotonic() + 5
        while pids and time.monotonic() < deadline:
            pids = [p for p in pids if _alive(p)]
            time.sleep(0.1)
        for p in pids:
            try:
                os.kill(p, signal.SIGKILL)
            except OSError:
                pass
        # the netdev bridge's own port is a kernel tap of the bridge's name
        subprocess.run(["ip", "link", "del", "ovsbr0"], capture_output=True)
        for d in self.DIRS:
            subprocess.run(["umount", "-l", d], capture_output=True)
        hugepages_clear()


# --- DPDK's own sample applications as peers -------------------------------------

EXAMPLES = "/usr/share/dpdk/examples"   # Debian's dpdk-doc

# What the benchmark changes in an example's source before building it, and
# why: (file, sed expression, what it matches, lines it must change). Each
# edit must hit exactly that many lines, so that a new DPDK release whose
# source moved fails here instead of measuring something else.
EXAMPLE_EDITS = {
    "l3fwd": [
        ("main.c", r"s|^\(\t*\)\.offloads = RTE_ETH_RX_OFFLOAD_CHECKSUM,$|\1/* no RX checksum offload: "
         r"the virtual ports lack it */|", r"\.offloads = RTE_ETH_RX_OFFLOAD_CHECKSUM,$", 1,
         "the RX checksum offload request removed (net_pcap and net_null lack it)"),
        ("l3fwd_lpm.c", r"s|^#define IPV4_L3FWD_LPM_MAX_RULES\( *\)1024$|"
         r"#define IPV4_L3FWD_LPM_MAX_RULES\165536|", r"^#define IPV4_L3FWD_LPM_MAX_RULES *1024$", 1,
         "room for 65,536 IPv4 routes instead of 1,024 (the scale rows' 16,384)"),
    ],
    "qos_meter": [
        ("main.c", r"s|^\(\t*\)\.offloads = RTE_ETH_RX_OFFLOAD_CHECKSUM,$|\1/* no RX checksum offload: "
         r"the virtual ports lack it */|", r"\.offloads = RTE_ETH_RX_OFFLOAD_CHECKSUM,$", 1,
         "the RX checksum offload request removed (net_pcap and net_null lack it)"),
        ("main.c", r"s|^\t\.cir = 1000000 \* 46,$|\t.cir = 1250000000000ULL,|",
         r"^\t\.cir = 1000000 \* 46,$", 2,
         "the meter's committed rate 10 Tbit/s instead of 368 Mbit/s (the cap not binding)"),
        ("main.c", r"s|^\t\.pir = 1500000 \* 46,$|\t.pir = 1250000000000ULL,|",
         r"^\t\.pir = 1500000 \* 46,$", 1,
         "the trTCM profile's peak rate likewise (it must not be below the committed rate)"),
        ("main.c", r"s|^\t\.cbs = 2048,$|\t.cbs = 12500000000ULL,|", r"^\t\.cbs = 2048,$", 2,
         "its committed burst 10 ms at that rate instead of 2,048 bytes"),
    ],
}


def example_edits(name):
    return [why for *_, why in EXAMPLE_EDITS[name]]


def build_example(name, where):
    """Copies DPDK's example `name` from dpdk-doc into `where`, applies EXAMPLE_EDITS
    there and builds it with its own Makefile (pkg-config libdpdk). Returns the
    executable, or (None, why) when it cannot be built."""
    src = f"{EXAMPLES}/{name}"
    if not os.path.isfile(f"{src}/Makefile"):
        return None, f"{src} is not there (dpdk-doc is not installed)"
    dst = f"{where}/{name}"
    shutil.copytree(src, dst)
    if os.path.isdir(f"{EXAMPLES}/common") and not os.path.isdir(f"{where}/common"):
        shutil.copytree(f"{EXAMPLES}/common", f"{where}/common")
    for f, expr, match, count, _ in EXAMPLE_EDITS[name]:
        path = f"{dst}/{f}"
        with open(path) as fh:
            n = sum(1 for line in fh if re.search(match.replace(r"\t", "\t"), line))
        if n != count:
            return None, f"{name}/{f}: {n} lines match {match!r}, {count} expected"
        COMMANDS.append(f"sed -i '{expr}' {name}/{f}")
        subprocess.run(["sed", "-i", expr, path], check=True)
    COMMANDS.append(f"make -C {name}  # DPDK's own Makefile, pkg-config libdpdk")
    r = subprocess.run(["make", "-C", dst], capture_output=True, text=True)
    exe = f"{dst}/build/{name}"
    if r.returncode != 0 or not os.access(exe, os.X_OK):
        return None, f"make {name} failed: {r.stderr.strip()[-300:]}"
    return exe, None


class Example:
    """A DPDK sample application on the given vdevs, its EAL placed like testpmd's (lcores()
    for `cores` forwarding lcores, or `lcore_arg` as given), the application's own arguments
    after '--'. main_forwards: it polls on its main lcore (qos_meter)."""

    def __init__(self, tag, exe, vdevs, app_args, lcore_arg=None, main_forwards=False,
                 cores=1):
        self.prefix = f"bench-{tag}-{os.getpid()}"
        if lcore_arg is None:
            lcore_arg = ["--lcores" if cores > 1 else "-l", lcores(cores)]
        cmd = [exe] + lcore_arg + eal_memory_args() + ["-m", "1024",
                                                       f"--file-prefix={self.prefix}", "--no-pci"]
        cmd += [f"--vdev={v}" for v in vdevs] + ["--"] + app_args
        self.proc = spawn(cmd, f"{tag}-{os.path.basename(exe)}")
        if main_forwards:
            MAIN_THREAD_FORWARDS.add(self.proc.pid)
        # ready once its pod port has delivered a frame: the examples print their
        # progress to a buffered stdout, so the port's counter is the one sign
        try:
            self.tel = Telemetry(self.prefix, timeout=120)
        except OSError:
            self.tel = None
        deadline = time.monotonic() + 120
        while True:
            st = self.tel.query("/ethdev/stats,0") if self.tel else None
            if st and st.get("ipackets"):
                break
            if self.proc.poll() is not None or time.monotonic() > deadline:
                sys.stderr.write(open(self.proc.outpath, errors="replace").read()[-3000:])
                sys.stderr.write(open(self.proc.logpath, errors="replace").read()[-3000:])
                die(f"{os.path.basename(exe)} ({tag}) did not start")
            time.sleep(0.1)

    def stop(self):
        self.tel.close()
        rc = stop(self.proc)
        MAIN_THREAD_FORWARDS.discard(self.proc.pid)
        hugepages_clear()
        return rc
