#!/usr/bin/env python3
"""The GPU's own floor: two GPU runs of one experiment compared as
`gpusched validate` compares the simulator with the GPU.

    python3 scripts/run-to-run.py OTHER.json REFERENCE.json

For each group of rows (all; the baseline's; the baseline's and the
others' of rl-physics and of the other families), the MAPE and median
error of OTHER's row medians against REFERENCE's, rows matched by
workload and scheduler name; then over all rows, the scheduler pairs
of a workload more than 5% apart on REFERENCE, those reversed on OTHER
(tied: within 1%), and the workloads whose fastest scheduler is the
same. Prints one Markdown table row (docs/results/calibration-h100.md,
"The host's speed").
"""
import itertools
import json
import statistics
import sys


def medians(path):
    rows = json.load(open(path))["rows"]
    return {(r["workload"], r["scheduler"]): (statistics.median(r["makespans_ns"]) / 1e3, r)
            for r in rows if r["makespans_ns"]}


def order(other, ref, keys):
    pairs = reversed_ = tied = best = workloads = 0
    for w in sorted({k[0] for k in keys}):
        ss = [k[1] for k in keys if k[0] == w]
        workloads += 1
        if min(ss, key=lambda s: ref[(w, s)][0]) == min(ss, key=lambda s: other[(w, s)][0]):
            best += 1
        for a, b in itertools.combinations(ss, 2):
            ya, yb = ref[(w, a)][0], ref[(w, b)][0]
            if abs(ya - yb) / min(ya, yb) <= 0.05:
                continue
            pairs += 1
            xa, xb = other[(w, a)][0], other[(w, b)][0]
            if abs(xa - xb) / min(xa, xb) <= 0.01:
                tied += 1
            elif (xa < xb) != (ya < yb):
                reversed_ += 1
    return f"{pairs}: {reversed_}, {tied} | {best}/{workloads}"


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    other, ref = medians(sys.argv[1]), medians(sys.argv[2])
    keys = [k for k in ref if k in other]
    rl = lambda k: ref[k][1].get("family") == "rl-physics"
    base = lambda k: bool(ref[k][1].get("baseline"))
    groups = [lambda k: True, base, lambda k: base(k) and rl(k),
              lambda k: not base(k) and rl(k), lambda k: not base(k) and not rl(k)]
    cells = []
    for g in groups:
        errs = [100 * (other[k][0] / ref[k][0] - 1) for k in keys if g(k)]
        cells.append(f"{statistics.mean(map(abs, errs)):.1f}% ({statistics.median(errs):+.1f}%)" if errs else "-")
    print("| other, reference | rows | all | baseline | baseline, rl-physics | others, rl-physics | others, other families"
          " | pairs: reversed, tied | best agrees |")
    print(f"| {sys.argv[1]}, {sys.argv[2]} | {len(keys)} | " + " | ".join(cells) + f" | {order(other, ref, keys)} |")


if __name__ == "__main__":
    main()
