#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Reads podcapd's window lines.

At each window close podcapd prints, per pod and direction:

  window <start, UTC ISO 8601> <pod> <up|down> passed <bytes> <frames>
         dropped <bytes> <frames> rate <Mbit/s passed> cap <Mbit/s>

and, per uplink and direction where frames of no pod were dropped:

  window <start> uplink <name> <up|down> unmapped <bytes> <frames>
         malformed <bytes> <frames>

Commands:
  check FILE                 every line that starts with "window" is well formed
  last FILE                  the start of the last window printed
  sum FILE POD DIR [--from T --to T]
                             totals of the windows that start in [from, to)
  unmapped FILE DIR [--from T --to T]
                             unmapped frames dropped, all uplinks
  rates FILE POD DIR --from T --to T --window S
                             the rates of the windows lying wholly in [from, to]
  table                      formats lines read from stdin as a live table
  verdict FILE --bulk POD --trickle POD --from T --to T [--window S]
                             how the cap held the bulk flow, what the trickle lost

Times T are Unix seconds (date +%s.%N).
"""

import argparse
import datetime
import json
import statistics
import sys


class Window:
    __slots__ = ("start", "pod", "dir", "pass_bytes", "pass_frames",
                 "drop_bytes", "drop_frames", "rate", "cap")


class LinkWindow:
    __slots__ = ("start", "uplink", "dir", "unmapped_bytes", "unmapped_frames",
                 "malformed_bytes", "malformed_frames")


def parse_start(text, line):
    try:
        ts = datetime.datetime.strptime(text, "%Y-%m-%dT%H:%M:%SZ")
    except ValueError:
        raise ValueError("bad window start %r in %r" % (text, line.rstrip("\n")))
    return ts.replace(tzinfo=datetime.timezone.utc).timestamp()


def parse_line(line):
    """A Window or a LinkWindow, or None if the line is not a window line;
    ValueError if it starts with "window" but is malformed."""
    f = line.split()
    if not f or f[0] != "window":
        return None
    if f[2:3] == ["uplink"]:
        if (len(f) != 11 or f[4] not in ("up", "down") or
                f[5] != "unmapped" or f[8] != "malformed"):
            raise ValueError("malformed window line: %r" % line.rstrip("\n"))
        lw = LinkWindow()
        lw.start = parse_start(f[1], line)
        lw.uplink, lw.dir = f[3], f[4]
        lw.unmapped_bytes, lw.unmapped_frames = int(f[6]), int(f[7])
        lw.malformed_bytes, lw.malformed_frames = int(f[9]), int(f[10])
        return lw
    if (len(f) != 14 or f[4] != "passed" or f[7] != "dropped" or
            f[10] != "rate" or f[12] != "cap" or f[3] not in ("up", "down")):
        raise ValueError("malformed window line: %r" % line.rstrip("\n"))
    w = Window()
    w.start = parse_start(f[1], line)
    w.pod, w.dir = f[2], f[3]
    w.pass_bytes, w.pass_frames = int(f[5]), int(f[6])
    w.drop_bytes, w.drop_frames = int(f[8]), int(f[9])
    w.rate, w.cap = float(f[11]), float(f[13])
    return w


def read_all(path):
    """(pod windows, uplink windows) of a file, in order."""
    pods, links = [], []
    with open(path) as fh:
        for line in fh:
            w = parse_line(line)
            if isinstance(w, Window):
                pods.append(w)
            elif w is not None:
                links.append(w)
    return pods, links


def read_windows(path):
    return read_all(path)[0]


def select(ws, pod, direction, t_from=None, t_to=None):
    return [w for w in ws if w.pod == pod and w.dir == direction and
            (t_from is None or w.start >= t_from) and
            (t_to is None or w.start < t_to)]


def whole(ws, t_from, t_to, window):
    """Windows lying wholly inside [t_from, t_to]."""
    return [w for w in ws if w.start >= t_from and w.start + window <= t_to]


def cmd_check(a):
    n = len(read_windows(a.file))
    print(n)
    return 0 if n > 0 else 1


def cmd_last(a):
    ws = read_windows(a.file)
    if not ws:
        return 1
    print("%.0f" % ws[-1].start)
    return 0


def cmd_sum(a):
    ws = select(read_windows(a.file), a.pod, a.dir, a.t_from, a.t_to)
    print(json.dumps({
        "windows": len(ws),
        "pass_bytes": sum(w.pass_bytes for w in ws),
        "pass_frames": sum(w.pass_frames for w in ws),
        "drop_bytes": sum(w.drop_bytes for w in ws),
        "drop_frames": sum(w.drop_frames for w in ws),
        "caps": sorted({w.cap for w in ws}),
    }))
    return 0


def cmd_unmapped(a):
    links = [lw for lw in read_all(a.file)[1] if lw.dir == a.dir and
             (a.t_from is None or lw.start >= a.t_from) and
             (a.t_to is None or lw.start < a.t_to)]
    print(sum(lw.unmapped_frames for lw in links))
    return 0


def cmd_rates(a):
    ws = whole(select(read_windows(a.file), a.pod, a.dir), a.t_from, a.t_to,
               a.window)
    print(" ".join("%.1f" % w.rate for w in ws))
    return 0


def human_bytes(n):
    if n < 1000:
        return "%d B" % n
    for unit in ("kB", "MB", "GB", "TB"):
        n /= 1000.0
        if n < 1000 or unit == "TB":
            return "%.1f %s" % (n, unit)


def bar(rate, cap, width=20):
    """The rate as a bar the width of the cap; '!' past it."""
    if cap <= 0:
        return ""
    n = int(round(rate / cap * width))
    return "#" * min(n, width) + "!" * min(max(n - width, 0), width // 2)


def window_length(ws):
    """The window length in seconds, from the distance between starts."""
    starts = sorted({w.start for w in ws})
    gaps = [b - a for a, b in zip(starts, starts[1:]) if b > a]
    return min(gaps) if gaps else None


TABLE_FMT = "%-8s  %-8s  %-4s  %10s  %10s  %8s  %12s  %s"


def cmd_table(a):
    head = TABLE_FMT % ("window", "pod", "dir", "passed", "dropped", "(frames)",
                        "Mbit/s / cap", "")
    print(head)
    print("-" * (len(head) + 16))
    sys.stdout.flush()
    last = None
    for line in sys.stdin:
        try:
            w = parse_line(line)
        except ValueError as e:
            print("  (%s)" % e)
            continue
        if not isinstance(w, Window):
            continue
        when = datetime.datetime.fromtimestamp(w.start, datetime.timezone.utc)
        label = when.strftime("%H:%M:%S") if w.start != last else ""
        last = w.start
        print(TABLE_FMT % (label, w.pod, w.dir, human_bytes(w.pass_bytes),
                           human_bytes(w.drop_bytes), w.drop_frames,
                           "%5.1f / %-5.0f" % (w.rate, w.cap),
                           bar(w.rate, w.cap)))
        sys.stdout.flush()
    return 0


def cmd_verdict(a):
    ws = read_windows(a.file)
    window = a.window or window_length(ws)
    if window is None:
        print("too few windows to judge")
        return 1
    bulk = whole(select(ws, a.bulk, "up"), a.t_from, a.t_to, window)
    if not bulk:
        print("no whole window of %s up during the bulk flow: nothing to judge"
              % a.bulk)
        return 1
    # The first whole window may still spend the burst allowance.
    steady = bulk[1:] if len(bulk) > 2 else bulk
    rates = [w.rate for w in steady]
    cap = steady[0].cap
    held = statistics.median(rates)
    bulk_drop = sum(w.drop_frames for w in select(ws, a.bulk, "up",
                                                     a.t_from, a.t_to))
    trickle = select(ws, a.trickle, "up", a.t_from - window, a.t_to) + \
        select(ws, a.trickle, "down", a.t_from - window, a.t_to)
    t_pass = sum(w.pass_frames for w in trickle)
    t_drop = sum(w.drop_frames for w in trickle)
    t_peak = max((w.rate for w in trickle), default=0.0)
    t_cap = max((w.cap for w in trickle), default=0.0)
    print("bulk    %s up: held at %.1f Mbit/s, %.1f%% of its %.0f Mbit/s cap "
          "(median of %d windows of %gs, %.1f to %.1f); the cap dropped "
          "%d frames" % (a.bulk, held, 100.0 * held / cap if cap else 0.0,
                         cap, len(rates), window, min(rates), max(rates),
                         bulk_drop))
    if t_drop == 0:
        how = "with 0 drops"
    else:
        how = "but %d frames were dropped" % t_drop
    print("trickle %s: %d frames passed %s (peak %.2f Mbit/s of its %.0f "
          "Mbit/s cap)" % (a.trickle, t_pass, how, t_peak, t_cap))
    return 0


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="cmd", required=True)

    s = sub.add_parser("check")
    s.add_argument("file")
    s.set_defaults(fn=cmd_check)

    s = sub.add_parser("last")
    s.add_argument("file")
    s.set_defaults(fn=cmd_last)

    s = sub.add_parser("sum")
    s.add_argument("file")
    s.add_argument("pod")
    s.add_argument("dir", choices=("up", "down"))
    s.add_argument("--from", dest="t_from", type=float)
    s.add_argument("--to", dest="t_to", type=float)
    s.set_defaults(fn=cmd_sum)

    s = sub.add_parser("unmapped")
    s.add_argument("file")
    s.add_argument("dir", choices=("up", "down"))
    s.add_argument("--from", dest="t_from", type=float)
    s.add_argument("--to", dest="t_to", type=float)
    s.set_defaults(fn=cmd_unmapped)

    s = sub.add_parser("rates")
    s.add_argument("file")
    s.add_argument("pod")
    s.add_argument("dir", choices=("up", "down"))
    s.add_argument("--from", dest="t_from", type=float, required=True)
    s.add_argument("--to", dest="t_to", type=float, required=True)
    s.add_argument("--window", type=float, required=True)
    s.set_defaults(fn=cmd_rates)

    s = sub.add_parser("table")
    s.set_defaults(fn=cmd_table)

    s = sub.add_parser("verdict")
    s.add_argument("file")
    s.add_argument("--bulk", required=True)
    s.add_argument("--trickle", required=True)
    s.add_argument("--from", dest="t_from", type=float, required=True)
    s.add_argument("--to", dest="t_to", type=float, required=True)
    s.add_argument("--window", type=float,
                   help="seconds; by default inferred from the lines")
    s.set_defaults(fn=cmd_verdict)

    a = p.parse_args()
    try:
        return a.fn(a)
    except (OSError, ValueError) as e:
        print("windows.py: %s" % e, file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
