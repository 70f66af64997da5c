#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Statistics, tables and JSON reports of tools/bench/forwarding.sh and cap.sh.

The scripts record raw measurements as JSON objects, one per line
(bench_sample in lib.sh); this turns them into medians and ratios against
the peer measured in the same run, prints a table and writes every raw
number and the summary to --out.

Commands:
  forwarding --samples F --machine JSON --out F [--param K=V ...]
  cap        --samples F --machine JSON --out F [--param K=V ...]
  pool FILE... [--out F]
             pools the uncontended rounds of several reports of one benchmark
             (forwarding or cap): the median of every such round's ratio
  sample-links DEV... [--interval S]
             prints "<unix time> <tx bytes of DEV>..." from /proc/net/dev
             every S seconds until SIGTERM (the bytes each veth sent)
"""

import argparse
import calendar
import json
import signal
import statistics
import sys
import time


def load_samples(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def values(samples, peer, metric):
    """{round: value} of one peer and metric."""
    return {s["round"]: s["value"] for s in samples
            if s.get("peer") == peer and s.get("metric") == metric and "value" in s}


def stats(vals):
    v = sorted(vals)
    if not v:
        return None
    return {"median": statistics.median(v), "min": v[0], "max": v[-1], "n": len(v),
            "values": list(vals)}


# A forwarder's polling thread that waited on the run queue for more than
# this fraction of a measurement was held up by other work on its core.
CONTENDED = 0.05


def waits(samples, peer, metric):
    """{round: fraction of the time the polling thread waited}, DPDK peers only."""
    return {s["round"]: s["wait_frac"] for s in samples
            if s.get("peer") == peer and s.get("metric") == metric and "wait_frac" in s}


def clean_rounds(samples, metric, peers):
    """Rounds in which no DPDK peer's polling thread was held up."""
    rounds = None
    for p in peers:
        r = set(values(samples, p, metric))
        rounds = r if rounds is None else rounds & r
    bad = set()
    for p in peers:
        bad |= {r for r, w in waits(samples, p, metric).items() if w > CONTENDED}
    return sorted((rounds or set()) - bad)


def ratio(samples, metric, num, den):
    """Ratios num/den of one metric: per round (paired), of the medians, and
    over the rounds in which neither was held up by other work."""
    a, b = values(samples, num, metric), values(samples, den, metric)
    rounds = sorted(set(a) & set(b))
    per_round = [a[r] / b[r] for r in rounds if b[r]]
    if not per_round:
        return None
    clean = clean_rounds(samples, metric, (num, den))
    out = {"rounds": rounds,
           "per_round": [round(x, 4) for x in per_round],
           "median_of_rounds": round(statistics.median(per_round), 4),
           "of_medians": round(statistics.median(a.values()) / statistics.median(b.values()), 4),
           "clean_rounds": clean}
    if clean:
        out["clean_per_round"] = [round(a[r] / b[r], 4) for r in clean]
        out["clean_median_of_rounds"] = round(statistics.median(out["clean_per_round"]), 4)
    # The headline: paired ratios, so that a machine that is faster or
    # slower from one round to the next moves both sides of each ratio.
    out["headline"] = out.get("clean_median_of_rounds", out["median_of_rounds"])
    out["headline_rounds"] = clean if clean else rounds
    return out


def parse_windows(path):
    """podcapd's window lines: pod lines and uplink lines, as dicts."""
    out = []
    with open(path) as f:
        for line in f:
            w = line.split()
            if not w or w[0] != "window":
                continue
            start = calendar.timegm(time.strptime(w[1], "%Y-%m-%dT%H:%M:%SZ"))
            if w[2] == "uplink" and len(w) == 11:
                out.append({"start": start, "uplink": w[3], "dir": w[4],
                            "unmapped_bytes": int(w[6]), "unmapped_frames": int(w[7]),
                            "malformed_bytes": int(w[9]), "malformed_frames": int(w[10])})
            elif len(w) == 14 and w[4] == "passed" and w[7] == "dropped":
                out.append({"start": start, "pod": w[2], "dir": w[3],
                            "pass_bytes": int(w[5]), "pass_frames": int(w[6]),
                            "drop_bytes": int(w[8]), "drop_frames": int(w[9]),
                            "rate_mbps": float(w[11]), "cap_mbps": float(w[13])})
            else:
                raise ValueError("malformed window line: %r" % line)
    # A line covers several windows when the control thread fell behind:
    # its span runs to the next line of the same pod and direction.
    last = {}
    for w in sorted((w for w in out if "pod" in w), key=lambda w: w["start"]):
        k = (w["pod"], w["dir"])
        if k in last:
            last[k]["span"] = w["start"] - last[k]["start"]
        w["span"] = None
        last[k] = w
    return out


def window_totals(windows):
    tot = {}
    for w in windows:
        if "pod" in w:
            d = tot.setdefault(w["dir"], {"pass_bytes": 0, "pass_frames": 0,
                                          "drop_bytes": 0, "drop_frames": 0,
                                          "unmapped_frames": 0, "malformed_frames": 0})
            for k in ("pass_bytes", "pass_frames", "drop_bytes", "drop_frames"):
                d[k] += w[k]
    for w in windows:
        if "uplink" in w:
            d = tot.setdefault(w["dir"], {"pass_bytes": 0, "pass_frames": 0,
                                          "drop_bytes": 0, "drop_frames": 0,
                                          "unmapped_frames": 0, "malformed_frames": 0})
            d["unmapped_frames"] += w["unmapped_frames"]
            d["malformed_frames"] += w["malformed_frames"]
    return tot


def fmt(x, digits):
    return "-" if x is None else "%.*f" % (digits, x)


def fmt_stats(st, digits):
    if st is None:
        return "-"
    return "%s (%s-%s)" % (fmt(st["median"], digits), fmt(st["min"], digits),
                           fmt(st["max"], digits))


def fmt_ratio(r):
    """The median of the per-round ratios over the uncontended rounds (all
    rounds when none was), then every round's ratio, * marking the
    contended ones."""
    if r is None:
        return "-"
    clean = set(r["clean_rounds"])
    per = " ".join("%.3f%s" % (x, "" if n in clean else "*")
                   for n, x in zip(r["rounds"], r["per_round"]))
    what = "%d uncontended" % len(clean) if clean else "all %d, contended" % len(r["rounds"])
    return "%.3f (%s; rounds %s)" % (r["headline"], what, per)


def wait_row(samples, peers, metrics):
    """How long each DPDK peer's polling thread waited for its core."""
    row = ["core wait, % (max)"]
    for p in peers:
        w = [x for m in metrics for x in waits(samples, p, m).values()]
        row.append("%.1f (%.1f)" % (100 * statistics.median(w), 100 * max(w)) if w else "-")
    return row


def print_table(header, rows):
    rows = [list(r) + [""] * (len(header) - len(r)) for r in rows]
    widths = [max(len(str(r[i])) for r in [header] + rows) for i in range(len(header))]
    for r in [header] + rows:
        print("  ".join(str(c).ljust(widths[i]) for i, c in enumerate(r)).rstrip())


def write_report(path, doc):
    with open(path, "w") as f:
        json.dump(doc, f, indent=2, sort_keys=True)
        f.write("\n")
    print("\nraw numbers and summary: %s" % path)


def print_machine(m):
    if not m:
        return
    print("%s  %s CPUs (%s), kernel %s, DPDK %s, %s; load %s, %d %% idle just before"
          % (m.get("date"), m.get("cpus"), m.get("cpu_model"), m.get("kernel"), m.get("dpdk"),
             "hugepages" if m.get("hugepages_free") else "no hugepages (--no-huge)",
             " ".join(m.get("loadavg_at_start", [])),
             round(100 * m.get("cpu_idle_fraction_1s_before", 0))))


def params_of(args):
    p = {}
    for kv in args.param or []:
        k, v = kv.split("=", 1)
        p[k] = v
    return p


def set_contended(params):
    global CONTENDED
    if "contended" in params:
        CONTENDED = float(params["contended"])


def cmd_forwarding(args):
    set_contended(params_of(args))
    samples = load_samples(args.samples)
    peers = [p for p in ("testpmd", "podcapd", "bridge")
             if any(s.get("peer") == p for s in samples)]
    metrics = [("tcp_up_mbps", "TCP up, Mbit/s", 0),
               ("tcp_down_mbps", "TCP down, Mbit/s", 0),
               ("rtt_ms", "ping RTT, ms", 3)]
    summary = {"peers": {}, "ratios": {}}
    for p in peers:
        summary["peers"][p] = {m: stats(values(samples, p, m).values()) for m, _, _ in metrics}
    for other in ("podcapd", "bridge"):
        if other in peers and "testpmd" in peers:
            summary["ratios"][other + "/testpmd"] = {
                m: ratio(samples, m, other, "testpmd") for m, _, _ in metrics}

    wins = {}
    for s in samples:
        if s.get("metric") == "windows":
            wins[s["round"]] = window_totals(parse_windows(s["file"]))
            wins[s["round"]]["exit_status"] = s.get("exit_status")
            wins[s["round"]]["stalls"] = s.get("stalls")
    summary["podcapd_windows"] = wins

    params = params_of(args)
    print_machine(json.loads(args.machine))
    print("\nforwarding: %s rounds; TCP %s s each way, first second omitted; %s pings"
          % (params.get("runs"), params.get("seconds"), params.get("pings")))
    print("medians (min-max over rounds); podcapd/testpmd: median over the uncontended rounds of\n"
          "each round's ratio, then each round's ratio (* contended)\n")
    header = ["metric"] + peers + (["podcapd/testpmd"] if "podcapd/testpmd" in summary["ratios"] else [])
    rows = []
    for m, label, digits in metrics:
        row = [label] + [fmt_stats(summary["peers"][p][m], digits) for p in peers]
        if "podcapd/testpmd" in summary["ratios"]:
            row.append(fmt_ratio(summary["ratios"]["podcapd/testpmd"][m]))
        rows.append(row)
    rows.append(wait_row(samples, peers, [m for m, _, _ in metrics]))
    print_table(header, rows)
    print("\n(core wait: time the forwarder's polling thread was runnable but waited for its "
          "core, median and max over measurements; above %d %% a round counts as contended)"
          % (100 * CONTENDED))
    for r, t in sorted(wins.items()):
        parts = []
        for d in ("up", "down"):
            if d in t:
                parts.append("%s: %d frames passed, %d dropped, %d unmapped, %d malformed"
                             % (d, t[d]["pass_frames"], t[d]["drop_frames"],
                                t[d]["unmapped_frames"], t[d]["malformed_frames"]))
        print("podcapd round %s windows: %s; exit status %s; %s 'has not switched windows' warnings"
              % (r, "; ".join(parts) or "none", t.get("exit_status"), t.get("stalls")))

    write_report(args.out, {"benchmark": "forwarding", "machine": json.loads(args.machine),
                            "params": params, "summary": summary, "samples": samples})


def read_link_samples(path):
    rows = []
    with open(path) as f:
        for line in f:
            w = line.split()
            if len(w) >= 2:
                rows.append([float(w[0])] + [int(x) for x in w[1:]])
    return rows


def max_sliding_rate(rows, col, t0, t1, span):
    """Highest rate (bit/s) over any interval of about `span` seconds between
    two samples inside [t0, t1]: each sample paired with the first one at
    least `span` later, the rate taken over the exact time between them."""
    rows = [r for r in rows if t0 <= r[0] <= t1]
    best = None
    j = 0
    for i in range(len(rows)):
        j = max(j, i + 1)
        while j < len(rows) and rows[j][0] - rows[i][0] < span:
            j += 1
        if j >= len(rows):
            break
        dt = rows[j][0] - rows[i][0]
        bps = (rows[j][col] - rows[i][col]) * 8 / dt
        if best is None or bps > best["bps"]:
            best = {"bps": bps, "seconds": dt, "from": rows[i][0]}
    return best


def cmd_cap(args):
    samples = load_samples(args.samples)
    params = params_of(args)
    set_contended(params)
    cap_bps = float(params["cap_bps"])
    burst_bytes = float(params["burst_bytes"])
    window_s = float(params.get("window_s", 1))
    cap_mbps = cap_bps / 1e6
    peers = [p for p in ("podcapd", "tc") if any(s.get("peer") == p for s in samples)]
    summary = {"peers": {}, "ratios": {}, "envelope": {}}
    metrics = ("tcp_up_mbps", "tcp_down_mbps", "rtt_loaded_ms")
    for p in peers:
        summary["peers"][p] = {m: stats(values(samples, p, m).values()) for m in metrics}
        for m in ("tcp_up_mbps", "tcp_down_mbps"):
            st = summary["peers"][p][m]
            if st:
                st["goodput_over_cap"] = round(st["median"] / cap_mbps, 4)
    if "podcapd" in peers and "tc" in peers:
        summary["ratios"]["podcapd/tc"] = {m: ratio(samples, m, "podcapd", "tc") for m in metrics}

    # The envelope: the most passed in one window (podcapd's own windows)
    # and over any ~1 s between two samples of the veth counters (both).
    link_col = {"up": 2, "down": 1}  # sample-links order: vpod0 vfab0
    env = {"bound_over_cap": round((cap_bps * window_s / 8 + burst_bytes) / (cap_bps * window_s / 8), 4),
           "podcapd_windows": {}, "links": {}}
    win_cache = {}
    for s in samples:
        m = s.get("metric", "")
        if not m.startswith("tcp_"):
            continue
        d = "up" if m == "tcp_up_mbps" else "down"
        t0, t1 = s["t0"], s["t1"]
        if s.get("links"):
            rows = read_link_samples(s["links"])
            best = max_sliding_rate(rows, link_col[d], t0, t1, window_s)
            if best:
                env["links"].setdefault(s["peer"], {}).setdefault(d, []).append(
                    {"round": s["round"], "max_mbps": round(best["bps"] / 1e6, 3),
                     "over_cap": round(best["bps"] / cap_bps, 4),
                     "interval_s": round(best["seconds"], 3)})
        if s["peer"] == "podcapd" and s.get("windows"):
            if s["windows"] not in win_cache:
                win_cache[s["windows"]] = parse_windows(s["windows"])
            inside = [w for w in win_cache[s["windows"]]
                      if w.get("dir") == d and w.get("pod") == params.get("pod", "pod-00")
                      and w["start"] >= t0 and w["start"] + window_s <= t1]
            ws = [w for w in inside if w["span"] == window_s]
            passed = sum(w["pass_bytes"] for w in win_cache[s["windows"]]
                         if w.get("dir") == d and "pod" in w
                         and t0 - window_s < w["start"] < t1 + window_s)
            if ws:
                top = max(ws, key=lambda w: w["pass_bytes"])
                env["podcapd_windows"].setdefault(d, []).append(
                    {"round": s["round"], "windows": len(ws),
                     "lines_covering_several_windows": len(inside) - len(ws),
                     "max_window_bytes": top["pass_bytes"],
                     "max_window_mbps": round(top["pass_bytes"] * 8 / window_s / 1e6, 3),
                     "over_cap": round(top["pass_bytes"] * 8 / window_s / cap_bps, 4),
                     "median_window_over_cap": round(statistics.median(
                         w["pass_bytes"] for w in ws) * 8 / window_s / cap_bps, 4),
                     "dropped_frames": sum(w["drop_frames"] for w in ws),
                     "passed_bytes_around_run": passed,
                     "iperf_payload_bytes": s.get("bytes")})
    summary["envelope"] = env

    print_machine(json.loads(args.machine))
    print("\ncap: %s rounds; cap %s Mbit/s each way, burst %d bytes, queue %s; TCP %s s each way, "
          "first second omitted" % (params.get("runs"), fmt(cap_mbps, 0), burst_bytes,
                                    params.get("queue_delay"), params.get("seconds")))
    print("medians (min-max over rounds); podcapd/tc: median over the uncontended rounds of\n"
          "each round's ratio, then each round's ratio (* contended)\n")
    header = ["metric"] + peers + (["podcapd/tc"] if summary["ratios"] else [])
    rows = []
    for m, label, digits in (("tcp_up_mbps", "TCP up, Mbit/s", 2),
                             ("tcp_down_mbps", "TCP down, Mbit/s", 2)):
        row = [label] + [fmt_stats(summary["peers"][p][m], digits) for p in peers]
        if summary["ratios"]:
            row.append(fmt_ratio(summary["ratios"]["podcapd/tc"][m]))
        rows.append(row)
        row = ["  goodput/cap"]
        for p in peers:
            st = summary["peers"][p][m]
            row.append(fmt(st["median"] / cap_mbps if st else None, 3))
        if summary["ratios"]:
            row.append("")
        rows.append(row)
    row = ["ping RTT under TCP up, ms"] + [fmt_stats(summary["peers"][p]["rtt_loaded_ms"], 1)
                                           for p in peers]
    if summary["ratios"]:
        row.append(fmt_ratio(summary["ratios"]["podcapd/tc"]["rtt_loaded_ms"]))
    rows.append(row)
    for d in ("up", "down"):
        row = ["max over any 1 s / cap, %s" % d]
        for p in peers:
            v = [x["over_cap"] for x in env["links"].get(p, {}).get(d, [])]
            row.append(fmt(max(v), 3) if v else "-")
        if summary["ratios"]:
            row.append("")
        rows.append(row)
    rows.append(wait_row(samples, peers, ["tcp_up_mbps", "tcp_down_mbps"]))
    print_table(header, rows)
    print("\n(core wait: time podcapd's polling thread was runnable but waited for its core, "
          "median and max; above %d %% a round counts as contended)" % (100 * CONTENDED))
    print("(1 s maxima from the veth tx counters sampled every %s s; the bucket allows at most "
          "(cap x 1 s + burst) / (cap x 1 s) = %.3f)" % (params.get("sample_interval"),
                                                        env["bound_over_cap"]))
    for d in ("up", "down"):
        for x in env["podcapd_windows"].get(d, []):
            print("podcapd windows, %s, round %s: %d whole 1 s windows, the largest %d bytes = "
                  "%.2f Mbit/s = %.3f x cap, the median %.4f x cap; %d frames dropped in them"
                  % (d, x["round"], x["windows"], x["max_window_bytes"], x["max_window_mbps"],
                     x["over_cap"], x["median_window_over_cap"], x["dropped_frames"]))
    for s in samples:
        if s.get("metric") == "podcapd_run":
            print("podcapd round %s: exit status %s; %s 'has not switched windows' warnings"
                  % (s["round"], s.get("exit_status"), s.get("stalls")))
    # The buckets count TSC ticks at the frequency podcapd was given or
    # measured; if the TSC really runs slower or faster, so does the cap.
    machine = json.loads(args.machine)
    clocks = sorted({(s["tsc_hz"], s.get("tsc_source", "?")) for s in samples
                     if s.get("metric") == "podcapd_run" and s.get("tsc_hz")})
    if clocks and machine.get("cpu_mhz"):
        scale = [round(machine["cpu_mhz"] * 1e6 / hz, 5) for hz, _ in clocks]
        summary["clock"] = {"tsc_hz": [hz for hz, _ in clocks],
                            "tsc_source": [src for _, src in clocks],
                            "kernel_cpu_mhz": machine["cpu_mhz"], "cap_scale": scale}
        print("podcapd's clock: its buckets count the TSC at %s Hz (%s), the kernel at "
              "%.3f MHz: they fill at %s x the declared cap"
              % ("/".join(str(hz) for hz, _ in clocks),
                 "/".join("measured at start" if src == "measured" else "the EAL's estimate"
                          for _, src in clocks),
                 machine["cpu_mhz"], "/".join("%.5f" % x for x in scale)))

    write_report(args.out, {"benchmark": "cap", "machine": json.loads(args.machine),
                            "params": params, "summary": summary, "samples": samples})


def cmd_pool(args):
    docs = [json.load(open(f)) for f in args.files]
    kinds = {d.get("benchmark") for d in docs}
    if len(kinds) != 1 or kinds & {"forwarding", "cap"} == set():
        sys.exit("report.py pool: want reports of one benchmark, forwarding or cap")
    kind = kinds.pop()
    metrics = [("tcp_up_mbps", "TCP up"), ("tcp_down_mbps", "TCP down")]
    metrics.append(("rtt_ms", "ping RTT, idle") if kind == "forwarding"
                   else ("rtt_loaded_ms", "ping RTT under TCP up"))
    out = {"benchmark": kind, "files": args.files, "ratios": {}, "peers": {}}
    names = sorted({k for d in docs for k in d["summary"]["ratios"]},
                   key=lambda n: (not n.startswith("podcapd"), n))
    for name in names:
        num, den = name.split("/")
        out["ratios"][name] = {}
        for m, _ in metrics:
            ratios, vals = [], {num: [], den: []}
            for d in docs:
                # from the raw samples, so that every report pools alike
                set_contended(d.get("params", {}))
                r = ratio(d["samples"], m, num, den)
                if not r or not r.get("clean_per_round"):
                    continue
                ratios += r["clean_per_round"]
                for p in (num, den):
                    v = values(d["samples"], p, m)
                    vals[p] += [v[x] for x in r["clean_rounds"]]
            if not ratios:
                continue
            q = statistics.quantiles(ratios, n=4) if len(ratios) > 1 else [ratios[0]] * 3
            out["ratios"][name][m] = {
                "rounds": len(ratios), "median": round(statistics.median(ratios), 4),
                "q1": round(q[0], 4), "q3": round(q[2], 4),
                "min": min(ratios), "max": max(ratios), "per_round": ratios,
                "medians": {p: statistics.median(v) for p, v in vals.items()}}

    print("%s: %d reports, %s to %s; uncontended rounds only"
          % (kind, len(docs), min(d["machine"].get("date", "?") for d in docs),
             max(d["machine"].get("date", "?") for d in docs)))
    print("ratio: median of the per-round ratios (quartiles; min-max); then each side's median\n")
    for name, per in out["ratios"].items():
        num, den = name.split("/")
        rows = []
        for m, label in metrics:
            r = per.get(m)
            if r is None:
                rows.append([label, "0", "-", "-", "-", "-"])
                continue
            digits = 3 if m.startswith("rtt") else (2 if kind == "cap" else 0)
            rows.append([label, str(r["rounds"]), "%.3f" % r["median"],
                         "%.3f-%.3f; %.3f-%.3f" % (r["q1"], r["q3"], r["min"], r["max"]),
                         fmt(r["medians"][num], digits), fmt(r["medians"][den], digits)])
        print_table(["metric", "rounds", name, "quartiles; min-max", num, den], rows)
        print()
    if args.out:
        write_report(args.out, out)


def cmd_sample_links(args):
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
    out = sys.stdout
    while not stop:
        t = time.time()
        tx = {}
        with open("/proc/net/dev") as f:
            for line in f:
                if ":" not in line:
                    continue
                name, rest = line.split(":", 1)
                tx[name.strip()] = int(rest.split()[8])
        out.write("%.6f %s\n" % (t, " ".join(str(tx.get(d, 0)) for d in args.devs)))
        out.flush()
        time.sleep(args.interval)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    for name in ("forwarding", "cap"):
        p = sub.add_parser(name)
        p.add_argument("--samples", required=True)
        p.add_argument("--machine", required=True)
        p.add_argument("--out", required=True)
        p.add_argument("--param", action="append")
    p = sub.add_parser("pool")
    p.add_argument("files", nargs="+")
    p.add_argument("--out")
    p = sub.add_parser("sample-links")
    p.add_argument("devs", nargs="+")
    p.add_argument("--interval", type=float, default=0.1)
    args = ap.parse_args()
    {"forwarding": cmd_forwarding, "cap": cmd_cap, "pool": cmd_pool,
     "sample-links": cmd_sample_links}[args.cmd](args)


if __name__ == "__main__":
    main()
