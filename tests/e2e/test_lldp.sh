#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Links and LLDP neighbours as podcapd sees them, on the namespace testbed
# (lib.sh), with Debian's lldpd as the two switches:
#
#   1. lldpd in the pod switch (on sw-cap, port id its interface name) and
#      in the fabric host (on eth0, port id its MAC): /metrics names each
#      as the neighbour of its side, chassis and port as lldpd says them;
#   2. neither lldpd hears the other: podcapd forwards no LLDP frame;
#   3. sw-cap taken down, the pod side loses its carrier: podcap_link_up
#      goes to 0 and the change is counted; up again, back to 1.
#
# Needs root and lldpd; exits 0 (pass), 1 (fail) or 77 (skipped).

set -u

PC_NAME=test_lldp
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tests/e2e/lib.sh
. "$here/lib.sh"

for v in PODCAPD PODCAP_KEYGEN; do
	[ -x "${!v:-}" ] || pc_skip "$v is not set to an executable (is podcap built?)"
done
for c in lldpd lldpcli; do
	command -v "$c" >/dev/null 2>&1 || pc_skip "'$c' not found (Debian's lldpd; tools/setup installs it)"
done

pc_sandbox "$@"

failures=0
pass() { printf 'PASS  %s\n' "$*"; }
fail() { printf 'FAIL  %s\n' "$*"; failures=$((failures + 1)); }

# lldpd_start NS IFACE HOSTNAME [PORTIDSUBTYPE]: lldpd on one interface,
# sending every second, with a control socket of its own.
lldpd_start()
{
	local ns=$1 iface=$2 name=$3 sock=/run/lldpd/$1.sock

	ip netns exec "$ns" lldpd -d -u "$sock" -I "$iface" >"$PC_TMP/lldpd-$ns.log" 2>&1 </dev/null &
	PC_PIDS="$PC_PIDS $!"
	for _ in $(seq 50); do
		[ -S "$sock" ] && break
		sleep 0.1
	done
	ip netns exec "$ns" lldpcli -u "$sock" configure system hostname "$name" >/dev/null &&
	    ip netns exec "$ns" lldpcli -u "$sock" configure lldp tx-interval 1 >/dev/null ||
	    pc_die "cannot configure lldpd in $ns"
	if [ -n "${4:-}" ]; then
		ip netns exec "$ns" lldpcli -u "$sock" configure lldp portidsubtype "$4" >/dev/null ||
		    pc_die "cannot set the port id subtype of lldpd in $ns"
	fi
}

# chassis_id NS: the chassis id lldpd in NS announces.
chassis_id()
{
	ip netns exec "$1" lldpcli -u "/run/lldpd/$1.sock" show chassis -f json |
	    python3 -c 'import json,sys; c=json.load(sys.stdin)["local-chassis"]["chassis"];
print(next(iter(c.values()))["id"]["value"])'
}

# neighbors NS: how many neighbours lldpd in NS has heard.
neighbors()
{
	ip netns exec "$1" lldpcli -u "/run/lldpd/$1.sock" show neighbors -f json |
	    python3 -c 'import json,sys; d=json.load(sys.stdin).get("lldp") or {};
i=d.get("interface") if isinstance(d, dict) else None
print(0 if not i else len(i) if isinstance(i, list) else len(i) if isinstance(i, dict) else 1)'
}

# metric NAME LABELS: the value of the one sample of NAME whose labels
# include LABELS (k=v,...), or "none".
metric()
{
	python3 - "$1" "$2" "$port" <<'EOF'
import re, sys, urllib.request
name, want, port = sys.argv[1], sys.argv[2], sys.argv[3]
opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
text = opener.open(f"http://127.0.0.1:{port}/metrics", timeout=5).read().decode()
want = dict(kv.split("=", 1) for kv in want.split(",")) if want else {}
for line in text.splitlines():
    m = re.match(r'^(\w+)\{(.*)\} (\S+)$', line)
    if not m or m[1] != name:
        continue
    labels = dict(re.findall(r'(\w+)="((?:[^"\\]|\\.)*)"', m[2]))
    if all(labels.get(k) == v for k, v in want.items()):
        print(m[3])
        break
else:
    print("none")
EOF
}

# wait_metric NAME LABELS VALUE SECONDS: until the sample reads VALUE.
wait_metric()
{
	for _ in $(seq $(($4 * 5))); do
		[ "$(metric "$1" "$2")" = "$3" ] && return 0
		sleep 0.2
	done
	return 1
}

pc_topology
mkdir -p /run/lldpd
pc_keygen podcap/e2e "$PC_TMP/appliance.key" || pc_die "podcap-keygen failed"
pc_render "$here/podmap.yaml.in" "$PC_TMP/podmap.yaml"
sed -i "s|  ledger: .*|&\n  listen: 127.0.0.1:0|" "$PC_TMP/podmap.yaml"

pc_podcapd_start "$PC_TMP/podmap.yaml" || pc_die "podcapd did not start"
port=$(sed -n 's/.*verifier endpoint on .* (port \([0-9]*\)).*/\1/p' "$PC_PODCAPD_ERR" | head -1)
[ -n "$port" ] || pc_die "podcapd did not say its endpoint's port"
pc_ping_ok pod0 "$PC_FABRIC_IP" 10 || fail "pod0 cannot reach the fabric through podcapd"

lldpd_start podsw sw-cap pod-switch ifname
lldpd_start fabric eth0 fabric-spine
pod_chassis=$(chassis_id podsw)
fab_chassis=$(chassis_id fabric)

# 1. each side's neighbour, as lldpd announces itself
want="uplink=uplink0,side=pod,chassis_id=$pod_chassis,port_id=sw-cap,system_name=pod-switch"
if wait_metric podcap_lldp_neighbor_info "$want" 1 20; then
	pass "the pod side faces chassis $pod_chassis port sw-cap (pod-switch)"
else
	fail "no neighbour $want on /metrics"
fi
want="uplink=uplink0,side=fabric,chassis_id=$fab_chassis,port_id=$PC_FABRIC_MAC,system_name=fabric-spine"
if wait_metric podcap_lldp_neighbor_info "$want" 1 20; then
	pass "the fabric side faces chassis $fab_chassis port $PC_FABRIC_MAC (fabric-spine)"
else
	fail "no neighbour $want on /metrics"
fi
ok=$(metric podcap_lldp_frames_total "uplink=uplink0,side=pod,result=ok")
bad=$(metric podcap_lldp_frames_total "uplink=uplink0,side=pod,result=malformed")
[ "${ok%.*}" != none ] && [ "${ok%.*}" -ge 1 ] && [ "$bad" = 0 ] &&
    pass "lldpd's frames parsed: $ok ok, $bad malformed" ||
    fail "lldpd's frames: $ok ok, $bad malformed"

# 2. LLDP stops at the appliance: neither switch sees the other
sleep 2
n_pod=$(neighbors podsw)
n_fab=$(neighbors fabric)
[ "$n_pod" = 0 ] && [ "$n_fab" = 0 ] &&
    pass "neither lldpd hears the other across podcapd" ||
    fail "lldpd heard across podcapd: pod switch $n_pod neighbours, fabric $n_fab"

# 3. the pod side's cable pulled, and put back
[ "$(metric podcap_link_up uplink=uplink0,side=pod)" = 1 ] ||
	fail "the pod side's link is not up before the test: $(metric podcap_link_up uplink=uplink0,side=pod)"
before=$(metric podcap_link_changes_total uplink=uplink0,side=pod)
ip -n podsw link set dev sw-cap down
if wait_metric podcap_link_up uplink=uplink0,side=pod 0 5; then
	pass "sw-cap down: podcap_link_up of the pod side is 0"
else
	fail "sw-cap down: podcap_link_up of the pod side is $(metric podcap_link_up uplink=uplink0,side=pod)"
fi
after=$(metric podcap_link_changes_total uplink=uplink0,side=pod)
[ "$after" = $((before + 1)) ] && pass "the change is counted ($before -> $after)" ||
    fail "podcap_link_changes_total of the pod side went $before -> $after"
fab_up=$(metric podcap_link_up uplink=uplink0,side=fabric)
[ "$fab_up" = 1 ] && pass "the fabric side stays up" || fail "the fabric side's link: $fab_up"
grep -Eq "uplink uplink0 pod port [0-9]+: link down" "$PC_PODCAPD_ERR" &&
    pass "podcapd logs the link going down" || fail "no 'link down' line in podcapd's log"
ip -n podsw link set dev sw-cap up
if wait_metric podcap_link_up uplink=uplink0,side=pod 1 10; then
	pass "sw-cap up again: podcap_link_up of the pod side is 1"
else
	fail "sw-cap up again: podcap_link_up of the pod side is $(metric podcap_link_up uplink=uplink0,side=pod)"
fi
again=$(metric podcap_link_changes_total uplink=uplink0,side=pod)
[ "$again" = $((before + 2)) ] && pass "both changes counted ($again)" ||
    fail "podcap_link_changes_total of the pod side is $again, not $((before + 2))"

pc_podcapd_stop 30 || fail "podcapd did not stop cleanly"
if [ "$failures" -ne 0 ]; then
	pc_show_log "$PC_PODCAPD_ERR" 40
	exit 1
fi
echo "$PC_NAME: all checks passed"
