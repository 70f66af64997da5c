#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""podcap-audit sign and verify as an auditor runs them: an auditor key from
podcap-keygen --auditor, a declaration written next to the map, and each
refusal with its exit status and message.

  test_audit_cli.py PODCAP_AUDIT PODCAP_KEYGEN SOURCE_ROOT
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

import yaml

AUDIT, KEYGEN, ROOT = (os.path.abspath(a) for a in sys.argv[1:4])
MAP = os.path.join(ROOT, "tests", "config", "good", "full.yaml")
NB, NA = "2027-01-01T00:00:00Z", "2027-01-08T00:00:00Z"
failures = []


def run(*args):
    return subprocess.run(list(args), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True)


def expect(p, code, text=None, what=""):
    out = p.stdout + p.stderr
    if p.returncode != code or (text is not None and text not in out):
        failures.append("%s: want exit %d and %r, got %d: %s" % (what, code, text, p.returncode, out))


SEED = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f"


def assign_checks():
    """podcap-audit assign and commit, in the current directory."""
    with open("pods.txt", "w") as f:
        f.write("# pod cell prefixes\npod-00 cell-a 10.0.0.0/26\npod-01 cell-a 10.0.0.64/26\n"
                "pod-02 cell-b 10.0.0.128/26,fd00:0:0:2::/64\npod-03 cell-b 10.0.0.192/26\n"
                "pod-04 cell-c 10.0.1.0/26\npod-05 cell-c 10.0.1.64/26\n")
    with open("uplinks.txt", "w") as f:
        f.write("rack1 up0 0000:3b:00.0 0000:3b:00.1\nrack1 up1 0000:3c:00.0 0000:3c:00.1\n"
                "rack2 up0 0000:3b:00.0 0000:3b:00.1\n")
    with open("tmpl.yaml", "w") as f:
        f.write("appliance:\n  id: @APPLIANCE@\nwindow: 60s\n")
    with open("seed", "w") as f:
        f.write(SEED + "\n")
    p = run(AUDIT, "commit", "--seed-file", "seed")
    expect(p, 0, "commitment cb2f5160fc1f7e05a55ef49d340b48da2e5a78099d53393351cd579dd42503d6",
           "commit")
    commitment = p.stdout.split()[1]
    base = [AUDIT, "assign", "--pods", "pods.txt", "--uplinks", "uplinks.txt", "--template",
            "tmpl.yaml", "--separate-cells", "--max-pods-per-uplink", "2"]
    a = run(*(base + ["--seed", SEED, "--out", "maps1", "--commitment", commitment]))
    expect(a, 0, "wrote maps1/rack1.yaml: ", "assign")
    b = run(*(base + ["--seed-file", "seed", "--out", "maps2"]))
    expect(b, 0, "wrote maps2/rack2.yaml: ", "assign again")
    for app in ("rack1", "rack2"):
        if open(f"maps1/{app}.yaml").read() != open(f"maps2/{app}.yaml").read():
            failures.append(f"the same seed gave two different maps for {app}")
    if a.stdout.replace("maps1", "maps2") != b.stdout:
        failures.append("the same seed printed two different assignments")
    placed = {ln.split()[1]: ln.split()[3] + "/" + ln.split()[5] for ln in a.stdout.splitlines()
              if ln.startswith("pod ")}
    if len(placed) != 6:
        failures.append(f"assign placed {placed}")
    per = {}
    for pod, at in placed.items():
        per.setdefault(at, []).append(pod)
    cells = {"pod-00": "a", "pod-01": "a", "pod-02": "b", "pod-03": "b", "pod-04": "c", "pod-05": "c"}
    for at, ps in per.items():
        if len(ps) > 2 or len({cells[x] for x in ps}) != len(ps):
            failures.append(f"constraints broken on {at}: {ps}")
    app02 = placed["pod-02"].split("/")[0]
    if "prefixes: [10.0.0.128/26, fd00:0:0:2::/64]" not in open(f"maps1/{app02}.yaml").read():
        failures.append("pod-02's prefixes are not together in its map")
    # the maps load: podcap-audit sign accepts one
    expect(run(AUDIT, "sign", "maps1/rack1.yaml", "--key", "acme.key", "--not-before", NB,
               "--not-after", NA), 0, "wrote maps1/rack1.yaml.sig", "sign an assigned map")
    before = open("maps1/rack1.yaml").read()
    expect(run(*(base + ["--seed", SEED, "--out", "maps1"])), 1, "maps1: Directory not empty",
           "assign over earlier maps")
    if open("maps1/rack1.yaml").read() != before:
        failures.append("a refused assign changed maps1/rack1.yaml")
    # a verifier holding the revealed seed: the maps are the seed's, and another seed's are not
    expect(run(*(base + ["--seed", SEED, "--out", "maps2", "--check"])), 0,
           "maps2/rack2.yaml is the map this seed gives", "check")
    shutil.copytree("maps2", "maps6")
    with open("maps6/rack1.yaml") as f:
        text = f.read()
    swapped = text.replace("uplink: up0", "uplink: upX").replace("uplink: up1", "uplink: up0") \
        .replace("uplink: upX", "uplink: up1")
    with open("maps6/rack1.yaml", "w") as f:
        f.write(swapped)
    expect(run(*(base + ["--seed", SEED, "--out", "maps6", "--check"])), 1,
           "maps6/rack1.yaml is not the map this seed and these files give", "check a recabled map")
    expect(run(*(base + ["--seed", SEED.replace("00", "ff", 1), "--out", "maps3", "--commitment",
                         commitment])), 1, "the seed does not match the commitment", "other seed")
    expect(run(*(base + ["--seed", "abc", "--out", "maps3"])), 1, "the seed is not 64 hex digits",
           "short seed")
    with open("bad.txt", "w") as f:
        f.write("pod-00 cell-a 10.0.0.0/26\npod-01\n")
    expect(run(AUDIT, "assign", "--pods", "bad.txt", "--uplinks", "uplinks.txt", "--template",
               "tmpl.yaml", "--seed", SEED, "--out", "maps4"), 1,
           "bad.txt:2:1: expected '<pod id> <cell or -> <prefixes or ->'", "bad pods file")
    expect(run(*(base[:-2] + ["--max-pods-per-uplink", "1", "--seed", SEED, "--out", "maps5"])), 1,
           "no assignment in 1000 attempts", "no room")
    check_checks(base + ["--seed", SEED])
    id_checks()
    template_checks()
    failure_checks()


def check_checks(args):
    """--check holds DIR to exactly the maps drawn: any other entry, a missing map or another
    byte fails, naming the file."""
    def case(name, change, text):
        d = f"chk-{name}"
        shutil.copytree("maps2", d, symlinks=True)
        change(d)
        expect(run(*(args + ["--out", d, "--check"])), 1, text.replace("DIR", d), f"--check {name}")

    def append(path, data):
        with open(path, "ab") as f:
            f.write(data)

    expect(run(*(args + ["--out", "maps2", "--check"])), 0,
           "maps2/rack1.yaml is the map this seed gives", "--check of the maps drawn")
    case("extra-map", lambda d: shutil.copy(f"{d}/rack1.yaml", f"{d}/rack3.yaml"),
         "DIR/rack3.yaml: not one of the maps this seed draws")
    case("extra-file", lambda d: append(f"{d}/notes.txt", b"hello\n"),
         "DIR/notes.txt: not one of the maps this seed draws")
    case("dot-file", lambda d: append(f"{d}/.rack1.yaml.swp", b"x"),
         "DIR/.rack1.yaml.swp: not one of the maps this seed draws")
    case("subdir", lambda d: os.mkdir(f"{d}/old"),
         "DIR/old: not a regular file, not one of the maps this seed draws")
    case("missing", lambda d: os.unlink(f"{d}/rack2.yaml"),
         "DIR/rack2.yaml: missing: the map this seed draws for appliance rack2")
    case("byte", lambda d: append(f"{d}/rack2.yaml", b"#"),
         "DIR/rack2.yaml is not the map this seed and these files give")
    case("nul", lambda d: append(f"{d}/rack2.yaml", b"\0pods: []\n"),
         "DIR/rack2.yaml is not the map this seed and these files give")

    def link(d):
        os.unlink(f"{d}/rack1.yaml")
        os.symlink(os.path.abspath("maps2/rack1.yaml"), f"{d}/rack1.yaml")
    case("symlink", link, "DIR/rack1.yaml: not a regular file, not one of the maps this seed draws")
    expect(run(*(args + ["--out", "chk-none", "--check"])), 1, "chk-none: No such file or directory",
           "--check of no directory")


# Ids the id rule allows that a plain YAML scalar would not read back as the same string
# (YAML 1.1 or the 1.2 core schema: null, booleans, numbers, timestamps, '-'), and ordinary ones.
SPECIAL_IDS = ["null", "NULL", "Null", "-", "--", "-x", "-1", "true", "False", "TRUE", "yes",
               "No", "on", "OFF", "y", "N", "1e3", "0x10", "0o17", "017", "0b11", "1_000", "12",
               "1.5", ".5", "5.", ".inf", "-.inf", ".NaN", ".nan", "2024-01-01", ".", "_"]
ORDINARY_IDS = ["pod-00", "web", "a.b", "Pod_9", "nulls", "yes-2", "x1e3"]


class Core12(yaml.SafeLoader):
    """The YAML 1.2 core schema's tags for plain scalars (PyYAML's SafeLoader is YAML 1.1)."""
    yaml_implicit_resolvers = {}


for tag, rx, first in [
        ("null", r"~|null|Null|NULL", "~nN"),
        ("bool", r"true|True|TRUE|false|False|FALSE", "tTfF"),
        ("int", r"[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+", "-+0123456789"),
        ("float", r"[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?|[-+]?\.(inf|Inf|INF)"
         r"|\.nan|\.NaN|\.NAN", "-+.0123456789")]:
    Core12.add_implicit_resolver("tag:yaml.org,2002:" + tag, re.compile(f"^(?:{rx})$"), list(first))


def read_ids(path):
    """The pod ids, their uplinks and the uplinks' names of a map, each (value, YAML 1.1 tag,
    YAML 1.2 core tag); a map either cannot parse is a failure."""
    text = open(path).read()
    try:
        trees = [yaml.compose(text, Loader=loader) for loader in (yaml.SafeLoader, Core12)]
    except yaml.YAMLError as e:
        failures.append(f"{path} is not YAML: {e}")
        return []

    def values(root):
        return [v for k, seq in root.value if k.value in ("uplinks", "pods") for item in seq.value
                for key, v in item.value if key.value in ("id", "name", "uplink")]
    return [(a.value, a.tag, b.tag) for a, b in zip(*(values(t) for t in trees))]


def id_checks():
    """Each id class through assign: the maps load (podcap-audit sign reads them), and YAML
    reads every id back as the string it is."""
    ids = SPECIAL_IDS + ORDINARY_IDS
    with open("ids-pods.txt", "w") as f:
        for i, pid in enumerate(ids):
            f.write(f"{pid} - 10.1.{i}.0/24\n")
    ups = ["on", "-", "0x1", "up0"]
    with open("ids-uplinks.txt", "w") as f:
        for i, u in enumerate(ups):
            f.write(f"rack1 {u} net_null_p{i} net_null_f{i}\n")
    p = run(AUDIT, "assign", "--pods", "ids-pods.txt", "--uplinks", "ids-uplinks.txt",
            "--template", "tmpl.yaml", "--seed", SEED, "--out", "ids")
    expect(p, 0, "wrote ids/rack1.yaml: %d pods on 4 uplinks" % len(ids), "assign odd ids")
    if p.returncode != 0:
        return
    expect(run(AUDIT, "sign", "ids/rack1.yaml", "--key", "acme.key", "--not-before", NB,
               "--not-after", NA, "--out", "ids.sig"), 0, "wrote ids.sig", "sign a map of odd ids")
    got = read_ids("ids/rack1.yaml")
    if sorted({v for v, _, _ in got}) != sorted(set(ids + ups)):
        failures.append(f"ids/rack1.yaml holds {sorted({v for v, _, _ in got})}")
    str_tag = "tag:yaml.org,2002:str"
    for value, t11, t12 in got:
        if t11 != str_tag or t12 != str_tag:
            failures.append(f"ids/rack1.yaml: id {value!r} reads as {t11} (YAML 1.1), {t12} (1.2)")
    text = open("ids/rack1.yaml").read()
    for pid in ORDINARY_IDS:
        if f"  - id: {pid}\n" not in text:
            failures.append(f"ordinary id {pid} is not written as it is")


def template_checks():
    """A template without a final newline still ends its last line before uplinks:."""
    with open("tmpl-nonl.yaml", "w") as f:
        f.write("appliance:\n  id: @APPLIANCE@\nwindow: 60s")
    p = run(AUDIT, "assign", "--pods", "pods.txt", "--uplinks", "uplinks.txt", "--template",
            "tmpl-nonl.yaml", "--seed", SEED, "--out", "nonl")
    expect(p, 0, "wrote nonl/rack2.yaml: ", "template without a final newline")
    if p.returncode == 0 and not open("nonl/rack1.yaml").read().startswith(
            "appliance:\n  id: rack1\nwindow: 60s\nuplinks:\n"):
        failures.append("the template's last line and uplinks: are not two lines")


def failure_checks():
    """A failed assign leaves nothing behind (no map, no temporary directory); the same command
    with a good template then succeeds. An empty directory is a new one."""
    with open("two-pods.txt", "w") as f:
        f.write("pod-a - 10.0.0.0/24\npod-b - 10.0.1.0/24\n")
    with open("two-uplinks.txt", "w") as f:
        f.write("a up0 net_null0 net_null1\nnull up0 net_null2 net_null3\n")
    cmd = [AUDIT, "assign", "--pods", "two-pods.txt", "--uplinks", "two-uplinks.txt",
           "--seed", SEED, "--max-pods-per-uplink", "1", "--out", "fail/maps", "--template"]
    os.mkdir("fail")
    # appliance null: 'id: null' is no id, so its map (the second) does not load
    expect(run(*(cmd + ["tmpl.yaml"])), 1, "fail/maps/null.yaml:2:7: ", "a map that does not load")
    if os.listdir("fail"):
        failures.append(f"a failed assign left {os.listdir('fail')}")
    with open("tmpl-quoted.yaml", "w") as f:
        f.write('appliance:\n  id: "@APPLIANCE@"\n')
    expect(run(*(cmd + ["tmpl-quoted.yaml"])), 0, "wrote fail/maps/null.yaml: 1 pods",
           "assign again after a failure")
    if sorted(os.listdir("fail")) != ["maps"] or sorted(os.listdir("fail/maps")) != [
            "a.yaml", "null.yaml"]:
        failures.append(f"assign wrote {os.listdir('fail')}, {os.listdir('fail/maps')}")
    os.mkdir("empty")
    expect(run(*(cmd[:-3] + ["--out", "empty", "--template", "tmpl-quoted.yaml"])), 0,
           "wrote empty/a.yaml: ", "assign into an empty directory")


def main():
    tmp = tempfile.mkdtemp(prefix="podcap-audit-cli-")
    try:
        os.chdir(tmp)
        shutil.copy(MAP, "map.yaml")
        expect(run(KEYGEN, "--auditor", "acme", "--out", "acme.key"), 0,
               "verifier key: auditor/acme+", "keygen --auditor")
        expect(run(KEYGEN, "--auditor", "eve", "--out", "eve.key"), 0, None, "keygen eve")
        expect(run(KEYGEN, "--name", "podcap/full.test_1", "--out", "app.key"), 0, None, "keygen")
        expect(run(KEYGEN, "--name", "x", "--auditor", "y", "--out", "z.key"), 2,
               "--name and --auditor exclude each other", "keygen both")

        sign = [AUDIT, "sign", "map.yaml", "--key", "acme.key", "--not-before", NB,
                "--not-after", NA]
        p = run(*sign)
        expect(p, 0, "wrote map.yaml.sig", "sign")
        expect(p, 0, "valid: 2027-01-01T00:00:00Z to 2027-01-08T00:00:00Z", "sign validity")
        note = open("map.yaml.sig").read()
        body = note[:note.index("\n\n") + 1]
        digest = run(AUDIT, "verify", "map.yaml", "--auditor-key", "acme.key.pub",
                     "--at", NB).stdout.split("pod map digest: ")[1].split("\n")[0]
        if body != ("podcap-declaration v1\nappliance full.test_1\npodmap %s\n"
                    "not-before %s\nnot-after %s\n" % (digest, NB, NA)):
            failures.append("unexpected declaration body: %r" % body)
        if not note[len(body) + 1:].startswith("\u2014 auditor/acme "):
            failures.append("no signature line by auditor/acme: %r" % note)

        # never overwritten; --out writes elsewhere
        expect(run(*sign), 1, "map.yaml.sig exists: a declaration is never overwritten", "resign")
        if open("map.yaml.sig").read() != note:
            failures.append("a refused sign changed map.yaml.sig")
        expect(run(*(sign[:-4] + ["--not-before", NB, "--not-after", NB])), 1,
               "not-after later than not-before", "empty validity")
        expect(run(AUDIT, "sign", "map.yaml", "--key", "app.key", "--not-before", NB,
                   "--not-after", NA, "--out", "x.sig"), 1,
               "key podcap/full.test_1 is not an auditor key", "appliance key signs")
        expect(run(AUDIT, "sign", "map.yaml", "--key", "acme.key", "--not-before", "yesterday",
                   "--not-after", NA, "--out", "x.sig"), 1,
               "--not-before: 'yesterday' is not an RFC 3339 time", "bad time")
        with open("bad.yaml", "w") as f:
            f.write("appliance:\n  id: a\nbogus: 1\n")
        expect(run(AUDIT, "sign", "bad.yaml", "--key", "acme.key", "--not-before", NB,
                   "--not-after", NA), 1, "bad.yaml:3:1: unknown key 'bogus'", "bad map")
        if os.path.exists("bad.yaml.sig"):
            failures.append("a map that does not load was signed")

        ver = [AUDIT, "verify", "map.yaml", "--auditor-key", "acme.key.pub"]
        expect(run(*(ver + ["--at", NB])), 0, "declaration OK: map.yaml.sig, signed by auditor/acme+",
               "verify")
        expect(run(*(ver + ["--at", "2027-01-07T23:59:59Z"])), 0, None, "last second")
        expect(run(*(ver + ["--at", NA])), 1,
               "map.yaml.sig: expired at 2027-01-08T00:00:00Z (now 2027-01-08T00:00:00Z)", "expired")
        expect(run(*(ver + ["--at", "2026-12-31T23:59:59Z"])), 1,
               "map.yaml.sig: not yet valid: valid from 2027-01-01T00:00:00Z", "not yet valid")
        expect(run(AUDIT, "verify", "map.yaml", "--auditor-key", "eve.key.pub", "--at", NB), 1,
               "map.yaml.sig: no signature by key auditor/eve+", "wrong key")
        expect(run(AUDIT, "verify", "map.yaml", "--auditor-key", "eve.key.pub",
                   "--auditor-key", "acme.key.pub", "--at", NB), 0, "signed by auditor/acme+",
               "second key")
        expect(run(AUDIT, "verify", "map.yaml", "--auditor-key", "app.key.pub", "--at", NB), 1,
               "is not an auditor key", "appliance key verifies")

        # the same declaration against another map, another appliance
        with open(MAP) as f:
            text = f.read()
        with open("other.yaml", "w") as f:
            f.write(text.replace("full.test_1", "full.test_2"))
        expect(run(AUDIT, "verify", "other.yaml", "--sig", "map.yaml.sig", "--auditor-key",
                   "acme.key.pub", "--at", NB), 1,
               "map.yaml.sig: declared for appliance full.test_1, not full.test_2", "other appliance")
        with open("changed.yaml", "w") as f:
            f.write(text + "\n# a comment changes no digest\n")
        expect(run(AUDIT, "verify", "changed.yaml", "--sig", "map.yaml.sig", "--auditor-key",
                   "acme.key.pub", "--at", NB), 0, None, "same map, other spelling")
        # a forged validity under the auditor's signature
        with open("forged.sig", "w") as f:
            f.write(note.replace("2027-01-08", "2028-01-08"))
        expect(run(AUDIT, "verify", "map.yaml", "--sig", "forged.sig", "--auditor-key",
                   "acme.key.pub", "--at", NB), 1, "forged.sig: bad signature by key auditor/acme+",
               "forged")
        expect(run(AUDIT, "verify", "map.yaml", "--sig", "missing.sig", "--auditor-key",
                   "acme.key.pub"), 1, "missing.sig: no declaration", "missing")
        assign_checks()
        expect(run(AUDIT, "verify", "map.yaml"), 2, "usage:", "no key")
        expect(run(AUDIT, "frobnicate", "map.yaml"), 2, "the command is sign, verify, assign or commit", "command")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    for f in failures:
        print("FAIL: " + f)
    print("%d failures" % len(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
