#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# How the frames beside this script were captured (not run by the tests):
# Debian 12's lldpd 1.0.16 on one end of a veth, tcpdump on the other, each
# in its own network namespace, all inside a private unshare.
#   sudo unshare --net --mount --pid --fork --mount-proc --uts tests/unit/lldp/capture.sh OUT
# Each .bin is one frame of OUT/lldpd.pcap without its pcap record header:
# lldpd-mac.bin       frame 1: chassis and port id MAC addresses, TTL 120, leaf-sw01
# lldpd-shutdown.bin  frame 3: the shutdown LLDPDU (TTL 0) lldpd sends when its port id changes
# lldpd-ifname.bin    frame 4: port id subtype interface name (vsw), spine-02.fabric
set -euo pipefail
out=${1:?usage: capture.sh OUT}
mount --make-rprivate /
mount -t tmpfs tmpfs /run
mkdir -p /run/netns /run/lldpd
ip netns add sw
ip netns add host
ip link add vsw type veth peer name vhost
ip link set vsw netns sw
ip link set vhost netns host
ip -n sw link set vsw address 02:00:00:aa:00:01 up
ip -n host link set vhost address 02:00:00:bb:00:02 up
ip netns exec host tcpdump -i vhost -w "$out/lldpd.pcap" -c 4 ether proto 0x88cc &
tcpdump_pid=$!
sleep 1
hostname leaf-sw01
ip netns exec sw lldpd -u /run/lldpd/sw.sock -I vsw -S "Debian lldpd test switch" &
sleep 2
ip netns exec sw lldpcli -u /run/lldpd/sw.sock configure lldp tx-interval 1
ip netns exec sw lldpcli -u /run/lldpd/sw.sock configure system hostname spine-02.fabric
ip netns exec sw lldpcli -u /run/lldpd/sw.sock configure lldp portidsubtype ifname
wait "$tcpdump_pid"
