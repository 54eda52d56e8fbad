#!/usr/bin/python3
"""npu-bench vector beside PyTorch's own CPU kernels, on the same tensors, sizes and threads.

usage: bench/vector_vs_torch.py [--bench build/bench/npu-bench] [--mib 64] [--threads 2] [--rounds 5]
                                [--reps 3] [--npu-bench-args ...]

Each round runs `npu-bench vector` once (its own median of --reps runs per op) and then the same ops
in torch (median of --reps runs each), so that both see the machine in the same state; rounds
alternate, and the table gives the median over rounds with the spread (min-max) of the ratio. torch
writes into a preallocated output (out=) where its API has one, and glibc keeps freed blocks for
reuse (MALLOC_MMAP_THRESHOLD_/MALLOC_TRIM_THRESHOLD_ set high, the script re-executes itself with
them), so torch pays no page faults (../shared/ANCHORS.md). Elementwise ops run on 64 MiB tensors
(rows of 1024 for Softmax and LayerNorm), depthwise 3x3 convolutions on MobileNetV2's layers.
torch 1.13 has no fp16 CPU kernels for these ops: fp16 rows compare npuserve's fp16 with its own fp32.
Prints a Markdown table and, with --json, one JSON object per row.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

HIGH = str(1 << 34)
if os.environ.get("MALLOC_MMAP_THRESHOLD_") != HIGH:
    env = dict(os.environ, MALLOC_MMAP_THRESHOLD_=HIGH, MALLOC_TRIM_THRESHOLD_=HIGH)
    os.execve(sys.executable, [sys.executable] + sys.argv, env)

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

ELEMENTWISE = ["Add", "Mul", "Relu", "Gelu", "Sigmoid", "Tanh", "Exp", "Softmax", "LayerNormalization"]
DEPTHWISE = [(32, 112, 1), (96, 112, 2), (144, 56, 1), (144, 56, 2), (192, 28, 1), (192, 28, 2), (384, 14, 1),
             (576, 14, 1), (576, 14, 2), (960, 7, 1)]  # bench/vector_bench.cc kMobileNetV2Depthwise
POOLS = [("MaxPool", 64, 112, 3, 2, 1), ("MaxPool", 128, 56, 2, 2, 0), ("AveragePool", 192, 28, 3, 1, 1),
         ("AveragePool", 256, 28, 2, 2, 0)]  # bench/vector_bench.cc kPoolLayers
WINDOW_OPS = ["DepthwiseConv3x3", "MaxPool", "AveragePool"]


def median_seconds(fn, reps):
    fn()
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def torch_round(mib, reps, wanted):
    """GB/s (read + written) per elementwise op in fp32, and microseconds per depthwise or pooling layer."""
    n = mib * 1024 * 1024 // 4
    g = torch.Generator().manual_seed(1)
    x = torch.rand(n, generator=g) * 4 - 2
    y = torch.rand(n, generator=g) * 4 - 2
    out = torch.empty(n)
    rows, rout = x.view(-1, 1024), out.view(-1, 1024)
    w, b = torch.randn(1024), torch.randn(1024)
    mean, rstd = torch.empty(rows.shape[0], 1), torch.empty(rows.shape[0], 1)
    ops = {
        "Add": (lambda: torch.add(x, y, out=out), 3),
        "Mul": (lambda: torch.mul(x, y, out=out), 3),
        "Relu": (lambda: torch.clamp_min(x, 0, out=out), 2),
        "Gelu": (lambda: torch._C._nn.gelu(x, out=out), 2),
        "Sigmoid": (lambda: torch.sigmoid(x, out=out), 2),
        "Tanh": (lambda: torch.tanh(x, out=out), 2),
        "Exp": (lambda: torch.exp(x, out=out), 2),
        "Softmax": (lambda: torch.ops.aten._softmax.out(rows, -1, False, out=rout), 2),
        "LayerNormalization": (lambda: torch.ops.aten.native_layer_norm.out(
            rows, [1024], w, b, 1e-5, out0=rout, out1=mean, out2=rstd), 2),
    }
    gbs = {op: operands * n * 4 / median_seconds(fn, reps) / 1e9 for op, (fn, operands) in ops.items()
           if op in wanted}
    dw = {}
    for c, hw, s in DEPTHWISE if "DepthwiseConv3x3" in wanted else []:
        xi = torch.randn(1, c, hw, hw, generator=g)
        wi, bi = torch.randn(c, 1, 3, 3, generator=g), torch.randn(c, generator=g)
        with torch.no_grad():
            dw["1x%dx%dx%d/s%d" % (c, hw, hw, s)] = 1e6 * median_seconds(
                lambda: F.conv2d(xi, wi, bi, s, 1, 1, c), reps)
    for op, c, hw, k, s, p in POOLS:
        if op not in wanted:
            continue
        xi = torch.randn(1, c, hw, hw, generator=g)
        fn = (lambda: F.max_pool2d(xi, k, s, p)) if op == "MaxPool" else (
            lambda: F.avg_pool2d(xi, k, s, p, count_include_pad=False))
        dw[(op, "1x%dx%dx%d/k%ds%dp%d" % (c, hw, hw, k, s, p))] = 1e6 * median_seconds(fn, reps)
    return gbs, dw


def npu_round(bench, mib, reps, threads, wanted, extra):
    env = dict(os.environ, OMP_NUM_THREADS=str(threads))
    cmd = [bench, "vector", "--mib", str(mib), "--reps", str(reps), "--ops", ",".join(wanted)] + extra
    lines = subprocess.run(cmd, env=env, check=True, capture_output=True, text=True).stdout.splitlines()
    gbs, dw, path = {}, {}, None
    for line in lines:
        r = json.loads(line)
        path = r.get("simd_path", path)
        if r.get("op") == "DepthwiseConv3x3":
            dw[r["shape"]] = r["us"]
        elif r.get("op") in ("MaxPool", "AveragePool"):
            dw[(r["op"], r["shape"])] = r["us"]
        elif "dtype" in r:
            gbs[(r["op"], r["dtype"])] = (r["gbs"], r["gbs_input"])
        elif r.get("op") == "triad":
            gbs["triad"] = r["gbs"]
    return gbs, dw, path


def spread(values):
    return "%.2f-%.2f" % (min(values), max(values))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bench", default=os.path.join(os.path.dirname(__file__), "..", "build", "bench", "npu-bench"))
    ap.add_argument("--mib", type=int, default=64)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--ops", default=",".join(ELEMENTWISE + WINDOW_OPS),
                    help="comma-separated ops (default all: %(default)s)")
    ap.add_argument("--npu-bench-args", nargs=argparse.REMAINDER, default=[],
                    help="passed on to npu-bench vector (e.g. --path avx2)")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    wanted = args.ops.split(",")
    unknown = [op for op in wanted if op not in ELEMENTWISE + WINDOW_OPS]
    if unknown:
        ap.error("unknown ops: %s" % ", ".join(unknown))
    rounds = []
    for _ in range(args.rounds):
        npu, npu_dw, path = npu_round(args.bench, args.mib, args.reps, args.threads, wanted, args.npu_bench_args)
        tgbs, tdw = torch_round(args.mib, args.reps, wanted)
        rounds.append((npu, npu_dw, tgbs, tdw))
    print("npu-bench vector (SIMD path %s) and torch %s, %d threads, %d MiB, %d rounds: medians over rounds, "
          "spread = min-max of the per-round ratio\n" % (path, torch.__version__, args.threads, args.mib, args.rounds))
    print("| op | dtype | npuserve GB/s | torch fp32 GB/s | ratio | ratio spread | fp16 input GB/s / fp32's |")
    print("|---|---|---|---|---|---|---|")
    rows = []
    for op in ELEMENTWISE:
        for dt in ("FLOAT32", "FLOAT16"):
            if (op, dt) not in rounds[0][0]:
                continue
            ours = [r[0][(op, dt)][0] for r in rounds]
            theirs = [r[2][op] for r in rounds]
            ratios = [a / b for a, b in zip(ours, theirs)]
            vs32 = ""
            if dt == "FLOAT16" and (op, "FLOAT32") in rounds[0][0]:
                vs32 = "%.2f" % statistics.median(r[0][(op, "FLOAT16")][1] / r[0][(op, "FLOAT32")][1] for r in rounds)
            row = dict(op=op, dtype=dt, npu_gbs=statistics.median(ours), torch_gbs=statistics.median(theirs),
                       ratio=statistics.median(ratios), spread=spread(ratios), fp16_input_vs_fp32=vs32)
            rows.append(row)
            print("| %s | %s | %.1f | %.1f | %.2f | %s | %s |" % (op, dt, row["npu_gbs"], row["torch_gbs"], row["ratio"],
                                                               row["spread"], vs32))
    triad = [r[0]["triad"] for r in rounds]
    print("\nSTREAM triad (npu-bench's anchor): %.1f GB/s (%s); Add/Mul/Relu fp16 over the triad:" %
          (statistics.median(triad), spread(triad)),
          ", ".join("%s %.2f" % (op, statistics.median(r[0][(op, "FLOAT16")][0] / r[0]["triad"] for r in rounds))
                    for op in ("Add", "Mul", "Relu") if (op, "FLOAT16") in rounds[0][0]))
    if rounds[0][1]:
        print("\n| depthwise 3x3 (MobileNetV2) and pooling, fp32, batch 1 | npuserve us | torch us | "
              "ratio (torch / ours) | spread |")
        print("|---|---|---|---|---|")
    for key in list(rounds[0][1].keys()):
        op, shape = key if isinstance(key, tuple) else ("DepthwiseConv3x3", key)
        ours = [r[1][key] for r in rounds]
        if shape.startswith("mobilenet"):
            theirs = [sum(v for k, v in r[3].items() if not isinstance(k, tuple)) for r in rounds]
        else:
            theirs = [r[3][key] for r in rounds]
        ratios = [b / a for a, b in zip(ours, theirs)]
        row = dict(op=op, shape=shape, npu_us=statistics.median(ours), torch_us=statistics.median(theirs),
                   ratio=statistics.median(ratios), spread=spread(ratios))
        rows.append(row)
        label = shape if op == "DepthwiseConv3x3" else "%s %s" % (op, shape)
        print("| %s | %.0f | %.0f | %.2f | %s |" % (label, row["npu_us"], row["torch_us"], row["ratio"], row["spread"]))
    if args.json:
        for row in rows:
            print(json.dumps(row))


main()
