#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
#
# podcap-verify, podcap-ledger-gen and podcap-keygen under valgrind's
# memcheck, on the test vectors:
#   check.sh VALGRIND PODCAP-VERIFY PODCAP-LEDGER-GEN PODCAP-KEYGEN PYTHON3 VECTORS-DIR
#
# Every run of tests/vectors/check.sh (the exact reports, tampered copies,
# the trusted state, usage errors, HTTP) goes through valgrind, and so do
# the key generator's successes and refusals. Any invalid read or write,
# use of uninitialised memory or definitely lost block fails the test:
# valgrind then exits with 99, which no podcap tool does, and its report
# is kept in a log that must stay empty.
set -eu

# absolute: tests/vectors/check.sh runs some of them from the vectors' directory
VALGRIND=$1
VERIFY=$(realpath "$2")
GEN=$(realpath "$3")
KEYGEN=$(realpath "$4")
PYTHON=$5
V=$6

tmp=$(mktemp -d "${TMPDIR:-/tmp}/podcap-valgrind.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
trap 'exit 1' INT TERM
mkdir "$tmp/logs" "$tmp/bin"

fail() {
	echo "FAIL: $*" >&2
	exit 1
}

# A wrapper per tool, so check.sh runs it under valgrind unchanged.
for tool in "$VERIFY" "$GEN" "$KEYGEN"; do
	name=$(basename "$tool")
	cat >"$tmp/bin/$name" <<WRAP
#!/bin/sh
exec "$VALGRIND" -q --error-exitcode=99 --leak-check=full \\
	--errors-for-leak-kinds=definite --show-leak-kinds=definite \\
	--log-file="$tmp/logs/$name.%p" "$tool" "\$@"
WRAP
	chmod +x "$tmp/bin/$name"
done
verify=$tmp/bin/$(basename "$VERIFY")
gen=$tmp/bin/$(basename "$GEN")
keygen=$tmp/bin/$(basename "$KEYGEN")

echo "# the vector checks, every tool under valgrind"
sh "$V/check.sh" "$verify" "$gen" "$PYTHON" "$V"

# expect STATUS CMD...
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

echo "# podcap-keygen: a key that signs a ledger the verifier accepts"
expect 0 "$keygen" --out "$tmp/k" --name podcap/vector-1
grep -q "^verifier key: podcap/vector-1+" "$tmp/out" || fail "no verifier key line"
expect 0 "$gen" --key "$tmp/k" --pod-map "$V/podmap.yaml" --out "$tmp/ledger" --records 5
expect 0 "$verify" --key "$tmp/k.pub" --ledger "$tmp/ledger" --pod-map "$V/podmap.yaml"
expect 1 "$verify" --key "$V/vector.pub" --ledger "$tmp/ledger"

echo "# podcap-keygen: refusals"
expect 1 "$keygen" --out "$tmp/k" --name podcap/vector-1
grep -q "exists" "$tmp/err" || { cat "$tmp/err" >&2; fail "an existing key was not refused"; }
expect 1 "$keygen" --out "$tmp/k2" --name "has space"
expect 1 "$keygen" --out "$tmp/k3" --name "a+b"
expect 2 "$keygen" --name podcap/x
expect 2 "$keygen" --out "$tmp/k4" extra

for f in "$tmp"/logs/*; do
	if [ -s "$f" ]; then
		cat "$tmp"/logs/* >&2
		fail "valgrind reported errors"
	fi
done
n=$(ls "$tmp/logs" | wc -l)
[ "$n" -gt 30 ] || fail "only $n runs under valgrind"
echo "$n runs under valgrind, no errors"
