#!/usr/bin/env python3
"""Fit host.graph_launch_copy_edge_ns from calibrate "SET's job loop" (issue #18, session 20).

usage: fit-copy-edges.py [--chains-only] SIM.json GPU.json [GPU.json ...]

SIM.json is the simulator's raw report of the probe with the config to fit
(the field left out or 0), each GPU.json the GPU's (`gpusched calibrate
--device cuda --only "SET's job loop" --raw F.json`). The probe times the
launch of job graphs that are chains of copies in (i), 2 us kernels (k) and
copies out (o), with and without their copy nodes updated; per shape the
GPU's launches less the simulated one are regressed, through the origin,
on the edges that meet a copy. Prints each shape and the fit.

--chains-only fits the chains alone (k, i, o, ik, ko, io, iko, ikko, iikoo),
as the configs do: the fan shapes (k<8> ...) also carry the simulator's cost
of forked kernel branches, which it charges as independent ones (k<8>
simulated 9.8 us on the H100, 2.5-4.7 on the GPU), and an edge fit over them
would absorb that error.
"""
import json
import statistics
import sys

SHAPES = ["k", "i", "o", "ik", "ko", "io", "iko", "ikko", "iikoo", "k<8>", "i<8>", "<8>o", "i<8>o", "k<8>k",
          "k<16>", "i<16>", "i<16>o", "k<32>", "i<32>", "i<32>o", "k<64>", "i<64>", "i<64>o"]


def items(shape):
    """The shape's nodes on its stream: 'i', 'k', 'o', or an int n for n
    kernels forked from the stream and joined back."""
    out, i = [], 0
    while i < len(shape):
        if shape[i] == "<":
            j = shape.index(">", i)
            out.append(int(shape[i + 1:j]))
            i = j + 1
        else:
            out.append(shape[i])
            i += 1
    return out


def copy_edges(shape):
    """Edges that meet a copy: consecutive stream nodes, a fork's kernels
    from the node before it and into the node after it, and the node
    before a fork to the node after it (the stream's own order)."""
    n, prev = 0, None
    for it in items(shape):
        if isinstance(it, int):
            if prev is not None and prev != "k":
                n += it
            prev = ("fork", it, prev)
            continue
        if isinstance(prev, tuple):
            _, width, before = prev
            if it != "k":
                n += width
            if before is not None and (before != "k" or it != "k"):
                n += 1
        elif prev is not None and (prev != "k" or it != "k"):
            n += 1
        prev = it
    return n


def values(path):
    with open(path) as f:
        return {m["name"]: m["value"] for m in json.load(f)["measurements"]}


def main(argv):
    chains_only = "--chains-only" in argv
    argv = [a for a in argv if a != "--chains-only"]
    if len(argv) < 3:
        sys.exit(__doc__)
    sim = values(argv[1])
    gpus = [values(p) for p in argv[2:]]
    xs, ys = [], []
    for s in SHAPES:
        if chains_only and "<" in s:
            continue
        if f"SET's job shapes: {s}: launch" not in sim:
            continue
        simulated = sim[f"SET's job shapes: {s}: launch"]
        got = []
        for g in gpus:
            if f"SET's job shapes: {s}: launch" not in g:
                continue
            got += [g[f"SET's job shapes: {s}: launch"], g[f"SET's job shapes: {s}: launch after copy updates"]]
        if not got:
            continue
        for v in got:
            xs.append(copy_edges(s))
            ys.append(v - simulated)
        print(f"{s:6s} copy edges {copy_edges(s)}  GPU median {statistics.median(got):8.0f} ns  simulated {simulated:8.0f} ns")
    fit = sum(x * y for x, y in zip(xs, ys)) / sum(x * x for x in xs)
    err = lambda b: statistics.mean(abs(y - b * x) for x, y in zip(xs, ys))
    print(f"graph_launch_copy_edge_ns: {fit:.0f} (mean |residual| {err(fit):.0f} ns, {err(0):.0f} without)")


if __name__ == "__main__":
    main(sys.argv)
