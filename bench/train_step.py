#!/usr/bin/python3
"""Issue 22's training cost: one step of the server's trainer (CreateTrainer,
Step: forward, loss, backward and SGD update in one step graph) against torch
eager's forward + backward + optimizer.step() on the same threads, for
resnet18 at 64x64 and a transformer encoder layer, each in fp32 (O0) and
O2.

    build/bench/npu-bench train [--threads 2] [--steps 10] [--batch 16]      # JSON lines
    PYTHONPATH=build/python /usr/bin/python3 bench/train_step.py --server build/server/rpc/npu-server \\
        [--threads 2] [--steps 10] [--batch 16]                             # a Markdown table

npu-bench train runs its server in process and this script against it
(--target, --json).

The server runs with --threads=T and torch with torch.set_num_threads(T). Each
figure is the median of --steps steps after two warm-ups (the first plans the
step graph). `npu ms` is the client's wall time of a Step call (the batch sent,
the step run, the loss back: what a user's loop waits for), `server ms` the
host time of the step's runs as the server measured them (profile), `torch ms`
the eager step. Ratios are per run, in the same process: the target is
npu / torch <= 2.
"""
import argparse
import io
import json
import re
import statistics
import subprocess
import time
import warnings

import torch
import torchvision

import npuserve


class Encoder(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.layer = torch.nn.TransformerEncoderLayer(256, 8, 1024, batch_first=True, dropout=0.0)
        self.head = torch.nn.Linear(256, 10)

    def forward(self, x):
        return self.head(self.layer(x).mean(1))


def models(batch):
    yield "resnet18 64x64", lambda: torchvision.models.resnet18(num_classes=10), (batch, 3, 64, 64)
    yield "transformer layer (d 256, seq 64)", Encoder, (batch, 64, 256)


def export(model, x):
    buf = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(model, (x,), buf, input_names=["x"], output_names=["y"],
                          dynamic_axes={"x": {0: "batch"}, "y": {0: "batch"}}, opset_version=17,
                          training=torch.onnx.TrainingMode.TRAINING, do_constant_folding=False)
    return buf.getvalue()


def torch_step_ms(model, x, labels, steps):
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    times = []
    for i in range(steps + 2):
        start = time.perf_counter()
        opt.zero_grad()
        torch.nn.functional.cross_entropy(model(x), labels).backward()
        opt.step()
        if i >= 2:
            times.append((time.perf_counter() - start) * 1e3)
    return statistics.median(times)


def npu_step_ms(client, onnx_bytes, x, labels, amp, steps):
    wall, server = [], []
    options = {"amp": amp, "loss_scale": "dynamic:128"} if amp == "O2" else {}
    with client.trainer(onnx_bytes, loss="cross_entropy", optimizer="sgd", lr=0.01, **options) as trainer:
        for i in range(steps + 2):
            start = time.perf_counter()
            r = trainer.step(x.numpy(), labels.numpy(), profile=True)
            if i >= 2:
                wall.append((time.perf_counter() - start) * 1e3)
                server.append(sum(p.host_time_us for p in r.profiles) / 1e3)
    return statistics.median(wall), statistics.median(server)


def measure(target, args, emit):
    with npuserve.connect(target, timeout=600) as client:
        for name, build, shape in models(args.batch):
            torch.manual_seed(0)
            model = build().train()
            x, labels = torch.randn(*shape), torch.randint(0, 10, (shape[0],))
            onnx_bytes = export(model, x)
            reference = torch_step_ms(model, x, labels, args.steps)
            for amp in ("O0", "O2"):
                wall, host = npu_step_ms(client, onnx_bytes, x, labels, amp, args.steps)
                emit(name, amp, wall, host, reference)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument("--server", help="an npu-server binary to start on a free loopback port")
    where.add_argument("--target", help="a running server's host:port (npu-bench train passes its own)")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--batch", type=int, default=16)
    parser.add_argument("--json", action="store_true", help="one JSON line per row instead of a Markdown table")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)

    def emit(name, amp, wall, host, reference):
        if args.json:
            print(json.dumps({"bench": "train", "model": name, "amp": amp, "threads": args.threads,
                              "batch": args.batch, "npu_ms": round(wall, 2), "server_ms": round(host, 2),
                              "torch_ms": round(reference, 2), "ratio": round(wall / reference, 3),
                              "target": "<=2.00", "met": wall / reference <= 2.0}), flush=True)
        else:
            print(f"| {name} | {amp} | {wall:.1f} | {host:.1f} | {reference:.1f} | {wall / reference:.2f} | |",
                  flush=True)

    if not args.json:
        print(f"| model | amp | npu ms | server ms | torch ms | npu / torch | (threads {args.threads}, "
              f"batch {args.batch}) |\n|---|---|---|---|---|---|---|")
    if args.target:
        return measure(args.target, args, emit)
    server = subprocess.Popen([args.server, "--listen=127.0.0.1:0", f"--threads={args.threads}"],
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        line = server.stdout.readline()
        measure("127.0.0.1:" + re.search(r"listening on 127\.0\.0\.1:(\d+)", line).group(1), args, emit)
    finally:
        server.terminate()
        server.wait(timeout=60)


if __name__ == "__main__":
    main()
