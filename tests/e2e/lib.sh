# SPDX-License-Identifier: BSD-3-Clause
# shellcheck shell=bash
#
# Shell functions for podcap's end-to-end tests and tools/demo. Source this
# file, then call pc_sandbox "$@" before anything else: the script
# re-executes itself inside fresh mount, network and PID namespaces, so every
# link, namespace and process it creates dies with it, even when it fails or
# is killed.
#
# The testbed (all addresses in 10.0.0.0/24, IPv4 only):
#
#   pod0 ns       pod1 ns       outsider ns
#   10.0.0.1      10.0.0.65     10.0.0.130
#    eth0          eth0          eth0
#     |             |             |
#   sw-pod0       sw-pod1       sw-out      podsw ns: bridge br0
#     +-------------+-------------+------ sw-cap
#                                           |
#                                         vpod0    sandbox root ns: the
#                                     [forwarder]  forwarder (podcapd, or
#                                         vfab0    dpdk-testpmd as a baseline)
#                                           |
#                                          eth0    fabric ns, 10.0.0.200
#
# pod0 and pod1 share one pod-side port, as pods behind one uplink do. The
# forwarder drives vpod0 and vfab0 with DPDK's net_af_packet and is the only
# path between the two sides.

PC_SKIP=77

PC_POD0_IP=10.0.0.1
PC_POD1_IP=10.0.0.65
PC_OUTSIDER_IP=10.0.0.130
PC_FABRIC_IP=10.0.0.200

# Fixed MACs, so static neighbour entries need no lookup.
PC_POD0_MAC=02:00:0a:00:00:01
PC_POD1_MAC=02:00:0a:00:00:41
PC_OUTSIDER_MAC=02:00:0a:00:00:82
PC_FABRIC_MAC=02:00:0a:00:00:c8

PC_NAMESPACES="podsw pod0 pod1 outsider fabric"

# The system's python3 when there is one: a version-manager shim may take a
# second to start, and the tests call it often.
if [ -x /usr/bin/python3 ]; then
	PC_PYTHON=/usr/bin/python3
else
	PC_PYTHON=python3
fi

# Processes started in the background: stopped on exit.
PC_PIDS=""

pc_log()
{
	printf '%s: %s\n' "${PC_NAME:-${0##*/}}" "$*" >&2
}

pc_die()
{
	pc_log "error: $*"
	exit 1
}

pc_skip()
{
	pc_log "SKIP: $*"
	exit "$PC_SKIP"
}

# A test's checks: each says PASS or FAIL, and the FAILs are counted in
# $failures, which the test turns into its exit status.
failures=0

pass()
{
	printf 'PASS  %s
' "$*"
}

fail()
{
	printf 'FAIL  %s
' "$*"
	failures=$((failures + 1))
}

# Outside the sandbox: what the testbed needs, or skip.
pc_require()
{
	local c

	[ "$(id -u)" = 0 ] || pc_skip "needs root (network namespaces, veth)"
	for c in unshare ip iperf3 ethtool ping python3 mount; do
		command -v "$c" >/dev/null 2>&1 || pc_skip "'$c' not found"
	done
}

# Re-executes the calling script inside its own namespaces (once), then
# prepares them. Call as: pc_sandbox "$@".
pc_sandbox()
{
	if [ "${PC_SANDBOX:-}" != 1 ]; then
		pc_require
		export PC_SANDBOX=1
		# If unshare itself is killed (timeout(1) signals only it),
		# the sandbox gets SIGTERM and cleans up.
		exec unshare --mount --net --pid --fork --mount-proc \
		    --kill-child=SIGTERM -- "$BASH" "$0" "$@"
	fi
	# A stale PC_SANDBOX must never make us remount the host's /run.
	[ "$$" = 1 ] || pc_die "PC_SANDBOX is set but this is not a sandbox"

	mount --make-rprivate / || pc_die "mount --make-rprivate / failed"
	# A private /run: `ip netns` keeps its namespaces in /run/netns, DPDK
	# its runtime files in /run/dpdk; none of it reaches the host's /run.
	mount -t tmpfs -o mode=0755 pc-run /run || pc_die "tmpfs on /run"
	# sysfs shows the network namespace of whoever mounted it: this one's
	# links, for the taps' counters (/sys/class/net/*/statistics)
	mount -t sysfs pc-sys /sys || pc_die "sysfs on /sys"
	mkdir -p /run/netns /run/dpdk
	# Hugepage files, if the host has hugepages, vanish with the sandbox.
	if [ -d /dev/hugepages ] && grep -qs hugetlbfs /proc/filesystems; then
		mount -t hugetlbfs pc-huge /dev/hugepages 2>/dev/null || true
	fi
	ip link set lo up
	pc_quiet_ipv6 ""

	PC_TMP=$(mktemp -d "${TMPDIR:-/tmp}/podcap-e2e.XXXXXX") || pc_die "mktemp"
	# A trap runs with the redirections of the command it interrupts
	# (pc_fg ... >file): keep the real stdout and stderr to report on.
	exec 8>&1 9>&2
	trap pc_cleanup EXIT
	trap 'pc_log "interrupted" 2>&9; exit 130' INT
	trap 'pc_log "terminated" 2>&9; exit 143' TERM
}

pc_cleanup()
{
	local rc=$? pid

	trap - EXIT INT TERM
	exec 1>&8 2>&9
	for pid in $PC_PIDS; do
		kill -TERM "$pid" 2>/dev/null
	done
	for pid in $PC_PIDS; do
		pc_reap "$pid" 5 || kill -KILL "$pid" 2>/dev/null
	done
	# what a caller changed outside the sandbox (the benchmarks' hugepages)
	[ -n "${PC_CLEANUP_HOOK:-}" ] && "$PC_CLEANUP_HOOK"
	# On failure, podcapd's own account (not on a skip or an interrupt).
	if [ "$rc" = 1 ] && [ -n "${PC_PODCAPD_ERR:-}" ] &&
	    [ -s "$PC_PODCAPD_ERR" ] && [ -z "${PC_LOG_SHOWN:-}" ]; then
		pc_show_log "$PC_PODCAPD_ERR" 40
	fi
	if [ -n "${PC_KEEP_TMP:-}" ]; then
		pc_log "logs kept in $PC_TMP"
	elif [ -n "${PC_TMP:-}" ]; then
		rm -rf "$PC_TMP"
	fi
	# Everything else (namespaces, links, stray processes) dies with
	# this process: it is PID 1 of the sandbox.
	exit "$rc"
}

# pc_reap PID TIMEOUT: waits (TIMEOUT seconds at most) for a child to exit,
# and returns 0 with its status in $pc_status, or 1 if it is still running.
pc_reap()
{
	local pid=$1 timeout=$2 waited=0

	# kill -0 also succeeds on a zombie: look at the state.
	while kill -0 "$pid" 2>/dev/null && ! grep -qs '^State:.*Z' "/proc/$pid/status"; do
		[ "$waited" -ge $((timeout * 10)) ] && return 1
		sleep 0.1
		waited=$((waited + 1))
	done
	wait "$pid" 2>/dev/null
	pc_status=$?
	return 0
}

# pc_fg CMD...: runs CMD and returns its status. CMD runs in the background
# while the shell waits: a signal to the shell then runs its trap at once,
# where bash would defer it until a foreground command ends.
pc_fg()
{
	"$@" &
	wait "$!"
}

pc_show_log()
{
	local file=$1 lines=${2:-60}

	PC_LOG_SHOWN=1
	printf -- '----- last %s lines of %s -----\n' "$lines" "$file" >&2
	tail -n "$lines" "$file" >&2
	printf -- '-----\n' >&2
}

# The hosts' programs run on CPU 0, away from podcapd's worker lcore (CPU 1):
# on a real uplink the pods are other machines, and a worker sharing its core
# with iperf3 would measure the scheduler, not podcapd.
PC_HOST_CPUS=${PC_HOST_CPUS:-0}

pc_ns()
{
	local ns=$1

	shift
	ip netns exec "$ns" taskset -c "$PC_HOST_CPUS" "$@"
}

# No IPv6: link-local chatter (router solicitations, MLD) would otherwise
# reach the forwarder as frames of no pod and blur the unmapped counters.
pc_quiet_ipv6()
{
	local ns=$1 run=""

	[ -n "$ns" ] && run="ip netns exec $ns"
	$run sysctl -qw net.ipv6.conf.all.disable_ipv6=1 \
	    net.ipv6.conf.default.disable_ipv6=1 >/dev/null 2>&1 || true
}

# Offloads off (af_packet would otherwise see 64 KiB segments), MTU 1500, up.
pc_link_prep()
{
	local ns=$1 dev=$2 run=""

	[ -n "$ns" ] && run="ip netns exec $ns"
	$run ethtool -K "$dev" tx off rx off gso off tso off gro off >/dev/null 2>&1 ||
	    pc_die "ethtool -K $dev failed"
	$run ip link set dev "$dev" mtu 1500 up || pc_die "cannot bring $dev up"
}

# pc_veth NS_A DEV_A NS_B DEV_B: a veth pair; "" is the sandbox root.
pc_veth()
{
	local ns_a=$1 dev_a=$2 ns_b=$3 dev_b=$4
	local at_a="" at_b=""

	[ -n "$ns_a" ] && at_a="netns $ns_a"
	[ -n "$ns_b" ] && at_b="netns $ns_b"
	# shellcheck disable=SC2086
	ip link add "$dev_a" $at_a type veth peer name "$dev_b" $at_b ||
	    pc_die "cannot create veth $dev_a/$dev_b"
	pc_link_prep "$ns_a" "$dev_a"
	pc_link_prep "$ns_b" "$dev_b"
}

# pc_host NS IP MAC SWITCH_PORT: a host with one interface on the pod switch.
pc_host()
{
	local ns=$1 ip=$2 mac=$3 port=$4

	pc_ns "$ns" ip link set dev eth0 address "$mac"
	pc_ns "$ns" ip addr add "$ip/24" dev eth0
	if [ -n "$port" ]; then
		ip -n podsw link set dev "$port" master br0 ||
		    pc_die "cannot attach $port to br0"
	fi
}

pc_topology()
{
	local ns

	for ns in $PC_NAMESPACES; do
		ip netns add "$ns" || pc_die "ip netns add $ns"
		pc_quiet_ipv6 "$ns"
		ip -n "$ns" link set lo up
	done

	ip -n podsw link add br0 type bridge stp_state 0 || pc_die "bridge br0"
	ip -n podsw link set br0 up

	pc_veth pod0 eth0 podsw sw-pod0
	pc_veth pod1 eth0 podsw sw-pod1
	pc_veth outsider eth0 podsw sw-out
	pc_veth "" vpod0 podsw sw-cap
	pc_veth "" vfab0 fabric eth0
	ip -n podsw link set dev sw-cap master br0 || pc_die "cannot attach sw-cap"

	pc_host pod0 "$PC_POD0_IP" "$PC_POD0_MAC" sw-pod0
	pc_host pod1 "$PC_POD1_IP" "$PC_POD1_MAC" sw-pod1
	pc_host outsider "$PC_OUTSIDER_IP" "$PC_OUTSIDER_MAC" sw-out
	pc_host fabric "$PC_FABRIC_IP" "$PC_FABRIC_MAC" ""

	# The outsider and the fabric know each other without ARP, so
	# that what reaches the forwarder from the outsider is IPv4 it must
	# refuse, not only ARP it cannot classify.
	pc_ns outsider ip neigh replace "$PC_FABRIC_IP" lladdr "$PC_FABRIC_MAC" \
	    dev eth0 nud permanent
	pc_ns fabric ip neigh replace "$PC_OUTSIDER_IP" lladdr "$PC_OUTSIDER_MAC" \
	    dev eth0 nud permanent
}

# pc_mirror NS DEV HOOK TARGET: copies every frame DEV (in namespace NS, ""
# the sandbox root) sees on HOOK (ingress or egress) to TARGET, with the
# kernel's own tools (u32 and mirred: this kernel has no matchall). A tap
# reads the far end of TARGET's veth.
pc_mirror()
{
	local ns=$1 dev=$2 hook=$3 target=$4 run=""

	[ -n "$ns" ] && run="ip netns exec $ns"
	$run tc qdisc replace dev "$dev" clsact 2>/dev/null ||
	    $run tc qdisc add dev "$dev" clsact || pc_die "clsact on $dev"
	$run tc filter add dev "$dev" "$hook" protocol all u32 match u32 0 0 \
	    action mirred egress mirror dev "$target" || pc_die "mirror $dev $hook -> $target"
}

# pc_render TEMPLATE OUT: a pod map from a template (@TMPDIR@ -> $PC_TMP).
pc_render()
{
	sed -e "s|@TMPDIR@|$PC_TMP|g" "$1" >"$2" || pc_die "cannot render $1"
}

# pc_keygen NAME FILE: a signing key for the log NAME ("podcap/<appliance
# id>"), with podcap-keygen ($PODCAP_KEYGEN).
pc_keygen()
{
	[ -x "${PODCAP_KEYGEN:-}" ] ||
	    pc_die "PODCAP_KEYGEN is not an executable: '${PODCAP_KEYGEN:-}'"
	"$PODCAP_KEYGEN" --name "$1" --out "$2" >"$PC_TMP/keygen.log" 2>&1 || {
		cat "$PC_TMP/keygen.log" >&2
		return 1
	}
}

# pc_wait_line FILE PATTERN PID TIMEOUT: 0 when a line of FILE matches the
# extended regular expression, 1 on timeout or when PID exits first.
pc_wait_line()
{
	local file=$1 pattern=$2 pid=$3 timeout=$4 waited=0

	while [ "$waited" -lt $((timeout * 10)) ]; do
		grep -Eqs -- "$pattern" "$file" && return 0
		kill -0 "$pid" 2>/dev/null || {
			grep -Eqs -- "$pattern" "$file" && return 0
			return 1
		}
		sleep 0.1
		waited=$((waited + 1))
	done
	return 1
}

# pc_podcapd_start CONFIG [ARGS...]: starts $PODCAPD in the sandbox root
# namespace and waits (60 s at most) until it says it is forwarding.
# Window lines go to $PC_PODCAPD_OUT, the log to $PC_PODCAPD_ERR.
pc_podcapd_start()
{
	local config=$1

	shift
	[ -x "${PODCAPD:-}" ] || pc_die "PODCAPD is not an executable: '${PODCAPD:-}'"
	PC_PODCAPD_OUT=$PC_TMP/podcapd.out
	PC_PODCAPD_ERR=$PC_TMP/podcapd.log
	: >"$PC_PODCAPD_OUT"
	: >"$PC_PODCAPD_ERR"
	"$PODCAPD" --config "$config" "$@" >"$PC_PODCAPD_OUT" 2>"$PC_PODCAPD_ERR" </dev/null &
	PC_PODCAPD_PID=$!
	PC_PIDS="$PC_PIDS $PC_PODCAPD_PID"
	if ! pc_wait_line "$PC_PODCAPD_ERR" forwarding "$PC_PODCAPD_PID" 60 &&
	    ! grep -qs forwarding "$PC_PODCAPD_OUT"; then
		if kill -0 "$PC_PODCAPD_PID" 2>/dev/null; then
			pc_log "podcapd did not report 'forwarding' within 60 s"
		else
			wait "$PC_PODCAPD_PID"
			pc_log "podcapd exited with status $? before forwarding"
		fi
		pc_show_log "$PC_PODCAPD_ERR" 60
		return 1
	fi
	# It must still be running a moment later, not stopping already.
	sleep 0.5
	if ! kill -0 "$PC_PODCAPD_PID" 2>/dev/null; then
		wait "$PC_PODCAPD_PID"
		pc_log "podcapd said 'forwarding', then exited with status $?"
		pc_show_log "$PC_PODCAPD_ERR" 60
		return 1
	fi
	pc_log "podcapd is forwarding (pid $PC_PODCAPD_PID)"
}

# pc_podcapd_alive WHAT: 0 while podcapd runs; otherwise says it exited
# during WHAT, with its status and log, and returns 1.
pc_podcapd_alive()
{
	local pid=${PC_PODCAPD_PID:-}

	[ -n "$pid" ] && kill -0 "$pid" 2>/dev/null &&
	    ! grep -qs '^State:.*Z' "/proc/$pid/status" && return 0
	wait "$pid" 2>/dev/null
	pc_log "podcapd exited during $1 (status $?)"
	PC_PODCAPD_PID=""
	pc_show_log "$PC_PODCAPD_ERR" 30
	return 1
}

# pc_podcapd_stop [TIMEOUT]: SIGTERM, then waits; returns podcapd's exit
# status, or 124 if it had to be killed.
pc_podcapd_stop()
{
	local timeout=${1:-20} pid=${PC_PODCAPD_PID:-}

	[ -n "$pid" ] || return 0
	PC_PODCAPD_PID=""
	kill -TERM "$pid" 2>/dev/null
	if ! pc_reap "$pid" "$timeout"; then
		pc_log "podcapd ignored SIGTERM for $timeout s; killing it"
		kill -KILL "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
		return 124
	fi
	return "$pc_status"
}

# pc_testpmd_start: dpdk-testpmd in io-forward mode between the same two
# ports, as a baseline of the testbed without podcap.
pc_testpmd_start()
{
	command -v dpdk-testpmd >/dev/null 2>&1 || pc_skip "dpdk-testpmd not found"
	PC_TESTPMD_LOG=$PC_TMP/testpmd.log
	# Without a console testpmd exits at once, unless it prints
	# statistics periodically.
	dpdk-testpmd -l 0-1 --no-huge -m 1024 --file-prefix=pc-testpmd \
	    --vdev=net_af_packet0,iface=vpod0 --vdev=net_af_packet1,iface=vfab0 \
	    -- --forward-mode=io --total-num-mbufs=8192 --stats-period=3600 -a \
	    >"$PC_TESTPMD_LOG" 2>&1 </dev/null &
	PC_TESTPMD_PID=$!
	PC_PIDS="$PC_PIDS $PC_TESTPMD_PID"
	if ! pc_wait_line "$PC_TESTPMD_LOG" 'Start automatic packet forwarding|io packet forwarding' \
	    "$PC_TESTPMD_PID" 60; then
		pc_log "dpdk-testpmd did not start"
		pc_show_log "$PC_TESTPMD_LOG" 40
		return 1
	fi
}

# pc_ping_ok NS DST TIMEOUT: waits until one ping gets through.
pc_ping_ok()
{
	local ns=$1 dst=$2 timeout=${3:-10}

	for _ in $(seq "$timeout"); do
		pc_ns "$ns" ping -c 1 -W 1 -q "$dst" >/dev/null 2>&1 && return 0
	done
	return 1
}

# pc_iperf_server NS ADDR PORT: an iperf3 server in the background.
pc_iperf_server()
{
	local ns=$1 addr=$2 port=$3

	# Not through pc_ns: $! must be iperf3 itself, not a subshell.
	ip netns exec "$ns" taskset -c "$PC_HOST_CPUS" iperf3 -s -B "$addr" -p "$port" \
	    >"$PC_TMP/iperf3-s-$ns-$port.log" 2>&1 </dev/null &
	PC_PIDS="$PC_PIDS $!"
	for _ in $(seq 50); do
		pc_ns "$ns" ss -Hltn "sport = :$port" 2>/dev/null | grep -q LISTEN && return 0
		sleep 0.1
	done
	pc_die "iperf3 server in $ns did not listen on port $port"
}

# pc_json_get FILE PATH: a value from a JSON file, PATH dotted as in
# "end.sum_received.bits_per_second".
pc_json_get()
{
	"$PC_PYTHON" -c 'import json, sys
v = json.load(open(sys.argv[1]))
for k in sys.argv[2].split("."):
    v = v[k]
print(v)' "$1" "$2"
}
