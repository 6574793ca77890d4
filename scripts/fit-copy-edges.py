#!/usr/bin/env python3
"""Fit host.graph_launch_copy_edge_ns from calibrate "SET's job loop" (issue #18, session 20).

usage: fit-copy-edges.py SIM.json GPU.json [GPU.json ...]

SIM.json is the simulator's raw report of the probe with the config to fit
(the field left out or 0), each GPU.json the GPU's (`gpusched calibrate
--device cuda --only "SET's job loop" --raw F.json`). The probe times the
launch of job graphs that are chains of copies in (i), 2 us kernels (k) and
copies out (o), with and without their copy nodes updated; per shape the
GPU's launches less the simulated one are regressed, through the origin,
on the edges of the chain that meet a copy. Prints each shape and the fit.
"""
import json
import statistics
import sys

SHAPES = ["k", "i", "o", "ik", "ko", "io", "iko", "ikko", "iikoo"]


def copy_edges(shape):
    return sum(1 for a, b in zip(shape, shape[1:]) if a != "k" or b != "k")


def values(path):
    with open(path) as f:
        return {m["name"]: m["value"] for m in json.load(f)["measurements"]}


def main(argv):
    if len(argv) < 3:
        sys.exit(__doc__)
    sim = values(argv[1])
    gpus = [values(p) for p in argv[2:]]
    xs, ys = [], []
    for s in SHAPES:
        simulated = sim[f"SET's job shapes: {s}: launch"]
        got = []
        for g in gpus:
            got += [g[f"SET's job shapes: {s}: launch"], g[f"SET's job shapes: {s}: launch after copy updates"]]
        for v in got:
            xs.append(copy_edges(s))
            ys.append(v - simulated)
        print(f"{s:6s} copy edges {copy_edges(s)}  GPU median {statistics.median(got):8.0f} ns  simulated {simulated:8.0f} ns")
    fit = sum(x * y for x, y in zip(xs, ys)) / sum(x * x for x in xs)
    err = lambda b: statistics.mean(abs(y - b * x) for x, y in zip(xs, ys))
    print(f"graph_launch_copy_edge_ns: {fit:.0f} (mean |residual| {err(fit):.0f} ns, {err(0):.0f} without)")


if __name__ == "__main__":
    main(sys.argv)
