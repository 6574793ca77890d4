#!/usr/bin/env python3
"""Capture PyTorch models for `gpusched import kineto` (issue #19).

For each model and batch size, in one Python process on a CUDA GPU:

  1. eager timing: warm-up, then CUDA events around each of --eager-iters
     forward passes (median, min, max, all samples), and the wall-clock
     time per pass over the same loop;
  2. CUDA-graph timing: the forward pass captured once with
     torch.cuda.CUDAGraph (after warm-up on a side stream, as PyTorch's
     documentation does it), then events around each of --graph-iters
     replays;
  3. a Kineto trace (torch.profiler, record_shapes=True) of --steps eager
     iterations after one warm-up step, each marked ProfilerStep#N, with the
     execution trace (torch.profiler.ExecutionTraceObserver) of the same
     window; every iteration ends with a synchronize, so the GPU work of one
     iteration lies inside its step;
  4. a Kineto trace of --steps replays of the captured graph (the importer's
     graph-launch path), without an execution trace (a replay runs no ops).

Weights are random (no download, no network). Models: torchvision's
resnet18, densenet121, mnasnet1_0 and shufflenet_v2_x1_0 on 224x224 images,
and a BERT-base encoder (transformers BertModel from a default BertConfig,
sequence length --seq-len); --models also takes gpt2 (transformers
GPT2Model, default GPT2Config) and any other torchvision.models builder,
for checks on models the importer was not developed on. Everything is
written under OUT/capture/ (OUT is --out, default $OUT), then packed into
OUT/capture.tar.gz, and the folder is removed so that one file comes back;
OUT/capture-summary.json repeats the summary. A model that fails is recorded with its error and the others go on.
--budget stops starting optional work (graph traces, then further models)
once that many seconds have passed.

Usage (from the repository root, on the GPU host):
    python3 scripts/gpu/capture_pytorch.py
    python3 scripts/gpu/capture_pytorch.py --models resnet18 --batches 1 --out /tmp/x
"""

import argparse
import gzip
import json
import os
import platform
import shutil
import statistics
import sys
import tarfile
import time
import traceback

# CUPTI teardown between profiling sessions crashes with live CUDA graphs
# (torch/profiler/profiler.py works around it the same way for inductor's
# graphs); set before torch loads.
os.environ.setdefault("TEARDOWN_CUPTI", "0")

MODELS = ["resnet18", "densenet121", "mnasnet1_0", "shufflenet_v2_x1_0", "bert-base"]
# Built from transformers' default configurations; every other name is a
# torchvision.models builder (checked before anything runs).
TRANSFORMERS = ["bert-base", "gpt2"]


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", default=os.environ.get("OUT", ""), help="output folder (default $OUT)")
    p.add_argument("--models", default=",".join(MODELS),
                   help="comma-separated: bert-base, gpt2 or any torchvision.models builder (default " + ",".join(MODELS) + ")")
    p.add_argument("--batches", default="1,8", help="comma-separated batch sizes")
    p.add_argument("--seq-len", type=int, default=128, help="BERT sequence length")
    p.add_argument("--warmup", type=int, default=10, help="eager warm-up passes")
    p.add_argument("--eager-iters", type=int, default=50)
    p.add_argument("--graph-iters", type=int, default=100)
    p.add_argument("--steps", type=int, default=2, help="profiled iterations per trace")
    p.add_argument("--budget", type=float, default=100.0, help="seconds after which graph traces are skipped (and, 20 s later, further models)")
    p.add_argument("--no-graph-trace", action="store_true", help="skip the graph-replay traces")
    a = p.parse_args(argv)
    if not a.out:
        p.error("--out is required when $OUT is not set")
    a.models = [m for m in a.models.split(",") if m]
    if not a.models:
        p.error("--models names no model")
    a.batches = [int(b) for b in a.batches.split(",") if b]
    if not a.batches or min(a.batches) < 1:
        p.error("--batches needs positive integers")
    for name in ("warmup", "eager_iters", "graph_iters", "steps", "seq_len"):
        if getattr(a, name) < 1:
            p.error("--%s must be at least 1" % name.replace("_", "-"))
    return a


def unknown_models(names):
    """The names that are neither a transformer built here nor a torchvision.models builder."""
    import torchvision

    return [m for m in names if m not in TRANSFORMERS and not callable(getattr(torchvision.models, m, None))]


def build_model(torch, name, batch, seq_len):
    """Returns (module, inputs tuple, description) with random weights on the GPU."""
    if name == "gpt2":
        from transformers import GPT2Config, GPT2Model

        cfg = GPT2Config()  # GPT-2 small: 12 layers, hidden 768, 12 heads
        model = GPT2Model(cfg)
        ids = torch.randint(0, cfg.vocab_size, (batch, seq_len), device="cuda")
        desc = {"family": "transformers.GPT2Model", "seq_len": seq_len, "layers": cfg.n_layer,
                "hidden": cfg.n_embd, "attn_implementation": getattr(cfg, "_attn_implementation", None)}
        return model.cuda().eval(), (ids,), desc
    if name == "bert-base":
        from transformers import BertConfig, BertModel

        cfg = BertConfig()  # bert-base: 12 layers, hidden 768, 12 heads
        model = BertModel(cfg)
        ids = torch.randint(0, cfg.vocab_size, (batch, seq_len), device="cuda")
        desc = {"family": "transformers.BertModel", "seq_len": seq_len, "layers": cfg.num_hidden_layers,
                "hidden": cfg.hidden_size, "attn_implementation": getattr(cfg, "_attn_implementation", None)}
        return model.cuda().eval(), (ids,), desc
    import torchvision

    model = getattr(torchvision.models, name)(weights=None)
    x = torch.randn(batch, 3, 224, 224, device="cuda")
    return model.cuda().eval(), (x,), {"family": "torchvision.models." + name, "image": [3, 224, 224]}


def event_times(torch, fn, iters):
    """Microseconds between CUDA events around each call of fn, and the
    wall-clock microseconds per call over the whole loop."""
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(iters)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(iters)]
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for i in range(iters):
        starts[i].record()
        fn()
        ends[i].record()
    torch.cuda.synchronize()
    wall = (time.perf_counter() - t0) / iters * 1e6
    return [s.elapsed_time(e) * 1000.0 for s, e in zip(starts, ends)], wall


def stats(samples, wall):
    return {"median_us": statistics.median(samples), "min_us": min(samples), "max_us": max(samples),
            "n": len(samples), "wall_per_iter_us": wall, "samples_us": [round(s, 3) for s in samples]}


def capture_graph(torch, fn):
    """Captures fn into a CUDA graph after warming it up on a side stream."""
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            fn()
    torch.cuda.current_stream().wait_stream(side)
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        fn()
    torch.cuda.synchronize()
    return g


def experimental_config(torch):
    """Asks Kineto for CUDA synchronization events (stream waits name the
    stream and event they wait on) where this torch supports it."""
    try:
        return torch._C._profiler._ExperimentalConfig(enable_cuda_sync_events=True)
    except (AttributeError, TypeError):
        return None


def profile_steps(torch, fn, steps, trace_path, et_path):
    """Kineto trace (and, with et_path, execution trace) of `steps`
    iterations after one warm-up step."""
    from torch.profiler import ExecutionTraceObserver, ProfilerActivity, profile, schedule

    et = None
    if et_path:
        et = ExecutionTraceObserver().register_callback(et_path)
    kwargs = {}
    cfg = experimental_config(torch)
    if cfg is not None:
        kwargs["experimental_config"] = cfg
    try:
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA], record_shapes=True,
                     schedule=schedule(wait=0, warmup=1, active=steps, repeat=1),
                     on_trace_ready=lambda p: p.export_chrome_trace(trace_path),
                     execution_trace_observer=et, **kwargs) as prof:
            for _ in range(steps + 1):
                fn()
                torch.cuda.synchronize()
                prof.step()
    finally:
        if et is not None:
            et.unregister_callback()


def gzip_file(path):
    with open(path, "rb") as fin, gzip.open(path + ".gz", "wb", compresslevel=9) as fout:
        shutil.copyfileobj(fin, fout)
    os.remove(path)
    return os.path.basename(path) + ".gz"


def capture_graph_part(torch, args, fn, tag, outdir, started, rec):
    """Times CUDA-graph replays of fn and traces a few of them."""
    g = capture_graph(torch, fn)
    rec["graph"] = stats(*event_times(torch, g.replay, args.graph_iters))
    if args.no_graph_trace:
        rec["graph_trace"] = "skipped (--no-graph-trace)"
    elif time.perf_counter() - started > args.budget:
        rec["graph_trace"] = "skipped (over the time budget)"
    else:
        gtrace = os.path.join(outdir, tag + ".graph.trace.json")
        profile_steps(torch, g.replay, args.steps, gtrace, None)
        rec["files"].append(gzip_file(gtrace))


def capture_one(torch, args, name, batch, outdir, started):
    tag = "%s-b%d" % (name, batch)
    rec = {"model": name, "batch": batch, "tag": tag}
    t0 = time.perf_counter()
    model, inputs, desc = build_model(torch, name, batch, args.seq_len)
    rec["desc"] = desc

    def fn():
        return model(*inputs)

    with torch.inference_mode():
        for _ in range(args.warmup):
            fn()
        torch.cuda.synchronize()
        rec["eager"] = stats(*event_times(torch, fn, args.eager_iters))
        trace = os.path.join(outdir, tag + ".trace.json")
        et = os.path.join(outdir, tag + ".et.json")
        profile_steps(torch, fn, args.steps, trace, et)
        rec["files"] = [gzip_file(trace), gzip_file(et)]
        try:
            capture_graph_part(torch, args, fn, tag, outdir, started, rec)
        except Exception as e:  # the eager part stands on its own
            rec["graph_error"] = "%s: %s" % (type(e).__name__, e)
            rec["graph_traceback"] = traceback.format_exc()
    del model, inputs
    torch.cuda.empty_cache()
    rec["seconds"] = round(time.perf_counter() - t0, 2)
    return rec


def environment(torch):
    env = {"python": platform.python_version(), "torch": torch.__version__, "cuda": torch.version.cuda,
           "cudnn": torch.backends.cudnn.version(), "cudnn_benchmark": torch.backends.cudnn.benchmark,
           "tf32_matmul": torch.backends.cuda.matmul.allow_tf32, "tf32_cudnn": torch.backends.cudnn.allow_tf32,
           "host": platform.node(), "date_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    p = torch.cuda.get_device_properties(0)
    env["device"] = {"name": p.name, "sms": p.multi_processor_count, "memory_bytes": p.total_memory,
                     "capability": "%d.%d" % (p.major, p.minor)}
    for mod in ("torchvision", "transformers"):
        try:
            env[mod] = __import__(mod).__version__
        except Exception as e:  # recorded, not fatal: the other models still run
            env[mod] = "unavailable: %s" % e
    return env


def warm_gpu(torch, seconds=1.0):
    """Runs matrix products for about `seconds` so the clocks are up."""
    a = torch.randn(4096, 4096, device="cuda")
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        for _ in range(10):
            a = (a @ a).clamp_(-1, 1)
        torch.cuda.synchronize()


def main(argv):
    args = parse_args(argv)
    started = time.perf_counter()
    outdir = os.path.join(args.out, "capture")
    os.makedirs(outdir, exist_ok=True)
    import torch

    if not torch.cuda.is_available():
        print("capture: no CUDA device visible to torch", file=sys.stderr)
        return 2
    unknown = unknown_models(args.models)
    if unknown:
        print("capture: unknown model(s) %s: not bert-base, gpt2 or a torchvision.models builder" % ", ".join(unknown), file=sys.stderr)
        return 2
    summary = {"env": environment(torch), "args": {k: v for k, v in vars(args).items() if k != "out"}, "models": []}
    warm_gpu(torch)
    failed = 0
    for name in args.models:
        for batch in args.batches:
            if time.perf_counter() - started > args.budget + 20:
                summary["models"].append({"model": name, "batch": batch, "error": "skipped: over the time budget"})
                failed += 1
                continue
            print("capture: %s batch %d (%.0f s)" % (name, batch, time.perf_counter() - started), file=sys.stderr, flush=True)
            try:
                rec = capture_one(torch, args, name, batch, outdir, started)
                graph = rec["graph"]["median_us"] if "graph" in rec else float("nan")
                print("capture:   eager %.1f us, graph %.1f us, %s s%s" % (rec["eager"]["median_us"], graph, rec["seconds"],
                      "; graph failed: " + rec["graph_error"] if "graph_error" in rec else ""), file=sys.stderr, flush=True)
                if "graph_error" in rec:
                    failed += 1
            except Exception as e:  # one model's failure must not lose the others
                rec = {"model": name, "batch": batch, "error": "%s: %s" % (type(e).__name__, e), "traceback": traceback.format_exc()}
                print("capture:   FAILED: %s" % rec["error"], file=sys.stderr, flush=True)
                failed += 1
            summary["models"].append(rec)
    summary["seconds"] = round(time.perf_counter() - started, 1)
    for path in (os.path.join(outdir, "summary.json"), os.path.join(args.out, "capture-summary.json")):
        with open(path, "w") as f:
            json.dump(summary, f, indent=1)
    with tarfile.open(os.path.join(args.out, "capture.tar.gz"), "w:gz") as tar:
        tar.add(outdir, arcname="capture")
    shutil.rmtree(outdir)
    print("capture: done in %.0f s, %d failed; %s" % (summary["seconds"], failed, os.path.join(args.out, "capture.tar.gz")), file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
