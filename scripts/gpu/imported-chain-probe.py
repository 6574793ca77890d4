#!/usr/bin/env python3
"""A chain of spin kernels through the capture route (issue #19).

A "model" whose kernels are known: N launches of torch.cuda._sleep(CYCLES)
on one stream (a one-thread spin kernel, each after the one before), for a
few CYCLES. For each, as scripts/gpu/capture_pytorch.py does for the real
models (its helpers): CUDA events around eager passes and around replays
of the chain captured as a CUDA graph, and a Kineto trace of two graph
replays (OUT/chain-cCYCLES.graph.trace.json.gz), which
scripts/gpu/imported-replay.sh imports and replays like the models' graph
traces. PyTorch's graph replay against the kernels' recorded durations
says how much time a graph adds between dependent kernels as the profiler
sees them; gpusched's replay of the same trace says what the replay adds.
OUT/chain-summary.json holds the times, in capture_pytorch's summary
format.

Usage (from the repository root, on the GPU host):
    python3 scripts/gpu/imported-chain-probe.py OUT [N]
"""

import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import capture_pytorch as cp  # noqa: E402  (sets TEARDOWN_CUPTI before torch loads)

CYCLES = (2000, 8000)


def chain_fn(torch, n, cycles):
    def fn():
        for _ in range(n):
            torch.cuda._sleep(cycles)
    return fn


def probe(torch, out, n, cycles):
    tag = "chain-c%d" % cycles
    rec = {"model": "chain", "batch": 1, "tag": tag, "kernels": n, "cycles": cycles}
    fn = chain_fn(torch, n, cycles)
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    rec["eager"] = cp.stats(*cp.event_times(torch, fn, 20))
    g = cp.capture_graph(torch, fn)
    rec["graph"] = cp.stats(*cp.event_times(torch, g.replay, 50))
    trace = os.path.join(out, tag + ".graph.trace.json")
    cp.profile_steps(torch, g.replay, 2, trace, None)
    rec["files"] = [cp.gzip_file(trace)]
    return rec


def main(argv):
    if len(argv) < 1:
        print(__doc__, file=sys.stderr)
        return 2
    out = argv[0]
    n = int(argv[1]) if len(argv) > 1 else 64
    os.makedirs(out, exist_ok=True)
    import torch

    summary = {"env": {"device": torch.cuda.get_device_name(0), "torch": torch.__version__, "cuda": torch.version.cuda},
               "models": []}
    for cycles in CYCLES:
        try:
            summary["models"].append(probe(torch, out, n, cycles))
        except Exception as e:  # the other chain still runs
            summary["models"].append({"model": "chain", "tag": "chain-c%d" % cycles, "error": "%s: %s" % (type(e).__name__, e)})
    with open(os.path.join(out, "chain-summary.json"), "w") as f:
        json.dump(summary, f, indent=1)
    for m in summary["models"]:
        if "error" in m:
            print("%s: %s" % (m["tag"], m["error"]))
        else:
            print("%s: %d kernels, eager %.1f us, graph %.1f us (medians)" % (m["tag"], n, m["eager"]["median_us"], m["graph"]["median_us"]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
