#!/usr/bin/env python3
"""Run-to-run spread of two profiles (gpusched profile -o) of the same launches.

usage: profile-spread.py RUN1.yaml RUN2.yaml [OLD1.yaml OLD2.yaml]

Points are matched by kernel and launch (grid, threads, shared, forced,
work, scalars; repeats in order). Per point, the spread is |a - b| / min(a, b)
of the two runs' median sample. Prints the median, 90th percentile and
largest spread, and how many points differ by more than 10%, over all
points and per kernel with such points. With OLD1 and OLD2 (an earlier pair
of runs), also the same figures for the launches that differed by more than
10% there, in both pairs. Needs PyYAML; without it, says so and exits 0.
"""
import sys

try:
    import yaml
except ImportError:
    print("profile-spread: no PyYAML here; compare the two profiles elsewhere")
    sys.exit(0)


def points(path):
    with open(path) as f:
        doc = yaml.safe_load(f)
    out = {}
    for k in doc.get("kernels") or []:
        seen = {}
        for pt in k.get("points") or []:
            key = (k["kernel"], pt["grid"], pt["threads"], pt.get("shared", 0), pt.get("forced", False),
                   pt.get("cycles", 0), pt.get("flops", 0), pt.get("bytes", 0), pt.get("scalars", ""))
            n = seen.get(key, 0)
            seen[key] = n + 1
            ns = sorted(pt["ns"])
            out[key + (n,)] = ns[len(ns) // 2]
    return out


def spreads(a, b, keys=None):
    keys = [k for k in (keys if keys is not None else a) if k in a and k in b]
    return {k: abs(a[k] - b[k]) / max(min(a[k], b[k]), 1e-9) for k in keys}


def summary(label, s):
    if not s:
        print(f"{label}: no points in common")
        return
    v = sorted(s.values())
    over = sum(1 for x in v if x > 0.10)
    print(f"{label}: {len(v)} points, spread median {100 * v[len(v) // 2]:.1f}%, "
          f"p90 {100 * v[int(0.9 * (len(v) - 1))]:.1f}%, max {100 * v[-1]:.1f}%; {over} differ by more than 10%")


def main():
    if len(sys.argv) not in (3, 5):
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        sys.exit(2)
    a, b = points(sys.argv[1]), points(sys.argv[2])
    s = spreads(a, b)
    summary("new pair", s)
    by = {}
    for k, x in s.items():
        if x > 0.10:
            by[k[0]] = by.get(k[0], 0) + 1
    for kernel, n in sorted(by.items(), key=lambda kv: -kv[1]):
        print(f"  {kernel}: {n} points differ by more than 10%")
    if len(sys.argv) == 5:
        o1, o2 = points(sys.argv[3]), points(sys.argv[4])
        so = spreads(o1, o2)
        summary("old pair", so)
        bad = [k for k, x in so.items() if x > 0.10]
        summary("old pair, its points over 10%", spreads(o1, o2, bad))
        summary("new pair, the same launches", spreads(a, b, bad))


if __name__ == "__main__":
    main()
