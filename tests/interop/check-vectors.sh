#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Regenerates tests/vectors/witness/ with Go's golang.org/x/mod/sumdb note
# and tlog packages (Debian's golang-golang-x-mod-dev, offline: GOPATH mode)
# and fails if a byte differs from the committed vectors, which the unit
# test test_cosig holds podcap's C to.
#   check-vectors.sh GO SRCDIR OUTDIR
set -eu
go=$1 src=$2 out=$3
mkdir -p "$out"
GOPATH=/usr/share/gocode GO111MODULE=off GOFLAGS= GOCACHE="$out/gocache" \
	"$go" run "$src/tests/interop/witness_vectors.go" "$out"
for f in cosig.txt consistency.txt tiles.txt; do
	cmp "$src/tests/vectors/witness/$f" "$out/$f"
done
echo "witness vectors: Go's note and tlog write the committed bytes"
