#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""podcap-monitor as an inspector's Prometheus and browser see it.

  monitor.py MONITOR_URL PROMETHEUS_URL OK_NAME FAILED_NAME SHOT.png

Debian's prometheus scrapes the monitor (with the shipped rules loaded):
its HTTP API returns podcap_monitor_verified 1 for OK_NAME and 0 for
FAILED_NAME, and PodcapLogFailedVerification firing for FAILED_NAME alone.
Debian's chromium renders the monitor's fleet page, served over HTTP: the
page makes no request but its own, a screenshot is taken, and the rendered
table lists the failed appliance first. Waits for each condition with a
generous timeout; exit 1 if a check failed.
"""
import json
import os
import sys
import tempfile
import time
import urllib.parse
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import browser  # noqa: E402


def get_json(url):
    try:
        with urllib.request.urlopen(url, timeout=10) as r:
            return json.loads(r.read().decode())
    except (OSError, ValueError):
        return {}


def wait_for(cond, timeout=120):
    deadline = time.time() + timeout
    while True:
        v = cond()
        if v or time.time() > deadline:
            return v
        time.sleep(0.5)


def series(prom, query):
    """{appliance: value} of an instant query."""
    q = urllib.parse.urlencode({"query": query})
    doc = get_json(f"{prom}/api/v1/query?{q}")
    return {r["metric"].get("appliance"): float(r["value"][1])
            for r in doc.get("data", {}).get("result", [])}


def main():
    mon, prom, ok_name, bad_name, shot = sys.argv[1:6]
    got = wait_for(lambda: (lambda s: s if len(s) == 2 else None)(
        series(prom, "podcap_monitor_verified")))
    browser.check(got == {ok_name: 1.0, bad_name: 0.0},
                  f"prometheus has podcap_monitor_verified from the monitor: {got}")
    firing = wait_for(lambda: [a["labels"].get("appliance") for a in get_json(
        f"{prom}/api/v1/alerts").get("data", {}).get("alerts", [])
        if a["labels"].get("alertname") == "PodcapLogFailedVerification"
        and a.get("state") == "firing"])
    browser.check(firing == [bad_name],
                  f"PodcapLogFailedVerification fires for {bad_name} alone: {firing}")
    url = mon + "/"
    with tempfile.TemporaryDirectory(prefix="podcap-browser.") as tmp:
        reqs = browser.requests_of(url, os.path.join(tmp, "p1"))
        browser.check(reqs == [url], f"the fleet page makes no request but its own: {reqs}")
        browser.chromium(["--screenshot=" + shot, "--window-size=1280,2400", url],
                         os.path.join(tmp, "p2"))
        with open(shot, "rb") as f:
            png = f.read()
        browser.check(png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 20000,
                      f"screenshot {shot} taken ({len(png)} bytes)")
        dom = browser.chromium(["--dump-dom", url], os.path.join(tmp, "p3")).stdout.decode()
    d = browser.Dom()
    d.feed(dom)
    names = [d.elems[i][1].get("data-name") for i in d.find("tr", cls="fleet-row")]
    browser.check(names == [bad_name, ok_name],
                  f"the rendered fleet table lists the failed first: {names}")
    plots = d.find("svg", cls="plot")
    browser.check(len(plots) > 0, f"each appliance's report is rendered ({len(plots)} plots)")
    print(f"monitor: {browser.failures} check(s) failed" if browser.failures
          else "monitor: all checks passed")
    sys.exit(1 if browser.failures else 0)


if __name__ == "__main__":
    main()
