#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Acceptance test of the cap, through a real podcapd on veth links (see
# lib.sh for the testbed). Pods pod-00 and pod-01 share one uplink capped
# at 50 Mbit/s per direction (tests/e2e/podmap.yaml.in):
#
#   1. iperf3 TCP pod0 -> fabric and fabric -> pod0 moves 85-100 % of the
#      cap, and podcapd's window counters agree with what iperf3 received;
#   2. while pod0 saturates its uplink, pod1's pings see a median RTT < 5 ms;
#   3. an address of no pod gets nothing through, either way;
#   4. podcapd stops cleanly on SIGTERM, and then nothing crosses.
#
# Needs root; exits 0 (pass), 1 (fail) or 77 (skipped). PODCAPD names the
# binary (meson sets it). PC_KEEP_TMP=1 keeps the logs.

set -u

PC_NAME=test_cap
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tests/e2e/lib.sh
. "$here/lib.sh"

[ -n "${PODCAPD:-}" ] || pc_skip "PODCAPD is not set (is podcapd built?)"
[ -x "$PODCAPD" ] || pc_skip "PODCAPD=$PODCAPD is not an executable"
[ -n "${PODCAP_KEYGEN:-}" ] || pc_skip "PODCAP_KEYGEN is not set (is podcap-keygen built?)"
[ -x "$PODCAP_KEYGEN" ] || pc_skip "PODCAP_KEYGEN=$PODCAP_KEYGEN is not an executable"

pc_sandbox "$@"

CAP_MBPS=50          # as in podmap.yaml.in
WINDOW_S=1           # as in podmap.yaml.in
IPERF_S=10
RTT_LIMIT_MS=5

# in_range VALUE LOW HIGH: LOW <= VALUE <= HIGH, as real numbers.
in_range()
{
	awk -v x="$1" -v lo="$2" -v hi="$3" 'BEGIN { exit !(x + 0 >= lo + 0 && x + 0 <= hi + 0) }'
}

# calc EXPR: arithmetic on real numbers, 3 decimals.
calc()
{
	awk "BEGIN { printf \"%.3f\", $1 }"
}

now()
{
	date +%s.%N
}

# iperf_run NAME NS ARGS...: runs an iperf3 client, leaves the JSON report in
# $PC_TMP/NAME.json and the receiver's goodput in Mbit/s in $goodput ("" if
# there is none).
iperf_run()
{
	local name=$1 ns=$2 json

	shift 2
	json=$PC_TMP/$name.json
	# iperf3 waits forever for a peer that vanished: bound it.
	pc_fg pc_ns "$ns" timeout -k 5 $((IPERF_S + 30)) iperf3 -J "$@" \
	    >"$json" 2>"$PC_TMP/$name.err"
	goodput=$(pc_json_get "$json" end.sum_received.bits_per_second 2>/dev/null |
	    awk '{ printf "%.2f", $1 / 1e6 }')
}

# check_goodput NAME MBIT: 85-100 % of the cap.
check_goodput()
{
	local name=$1 mbit=$2 pct

	if [ -z "$mbit" ]; then
		fail "$name: iperf3 gave no result: $(pc_json_get "$PC_TMP/$name.json" error 2>/dev/null ||
		    cat "$PC_TMP/$name.err")"
		return
	fi
	pct=$(awk "BEGIN { printf \"%.1f\", 100 * $mbit / $CAP_MBPS }")
	if in_range "$mbit" "$(calc "0.85 * $CAP_MBPS")" "$CAP_MBPS"; then
		pass "$name: goodput $mbit Mbit/s = $pct % of the $CAP_MBPS Mbit/s cap (want 85-100 %)"
	else
		fail "$name: goodput $mbit Mbit/s = $pct % of the $CAP_MBPS Mbit/s cap (want 85-100 %)"
	fi
}

# check_accounting NAME POD DIR T0 T1: podcapd's passed bytes of POD/DIR in
# the windows of [T0, T1] against the payload iperf3 received. Frames carry
# 1448 bytes of payload in 1514 (+4.6 %); allow for retransmissions and the
# control connection, but not for a counter that misses or doubles frames.
check_accounting()
{
	local name=$1 pod=$2 dir=$3 t0=$4 t1=$5 got passed ratio

	got=$(pc_json_get "$PC_TMP/$name.json" end.sum_received.bytes 2>/dev/null) || return
	passed=$("$PC_PYTHON" "$here/windows.py" sum "$PC_PODCAPD_OUT" "$pod" "$dir" \
	    --from "$t0" --to "$t1" | "$PC_PYTHON" -c 'import json,sys; print(json.load(sys.stdin)["pass_bytes"])')
	ratio=$(awk -v p="$passed" -v g="$got" 'BEGIN { printf "%.3f", g ? p / g : 0 }')
	if in_range "$ratio" 1.0 1.15; then
		pass "$name: windows count $passed bytes passed $pod $dir for $got bytes of payload received (x$ratio, want 1.0-1.15)"
	else
		fail "$name: windows count $passed bytes passed $pod $dir for $got bytes of payload received (x$ratio, want 1.0-1.15)"
	fi
}

# check_window_rates NAME POD DIR T0 T1: no whole window of the transfer
# passed more than the bucket allows, cap x 1 s + burst (100 ms at the cap),
# plus 2 % for a window the control thread closes a little late.
check_window_rates()
{
	local name=$1 pod=$2 dir=$3 t0=$4 t1=$5 rates r bad="" limit

	limit=$(calc "1.12 * $CAP_MBPS")
	rates=$("$PC_PYTHON" "$here/windows.py" rates "$PC_PODCAPD_OUT" "$pod" "$dir" \
	    --from "$t0" --to "$t1" --window "$WINDOW_S")
	if [ -z "$rates" ]; then
		fail "$name: no whole window of $pod $dir during the transfer"
		return
	fi
	for r in $rates; do
		in_range "$r" 0 "$limit" || bad="$bad $r"
	done
	if [ -z "$bad" ]; then
		pass "$name: window rates of $pod $dir (Mbit/s): $rates (want <= $limit)"
	else
		fail "$name: window rates of $pod $dir (Mbit/s): $rates; above $limit:$bad"
	fi
}

# wait_windows T: until podcapd has closed the window that holds time T.
wait_windows()
{
	local t=$1 last

	for _ in $(seq 50); do
		last=$("$PC_PYTHON" "$here/windows.py" last "$PC_PODCAPD_OUT" 2>/dev/null)
		[ -n "$last" ] && in_range "$last" "$(calc "$t - $WINDOW_S")" 1e12 && return 0
		sleep 0.2
	done
	return 1
}

# ---------------------------------------------------------------------------

pc_topology
pc_render "$here/podmap.yaml.in" "$PC_TMP/podmap.yaml"
pc_keygen podcap/e2e "$PC_TMP/appliance.key" || pc_die "podcap-keygen failed"
pc_podcapd_start "$PC_TMP/podmap.yaml" || exit 1

pc_ping_ok pod0 "$PC_FABRIC_IP" 10 || fail "pod0 cannot reach the fabric through podcapd"
pc_ping_ok pod1 "$PC_FABRIC_IP" 10 || fail "pod1 cannot reach the fabric through podcapd"
[ "$failures" = 0 ] || exit 1
pass "both pods reach the fabric through podcapd"

pc_iperf_server fabric "$PC_FABRIC_IP" 5201
pc_iperf_server pod0 "$PC_POD0_IP" 5202

# 1. The cap, each way.
t0=$(now)
iperf_run up pod0 -c "$PC_FABRIC_IP" -p 5201 -t "$IPERF_S"
t1=$(now)
check_goodput "up (pod0 -> fabric)" "$goodput"
pc_podcapd_alive "the upward transfer" || exit 1
t2=$(now)
iperf_run down fabric -c "$PC_POD0_IP" -p 5202 -t "$IPERF_S"
t3=$(now)
check_goodput "down (fabric -> pod0)" "$goodput"
pc_podcapd_alive "the downward transfer" || exit 1

wait_windows "$t3" || fail "podcapd printed no window line after the transfers"
if "$PC_PYTHON" "$here/windows.py" check "$PC_PODCAPD_OUT" >/dev/null; then
	pass "window lines are well formed"
else
	fail "window lines are missing or malformed:"
	"$PC_PYTHON" "$here/windows.py" check "$PC_PODCAPD_OUT"
	head -n 5 "$PC_PODCAPD_OUT"
fi
caps=$("$PC_PYTHON" "$here/windows.py" sum "$PC_PODCAPD_OUT" pod-00 up |
    "$PC_PYTHON" -c 'import json,sys; print(" ".join("%.1f" % c for c in json.load(sys.stdin)["caps"]))')
if [ "$caps" = "$CAP_MBPS.0" ]; then
	pass "window lines report the declared cap ($caps Mbit/s)"
else
	fail "window lines report cap '$caps', the pod map declares $CAP_MBPS.0"
fi
# From one window before the start: the window that holds the start.
check_accounting up pod-00 up "$(calc "$t0 - $WINDOW_S")" "$t1"
check_accounting down pod-00 down "$(calc "$t2 - $WINDOW_S")" "$t3"
check_window_rates up pod-00 up "$t0" "$t1"
check_window_rates down pod-00 down "$t2" "$t3"

# 2. A saturated neighbour does not delay pod1.
bulk_json=$PC_TMP/saturate.json
pc_ns pod0 timeout -k 5 42 iperf3 -J -c "$PC_FABRIC_IP" -p 5201 -t 12 >"$bulk_json" 2>&1 &
bulk_pid=$!
pc_fg sleep 3
pc_fg pc_ns pod1 ping -c 20 -i 0.2 -W 1 "$PC_FABRIC_IP" >"$PC_TMP/ping-pod1.txt" 2>&1
wait "$bulk_pid"
bulk=$(pc_json_get "$bulk_json" end.sum_received.bits_per_second 2>/dev/null |
    awk '{ printf "%.2f", $1 / 1e6 }')
# The median, not the maximum: one ping delayed by another program on a
# busy host says nothing of podcapd, while pod1 queued behind pod0's
# shaping queue would wait about its queue_delay on every ping.
read -r n_rtt med_rtt max_rtt < <(sed -n 's/.*time=\([0-9.]*\) ms.*/\1/p' "$PC_TMP/ping-pod1.txt" |
    sort -g | awk '{ v[n++] = $1 } END { printf "%d %.3f %.3f\n", n, n ? v[int((n - 1) / 2)] : 0, n ? v[n - 1] : 0 }')
if [ -z "$bulk" ] || ! in_range "$bulk" "$(calc "0.85 * $CAP_MBPS")" "$CAP_MBPS"; then
	fail "latency: pod0 did not run at 85-100 % of the cap during the pings (${bulk:-no result} Mbit/s)"
elif [ "$n_rtt" != 20 ]; then
	fail "latency: only $n_rtt of 20 pings from pod1 answered while pod0 ran at $bulk Mbit/s"
elif awk -v m="$med_rtt" -v l="$RTT_LIMIT_MS" 'BEGIN { exit !(m + 0 < l + 0) }'; then
	pass "latency: pod1 RTT median $med_rtt ms, max $max_rtt ms over 20 pings while pod0 ran at $bulk Mbit/s (want a median < $RTT_LIMIT_MS ms)"
else
	fail "latency: pod1 RTT median $med_rtt ms, max $max_rtt ms while pod0 ran at $bulk Mbit/s (want a median < $RTT_LIMIT_MS ms)"
fi

pc_podcapd_alive "the latency check" || exit 1

# 3. Fail closed: the outsider's address is in no pod.
t4=$(now)
pc_fg pc_ns outsider ping -c 10 -i 0.2 -W 1 -q "$PC_FABRIC_IP" >"$PC_TMP/ping-outsider.txt" 2>&1
out_up=$(sed -n 's/.* \([0-9]*\) received.*/\1/p' "$PC_TMP/ping-outsider.txt")
pc_fg pc_ns fabric ping -c 10 -i 0.2 -W 1 -q "$PC_OUTSIDER_IP" >"$PC_TMP/ping-to-outsider.txt" 2>&1
out_down=$(sed -n 's/.* \([0-9]*\) received.*/\1/p' "$PC_TMP/ping-to-outsider.txt")
if [ "$out_up" = 0 ] && [ "$out_down" = 0 ]; then
	pass "outsider $PC_OUTSIDER_IP: 10/10 pings lost each way"
else
	fail "outsider $PC_OUTSIDER_IP: ${out_up:-?} of 10 pings to the fabric and ${out_down:-?} of 10 from it got through"
fi
t5=$(now)
# Each echo request is one IPv4 frame of no pod (no ARP: the neighbours are
# static); podcapd must have counted every one as unmapped.
if wait_windows "$t5"; then
	for dir in up down; do
		n=$("$PC_PYTHON" "$here/windows.py" unmapped "$PC_PODCAPD_OUT" "$dir" \
		    --from "$(calc "$t4 - $WINDOW_S")" --to "$t5")
		if [ "${n:-0}" -ge 10 ]; then
			pass "outsider: podcapd counted $n unmapped frames $dir (10 echo requests sent)"
		else
			fail "outsider: podcapd counted ${n:-no} unmapped frames $dir, 10 echo requests were sent"
		fi
	done
else
	fail "outsider: no window closed after the pings"
fi
# The same path still works for a pod: the losses above are podcapd's doing.
if pc_ping_ok pod1 "$PC_FABRIC_IP" 3; then
	pass "pod1 still reaches the fabric"
else
	fail "pod1 lost its path too: the outsider check proves nothing"
fi

pc_podcapd_alive "the outsider checks" || exit 1

# 4. podcapd is the only path.
stop_t0=$(now)
pc_podcapd_stop 20
rc=$?
stop_s=$(calc "$(now) - $stop_t0")
if [ "$rc" = 0 ]; then
	pass "podcapd exited 0 on SIGTERM in $stop_s s"
else
	fail "podcapd exited with status $rc on SIGTERM (after $stop_s s)"
	pc_show_log "$PC_PODCAPD_ERR" 30
fi
pc_fg pc_ns pod0 ping -c 5 -i 0.2 -W 1 -q "$PC_FABRIC_IP" >"$PC_TMP/ping-stopped.txt" 2>&1
stopped=$(sed -n 's/.* \([0-9]*\) received.*/\1/p' "$PC_TMP/ping-stopped.txt")
if [ "$stopped" = 0 ]; then
	pass "with podcapd stopped, 5/5 pings pod0 -> fabric are lost"
else
	fail "with podcapd stopped, ${stopped:-?} of 5 pings pod0 -> fabric got through"
fi

if [ "$failures" != 0 ]; then
	printf '%d check(s) failed\n' "$failures"
	[ -z "${PC_LOG_SHOWN:-}" ] && pc_show_log "$PC_PODCAPD_ERR" 30
	exit 1
fi
echo "all checks passed"
exit 0
