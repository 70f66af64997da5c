#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# A shaper and the verifier's two taps on the testbed (lib.sh): the kernel's
# own mirrors (tc u32 + mirred) copy what crosses the pod side and the
# fabric side of the shaper to veths that two more podcapd, in monitor mode
# with net_af_packet, read and count in ledgers signed with their own keys.
#
#   1. iperf3 both ways through the shaper; the taps see it;
#   2. podcap-verify --tap --tap: every log verifies with its own key and
#      every window the taps fully saw reconciles with the shaper's;
#   3. the shaper's ledger re-signed with one window's bytes hidden (the
#      operator's lie) is refused, naming the pod, direction, window and
#      difference (exit 1); the fabric-side tap counts boundary slices
#      (appliance.slice, docs/reconcile.md), the pod-side tap does not, so a
#      lie just above what the report says the slices prove is refused by
#      the fabric-side tap, and is less than the bound without slices;
#   4. a lossy mirror (a tbf qdisc dropping copies on the mirror path): the tap
#      sees less than crossed, and those windows are reported unreconciled,
#      never as a lie (exit 0); meanwhile the pod-side tap is stalled for 2 s
#      (SIGSTOP), its receive rings overrun, it records the loss in its
#      OBSERVE records, and those windows are unreconciled too.
#
# PODCAP_E2E_FULL=1 runs iperf3 for 30 s each way instead of 4 (quick mode, the
# default, is what tools/check runs). Needs root; exits 0, 1 or 77.

set -u

PC_NAME=test_tap
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tests/e2e/lib.sh
. "$here/lib.sh"

for v in PODCAPD PODCAP_KEYGEN PODCAP_VERIFY; do
	eval "p=\${$v:-}"
	[ -n "$p" ] && [ -x "$p" ] || pc_skip "$v is not set to an executable"
done
command -v tc >/dev/null 2>&1 || pc_skip "tc not found"

pc_sandbox "$@"

IPERF_S=4
[ -n "${PODCAP_E2E_FULL:-}" ] && IPERF_S=30
# one machine, one clock: the offset is the two observers' ring and
# scheduling latencies, which on 2 shared cores reach tens of ms
OFFSET=50ms

# tap_map NAME ROLE UP_IF DOWN_IF N [KEY: VALUE]: a tap's pod map, the
# shaper's pods; KEY: VALUE an appliance key of its own.
tap_map()
{
	local name=$1 role=$2 up=$3 down=$4 n=$5 extra=""

	[ -n "${6:-}" ] && extra="\\n  $6"

	sed -e "s|id: e2e|id: $name\n  role: $role\n  listen: 127.0.0.1:0$extra|" \
	    -e "s|@TMPDIR@/appliance.key|@TMPDIR@/$name.key|" \
	    -e "s|@TMPDIR@/ledger|@TMPDIR@/$name.ledger|" \
	    -e "s|iface=vpod0|iface=$up,framecnt=8192|; s|iface=vfab0|iface=$down,framecnt=8192|" \
	    -e "s|net_af_packet0|net_af_packet$n|; s|net_af_packet1|net_af_packet$((n + 1))|" \
	    "$here/podmap.yaml.in" >"$PC_TMP/$name.yaml.in"
	pc_render "$PC_TMP/$name.yaml.in" "$PC_TMP/$name.yaml"
}

# tap_start NAME: a podcapd in monitor mode, waits until it observes.
tap_start()
{
	local name=$1 pid

	"$PODCAPD" --config "$PC_TMP/$name.yaml" >"$PC_TMP/$name.out" 2>"$PC_TMP/$name.log" </dev/null &
	pid=$!
	PC_PIDS="$PC_PIDS $pid"
	eval "${name//-/_}_pid=$pid"
	pc_wait_line "$PC_TMP/$name.log" "observing only" "$pid" 60 || {
		pc_show_log "$PC_TMP/$name.log" 40
		pc_die "$name did not start"
	}
}

tap_stop()
{
	local pid=$1

	kill -TERM "$pid" 2>/dev/null
	pc_reap "$pid" 20 || kill -KILL "$pid" 2>/dev/null
}

# ---------------------------------------------------------------------------

pc_topology
# The pod side: frames the pod sends enter vpod0; those the shaper sends
# the pod enter sw-cap, in the pod switch's namespace. The fabric side: the
# shaper's frames to the fabric enter the fabric's eth0, the fabric's enter
# vfab0. Each mirror target is a veth whose far end a tap reads.
pc_veth "" tpu_m "" tpu
pc_veth podsw tpd_m "" tpd
pc_veth fabric tfu_m "" tfu
pc_veth "" tfd_m "" tfd
pc_mirror "" vpod0 ingress tpu_m
pc_mirror podsw sw-cap ingress tpd_m
pc_mirror fabric eth0 ingress tfu_m
pc_mirror "" vfab0 ingress tfd_m

pc_render "$here/podmap.yaml.in" "$PC_TMP/podmap.yaml"
pc_keygen podcap/e2e "$PC_TMP/appliance.key" || pc_die "podcap-keygen failed"
pc_keygen podcap/pod-tap "$PC_TMP/pod-tap.key" || pc_die "podcap-keygen failed"
pc_keygen podcap/fabric-tap "$PC_TMP/fabric-tap.key" || pc_die "podcap-keygen failed"
tap_map pod-tap pod-tap tpu tpd 2
tap_map fabric-tap fabric-tap tfu tfd 4 "slice: $OFFSET"
# taps first: the shaper's first windows are then seen by both
tap_start pod-tap
tap_start fabric-tap
pc_podcapd_start "$PC_TMP/podmap.yaml" || exit 1

pc_ping_ok pod0 "$PC_FABRIC_IP" 10 || pc_die "pod0 cannot reach the fabric through podcapd"
pc_iperf_server fabric "$PC_FABRIC_IP" 5201
pc_iperf_server pod0 "$PC_POD0_IP" 5202
# a whole window before traffic: the taps' first windows are never evidence
sleep 2
pc_fg pc_ns pod0 timeout -k 5 $((IPERF_S + 30)) iperf3 -c "$PC_FABRIC_IP" -p 5201 -t "$IPERF_S" \
    >"$PC_TMP/up.txt" 2>&1 || fail "iperf3 up failed: $(tail -n 3 "$PC_TMP/up.txt")"
pc_fg pc_ns fabric timeout -k 5 $((IPERF_S + 30)) iperf3 -c "$PC_POD0_IP" -p 5202 -t "$IPERF_S" \
    >"$PC_TMP/down.txt" 2>&1 || fail "iperf3 down failed: $(tail -n 3 "$PC_TMP/down.txt")"
sleep 2
pc_podcapd_alive "the transfers" || exit 1
pc_podcapd_stop || fail "the shaper did not stop cleanly"
sleep 1.5
tap_stop "$pod_tap_pid"
tap_stop "$fabric_tap_pid"

verify()
{
	local out=$1 ledger=$2

	shift 2
	pc_fg "$PODCAP_VERIFY" --key "$PC_TMP/appliance.key.pub" --ledger "$ledger" \
	    --pod-map "$PC_TMP/podmap.yaml" --pod-map "$PC_TMP/pod-tap.yaml" \
	    --pod-map "$PC_TMP/fabric-tap.yaml" \
	    --tap "$PC_TMP/pod-tap.ledger" --tap-key "$PC_TMP/pod-tap.key.pub" \
	    --tap "$PC_TMP/fabric-tap.ledger" --tap-key "$PC_TMP/fabric-tap.key.pub" \
	    --tap-clock-offset "$OFFSET" "$@" >"$out" 2>"$out.err"
}

# 2. honest: everything verifies and reconciles
verify "$PC_TMP/honest.txt" "$PC_TMP/ledger"
rc=$?
agree=$(sed -n 's/^reconciled: \([0-9]*\) windows agree.*/\1/p' "$PC_TMP/honest.txt")
if [ "$rc" = 0 ] && [ "${agree:-0}" -ge $((2 * IPERF_S)) ]; then
	pass "honest run: $(tail -n 1 "$PC_TMP/honest.txt")"
else
	fail "honest run: podcap-verify exit $rc: $(grep -E '^(reconcile|FAILED|RECONCILE)' "$PC_TMP/honest.txt" | head -n 5)"
	tail -n 30 "$PC_TMP/honest.txt"
fi
for who in pod-tap fabric-tap; do
	if grep -q "^tap [12]: $PC_TMP/$who.ledger (verified with its own key)" "$PC_TMP/honest.txt"; then
		pass "$who: its log verifies with its own key"
	else
		fail "$who: its log was not verified"
	fi
done
for line in "pod-00 up (passed)" "pod-00 down (passed)" "pod-00 up (offered)" "pod-00 down (offered)"; do
	n=$(grep -F "  $line:" "$PC_TMP/honest.txt" | sed -n 's/.*: \([0-9]*\) windows agree.*/\1/p' | head -n 1)
	if [ "${n:-0}" -ge "$IPERF_S" ]; then
		pass "$line: $n windows agree"
	else
		fail "$line: only ${n:-0} windows agree"
	fi
done

# 2b. the same run's --json and --html: the page's taps section has the JSON's figures
verify "$PC_TMP/honest.json" "$PC_TMP/ledger" --json --html "$PC_TMP/honest.html"
if "$PC_PYTHON" - "$PC_TMP/honest.json" "$PC_TMP/honest.html" "$here/.." <<'PY'; then
import json, sys
sys.path.insert(0, sys.argv[3])
from report_sections import section_cells
rep = json.load(open(sys.argv[1]))
r = rep["reconciliation"]
cells = section_cells(open(sys.argv[2]).read(), "taps")
rows = [(t["source"], t["side"], p["pod"], p["dir"], str(p["agree"]), str(p["unreconciled"]),
         str(p["disagree"]), str(p["largest_difference"]), str(p["allowed"]))
        for t in r["taps"] for p in t["pods"]]
keys = ("source", "side", "pod", "dir", "agree", "unreconciled", "disagree",
        "largest_difference", "allowed")
# agree, unreconciled and disagree come first in the summary, then in each row
rowcells = {k: v[1:] if k in ("agree", "unreconciled", "disagree") else v
            for k, v in (cells or {}).items()}
got = list(zip(*(rowcells[k] for k in keys))) if cells else None
ok = (rep["taps_total"] == len(rep["taps"]) == 2 and r["ok"] and r["agree"] > 0 and cells
      and cells["agree"][0] == str(r["agree"]) and cells["unreconciled"][0] == str(r["unreconciled"])
      and cells["disagree"][0] == str(r["disagree"]) and got == rows
      and cells.get("message", []) == [f["message"] for f in r["findings"]])
print(f"taps {rep['taps_total']}, agree {r['agree']}, {len(rows)} rows; page: {cells and cells['agree'][0]}")
if not ok:
    print(f"page rows {got}\njson rows {rows}")
sys.exit(0 if ok else 1)
PY
	pass "--html's taps section has --json's reconciliation figures, row by row"
else
	fail "--html's taps section differs from --json's reconciliation"
fi

# 3. the lie: one window's up bytes hidden, re-signed with the shaper's key,
# in a window the fabric-side tap fully saw (one it did not is no evidence)
unseen=$(sed -n 's/^unreconciled: tap 2: pod pod-00 up window \([^ ]*\): .*/\1/p' "$PC_TMP/honest.txt" |
    tr -d :)
unseen=$(for t in $unseen; do
	printf '%s-%s-%sT%s:%s:%sZ ' "${t:0:4}" "${t:5:2}" "${t:8:2}" "${t:11:2}" "${t:13:2}" "${t:15:2}"
done)
# shellcheck disable=SC2086
read -r lie_ns lie_claim < <("$PC_PYTHON" "$here/resign.py" "$PC_TMP/ledger" \
    "$PC_TMP/appliance.key" "$PC_TMP/forged" pod-00 up 4000000 $unseen) || pc_die "resign.py failed"
lie_at=$("$PC_PYTHON" -c 'import sys, datetime
print(datetime.datetime.fromtimestamp(int(sys.argv[1]) // 10**9, datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"))' "$lie_ns")
pc_fg "$PODCAP_VERIFY" --key "$PC_TMP/appliance.key.pub" --ledger "$PC_TMP/forged" \
    --pod-map "$PC_TMP/podmap.yaml" >"$PC_TMP/forged-alone.txt" 2>&1
rc=$?
[ "$rc" = 0 ] && pass "the forged ledger passes podcap-verify on its own (the key holder signs anything)" ||
    fail "the forged ledger should verify on its own (exit $rc)"
verify "$PC_TMP/lie.txt" "$PC_TMP/forged"
rc=$?
if [ "$rc" = 1 ] && grep -q "^reconcile: tap 2: pod pod-00 up window $lie_at: the tap saw [0-9]* B" "$PC_TMP/lie.txt" &&
    grep -q "^RECONCILE FAILED" "$PC_TMP/lie.txt"; then
	pass "4 MB hidden in window $lie_at: $(grep -m 1 "^reconcile: tap 2" "$PC_TMP/lie.txt")"
else
	fail "the lie in window $lie_at (now $lie_claim B) was not caught (exit $rc)"
	grep -E '^(reconcile|unreconciled|RECONCILE|reconciled)' "$PC_TMP/lie.txt" | head -n 10
fi

# 3b. the slices' bound: the report says what a lie the fabric-side tap's
# slices would have caught in pod-00's up windows; one byte more is refused,
# and it is well under the bound without slices, 4 x E with
# E = burst + cap x D / 8 + max_frame = 625000 + 312500 + 1518 B at this
# pod map's settings and OFFSET (docs/reconcile.md)
no_slices=$((4 * (625000 + 312500 + 1518)))
read -r caught sliced agreed < <("$PC_PYTHON" - "$PC_TMP/honest.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))["reconciliation"]
row = [p for t in r["taps"] if t["side"] == "fabric side" for p in t["pods"]
       if p["pod"] == "pod-00" and p["dir"] == "up"][0]
print(row["lie_caught_above"], row["sliced"], row["agree"])
PY
)
if [ "${sliced:-0}" -ge 1 ] && [ "${sliced:-0}" = "${agreed:-x}" ] && [ "${caught:-$no_slices}" -lt $((no_slices / 2)) ]; then
	pass "fabric-side slices: a lie above $caught B is caught in each of $agreed windows ($no_slices B without slices)"
else
	fail "fabric-side slices: ${sliced:-?} of ${agreed:-?} windows bounded by slices, a lie caught above ${caught:-?} B ($no_slices B without slices)"
fi
# shellcheck disable=SC2086
read -r lie_ns lie_claim < <("$PC_PYTHON" "$here/resign.py" "$PC_TMP/ledger" \
    "$PC_TMP/appliance.key" "$PC_TMP/forged-slice" pod-00 up $((${caught:-0} + 1)) $unseen) ||
    pc_die "resign.py failed"
lie_at=$("$PC_PYTHON" -c 'import sys, datetime
print(datetime.datetime.fromtimestamp(int(sys.argv[1]) // 10**9, datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"))' "$lie_ns")
verify "$PC_TMP/lie-slice.txt" "$PC_TMP/forged-slice"
rc=$?
if [ "$rc" = 1 ] && grep -q "^reconcile: tap 2: pod pod-00 up window $lie_at: the tap saw [0-9]* B" "$PC_TMP/lie-slice.txt" &&
    ! grep -q "^reconcile: tap 1:" "$PC_TMP/lie-slice.txt"; then
	pass "$((caught + 1)) B hidden in window $lie_at: refused by the fabric-side tap's slices, not by the pod-side tap without them"
else
	fail "the lie of $((caught + 1)) B in window $lie_at (now $lie_claim B) was not refused by the fabric-side tap alone (exit $rc)"
	grep -E '^(reconcile|unreconciled|RECONCILE|reconciled)' "$PC_TMP/lie-slice.txt" | head -n 10
fi

# 4. a lossy mirror: netem drops copies on the fabric side's mirror path
# (no sch_netem here: a token bucket filter that drops what exceeds 20 Mbit/s)
tc -n fabric qdisc add dev tfu_m root tbf rate 20mbit burst 16kb limit 32kb ||
    pc_die "a lossy qdisc on the mirror path"
rm -rf "$PC_TMP/ledger" "$PC_TMP/fabric-tap.ledger" "$PC_TMP/pod-tap.ledger"
tap_start fabric-tap
tap_start pod-tap
pc_podcapd_start "$PC_TMP/podmap.yaml" || exit 1
sleep 2
pc_ns pod0 timeout -k 5 $((IPERF_S + 30)) iperf3 -c "$PC_FABRIC_IP" -p 5201 -t "$IPERF_S" \
    >"$PC_TMP/up2.txt" 2>&1 &
iperf_pid=$!
sleep 1
kill -STOP "$pod_tap_pid"
sleep 2
kill -CONT "$pod_tap_pid"
wait "$iperf_pid" || fail "iperf3 up (lossy mirror) failed"
sleep 2
pc_podcapd_stop || fail "the shaper did not stop cleanly"
sleep 1.5
tap_stop "$pod_tap_pid"
tap_stop "$fabric_tap_pid"
verify "$PC_TMP/lossy.txt" "$PC_TMP/ledger"
rc=$?
short=$(grep -c "^unreconciled: tap 2: pod pod-00 up window .*the tap saw [0-9]* B less" "$PC_TMP/lossy.txt")
if [ "$rc" = 0 ] && [ "$short" -ge 1 ] && ! grep -q '^reconcile:' "$PC_TMP/lossy.txt"; then
	pass "lossy mirror: $short windows unreconciled, none taken for a lie: $(tail -n 1 "$PC_TMP/lossy.txt")"
else
	fail "lossy mirror: exit $rc, $short windows unreconciled as short"
	grep -E '^(reconcile|unreconciled|RECONCILE|reconciled)' "$PC_TMP/lossy.txt" | head -n 10
fi

lost=$("$PC_PYTHON" - "$PC_TMP/pod-tap.ledger/records" <<'EOF'
import struct, sys
data, off, lost = open(sys.argv[1], "rb").read(), 0, 0
while off + 4 <= len(data):
    n = struct.unpack(">I", data[off:off + 4])[0]
    r = data[off + 4:off + 4 + n]
    off += 4 + n + 32
    if r[1] == 8:  # OBSERVE: side, nseen, then per uplink its name and up/down missed, nombuf, errors
        o = 3 + r[2] + 32 + 64 + 8 + 5
        o += 1 + r[o]
        lost += sum(struct.unpack(">6Q", r[o:o + 48]))
print(lost)
EOF
)
stalled=$(grep -c "^unreconciled: tap 1: .*its ports lost frames" "$PC_TMP/lossy.txt")
if [ "${lost:-0}" -gt 0 ] && [ "$stalled" -ge 1 ]; then
	pass "stalled pod-side tap: its OBSERVE records count $lost frames its rings dropped; $stalled windows unreconciled for it"
else
	fail "stalled pod-side tap: OBSERVE records count ${lost:-?} lost frames, $stalled windows unreconciled for it"
fi

[ "$failures" = 0 ] || exit 1
printf 'all tap checks passed\n'
