#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The shipped alert rules and dashboards: promtool accepts the rules,
their unit tests pass, and every alert has a test in which it fires and
one in which it stays silent (an alert nobody tested firing could be one
that never fires); every expression of a Grafana dashboard is PromQL that
promtool parses, once Grafana's variables are given values. That every
metric they name is one podcapd exports is checked against a running
podcapd by tests/integration/test_metrics.py.

    check.py PROMTOOL RULES_DIR TESTS_DIR DASHBOARD_DIR
"""
import json
import os
import re
import subprocess
import sys
import tempfile

# Grafana's variables, as a query of the dashboard would have them
GRAFANA_VARS = {"$__rate_interval": "5m", "$__range": "6h", "$__interval": "1m",
                "$instance": ".*", "$pod": ".*"}


def alerts_of(path):
    return re.findall(r"^\s*- alert: (\w+)\s*$", open(path).read(), re.M)


def tested(path):
    """alertname -> (fired in some test, silent in some test)."""
    seen = {}
    name = None
    for line in open(path):
        m = re.match(r"\s*alertname: (\w+)", line)
        if m:
            name = m.group(1)
            fired, silent = seen.get(name, (False, False))
            seen[name] = (fired, silent)
            continue
        if name and re.match(r"\s*exp_alerts: \[\]", line):
            seen[name] = (seen[name][0], True)
        elif name and re.match(r"\s*- exp_labels:", line):
            seen[name] = (True, seen[name][1])
    return seen


def dashboard_exprs(path):
    """Every target expression of a dashboard's panels, rows' panels included."""
    def walk(panels):
        for p in panels:
            yield from (t["expr"] for t in p.get("targets", []) if "expr" in t)
            yield from walk(p.get("panels", []))
    return list(walk(json.load(open(path))["panels"]))


def check_dashboard(promtool, path):
    """promtool check rules on a rule file with one recording rule per expression."""
    exprs = dashboard_exprs(path)
    with tempfile.NamedTemporaryFile("w", suffix=".yml") as f:
        rules = []
        for i, e in enumerate(exprs):
            for k, v in GRAFANA_VARS.items():
                e = e.replace(k, v)
            rules.append({"record": f"dashboard:expr{i}", "expr": e})
        json.dump({"groups": [{"name": os.path.basename(path), "rules": rules}]}, f)
        f.flush()
        r = subprocess.run([promtool, "check", "rules", f.name], capture_output=True, text=True)
    ok = r.returncode == 0 and len(exprs) > 0
    print(f"{'ok' if ok else 'FAIL'}: {os.path.basename(path)}: {len(exprs)} expressions parse")
    if not ok:
        print(r.stdout + r.stderr)
    return 0 if ok else 1


def main():
    promtool, rules_dir, tests_dir, dash_dir = sys.argv[1:5]
    if not os.access(promtool, os.X_OK):
        print(f"SKIP: no promtool at {promtool} (Debian's prometheus package; tools/setup installs it)")
        return 77
    failures = 0
    for rules in sorted(f for f in os.listdir(rules_dir) if f.endswith(".rules.yml")):
        rpath = os.path.abspath(os.path.join(rules_dir, rules))
        tpath = os.path.abspath(os.path.join(tests_dir, rules.replace(".rules.yml", ".test.yml")))
        for cmd in ([promtool, "check", "rules", rpath], [promtool, "test", "rules", tpath]):
            # the tests name their rule files relative to themselves
            r = subprocess.run(cmd, capture_output=True, text=True, cwd=os.path.dirname(tpath))
            ok = r.returncode == 0
            failures += not ok
            print(f"{'ok' if ok else 'FAIL'}: {' '.join(cmd[1:])}")
            if not ok:
                print(r.stdout + r.stderr)
        seen = tested(tpath)
        for a in alerts_of(rpath):
            fired, silent = seen.get(a, (False, False))
            if not (fired and silent):
                failures += 1
                print(f"FAIL: {rules}: alert {a} has no test in which it "
                      f"{'fires' if not fired else 'stays silent'}")
        print(f"{rules}: {len(alerts_of(rpath))} alerts")
    for dash in sorted(f for f in os.listdir(dash_dir) if f.endswith(".json")):
        failures += check_dashboard(promtool, os.path.join(dash_dir, dash))
    print(f"{'0 failed' if failures == 0 else f'{failures} failed'}")
    return 1 if failures else 0


sys.exit(main())
