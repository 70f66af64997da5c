// SPDX-License-Identifier: BSD-3-Clause

// Writes podcap's witness test vectors with Go's golang.org/x/mod/sumdb
// note and tlog packages (Debian's golang-golang-x-mod-dev) and the Go
// standard library's Ed25519, independently of podcap's C:
//
//	cosig.txt        a checkpoint signed by a log key and cosigned
//	                 (cosignature/v1) by two witnesses, with every key
//	consistency.txt  RFC 6962 consistency proofs from every old size
//	tiles.txt        every C2SP tlog-tiles hash tile of a tree of 600
//	                 leaves, with its path
//
// tests/unit/test_cosig.c checks that podcap reproduces both byte for
// byte. Build offline: GOPATH=/usr/share/gocode GO111MODULE=off GOFLAGS=-mod=mod
// go run witness_vectors.go OUTDIR
package main

import (
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"
)

func seed(b byte) []byte {
	s := make([]byte, ed25519.SeedSize)
	for i := range s {
		s[i] = b
	}
	return s
}

// A cosignature/v1 signer and verifier, written from c2sp.org/tlog-cosignature.
type cosigner struct {
	name string
	priv ed25519.PrivateKey
	pub  ed25519.PublicKey
	time uint64
}

func (c *cosigner) Name() string { return c.name }

func (c *cosigner) KeyHash() uint32 {
	h := sha256.New()
	h.Write([]byte(c.name))
	h.Write([]byte{'\n', 0x04})
	h.Write(c.pub)
	return binary.BigEndian.Uint32(h.Sum(nil))
}

func message(t uint64, body []byte) []byte {
	return append([]byte(fmt.Sprintf("cosignature/v1\ntime %d\n", t)), body...)
}

func (c *cosigner) Sign(body []byte) ([]byte, error) {
	sig := make([]byte, 8, 8+ed25519.SignatureSize)
	binary.BigEndian.PutUint64(sig, c.time)
	return append(sig, ed25519.Sign(c.priv, message(c.time, body))...), nil
}

func (c *cosigner) Verify(body, sig []byte) bool {
	if len(sig) != 8+ed25519.SignatureSize {
		return false
	}
	t := binary.BigEndian.Uint64(sig)
	return t <= 1<<63-1 && ed25519.Verify(c.pub, message(t, body), sig[8:])
}

func (c *cosigner) vkey() string {
	return fmt.Sprintf("%s+%08x+%s", c.name, c.KeyHash(),
		base64.StdEncoding.EncodeToString(append([]byte{0x04}, c.pub...)))
}

func newCosigner(name string, b byte, t uint64) *cosigner {
	priv := ed25519.NewKeyFromSeed(seed(b))
	return &cosigner{name: name, priv: priv, pub: priv.Public().(ed25519.PublicKey), time: t}
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "witness_vectors:", err)
		os.Exit(1)
	}
}

// The stored hashes (tlog.StoredHashIndex order) of the proof vectors'
// tree, whose leaves are "leaf 0", "leaf 1", ...
type stored []tlog.Hash

func (s stored) ReadHashes(indexes []int64) ([]tlog.Hash, error) {
	out := make([]tlog.Hash, len(indexes))
	for i, x := range indexes {
		out[i] = s[x]
	}
	return out, nil
}

func cosigVectors(dir string) {
	const origin = "example.com/podcap/vectors"
	logSeed := seed(0x4c)
	logPriv := ed25519.NewKeyFromSeed(logSeed)
	logPub := logPriv.Public().(ed25519.PublicKey)
	vkey, err := note.NewEd25519VerifierKey(origin, logPub)
	check(err)
	logVerifier, err := note.NewVerifier(vkey)
	check(err)
	skey := fmt.Sprintf("PRIVATE+KEY+%s+%08x+%s", origin, logVerifier.KeyHash(),
		base64.StdEncoding.EncodeToString(append([]byte{0x01}, logSeed...)))
	logSigner, err := note.NewSigner(skey)
	check(err)

	w1 := newCosigner("witness.example/w1", 0x57, 1679315147)
	w2 := newCosigner("witness.example/w2", 0x58, 1700000000)
	root := tlog.RecordHash([]byte("podcap"))
	body := fmt.Sprintf("%s\n%d\n%s\n", origin, 5, base64.StdEncoding.EncodeToString(root[:]))
	msg, err := note.Sign(&note.Note{Text: body}, logSigner, w1, w2)
	check(err)
	// Go's own note.Open must accept what it signed with both witnesses.
	n, err := note.Open(msg, note.VerifierList(logVerifier, w1, w2))
	check(err)
	if len(n.Sigs) != 3 {
		check(fmt.Errorf("note.Open verified %d signatures, want 3", len(n.Sigs)))
	}
	var b strings.Builder
	fmt.Fprintf(&b, "log-skey %s\nlog-vkey %s\n", skey, vkey)
	fmt.Fprintf(&b, "w1-seed %x\nw1-vkey %s\nw1-time %d\n", seed(0x57), w1.vkey(), w1.time)
	fmt.Fprintf(&b, "w2-seed %x\nw2-vkey %s\nw2-time %d\n", seed(0x58), w2.vkey(), w2.time)
	fmt.Fprintf(&b, "note\n%s", msg)
	check(os.WriteFile(filepath.Join(dir, "cosig.txt"), []byte(b.String()), 0o644))
}

func consistencyVectors(dir string) {
	const max = 33
	var l stored
	var b strings.Builder
	for i := int64(0); i < max; i++ {
		hs, err := tlog.StoredHashes(i, []byte(fmt.Sprintf("leaf %d", i)), l)
		check(err)
		l = append(l, hs...)
	}
	b.WriteString("# new old root(new) proof...: leaves are \"leaf 0\", \"leaf 1\", ... (RFC 6962 leaf hashes)\n")
	for t := int64(1); t <= max; t++ {
		th, err := tlog.TreeHash(t, l)
		check(err)
		for o := int64(1); o <= t; o++ {
			p, err := tlog.ProveTree(t, o, l)
			check(err)
			oh, err := tlog.TreeHash(o, l)
			check(err)
			check(tlog.CheckTree(p, t, th, o, oh))
			fmt.Fprintf(&b, "%d %d %s", t, o, base64.StdEncoding.EncodeToString(th[:]))
			for _, h := range p {
				fmt.Fprintf(&b, " %s", base64.StdEncoding.EncodeToString(h[:]))
			}
			b.WriteString("\n")
		}
	}
	check(os.WriteFile(filepath.Join(dir, "consistency.txt"), []byte(b.String()), 0o644))
}

// The C2SP tlog-tiles path of a hash tile (Go's sumdb paths are tile/8/L/...).
func tilePath(t tlog.Tile) string {
	n := fmt.Sprintf("%03d", t.N%1000)
	for x := t.N / 1000; x > 0; x /= 1000 {
		n = fmt.Sprintf("x%03d/", x%1000) + n
	}
	p := fmt.Sprintf("tile/%d/%s", t.L, n)
	if t.W != 1<<t.H {
		p += fmt.Sprintf(".p/%d", t.W)
	}
	return p
}

func tileVectors(dir string) {
	const size = 600
	var l stored
	var b strings.Builder
	for i := int64(0); i < size; i++ {
		hs, err := tlog.StoredHashes(i, []byte(fmt.Sprintf("leaf %d", i)), l)
		check(err)
		l = append(l, hs...)
	}
	b.WriteString("# path base64(tile data): the hash tiles of the tree of leaves \"leaf 0\" ... \"leaf 599\"\n")
	ts := tlog.NewTiles(8, 0, size)
	for i, t := range ts {
		// only the tiles of the tree of 600: full ones, and each level's last partial one
		if t.W != 256 && i+1 < len(ts) && ts[i+1].L == t.L && ts[i+1].N == t.N {
			continue
		}
		data, err := tlog.ReadTileData(t, l)
		check(err)
		fmt.Fprintf(&b, "%s %s\n", tilePath(t), base64.StdEncoding.EncodeToString(data))
	}
	check(os.WriteFile(filepath.Join(dir, "tiles.txt"), []byte(b.String()), 0o644))
}

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: witness_vectors OUTDIR")
		os.Exit(2)
	}
	cosigVectors(os.Args[1])
	consistencyVectors(os.Args[1])
	tileVectors(os.Args[1])
}
