#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The layout of src/, held where a compiler does not hold it:

    tests/layout/check.py SRC      SRC is the checkout's src/; exit 1 and
                                   say why when a rule below is broken

1. No .c file under src/ is longer than 800 lines: a file that grows past
   that is more than one concern, and is split along them.

2. The files of src/verify include each other without a cycle: a check
   includes the files below it (finding.h, format.h, lines.h, print.h,
   check.h, verify_impl.h and the headers of the checks it reads), never
   anything that includes it back; and only the reports' own files
   (report.c, json.c, html.c) include report.h: a check's part of a report
   is its own, and it calls no report.

3. A library folder of src/ includes the headers of its own folder and of
   the folders below it, never of one above. The folders, lowest first, as
   the code has them:

       base                       includes nothing of src/
       discipline                 base (the clock discipline's readings)
       shape, log                 base; log also shape (a record carries
                                  src/shape's counters); both
                                  podmap/config.h and no other podmap header
                                  (the pod map's types, which their values
                                  are of)
       podmap                     base, shape, log
       verify                     podmap and below
       http                       verify and below
       tpm                        http and below
       witness                    tpm and below
       daemon                     witness and below, but never verify
                                  (podcapd does not link the verifier)
       cmd                        any (the programs: one folder each)

   A header is named from src/ ("log/record.h"), or, in its own folder, by
   its name alone ("verify.h"). A folder of src/ that is not in this list
   fails the test until it is placed in it.
"""
import os
import re
import sys

MAX_LINES = 800

LEVEL = {"base": 0, "discipline": 1, "shape": 1, "log": 1, "podmap": 2, "verify": 3, "http": 4, "tpm": 5,
         "witness": 6, "daemon": 7, "cmd": 8}

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def allowed(folder, target, header):
    """Whether a file of src/FOLDER may include src/TARGET/HEADER."""
    if folder == target or folder == "cmd":
        return True
    if folder == "daemon" and target == "verify":
        return False
    if folder in ("shape", "log") and target == "podmap":
        return header == "config.h"
    if folder == "log" and target == "shape":
        return True
    return LEVEL[target] < LEVEL[folder]


def files(src):
    for d, _, names in os.walk(src):
        for n in sorted(names):
            if n.endswith((".c", ".h")):
                yield os.path.join(d, n)


def includes(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        return INCLUDE.findall(f.read())


def long_files(src):
    for p in files(src):
        if p.endswith(".c"):
            with open(p, encoding="utf-8", errors="replace") as f:
                n = sum(1 for _ in f)
            if n > MAX_LINES:
                yield "%s: %d lines, more than %d" % (os.path.relpath(p, src), n, MAX_LINES)


def resolve(src, path, name):
    """The file an include names: in the including file's folder, else from src/."""
    here = os.path.join(os.path.dirname(path), name)
    if os.path.exists(here):
        return os.path.normpath(here)
    there = os.path.join(src, name)
    return os.path.normpath(there) if os.path.exists(there) else None


def verify_cycle(src):
    """A cycle among src/verify's includes, as a list of files, or None."""
    top = os.path.join(src, "verify")
    graph = {}
    for p in files(top):
        graph[p] = [q for q in (resolve(src, p, n) for n in includes(p))
                    if q is not None and os.path.dirname(q) == top]
    state, stack = {}, []

    def visit(p):
        state[p] = 1
        stack.append(p)
        for q in graph.get(p, ()):
            if state.get(q) == 1:
                return stack[stack.index(q):] + [q]
            if q not in state:
                found = visit(q)
                if found:
                    return found
        stack.pop()
        state[p] = 2
        return None

    for p in sorted(graph):
        if p not in state:
            found = visit(p)
            if found:
                return [os.path.relpath(x, src) for x in found]
    return None


REPORTS = ("report.c", "json.c", "html.c")


def report_includers(src):
    top = os.path.join(src, "verify")
    for p in files(top):
        if os.path.basename(p) in REPORTS:
            continue
        if any(resolve(src, p, n) == os.path.join(top, "report.h") for n in includes(p)):
            yield "%s: includes verify/report.h, which only the reports include" % (
                os.path.relpath(p, src))


def upward(src):
    for p in files(src):
        rel = os.path.relpath(p, src)
        folder = rel.split(os.sep)[0]
        if folder not in LEVEL:
            yield "%s: in src/%s, a folder the rules do not name" % (rel, folder)
            continue
        for name in includes(p):
            q = resolve(src, p, name)
            if q is None:
                continue  # a system header, or one the build generates
            target = os.path.relpath(q, src).split(os.sep)[0]
            if target in LEVEL and not allowed(folder, target, os.path.basename(q)):
                yield "%s: includes %s, which src/%s may not: %s" % (
                    rel, os.path.relpath(q, src), folder,
                    "podcapd does not link the verifier" if target == "verify" and
                    folder == "daemon" else "src/%s is not below it" % target)


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: tests/layout/check.py SRC")
    src = os.path.abspath(sys.argv[1])
    bad = list(long_files(src))
    cycle = verify_cycle(src)
    if cycle:
        bad.append("src/verify includes in a cycle: " + " -> ".join(cycle))
    bad += list(report_includers(src))
    bad += list(upward(src))
    for b in bad:
        print("layout: " + b)
    if bad:
        sys.exit(1)
    print("layout: every .c at most %d lines, src/verify's includes without a cycle and "
          "report.h the reports' alone, no folder including one above it" % MAX_LINES)


if __name__ == "__main__":
    main()
