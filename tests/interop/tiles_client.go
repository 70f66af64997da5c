// SPDX-License-Identifier: BSD-3-Clause

// Reads a podcap log as C2SP tlog-tiles with Go's golang.org/x/mod/sumdb/tlog,
// an implementation independent of podcap's: the checkpoint at
// <URL>/checkpoint, hash tiles, entry bundles. tlog.TileHashReader checks
// every tile it reads against the checkpoint's root; then every record's
// inclusion proof, built from the tiles, must verify for the hash of the
// record as its entry bundle holds it.
//
//	GOPATH=/usr/share/gocode GO111MODULE=off go run tiles_client.go URL
package main

import (
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"

	"golang.org/x/mod/sumdb/tlog"
)

var base string

func get(path string) []byte {
	r, err := http.Get(base + "/" + path)
	check(err)
	defer r.Body.Close()
	b, err := io.ReadAll(r.Body)
	check(err)
	if r.StatusCode != 200 {
		check(fmt.Errorf("GET %s: %d %s", path, r.StatusCode, b))
	}
	return b
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "tiles_client:", err)
		os.Exit(1)
	}
}

// The C2SP tlog-tiles path of a tile: tile/<L>/<N>[.p/<W>], or
// tile/entries/... for level -1 (Go's sumdb paths differ: tile/8/0/...).
func path(t tlog.Tile) string {
	n := fmt.Sprintf("%03d", t.N%1000)
	for x := t.N / 1000; x > 0; x /= 1000 {
		n = fmt.Sprintf("x%03d/", x%1000) + n
	}
	p := "tile/" + strconv.Itoa(t.L) + "/" + n
	if t.L < 0 {
		p = "tile/entries/" + n
	}
	if t.W != 1<<t.H {
		p += ".p/" + strconv.Itoa(t.W)
	}
	return p
}

type tiles struct{}

func (tiles) Height() int { return 8 }

func (tiles) ReadTiles(ts []tlog.Tile) ([][]byte, error) {
	out := make([][]byte, len(ts))
	for i, t := range ts {
		out[i] = get(path(t))
	}
	return out, nil
}

func (tiles) SaveTiles([]tlog.Tile, [][]byte) {}

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: tiles_client URL")
		os.Exit(2)
	}
	base = strings.TrimSuffix(os.Args[1], "/")
	lines := strings.SplitN(string(get("checkpoint")), "\n", 4)
	if len(lines) < 4 {
		check(fmt.Errorf("malformed checkpoint"))
	}
	n, err := strconv.ParseInt(lines[1], 10, 64)
	check(err)
	raw, err := base64.StdEncoding.DecodeString(lines[2])
	check(err)
	var tree tlog.Tree
	tree.N = n
	copy(tree.Hash[:], raw)
	thr := tlog.TileHashReader(tree, tiles{})
	th, err := tlog.TreeHash(n, thr)
	check(err)
	if th != tree.Hash {
		check(fmt.Errorf("the tiles' tree hash is not the checkpoint's"))
	}
	for first := int64(0); first < n; first += 256 {
		w := n - first
		if w > 256 {
			w = 256
		}
		b := get(path(tlog.Tile{H: 8, L: -1, N: first / 256, W: int(w)}))
		for i := int64(0); i < w; i++ {
			if len(b) < 2 || len(b) < 2+int(binary.BigEndian.Uint16(b)) {
				check(fmt.Errorf("entry bundle %d ends early", first/256))
			}
			l := int(binary.BigEndian.Uint16(b))
			entry := b[2 : 2+l]
			b = b[2+l:]
			p, err := tlog.ProveRecord(n, first+i, thr)
			check(err)
			check(tlog.CheckRecord(p, n, tree.Hash, first+i, tlog.RecordHash(entry)))
		}
		if len(b) != 0 {
			check(fmt.Errorf("entry bundle %d has bytes after its entries", first/256))
		}
	}
	fmt.Printf("tiles: %d records, each proven from the tiles to the checkpoint's root\n", n)
}
