# SPDX-License-Identifier: BSD-3-Clause
#
# Shared by tools/bench/forwarding.sh and tools/bench/cap.sh. Source it,
# set BENCH_NAME, then call bench_sandbox "$@" once the options are parsed:
# the script re-executes itself in fresh mount, network and PID namespaces,
# so every link, namespace and process it creates dies with it, on Ctrl-C
# or failure too.
#
# The testbed (10.0.0.0/24, IPv4 only):
#
#   pod ns                                          fabric ns
#   10.0.0.1  eth0 ---- vpod0 [forwarder] vfab0 ---- eth0  10.0.0.200
#                       \______ sandbox root ______/
#
# The forwarder is the only path between the two hosts: dpdk-testpmd or
# podcapd driving vpod0 and vfab0 with DPDK's net_af_packet, or a Linux
# bridge br0 holding both (with tc on its ports).

BENCH_SKIP=77
BENCH_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)

BENCH_POD_IP=10.0.0.1
BENCH_FABRIC_IP=10.0.0.200
BENCH_POD_MAC=02:00:0a:00:00:01
BENCH_FABRIC_MAC=02:00:0a:00:00:c8
BENCH_IPERF_PORT=5201

# The DPDK forwarders poll on lcore 1 (-l 0-1: the main lcore 0 mostly
# sleeps); iperf3 and ping run on CPU 0, so that the traffic does not take
# the forwarder's core and what waits for that core is only other work.
BENCH_TRAFFIC_CPU=0

# A measurement during which the forwarder's polling thread waited for its
# core longer than this fraction of the time is "contended": it measured the
# machine's other work as much as the forwarder (bench_sched_end).
BENCH_CONTENDED=0.05

# The system's python3: a version-manager shim can take a second to start.
if [ -x /usr/bin/python3 ]; then
	BENCH_PYTHON=/usr/bin/python3
else
	BENCH_PYTHON=python3
fi

PODCAPD=${PODCAPD:-$BENCH_ROOT/build/src/daemon/podcapd}
PODCAP_KEYGEN=${PODCAP_KEYGEN:-$BENCH_ROOT/build/tools/podcap-keygen}
export PODCAPD PODCAP_KEYGEN

# Processes started in the background, stopped on exit.
BENCH_PIDS=""

bench_log()
{
	printf '%s: %s\n' "$BENCH_NAME" "$*" >&2
}

bench_die()
{
	bench_log "error: $*"
	exit 1
}

bench_skip()
{
	bench_log "SKIP: $*"
	exit "$BENCH_SKIP"
}

# bench_missing THING...: prints those of the commands (or paths, when they
# hold a slash) that are not there.
bench_missing()
{
	local c

	for c in "$@"; do
		case $c in
		*/*) [ -x "$c" ] || printf ' %s' "$c" ;;
		*) command -v "$c" >/dev/null 2>&1 || printf ' %s' "$c" ;;
		esac
	done
}

# bench_require THING...: outside the sandbox. Root and every command and
# binary, or else tools/setup installs and builds what it can (not with
# --no-setup); what is still missing then skips the benchmark.
bench_require()
{
	local missing

	[ "$(id -u)" = 0 ] || bench_skip "needs root (network namespaces, veth links)"
	missing=$(bench_missing "$@")
	if [ -n "$missing" ] && [ -z "${BENCH_NO_SETUP:-}" ] && [ -x "$BENCH_ROOT/tools/setup" ]; then
		bench_log "missing:$missing; running tools/setup"
		"$BENCH_ROOT/tools/setup" >&2 || bench_log "tools/setup failed"
		missing=$(bench_missing "$@")
	fi
	[ -z "$missing" ] || bench_skip "missing:$missing"
}

# bench_sandbox "$@": re-executes the calling script inside its own
# namespaces (once), then prepares them.
bench_sandbox()
{
	if [ "${BENCH_SANDBOX:-}" != 1 ]; then
		export BENCH_SANDBOX=1
		# If unshare itself is killed, the sandbox gets SIGTERM.
		exec unshare --mount --net --pid --fork --mount-proc \
		    --kill-child=SIGTERM -- "$BASH" "$0" "$@"
	fi
	# A stale BENCH_SANDBOX must never make us remount the host's /run.
	[ "$$" = 1 ] || bench_die "BENCH_SANDBOX is set but this is not a sandbox"

	mount --make-rprivate / || bench_die "mount --make-rprivate / failed"
	mkdir -p /run/netns /run/dpdk
	mount -t tmpfs -o mode=0755 bench-netns /run/netns || bench_die "tmpfs on /run/netns"
	mount -t tmpfs -o mode=0755 bench-dpdk /run/dpdk || bench_die "tmpfs on /run/dpdk"
	# Hugepage files, if the host has hugepages, vanish with the sandbox.
	if [ -d /dev/hugepages ] && grep -qs hugetlbfs /proc/filesystems; then
		mount -t hugetlbfs bench-huge /dev/hugepages 2>/dev/null || true
	fi
	ip link set lo up
	bench_quiet_ipv6 ""

	BENCH_TMP=$(mktemp -d "${TMPDIR:-/tmp}/podcap-bench.XXXXXX") || bench_die "mktemp"
	trap bench_cleanup EXIT
	trap 'bench_log "interrupted"; exit 130' INT
	trap 'bench_log "terminated"; exit 143' TERM
}

bench_cleanup()
{
	local rc=$? pid

	trap - EXIT INT TERM
	for pid in $BENCH_PIDS; do
		kill -TERM "$pid" 2>/dev/null
	done
	for pid in $BENCH_PIDS; do
		bench_reap "$pid" 5 || kill -KILL "$pid" 2>/dev/null
	done
	if [ -n "${BENCH_KEEP_TMP:-}" ]; then
		bench_log "logs kept in $BENCH_TMP"
	elif [ -n "${BENCH_TMP:-}" ]; then
		rm -rf "$BENCH_TMP"
	fi
	# Namespaces, links and stray processes die with this process: it is
	# PID 1 of the sandbox.
	exit "$rc"
}

# bench_reap PID TIMEOUT: waits (TIMEOUT seconds at most) for a child to
# exit; 0 with its status in $bench_status, 1 if it is still running.
bench_reap()
{
	local pid=$1 timeout=$2 waited=0

	# kill -0 also succeeds on a zombie: look at the state.
	while kill -0 "$pid" 2>/dev/null && ! grep -qs '^State:.*Z' "/proc/$pid/status"; do
		[ "$waited" -ge $((timeout * 10)) ] && return 1
		sleep 0.1
		waited=$((waited + 1))
	done
	wait "$pid" 2>/dev/null
	bench_status=$?
	return 0
}

# bench_forget PID: no longer stop PID on exit.
bench_forget()
{
	local p out=""

	for p in $BENCH_PIDS; do
		[ "$p" = "$1" ] || out="$out $p"
	done
	BENCH_PIDS=$out
}

# bench_fg OUT ERR CMD...: runs CMD with its output in OUT and errors in
# ERR, in the background while the shell waits, so that a signal runs the
# shell's trap at once (and the trap's own messages still reach stderr).
bench_fg()
{
	local out=$1 err=$2

	shift 2
	"$@" >"$out" 2>"$err" &
	wait "$!"
}

bench_now()
{
	date +%s.%N
}

# bench_sample KEY=VALUE...: one raw measurement, a JSON object per line of
# $BENCH_SAMPLES; values that look like numbers are numbers.
bench_sample()
{
	"$BENCH_PYTHON" - "$@" >>"$BENCH_SAMPLES" <<'EOF'
import json, sys
d = {}
for kv in sys.argv[1:]:
    k, v = kv.split("=", 1)
    try:
        d[k] = int(v)
    except ValueError:
        try:
            d[k] = float(v)
        except ValueError:
            d[k] = v
print(json.dumps(d, sort_keys=True))
EOF
}

bench_quiet_ipv6()
{
	local ns=$1 run=""

	# Router solicitations and MLD would reach the forwarder as frames of
	# no pod.
	[ -n "$ns" ] && run="ip netns exec $ns"
	$run sysctl -qw net.ipv6.conf.all.disable_ipv6=1 \
	    net.ipv6.conf.default.disable_ipv6=1 >/dev/null 2>&1 || true
}

# Offloads off (af_packet would otherwise see 64 KiB segments), MTU 1500.
bench_link_prep()
{
	local ns=$1 dev=$2 run=""

	[ -n "$ns" ] && run="ip netns exec $ns"
	$run ethtool -K "$dev" tx off rx off gso off tso off gro off >/dev/null 2>&1 ||
	    bench_die "ethtool -K $dev failed"
	$run ip link set dev "$dev" mtu 1500 up || bench_die "cannot bring $dev up"
}

bench_topology()
{
	local ns

	for ns in pod fabric; do
		ip netns add "$ns" || bench_die "ip netns add $ns"
		bench_quiet_ipv6 "$ns"
		ip -n "$ns" link set lo up
	done
	ip link add vpod0 type veth peer name eth0 netns pod ||
	    bench_die "cannot create veth vpod0"
	ip link add vfab0 type veth peer name eth0 netns fabric ||
	    bench_die "cannot create veth vfab0"
	bench_link_prep "" vpod0
	bench_link_prep "" vfab0
	bench_link_prep pod eth0
	bench_link_prep fabric eth0
	ip -n pod link set dev eth0 address "$BENCH_POD_MAC"
	ip -n fabric link set dev eth0 address "$BENCH_FABRIC_MAC"
	ip -n pod addr add "$BENCH_POD_IP/24" dev eth0
	ip -n fabric addr add "$BENCH_FABRIC_IP/24" dev eth0
}

# The forwarders. Each start function returns once frames can cross, or
# fails; each stop function leaves vpod0 and vfab0 unattached.

# DPDK processes of this run share one choice with podcapd's: hugepages
# when free ones are mounted, else --no-huge (src/daemon/eal.c).
bench_hugepages()
{
	local free

	free=$(awk '/^HugePages_Free:/ { print $2 }' /proc/meminfo)
	[ "${free:-0}" -gt 0 ] && grep -qs ' hugetlbfs ' /proc/mounts
}

bench_testpmd_start()
{
	local huge=--no-huge log=$BENCH_TMP/testpmd.log

	bench_hugepages && huge=""
	# Without a console, testpmd exits at once unless it prints
	# statistics periodically.
	dpdk-testpmd -l 0-1 $huge -m 1024 --file-prefix=bench-testpmd --no-pci \
	    --vdev=net_af_packet0,iface=vpod0 --vdev=net_af_packet1,iface=vfab0 \
	    -- --forward-mode=io --total-num-mbufs=8192 --stats-period=3600 -a \
	    >"$log" 2>&1 </dev/null &
	BENCH_FWD_PID=$!
	BENCH_PIDS="$BENCH_PIDS $BENCH_FWD_PID"
	if ! bench_wait_line "$log" 'Start automatic packet forwarding|io packet forwarding' \
	    "$BENCH_FWD_PID" 60; then
		tail -n 30 "$log" >&2
		bench_die "dpdk-testpmd did not start"
	fi
}

# bench_podcapd_start CONFIG: window lines go to $BENCH_PODCAPD_OUT, the
# log to $BENCH_PODCAPD_LOG. The EAL logs at debug level, for the TSC
# frequency it works out (bench_podcapd_tsc_args).
bench_podcapd_start()
{
	local config=$1 log=$BENCH_TMP/podcapd.log

	BENCH_PODCAPD_OUT=$BENCH_TMP/podcapd.out
	BENCH_PODCAPD_LOG=$log
	: >"$BENCH_PODCAPD_OUT"
	: >"$log"
	"$PODCAPD" --config "$config" -- --log-level=lib.eal:debug \
	    >"$BENCH_PODCAPD_OUT" 2>"$log" </dev/null &
	BENCH_FWD_PID=$!
	BENCH_PIDS="$BENCH_PIDS $BENCH_FWD_PID"
	if ! bench_wait_line "$log" forwarding "$BENCH_FWD_PID" 60; then
		tail -n 40 "$log" >&2
		bench_die "podcapd did not report 'forwarding' within 60 s"
	fi
}

# bench_podcapd_tsc_args: "tsc_hz=N tsc_source=S", the TSC frequency
# podcapd's buckets count with: from its "TSC: N Hz measured" line (S is
# "measured"), or, from a podcapd that took the EAL's figure, from the EAL's
# "TSC frequency is ~N KHz" (S is "eal"); nothing if neither was logged.
bench_podcapd_tsc_args()
{
	local v

	v=$(sed -n 's/.*TSC: \([0-9]*\) Hz measured.*/\1/p' "$BENCH_PODCAPD_LOG" | head -n 1)
	if [ -n "$v" ]; then
		echo "tsc_hz=$v tsc_source=measured"
		return
	fi
	v=$(sed -n 's/.*TSC frequency is ~\([0-9]*\) KHz.*/\1/p' "$BENCH_PODCAPD_LOG" | head -n 1)
	[ -z "$v" ] || echo "tsc_hz=$((v * 1000)) tsc_source=eal"
}

# bench_forwarder_stop NAME: SIGTERM, then SIGKILL after 20 s (and say so).
bench_forwarder_stop()
{
	local name=$1 pid=${BENCH_FWD_PID:-}

	[ -n "$pid" ] || return 0
	BENCH_FWD_PID=""
	kill -TERM "$pid" 2>/dev/null
	if ! bench_reap "$pid" 20; then
		bench_log "$name ignored SIGTERM for 20 s; killing it"
		kill -KILL "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
		bench_status=137
	fi
	bench_forget "$pid"
	[ "$bench_status" = 0 ] || bench_log "$name exited with status $bench_status"
	return 0
}

# bench_bridge_start [TC_ARGS]: a Linux bridge between vpod0 and vfab0; with
# TC_ARGS, a root qdisc "tc qdisc add dev DEV root TC_ARGS" on both ports
# (each port's egress: vfab0 towards the fabric, vpod0 towards the pod).
bench_bridge_start()
{
	local dev

	ip link add br0 type bridge stp_state 0 || bench_die "cannot create br0"
	for dev in vpod0 vfab0; do
		ip link set dev "$dev" master br0 || bench_die "cannot attach $dev to br0"
		if [ $# -gt 0 ]; then
			tc qdisc add dev "$dev" root "$@" || bench_die "tc qdisc add dev $dev root $*"
		fi
	done
	ip link set br0 up
}

bench_bridge_stop()
{
	local dev

	for dev in vpod0 vfab0; do
		tc qdisc del dev "$dev" root 2>/dev/null
		ip link set dev "$dev" nomaster 2>/dev/null
	done
	ip link del br0 2>/dev/null
	return 0
}

# bench_wait_line FILE PATTERN PID TIMEOUT: 0 when a line of FILE matches
# the extended regular expression, 1 on timeout or when PID exits first.
bench_wait_line()
{
	local file=$1 pattern=$2 pid=$3 timeout=$4 waited=0

	while [ "$waited" -lt $((timeout * 10)) ]; do
		grep -Eqs -- "$pattern" "$file" && return 0
		if ! kill -0 "$pid" 2>/dev/null; then
			grep -Eqs -- "$pattern" "$file"
			return
		fi
		sleep 0.1
		waited=$((waited + 1))
	done
	return 1
}

# What the forwarder's polling thread got of its core while traffic ran.
# A busy-polling thread should run all the time: on a shared machine other
# busy threads on the same core make it wait on the run queue, and then the
# numbers measure the machine, not the forwarder. bench_sched_begin, then
# bench_sched_end leaves "cpu_frac=X wait_frac=Y" (time on the CPU and time
# runnable but waiting, as fractions of the wall time, from
# /proc/PID/task/TID/schedstat) in $sched_args, or "" for the bridge.
bench_sched_begin()
{
	local t

	sched_stat=""
	sched_args=""
	[ -n "${BENCH_FWD_PID:-}" ] || return 0
	for t in /proc/"$BENCH_FWD_PID"/task/*; do
		case $(cat "$t/comm" 2>/dev/null) in
		rte-worker*|lcore-worker*) sched_stat=$t/schedstat; break ;;
		esac
	done
	[ -n "$sched_stat" ] || return 0
	read -r sched_cpu sched_wait _ <"$sched_stat" || sched_stat=""
	sched_t0=$(date +%s%N)
}

bench_sched_end()
{
	local cpu wait t1

	sched_args=""
	[ -n "$sched_stat" ] || return 0
	read -r cpu wait _ <"$sched_stat" 2>/dev/null || return 0
	t1=$(date +%s%N)
	sched_args=$(awk -v c=$((cpu - sched_cpu)) -v w=$((wait - sched_wait)) \
	    -v t=$((t1 - sched_t0)) 'BEGIN { printf "cpu_frac=%.4f wait_frac=%.4f", c / t, w / t }')
}

# bench_ping_ok: until one ping from the pod reaches the fabric (10 s).
bench_ping_ok()
{
	for _ in $(seq 10); do
		ip netns exec pod ping -c 1 -W 1 -q "$BENCH_FABRIC_IP" >/dev/null 2>&1 && return 0
	done
	return 1
}

# bench_iperf NAME SECONDS [-R]: one iperf3 TCP run from the pod to a
# one-off server in the fabric (-R: the other way). Leaves the report in
# $BENCH_TMP/NAME.json, the receiver's goodput (Mbit/s) in $goodput and
# its payload bytes in $goodput_bytes (both "" on failure), and the
# run's start and end (Unix seconds) in $run_t0, $run_t1, and what the
# forwarder's polling thread got of its core in $sched_args.
bench_iperf()
{
	local name=$1 secs=$2 json=$BENCH_TMP/$1.json spid

	shift 2
	ip netns exec fabric taskset -c "$BENCH_TRAFFIC_CPU" iperf3 -s -1 -B "$BENCH_FABRIC_IP" -p "$BENCH_IPERF_PORT" \
	    >"$BENCH_TMP/$name.server.log" 2>&1 </dev/null &
	spid=$!
	BENCH_PIDS="$BENCH_PIDS $spid"
	for _ in $(seq 50); do
		ip netns exec fabric ss -Hltn "sport = :$BENCH_IPERF_PORT" 2>/dev/null |
		    grep -q LISTEN && break
		sleep 0.1
	done
	run_t0=$(bench_now)
	bench_sched_begin
	# A forwarder that stalls must not hang the benchmark.
	bench_fg "$json" "$BENCH_TMP/$name.err" ip netns exec pod taskset -c "$BENCH_TRAFFIC_CPU" \
	    timeout $((secs + 30)) iperf3 -J -c "$BENCH_FABRIC_IP" \
	    -p "$BENCH_IPERF_PORT" -t "$secs" -O 1 --connect-timeout 5000 "$@"
	bench_sched_end
	run_t1=$(bench_now)
	bench_reap "$spid" 5 || kill -KILL "$spid" 2>/dev/null
	bench_forget "$spid"
	goodput=$("$BENCH_PYTHON" -c 'import json, sys
r = json.load(open(sys.argv[1]))["end"]["sum_received"]
print("%.2f %d" % (r["bits_per_second"] / 1e6, r["bytes"]))' "$json" 2>/dev/null)
	goodput_bytes=${goodput#* }
	goodput=${goodput% *}
	if [ -z "$goodput" ]; then
		bench_log "$name: iperf3 gave no result: $("$BENCH_PYTHON" -c 'import json, sys
print(json.load(open(sys.argv[1])).get("error", "?"))' "$json" 2>/dev/null || cat "$BENCH_TMP/$name.err")"
		goodput_bytes=""
	fi
}

# bench_ping NAME COUNT: COUNT pings from the pod to the fabric, 20 ms apart;
# their RTTs (ms) one per line in $BENCH_TMP/NAME.rtt, the median in $rtt
# ("" if none came back), the number of replies in $replies, and what the
# forwarder's polling thread got of its core in $sched_args.
bench_ping()
{
	local name=$1 count=$2

	bench_sched_begin
	bench_fg "$BENCH_TMP/$name.ping" "$BENCH_TMP/$name.ping.err" \
	    ip netns exec pod taskset -c "$BENCH_TRAFFIC_CPU" \
	    ping -n -c "$count" -i 0.02 -W 1 "$BENCH_FABRIC_IP"
	bench_sched_end
	sed -n 's/.* time=\([0-9.]*\) ms.*/\1/p' "$BENCH_TMP/$name.ping" >"$BENCH_TMP/$name.rtt"
	rtt=$("$BENCH_PYTHON" -c 'import statistics, sys
v = [float(x) for x in open(sys.argv[1])]
print("%.4f" % statistics.median(v) if v else "")' "$BENCH_TMP/$name.rtt")
	replies=$(wc -l <"$BENCH_TMP/$name.rtt")
}

# bench_keygen ID: a fresh signing key for appliance ID in $BENCH_TMP.
bench_keygen()
{
	"$PODCAP_KEYGEN" --name "podcap/$1" --out "$BENCH_TMP/$1.key" \
	    >"$BENCH_TMP/keygen.log" 2>&1 || {
		cat "$BENCH_TMP/keygen.log" >&2
		bench_die "podcap-keygen failed"
	}
}

# bench_machine: a JSON object describing this machine and run.
bench_machine()
{
	"$BENCH_PYTHON" - "$PODCAPD" <<'EOF'
import json, os, platform, subprocess, sys, time
def first(path, key):
    try:
        for line in open(path):
            if line.startswith(key):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return ""
def run(*cmd):
    try:
        return subprocess.run(cmd, capture_output=True, text=True).stdout.strip()
    except OSError:
        return ""
def cpu_times():
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    return v[3] + v[4], sum(v[:8])
# How idle the machine was just before the run: others share it.
i0, t0 = cpu_times()
time.sleep(1)
i1, t1 = cpu_times()
huge = int(first("/proc/meminfo", "HugePages_Free") or 0)
print(json.dumps({
    "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    "cpus": os.cpu_count(),
    "cpu_model": first("/proc/cpuinfo", "model name"),
    "kernel": platform.release(),
    "loadavg_at_start": open("/proc/loadavg").read().split()[:3],
    "cpu_idle_fraction_1s_before": round((i1 - i0) / max(1, t1 - t0), 3),
    "hugepages_free": huge,
    "dpdk": run("pkg-config", "--modversion", "libdpdk"),
    # what the kernel measured the CPU (and TSC) frequency at
    "cpu_mhz": float(first("/proc/cpuinfo", "cpu MHz") or 0),
    "iperf3": run("iperf3", "--version").splitlines()[0] if run("iperf3", "--version") else "",
    "podcapd": sys.argv[1],
}))
EOF
}
