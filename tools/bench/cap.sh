#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# tools/bench/cap.sh [--runs N] [--time S] [--cap MBIT] [--out FILE] [--no-setup]
#
# How closely podcapd holds a cap, against Linux tc in the same run. Between
# a pod host and a fabric host (network namespaces, veth links; see lib.sh)
# the same cap (default 100 Mbit/s each way, burst 100 ms at the cap,
# 50 ms of queue) is enforced in turn by:
#   podcapd  shape mode, burst 100ms, queue_delay 50ms, 1 s windows;
#   tc       a Linux bridge between the same veths with, on each port's
#            egress, "tbf rate <cap>mbit burst <100 ms at the cap> latency 50ms".
# Each carries iperf3 TCP pod -> fabric ("up", with a ping every 100 ms
# alongside: RTT under load) and fabric -> pod ("down"), --time seconds
# each, the first second omitted. Reported: goodput / cap for both, the
# ratio podcapd / tc, and the envelope: the most bytes passed over any 1 s
# (the veths' tx counters, sampled every 100 ms, for both; podcapd's own
# 1 s windows for podcapd) against the cap and the bound cap x 1 s + burst.
# The two take turns, in a rotated order each round.
#
# Needs root; exits 77 when it cannot run (not root, tools missing: unless
# --no-setup, tools/setup is tried first). PODCAPD and PODCAP_KEYGEN name the
# binaries (default: build/). BENCH_KEEP_TMP=1 keeps the logs.

set -u

BENCH_NAME=cap
. "$(dirname "$0")/lib.sh"

runs=3
secs=10
cap=100
out=/tmp/podcap-bench-cap.json
interval=0.1

usage()
{
	sed -n '4,24s/^# \{0,1\}//p' "$0"
}

args=("$@")
while [ $# -gt 0 ]; do
	case $1 in
	--runs) runs=${2:-}; shift 2 || break ;;
	--time) secs=${2:-}; shift 2 || break ;;
	--cap) cap=${2:-}; shift 2 || break ;;
	--out) out=${2:-}; shift 2 || break ;;
	--no-setup) BENCH_NO_SETUP=1; shift ;;
	-h|--help) usage; exit 0 ;;
	*) usage >&2; exit 2 ;;
	esac
done
for v in "$runs" "$secs" "$cap"; do
	case $v in
	''|*[!0-9]*|0) echo "cap: --runs, --time and --cap want positive integers" >&2; exit 2 ;;
	esac
done
[ "$secs" -ge 4 ] || { echo "cap: --time must be at least 4 s" >&2; exit 2; }
[ -n "$out" ] || { usage >&2; exit 2; }
case $out in /*) ;; *) out=$PWD/$out ;; esac

if [ "${BENCH_SANDBOX:-}" != 1 ]; then
	bench_require unshare ip ethtool iperf3 ping ss timeout taskset tc python3 \
	    "$PODCAPD" "$PODCAP_KEYGEN"
	[ -w "$(dirname "$out")" ] || bench_die "cannot write to $(dirname "$out")"
fi
bench_sandbox "${args[@]}"

# 100 ms at the cap, in bytes: the same bucket depth for both.
burst_bytes=$((cap * 1000000 / 8 / 10))
window_s=1

BENCH_SAMPLES=$BENCH_TMP/samples.jsonl
: >"$BENCH_SAMPLES"
machine=$(bench_machine)
bench_topology
bench_keygen bench-cap

config=$BENCH_TMP/podmap.yaml
cat >"$config" <<EOF
appliance:
  id: bench-cap
  signing_key: $BENCH_TMP/bench-cap.key
  ledger: $BENCH_TMP/ledger
  listen: 127.0.0.1:0
window: ${window_s}s
# DPDK's af_packet driver takes frames of 1518 bytes at most.
max_frame: 1518B
defaults:
  cap: ${cap}Mbps
  burst: 100ms
  mode: shape
  queue_delay: 50ms
dpdk:
  lcores: 0-1
  memory: 1GiB
  # /run/dpdk is the sandbox's own: no other DPDK process sees this prefix
  file_prefix: bench-cap
uplinks:
  - name: uplink0
    pod_port: net_af_packet0,iface=vpod0
    fabric_port: net_af_packet1,iface=vfab0
pods:
  - id: pod-00
    uplink: uplink0
    prefixes: [10.0.0.0/25]
EOF
"$PODCAPD" --check-config "$config" >"$BENCH_TMP/check.log" 2>&1 || {
	cat "$BENCH_TMP/check.log" >&2
	bench_die "podcapd refuses the benchmark's pod map"
}

start_peer()
{
	case $1 in
	podcapd) bench_podcapd_start "$config" ;;
	tc) bench_bridge_start tbf rate "${cap}mbit" burst "$burst_bytes" latency 50ms ;;
	esac
}

stop_peer()
{
	case $1 in
	tc) bench_bridge_stop ;;
	*) bench_forwarder_stop "$1" ;;
	esac
}

sampler_start()
{
	"$BENCH_PYTHON" "$(dirname "$0")/report.py" sample-links vpod0 vfab0 \
	    --interval "$interval" >"$1" </dev/null &
	sampler_pid=$!
	BENCH_PIDS="$BENCH_PIDS $sampler_pid"
}

sampler_stop()
{
	kill -TERM "$sampler_pid" 2>/dev/null
	bench_reap "$sampler_pid" 5 || kill -KILL "$sampler_pid" 2>/dev/null
	bench_forget "$sampler_pid"
}

# measure PEER ROUND: TCP up with pings alongside, then TCP down.
measure()
{
	local peer=$1 round=$2 dir flag links wins="" ppid

	bench_ping_ok || bench_die "$peer: no ping gets through"
	[ "$peer" = podcapd ] && wins=$BENCH_TMP/windows-$round.out
	for dir in up down; do
		flag=""
		[ "$dir" = down ] && flag=-R
		links=$BENCH_TMP/links-$peer-$round-$dir.txt
		sampler_start "$links"
		if [ "$dir" = up ]; then
			ip netns exec pod taskset -c "$BENCH_TRAFFIC_CPU" \
			    ping -n -i 0.1 -w $((secs + 2)) "$BENCH_FABRIC_IP" \
			    >"$BENCH_TMP/$peer-$round-loaded.ping" 2>&1 </dev/null &
			ppid=$!
			BENCH_PIDS="$BENCH_PIDS $ppid"
		fi
		bench_iperf "$peer-$round-$dir" "$secs" $flag
		sampler_stop
		[ -n "$goodput" ] || bench_die "$peer: iperf3 $dir failed"
		bench_sample bench=cap round="$round" peer="$peer" metric="tcp_${dir}_mbps" \
		    value="$goodput" bytes="$goodput_bytes" t0="$run_t0" t1="$run_t1" \
		    links="$links" windows="$wins" $sched_args
		bench_log "round $round $peer: TCP $dir $goodput Mbit/s = $(awk "BEGIN { printf \"%.3f\", $goodput / $cap }") x cap ${sched_args:+($sched_args)}"
		if [ "$dir" = up ]; then
			bench_reap "$ppid" $((secs + 5)) || kill -KILL "$ppid" 2>/dev/null
			bench_forget "$ppid"
			sed -n 's/.* time=\([0-9.]*\) ms.*/\1/p' "$BENCH_TMP/$peer-$round-loaded.ping" \
			    >"$BENCH_TMP/$peer-$round-loaded.rtt"
			rtt=$("$BENCH_PYTHON" -c 'import statistics, sys
v = [float(x) for x in open(sys.argv[1])]
print("%.3f %d" % (statistics.median(v), len(v)) if v else "")' "$BENCH_TMP/$peer-$round-loaded.rtt")
			if [ -n "$rtt" ]; then
				# the core wait is the TCP run's, which the pings ran alongside
				bench_sample bench=cap round="$round" peer="$peer" metric=rtt_loaded_ms \
				    value="${rtt% *}" replies="${rtt#* }" $sched_args
				bench_log "round $round $peer: ping RTT under load, median ${rtt% *} ms"
			fi
		fi
	done
}

peer_list=(podcapd tc)
for round in $(seq "$runs"); do
	for i in 0 1; do
		peer=${peer_list[$(((i + round - 1) % 2))]}
		bench_log "round $round/$runs: $peer"
		start_peer "$peer"
		measure "$peer" "$round"
		stop_peer "$peer"
		if [ "$peer" = podcapd ]; then
			cp "$BENCH_PODCAPD_OUT" "$BENCH_TMP/windows-$round.out"
			bench_sample bench=cap round="$round" peer=podcapd metric=podcapd_run \
			    exit_status="$bench_status" \
			    stalls="$(grep -c 'has not switched windows' "$BENCH_PODCAPD_LOG")" \
			    $(bench_podcapd_tsc_args)
		fi
	done
done

"$BENCH_PYTHON" "$(dirname "$0")/report.py" cap --samples "$BENCH_SAMPLES" \
    --machine "$machine" --out "$out" \
    --param runs="$runs" --param seconds="$secs" --param cap_bps=$((cap * 1000000)) \
    --param burst_bytes="$burst_bytes" --param queue_delay=50ms --param window_s="$window_s" \
    --param sample_interval="$interval" --param pod=pod-00 \
    --param contended="$BENCH_CONTENDED" --param traffic_cpu="$BENCH_TRAFFIC_CPU" \
    --param tc="tbf rate ${cap}mbit burst $burst_bytes latency 50ms" || bench_die "report failed"
