#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Links and LLDP neighbours as podcapd sees them, on the namespace testbed
# (lib.sh), with Debian's lldpd as the two switches:
#
#   1. lldpd in the pod switch (on sw-cap, port id its interface name) and
#      in the fabric host (on eth0, port id its MAC): /metrics names each
#      as the neighbour of its side, chassis and port as lldpd says them;
#   2. podcapd runs with --lldp-tx=1: each lldpd lists one neighbour, the
#      appliance, with the chassis id (vpod0's MAC), system name (the host
#      name), description and port id (uplink0/pod, uplink0/fabric) podcapd
#      sends; /metrics counts the frames sent, and no pod's counters move;
#   3. neither lldpd hears the other: podcapd forwards no LLDP frame, and
#      it does not hear its own;
#   4. sw-cap taken down, the pod side loses its carrier: podcap_link_up
#      goes to 0 and the change is counted; up again, back to 1;
#   5. podcapd stops: both lldpd delete it at its shutdown LLDPDU, none
#      lets it age out.
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

# lldp_neighbors NS: one line per neighbour lldpd in NS lists,
# "chassis-id|system-name|port-id|system-description".
lldp_neighbors()
{
	ip netns exec "$1" lldpcli -u "/run/lldpd/$1.sock" show neighbors -f json |
	    python3 -c '
import json, sys
d = json.load(sys.stdin).get("lldp") or {}
ifs = d.get("interface") if isinstance(d, dict) else None
ifs = ifs if isinstance(ifs, list) else [ifs] if ifs else []
for entry in ifs:
    for port in entry.values():
        (name, c), = port["chassis"].items()
        if "id" in c and not isinstance(c["id"], dict):
            name, c = "", port["chassis"]
        print("|".join([c["id"]["value"], name, port["port"]["id"]["value"],
                        c.get("descr", "")]))'
}

# lldp_counts NS: "AGEOUTS DELETES", lldpd's neighbours aged out (TTL run
# out) and deleted (a shutdown LLDPDU) on its interface.
lldp_counts()
{
	ip netns exec "$1" lldpcli -u "/run/lldpd/$1.sock" show statistics -f json |
	    python3 -c '
import json, sys
def find(o, k):
    if isinstance(o, dict):
        if k in o:
            v = o[k]
            return v[k] if isinstance(v, dict) else v
        o = list(o.values())
    if isinstance(o, list):
        for x in o:
            v = find(x, k)
            if v is not None:
                return v
    return None
d = json.load(sys.stdin)
print(find(d, "ageout_cnt"), find(d, "delete_cnt"))'
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

pc_podcapd_start "$PC_TMP/podmap.yaml" --lldp-tx=1 || pc_die "podcapd did not start"
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

# 2. the appliance, as each switch lists it
me_chassis=$(cat /sys/class/net/vpod0/address)
me_name=$(hostname)
me_descr="podcapd $("$PODCAPD" --version | awk '{ print $2; exit }')"
for sw in podsw:pod fabric:fabric; do
	ns=${sw%%:*}
	want="$me_chassis|$me_name|uplink0/${sw#*:}|$me_descr"
	for _ in $(seq 50); do
		[ "$(lldp_neighbors "$ns")" = "$want" ] && break
		sleep 0.2
	done
	got=$(lldp_neighbors "$ns")
	[ "$got" = "$want" ] && pass "lldpd in $ns lists one neighbour, the appliance: $got" ||
	    fail "lldpd in $ns lists '$got', not the appliance '$want'"
done
ttl=$(ip netns exec podsw lldpcli -u /run/lldpd/podsw.sock show neighbors -f json |
    python3 -c 'import json,sys; p=next(iter(json.load(sys.stdin)["lldp"]["interface"].values()))
print(p["port"].get("ttl", "?"))')
[ "$ttl" = 4 ] && pass "the appliance's TTL is 4 x the interval" || fail "the appliance's TTL: $ttl"

# they are the appliance's own frames: sent and counted as such, not as any pod's
passed()
{
	local n=0 v
	for pod in pod-00 pod-01; do
		for d in up down; do
			v=$(metric podcap_passed_frames_total "pod=$pod,direction=$d")
			n=$((n + ${v%.*}))
		done
	done
	echo "$n"
}
t0=$(date +%s)
sent0=$(metric podcap_lldp_tx_frames_total uplink=uplink0,side=pod,result=sent)
pods0=$(passed)
sleep 3
sent1=$(metric podcap_lldp_tx_frames_total uplink=uplink0,side=pod,result=sent)
pods1=$(passed)
t1=$(date +%s)
# one a second: 2 at least in 3 s, and no more than one a second allows
[ "$sent0" != none ] && [ $((sent1 - sent0)) -ge 2 ] && [ $((sent1 - sent0)) -le $((t1 - t0 + 1)) ] &&
    [ "$pods1" = "$pods0" ] &&
    pass "$((t1 - t0)) s: $((sent1 - sent0)) LLDPDUs sent on the pod side, the pods' frames unchanged ($pods1)" ||
    fail "$((t1 - t0)) s: LLDPDUs sent on the pod side $sent0 -> $sent1, the pods' frames $pods0 -> $pods1"
for side in pod fabric; do
	bad=$(metric podcap_lldp_tx_frames_total "uplink=uplink0,side=$side,result=failed")
	[ "$bad" = 0 ] && pass "no LLDPDU failed on the $side side" ||
	    fail "LLDPDUs failed on the $side side: $bad"
done

# 3. LLDP stops at the appliance: the switches see podcapd, not each other
for sw in podsw:$fab_chassis fabric:$pod_chassis; do
	if lldp_neighbors "${sw%%:*}" | grep -q "^${sw#*:}|"; then
		fail "lldpd in ${sw%%:*} hears the other switch across podcapd"
	else
		pass "lldpd in ${sw%%:*} does not hear the other switch"
	fi
done
n_pod=$(neighbors podsw)
n_fab=$(neighbors fabric)
[ "$n_pod" = 1 ] && [ "$n_fab" = 1 ] &&
    pass "each lldpd has one neighbour, the appliance" ||
    fail "lldpd's neighbours: pod switch $n_pod, fabric $n_fab (1 each expected)"
for side in pod fabric; do
	[ "$(metric podcap_lldp_neighbor_info "uplink=uplink0,side=$side,chassis_id=$me_chassis")" = none ] &&
	    pass "podcapd does not hear itself on the $side side" ||
	    fail "podcapd lists itself as the $side side's neighbour"
done
want="uplink=uplink0,side=pod,chassis_id=$pod_chassis,port_id=sw-cap,system_name=pod-switch"
[ "$(metric podcap_lldp_neighbor_info "$want")" = 1 ] &&
    pass "the pod switch is still the pod side's neighbour" ||
    fail "the pod side's neighbour is no longer the pod switch"

# 4. the pod side's cable pulled, and put back
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

# the pod side's lldpd hears the appliance again once the cable is back
for _ in $(seq 50); do
	[ "$(neighbors podsw)" = 1 ] && break
	sleep 0.2
done

# 5. the shutdown LLDPDU: lldpd deletes the appliance at once, not when its
# TTL runs out (that would count as an age-out)
[ "$(neighbors podsw)" = 1 ] && [ "$(neighbors fabric)" = 1 ] ||
	fail "before the stop: pod switch $(neighbors podsw), fabric $(neighbors fabric) neighbours"
declare -A before
before[podsw]=$(lldp_counts podsw)
before[fabric]=$(lldp_counts fabric)
pc_podcapd_stop 30 || fail "podcapd did not stop cleanly"
for _ in $(seq 50); do
	[ "$(neighbors podsw)" = 0 ] && [ "$(neighbors fabric)" = 0 ] && break
	sleep 0.2
done
for ns in podsw fabric; do
	b=${before[$ns]}
	after=$(lldp_counts "$ns")
	# ageout and delete: the age-outs unchanged, one more deletion
	want="${b%% *} $((${b##* } + 1))"
	[ "$(neighbors "$ns")" = 0 ] && [ "$after" = "$want" ] &&
	    pass "lldpd in $ns deleted the appliance at its shutdown LLDPDU (age-outs, deletions: $b -> $after)" ||
	    fail "lldpd in $ns after the stop: $(neighbors "$ns") neighbours, age-outs and deletions $b -> $after"
done
grep -q "shutdown LLDPDU sent on every port" "$PC_PODCAPD_ERR" &&
    pass "podcapd logs its shutdown LLDPDUs" || fail "no shutdown LLDPDU line in podcapd's log"
if [ "$failures" -ne 0 ]; then
	pc_show_log "$PC_PODCAPD_ERR" 40
	exit 1
fi
echo "$PC_NAME: all checks passed"
