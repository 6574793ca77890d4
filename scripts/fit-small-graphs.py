#!/usr/bin/env python3
"""Fit host.instantiate_base_ns and host.instantiate_per_copy_node_ns on a
calibrate "small graph builds" report (issue #18, session 17).

    python3 scripts/fit-small-graphs.py RAW.json PER_NODE_NS PER_SEGMENT_NS

RAW.json is `gpusched calibrate --only "small graph builds" --raw RAW.json`
(docs/results/raw/setgap-graphs-{h100,h200}.tgz hold the GPU's); PER_NODE_NS
and PER_SEGMENT_NS are the config's host.instantiate_per_node_ns and
instantiate_per_segment_ns, kept (they are fitted on larger graphs). Every
shape is one chain, so one segment. Least squares on the relative error of
the nine instantiate figures: the base first (with the copy cost), then, if
the base comes out negative, the base at 0 and the copy cost again from the
shapes with copies. Prints both fields and each shape's error before and
after (before: the base and copy cost as the config's per-node).
"""
import json
import sys

SHAPES = ["k", "kk", "kkkk", "kkkkkkkk", "kkkkkkkkkkkkkkkk", "c", "cc", "ckc", "ckkkkc"]


def solve(rows, rhs):
    """Least squares of rows x = rhs by the normal equations (2 unknowns at most)."""
    k = len(rows[0])
    m = [[sum(r[i] * r[j] for r in rows) for j in range(k)] for i in range(k)]
    v = [sum(r[i] * b for r, b in zip(rows, rhs)) for i in range(k)]
    if k == 1:
        return [v[0] / m[0][0]]
    det = m[0][0] * m[1][1] - m[0][1] * m[1][0]
    return [(v[0] * m[1][1] - m[0][1] * v[1]) / det, (m[0][0] * v[1] - m[1][0] * v[0]) / det]


def main():
    raw, per_node, per_seg = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
    got = {m["name"]: m["value"] for m in json.load(open(raw))["measurements"]}
    y = [got[f"small graph {s}: instantiate"] for s in SHAPES]
    copies = [s.count("c") for s in SHAPES]
    kernels = [len(s) - c for s, c in zip(SHAPES, copies)]
    fixed = [per_seg + per_node * k for k in kernels]
    base, copy = solve([[1 / g, c / g] for g, c in zip(y, copies)], [1 - f / g for f, g in zip(fixed, y)])
    note = ""
    if base < 0:
        note = f" (least squares {base:.0f} ns, not below 0)"
        base = 0.0
        idx = [i for i, c in enumerate(copies) if c]
        (copy,) = solve([[copies[i] / y[i]] for i in idx], [1 - (fixed[i] + base) / y[i] for i in idx])
    print(f"instantiate_base_ns {base:.0f}{note}, instantiate_per_copy_node_ns {copy:.0f}")
    for s, g, f, c in zip(SHAPES, y, fixed, copies):
        print(f"  {s:18s} GPU {g / 1e3:6.1f} us  fitted {(base + f + copy * c) / g - 1:+6.1%}")
    print(f"mean |error| {sum(abs((base + f + copy * c) / g - 1) for g, f, c in zip(y, fixed, copies)) / len(y):.1%}")


if __name__ == "__main__":
    main()
