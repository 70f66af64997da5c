#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Keeps the man pages and the bash completions in step with the programs.

  check.py options PROGRAM PAGE MANDOC GROFF
      PROGRAM --help: every option it prints is in PAGE's OPTIONS section,
      and every option that section names is in --help; PAGE lints clean.
  check.py podmap PAGE MANDOC GROFF PODMAP_KEYS FULL_YAML EXAMPLE_YAML [PODCAPD]
      PODMAP_KEYS prints every key of the pod map with what its row says of
      the digest and a reload: each has one entry in PAGE's KEYS, under the
      subsection its path names, that says both ("Digest: always. Reload:
      fixed."); PAGE defines no other key; every key FULL_YAML (a pod map
      that sets every key) sets is one; every line key of the canonical form
      (each key's, as its row says) is in PAGE. With PODCAPD, podcapd
      accepts FULL_YAML and prints EXAMPLE_YAML's canonical form, whose keys
      are checked as well.
  check.py completion PROGRAM BASH COMPLETION
      the completion of PROGRAM offers exactly the long options of --help,
      and file names after an option that takes a file.

--help itself counts as printed: the check runs it, so it is accepted,
although podcapd and podcap-verify print no line for it.
"""
import os
import re
import subprocess
import sys
import tempfile

OPTION = re.compile(r"(?<![\w/.-])(--?[A-Za-z][A-Za-z0-9-]*)")
failures = []


def fail(msg):
    failures.append(msg)
    print("FAIL: " + msg)


def run(cmd, **kw):
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, **kw)


def help_options(program):
    p = run([program, "--help"])
    if p.returncode != 0:
        fail("%s --help exited with %d" % (program, p.returncode))
    return set(OPTION.findall(p.stdout)) | {"--help"}


def render(mandoc, page):
    """The page as plain text, wide enough that no option is broken."""
    p = run([mandoc, "-Tascii", "-O", "width=200", page])
    if p.returncode != 0:
        fail("mandoc cannot render %s: %s" % (page, p.stderr.strip()))
    return re.sub(r".\x08", "", p.stdout).splitlines()


def section(lines, name):
    """The lines of section NAME (a heading at column 0), without it."""
    out, inside = [], False
    for line in lines:
        if line and not line[0].isspace():
            inside = line.strip() == name
            continue
        if inside:
            out.append(line)
    if not out:
        fail("no %s section" % name)
    return out


def terms(lines):
    """Definition terms: a line at the section's indent whose next is deeper."""
    indent = lambda s: len(s) - len(s.lstrip(" "))
    out = []
    for cur, nxt in zip(lines, lines[1:]):
        if cur.strip() and nxt.strip() and indent(cur) == 7 and indent(nxt) > 7:
            out.append(cur.strip())
    return out


def lint(page, mandoc, groff):
    # scdoc puts a paragraph macro after every heading and at the end of
    # every indented block; mandoc drops them ("skipping paragraph macro"),
    # which changes nothing in the output. Every other message fails.
    p = run([mandoc, "-Tlint", "-W", "warning", page])
    msgs = [m for m in (p.stdout + p.stderr).splitlines()
            if m and "skipping paragraph macro" not in m]
    for m in msgs:
        fail("mandoc -Tlint: " + m)
    p = run([groff, "-t", "-ww", "-man", "-z", page])
    for m in (p.stdout + p.stderr).splitlines():
        fail("groff -ww: " + m)
    if p.returncode != 0:
        fail("groff exited with %d on %s" % (p.returncode, page))


def check_options(program, page, mandoc, groff):
    name = os.path.basename(program)
    in_help = help_options(program)
    in_page = set(OPTION.findall("\n".join(section(render(mandoc, page), "OPTIONS"))))
    for o in sorted(in_help - in_page):
        fail("%s --help prints %s, the OPTIONS of %s do not" % (name, o, page))
    for o in sorted(in_page - in_help):
        fail("the OPTIONS of %s name %s, %s --help does not" % (page, o, name))
    lint(page, mandoc, groff)
    print("%s: %d options in --help and in %s" % (name, len(in_help), os.path.basename(page)))


def schema_keys(program):
    """{path: (digest, reload, required, mapping, line)} as the pod map's rows say."""
    p = run([program])
    if p.returncode != 0:
        fail("%s exited with %d" % (program, p.returncode))
    keys = {}
    for line in p.stdout.splitlines():
        path, digest, reload, required, mapping, canon = line.split()
        keys[path] = (digest, reload.replace("-", " "), required == "yes", mapping == "yes",
                      None if canon == "-" else canon)
    if len(keys) < 50:
        fail("only %d keys from %s" % (len(keys), program))
    return keys


DIGEST = re.compile(r"Digest: (always|when [^.]+|never)\.")
RELOAD = re.compile(r"Reload: (fixed|applied|at start)\.")


def page_entries(lines):
    """{path: text} of the KEYS section's entries: each subsection's heading
    names the paths its keys are under ("appliance.tls (mapping)", "defaults,
    pods[] (the limits)"; "Top level", none)."""
    entries, prefixes, term, indent = {}, [""], None, lambda s: len(s) - len(s.lstrip(" "))
    for cur, nxt in zip(lines, lines[1:] + [""]):
        if cur.strip() and indent(cur) == 3:
            m = re.match(r"\s*([a-z_.\[\]]+(?:, [a-z_.\[\]]+)*)", cur)
            prefixes = [p + "." for p in m.group(1).split(", ")] if m else [""]
            term = None
        elif cur.strip() and indent(cur) == 7 and indent(nxt) > 7:
            m = re.match(r"([a-z_][a-z0-9_]*)\b", cur.strip())
            term = []
            for p in prefixes if m else []:
                path = p + m.group(1)
                if path in entries:
                    fail("two entries for key '%s'" % path)
                entries[path] = term
        elif term is not None and indent(cur) > 7:
            term.append(cur.strip())
        elif cur.strip():
            term = None
    return {k: " ".join(v) for k, v in entries.items()}


def yaml_keys(path):
    keys = set()
    for line in open(path, encoding="utf-8"):
        m = re.match(r"\s*(?:-\s+)?([A-Za-z_][A-Za-z0-9_]*):(\s|$)", line)
        if m and not line.lstrip().startswith("#"):
            keys.add(m.group(1))
    return keys


def check_podmap(page, mandoc, groff, podmap_keys, full_yaml, example_yaml, podcapd=None):
    roff = open(page, encoding="utf-8").read()
    text = render(mandoc, page)
    schema = schema_keys(podmap_keys)
    entries = page_entries(section(text, "KEYS"))
    names = {path.split(".")[-1].replace("[]", "") for path in schema}
    for k in sorted(yaml_keys(full_yaml) - names):
        fail("%s sets '%s', which is no key of the pod map" % (full_yaml, k))
    for path, (digest, reload, required, mapping, _) in sorted(schema.items()):
        key = path.split(".")[-1]
        if "\\fB%s\\fR" % key not in roff:
            fail("key '%s' is not in bold in %s" % (key, page))
        if path not in entries:
            fail("%s has no entry for key '%s'" % (page, path))
            continue
        if required and mapping:
            continue  # always there: nothing of it as a whole to change
        d, r = DIGEST.findall(entries[path]), RELOAD.findall(entries[path])
        if len(d) != 1 or d[0].split(" ")[0] != digest:
            fail("%s: the entry of '%s' says Digest: %s, its row %s" % (page, path, d, digest))
        if len(r) != 1 or r[0] != reload:
            fail("%s: the entry of '%s' says Reload: %s, its row %s" % (page, path, r, reload))
    for path in sorted(set(entries) - set(schema)):
        fail("%s defines key '%s', which the pod map does not have" % (page, path))
    canonical = {"podcap-podmap-v1", "appliance", "window_ns", "max_frame", "uplink",
                 "pod_port", "fabric_port", "pod", "gpus", "cap_bps", "burst_bytes",
                 "mode", "queue_delay_ns", "prefix"}
    canonical |= {k[4] for k in schema.values() if k[4] is not None}
    if podcapd:
        # the maps name a key and a ledger of another machine: the map alone
        p = run([podcapd, "--check-config", full_yaml, "--map-only"])
        if p.returncode != 0:
            fail("podcapd refuses %s: %s" % (full_yaml, p.stderr.strip()))
        p = run([podcapd, "--check-config", example_yaml, "--map-only", "--canonical"])
        out = p.stdout.split("configuration OK\n")[0].splitlines()
        if p.returncode != 0 or not out:
            fail("podcapd --check-config %s --canonical: %s" % (example_yaml, p.stderr.strip()))
        canonical |= {line.split(" ")[0] for line in out}
    block = "\n".join(section(text, "CANONICAL FORM AND DIGEST"))
    for k in sorted(canonical):
        if not re.search(r"^\s*%s( |$)" % re.escape(k), block, re.M):
            fail("canonical line key '%s' is not in %s" % (k, page))
    lint(page, mandoc, groff)
    print("%s: %d keys, %d canonical line keys" % (os.path.basename(page), len(schema),
                                                  len(canonical)))


def complete(bash, completion, func, words, cwd):
    """COMPREPLY of FUNC for WORDS, the last being the word completed."""
    script = ('source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); '
              'COMP_LINE="$*"; COMP_POINT=${#COMP_LINE}; %s "$1" "${@: -1}" "${@: -2:1}"; '
              'printf "%%s\\n" "${COMPREPLY[@]}"' % func)
    p = run([bash, "--norc", "--noprofile", "-c", script, "bash", os.path.abspath(completion)] + words,
            cwd=cwd)
    if p.returncode != 0:
        fail("the completion of %s failed: %s" % (" ".join(words), p.stderr.strip()))
    return set(filter(None, p.stdout.splitlines()))


def check_completion(program, bash, completion):
    name = os.path.basename(completion)
    func = "_" + name.replace("-", "_")
    longs = {o for o in help_options(program) if o.startswith("--")}
    with tempfile.TemporaryDirectory() as tmp:
        offered = complete(bash, completion, func, [name, "--"], tmp)
        for o in sorted(longs - offered):
            fail("the completion of %s does not offer %s" % (name, o))
        for o in sorted(offered - longs):
            fail("the completion of %s offers %s, which --help does not print" % (name, o))
        open(os.path.join(tmp, "podmap.yaml"), "w").close()
        os.mkdir(os.path.join(tmp, "ledger"))
        takes_file = {"--config", "--check-config", "--pod-map", "--key", "--state",
                      "--checkpoint", "--out", "--ledger"}
        for o in sorted(longs & takes_file):
            got = complete(bash, completion, func, [name, o, ""], tmp)
            want = "ledger" if o == "--ledger" else "podmap.yaml"
            if want not in got:
                fail("after %s %s, the completion offers %s, not %s" % (name, o, sorted(got), want))
    print("%s: completes %d options" % (name, len(longs)))


def main(argv):
    if len(argv) < 2:
        print(__doc__)
        return 2
    mode, args = argv[1], argv[2:]
    if mode == "options" and len(args) == 4:
        check_options(*args)
    elif mode == "podmap" and len(args) in (6, 7):
        check_podmap(*args)
    elif mode == "completion" and len(args) == 3:
        check_completion(*args)
    else:
        print(__doc__)
        return 2
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
