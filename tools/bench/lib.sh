# SPDX-License-Identifier: BSD-3-Clause
# shellcheck shell=bash
#
# Shared by the sections of tools/bench/run. The sandbox (fresh mount,
# network and PID namespaces, a private /run, cleanup of every process on
# exit) and the veth plumbing are tests/e2e/lib.sh's: this file sources it
# and adds only what a benchmark needs on top. A section:
#
#   BENCH_NAME=latency
#   . "$(dirname "$0")/lib.sh"
#   bench_args "$@"            # --build DIR --out FILE [--quick]
#   bench_require iperf3 ...   # outside the sandbox: tools, or skip (77)
#   pc_sandbox "$@"            # re-executes itself inside the sandbox
#   bench_topology
#   ... bench_sample KEY=VALUE ... (raw measurements, $BENCH_SAMPLES)
#   bench_report latency       # report.py turns them into --out
#
# The testbed (10.0.0.0/24, IPv4 only):
#
#   pod ns                                          fabric ns
#   10.0.0.1  eth0 ---- vpod0 [forwarder] vfab0 ---- eth0  10.0.0.200
#                       \______ sandbox root ______/
#
# The forwarder is the only path between the two hosts: podcapd or
# dpdk-testpmd driving vpod0 and vfab0 with DPDK's net_af_packet, or a Linux
# bridge br0 holding both (with tc on its ports).

BENCH_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
BENCH_ROOT=$(cd "$BENCH_DIR/../.." && pwd)
# shellcheck source=tests/e2e/lib.sh
. "$BENCH_ROOT/tests/e2e/lib.sh"
PC_NAME=${BENCH_NAME:-bench}

BENCH_POD_IP=10.0.0.1
BENCH_FABRIC_IP=10.0.0.200
BENCH_POD_MAC=02:00:0a:00:00:01
BENCH_FABRIC_MAC=02:00:0a:00:00:c8
BENCH_IPERF_PORT=5201

# The DPDK forwarders poll on lcore 1 (-l 0-1: the main lcore 0 mostly
# sleeps); iperf3 and ping run on CPU 0 (PC_HOST_CPUS, tests/e2e/lib.sh),
# so that the traffic does not take the forwarder's core.

# A measurement during which the forwarder's polling thread waited for its
# core longer than this fraction of the time is "contended": it measured the
# machine's other work as much as the forwarder (bench_sched_end).
BENCH_CONTENDED=0.05

# The host's PID of the section, for DPDK file prefixes that no other run
# shares (the sandbox's own PID is always 1).
BENCH_ID=${BENCH_ID:-$$}
export BENCH_ID

bench_log()
{
	pc_log "$@"
}

bench_die()
{
	pc_die "$@"
}

# bench_args "$@": the options every section takes.
bench_args()
{
	BENCH_BUILD=""
	BENCH_OUT=""
	BENCH_QUICK=""
	while [ $# -gt 0 ]; do
		case $1 in
		--build) BENCH_BUILD=${2:-}; shift 2 || break ;;
		--out) BENCH_OUT=${2:-}; shift 2 || break ;;
		--quick) BENCH_QUICK=1; shift ;;
		-h|--help)
			echo "usage: tools/bench/$BENCH_NAME --build BUILDDIR --out FILE.json [--quick]"
			exit 0 ;;
		*)
			echo "usage: tools/bench/$BENCH_NAME --build BUILDDIR --out FILE.json [--quick]" >&2
			exit 2 ;;
		esac
	done
	[ -n "$BENCH_BUILD" ] && [ -n "$BENCH_OUT" ] || {
		echo "usage: tools/bench/$BENCH_NAME --build BUILDDIR --out FILE.json [--quick]" >&2
		exit 2
	}
	case $BENCH_BUILD in /*) ;; *) BENCH_BUILD=$PWD/$BENCH_BUILD ;; esac
	case $BENCH_OUT in /*) ;; *) BENCH_OUT=$PWD/$BENCH_OUT ;; esac
	PODCAPD=$BENCH_BUILD/src/cmd/podcapd/podcapd
	PODCAP_KEYGEN=$BENCH_BUILD/src/cmd/podcap-keygen/podcap-keygen
	PODCAP_VERIFY=$BENCH_BUILD/src/cmd/podcap-verify/podcap-verify
	export PODCAPD PODCAP_KEYGEN PODCAP_VERIFY
}

# bench_require THING...: outside the sandbox: root and every command (or
# executable, when it holds a slash), or skip the section (status 77).
bench_require()
{
	local c missing=""

	[ "${PC_SANDBOX:-}" = 1 ] && return 0
	[ "$(id -u)" = 0 ] || pc_skip "needs root (network namespaces, veth links)"
	for c in "$@"; do
		case $c in
		*/*) [ -x "$c" ] || missing="$missing $c" ;;
		*) command -v "$c" >/dev/null 2>&1 || missing="$missing $c" ;;
		esac
	done
	[ -z "$missing" ] || pc_skip "missing:$missing (tools/setup installs and builds them)"
	[ -w "$(dirname "$BENCH_OUT")" ] || pc_die "cannot write to $(dirname "$BENCH_OUT")"
}

# bench_init: inside the sandbox, the raw measurements file.
bench_init()
{
	BENCH_TMP=$PC_TMP
	BENCH_SAMPLES=$BENCH_TMP/samples.jsonl
	: >"$BENCH_SAMPLES"
	BENCH_COMMANDS=$BENCH_TMP/commands.txt
	: >"$BENCH_COMMANDS"
}

# bench_command CMD...: records a command line the report lists as run.
bench_command()
{
	printf '%s\n' "$*" >>"$BENCH_COMMANDS"
}

# bench_sample KEY=VALUE...: one raw measurement, a JSON object per line of
# $BENCH_SAMPLES; values that look like numbers are numbers.
bench_sample()
{
	"$PC_PYTHON" "$BENCH_DIR/report.py" sample "$@" >>"$BENCH_SAMPLES"
}

# bench_report SECTION [ARGS...]: report.py turns the samples into $BENCH_OUT.
bench_report()
{
	local section=$1

	shift
	"$PC_PYTHON" "$BENCH_DIR/report.py" "$section" --samples "$BENCH_SAMPLES" \
	    --commands "$BENCH_COMMANDS" --out "$BENCH_OUT" ${BENCH_QUICK:+--quick} "$@" ||
	    bench_die "report.py $section failed"
}

bench_topology()
{
	local ns

	for ns in pod fabric; do
		ip netns add "$ns" || bench_die "ip netns add $ns"
		pc_quiet_ipv6 "$ns"
		ip -n "$ns" link set lo up
	done
	pc_veth "" vpod0 pod eth0
	pc_veth "" vfab0 fabric eth0
	pc_host pod "$BENCH_POD_IP" "$BENCH_POD_MAC" ""
	pc_host fabric "$BENCH_FABRIC_IP" "$BENCH_FABRIC_MAC" ""
}

# The forwarders. Each start function returns once frames can cross, or
# fails; each stop function leaves vpod0 and vfab0 unattached.

# bench_podcapd_config FILE NAME CAP BURST MODE [QUEUE]: a pod map of one pod
# (10.0.0.0/25, the pod host) between vpod0 and vfab0, 1 s windows, its
# ledger in $BENCH_TMP/NAME.ledger signed with a fresh key.
bench_podcapd_config()
{
	local file=$1 name=$2 cap=$3 burst=$4 mode=$5 queue=${6:-}

	pc_keygen "podcap/$name" "$BENCH_TMP/$name.key" || bench_die "podcap-keygen failed"
	cat >"$file" <<EOF
appliance:
  id: $name
  signing_key: $BENCH_TMP/$name.key
  ledger: $BENCH_TMP/$name.ledger
  listen: 127.0.0.1:0
window: 1s
# DPDK's af_packet driver takes frames of 1518 bytes at most.
max_frame: 1518B
defaults:
  cap: $cap
  burst: $burst
  mode: $mode
${queue:+  queue_delay: $queue}
dpdk:
  lcores: 0-1
  memory: 1GiB
  file_prefix: bench-$name-$BENCH_ID
uplinks:
  - name: uplink0
    pod_port: net_af_packet0,iface=vpod0
    fabric_port: net_af_packet1,iface=vfab0
pods:
  - id: pod-00
    uplink: uplink0
    prefixes: [10.0.0.0/25]
EOF
	"$PODCAPD" --check-config "$file" >"$BENCH_TMP/check.log" 2>&1 || {
		cat "$BENCH_TMP/check.log" >&2
		bench_die "podcapd refuses the benchmark's pod map"
	}
}

# bench_podcapd_start CONFIG: pc_podcapd_start, with the forwarder's PID in
# $BENCH_FWD_PID for bench_sched_begin.
bench_podcapd_start()
{
	pc_podcapd_start "$1" || bench_die "podcapd did not start"
	BENCH_FWD_PID=$PC_PODCAPD_PID
	bench_command "${PODCAPD#"$BENCH_ROOT"/} --config podmap.yaml  # $(grep -E '^  (cap|burst|mode|queue_delay):' "$1" | tr -s ' \n' ' ')"
}

# bench_podcapd_stop: SIGTERM; its exit status in $bench_status.
bench_podcapd_stop()
{
	pc_podcapd_stop 20
	bench_status=$?
	BENCH_FWD_PID=""
	bench_hugepages_clear
	[ "$bench_status" = 0 ] || bench_log "podcapd exited with status $bench_status"
}

# bench_podcapd_tsc: the TSC frequency podcapd's buckets count with (Hz),
# from its "TSC: N Hz measured" line; "" if it did not say.
bench_podcapd_tsc()
{
	sed -n 's/.*TSC: \([0-9]*\) Hz measured.*/\1/p' "$PC_PODCAPD_ERR" | head -n 1
}

# bench_hugepages_reserve PAGES: raises the machine's 2 MiB hugepages by
# PAGES for this run and mounts hugetlbfs in the sandbox's mount namespace,
# as on a production appliance; the count is put back when the sandbox
# exits, also on failure (PC_CLEANUP_HOOK). PODCAP_BENCH_NO_HUGE=1, or a
# kernel that cannot find the memory, leaves every process on --no-huge.
BENCH_HUGE_ADDED=0
BENCH_HUGE_DIR=""

bench_hugepages_reserve()
{
	local pages=$1 old new

	[ "${PODCAP_BENCH_NO_HUGE:-}" = 1 ] && return 0
	old=$(cat /proc/sys/vm/nr_hugepages 2>/dev/null) || return 0
	echo $((old + pages)) >/proc/sys/vm/nr_hugepages 2>/dev/null || return 0
	new=$(cat /proc/sys/vm/nr_hugepages)
	BENCH_HUGE_ADDED=$((new - old))
	PC_CLEANUP_HOOK=bench_hugepages_release
	if [ "$BENCH_HUGE_ADDED" -lt "$pages" ]; then
		bench_log "only $BENCH_HUGE_ADDED of $pages hugepages: --no-huge"
		return 0
	fi
	mkdir -p "$BENCH_TMP/hugepages"
	mount -t hugetlbfs -o pagesize=2M bench-huge "$BENCH_TMP/hugepages" || return 0
	BENCH_HUGE_DIR=$BENCH_TMP/hugepages
	bench_command "echo \$((nr_hugepages + $pages)) >/proc/sys/vm/nr_hugepages; mount -t hugetlbfs -o pagesize=2M nodev DIR  # put back at the end"
	bench_log "$pages hugepages of 2 MiB mounted on $BENCH_HUGE_DIR"
}

# bench_hugepages_clear: what a stopped DPDK process left in the mount.
bench_hugepages_clear()
{
	[ -n "$BENCH_HUGE_DIR" ] && rm -f "$BENCH_HUGE_DIR"/*
	return 0
}

bench_hugepages_release()
{
	local cur

	if [ -n "$BENCH_HUGE_DIR" ]; then
		bench_hugepages_clear
		umount "$BENCH_HUGE_DIR" 2>/dev/null
		BENCH_HUGE_DIR=""
	fi
	if [ "$BENCH_HUGE_ADDED" -gt 0 ]; then
		cur=$(cat /proc/sys/vm/nr_hugepages)
		echo $((cur > BENCH_HUGE_ADDED ? cur - BENCH_HUGE_ADDED : 0)) >/proc/sys/vm/nr_hugepages
		BENCH_HUGE_ADDED=0
	fi
}

# DPDK processes of this run make the same choice as podcapd: hugepages
# when free ones are mounted, else --no-huge (src/cmd/podcapd/eal.c).
bench_hugepages()
{
	local free

	free=$(awk '/^HugePages_Free:/ { print $2 }' /proc/meminfo)
	[ "${free:-0}" -gt 0 ] && grep -qs ' hugetlbfs ' /proc/mounts
}

BENCH_TESTPMD_ARGS="--no-pci --vdev=net_af_packet0,iface=vpod0 --vdev=net_af_packet1,iface=vfab0 -- --forward-mode=io --total-num-mbufs=8192 --stats-period=3600 -a"

bench_testpmd_start()
{
	local huge=--no-huge log=$BENCH_TMP/testpmd.log

	bench_hugepages && huge=""
	# Without a console, testpmd exits at once unless it prints
	# statistics periodically.
	# shellcheck disable=SC2086
	dpdk-testpmd -l 0-1 $huge -m 1024 --file-prefix="bench-testpmd-$BENCH_ID" \
	    $BENCH_TESTPMD_ARGS >"$log" 2>&1 </dev/null &
	BENCH_FWD_PID=$!
	PC_PIDS="$PC_PIDS $BENCH_FWD_PID"
	bench_command "dpdk-testpmd -l 0-1 $huge -m 1024 --file-prefix=bench-testpmd-ID $BENCH_TESTPMD_ARGS"
	if ! pc_wait_line "$log" 'Start automatic packet forwarding|io packet forwarding' \
	    "$BENCH_FWD_PID" 60; then
		pc_show_log "$log" 30
		bench_die "dpdk-testpmd did not start"
	fi
}

bench_testpmd_stop()
{
	local pid=${BENCH_FWD_PID:-}

	[ -n "$pid" ] || return 0
	BENCH_FWD_PID=""
	kill -TERM "$pid" 2>/dev/null
	if ! pc_reap "$pid" 20; then
		bench_log "dpdk-testpmd ignored SIGTERM for 20 s; killing it"
		kill -KILL "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
	fi
	bench_hugepages_clear
}

# bench_bridge_start [TC_ARGS]: a Linux bridge between vpod0 and vfab0; with
# TC_ARGS, a root qdisc "tc qdisc add dev DEV root TC_ARGS" on both ports
# (each port's egress: vfab0 towards the fabric, vpod0 towards the pod).
bench_bridge_start()
{
	local dev

	ip link add br0 type bridge stp_state 0 forward_delay 0 || bench_die "cannot create br0"
	for dev in vpod0 vfab0; do
		ip link set dev "$dev" master br0 || bench_die "cannot attach $dev to br0"
		if [ $# -gt 0 ]; then
			tc qdisc add dev "$dev" root "$@" || bench_die "tc qdisc add dev $dev root $*"
			bench_command "tc qdisc add dev $dev root $*"
		fi
	done
	ip link set br0 up
	bench_command "ip link add br0 type bridge; ip link set vpod0 master br0; ip link set vfab0 master br0"
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

# bench_ovs_start KBPS BURST_KBITS: Debian's ovs-vswitchd-dpdk with a netdev
# bridge of vpod0 and vfab0 as af_packet dpdk ports, one PMD on CPU 1, and
# each direction through its own OpenFlow 1.3 meter (drop band, KBPS, a
# bucket of BURST_KBITS). Its database, run and log directories are tmpfs
# mounts of the benchmark's mount namespace; bench_ovs_stop removes them.
BENCH_OVS_DIRS="/run/openvswitch /etc/openvswitch /var/lib/openvswitch /var/log/openvswitch"
BENCH_OVS_VSWITCHD=/usr/lib/openvswitch-switch-dpdk/ovs-vswitchd-dpdk

bench_ovs_available()
{
	[ -x "$BENCH_OVS_VSWITCHD" ] && command -v ovs-vsctl >/dev/null
}

# bench_ovs CMD...: one OVS set-up step; on failure BENCH_OVS_ERROR says why
# (the step's own message and ovs-vswitchd's errors) and it returns 1.
bench_ovs()
{
	"$@" >>"$BENCH_TMP/ovs.log" 2>&1 && return 0
	BENCH_OVS_ERROR="$* failed: $(tail -n 3 "$BENCH_TMP/ovs.log")"
	[ -f "$BENCH_TMP/ovs-vswitchd.log" ] &&
	    BENCH_OVS_ERROR="$BENCH_OVS_ERROR; ovs-vswitchd: $(grep '|ERR|' "$BENCH_TMP/ovs-vswitchd.log" | tail -n 3)"
	return 1
}

# bench_ovs_port NAME DEVARGS: adds a dpdk port and checks that the switch
# really took it (ovs-vsctl exits 0 when only the datapath refused it).
bench_ovs_port()
{
	local name=$1 devargs=$2 err

	bench_ovs ovs-vsctl add-port ovsbr0 "$name" -- set Interface "$name" type=dpdk \
	    options:dpdk-devargs="$devargs" || return 1
	err=$(ovs-vsctl get Interface "$name" error 2>&1)
	case $err in
	""|'[]') return 0 ;;
	esac
	BENCH_OVS_ERROR="port $name ($devargs): $err; ovs-vswitchd: $(grep '|ERR|' "$BENCH_TMP/ovs-vswitchd.log" | tail -n 3)"
	return 1
}

# bench_ovs_start KBPS BURST_KBITS: returns 1 with BENCH_OVS_ERROR set, and
# everything it started stopped again, when OVS could not be set up.
bench_ovs_start()
{
	BENCH_OVS_ERROR=""
	bench_ovs_setup "$@" && return 0
	bench_ovs_stop
	return 1
}

bench_ovs_setup()
{
	local kbps=$1 burst=$2 d huge="--no-huge " ctl=/run/openvswitch/ovs-vswitchd.ctl

	for d in $BENCH_OVS_DIRS; do
		mkdir -p "$d" && mount -t tmpfs -o mode=0755 bench-ovs "$d" ||
		    { BENCH_OVS_ERROR="cannot mount $d"; return 1; }
	done
	bench_hugepages && huge=""
	# per-port-memory: a mempool sized to each port's queues; the shared
	# default asks for 262144 mbufs at MTU 1500, more than -m 1024 holds.
	bench_ovs ovsdb-tool create /etc/openvswitch/conf.db /usr/share/openvswitch/vswitch.ovsschema &&
	bench_ovs ovsdb-server /etc/openvswitch/conf.db --remote=punix:/run/openvswitch/db.sock \
	    --pidfile --detach --log-file="$BENCH_TMP/ovsdb-server.log" &&
	bench_ovs ovs-vsctl --no-wait init &&
	bench_ovs ovs-vsctl --no-wait set Open_vSwitch . other_config:dpdk-init=true \
	    other_config:dpdk-extra="\"$huge-m 1024 --no-pci --legacy-mem --file-prefix=bench-ovs-$BENCH_ID\"" \
	    other_config:pmd-cpu-mask=0x2 other_config:dpdk-lcore-mask=0x1 \
	    other_config:per-port-memory=true &&
	bench_ovs "$BENCH_OVS_VSWITCHD" unix:/run/openvswitch/db.sock --pidfile --detach \
	    --log-file="$BENCH_TMP/ovs-vswitchd.log" --unixctl="$ctl" &&
	bench_ovs ovs-vsctl add-br ovsbr0 -- set bridge ovsbr0 datapath_type=netdev protocols=OpenFlow13 &&
	bench_ovs_port pod net_af_packet0,iface=vpod0 &&
	bench_ovs_port fab net_af_packet1,iface=vfab0 &&
	bench_ovs ovs-ofctl -O OpenFlow13 del-flows ovsbr0 || return 1
	for d in 1 2; do
		bench_ovs ovs-ofctl -O OpenFlow13 add-meter ovsbr0 \
		    "meter=$d,kbps,burst,band=type=drop,rate=$kbps,burst_size=$burst" || return 1
	done
	bench_ovs ovs-ofctl -O OpenFlow13 add-flow ovsbr0 in_port=pod,actions=meter:1,output:fab &&
	bench_ovs ovs-ofctl -O OpenFlow13 add-flow ovsbr0 in_port=fab,actions=meter:2,output:pod || return 1
	BENCH_FWD_PID=$(cat /run/openvswitch/ovs-vswitchd-dpdk.pid /run/openvswitch/ovs-vswitchd.pid 2>/dev/null | head -n 1)
	bench_command "ovs-vswitchd-dpdk (netdev bridge, dpdk ports net_af_packet0,iface=vpod0 and net_af_packet1,iface=vfab0, pmd-cpu-mask=0x2, per-port-memory=true)"
	bench_command "ovs-ofctl -O OpenFlow13 add-meter ovsbr0 meter=N,kbps,burst,band=type=drop,rate=$kbps,burst_size=$burst  # N = 1 up, 2 down"
}

bench_ovs_stop()
{
	local d pids i alive

	pids=$(cat /run/openvswitch/*.pid 2>/dev/null)
	ovs-appctl -t /run/openvswitch/ovs-vswitchd.ctl exit >/dev/null 2>&1
	for d in /run/openvswitch/ovsdb-server.*.ctl; do
		[ -e "$d" ] && ovs-appctl -t "$d" exit >/dev/null 2>&1
	done
	# a daemon that did not exit in 5 s is killed: its hugepages go with it
	for i in $(seq 50); do
		alive=""
		for d in $pids; do
			# a zombie's memory is already freed
			[ -r "/proc/$d/stat" ] && [ "$(sed 's/.*) //; s/ .*//' "/proc/$d/stat")" != Z ] &&
			    alive="$alive $d"
		done
		pids=$alive
		[ -z "$pids" ] && break
		sleep 0.1
	done
	for d in $pids; do
		kill -9 "$d" 2>/dev/null
	done
	# the netdev bridge's own port is a kernel tap of the bridge's name
	ip link del ovsbr0 2>/dev/null
	for d in $BENCH_OVS_DIRS; do
		umount -l "$d" 2>/dev/null
	done
	bench_hugepages_clear
	BENCH_FWD_PID=""
	return 0
}

# What the forwarder's polling thread got of its core while traffic ran.
# A busy-polling thread should run all the time: on a shared machine other
# busy threads on the same core make it wait on the run queue, and then the
# numbers measure the machine, not the forwarder. bench_sched_begin, then
# bench_sched_end leaves "wait_frac=Y" (the time it was runnable but waiting,
# a fraction of the wall time, from /proc/PID/task/TID/schedstat) in
# $sched_args, or "" for the bridge.
bench_sched_begin()
{
	local t

	sched_stat=""
	sched_args=""
	[ -n "${BENCH_FWD_PID:-}" ] || return 0
	for t in /proc/"$BENCH_FWD_PID"/task/*; do
		case $(cat "$t/comm" 2>/dev/null) in
		rte-worker*|lcore-worker*|podcap-w*) sched_stat=$t/schedstat; break ;;
		esac
	done
	[ -n "$sched_stat" ] || return 0
	read -r _ sched_wait _ <"$sched_stat" || sched_stat=""
	sched_t0=$(date +%s%N)
}

bench_sched_end()
{
	local wait t1

	sched_args=""
	[ -n "$sched_stat" ] || return 0
	read -r _ wait _ <"$sched_stat" 2>/dev/null || return 0
	t1=$(date +%s%N)
	sched_args=$(awk -v w=$((wait - sched_wait)) -v t=$((t1 - sched_t0)) \
	    'BEGIN { printf "wait_frac=%.4f", w / t }')
}

# bench_ping_ok: until one ping from the pod reaches the fabric (10 s).
bench_ping_ok()
{
	pc_ping_ok pod "$BENCH_FABRIC_IP" 10
}

# bench_iperf NAME SECONDS [-R]: one iperf3 TCP run from the pod to a
# one-off server in the fabric (-R: the other way). Leaves the report in
# $BENCH_TMP/NAME.json, the receiver's goodput (bit/s) in $goodput ("" on
# failure), the run's start and end (Unix seconds) in $run_t0 and $run_t1,
# and what the forwarder's polling thread got of its core in $sched_args.
bench_iperf()
{
	local name=$1 secs=$2 json=$BENCH_TMP/$1.json spid

	shift 2
	ip netns exec fabric taskset -c "$PC_HOST_CPUS" iperf3 -s -1 -B "$BENCH_FABRIC_IP" \
	    -p "$BENCH_IPERF_PORT" >"$BENCH_TMP/$name.server.log" 2>&1 </dev/null &
	spid=$!
	PC_PIDS="$PC_PIDS $spid"
	for _ in $(seq 50); do
		ip netns exec fabric ss -Hltn "sport = :$BENCH_IPERF_PORT" 2>/dev/null |
		    grep -q LISTEN && break
		sleep 0.1
	done
	run_t0=$(date +%s.%N)
	bench_sched_begin
	# A forwarder that stalls must not hang the benchmark.
	pc_fg ip netns exec pod taskset -c "$PC_HOST_CPUS" \
	    timeout -k 5 $((secs + 30)) iperf3 -J -c "$BENCH_FABRIC_IP" \
	    -p "$BENCH_IPERF_PORT" -t "$secs" -O 1 --connect-timeout 5000 "$@" \
	    >"$json" 2>"$BENCH_TMP/$name.err"
	bench_sched_end
	run_t1=$(date +%s.%N)
	pc_reap "$spid" 5 || kill -KILL "$spid" 2>/dev/null
	goodput=$(pc_json_get "$json" end.sum_received.bits_per_second 2>/dev/null)
	if [ -z "$goodput" ]; then
		bench_log "$name: iperf3 gave no result: $(pc_json_get "$json" error 2>/dev/null ||
		    cat "$BENCH_TMP/$name.err")"
	fi
}
