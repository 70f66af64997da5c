#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# podcap-monitor under Debian's real prometheus and chromium
# (tests/e2e/monitor.py): two generated logs, one over its cap, in a
# fleet file; the monitor verifies both on its schedule; prometheus
# scrapes it with the shipped rules, and its HTTP API has the series and
# the alert for the failed log alone; headless chromium renders the
# monitor's fleet page, which fetches nothing and lists the failed first.
#
# Needs root (its own network namespace); exits 0 (pass), 1 (fail) or 77
# (skipped).

set -u

PC_NAME=test_monitor
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tests/e2e/lib.sh
. "$here/lib.sh"

for v in PODCAP_MONITOR PODCAP_KEYGEN PODCAP_LEDGER_GEN; do
	[ -x "${!v:-}" ] || pc_skip "$v is not set to an executable (is podcap built?)"
done
command -v prometheus >/dev/null 2>&1 || pc_skip "no prometheus (tools/setup installs it)"
command -v "${CHROMIUM:-chromium}" >/dev/null 2>&1 || pc_skip "no chromium (tools/setup installs it)"

pc_sandbox "$@"

rules=$here/../../contrib/prometheus/podcap-monitor.rules.yml
shots=${PC_REPORT_DIR:-$PC_TMP}

# two appliances' logs: app-ok honest, app-over over its cap
for name in app-ok app-over; do
	cat >"$PC_TMP/$name.yaml" <<MAP
appliance:
  id: $name
window: 1s
defaults:
  cap: 1Gbps
  burst: 1s
uplinks:
  - name: up0
    pod_port: 0000:3b:00.0
    fabric_port: 0000:3b:00.1
pods:
  - id: pod-a
    uplink: up0
MAP
	pc_keygen "podcap/$name" "$PC_TMP/$name.key" || pc_die "podcap-keygen failed"
done
"$PODCAP_LEDGER_GEN" --key "$PC_TMP/app-ok.key" --pod-map "$PC_TMP/app-ok.yaml" \
    --out "$PC_TMP/log-ok" >/dev/null || pc_die "podcap-ledger-gen failed"
"$PODCAP_LEDGER_GEN" --key "$PC_TMP/app-over.key" --pod-map "$PC_TMP/app-over.yaml" \
    --over-cap --out "$PC_TMP/log-over" >/dev/null || pc_die "podcap-ledger-gen --over-cap failed"
cat >"$PC_TMP/fleet.yaml" <<FLEET
appliances:
  - {name: app-ok, ledger: log-ok, key: app-ok.key.pub, pod_maps: [app-ok.yaml], interval: 2s}
  - {name: app-over, ledger: log-over, key: app-over.key.pub, pod_maps: [app-over.yaml], interval: 2s}
FLEET

"$PODCAP_MONITOR" --fleet "$PC_TMP/fleet.yaml" --state-dir "$PC_TMP/state" \
    --listen 127.0.0.1:9190 2>"$PC_TMP/monitor.err" &
monitor=$!
PC_PIDS="${PC_PIDS:-} $monitor"
pc_wait_line "$PC_TMP/monitor.err" "serving on port" "$monitor" 30 || pc_die "podcap-monitor did not start: $(cat "$PC_TMP/monitor.err")"

cat >"$PC_TMP/prometheus.yml" <<PROM
global:
  scrape_interval: 1s
  evaluation_interval: 1s
rule_files:
  - $rules
scrape_configs:
  - job_name: podcap-monitor
    static_configs:
      - targets: ['127.0.0.1:9190']
PROM
prometheus --config.file="$PC_TMP/prometheus.yml" --storage.tsdb.path="$PC_TMP/tsdb" \
    --web.listen-address=127.0.0.1:9090 >"$PC_TMP/prometheus.log" 2>&1 &
prom=$!
PC_PIDS="$PC_PIDS $prom"
pc_wait_line "$PC_TMP/prometheus.log" "Server is ready to receive web requests" "$prom" 60 ||
	pc_die "prometheus did not start: $(tail -5 "$PC_TMP/prometheus.log")"

pc_fg python3 "$here/monitor.py" http://127.0.0.1:9190 http://127.0.0.1:9090 app-ok app-over \
    "$shots/monitor-fleet.png"
rc=$?
[ "$rc" = 0 ] || pc_show_log "$PC_TMP/monitor.err" 20
exit "$rc"
