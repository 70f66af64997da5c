#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The HTML report as a person sees it: rendered by Debian's chromium.

  browser.py page PAGE.html REPORT.json SHOT.png
      one appliance's page against podcap-verify --json's report of the
      same run (with --indicators);
  browser.py fleet PAGE.html FLEET.json SHOT.png
      a fleet's page against podcap-verify --fleet --json's.

Each page is loaded three times, headless: once under the DevTools
protocol (--remote-debugging-pipe), which lists every request the page
makes (the page itself must be the only one: nothing fetched), once for a
screenshot (--screenshot) and once for the DOM as rendered (--dump-dom),
which is then checked against the JSON: one plot per pod and direction,
the verdict text, the tables' numbers as a person reads them ("37.5 GB")
with every digit in the cell's tooltip ("37500000000 B"); for a fleet,
the failed appliances first. Prints one PASS or FAIL line per check; exit 1 if any failed.
"""

import html.parser
import json
import os
import subprocess
import sys
import tempfile
import time

CHROMIUM = os.environ.get("CHROMIUM", "chromium")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
         "--disable-extensions", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--metrics-recording-only",
         "--disable-default-apps", "--mute-audio"]
failures = 0


def check(ok, what):
    global failures
    print(("PASS  " if ok else "FAIL  ") + what)
    if not ok:
        failures += 1


def chromium(args, profile, timeout=90):
    return subprocess.run([CHROMIUM] + FLAGS + ["--user-data-dir=" + profile] + args,
                          stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                          timeout=timeout, check=False)


class Pipe:
    """The DevTools protocol over --remote-debugging-pipe: JSON, NUL-terminated, fds 3 and 4."""

    def __init__(self, profile):
        self.to_r, self.to_w = os.pipe()
        self.from_r, self.from_w = os.pipe()
        os.set_inheritable(self.to_r, True)
        os.set_inheritable(self.from_w, True)

        def fds():
            os.dup2(self.to_r, 3)
            os.dup2(self.from_w, 4)

        self.proc = subprocess.Popen(
            [CHROMIUM] + FLAGS + ["--user-data-dir=" + profile, "--remote-debugging-pipe",
                                  "about:blank"],
            pass_fds=(3, 4, self.to_r, self.from_w), preexec_fn=fds,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        os.close(self.to_r)
        os.close(self.from_w)
        self.buf = b""
        self.next_id = 0
        self.events = []

    def send(self, method, params=None, session=None):
        self.next_id += 1
        msg = {"id": self.next_id, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = session
        os.write(self.to_w, json.dumps(msg).encode() + b"\0")
        return self.wait_reply(self.next_id)

    def read_one(self, deadline):
        while b"\0" not in self.buf:
            if time.time() > deadline:
                raise TimeoutError("no answer from chromium")
            chunk = os.read(self.from_r, 65536)
            if not chunk:
                raise EOFError("chromium closed its pipe")
            self.buf += chunk
        raw, self.buf = self.buf.split(b"\0", 1)
        return json.loads(raw)

    def wait_reply(self, want, timeout=60):
        deadline = time.time() + timeout
        while True:
            m = self.read_one(deadline)
            if m.get("id") == want:
                if "error" in m:
                    raise RuntimeError("%s" % m["error"])
                return m.get("result", {})
            self.events.append(m)

    def wait_event(self, method, timeout=60):
        deadline = time.time() + timeout
        for i, m in enumerate(self.events):
            if m.get("method") == method:
                return self.events.pop(i)
        while True:
            m = self.read_one(deadline)
            if m.get("method") == method:
                return m
            self.events.append(m)

    def close(self):
        try:
            self.send("Browser.close")
        except (OSError, EOFError, TimeoutError, RuntimeError):
            pass
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        os.close(self.to_w)
        os.close(self.from_r)


def requests_of(url, profile):
    """Every URL the page asks for while it loads and renders, as DevTools reports them."""
    p = Pipe(profile)
    try:
        target = p.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = p.send("Target.attachToTarget", {"targetId": target,
                                                   "flatten": True})["sessionId"]
        p.send("Network.enable", session=session)
        p.send("Page.enable", session=session)
        p.send("Page.navigate", {"url": url}, session=session)
        p.wait_event("Page.loadEventFired")
        # let layout and any late fetch happen (there must be none)
        p.send("Runtime.evaluate", {"expression": "document.body.offsetHeight"},
               session=session)
        time.sleep(1)
        p.send("Runtime.evaluate", {"expression": "1"}, session=session)
        return [m["params"]["request"]["url"] for m in p.events
                if m.get("method") == "Network.requestWillBeSent"]
    finally:
        p.close()


class Dom(html.parser.HTMLParser):
    """The rendered DOM: elements with their attributes, and the text of each data-k cell."""

    def __init__(self):
        super().__init__()
        self.elems = []          # (tag, attrs, index)
        self.stack = []
        self.text = {}
        self.order = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        i = len(self.elems)
        self.elems.append((tag, a))
        self.stack.append(i)
        self.text[i] = ""

    def handle_endtag(self, tag):
        while self.stack:
            i = self.stack.pop()
            if self.elems[i][0] == tag:
                break

    def handle_data(self, data):
        for i in self.stack:
            self.text[i] += data

    def find(self, tag=None, cls=None, **attrs):
        out = []
        for i, (t, a) in enumerate(self.elems):
            if tag and t != tag:
                continue
            if cls and cls not in a.get("class", "").split():
                continue
            if any(a.get(k.replace("_", "-")) != v for k, v in attrs.items()):
                continue
            out.append(i)
        return out

    def cells(self, row, attr=None):
        """data-k -> text (or attribute attr) of the cells after element `row` up to the next row."""
        out = {}
        for i in range(row + 1, len(self.elems)):
            t, a = self.elems[i]
            if t == "tr":
                break
            if "data-k" in a:
                out[a["data-k"]] = self.text[i].strip() if attr is None else a.get(attr)
        return out

    def titles(self, row):
        """data-k -> the title (tooltip) of the cells of a row: a rounded figure's every digit."""
        return self.cells(row, "title")


def human(x, units):
    """podcap's figure for people (verify/format.c): exact below 1000, then three
    significant digits rounded half up, trailing zeros dropped, 1000 carried."""
    if x < 1000:
        return "%d %s" % (x, units[0])
    u, scale = 0, 1
    while u + 1 < len(units) and x >= scale * 1000:
        u, scale = u + 1, scale * 1000
    dec, digits = _sig3(x, scale)
    if digits >= 1000 * 10 ** dec and u + 1 < len(units):
        u, scale = u + 1, scale * 1000
        dec, digits = _sig3(x, scale)
    ip, fp = divmod(digits, 10 ** dec)
    frac = ("%0*d" % (dec, fp)).rstrip("0") if fp else ""
    return "%d%s %s" % (ip, "." + frac if frac else "", units[u])


def _sig3(x, scale):
    dec = 2 if x < 10 * scale else 1 if x < 100 * scale else 0
    return dec, (x * 10 ** dec * 2 + scale) // (2 * scale)


def human_bytes(b):
    return human(b, ["B", "kB", "MB", "GB", "TB", "PB", "EB"])


def human_rate(bps):
    return human(bps, ["bit/s", "kbit/s", "Mbit/s", "Gbit/s", "Tbit/s", "Pbit/s", "Ebit/s"])


def render(page, shot, tmp):
    url = "file://" + os.path.abspath(page)
    reqs = requests_of(url, os.path.join(tmp, "p1"))
    check(reqs == [url], "the page makes no request but its own: %s" % (reqs,))
    chromium(["--screenshot=" + shot, "--window-size=1280,2400", url], os.path.join(tmp, "p2"))
    with open(shot, "rb") as f:
        png = f.read()
    check(png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 20000,
          "screenshot %s taken (%d bytes)" % (shot, len(png)))
    dom = chromium(["--dump-dom", url], os.path.join(tmp, "p3")).stdout.decode()
    check("</html>" in dom, "chromium rendered the DOM (%d bytes)" % len(dom))
    d = Dom()
    d.feed(dom)
    return d


def check_appliance(d, rep, scope=None):
    """One appliance's article (within elements after index `scope`, when given)."""
    name = rep.get("origin")
    lines = [i for i in d.find("div", cls="line") if d.elems[i][1].get("data-k") == "result"]
    if scope is not None:
        lines = [i for i in lines if i > scope]
    check(bool(lines) and d.text[lines[0]].strip() == rep["result"],
          "%s: the verdict reads %r" % (name, rep["result"][:60]))
    for p in rep["pods"]:
        plots = d.find("svg", cls="plot", data_pod=p["pod"], data_dir=p["dir"])
        if scope is not None:
            plots = [i for i in plots if i > scope]
            plots = plots[:1] if plots else []
        check(len(plots) == 1, "%s: one plot of pod %s %s" % (name, p["pod"], p["dir"]))
        rows = [i for i in d.find("tr", cls="pod-row", data_pod=p["pod"], data_dir=p["dir"])
                if scope is None or i > scope]
        c = d.cells(rows[0]) if rows else {}
        t = d.titles(rows[0]) if rows else {}
        want = {k: str(p[k]) for k in ("windows", "frames", "windows_at_cap")}
        got = {k: c.get(k) for k in want}
        check(got == want, "%s: pod %s %s table equals the JSON: %s" % (name, p["pod"],
                                                                         p["dir"], got))
        # what a person reads: bytes rounded, every digit in the cell's tooltip
        for k in ("bytes", "peak_bytes"):
            shown = (c.get(k), t.get(k))
            check(shown == (human_bytes(p[k]), "%d B" % p[k]),
                  "%s: pod %s %s %s reads %r, its title %r (the JSON's %d)" % (
                      name, p["pod"], p["dir"], k, shown[0], shown[1], p[k]))
        if p.get("peak_permille") is not None:
            pm = p["peak_permille"]
            check(c.get("peak_permille") == "%d.%d %%" % divmod(pm, 10),
                  "%s: pod %s %s peak reads %r of the cap (the JSON's %d per mille)" % (
                      name, p["pod"], p["dir"], c.get("peak_permille"), pm))
    if scope is None:
        check(len(d.find("svg", cls="plot")) == len(rep["pods"]),
              "%d plots, one per pod and direction" % len(rep["pods"]))
    ind = rep.get("indicators")
    if ind is not None and scope is None:
        for p in ind["pods"]:
            for dr in ("up", "down"):
                rows = d.find("tr", cls="ind-row", data_pod=p["pod"], data_dir=dr)
                c = d.cells(rows[0]) if rows else {}
                t = d.titles(rows[0]) if rows else {}
                bps = p[dr]["peak_bps"]
                want = {"windows_near_cap": str(p[dr]["windows_near_cap"]),
                        "longest_near_cap_run": str(p[dr]["longest_near_cap_run"]),
                        "peak_bps": human_rate(bps), "peak_bps title": "%d bit/s" % bps}
                got = {k: c.get(k) for k in want}
                got["peak_bps title"] = t.get("peak_bps")
                check(got == want, "indicators of %s %s equal the JSON's: %s" % (
                    p["pod"], dr, got))
            rows = d.find("tr", cls="exfil-row", data_pod=p["pod"])
            c = d.cells(rows[0]) if rows else {}
            t = d.titles(rows[0]) if rows else {}
            b = p["exfiltration"]["bound_bytes"]
            k = "exfiltration.bound_bytes"
            check((c.get(k), t.get(k)) == (human_bytes(b), "%d B" % b),
                  "exfiltration bound of %s reads %r, title %r: the JSON's %s" % (
                      p["pod"], c.get(k), t.get(k), b))


def main():
    mode, page, report, shot = sys.argv[1:5]
    with open(report) as f:
        rep = json.load(f)
    with tempfile.TemporaryDirectory(prefix="podcap-browser.") as tmp:
        d = render(page, shot, tmp)
    if mode == "page":
        check_appliance(d, rep)
    else:
        rows = d.find("tr", cls="fleet-row")
        names = [d.elems[i][1].get("data-name") for i in rows]
        want = [a["name"] for a in rep["appliances"]]
        check(names == want, "the fleet table lists %s, the JSON's order" % names)
        failed = [a["name"] for a in rep["appliances"] if a["status"] != "verified"]
        check(bool(failed) and names[:len(failed)] == failed,
              "the failed appliances %s come first" % failed)
        sections = d.find("section", cls="fleet-appliance")
        check([d.elems[i][1].get("data-name") for i in sections] == want,
              "each appliance's page follows, in that order")
        for i, a in zip(sections, rep["appliances"]):
            if a["report"] is not None:
                check_appliance(d, a["report"], scope=i)
    print("%s: %d check(s) failed" % (mode, failures) if failures else "%s: all checks passed" % mode)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
