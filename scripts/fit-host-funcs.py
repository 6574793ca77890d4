#!/usr/bin/env python3
"""Fits the callback thread's rewake R and take point T on calibrate's
"host functions over streams" (issue #18, session 18).

usage: python3 scripts/fit-host-funcs.py RAW.json [RAW.json...]

Per raw report (calibrate --raw), from two streams' host functions g us
apart (g = 0..60): S1, the lone host function's span on its stream (1
stream, its first span: the callback thread's wake W and the function C);
C, the second span at g = 0 less S1 (the two share one wake); then the
second's span over g, a piecewise line: ready before the thread takes the
ready ones (T after the first became ready) it runs right after the first,
S1 + C - g; ready after that and before the first ends, after the thread
is woken again, S1 + R + C - g; ready later, S1 (the thread idle again).
T is the boundary (between two swept gaps) with the least squared error, R
the mean over its part. The simulator had them as front_end.callback_rewake_ns
and callback_take_after_ns in session 18; with the fit every SET file got
worse, and the model was removed in session 19 (calibration-h100.md,
"Session 18: SET's host callbacks"): this script keeps the measurement.
Prints every report's fit and the spans against it.
"""
import json
import re
import statistics
import sys


def spans(path):
    rep = json.load(open(path))
    ms = {m["name"]: m["value"] for m in rep["measurements"]}
    s1 = ms["host functions on 1 streams, 0 us apart: first span"]
    last = {}
    for name, v in ms.items():
        m = re.fullmatch(r"host functions on 2 streams, (\d+) us apart: last span", name)
        if m:
            last[int(m.group(1))] = v
    return rep.get("device", "?"), s1, last, ms


def fit(s1, last):
    c = last[0] - s1
    gaps = sorted(last)
    best = None
    for i in range(len(gaps)):  # joined: gaps[:i+1]
        for j in range(i + 1, len(gaps) + 1):  # rewoken: gaps[i+1:j]; idle: gaps[j:]
            joined, rewoken, idle = gaps[: i + 1], gaps[i + 1 : j], gaps[j:]
            r = statistics.mean(last[g] + g * 1e3 - s1 - c for g in rewoken) if rewoken else 0.0
            err = sum((last[g] - (s1 + c - g * 1e3)) ** 2 for g in joined)
            err += sum((last[g] - (s1 + r + c - g * 1e3)) ** 2 for g in rewoken)
            err += sum((last[g] - s1) ** 2 for g in idle)
            if best is None or err < best[0]:
                t = (joined[-1] + (rewoken or idle or [joined[-1]])[0]) / 2 * 1e3
                best = (err, t, r, joined, rewoken, idle)
    err, t, r, joined, rewoken, idle = best
    return c, t, r, joined, rewoken, idle, (err / len(gaps)) ** 0.5


def main():
    args = sys.argv[1:]
    if not args:
        sys.exit(__doc__)
    for path in args:
        dev, s1, last, ms = spans(path)
        c, t, r, joined, rewoken, idle, rms = fit(s1, last)
        print(f"{path} ({dev}): S1 {s1:.0f} ns (wake W {s1 - c:.0f} + callback C {c:.0f}); thread takes the ready ones T {t:.0f} ns "
              f"after the first is ready; rewake R {r:.0f} ns; rms {rms:.0f} ns")
        print(f"  rewake {max(r, 0):.0f} ns, take point {t:.0f} ns "
              f"(joined gaps {joined}, rewoken {rewoken}, idle {idle} us)")
        for g in sorted(last):
            part = "joined" if g in joined else "rewoken" if g in rewoken else "idle"
            pred = {"joined": s1 + c - g * 1e3, "rewoken": s1 + r + c - g * 1e3, "idle": s1}[part]
            print(f"  gap {g:2d} us: second span {last[g]:7.0f} ns, fit {pred:7.0f} ({part})")
        for n in (4, 8):
            for what in ("first span", "mean span", "span rise per function", "next kernel delay"):
                k = f"host functions on {n} streams, 0 us apart: {what}"
                if k in ms:
                    print(f"  {k}: {ms[k]:.0f}")
        for k in sorted(x for x in ms if x.startswith("host function loop") or x == "host callback duration"):
            print(f"  {k}: {ms[k]:.3g}")


if __name__ == "__main__":
    main()
