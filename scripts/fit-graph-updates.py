#!/usr/bin/env python3
"""Fits host.graph_launch_changed_node_ns and graph_launch_kernel_change_ns on
calibrate's "graph exec updates" (issue #18, ACS-SW's dispatch graph).

usage: python3 scripts/fit-graph-updates.py RAW.json [RAW.json...]

Per raw report (calibrate --raw; docs/results/raw/acsgraph-{h100,h200}.tgz
hold session 18's), at each exec size N (N kernel nodes on N branches, the
stream synchronized between steps): the launch after the updates less the
launch with no update at the same N (case "dnn no update") is what the
updates cost the launch. Per updated node (N of them in cases empty, dnn and
rl, which update every node to another grid; 1 in "dnn one node"):

  changed node   C = median over N and the cases empty, dnn, rl of
                     (launch - launch with no update) / N
  kernel change  K = median over N of ("dnn kernel change" launch - "dnn"
                     launch) / N

The model: cuGraphLaunch costs C per kernel node whose launch configuration
changed since the exec's previous launch, C + K when its kernel changed.
Prints the per-N figures, the fit, its spread (min-max of the per-N
figures) and the fit error: mean |predicted / measured - 1| of the launches
of the synchronized update cases (prediction: the launch with no update at
that N plus the model), with K alone as before the field (C = 0) beside it.
Cases not fitted and shown against the model: "behind" (the exec's earlier
launches pending behind a spin kernel) and "spin running" (arguments only,
the previous launch running).
"""
import json
import re
import statistics
import sys

NAME = re.compile(r"graph exec updates N=(\d+) (.+): (update per node|launch)")


def load(path):
    rep = json.load(open(path))
    launch, update = {}, {}
    for m in rep["measurements"]:
        g = NAME.fullmatch(m["name"])
        if not g:
            continue
        key = (int(g.group(1)), g.group(2))
        (update if g.group(3) == "update per node" else launch)[key] = m["value"]
    return rep.get("device", "?"), launch, update


def updated(n, case):
    if case.endswith("no update"):
        return 0
    if case.endswith("one node"):
        return 1
    return n


def fit(launch):
    sizes = sorted({n for n, _ in launch})
    per = {}
    for case in ("empty", "dnn", "rl"):
        per[case] = [(launch[(n, case)] - launch[(n, "dnn no update")]) / n for n in sizes]
    c_all = [v for vs in per.values() for v in vs]
    k_all = [(launch[(n, "dnn kernel change")] - launch[(n, "dnn")]) / n for n in sizes]
    return sizes, per, statistics.median(c_all), (min(c_all), max(c_all)), statistics.median(k_all), k_all


def predict(launch, n, case, c, k):
    u = updated(n, case)
    kc = u if "kernel change" in case else 0
    changed = 0 if case == "spin running" else u
    return launch[(n, "dnn no update")] + changed * c + kc * k


def error(launch, sizes, cases, c, k):
    errs = [abs(predict(launch, n, case, c, k) / launch[(n, case)] - 1) for n in sizes for case in cases]
    return 100 * statistics.mean(errs)


def main(paths):
    for path in paths:
        dev, launch, update = load(path)
        sizes, per, c, (cmin, cmax), k, ks = fit(launch)
        print(f"{path} ({dev}):")
        print("  N     " + "  ".join(f"{n:>7}" for n in sizes))
        for case, vs in per.items():
            print(f"  {case:<6}" + "  ".join(f"{v:7.0f}" for v in vs) + "  ns a changed node")
        print("  kchg  " + "  ".join(f"{v:7.0f}" for v in ks) + "  ns a changed kernel, beyond a changed grid")
        print(f"  fit: graph_launch_changed_node_ns {c:.0f} (per-N {cmin:.0f}-{cmax:.0f}, spread "
              f"{100 * (cmax - cmin) / c:.0f}%), graph_launch_kernel_change_ns {k:.0f} (per-N {min(ks):.0f}-{max(ks):.0f})")
        fitted = ["empty", "dnn", "rl", "dnn one node", "dnn kernel change"]
        print(f"  fit error over {len(fitted) * len(sizes)} synchronized launches: {error(launch, sizes, fitted, c, k):.1f}% "
              f"(without the changed-node cost, kernel change alone: {error(launch, sizes, fitted, 0, k):.1f}%)")
        for case in ("dnn behind", "dnn kernel change behind", "spin running"):
            e = [predict(launch, n, case, c, k) / launch[(n, case)] - 1 for n in sizes]
            print(f"  not fitted, {case}: model/measured - 1 per N " + " ".join(f"{100 * v:+.0f}%" for v in e))
        ups = {case: statistics.median(update[(n, case)] for n in sizes) for case in ("empty", "dnn", "rl", "dnn kernel change", "spin running")}
        print("  update per node, median over N: " + ", ".join(f"{case} {v:.0f} ns" for case, v in ups.items()))


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    main(sys.argv[1:])
