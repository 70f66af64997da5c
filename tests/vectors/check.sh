#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
#
# The test vectors end to end (tests/vectors/README.md):
#   check.sh PODCAP-VERIFY PODCAP-LEDGER-GEN PYTHON3 VECTORS-DIR
#
# 1. podcap-ledger-gen, given the committed key and pod map, writes the
#    committed ledger byte for byte;
# 2. podcap-verify's report on it, text and JSON, is expected.txt and
#    expected.json exactly, from the directory and over HTTP alike;
# 3. tampered copies fail with the right reason and exit status 1, and
#    usage or I/O errors exit with 2.
set -eu

VERIFY=$1
GEN=$2
PYTHON=$3
V=$4

tmp=$(mktemp -d "${TMPDIR:-/tmp}/podcap-vectors.XXXXXX")
server=

cleanup() {
	if [ -n "$server" ]; then
		kill "$server" 2>/dev/null || true
		wait "$server" 2>/dev/null || true
	fi
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

fail() {
	echo "FAIL: $*" >&2
	exit 1
}

# expect STATUS CMD...: runs CMD with its output in $tmp/out and $tmp/err.
expect() {
	want=$1
	shift
	set +e
	"$@" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	set -e
	if [ "$rc" != "$want" ]; then
		cat "$tmp/out" "$tmp/err" >&2
		fail "exit status $rc, expected $want: $*"
	fi
}

# state_note STATE: the signed checkpoint at the head of a --state file.
state_note() {
	sed '/^podcap-verify-state /,$d' "$1"
}

# last_line_starts PREFIX: the report's verdict.
last_line_starts() {
	line=$(tail -n 1 "$tmp/out")
	case "$line" in
	"$1"*) ;;
	*) fail "last line '$line' does not start with '$1'" ;;
	esac
}

# The secret key is committed for tests only; podcap refuses one others can read.
cp "$V/vector.key" "$tmp/vector.key"
chmod 600 "$tmp/vector.key"

gen() {
	"$GEN" --key "$tmp/vector.key" --pod-map "$V/podmap.yaml" "$@"
}

# The report states the checkpoint's age at the verifier's now: the runs
# whose reports are compared are given one --now. The state keeps each
# pull's time too: the runs whose states are compared are given it as well.
now=2024-06-01T00:00:00Z

# in_vectors CMD...: CMD run in the vectors directory, so that the pod map
# the report names is podmap.yaml wherever the tree is.
# meson may give the tools relative to the build directory
case $VERIFY in
/*) ;;
*) VERIFY=$(pwd)/$VERIFY ;;
esac
in_vectors() {
	(cd "$V" && "$@")
}

echo "# 1. the committed ledger is what podcap-ledger-gen writes"
expect 0 gen --out "$tmp/regen"
for f in origin records hashes checkpoint; do
	cmp "$V/ledger/$f" "$tmp/regen/$f" || fail "ledger/$f differs from a fresh generation"
done

echo "# 2. the report is the expected one"
expect 0 in_vectors "$VERIFY" --key vector.pub --ledger ledger --pod-map podmap.yaml --now "$now"
diff -u "$V/expected.txt" "$tmp/out" || fail "text report differs from expected.txt"
expect 0 in_vectors "$VERIFY" --key vector.pub --ledger ledger --pod-map podmap.yaml --now "$now" \
	--json
diff -u "$V/expected.json" "$tmp/out" || fail "JSON report differs from expected.json"

echo "# 3. tampered copies fail"
# flip one bit of window 1's counters (record 2)
cp -r "$V/ledger" "$tmp/flip"
off=$("$PYTHON" -c '
import sys
d = open(sys.argv[1], "rb").read()
off = 0
for i in range(2):
    off += 4 + int.from_bytes(d[off:off + 4], "big") + 32
n = int.from_bytes(d[off:off + 4], "big")
print(off + 4 + n - 200)' "$tmp/flip/records")
"$PYTHON" -c '
import sys
p, off = sys.argv[1], int(sys.argv[2])
d = bytearray(open(p, "rb").read())
d[off] ^= 0x01
open(p, "wb").write(d)' "$tmp/flip/records" "$off"
expect 1 "$VERIFY" --key "$V/vector.pub" --ledger "$tmp/flip"
last_line_starts "FAILED: root: record 2 (window, 2024-01-01T00:01:00Z)"

# cut the last record off
cp -r "$V/ledger" "$tmp/cut"
size=$(wc -c <"$tmp/cut/records")
"$PYTHON" -c 'import os, sys; os.truncate(sys.argv[1], int(sys.argv[2]) - 10)' \
	"$tmp/cut/records" "$size"
expect 1 "$VERIFY" --key "$V/vector.pub" --ledger "$tmp/cut"
last_line_starts "FAILED: missing: record 14: the checkpoint covers 15 records but only 14"

# signed, but over the envelope
expect 0 gen --out "$tmp/over" --over-cap
expect 1 "$VERIFY" --key "$V/vector.pub" --ledger "$tmp/over"
last_line_starts "FAILED: envelope: record 2 (window, 2024-01-01T00:01:00Z): pod pod-a up: "

# the labels jump forward with no clock record to explain it
expect 0 gen --out "$tmp/noclock" --no-clock-record
expect 1 "$VERIFY" --key "$V/vector.pub" --ledger "$tmp/noclock"
last_line_starts "FAILED: sequence: record 13 (window, 2024-01-01T00:14:00Z): the windows from 2024-01-01T00:12:00Z to 2024-01-01T00:14:00Z were not logged"

# a type a later podcapd might add: the tree and signature verify, the
# record is named as one this verifier cannot check, not as damage, and
# the records after it are checked as before
expect 0 gen --out "$tmp/later" --later-type
expect 1 "$VERIFY" --key "$V/vector.pub" --ledger "$tmp/later" --pod-map "$V/podmap.yaml"
last_line_starts "FAILED: decode: record 14 (unknown, 2024-01-01T00:14:00Z): record type 200 is not one this podcap-verify knows: its bytes are in the signed tree, what it says is not checked"
grep -qx "failures: 1 (decode 1)" "$tmp/out" || { cat "$tmp/out" >&2; fail "a later type's record is not the one failure"; }
expect 1 "$VERIFY" --key "$V/vector.pub" --ledger "$tmp/later" --json
grep -q '"type": "unknown", "time": "2024-01-01T00:14:00Z", "message": "record type 200 is not one' "$tmp/out" ||
	{ cat "$tmp/out" >&2; fail "the JSON report does not name the later type's record"; }

# another key with the same name
expect 1 "$VERIFY" --key "$V/other.pub" --ledger "$V/ledger"
last_line_starts "FAILED: signature: checkpoint of log 'podcap/vector-1': no signature by key"

# another pod map
expect 1 "$VERIFY" --key "$V/vector.pub" --ledger "$V/ledger" --pod-map "$V/podmap-reload.yaml"
last_line_starts "FAILED: podmap: record 0 (start, 2024-01-01T00:00:00Z): start under pod map "

echo "# 4. the trusted state: extension, rollback, fork"
expect 0 gen --out "$tmp/p8" --records 8
expect 0 gen --out "$tmp/fork" --reload-map "$V/podmap-reload.yaml"
expect 0 "$VERIFY" --key "$V/vector.pub" --ledger "$tmp/p8" --state "$tmp/state" --now "$now"
state_note "$tmp/state" | cmp - "$tmp/p8/checkpoint" || fail "state is not the verified checkpoint"
cp "$tmp/state" "$tmp/state8"
expect 0 "$VERIFY" --key "$V/vector.pub" --ledger "$V/ledger" --state "$tmp/state"
state_note "$tmp/state" | cmp - "$V/ledger/checkpoint" || fail "state did not move to the new checkpoint"
grep -q "^resumed at record 8: " "$tmp/out" || fail "the pull from a state of 8 records did not resume"
# resumed or from scratch, the report of the same log is the same but for that line (and
# the warning that a run from scratch had no trusted checkpoint)
expect 0 "$VERIFY" --key "$V/vector.pub" --ledger "$V/ledger" --now "$now"
grep -v "^warning: no trusted checkpoint " "$tmp/out" >"$tmp/full.out"
cp "$tmp/state8" "$tmp/state8b"
expect 0 "$VERIFY" --key "$V/vector.pub" --ledger "$V/ledger" --state "$tmp/state8b" --now "$now"
grep -v "^resumed at record 8: " "$tmp/out" >"$tmp/resumed.out"
diff -u "$tmp/full.out" "$tmp/resumed.out" || fail "the resumed report differs from the full one"
# a damaged state is refused, not trusted; the checkpoint alone (the older state) still works
sed 's/^sequence 1/sequence 0/' "$tmp/state8" >"$tmp/state8bad"
expect 2 "$VERIFY" --key "$V/vector.pub" --ledger "$V/ledger" --state "$tmp/state8bad"
grep -q "checksum does not match" "$tmp/err" || { cat "$tmp/err" >&2; fail "damaged state not refused"; }
cmp -s "$tmp/state8" "$tmp/state8bad" && fail "the damaged copy of the state is not damaged"
cp "$tmp/p8/checkpoint" "$tmp/state8old"
expect 0 "$VERIFY" --key "$V/vector.pub" --ledger "$V/ledger" --state "$tmp/state8old" --now "$now"
grep -q "^resumed" "$tmp/out" && fail "a checkpoint-only state resumed"
diff -u "$tmp/full.out" "$tmp/out" || fail "a checkpoint-only state changed the report"
state_note "$tmp/state8old" | cmp - "$V/ledger/checkpoint" || fail "checkpoint-only state not upgraded"
expect 1 "$VERIFY" --key "$V/vector.pub" --ledger "$tmp/p8" --state "$tmp/state"
last_line_starts "FAILED: rollback: "
state_note "$tmp/state" | cmp - "$V/ledger/checkpoint" || fail "a failed check changed the state"
expect 1 "$VERIFY" --key "$V/vector.pub" --ledger "$tmp/fork" --state "$tmp/state"
last_line_starts "FAILED: fork: "
# podcap-ledger-gen --note-at: the checkpoint an earlier verifier kept
expect 0 gen --out "$tmp/noted" --note-at 8 "$tmp/note8"
cmp "$tmp/note8" "$tmp/p8/checkpoint" || fail "--note-at 8 is not the checkpoint of 8 records"
cmp "$tmp/noted/records" "$V/ledger/records" || fail "--note-at changed the log"
# --checkpoint: verify the log as of that checkpoint, which gives the state of 8 records
expect 0 "$VERIFY" --key "$V/vector.pub" --ledger "$V/ledger" --checkpoint "$tmp/note8" --state "$tmp/state8c" --now "$now"
last_line_starts "verified: 8 records"
cmp "$tmp/state8c" "$tmp/state8" || fail "--checkpoint of 8 records: not the state of 8 records"
# a long log (--windows), verified from a state 10 windows back
expect 0 gen --out "$tmp/long" --windows 30 --note-at 21 "$tmp/long.state"
expect 0 "$VERIFY" --key "$V/vector.pub" --ledger "$tmp/long" --state "$tmp/long.state"
last_line_starts "verified: 31 records, 30 windows, tree size 31"
state_note "$tmp/long.state" | cmp - "$tmp/long/checkpoint" || fail "state did not move to the long log's checkpoint"
expect 1 gen --out "$tmp/short" --windows 3 --note-at 9 "$tmp/short.state"
grep -q "the log has only 4 records" "$tmp/err" || { cat "$tmp/err" >&2; fail "--note-at past the log not refused"; }

echo "# 5. usage and I/O errors exit with 2"
expect 2 "$VERIFY"
expect 2 "$VERIFY" --key "$V/vector.pub"
expect 2 "$VERIFY" --key "$V/vector.pub" --ledger "$V/ledger" --url http://127.0.0.1:1
expect 2 "$VERIFY" --key "$V/vector.pub" --ledger "$tmp/nonexistent"
expect 2 "$VERIFY" --key "$tmp/nonexistent.pub" --ledger "$V/ledger"
printf 'appliance:\n  id: vector-1\nwindow: 60x\n' >"$tmp/bad.yaml"
expect 2 "$VERIFY" --key "$V/vector.pub" --ledger "$V/ledger" --pod-map "$tmp/bad.yaml"
grep -q "bad.yaml:3:9: " "$tmp/err" || { cat "$tmp/err" >&2; fail "no file:line:col for a bad pod map"; }
# the epoch itself is no now (0 means none was given): said, not a stale message
expect 2 "$VERIFY" --key "$V/vector.pub" --ledger "$V/ledger" --now 1970-01-01T00:00:00Z
head -n 1 "$tmp/err" | grep -qx "podcap-verify: --now: '1970-01-01T00:00:00Z' is not after 1970-01-01T00:00:00Z" ||
	{ cat "$tmp/err" >&2; fail "--now at the epoch: no reason given"; }

echo "# 6. over HTTP, from an independent log server"
start_server() {
	rm -f "$tmp/port"
	"$PYTHON" "$V/serve.py" --port-file "$tmp/port" "$@" &
	server=$!
	i=0
	while [ ! -s "$tmp/port" ]; do
		i=$((i + 1))
		[ "$i" -lt 100 ] || fail "log server did not start"
		sleep 0.1
	done
	url="http://127.0.0.1:$(cat "$tmp/port")"
}
stop_server() {
	kill "$server"
	wait "$server" 2>/dev/null || true
	server=
}

start_server --ledger "$V/ledger"
expect 0 in_vectors "$VERIFY" --key vector.pub --url "$url" --pod-map podmap.yaml --now "$now"
diff -u "$V/expected.txt" "$tmp/out" || fail "report over HTTP differs from expected.txt"
expect 0 in_vectors "$VERIFY" --key vector.pub --url "$url/" --json --pod-map podmap.yaml \
	--now "$now"
diff -u "$V/expected.json" "$tmp/out" || fail "JSON over HTTP differs from expected.json"
# consistency proof from the state of 8 records
rm -f "$tmp/state"
expect 0 "$VERIFY" --key "$V/vector.pub" --ledger "$tmp/p8" --state "$tmp/state"
expect 0 "$VERIFY" --key "$V/vector.pub" --url "$url" --state "$tmp/state"
state_note "$tmp/state" | cmp - "$V/ledger/checkpoint" || fail "state did not move over HTTP"
stop_server

# a server that does not have every record it signed
start_server --ledger "$V/ledger" --max-records 11
expect 1 "$VERIFY" --key "$V/vector.pub" --url "$url"
last_line_starts "FAILED: missing: record 11: "
stop_server

# a fork seen through the server's consistency proof as well
rm -f "$tmp/state"
expect 0 gen --out "$tmp/fork8" --reload-map "$V/podmap-reload.yaml" --records 8
expect 0 "$VERIFY" --key "$V/vector.pub" --ledger "$tmp/fork8" --state "$tmp/state"
start_server --ledger "$V/ledger"
expect 1 "$VERIFY" --key "$V/vector.pub" --url "$url" --state "$tmp/state"
grep -q "fork: the log's consistency proof from the trusted size 8 to 15 does not verify" \
	"$tmp/out" || { cat "$tmp/out" >&2; fail "consistency proof not checked"; }
stop_server

# nobody listening
expect 2 "$VERIFY" --key "$V/vector.pub" --url "$url"

echo "all vector checks passed"
