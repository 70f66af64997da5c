#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# The signed ledger, end to end on the namespace testbed (lib.sh):
#
#   1. iperf3 TCP through podcapd, both ways, over several 1-s windows;
#   2. a verifier pulls the log over HTTP with podcap-verify --url: the
#      signatures, the tree, the windows, the pod map and the cap all hold;
#   3. after podcapd stops, podcap-verify --ledger --state proves that the
#      log on disk extends the one it trusted over HTTP, and the verified
#      byte totals equal, to the byte, what the ports moved: the frames
#      the fabric host and the pod switch received from podcapd.
#
# Needs root; exits 0 (pass), 1 (fail) or 77 (skipped).

set -u

PC_NAME=test_ledger
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tests/e2e/lib.sh
. "$here/lib.sh"

for v in PODCAPD PODCAP_KEYGEN PODCAP_VERIFY; do
	[ -x "${!v:-}" ] || pc_skip "$v is not set to an executable (is podcap built?)"
done

pc_sandbox "$@"

# rx_bytes NS DEV: bytes the interface has received.
rx_bytes()
{
	ip -n "$1" -s -j link show dev "$2" |
	    python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["stats64"]["rx"]["bytes"])'
}

# total JSON DIR: bytes passed in direction DIR, summed over the pods.
total()
{
	python3 -c 'import json,sys; d=json.load(open(sys.argv[1]));
print(sum(p["bytes"] for p in d["pods"] if p["dir"] == sys.argv[2]))' "$1" "$2"
}

pc_topology
pc_keygen podcap/e2e "$PC_TMP/appliance.key" || pc_die "podcap-keygen failed"
pc_render "$here/podmap.yaml.in" "$PC_TMP/podmap.yaml"

fab0=$(rx_bytes fabric eth0)
sw0=$(rx_bytes podsw sw-cap)
pc_podcapd_start "$PC_TMP/podmap.yaml" || pc_die "podcapd did not start"
pc_ping_ok pod0 "$PC_FABRIC_IP" 10 || fail "pod0 cannot reach the fabric through podcapd"

pc_iperf_server fabric "$PC_FABRIC_IP" 5201
pc_iperf_server pod1 "$PC_POD1_IP" 5202
pc_fg pc_ns pod0 timeout -k 5 30 iperf3 -c "$PC_FABRIC_IP" -p 5201 -t 4 >"$PC_TMP/up.txt" 2>&1 ||
	fail "iperf3 pod0 -> fabric failed: $(tail -1 "$PC_TMP/up.txt")"
pc_fg pc_ns fabric timeout -k 5 30 iperf3 -c "$PC_POD1_IP" -p 5202 -t 4 >"$PC_TMP/down.txt" 2>&1 ||
	fail "iperf3 fabric -> pod1 failed: $(tail -1 "$PC_TMP/down.txt")"
sleep 2.5   # the last windows close and their checkpoint is published

url=http://127.0.0.1:9180
pc_fg "$PODCAP_VERIFY" --key "$PC_TMP/appliance.key.pub" --url "$url" --pod-map "$PC_TMP/podmap.yaml" \
	--state "$PC_TMP/verifier.state" --json >"$PC_TMP/pull.json" 2>"$PC_TMP/pull.err"
rc=$?
if [ "$rc" = 0 ]; then
	pass "podcap-verify --url $url accepts the live log: $(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["records"], "records,", d["windows"], "windows")' "$PC_TMP/pull.json")"
else
	fail "podcap-verify --url exited $rc: $(tail -3 "$PC_TMP/pull.err" "$PC_TMP/pull.json")"
fi
windows=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1])).get("windows", 0))' "$PC_TMP/pull.json" 2>/dev/null || echo 0)
[ "${windows:-0}" -ge 8 ] && pass "$windows windows of 1 s on record" || fail "only ${windows:-0} windows on record"

pc_podcapd_stop 30 || fail "podcapd did not stop cleanly"
up_moved=$(( $(rx_bytes fabric eth0) - fab0 ))
down_moved=$(( $(rx_bytes podsw sw-cap) - sw0 ))

pc_fg "$PODCAP_VERIFY" --key "$PC_TMP/appliance.key.pub" --ledger "$PC_TMP/ledger" --pod-map "$PC_TMP/podmap.yaml" \
	--state "$PC_TMP/verifier.state" --json >"$PC_TMP/final.json" 2>"$PC_TMP/final.err"
rc=$?
if [ "$rc" = 0 ]; then
	pass "podcap-verify --ledger --state: the log on disk extends the one pulled over HTTP"
else
	fail "podcap-verify --ledger exited $rc: $(tail -3 "$PC_TMP/final.err" "$PC_TMP/final.json")"
fi
up=$(total "$PC_TMP/final.json" up 2>/dev/null)
down=$(total "$PC_TMP/final.json" down 2>/dev/null)
[ "${up:-x}" = "$up_moved" ] && [ "$up_moved" -gt 1000000 ] &&
	pass "verified bytes up $up = bytes the fabric host received from podcapd" ||
	fail "verified bytes up ${up:-?} != $up_moved the fabric host received"
[ "${down:-x}" = "$down_moved" ] && [ "$down_moved" -gt 1000000 ] &&
	pass "verified bytes down $down = bytes the pod switch received from podcapd" ||
	fail "verified bytes down ${down:-?} != $down_moved the pod switch received"

[ "$failures" = 0 ] && { echo "1 passed, 0 failed"; exit 0; }
echo "0 passed, 1 failed"
exit 1
