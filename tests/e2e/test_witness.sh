#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# A witnessed log on the namespace testbed (lib.sh): podcapd under iperf3
# traffic, with two podcap-witness on loopback in appliance.witnesses.
#
#   1. TCP from pod0 to the fabric through podcapd for the whole run; the
#      goodput stays at or under the cap (50 Mbit/s) whatever the witnesses
#      do, and windows close one a second;
#   2. witness 1 is killed -9 and restarted on its state; witness 2 is
#      stopped (SIGSTOP: it accepts and never answers) for a while;
#   3. after the traffic, the served checkpoint carries both cosignatures
#      again, each witness's state only grew, and podcap-verify
#      --witness-quorum 2 passes the log it covers, with the pod map.
#
# PODCAP_E2E_FULL=1 runs the traffic for 60 s instead of 16 s (CI runs the
# quick one). Needs root; exits 0 (pass), 1 (fail) or 77 (skipped).

set -u

PC_NAME=test_witness
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tests/e2e/lib.sh
. "$here/lib.sh"

for v in PODCAPD PODCAP_KEYGEN PODCAP_VERIFY PODCAP_WITNESS WITNESS_SUBMIT; do
	[ -x "${!v:-}" ] || pc_skip "$v is not set to an executable (is podcap built?)"
done

pc_sandbox "$@"

secs=16
[ "${PODCAP_E2E_FULL:-}" = 1 ] && secs=60

# witness_start I: podcap-witness I on 127.0.0.1:738I, over its state.
witness_start()
{
	# a log of this start alone: the wait below must not see an earlier start's line
	[ -f "$PC_TMP/w$1.log" ] && cat "$PC_TMP/w$1.log" >>"$PC_TMP/w$1.earlier.log"
	: >"$PC_TMP/w$1.log"
	"$PODCAP_WITNESS" --key "$PC_TMP/w$1.key" --state "$PC_TMP/w$1.state" \
	    --log "$PC_TMP/appliance.key.pub" --listen "127.0.0.1:738$1" \
	    2>>"$PC_TMP/w$1.log" </dev/null &
	eval "W$1=$!"
	PC_PIDS="$PC_PIDS $!"
	pc_wait_line "$PC_TMP/w$1.log" "listening on port 738$1" "$!" 30 ||
	    pc_die "podcap-witness $1 did not start: $(tail -2 "$PC_TMP/w$1.log")"
}

# held I: the size witness I's state file holds.
held()
{
	sed -n 3p "$PC_TMP/w$1.state"/log-* 2>/dev/null || echo 0
}

# served: the checkpoint podcapd serves, into $PC_TMP/served.
served()
{
	python3 -c 'import sys, urllib.request
sys.stdout.write(urllib.request.urlopen("http://127.0.0.1:9180/v1/checkpoint", timeout=10).read().decode())' \
	    >"$PC_TMP/served" 2>/dev/null
}

# cosigned I: 0 when the served checkpoint carries witness I's valid cosignature.
cosigned()
{
	"$WITNESS_SUBMIT" --check "$PC_TMP/w$1.vkey" "$PC_TMP/served" >/dev/null
}

size() { sed -n 2p "$PC_TMP/served"; }

pc_topology
pc_keygen podcap/e2e "$PC_TMP/appliance.key" || pc_die "podcap-keygen failed"
for i in 1 2; do
	pc_keygen "witness.example/w$i" "$PC_TMP/w$i.key" || pc_die "podcap-keygen failed"
	"$PODCAP_WITNESS" --key "$PC_TMP/w$i.key" --print-key >"$PC_TMP/w$i.vkey" || pc_die "--print-key"
	witness_start "$i"
done
pc_render "$here/podmap.yaml.in" "$PC_TMP/podmap.yaml"
# appliance.witnesses, after the appliance's other keys
python3 - "$PC_TMP/podmap.yaml" "$(cat "$PC_TMP/w1.vkey")" "$(cat "$PC_TMP/w2.vkey")" <<'PY' || pc_die "pod map"
import sys
path, k1, k2 = sys.argv[1:]
text = open(path).read()
add = (f"  witnesses:\n    - url: http://127.0.0.1:7381\n      key: {k1}\n"
       f"    - url: http://127.0.0.1:7382\n      key: {k2}\n")
text = text.replace("  ledger: ", add + "  ledger: ", 1)
open(path, "w").write(text)
PY

pc_podcapd_start "$PC_TMP/podmap.yaml" || pc_die "podcapd did not start"
pc_ping_ok pod0 "$PC_FABRIC_IP" 10 || fail "pod0 cannot reach the fabric through podcapd"
pc_iperf_server fabric "$PC_FABRIC_IP" 5201
ip netns exec pod0 taskset -c "$PC_HOST_CPUS" timeout -k 5 $((secs + 30)) \
    iperf3 -c "$PC_FABRIC_IP" -p 5201 -t "$secs" -J >"$PC_TMP/up.json" 2>"$PC_TMP/up.err" </dev/null &
iperf=$!
PC_PIDS="$PC_PIDS $iperf"

step=$((secs / 8))
sleep "$step"
served && s0=$(size) || s0=0
h1=$(held 1)
kill -KILL "$W1"
sleep "$((2 * step))"
witness_start 1
grep -q "at size $h1\$" "$PC_TMP/w1.log" && pass "witness 1 restarted on its state at size $h1" ||
	fail "witness 1 restarted without its state (held $h1): $(grep 'at size' "$PC_TMP/w1.log")"
sleep "$step"
kill -STOP "$W2"
sleep "$((2 * step))"
kill -CONT "$W2"

pc_reap "$iperf" $((secs + 40)) || fail "iperf3 did not finish"
[ "${pc_status:-1}" = 0 ] || fail "iperf3 failed: $(tail -2 "$PC_TMP/up.err")"
pc_podcapd_alive "the witness faults" || fail "podcapd died"
served && s1=$(size) || s1=0
grew=$((s1 - s0))
[ "$grew" -ge $((secs / 2)) ] && pass "$grew windows closed in the $secs s of faults" ||
	fail "only $grew records in $secs s: windows were held up"
rate=$(pc_json_get "$PC_TMP/up.json" end.sum_received.bits_per_second 2>/dev/null || echo 0)
python3 -c 'import sys; r = float(sys.argv[1]); sys.exit(0 if 5e6 < r <= 50e6 * 1.05 else 1)' "$rate" &&
	pass "goodput $rate bit/s: traffic flowed and stayed under the 50 Mbit/s cap" ||
	fail "goodput $rate bit/s is not within (5 Mbit/s, 52.5 Mbit/s]"

ok=0
for _ in $(seq 90); do
	if served && cosigned 1 && cosigned 2; then
		ok=1
		break
	fi
	sleep 1
done
[ "$ok" = 1 ] && pass "the served checkpoint (size $(size)) carries both cosignatures again" ||
	fail "the served checkpoint lacks a cosignature 90 s after the faults"
cp "$PC_TMP/served" "$PC_TMP/cosigned"
[ "$(held 1)" -gt "$h1" ] && pass "witness 1's state grew past $h1 to $(held 1)" ||
	fail "witness 1's state did not grow past $h1"
[ "$(held 2)" -ge "$(size)" ] && pass "witness 2 holds the served size $(size)" ||
	fail "witness 2 holds $(held 2), not the served size $(size)"

pc_fg "$PODCAP_VERIFY" --key "$PC_TMP/appliance.key.pub" --url http://127.0.0.1:9180 \
	--checkpoint "$PC_TMP/cosigned" --pod-map "$PC_TMP/podmap.yaml" \
	--witness "$PC_TMP/w1.vkey" --witness "$PC_TMP/w2.vkey" --witness-quorum 2 \
	>"$PC_TMP/verify.txt" 2>"$PC_TMP/verify.err"
rc=$?
[ "$rc" = 0 ] && grep -q "witnesses: 2 of 2 cosigned the checkpoint, 2 required" "$PC_TMP/verify.txt" &&
	pass "podcap-verify --witness-quorum 2 passes the witnessed log" ||
	fail "podcap-verify exited $rc: $(tail -5 "$PC_TMP/verify.txt" "$PC_TMP/verify.err")"
grep -q "witness witness.example/w1" "$PC_PODCAPD_ERR" &&
	pass "podcapd logged the witness faults: $(grep -c 'witness witness.example' "$PC_PODCAPD_ERR") lines" ||
	fail "podcapd logged nothing of the witness faults"

pc_podcapd_stop 30 || fail "podcapd did not stop cleanly"
[ "$failures" = 0 ] && { echo "1 passed, 0 failed"; exit 0; }
echo "0 passed, 1 failed"
exit 1
