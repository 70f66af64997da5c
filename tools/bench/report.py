#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Reports of tools/bench/run and its sections (standard library only).

A section records raw measurements as JSON objects, one per line
(bench_sample in lib.sh); the section's command here turns them into the
section's report, the JSON every section writes:

  {"section": "...", "columns": [...], "rows": [[...], ...],
   "targets": [{"what", "measured", "target", "met"}, ...],
   "notes": ["..."], "commands": ["..."]}

Commands:
  sample KEY=VALUE...            one raw measurement as a JSON line
  sample-links DEV... [--interval S]
                                 "<unix time> <tx bytes of DEV>..." every S
                                 seconds until SIGTERM
  cap-accuracy | latency | verify-speed --samples F --commands F --out F
                                 [--quick] [--param K=V ...]
  endpoint-tls --samples F --commands F --out F [--quick]
  tap-power --samples F --commands F --out F [--quick]
  monitor-fleet --samples F --commands F --out F [--quick]
  table --runs F                 the one table of a run (tools/bench/run)
  doc --runs F --machine F --out F [--merge]
                                 docs/performance.md (--merge: only the
                                 sections run replaced in it)
"""

import argparse
import json
import math
import os
import re
import signal
import statistics
import sys
import time


def load_samples(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def load_lines(path):
    try:
        with open(path) as f:
            return [line.rstrip("\n") for line in f if line.strip()]
    except OSError:
        return []


def number(v):
    try:
        return int(v)
    except ValueError:
        try:
            return float(v)
        except ValueError:
            return v


def cmd_sample(args):
    d = {}
    for kv in args.kv:
        k, v = kv.split("=", 1)
        d[k] = number(v)
    print(json.dumps(d, sort_keys=True))


def cmd_sample_links(args):
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
    while not stop:
        t = time.time()
        tx = {}
        with open("/proc/net/dev") as f:
            for line in f.readlines()[2:]:
                name, rest = line.split(":", 1)
                tx[name.strip()] = int(rest.split()[8])
        print("%.6f %s" % (t, " ".join(str(tx.get(d, 0)) for d in args.dev)), flush=True)
        time.sleep(args.interval)


def write_section(args, doc):
    doc["commands"] = list(dict.fromkeys(load_lines(args.commands)))
    doc["quick"] = bool(args.quick)
    doc["params"] = dict(kv.split("=", 1) for kv in args.param)
    with open(args.out, "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")


def fmt(x, digits=3):
    if x is None:
        return "-"
    if isinstance(x, float):
        return "%.*f" % (digits, x)
    return str(x)


# ---- cap-accuracy ----

def read_links(path):
    rows = []
    with open(path) as f:
        for line in f:
            v = line.split()
            if len(v) >= 3:
                rows.append((float(v[0]), int(v[1]), int(v[2])))
    return rows


def envelope(rows, col, t0, t1, rate, burst, span=1.0):
    """From counter samples in [t0, t1]: the most bytes by which any interval
    between two samples exceeded burst + rate x T, and the most bytes over
    any interval of about span seconds (the sample pair closest to it)."""
    pts = [(t, r[col]) for r in rows for t in [r[0]] if t0 <= t <= t1]
    if len(pts) < 2:
        return None, None
    worst = -math.inf
    low = math.inf  # the smallest bytes - rate x t of an earlier sample
    for t, b in pts:
        if low != math.inf:
            worst = max(worst, b - rate * t - low)
        low = min(low, b - rate * t)
    best = 0
    j = 0
    for i in range(len(pts)):
        while j < len(pts) and pts[j][0] - pts[i][0] < span - 0.05:
            j += 1
        if j < len(pts):
            dt = pts[j][0] - pts[i][0]
            best = max(best, (pts[j][1] - pts[i][1]) * span / dt)
    return worst - burst, best


def cmd_cap_accuracy(args):
    s = load_samples(args.samples)
    runs = [x for x in s if "goodput_bps" in x]
    ledgers = {x["cap_mbps"]: x for x in s if x.get("metric") == "ledger"}
    rows, targets, notes = [], [], []
    caps = sorted({x["cap_mbps"] for x in runs})
    worst_ledger = 0
    for cap in caps:
        rate = cap * 1e6 / 8
        led = ledgers.get(cap, {})
        burst = led.get("burst_bytes", int(rate / 10))
        vdoc = {}
        if led.get("verify"):
            try:
                with open(led["verify"]) as f:
                    vdoc = json.load(f)
            except (OSError, ValueError):
                vdoc = {}
        fails = vdoc.get("failures", [])
        env_fails = [f for f in fails if f.get("check") == "envelope"]
        ledger_excess = {"up": 0, "down": 0}
        for f in env_fails:
            # "pod P DIR: ... exceed burst B bytes + cap C bit/s x T by N bytes (...)"
            m = re.search(r"^pod \S+ (up|down): .* by (\d+) bytes", f.get("message", ""))
            for d in ([m.group(1)] if m else ["up", "down"]):
                ledger_excess[d] = max(ledger_excess[d], int(m.group(2)) if m else 1)
        if env_fails:
            notes.append("%d Mbit/s: podcap-verify reports envelope failures: %s"
                         % (cap, "; ".join(f.get("message", "?") for f in env_fails)))
        other = [f for f in fails if f.get("check") != "envelope"]
        if other or not vdoc.get("ok", False):
            notes.append("%d Mbit/s: podcap-verify did not accept the ledger (status %s): %s"
                         % (cap, led.get("verify_status"),
                            "; ".join(f.get("message", "?") for f in other) or vdoc.get("result", "no report")))
        worst_ledger = max(worst_ledger, max(ledger_excess.values())
                           if vdoc.get("ok") or env_fails else 1)
        for d in ("up", "down"):
            got = {x["peer"]: x for x in runs if x["cap_mbps"] == cap and x["dir"] == d}
            p, t, o = got.get("podcapd"), got.get("tc"), got.get("ovs")
            gp = p["goodput_bps"] / (cap * 1e6) if p else None
            gt = t["goodput_bps"] / (cap * 1e6) if t else None
            go = o["goodput_bps"] / (cap * 1e6) if o else None
            col = 2 if d == "up" else 1  # up leaves through vfab0, down through vpod0
            pe = te = pw = tw = oe = ow = None
            if p:
                pe, pw = envelope(read_links(p["links"]), col, p["t0"], p["t1"], rate, burst)
            if t:
                te, tw = envelope(read_links(t["links"]), col, t["t0"], t["t1"], rate, burst)
            if o:
                oe, ow = envelope(read_links(o["links"]), col, o["t0"], o["t1"], rate, burst)
            peak = None
            for pod in vdoc.get("pods", []):
                if pod.get("dir") == d and pod.get("peak_permille") is not None:
                    peak = pod["peak_permille"] / 1000
            ratio = gp / gt if gp is not None and gt else None
            rows.append(["%d Mbit/s" % cap, d, fmt(gp), fmt(gt), fmt(go), fmt(ratio),
                         fmt(ledger_excess[d] if vdoc else None, 0), fmt(peak),
                         fmt(pe, 0), fmt(te, 0), fmt(oe, 0),
                         fmt(pw / rate if pw else None), fmt(tw / rate if tw else None),
                         fmt(ow / rate if ow else None),
                         fmt(max(p.get("wait_frac", 0) * 100, 0), 1) if p else "-"])
            targets.append({
                "what": "goodput/cap podcapd / tc tbf, %d Mbit/s %s" % (cap, d),
                "measured": round(ratio, 4) if ratio is not None else None,
                "target": ">= 1 (to 0.1 %)",
                "met": ratio is not None and ratio >= 0.999,
            })
    targets.append({
        "what": "envelope violation in podcapd's signed ledger (bytes, worst over all caps)",
        "measured": worst_ledger,
        "target": "= 0",
        "met": worst_ledger == 0 and bool(ledgers),
    })
    for x in s:
        if x.get("peer") == "ovs" and x.get("metric") == "not-run":
            notes.append("%s Mbit/s: OVS-DPDK could not run as a peer: %s"
                         % (x.get("cap_mbps"), x.get("reason", "?")))
    ceil = {x["dir"]: x for x in s if "ceiling_bps" in x}
    if ceil:
        notes.append("podcapd uncapped (cap 100 Gbit/s, police) on this testbed in the same run: "
                     + ", ".join("%s %.0f Mbit/s (core wait %.0f %%)"
                                 % (d, ceil[d]["ceiling_bps"] / 1e6, ceil[d].get("wait_frac", 0) * 100)
                                 for d in ("up", "down") if d in ceil)
                     + ": a cap above that cannot be reached, by any enforcer in the same place.")
    tsc = [x.get("tsc_hz") for x in ledgers.values() if x.get("tsc_hz")]
    notes += [
        "goodput: iperf3's receiver figure over the run less its first second, divided by the "
        "cap; TCP over 1500-byte frames carries at most 1448/1514 = 0.956 of the frame bytes "
        "both enforcers count.",
        "podcapd and tc get the same bucket: 100 ms at the cap (podcapd burst: 100ms, shape, "
        "queue_delay 50ms; tc tbf burst of the same bytes, latency 50ms on each bridge port's "
        "egress).",
        "ledger excess: the most bytes by which any run of podcapd's 1 s windows in its signed "
        "ledger exceeds burst + cap x T, as podcap-verify --json computes it (0: no envelope "
        "failure); largest window: podcap-verify's peak 1 s window / (cap x 1 s).",
        "counter excess: the same quantity from the veths' transmit counters sampled every "
        "100 ms during the run (negative: headroom left); largest 1 s likewise. Frame bytes "
        "without FCS for both.",
        "OVS meter: OVS-DPDK (Debian's ovs-vswitchd-dpdk, one PMD on CPU 1) between the same "
        "veths as af_packet dpdk ports, each direction through an OpenFlow 1.3 meter with a "
        "drop band at the cap and burst_size 100 ms at the cap (kbits); '-' when not installed "
        "or when it could not run (a note then says why). A meter polices: its drop band has "
        "no queue, so TCP meets every excess as a loss and backs off, where podcapd's shape "
        "mode and tc tbf queue up to 50 ms; a meter's goodput/cap measures that difference, "
        "not the meter's arithmetic (its counter columns show what it let through).",
        "podcapd/tc target: met when podcapd's goodput is at least 0.999 of tc's (the "
        "resolution of iperf3's rate over a few seconds).",
        "core wait: the time podcapd's polling thread was runnable but waiting for its core; "
        "above 5 % the run measured the machine's other work too.",
    ]
    if tsc:
        notes.append("podcapd's buckets counted the TSC at %s Hz (measured at start)."
                     % "/".join(str(x) for x in tsc))
    write_section(args, {
        "section": "Cap accuracy on real TCP",
        "columns": ["cap", "dir", "podcapd goodput/cap", "tc goodput/cap",
                    "OVS meter goodput/cap", "podcapd/tc",
                    "ledger excess B", "podcapd largest 1 s window/cap",
                    "podcapd counter excess B", "tc counter excess B", "OVS counter excess B",
                    "podcapd max 1 s/cap (counters)", "tc max 1 s/cap (counters)",
                    "OVS max 1 s/cap (counters)",
                    "core wait %"],
        "rows": rows, "targets": targets, "notes": notes,
    })


# ---- latency ----

def percentile(v, q):
    v = sorted(v)
    if not v:
        return None
    return v[max(0, math.ceil(q * len(v)) - 1)]


def cmd_latency(args):
    s = load_samples(args.samples)
    pings = [x for x in s if "rtts" in x]
    peers = ["podcapd", "testpmd", "bridge"]
    rtt = {p: [] for p in peers}
    sent = {p: 0 for p in peers}
    wait = {p: 0.0 for p in peers}
    for x in pings:
        with open(x["rtts"]) as f:
            rtt[x["peer"]] += [float(line) for line in f if line.strip()]
        sent[x["peer"]] += x["sent"]
        wait[x["peer"]] = max(wait[x["peer"]], x.get("wait_frac", 0))
    p50 = {p: percentile(rtt[p], 0.5) for p in peers}
    p99 = {p: percentile(rtt[p], 0.99) for p in peers}
    rows = []
    for p in peers:
        added = p99[p] - p99["bridge"] if p99[p] is not None and p99["bridge"] is not None else None
        rows.append([p, "%d/%d" % (len(rtt[p]), sent[p]), fmt(p50[p]), fmt(p99[p]),
                     fmt(added), fmt(wait[p] * 100, 1) if p != "bridge" else "-"])
    targets = []
    if p99["podcapd"] is not None and p99["testpmd"]:
        # the ratio of the two p99s themselves: a difference over the
        # bridge's own p99, which is noisy, can come out negative
        ratio = p99["podcapd"] / p99["testpmd"]
        targets.append({
            "what": "p99 RTT through podcapd / through testpmd",
            "measured": round(ratio, 3),
            "target": "<= 1.5",
            "met": ratio <= 1.5,
        })
    lost = {p: sent[p] - len(rtt[p]) for p in peers}
    targets.append({
        "what": "pings lost through podcapd",
        "measured": lost["podcapd"],
        "target": "= 0",
        "met": lost["podcapd"] == 0 and sent["podcapd"] > 0,
    })
    exits = [x for x in s if x.get("metric") == "exit"]
    notes = [
        "RTT of ICMP echo from the pod host to the fabric host, 10 ms apart, through an idle "
        "forwarder; p50 and p99 over all of a forwarder's pings (nearest rank).",
        "Target: podcapd's p99 over testpmd's p99, both of this run on the same af_packet "
        "ports, at most 1.5: podcapd's classification, lookup, bucket and counters may add "
        "at most half again what a bare DPDK io-forward takes. 'p99 - bridge p99' is shown "
        "for reference only: the bridge's own p99 is noisy enough to make it negative.",
        "podcapd: one pod, cap 100 Gbit/s, police: every frame is classified, metered and "
        "counted, none is held.",
        "podcapd exit status on SIGTERM: %s." % (", ".join(str(x["status"]) for x in exits) or "-"),
    ]
    write_section(args, {
        "section": "Latency through an idle forwarder",
        "columns": ["forwarder", "replies", "p50 ms", "p99 ms", "p99 - bridge p99 ms",
                    "core wait % (max)"],
        "rows": rows, "targets": targets, "notes": notes,
    })


# ---- verify-speed ----

def cmd_verify_speed(args):
    s = load_samples(args.samples)
    led = next(x for x in s if x.get("metric") == "ledger")

    def runs(prefix):
        out = []
        for x in s:
            if str(x.get("metric", "")).startswith(prefix + "-"):
                with open(x["report"]) as f:
                    rep = json.load(f)
                out.append((x, rep))
        return out

    full = runs("full")
    inc = runs("incremental")
    noteonly = runs("noteonly")
    sig = []
    for x in s:
        if x.get("metric") == "sigrate":
            with open(x["report"]) as f:
                sig.append(json.load(f))
    for x, rep in full + inc + noteonly:
        if not rep.get("ok") or rep.get("records") != led["records"]:
            raise SystemExit("verify-speed: %s did not verify all %d records: %s"
                             % (x["metric"], led["records"], rep.get("result")))
    for x, rep in inc:
        if rep.get("resumed_from") != led["note_at"]:
            raise SystemExit("verify-speed: %s did not resume at record %d: %s"
                             % (x["metric"], led["note_at"], rep.get("resumed_from")))
    cpu = lambda x: x["user_s"] + x["sys_s"]
    best_full = min(full, key=lambda r: cpu(r[0]))[0]
    best_inc = min(inc, key=lambda r: cpu(r[0]))[0]
    best_note = min(noteonly, key=lambda r: cpu(r[0]))[0] if noteonly else None
    raw = max(x["verify_per_cpu_s"] for x in sig)
    raw_wall = max(x["verify_per_s"] for x in sig)
    sha = max(x["sha256_bytes_per_cpu_s"] for x in sig)
    # podcap-verify hashes with libcrypto's SHA-256 when it is built with it
    sha_ossl = max((x.get("sha256_libcrypto_bytes_per_cpu_s", 0) for x in sig), default=0)
    sha_used = sha_ossl or sha
    n = led["records"]
    rps = n / cpu(best_full)
    rps_wall = n / min(r[0]["wall_s"] for r in full)
    day = n - led["note_at"]
    rec_bytes = led["bytes"] / n
    rows = [
        ["log", "%d records (%d windows x %d pods), %.1f MB, %.0f B a record; written in %.1f s"
         % (n, led["windows"], led["pods"], led["bytes"] / 1e6, rec_bytes, led["gen_s"])],
        ["full verification", "%.2f s CPU (%.2f s user, %.2f s system), %.2f s wall"
         % (cpu(best_full), best_full["user_s"], best_full["sys_s"], best_full["wall_s"])],
        ["  records/s", "%.0f per CPU second, %.0f per wall second" % (rps, rps_wall)],
        ["  signatures/s", "%.3f per CPU second (one checkpoint signature for all %d records)"
         % (1 / cpu(best_full), n)],
        ["  log bytes/s", "%.1f MB per CPU second" % (led["bytes"] / cpu(best_full) / 1e6)],
        ["incremental pull of %d windows (--state)" % day,
         "%.2f s CPU (%.2f s user, %.2f s system), %.2f s wall"
         % (cpu(best_inc), best_inc["user_s"], best_inc["sys_s"], best_inc["wall_s"])],
        ["  full / incremental", "%s (CPU time), %.1f x (wall time)"
         % ("%.1f x" % (cpu(best_full) / cpu(best_inc)) if cpu(best_inc) > 0 else
            "> %.0f x (under one 10 ms tick)" % (cpu(best_full) / 0.01),
            best_full["wall_s"] / max(best_inc["wall_s"], 0.0001))],
        ["same pull, checkpoint-only state", "%.2f s CPU, %.2f s wall (every record again)"
         % (cpu(best_note), best_note["wall_s"]) if best_note else "not measured"],
        ["raw crypto_sign_verify_detached", "%.0f per CPU second, %.0f per wall second (libsodium %s)"
         % (raw, raw_wall, sig[0].get("libsodium"))],
        ["raw SHA-256 (libsodium) of %d B" % sig[0]["sha256_message_bytes"],
         "%.1f MB per CPU second" % (sha / 1e6)],
        ["raw SHA-256 (libcrypto, which podcap-verify hashes with) of %d B"
         % sig[0]["sha256_message_bytes"],
         "%.1f MB per CPU second, %.2f x libsodium's" % (sha_ossl / 1e6, sha_ossl / sha)
         if sha_ossl else "not built (no libcrypto)"],
        ["records/s / raw signature checks/s", "%.3f (CPU time), %.3f (wall time)"
         % (rps / raw, rps_wall / raw_wall)],
        ["SHA-256 of the log alone / full verification", "%.3f (CPU time)"
         % ((led["bytes"] / sha_used) / cpu(best_full))],
    ]
    targets = [{
        "what": "records/s of podcap-verify / raw signature checks/s (per CPU second)",
        "measured": round(rps / raw, 3),
        "target": ">= 0.8",
        "met": rps / raw >= 0.8,
    }]
    notes = [
        "podcap's log signs checkpoints, not records: one Ed25519 signature covers the Merkle "
        "root of every record before it, so a verification checks one signature and then "
        "hashes (SHA-256 leaf hash), decodes and accounts (sequence, envelope per pod and "
        "direction) every record. The target compares the cost of a record with the cost of "
        "checking one signature: records/s >= 0.8 x raw signature checks/s.",
        "Rates are per second of CPU time on both sides (podcap-verify's user + system time, "
        "podcap-bench-sigrate's CLOCK_PROCESS_CPUTIME_ID): both are single-threaded, and on "
        "a shared machine the wall time also counts the time each waited for a core. The "
        "wall-time figures are listed too. podcap-verify's time is its whole run over the "
        "ledger directory, warm page cache (the log was just written); the best of %d run(s)."
        % len(full),
        "SHA-256 (RFC 6962 leaf hashes) was most of a verification with libsodium's portable "
        "implementation; podcap-verify now hashes with libcrypto's (already in its process "
        "through libcurl, and using the CPU's SHA extensions) once it has checked that both "
        "give the same bytes (src/log/sha256_libcrypto.c, tests/unit/test_sha256.c). The last "
        "row is the share of the CPU time that hashing the log's bytes alone takes, at "
        "libcrypto's rate. A reader used to hash every record twice (once opening the ledger, once "
        "verifying); it now hashes it once.",
        "incremental: podcap-verify --state with the state it saved at the log's checkpoint "
        "one day earlier (written, untimed, by podcap-verify --checkpoint). The state keeps "
        "the Merkle tree's right edge at that size and what the record checks carry over "
        "(cursor, pods in force, each pod's envelope run and totals), so the verifier reads, "
        "hashes and checks only the day's records, folds their leaf hashes into the edge and "
        "compares the root with the signed one; its cost is proportional to the day, plus "
        "reading and writing the state (CPU times are in 10 ms ticks). The checkpoint-only "
        "row is the same pull from a state that holds only the signed checkpoint (the older "
        "format): it re-reads and re-hashes every record from 0.",
    ]
    write_section(args, {
        "section": "Verifier speed",
        "columns": ["measure", "value"],
        "rows": rows, "targets": targets, "notes": notes,
    })


# ---- verify-fleet ----

def cmd_verify_fleet(args):
    s = load_samples(args.samples)
    setup = next(x for x in s if x.get("metric") == "setup")
    n, records = setup["appliances"], setup["records"]
    wall = {x["metric"]: x["wall_s"] for x in s if "wall_s" in x}

    # every run must have verified every appliance, each in full or from its state
    with open(next(x for x in s if x.get("metric") == "fleet")["report"]) as f:
        fleet = json.load(f)
    with open(next(x for x in s if x.get("metric") == "resumed")["report"]) as f:
        resumed = json.load(f)
    for name, doc, want_from in (("fleet", fleet, 0),
                                 ("resumed", resumed, records - setup["back"])):
        if not doc.get("ok") or doc.get("appliances_total") != n:
            raise SystemExit("verify-fleet: %s did not verify all %d appliances" % (name, n))
        for a in doc["appliances"]:
            rep = a["report"]
            if rep is None or rep.get("records") != records or \
                    rep.get("resumed_from") != want_from:
                raise SystemExit("verify-fleet: %s: appliance %s: %s" % (
                    name, a["name"], "no report" if rep is None else
                    "records %s, resumed from %s" % (rep.get("records"),
                                                     rep.get("resumed_from"))))
    total = n * records
    speedup = wall["sequential"] / wall["fleet"] if wall["fleet"] > 0 else None
    rows = [
        ["appliances x records (1 START + windows of 60 s, %d pods)" % setup["pods"],
         "%d x %d" % (n, records)],
        ["sequential: one podcap-verify --url after another (s)", fmt(wall["sequential"])],
        ["fleet: podcap-verify --fleet, jobs %d, no state (s)" % setup["jobs"], fmt(wall["fleet"])],
        ["fleet: records/s", fmt(total / wall["fleet"]) if wall["fleet"] > 0 else "-"],
        ["resumed: the same, from states %d windows old (s)" % setup["back"],
         fmt(wall["resumed"])],
        ["fleet speed-up over sequential", fmt(speedup)],
    ]
    targets = [{
        "what": "fleet speed-up over one appliance after another",
        "measured": speedup, "target": ">= 1.0", "met": speedup is not None and speedup >= 1.0,
    }]
    notes = [
        "Every appliance is served by podcap-bench-serve (tools/bench/serve.c) with the pull "
        "endpoint podcapd serves its ledger with (src/http, libmicrohttpd), each on its own "
        "loopback port, all in one process on the same machine as the verifier: the servers "
        "and the verifiers share its cores.",
        "fleet and resumed run each appliance's verification in a process of its own, `jobs` "
        "at a time; every appliance's report is checked to cover all its records, and the "
        "resumed run to have read only those after its state.",
    ]
    write_section(args, {
        "section": "Fleet verification",
        "columns": ["measure", "value"],
        "rows": rows, "targets": targets, "notes": notes,
    })


# ---- monitor-fleet ----

def cmd_monitor_fleet(args):
    s = load_samples(args.samples)
    setup = next(x for x in s if x.get("metric") == "setup")
    mon = next(x for x in s if x.get("metric") == "monitor")
    fleet = next(x for x in s if x.get("metric") == "fleet")
    n = setup["appliances"]
    # per appliance per interval: the CPU over the pulls that finished
    per = {x["metric"]: x["cpu_s"] / x["pulls"] if x["pulls"] else None for x in (mon, fleet)}
    ratio = per["monitor"] / per["fleet"] if per["monitor"] and per["fleet"] else None
    ms = (lambda v: fmt(v * 1000) if v is not None else "-")
    rows = [
        ["appliances x records (1 START + windows of 60 s, %d pods)" % setup["pods"],
         "%d x %d" % (n, setup["records"])],
        ["intervals (pulls of each appliance)", str(setup["intervals"])],
        ["monitor: pulls finished, wall (s)", "%d, %s" % (mon["pulls"], fmt(mon["wall_s"]))],
        ["monitor: CPU of its process tree (s)", fmt(mon["cpu_s"])],
        ["monitor: CPU per appliance per interval (ms)", ms(per["monitor"])],
        ["podcap-verify --fleet, jobs %d: CPU (s)" % setup["jobs"], fmt(fleet["cpu_s"])],
        ["podcap-verify --fleet: CPU per appliance per interval (ms)", ms(per["fleet"])],
        ["monitor / podcap-verify --fleet, CPU per appliance-interval", fmt(ratio)],
        ["monitor: peak RSS of the monitor (MiB)", fmt(mon["hwm_kib"] / 1024)],
        ["monitor: its peak RSS per appliance (KiB)", fmt(mon["hwm_kib"] / n)],
        ["monitor: largest process of its tree, peak RSS (MiB)",
         fmt(mon["tree_maxrss_kib"] / 1024)],
        ["podcap-verify --fleet: largest process, peak RSS (MiB)",
         fmt(fleet["tree_maxrss_kib"] / 1024)],
    ]
    targets = [{
        "what": "monitor CPU per appliance-interval over podcap-verify --fleet's",
        "measured": ratio, "target": "<= 1.5", "met": ratio is not None and ratio <= 1.5,
    }]
    notes = [
        "Every appliance is served by podcap-bench-serve (tools/bench/serve.c) with podcapd's "
        "pull endpoint, each on its own loopback port, in one process on the same machine: "
        "the servers, the monitor and the verifier share its cores.",
        "CPU is user + system time of the process tree from wait4: the monitor and every pull "
        "it reaped (those killed in flight at SIGTERM too, and its answers to the /metrics "
        "the benchmark polls every 2 s), podcap-verify --fleet and its per-appliance "
        "processes. After the first interval every pull resumes from its state over a log "
        "that has not grown, in both.",
    ]
    write_section(args, {
        "section": "Monitor fleet",
        "columns": ["measure", "value"],
        "rows": rows, "targets": targets, "notes": notes,
    })


# ---- endpoint-tls ----

def cmd_endpoint_tls(args):
    s = load_samples(args.samples)
    setup = next(x for x in s if x.get("metric") == "setup")
    n, pulls = setup["records"], setup["pulls"]
    wall = {}
    for x in s:
        if x.get("metric") not in ("full", "incremental"):
            continue
        with open(x["report"]) as f:
            rep = json.load(f)
        want_from = 0 if x["metric"] == "full" else n - setup["back"]
        # every pull timed must have verified the whole log, the incremental ones from the state
        if not rep.get("ok") or rep.get("records") != n or rep.get("resumed_from") != want_from:
            raise SystemExit("endpoint-tls: %s over %s, round %s: ok %s, records %s, resumed "
                             "from %s" % (x["metric"], x["scheme"], x["round"], rep.get("ok"),
                                          rep.get("records"), rep.get("resumed_from")))
        wall.setdefault((x["metric"], x["scheme"]), {})[x["round"]] = x["wall_s"]

    def best(metric, scheme):
        return min(wall[(metric, scheme)].values())

    def ratios(metric):
        # HTTPS's rate over HTTP's in each round: the time of HTTP over the time of HTTPS
        h, t = wall[(metric, "http")], wall[(metric, "https")]
        return [h[r] / t[r] for r in sorted(h) if r in t and t[r] > 0]

    full = best("full", "http") / best("full", "https")
    inc = best("incremental", "http") / best("incremental", "https")
    rf, ri = ratios("full"), ratios("incremental")
    rows = [
        ["log", "%d records (%d windows x %d pods), %.1f MB"
         % (n, setup["windows"], setup["pods"], setup["bytes"] / 1e6)],
        ["full pull over HTTP: records/s", fmt(n / best("full", "http"), 0)],
        ["full pull over HTTPS: records/s", fmt(n / best("full", "https"), 0)],
        ["  HTTPS / HTTP (best of each; each round's)", "%s (%s)"
         % (fmt(full), ", ".join(fmt(r) for r in rf))],
        ["incremental pulls of %d windows over HTTP: pulls/s" % setup["back"],
         fmt(pulls / best("incremental", "http"), 1)],
        ["incremental pulls over HTTPS: pulls/s", fmt(pulls / best("incremental", "https"), 1)],
        ["  HTTPS / HTTP (best of each; each round's)", "%s (%s)"
         % (fmt(inc), ", ".join(fmt(r) for r in ri))],
    ]
    targets = [
        {"what": "full pull: records/s over HTTPS / over HTTP", "measured": round(full, 3),
         "target": "(reported)", "met": None},
        {"what": "incremental pulls: pulls/s over HTTPS / over HTTP", "measured": round(inc, 3),
         "target": "(reported)", "met": None},
    ]
    notes = [
        "One ledger, served by two podcap-bench-serve processes (tools/bench/serve.c, the "
        "pull endpoint podcapd serves its ledger with, src/http over libmicrohttpd): one over "
        "plain HTTP, one over TLS 1.3 with an ECDSA P-256 certificate and podcapd's default "
        "priorities, no client certificate asked. The verifier, podcap-verify --url (libcurl "
        "with OpenSSL), holds the server to its certificate (--ca). Servers and verifier share "
        "the machine's cores.",
        "full: every record, 1,000 a request over the one connection podcap-verify keeps, and "
        "all of podcap-verify's checks; best wall time of %d round(s) for each scheme, the "
        "rounds alternating which goes first. TLS adds a handshake and the record layer's "
        "encryption to a pull whose rate is mostly the verifier's own hashing and checking."
        % setup["rounds"],
        "incremental: %d pulls from a state saved one hour (%d windows) before the log's end, "
        "each a new podcap-verify process and so a new handshake: the checkpoint, a "
        "consistency proof and the hour's records, as a verifier pulling every few minutes "
        "does. The handshake weighs most here." % (pulls, setup["back"]),
        "No target: podcap promises that a pull works over TLS, not a rate; the ratio is the "
        "figure, within one run, as the machine is shared and its absolute rates vary from "
        "one minute to the next.",
    ]
    write_section(args, {
        "section": "The endpoint over HTTPS and HTTP",
        "columns": ["measure", "value"],
        "rows": rows, "targets": targets, "notes": notes,
    })


# ---- tap-power ----

def cmd_tap_power(args):
    s = load_samples(args.samples)
    got = {}
    for x in s:
        key = (x["setting"], x["figure"], x["windows"], x["slices"])
        got[key] = x.get("percent_of_cap_window")  # None: no lie up to a window refused
    rows = []
    for (setting, figure, windows, slices), pct in sorted(got.items()):
        if slices != "no":
            continue
        new = got.get((setting, figure, windows, "yes"))
        what = "one window" if figure == "one-window" else "thin, over %d windows" % windows
        rows.append([setting, what, "none up to 100 %" if pct is None else fmt(pct, 4),
                     "none up to 100 %" if new is None else fmt(new, 4)])
    one = got.get(("default", "one-window", 1, "yes"))
    thin = got.get(("default", "thin-per-window", 60, "yes"))
    targets = [
        {"what": "default settings, one window: smallest lie refused, % of cap x window",
         "measured": one, "target": "<= 1", "met": one is not None and one <= 1},
        {"what": "default settings, thin over 60 windows: per window, % of cap x window",
         "measured": thin, "target": "<= 0.1", "met": thin is not None and thin <= 0.1},
    ]
    notes = [
        "The smallest lie the verifier refuses (pc_reconcile, src/verify/tap*.c), found by "
        "bisection, for a shaper and a fabric-side tap that both saw steady traffic at the "
        "cap, the tap's clock --tap-clock-offset late, the line 100 Gbit/s. Without slices "
        "the bound at a boundary is min(burst + cap x D, line x D) + max_frame; with them "
        "what the tap counted within its slice (δ = D) of it.",
    ]
    write_section(args, {
        "section": "What a tap proves",
        "columns": ["setting", "lie", "refused from, % of cap x window, without slices",
                    "with slices"],
        "rows": rows, "targets": targets, "notes": notes,
    })


# ---- the run's table and docs/performance.md ----

ORDER = ["forward-rate", "peers", "pod-scale", "cap-accuracy", "latency", "verify-speed",
         "verify-fleet", "window-close"]
ORDER.append("endpoint-tls")
ORDER.append("tap-power")
ORDER.append("monitor-fleet")


def load_runs(path):
    """tools/bench/run's list: {"name", "status", "seconds", "json"}."""
    with open(path) as f:
        runs = json.load(f)
    for r in runs:
        r["doc"] = None
        if r.get("json") and os.path.exists(r["json"]):
            try:
                with open(r["json"]) as f:
                    r["doc"] = json.load(f)
            except ValueError:
                r["doc"] = None
    return runs


def summary_rows(runs):
    rows = []
    for r in runs:
        doc = r["doc"]
        if r["status"] == "not present":
            rows.append([r["name"], "not present (no tools/bench/%s)" % r["name"], "-", "-", "-"])
            continue
        if r["status"] == "skipped":
            rows.append([r["name"], "skipped: %s" % r.get("why", ""), "-", "-", "-"])
            continue
        if r["status"] != "ok" or doc is None:
            rows.append([r["name"], "FAILED (%s)" % r["status"], "-", "-", "-"])
            continue
        ts = doc.get("targets") or [{"what": "(no target)", "measured": None,
                                     "target": "-", "met": None}]
        for i, t in enumerate(ts):
            met = t.get("met")
            rows.append([r["name"] if i == 0 else "", t.get("what", ""),
                         fmt(t.get("measured")), t.get("target", ""),
                         "met" if met else ("NOT MET" if met is not None else "-")])
    return rows


def text_table(header, rows):
    w = [max(len(str(x)) for x in col) for col in zip(header, *rows)]
    out = ["  ".join(str(x).ljust(n) for x, n in zip(header, w)).rstrip()]
    out.append("  ".join("-" * n for n in w))
    for row in rows:
        out.append("  ".join(str(x).ljust(n) for x, n in zip(row, w)).rstrip())
    return "\n".join(out)


def md_table(header, rows):
    esc = lambda x: str(x).replace("|", "\\|")
    out = ["| " + " | ".join(esc(h) for h in header) + " |",
           "|" + "---|" * len(header)]
    for row in rows:
        out.append("| " + " | ".join(esc(x) for x in row) + " |")
    return "\n".join(out)


SUMMARY_HEADER = ["section", "target", "measured", "wanted", "met"]


def cmd_table(args):
    runs = load_runs(args.runs)
    print(text_table(SUMMARY_HEADER, summary_rows(runs)))
    print()
    for r in runs:
        print("%-13s %-12s %6.1f s" % (r["name"], r["status"], r.get("seconds", 0)))


INTRO = """# podcap performance

What podcap costs and how closely it holds a cap, measured by
`tools/bench/run`: nine sections, each against a peer measured in the same
run (dpdk-testpmd, DPDK's own l3fwd and qos_meter, OVS-DPDK, Linux `tc tbf`
and bridge, libsodium). This file is written by `tools/bench/run` (full
mode); the raw figures of every section are in the JSON files it writes
(`--out DIR`). A run of some sections only (`--sections`) replaces those
sections here and their rows in the results, and says when it ran; the
other sections stay as their last run wrote them.

Speed is measured **only** here, and as a **ratio to a peer of the same
run** where there is one: podcap's tests never assert a time. The
machines podcap is developed on are shared and have 2 cores: an absolute
figure says as much about what else ran at that moment as about podcap.

Not part of the run: `podcap-bench-bucket` (`tools/bench/bucket.c`, built
into every build directory under `tools/bench/`), the nanoseconds and
instructions of `pc_classify` and `pc_bucket_admit` per frame against a
64-byte `memcpy` and a double-precision bucket.
"""

TESTBED = """## The testbed

There is no NIC: podcapd and dpdk-testpmd drive two veth links with DPDK's
`net_af_packet`, between a pod host (10.0.0.1) and a fabric host
(10.0.0.200) in network namespaces (`tools/bench/lib.sh`, on top of the
end-to-end tests' sandbox `tests/e2e/lib.sh`). Each frame is copied by the
kernel into the af_packet ring, by the driver into an mbuf, into the
transmit ring and handed back to the kernel by a `sendto()` per burst,
which then runs the receiving host's network stack on the forwarder's own
core: microseconds a frame, where podcap's own per-frame work costs
nanoseconds. The DPDK forwarders poll on lcore 1 (`-l 0-1`); iperf3 and ping
run on CPU 0 (`taskset`). Every section that runs a DPDK forwarder records
how long its polling thread waited for its core (`core wait`, from
`/proc/PID/task/TID/schedstat`): above a few percent the figures measured
the machine's other work as well.
"""

PEERS_TEXT = """### The 1500-byte gap

At 1500 B every forwarder here spends most of a frame in the pod port's
receive: net_pcap allocates an mbuf and copies the 1500 bytes into it,
50 ns a frame and more, against about 10 to 15 ns of the forwarder's own
work. The profile table above is podcapd's and l3fwd's forwarding threads
in the same run, symbol by symbol, and its note splits each into the ports'
drivers, the application's own symbols and the rest. Before the two changes
below, the same profile (`profiles()` of `tools/bench/peers`, podcap commit
e82152f, the same machine the same evening) gave l3fwd 69.09 and podcapd
81.82 ns a frame: the ports' drivers 57.42 ns (l3fwd) against 63.71 ns
(podcapd), the applications' own symbols 8.10 ns
(`l3fwd_lpm_process_packets`, `lpm_main_loop`, `processx4_step3`,
`lpm_cb_parse_ptype`) against 14.70 ns (`pc_burst_classify` 7.60,
`pc_worker_main` 5.29, `flush_all` 1.01, `pc_burst_prefetch` 0.80).

- **TX staging.** l3fwd hands a burst to the port straight from the array
  it received it in. podcapd copied each frame's mbuf, pod and length into
  its TX stage and read them back to send and count: three more arrays
  (about a kilobyte a burst) which the burst's copy (48 KB at 1500 B, more
  than the L1 cache) has evicted by the time they are read, and a
  `flush_all` of its own in the profile. A burst whose runs all pass whole
  is now sent as received and counted from the classification's own arrays
  (`send_whole` in `src/daemon/worker.c`); the stage is kept for the bursts
  that are not (drops, queues, a burst of several pods one of which is over
  its cap). `flush_all` has left the profile.
- **Run admission under the window promise.** A pod held to the window
  promise was admitted frame by frame (`pc_wb_admit`) where a pod under the
  envelope alone is admitted a run at a time: at one pod it cost about
  twice as much a frame. `pc_wb_admit_run` admits such a run at once, with
  the one-by-one decision, as `pc_bucket_admit_run` does for the bucket.

Two other candidates were tried with the same profile and kept out, as
neither lowered podcapd's cost a frame: prefetching every header of a burst
at once instead of four frames ahead, and bursts of 16 instead of 32 (so
that a burst's copy fits the L1 cache; the drivers' fixed cost a call then
weighs twice).

What is left is podcapd's own per-frame work: it classifies every frame as
the shaper's rule says (the pod-side address, its prefix lookup, the pod's
uplink), admits it through the pod's bucket and counts it, and each of the
lines that touches (the classification's arrays, the bucket and counter
lines, the table) is a miss after a 48 KB copy. The drivers' rows, the
copy itself, differ between the two by a few nanoseconds either way from
one run to the next on this machine, more than the difference they showed
before. The virtual machine exposes no hardware counters to perf, so the
misses are inferred, not counted. The gap is bounded, not closed: the
ratio, its range over the rounds and the rates per CPU second are in the
table above.

### The tap's capacity

Monitor mode receives, classifies with the shaper's own code, counts and
frees; testpmd rxonly receives and frees and nothing else, so the
difference of their rates per CPU second is what classifying and counting
cost a frame, and at 64 B that is of the order of rxonly's whole cost: the
goal of 0.95 would leave the tap well under a nanosecond a frame for the
shaper's classification. On net_pcap nothing can be lost (its ring never
runs out), so the monitor-mode rows are the tap's capacity. On a veth, what a tap loses is what its receive ring
cannot hold while its worker waits for a CPU: the loss table gives, for
each rate, the frames the kernel received, the frames the tap counted, the
losses its OBSERVE records report and how long the worker waited for its
CPU. On a shared machine that wait, not the rate, decides the loss. What
must hold whatever the rate is the last two columns: a tap that falls
behind says so, every frame it missed is in its OBSERVE records, and the
windows concerned are reported unreconciled rather than taken as evidence
(docs/reconcile.md).
"""

CLOCK = """## A note on podcapd's clock

`docs/bucket.md` promises that the long-run rate is the cap exactly. The
arithmetic is exact, but only in TSC ticks, so the cap is only as right as
the TSC frequency the buckets are given. DPDK 22.11 reports a rounded figure
(`EAL: TSC frequency is ~2100000 KHz` on the development machine, for a TSC
the kernel measured at 2096.023 MHz): with it every cap ran at 0.9981 of its
declared value (an earlier cap benchmark found every window held at the cap
at 0.9981 of it, and goodput 0.998 of tc's), and on a machine whose TSC runs
a little above the EAL's round figure a pod would get up to 0.25 % more
than its cap, which over hours would break the envelope `burst + cap x T`
(after T seconds the excess is 0.0025 x cap x T, more than a 60 s burst
after about 6.7 hours).

podcapd therefore measures the TSC against `CLOCK_MONOTONIC_RAW` when it
starts (twice over 250 ms, the larger kept) and adds 20 ppm, so that what
error remains lowers a cap rather than raising it; it logs both figures
(`TSC: 2096066256 Hz measured (+20 ppm margin), EAL estimate 2100000000 Hz`).
With it the windows held at the cap come to 1.0000 of it, and the
cap-accuracy section lists the frequency each podcapd used.
"""


def section_block(i, r, m=None):
    """Section i of the doc from run entry r; m: the machine of a partial run, said first."""
    out = []
    doc = r["doc"]
    title = doc.get("section", r["name"]) if doc else r["name"]
    out.append("## %d. %s (`tools/bench/%s`)\n" % (i, title, r["name"]))
    if m is not None:
        out.append("From `%s`, %s to %s, podcap commit %s; CPU idle in the second before "
                   "that run: %s, load average at its end: %s (the machine is shared: ratios "
                   "are within that one run).\n" % (
                       m.get("command"), m.get("start", "?"), m.get("end", "?"),
                       m.get("commit", "?"), m.get("idle", "?"), m.get("load", "?")))
    if doc is None:
        out.append("Not run: %s.\n" % (r["status"] if r["status"] != "skipped"
                                      else "skipped, " + r.get("why", "")))
        return out
    out.append(md_table(doc.get("columns", []), doc.get("rows", [])))
    out.append("")
    for n in doc.get("notes", []):
        out.append("- " + n)
    out.append("")
    for t in doc.get("tables", []):
        out.append("### %s\n" % t.get("title", ""))
        out.append(md_table(t.get("columns", []), t.get("rows", [])))
        out.append("")
        for n in t.get("notes", []):
            out.append("- " + n)
        out.append("")
    if r["name"] == "peers" and not doc.get("quick"):
        out.append(PEERS_TEXT)
    if doc.get("commands"):
        out.append("Commands:\n\n```\n%s\n```\n" % "\n".join(doc["commands"]))
    return out


SECTION_RX = re.compile(r"^## \d+\. .* \(`tools/bench/([a-z-]+)`\)$")


def split_doc(text):
    """An earlier docs/performance.md: (head up to the first section, {name: its lines},
    the sections' names in order, the tail from the clock note)."""
    lines = text.split("\n")
    head, blocks, names, tail, cur = [], {}, [], [], None
    for line in lines:
        mt = SECTION_RX.match(line)
        if line.startswith("## A note on podcapd's clock"):
            cur = "tail"
        elif mt:
            cur = mt.group(1)
            names.append(cur)
            blocks[cur] = []
        if cur is None:
            head.append(line)
        elif cur == "tail":
            tail.append(line)
        else:
            blocks[cur].append(line)
    return head, blocks, names, tail


def merge_summary(head, runs):
    """The results table of head with the rows of the sections in runs replaced (or added
    in ORDER), the run times line likewise."""
    start = next((i for i, l in enumerate(head) if l.startswith("| section | target")), None)
    if start is None:
        return head
    end = start + 2
    while end < len(head) and head[end].startswith("|"):
        end += 1
    rows, cur = {}, None
    for l in head[start + 2:end]:
        first = l.split("|")[1].strip()
        cur = first or cur
        rows.setdefault(cur, []).append(l)
    for r in runs:
        rows[r["name"]] = md_table(SUMMARY_HEADER, summary_rows([r])).split("\n")[2:]
    names = [n for n in ORDER if n in rows] + [n for n in rows if n not in ORDER]
    table = head[start:start + 2] + [l for n in names for l in rows[n]]
    out = head[:start] + table + head[end:]
    for i, l in enumerate(out):
        if l.startswith("Run times: "):
            times = dict(re.findall(r"([a-z-]+) (\d+ s)", l))
            for r in runs:
                times[r["name"]] = "%.0f s" % r.get("seconds", 0)
            out[i] = "Run times: " + ", ".join(
                "%s %s" % (n, times[n]) for n in ORDER + [n for n in times if n not in ORDER]
                if n in times) + "."
    return out


def cmd_doc_merge(args, runs, m):
    with open(args.out) as f:
        head, blocks, names, tail = split_doc(f.read())
    old_head = head
    head = INTRO.split("\n")
    head += old_head[next((i for i, l in enumerate(old_head) if l == "## The machine"),
                          len(old_head)):]
    head = merge_summary(head, runs)
    for r in runs:
        blocks[r["name"]] = None
    names = [n for n in ORDER if n in blocks] + [n for n in names if n not in ORDER]
    out = list(head)
    ran = {r["name"]: r for r in runs}
    for i, n in enumerate(names, 1):
        if n in ran:
            out += section_block(i, ran[n], m)
        else:
            b = list(blocks[n])
            b[0] = re.sub(r"^## \d+\.", "## %d." % i, b[0])
            out += b
    out += tail
    with open(args.out, "w") as f:
        f.write("\n".join(out))


def cmd_doc(args):
    runs = load_runs(args.runs)
    with open(args.machine) as f:
        m = json.load(f)
    if args.merge and os.path.exists(args.out):
        return cmd_doc_merge(args, runs, m)
    out = [INTRO]
    out.append("## The machine\n")
    out.append("Run of %s to %s (%.0f s in all).\n" % (
        m.get("start", "?"), m.get("end", "?"), m.get("seconds", 0)))
    for k, label in [("cpu_model", "CPU"), ("cpus", "CPUs (lscpu)"), ("memory", "memory"),
                     ("kernel", "kernel"), ("os", "system"), ("dpdk", "DPDK"),
                     ("compiler", "compiler"), ("libsodium", "libsodium"), ("iperf3", "iperf3"),
                     ("hugepages", "hugepages"), ("load", "load average at the end"),
                     ("idle", "CPU idle in the second before the run"),
                     ("commit", "podcap commit")]:
        if m.get(k):
            out.append("- **%s**: %s" % (label, m[k]))
    out.append("")
    out.append("podcap was built for this run by `tools/bench/run` into its own build "
               "directory:\n\n```\n%s\n```\n" % m.get("build", "?"))
    out.append("`-march=native` is safe here because the binaries run on the machine that "
               "built them; they are not for installing elsewhere. DPDK and libsodium are "
               "Debian's generic builds.\n")
    out.append(TESTBED)
    out.append("## Results\n")
    out.append("```\n%s\n```\n" % m.get("command", "tools/bench/run"))
    out.append(md_table(SUMMARY_HEADER, summary_rows(runs)))
    out.append("")
    out.append("Run times: " + ", ".join("%s %.0f s" % (r["name"], r.get("seconds", 0))
                                           for r in runs) + ".\n")
    for i, r in enumerate(runs, 1):
        out += section_block(i, r)
    out.append(CLOCK)
    with open(args.out, "w") as f:
        f.write("\n".join(out))


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("sample")
    p.add_argument("kv", nargs="*")
    p = sub.add_parser("sample-links")
    p.add_argument("dev", nargs="+")
    p.add_argument("--interval", type=float, default=0.1)
    for name in ("cap-accuracy", "latency", "verify-speed", "verify-fleet", "monitor-fleet"):
        p = sub.add_parser(name)
        p.add_argument("--samples", required=True)
        p.add_argument("--commands", required=True)
        p.add_argument("--out", required=True)
        p.add_argument("--quick", action="store_true")
        p.add_argument("--param", action="append", default=[])
    p = sub.add_parser("endpoint-tls")
    p.add_argument("--samples", required=True)
    p.add_argument("--commands", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--quick", action="store_true")
    p.add_argument("--param", action="append", default=[])
    p = sub.add_parser("tap-power")
    p.add_argument("--samples", required=True)
    p.add_argument("--commands", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--quick", action="store_true")
    p.add_argument("--param", action="append", default=[])
    p = sub.add_parser("table")
    p.add_argument("--runs", required=True)
    p = sub.add_parser("doc")
    p.add_argument("--runs", required=True)
    p.add_argument("--machine", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--merge", action="store_true",
                   help="replace only the sections run in an existing --out")
    args = ap.parse_args()
    {
        "sample": cmd_sample,
        "sample-links": cmd_sample_links,
        "cap-accuracy": cmd_cap_accuracy,
        "latency": cmd_latency,
        "verify-speed": cmd_verify_speed,
        "verify-fleet": cmd_verify_fleet,
        "monitor-fleet": cmd_monitor_fleet,
        "endpoint-tls": cmd_endpoint_tls,
        "tap-power": cmd_tap_power,
        "table": cmd_table,
        "doc": cmd_doc,
    }[args.cmd](args)


if __name__ == "__main__":
    main()
