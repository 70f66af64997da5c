#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# The cable moved, as an auditor would check a site (lib.sh's testbed, with
# Debian's lldpd as the pod switch and the fabric switch, and a fabric-side
# tap: a second podcapd in monitor mode fed by tc mirred from the fabric
# host's links). The pod map declares uplink0's two neighbours as lldpcli
# says lldpd announces them, and an lldp_max_silence. Three runs, each with
# fresh ledgers, ping from pod0 to the fabric throughout:
#
#   1. honest: podcap-verify --tap passes, the report names both ports'
#      neighbours as declared and no time down;
#   2. the cable moved: sw-cap taken down (the appliance's pod-side link
#      loses its carrier) and a new veth from the pod switch straight to the
#      fabric host, where the tap's mirrors see it, carries pod0's traffic
#      for several windows, then the cable is put back. podcap-verify alone
#      passes but reports the pod side's time down; with --tap it exits 1
#      naming a bypass in each window the link was down all of (pod,
#      uplink, and the frames the tap's log counted); with --max-link-down
#      shorter than the outage it exits 1 naming the link check;
#   3. another switch: lldpd in the pod switch restarted with another chassis
#      and port id, the cable through the appliance again: podcap-verify
#      refuses each LINK that faced it, naming record, uplink, side,
#      declared and seen.
#
# Needs root and lldpd; exits 0 (pass), 1 (fail) or 77 (skipped).

set -u

PC_NAME=test_bypass
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tests/e2e/lib.sh
. "$here/lib.sh"

for v in PODCAPD PODCAP_KEYGEN PODCAP_VERIFY; do
	[ -x "${!v:-}" ] || pc_skip "$v is not set to an executable (is podcap built?)"
done
for c in lldpd lldpcli tc; do
	command -v "$c" >/dev/null 2>&1 || pc_skip "'$c' not found (tools/setup installs it)"
done

pc_sandbox "$@"

OFFSET=50ms
SILENCE=30s
# whole windows of the bypass at least (1 s windows), and the seconds it lasts
BYPASS_WINDOWS=3
BYPASS_S=5

# lldpd_start NS IFACE HOSTNAME [CHASSIS PORT]: lldpd on one interface,
# sending every second; its port id the interface's name, or CHASSIS and
# PORT as locally assigned ids (another switch).
lldpd_start()
{
	local ns=$1 iface=$2 name=$3 sock=/run/lldpd/$1.sock
	local cli="ip netns exec $ns lldpcli -u $sock"

	rm -f "$sock"
	ip netns exec "$ns" lldpd -d -u "$sock" -I "$iface" >>"$PC_TMP/lldpd-$ns.log" 2>&1 </dev/null &
	lldpd_pid=$!
	PC_PIDS="$PC_PIDS $lldpd_pid"
	for _ in $(seq 50); do
		[ -S "$sock" ] && break
		sleep 0.1
	done
	$cli configure system hostname "$name" >/dev/null &&
	    $cli configure lldp tx-interval 1 >/dev/null &&
	    $cli configure lldp portidsubtype ifname >/dev/null ||
	    pc_die "cannot configure lldpd in $ns"
	if [ -n "${4:-}" ]; then
		$cli configure system chassisid "$4" >/dev/null &&
		    $cli configure ports "$iface" lldp portidsubtype local "$5" >/dev/null ||
		    pc_die "cannot give lldpd in $ns chassis $4 port $5"
	fi
}

# announced NS IFACE: the chassis id and port id lldpd in NS announces on IFACE.
announced()
{
	ip netns exec "$1" lldpcli -u "/run/lldpd/$1.sock" show interfaces -f json |
	    "$PC_PYTHON" -c 'import json, sys
i = json.load(sys.stdin)["lldp"]["interface"][sys.argv[1]]
c = next(iter(i["chassis"].values()))
print(c["id"]["value"], i["port"]["id"]["value"])' "$2"
}

# tap_start / tap_stop: the fabric-side tap, a podcapd in monitor mode.
tap_start()
{
	"$PODCAPD" --config "$PC_TMP/fabric-tap.yaml" >"$PC_TMP/fabric-tap.out" \
	    2>"$PC_TMP/fabric-tap.log" </dev/null &
	tap_pid=$!
	PC_PIDS="$PC_PIDS $tap_pid"
	pc_wait_line "$PC_TMP/fabric-tap.log" "observing only" "$tap_pid" 60 || {
		pc_show_log "$PC_TMP/fabric-tap.log" 40
		pc_die "the fabric-side tap did not start"
	}
}

tap_stop()
{
	kill -TERM "$tap_pid" 2>/dev/null
	pc_reap "$tap_pid" 20 || kill -KILL "$tap_pid" 2>/dev/null
}

# run_start: fresh ledgers, the tap and the shaper, pod0 reaching the
# fabric, and a ping of 20 frames a second each way until run_stop.
run_start()
{
	rm -rf "$PC_TMP/ledger" "$PC_TMP/fabric-tap.ledger"
	tap_start
	pc_podcapd_start "$PC_TMP/podmap.yaml" || exit 1
	pc_ping_ok pod0 "$PC_FABRIC_IP" 10 || pc_die "pod0 cannot reach the fabric through podcapd"
	ip netns exec pod0 ping -q -i 0.05 -s 1000 "$PC_FABRIC_IP" >"$PC_TMP/ping.log" 2>&1 </dev/null &
	ping_pid=$!
	PC_PIDS="$PC_PIDS $ping_pid"
}

run_stop()
{
	kill -INT "$ping_pid" 2>/dev/null
	pc_reap "$ping_pid" 5 || kill -KILL "$ping_pid" 2>/dev/null
	sleep 1.5
	pc_podcapd_alive "$1" || exit 1
	pc_podcapd_stop 30 || fail "$1: the shaper did not stop cleanly"
	sleep 1.5
	tap_stop
}

# verify OUT [OPTIONS...]: podcap-verify --json on the shaper's log; its exit status.
verify()
{
	local out=$1

	shift
	pc_fg "$PODCAP_VERIFY" --key "$PC_TMP/appliance.key.pub" --ledger "$PC_TMP/ledger" \
	    --pod-map "$PC_TMP/podmap.yaml" --json "$@" >"$out" 2>"$out.err"
}

tap_opts="--pod-map $PC_TMP/fabric-tap.yaml --tap $PC_TMP/fabric-tap.ledger
    --tap-key $PC_TMP/fabric-tap.key.pub --tap-clock-offset $OFFSET"

# ---------------------------------------------------------------------------

pc_topology
mkdir -p /run/lldpd
# The fabric-side tap sees what the fabric host's links carry: the frames it
# receives (the pods' up) and those it sends (down), on whichever cable.
pc_veth fabric tfu_m "" tfu
pc_veth fabric tfd_m "" tfd
pc_mirror fabric eth0 ingress tfu_m
pc_mirror fabric eth0 egress tfd_m

lldpd_start podsw sw-cap pod-switch
pod_lldpd=$lldpd_pid
lldpd_start fabric eth0 fabric-spine
read -r pod_chassis pod_port < <(announced podsw sw-cap)
read -r fab_chassis fab_port < <(announced fabric eth0)
[ -n "${pod_port:-}" ] && [ -n "${fab_port:-}" ] || pc_die "lldpcli did not say what lldpd announces"
pc_log "the racks: pod side chassis $pod_chassis port $pod_port, fabric side chassis $fab_chassis port $fab_port"

# The auditor's map: the shaper's, with uplink0's cables as lldpcli says them.
pc_keygen podcap/e2e "$PC_TMP/appliance.key" || pc_die "podcap-keygen failed"
pc_keygen podcap/fabric-tap "$PC_TMP/fabric-tap.key" || pc_die "podcap-keygen failed"
sed -e "s|^    fabric_port: .*|&\n    pod_neighbor: {chassis_id: \"$pod_chassis\", port_id: \"$pod_port\"}|" \
    -e "s|^    fabric_port: .*|&\n    fabric_neighbor: {chassis_id: \"$fab_chassis\", port_id: \"$fab_port\"}\n    lldp_max_silence: $SILENCE|" \
    -e "s|  ledger: .*|&\n  listen: 127.0.0.1:0|" "$here/podmap.yaml.in" >"$PC_TMP/podmap.yaml.in"
pc_render "$PC_TMP/podmap.yaml.in" "$PC_TMP/podmap.yaml"
grep -q "pod_neighbor: {chassis_id: \"$pod_chassis\"" "$PC_TMP/podmap.yaml" ||
    pc_die "the pod map does not declare the cables"
sed -e "s|id: e2e|id: fabric-tap\n  role: fabric-tap\n  listen: 127.0.0.1:0|" \
    -e "s|@TMPDIR@/appliance.key|@TMPDIR@/fabric-tap.key|" \
    -e "s|@TMPDIR@/ledger|@TMPDIR@/fabric-tap.ledger|" \
    -e "s|iface=vpod0|iface=tfu,framecnt=8192|; s|iface=vfab0|iface=tfd,framecnt=8192|" \
    -e "s|net_af_packet0|net_af_packet2|; s|net_af_packet1|net_af_packet3|" \
    "$here/podmap.yaml.in" >"$PC_TMP/fabric-tap.yaml.in"
pc_render "$PC_TMP/fabric-tap.yaml.in" "$PC_TMP/fabric-tap.yaml"

# 1. honest -----------------------------------------------------------------
run_start
sleep 4
run_stop "the honest run"
# shellcheck disable=SC2086
verify "$PC_TMP/honest.json" $tap_opts
rc=$?
if "$PC_PYTHON" - "$PC_TMP/honest.json" "$rc" "$pod_chassis" "$pod_port" "$fab_chassis" "$fab_port" <<'PY'; then
import json, sys
top, rc = json.load(open(sys.argv[1])), int(sys.argv[2])
declared = {"pod": dict(chassis_id=sys.argv[3], port_id=sys.argv[4]),
            "fabric": dict(chassis_id=sys.argv[5], port_id=sys.argv[6])}
rep, r = top["shaper"], top["reconciliation"]
c = rep["cables"]
ports = {(p["uplink"], p["side"]): p for p in c["ports"]}
why = []
if rc != 0:
    why.append(f"exit {rc}: {[f['message'] for f in rep['failures']]}")
if not r["ok"] or r["agree"] < 2 or r["findings"]:
    why.append(f"reconciliation: ok {r['ok']}, {r['agree']} agree, {r['findings']}")
if set(ports) != {("uplink0", "pod"), ("uplink0", "fabric")} or c["records"] < 4:
    why.append(f"cables: {c}")
for k, p in ports.items():
    if p["down_ns"] != 0 or p["changes"] != 0:
        why.append(f"{k} down {p['down_ns']} ns, {p['changes']} changes")
    if p["neighbor"] != declared[k[1]] or p["as_declared"] is not True:
        why.append(f"{k}: neighbour {p['neighbor']}, as declared {p['as_declared']}; declared {declared[k[1]]}")
    else:
        print(f"{k[0]} {k[1]} side: chassis {p['neighbor']['chassis_id']} port {p['neighbor']['port_id']}, as declared")
print(f"exit {rc}, {c['records']} link records, {r['agree']} windows agree with the tap")
for w in why:
    print("  " + w)
sys.exit(1 if why else 0)
PY
	pass "the honest run verifies, with the tap, the cables as declared"
else
	fail "the honest run does not verify"
fi

# 2. the cable moved --------------------------------------------------------
run_start
sleep 2
pc_veth podsw sw-byp fabric byp0
ip -n fabric link set dev byp0 address "$PC_FABRIC_MAC" || pc_die "byp0's address"
pc_mirror fabric byp0 ingress tfu_m
pc_mirror fabric byp0 egress tfd_m
ip -n fabric route add 10.0.0.0/26 dev byp0 || pc_die "a route over the bypass"
down_at=$(date +%s%N)
ip -n podsw link set dev sw-cap down
ip -n podsw link set dev sw-byp master br0 || pc_die "cannot attach sw-byp to br0"
sleep "$BYPASS_S"
ip -n podsw link set dev sw-byp nomaster
ip -n fabric route del 10.0.0.0/26 dev byp0
ip -n podsw link set dev sw-cap up
up_at=$(date +%s%N)
ip -n podsw link del sw-byp
sleep 2
run_stop "the cable moved"
grep -Eq "uplink uplink0 pod port [0-9]+: link down" "$PC_PODCAPD_ERR" &&
    pass "podcapd saw the pod side's carrier go" || fail "no 'link down' in podcapd's log"

verify "$PC_TMP/moved-alone.json"
rc_alone=$?
# shellcheck disable=SC2086
verify "$PC_TMP/moved.json" $tap_opts
rc_tap=$?
verify "$PC_TMP/moved-limit.json" --max-link-down 2s
rc_limit=$?
if "$PC_PYTHON" - "$PC_TMP" "$rc_alone" "$rc_tap" "$rc_limit" "$down_at" "$up_at" \
    "$BYPASS_WINDOWS" <<'PY'; then
import datetime, json, re, sys
d = sys.argv[1]
rc_alone, rc_tap, rc_limit, down_at, up_at, need = map(int, sys.argv[2:])
alone, tap, limit = (json.load(open(f"{d}/{n}.json")) for n in ("moved-alone", "moved", "moved-limit"))
why = []
outage = up_at - down_at

def when(s):
    return int(datetime.datetime.strptime(s, "%Y-%m-%dT%H:%M:%SZ")
               .replace(tzinfo=datetime.timezone.utc).timestamp()) * 10**9

# the shaper's log alone: nothing refused, the time down reported
ports = {(p["uplink"], p["side"]): p for p in alone["cables"]["ports"]}
pod, fab = ports[("uplink0", "pod")], ports[("uplink0", "fabric")]
if rc_alone != 0:
    why.append(f"alone: exit {rc_alone}: {[f['message'] for f in alone['failures']]}")
if abs(pod["down_ns"] - outage) > 1_500_000_000 or pod["changes"] != 2:
    why.append(f"pod side down {pod['down_ns']} ns, {pod['changes']} changes; the outage was {outage} ns")
if fab["down_ns"] != 0 or fab["changes"] != 0:
    why.append(f"fabric side down {fab['down_ns']} ns, {fab['changes']} changes")
print(f"alone: exit {rc_alone}; the pod side down {pod['down_ns'] / 1e9:.3f} s in {pod['changes']} "
      f"changes (the cable was out {outage / 1e9:.3f} s), longest {pod['longest_down_ns']} ns "
      f"at record {pod['longest_record']}")

# with the tap: a bypass in each window down all through, and nothing else of the kind
pat = re.compile(r"^tap 1: pod (\S+) window (\S+): bypass: uplink (\S+)'s pod-side link was down "
                 r"all of the window by the shaper's link record, yet the fabric-side tap saw "
                 r"(\d+) frames of the pod: they went around the appliance$")
bypass = [m.groups() for f in tap["reconciliation"]["findings"] if (m := pat.match(f["message"]))]
if rc_tap != 1:
    why.append(f"with the tap: exit {rc_tap}")
if len(bypass) < need:
    why.append(f"{len(bypass)} bypass findings, {need} whole windows wanted: "
               f"{[f['message'] for f in tap['reconciliation']['findings']]}")
for pod_id, at, uplink, frames in bypass:
    t = when(at)
    if pod_id != "pod-00" or uplink != "uplink0":
        why.append(f"a bypass of pod {pod_id} on {uplink}")
    # podcapd reads a net_af_packet port's carrier once a second: it sees the
    # link down and up again up to 1 s after the cable moved
    if t < down_at or t > up_at:
        why.append(f"a bypass in window {at}, outside the outage as podcapd could see it")
    # 20 pings a second each way: the tap's log counted pod0's frames
    if int(frames) < 20:
        why.append(f"window {at}: the tap counted only {frames} frames of pod0")
    print(f"with the tap: {pod_id} window {at} on {uplink}: the tap counted {frames} frames")
# and nothing else: at 20 KB/s the windows partly down are within the reconciliation's bounds
rest = [f["message"] for f in tap["reconciliation"]["findings"] if not pat.match(f["message"])]
if rest or tap["reconciliation"]["ok"] or tap["reconciliation"]["disagree"] != len(bypass):
    why.append(f"the reconciliation: ok {tap['reconciliation']['ok']}, "
               f"{tap['reconciliation']['disagree']} disagree, other findings {rest}")

# --max-link-down 2s: the link check refuses, naming uplink0's pod side
# once for the outage, at the LINK that takes it over 2 s, naming the LINKs it spans
pat = re.compile(r"^uplink uplink0 pod side: link down (\S+)s in the windows of records (\d+) to "
                 r"(\d+), more than the 2s --max-link-down accepts$")
lim = [(f, pat.match(f["message"])) for f in limit["failures"]]
if rc_limit != 1 or len(lim) != 1 or not lim[0][1] or lim[0][0]["check"] != "link" or \
        lim[0][0]["type"] != "link" or lim[0][0]["record"] != int(lim[0][1][3]) or \
        not 2 < float(lim[0][1][1]) <= 3:
    why.append(f"--max-link-down 2s: exit {rc_limit}, {[f['message'] for f in limit['failures']]}")
else:
    print(f"--max-link-down 2s: exit 1, record {lim[0][0]['record']}: {lim[0][0]['message']}")
for w in why:
    print("  " + w)
sys.exit(1 if why else 0)
PY
	pass "the cable moved: a bypass in each window the pod side was down, the time down, --max-link-down"
else
	fail "the cable moved: not refused as it should be"
fi

# 3. another switch ---------------------------------------------------------
kill -TERM "$pod_lldpd"
pc_reap "$pod_lldpd" 5 || kill -KILL "$pod_lldpd"
lldpd_start podsw sw-cap spare-switch spare-switch-7 Ethernet9
read -r new_chassis new_port < <(announced podsw sw-cap)
[ "$new_chassis $new_port" = "spare-switch-7 Ethernet9" ] ||
    pc_die "the other switch announces chassis $new_chassis port $new_port"
run_start
pc_wait_line "$PC_PODCAPD_ERR" "uplink uplink0 pod port: LLDP neighbour chassis $new_chassis port $new_port" \
    "$PC_PODCAPD_PID" 10 || fail "podcapd did not hear the other switch"
sleep 3
run_stop "another switch"
verify "$PC_TMP/switch.json"
rc=$?
if "$PC_PYTHON" - "$PC_TMP/switch.json" "$rc" "$pod_chassis" "$pod_port" "$new_chassis" "$new_port" <<'PY'; then
import json, sys
rep, rc = json.load(open(sys.argv[1])), int(sys.argv[2])
pc, pp, nc, np = sys.argv[3:]
want = (f"uplink uplink0 pod side: declared neighbour chassis {pc} port {pp}, seen chassis {nc} "
        f"port {np}: the cable is not where the auditor saw it")
fails = rep["failures"]
link = [f for f in fails if f["check"] == "link"]
why = []
if rc != 1:
    why.append(f"exit {rc}")
if len(link) < 3 or any(f["message"] != want or f["type"] != "link" for f in link):
    why.append(f"link failures: {[(f['record'], f['message']) for f in link]}")
if len(link) != len(fails):
    why.append(f"other failures: {[f['message'] for f in fails if f['check'] != 'link']}")
ports = {p["side"]: p for p in rep["cables"]["ports"]}
if ports["pod"]["neighbor"] != dict(chassis_id=nc, port_id=np) or ports["pod"]["as_declared"] is not False \
        or ports["fabric"]["as_declared"] is not True:
    why.append(f"the report's neighbours: {ports}")
print(f"exit {rc}, {len(link)} link records refused, records {[f['record'] for f in link]}: {want}")
for w in why:
    print("  " + w)
sys.exit(1 if why else 0)
PY
	pass "another switch: every LINK that faced it is refused, declared and seen named"
else
	fail "another switch: not refused as it should be"
fi

if [ "$failures" -ne 0 ]; then
	pc_show_log "$PC_PODCAPD_ERR" 40
	exit 1
fi
echo "$PC_NAME: all checks passed"
