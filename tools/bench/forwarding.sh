#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# tools/bench/forwarding.sh [--runs N] [--clean K [--max-runs M]] [--time S]
#                           [--pings N] [--out FILE] [--no-bridge] [--no-setup]
#
# What podcapd's data path costs, as a ratio to dpdk-testpmd in io-forward
# mode on the same two net_af_packet ports, measured in the same run.
# Between a pod host and a fabric host (network namespaces, veth links;
# see lib.sh) each forwarder in turn carries:
#   - ping RTT, pod -> fabric, idle (median of --pings, 20 ms apart);
#   - iperf3 TCP goodput pod -> fabric ("up") and fabric -> pod ("down"),
#     --time seconds each, the first second omitted.
# podcapd runs one pod with a prefix (so every frame is classified and
# looked up) and a cap of 100 Gbit/s, far above what the links carry: it
# measures the data path, not the cap. A Linux bridge between the same
# veths is measured too, for scale (--no-bridge leaves it out).
# Forwarders take turns, in a rotated order each round, so that load from
# other work on the machine falls on all of them alike; ratios are taken
# per round and over the medians. A round is contended when a DPDK
# forwarder's polling thread waited for its core more than 5 % of a
# measurement (lib.sh, bench_sched_end): --clean K goes on after --runs
# rounds until K rounds were not (at most --max-runs, default 4 x K).
#
# Needs root; exits 77 when it cannot run (not root, tools missing: unless
# --no-setup, tools/setup is tried first). PODCAPD and PODCAP_KEYGEN name the
# binaries (default: build/). BENCH_KEEP_TMP=1 keeps the logs.

set -u

BENCH_NAME=forwarding
. "$(dirname "$0")/lib.sh"

runs=3
clean=0
max_runs=""
secs=10
pings=50
out=/tmp/podcap-bench-forwarding.json
bridge=1

usage()
{
	sed -n '4,31s/^# \{0,1\}//p' "$0"
}

args=("$@")
while [ $# -gt 0 ]; do
	case $1 in
	--runs) runs=${2:-}; shift 2 || break ;;
	--clean) clean=${2:-}; shift 2 || break ;;
	--max-runs) max_runs=${2:-}; shift 2 || break ;;
	--time) secs=${2:-}; shift 2 || break ;;
	--pings) pings=${2:-}; shift 2 || break ;;
	--out) out=${2:-}; shift 2 || break ;;
	--no-bridge) bridge=""; shift ;;
	--no-setup) BENCH_NO_SETUP=1; shift ;;
	-h|--help) usage; exit 0 ;;
	*) usage >&2; exit 2 ;;
	esac
done
for v in "$runs" "$secs" "$pings" "${max_runs:-0}" "$clean"; do
	case $v in
	''|*[!0-9]*) echo "forwarding: --runs, --clean, --max-runs, --time and --pings want integers" >&2; exit 2 ;;
	esac
done
[ -n "$max_runs" ] || max_runs=$((4 * clean > runs ? 4 * clean : runs))
[ "$runs" -ge 1 ] && [ "$pings" -ge 1 ] && [ "$max_runs" -ge "$runs" ] ||
    { echo "forwarding: want --runs >= 1, --pings >= 1, --max-runs >= --runs" >&2; exit 2; }
[ "$secs" -ge 3 ] || { echo "forwarding: --time must be at least 3 s" >&2; exit 2; }
[ -n "$out" ] || { usage >&2; exit 2; }
case $out in /*) ;; *) out=$PWD/$out ;; esac

if [ "${BENCH_SANDBOX:-}" != 1 ]; then
	bench_require unshare ip ethtool iperf3 ping ss timeout taskset tc python3 dpdk-testpmd \
	    "$PODCAPD" "$PODCAP_KEYGEN"
	[ -w "$(dirname "$out")" ] || bench_die "cannot write to $(dirname "$out")"
fi
bench_sandbox "${args[@]}"

BENCH_SAMPLES=$BENCH_TMP/samples.jsonl
: >"$BENCH_SAMPLES"
machine=$(bench_machine)
bench_topology
bench_keygen bench-fwd

config=$BENCH_TMP/podmap.yaml
cat >"$config" <<EOF
appliance:
  id: bench-fwd
  signing_key: $BENCH_TMP/bench-fwd.key
  ledger: $BENCH_TMP/ledger
  listen: 127.0.0.1:0
window: 1s
# DPDK's af_packet driver takes frames of 1518 bytes at most.
max_frame: 1518B
defaults:
  cap: 100Gbps
  burst: 100ms
  mode: police
dpdk:
  lcores: 0-1
  memory: 1GiB
  # /run/dpdk is the sandbox's own: no other DPDK process sees this prefix
  file_prefix: bench-fwd
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

peers="testpmd podcapd"
[ -n "$bridge" ] && peers="$peers bridge"

start_peer()
{
	case $1 in
	testpmd) bench_testpmd_start ;;
	podcapd) bench_podcapd_start "$config" ;;
	bridge) bench_bridge_start ;;
	esac
}

stop_peer()
{
	case $1 in
	bridge) bench_bridge_stop ;;
	*) bench_forwarder_stop "$1" ;;
	esac
}

# note_contention: clears round_clean if the polling thread waited for its
# core longer than BENCH_CONTENDED of the last measurement.
note_contention()
{
	local w

	w=$(printf '%s\n' $sched_args | sed -n 's/^wait_frac=//p')
	[ -n "$w" ] || return 0
	awk -v w="$w" -v t="$BENCH_CONTENDED" 'BEGIN { exit !(w > t) }' && round_clean=0
	return 0
}

# measure PEER ROUND: ping, then TCP up, then TCP down.
measure()
{
	local peer=$1 round=$2 dir flag

	bench_ping_ok || bench_die "$peer: no ping gets through"
	bench_ping "$peer-$round" "$pings"
	[ -n "$rtt" ] || bench_die "$peer: no ping reply"
	bench_sample bench=forwarding round="$round" peer="$peer" metric=rtt_ms value="$rtt" \
	    replies="$replies" sent="$pings" $sched_args
	bench_log "round $round $peer: ping RTT median $rtt ms ($replies/$pings replies) ${sched_args:+($sched_args)}"
	note_contention
	for dir in up down; do
		flag=""
		[ "$dir" = down ] && flag=-R
		bench_iperf "$peer-$round-$dir" "$secs" $flag
		[ -n "$goodput" ] || bench_die "$peer: iperf3 $dir failed"
		bench_sample bench=forwarding round="$round" peer="$peer" metric="tcp_${dir}_mbps" \
		    value="$goodput" bytes="$goodput_bytes" t0="$run_t0" t1="$run_t1" $sched_args
		bench_log "round $round $peer: TCP $dir $goodput Mbit/s ${sched_args:+($sched_args)}"
		note_contention
	done
}

peer_list=($peers)
npeers=${#peer_list[@]}
round=0
clean_rounds=0
while [ "$round" -lt "$runs" ] ||
    { [ "$clean_rounds" -lt "$clean" ] && [ "$round" -lt "$max_runs" ]; }; do
	round=$((round + 1))
	round_clean=1
	for i in $(seq 0 $((npeers - 1))); do
		peer=${peer_list[$(((i + round - 1) % npeers))]}
		bench_log "round $round: $peer"
		start_peer "$peer"
		measure "$peer" "$round"
		stop_peer "$peer"
		if [ "$peer" = podcapd ]; then
			cp "$BENCH_PODCAPD_OUT" "$BENCH_TMP/windows-$round.out"
			bench_sample bench=forwarding round="$round" peer=podcapd metric=windows \
			    file="$BENCH_TMP/windows-$round.out" exit_status="$bench_status" \
			    stalls="$(grep -c 'has not switched windows' "$BENCH_PODCAPD_LOG")" \
			    $(bench_podcapd_tsc_args)
		fi
	done
	if [ "$round_clean" = 1 ]; then
		clean_rounds=$((clean_rounds + 1))
		bench_log "round $round: not contended ($clean_rounds so far)"
	else
		bench_log "round $round: contended (other work took the forwarders' core)"
	fi
done
[ "$clean_rounds" -ge "$clean" ] ||
    bench_log "only $clean_rounds uncontended rounds of the $clean asked for, in $round rounds"

"$BENCH_PYTHON" "$(dirname "$0")/report.py" forwarding --samples "$BENCH_SAMPLES" \
    --machine "$machine" --out "$out" \
    --param runs="$round" --param seconds="$secs" --param pings="$pings" \
    --param contended="$BENCH_CONTENDED" --param traffic_cpu="$BENCH_TRAFFIC_CPU" \
    --param cap=100Gbps --param mode=police || bench_die "report failed"
