#!/usr/bin/env python3
"""How long the driver's callback thread takes to run a host function, by how
long the thread was idle before it (issue #18, session 34).

Reads Perfetto timelines written by `gpusched run --timelines` on a GPU (the
CUDA backend's; the simulator's draw the run but not the span, so they give
no table): each host function appears as a span on its
stream (pid 2, category "callback": from the stream reaching it to the
stream going on) and as a run on the callback thread (pid 4, category
"callback"). A callback's wake is its run's start less its span's start; the
thread's idle time is that span's start less the end of the thread's previous
run. Callbacks that became ready while the thread was still busy (queued
behind another) are left out of the table: they pay no wake of their own.

    python3 scripts/callback-wakes.py DIR/timelines/*.json
    python3 scripts/callback-wakes.py --csv wakes.csv A.json B.json
    python3 scripts/callback-wakes.py --spans OLD/timelines/*.json

prints, per idle bin, the callbacks, their mean and median wake, the 90th
percentile and the share over 150 us; after 60-250 us idle, the wake with and
without a graph launch running on some stream when the callback became ready;
and a least-squares step through the bins' means (the wake below the step,
the rise, and where it starts and ends). --spans reads the host functions'
stream spans instead (wake, run and release), by the idle time since the
previous span ended: for timelines drawn before the callback thread's lane.
The simulator charges front_end.callback_wake_ns below
front_end.callback_park_after_ns and callback_parked_wake_ns more above it
(device/sim/frontend.go startCallback); calibration-h100.md "Session 34" reads
two H200 leases with this script.
"""
import argparse
import csv
import json
import signal
import statistics
import sys

BINS = [0, 10, 30, 60, 80, 100, 120, 140, 160, 250, 500, 2000]


def load(path):
    """The timeline's stream spans of host functions, their runs on the
    callback thread and the graph launches' spans on their streams."""
    with open(path) as f:
        events = json.load(f)["traceEvents"]
    spans, runs, graphs = [], [], []
    for e in events:
        if e.get("ph") != "X":
            continue
        if e.get("cat") == "callback" and e.get("pid") == 2:
            spans.append(e)
        elif e.get("cat") == "callback" and e.get("pid") == 4:
            runs.append(e)
        elif e.get("cat") == "graph" and e.get("pid") == 2:
            graphs.append(e)
    return spans, runs, graphs


def running(graphs, t):
    """How many graph launches run on their streams at t."""
    return sum(1 for g in graphs if g["ts"] <= t < g["ts"] + g["dur"])


def callbacks(path):
    """Yields (idle_us, wake_us, graphs running at ready) for each callback
    that found the thread idle."""
    spans, runs, graphs = load(path)
    spans.sort(key=lambda e: e["ts"])
    runs.sort(key=lambda e: e["ts"])
    used = [False] * len(runs)
    matched = []
    for s in spans:
        # The thread runs callbacks in the order they become ready: the
        # earliest run not yet matched that starts within the span.
        for i, r in enumerate(runs):
            if used[i] or r["ts"] < s["ts"] - 0.5:
                continue
            if r["ts"] > s["ts"] + s["dur"]:
                break
            used[i] = True
            matched.append((s, r))
            break
    prev_end = None
    for s, r in sorted(matched, key=lambda m: m[1]["ts"]):
        if prev_end is not None and s["ts"] >= prev_end:
            yield s["ts"] - prev_end, r["ts"] - s["ts"], running(graphs, s["ts"])
        prev_end = r["ts"] + r["dur"]


def stream_spans(path):
    """Yields (idle_us, span_us) for each host function's stream span: the
    time since the previous one's span ended, and its own span (wake, run
    and release), for timelines without the callback thread's runs."""
    spans, _, _ = load(path)
    prev_end = None
    for s in sorted(spans, key=lambda e: e["ts"]):
        if prev_end is not None and s["ts"] >= prev_end:
            yield s["ts"] - prev_end, s["dur"]
        prev_end = max(prev_end or 0, s["ts"] + s["dur"])


def fit_step(points):
    """Least-squares step through (idle, mean wake, n): the wake w0 below a,
    rising linearly to w0 + rise at b, flat after."""
    best = None
    for a in range(0, 150, 5):
        for b in range(a + 5, 200, 5):
            def shape(x):
                return min(max((x - a) / (b - a), 0.0), 1.0)
            # For a given shape, w0 and rise are a linear least-squares fit.
            sw = sum(n for _, _, n in points)
            s1 = sum(n * shape(x) for x, _, n in points)
            s2 = sum(n * shape(x) ** 2 for x, _, n in points)
            y0 = sum(n * w for _, w, n in points)
            y1 = sum(n * w * shape(x) for x, w, n in points)
            det = sw * s2 - s1 * s1
            if det <= 0:
                continue
            w0 = (y0 * s2 - y1 * s1) / det
            rise = (sw * y1 - s1 * y0) / det
            err = sum(n * (w - w0 - rise * shape(x)) ** 2 for x, w, n in points)
            if best is None or err < best[0]:
                best = (err, w0, rise, a, b)
    return best


def main():
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # quiet under head
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("timelines", nargs="+")
    ap.add_argument("--csv", help="also write every callback's file, idle, wake and graphs running (us)")
    ap.add_argument("--spans", action="store_true",
                    help="the host functions' stream spans (wake, run and release) by the idle time since the "
                         "previous span, for timelines without the callback thread's runs (before session 30)")
    args = ap.parse_args()
    rows = []
    for p in args.timelines:
        if args.spans:
            rows += [(p, idle, span, 0) for idle, span in stream_spans(p)]
        else:
            rows += [(p, idle, wake, busy) for idle, wake, busy in callbacks(p)]
    if not rows:
        sys.exit("no host function's stream span (pid 2)" + ("" if args.spans else
                 " with a run on the callback thread (pid 4)") + " in these timelines")
    if args.csv:
        with open(args.csv, "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["timeline", "idle_us", "span_us" if args.spans else "wake_us", "graphs_running"])
            w.writerows(rows)
    what = "span" if args.spans else "wake"
    if args.spans:
        print(f"{len(rows)} host functions' stream spans after an idle stream lane, in {len(args.timelines)} timelines")
    else:
        print(f"{len(rows)} callbacks that found the callback thread idle, in {len(args.timelines)} timelines")
    print()
    print(f"| idle before (us) | callbacks | {what} mean (us) | median | p90 | over 150 us |")
    print("|---|--:|--:|--:|--:|--:|")
    points = []
    for lo, hi in zip(BINS, BINS[1:] + [None]):
        w = sorted(wake for _, idle, wake, _ in rows if idle >= lo and (hi is None or idle < hi))
        if not w:
            continue
        mean = sum(w) / len(w)
        label = f"{lo}-{hi}" if hi is not None else f"{lo}+"
        print(f"| {label} | {len(w)} | {mean:.1f} | {statistics.median(w):.1f} | {w[int(0.9 * (len(w) - 1))]:.1f} | "
              f"{100 * sum(1 for x in w if x > 150) / len(w):.0f}% |")
        if hi is not None and hi <= 250:
            points.append(((lo + hi) / 2, mean, len(w)))
    if not args.spans:
        print()
        print("| after 60-250 us idle, graphs running when it became ready | callbacks | wake mean (us) | median |")
        print("|---|--:|--:|--:|")
        for label, keep in (("none", lambda b: b == 0), ("one or more", lambda b: b > 0)):
            w = [wake for _, idle, wake, busy in rows if 60 <= idle < 250 and keep(busy)]
            if w:
                print(f"| {label} | {len(w)} | {sum(w) / len(w):.1f} | {statistics.median(w):.1f} |")
    fit = fit_step(points)
    if fit:
        _, w0, rise, a, b = fit
        print()
        print(f"step through the bins' means up to 250 us idle: {w0:.1f} us below {a} us idle, "
              f"rising by {rise:.1f} us to {b} us idle, flat after")


if __name__ == "__main__":
    main()
