#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""podcap-audit sign and verify as an auditor runs them: an auditor key from
podcap-keygen --auditor, a declaration written next to the map, and each
refusal with its exit status and message.

  test_audit_cli.py PODCAP_AUDIT PODCAP_KEYGEN SOURCE_ROOT
"""
import os
import shutil
import subprocess
import sys
import tempfile

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
        expect(run(AUDIT, "verify", "map.yaml"), 2, "usage:", "no key")
        expect(run(AUDIT, "frobnicate", "map.yaml"), 2, "the command is sign or verify", "command")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    for f in failures:
        print("FAIL: " + f)
    print("%d failures" % len(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
