#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# The HTML report in a real browser (tests/e2e/browser.py, Debian's
# chromium headless):
#
#   1. iperf3 TCP through podcapd on the namespace testbed (lib.sh), both
#      ways, over several 1-s windows; podcap-verify --html and --json of
#      its ledger: the page makes no request, a screenshot is taken, and
#      the rendered DOM has one plot per pod and direction, the verdict and
#      the JSON's numbers;
#   2. a fleet of three generated logs, one over its cap, and an appliance
#      that does not answer: podcap-verify --fleet exits 1 naming those
#      two alone, and its page lists them first.
#
# Needs root; exits 0 (pass), 1 (fail) or 77 (skipped).

set -u

PC_NAME=test_report
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tests/e2e/lib.sh
. "$here/lib.sh"

for v in PODCAPD PODCAP_KEYGEN PODCAP_VERIFY PODCAP_LEDGER_GEN; do
	[ -x "${!v:-}" ] || pc_skip "$v is not set to an executable (is podcap built?)"
done
command -v "${CHROMIUM:-chromium}" >/dev/null 2>&1 || pc_skip "no chromium (tools/setup installs it)"

pc_sandbox "$@"

# keep the screenshots where a person can look at them
shots=${PC_REPORT_DIR:-$PC_TMP}

pc_topology
pc_keygen podcap/e2e "$PC_TMP/appliance.key" || pc_die "podcap-keygen failed"
pc_render "$here/podmap.yaml.in" "$PC_TMP/podmap.yaml"
pc_podcapd_start "$PC_TMP/podmap.yaml" || pc_die "podcapd did not start"
pc_ping_ok pod0 "$PC_FABRIC_IP" 10 || fail "pod0 cannot reach the fabric through podcapd"
pc_iperf_server fabric "$PC_FABRIC_IP" 5201
pc_iperf_server pod1 "$PC_POD1_IP" 5202
pc_fg pc_ns pod0 timeout -k 5 30 iperf3 -c "$PC_FABRIC_IP" -p 5201 -t 3 >"$PC_TMP/up.txt" 2>&1 ||
	fail "iperf3 pod0 -> fabric failed: $(tail -1 "$PC_TMP/up.txt")"
pc_fg pc_ns fabric timeout -k 5 30 iperf3 -c "$PC_POD1_IP" -p 5202 -t 3 >"$PC_TMP/down.txt" 2>&1 ||
	fail "iperf3 fabric -> pod1 failed: $(tail -1 "$PC_TMP/down.txt")"
pc_podcapd_stop 30 || fail "podcapd did not stop cleanly"

pc_fg "$PODCAP_VERIFY" --key "$PC_TMP/appliance.key.pub" --ledger "$PC_TMP/ledger" \
	--pod-map "$PC_TMP/podmap.yaml" --model-size 70GB --json --html "$PC_TMP/run.html" \
	>"$PC_TMP/run.json" 2>"$PC_TMP/run.err"
rc=$?
[ "$rc" = 0 ] && pass "podcap-verify --html of podcapd's ledger: verified" ||
	fail "podcap-verify exited $rc: $(tail -3 "$PC_TMP/run.err")"
pc_fg python3 "$here/browser.py" page "$PC_TMP/run.html" "$PC_TMP/run.json" "$shots/run.png" ||
	failures=$((failures + 1))

# a fleet: three appliances, the second over its cap
mkdir -m 700 "$PC_TMP/keys" && mkdir "$PC_TMP/fleet" || pc_die "mkdir"
printf 'jobs: 2\nappliances:\n' >"$PC_TMP/fleet/fleet.yaml"
for i in 1 2 3; do
	sed "s/^  id: e2e$/  id: app-$i/; /signing_key\|ledger:/d" "$PC_TMP/podmap.yaml" >"$PC_TMP/fleet/app-$i.yaml"
	pc_keygen "podcap/app-$i" "$PC_TMP/keys/app-$i" || pc_die "podcap-keygen failed"
	over=""
	[ "$i" = 2 ] && over=--over-cap
	"$PODCAP_LEDGER_GEN" --key "$PC_TMP/keys/app-$i" --pod-map "$PC_TMP/fleet/app-$i.yaml" \
		--out "$PC_TMP/fleet/log-$i" $over >/dev/null 2>"$PC_TMP/gen.err" ||
		pc_die "podcap-ledger-gen failed: $(cat "$PC_TMP/gen.err")"
	printf '  - name: app-%d\n    ledger: log-%d\n    key: %s\n    pod_maps: [app-%d.yaml]\n' \
		"$i" "$i" "$PC_TMP/keys/app-$i.pub" "$i" >>"$PC_TMP/fleet/fleet.yaml"
done
# nothing listens on port 1 of the sandbox's loopback
printf '  - name: app-4\n    url: http://127.0.0.1:1\n    key: %s\n' "$PC_TMP/keys/app-1.pub" \
	>>"$PC_TMP/fleet/fleet.yaml"
pc_fg "$PODCAP_VERIFY" --fleet "$PC_TMP/fleet/fleet.yaml" --now 2024-01-02T00:00:00Z --json \
	--html "$PC_TMP/fleet.html" >"$PC_TMP/fleet.json" 2>"$PC_TMP/fleet.err"
rc=$?
[ "$rc" = 1 ] && grep -q "fleet: appliance app-2 failed verification" "$PC_TMP/fleet.err" &&
	grep -q "fleet: appliance app-4 could not be verified" "$PC_TMP/fleet.err" &&
	! grep -q "appliance app-[13]" "$PC_TMP/fleet.err" &&
	pass "podcap-verify --fleet exits 1 naming app-2 (over its cap) and app-4 (no answer) alone" ||
	fail "podcap-verify --fleet exited $rc: $(cat "$PC_TMP/fleet.err")"
pc_fg python3 "$here/browser.py" fleet "$PC_TMP/fleet.html" "$PC_TMP/fleet.json" "$shots/fleet.png" ||
	failures=$((failures + 1))

[ "$failures" = 0 ] && { echo "1 passed, 0 failed"; exit 0; }
echo "0 passed, 1 failed"
exit 1
