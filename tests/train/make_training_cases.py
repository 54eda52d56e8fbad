#!/usr/bin/python3
"""Writes training runs for tests/train/trainer_torch_test.cc: a model (an
npu.v1 graph whose parameters are its float initializers), a few batches, the
optimizer, and torch's run of the same steps: the loss of each step and the
parameters and running statistics at the end.

usage: make_training_cases.py OUTDIR

torch runs the graph through graph_reference.py (float64; the Cube's operands
and incoming gradients rounded to fp16, as the device's Cube does), takes the
gradients from torch.autograd and steps with torch.optim (in float64): the
same arithmetic as the trainer at O0, so the two runs stay within fp32
rounding of each other.
"""
import os
import sys

import numpy as np
import torch

import graph_reference as ref
from graph_reference import node

OUT = sys.argv[1]
dirs = ref.CaseDirs(OUT)
rng = np.random.default_rng(99)


def f32(*shape, lo=-1.0, hi=1.0):
    return rng.uniform(lo, hi, size=shape).astype(np.float32)


def make_optimizer(params, cfg):
    kind, lr, wd = cfg["optimizer"], cfg["lr"], cfg["weight_decay"]
    if kind == "sgd":
        return torch.optim.SGD(params, lr=lr, weight_decay=wd)
    if kind == "momentum":
        return torch.optim.SGD(params, lr=lr, momentum=cfg["momentum"], weight_decay=wd)
    if kind == "adam":
        return torch.optim.Adam(params, lr=lr, weight_decay=wd)
    return torch.optim.AdamW(params, lr=lr, weight_decay=wd)


def write(name, nodes, x_shape, loss, params, buffers, consts, cfg, batches, skips=()):
    """params, buffers: initializers (name -> array); batches: list of (x, y); skips: the steps whose
    batch carries a NaN, so their gradients are not finite and the step is skipped, as apex's scaler
    skips an overflowing step: no optimizer.step(), so torch.optim's state and step count stay."""
    d = dirs.new(name)
    inits = dict(params)
    inits.update(buffers)
    inits.update(consts)
    x0 = {"x": np.zeros(x_shape, np.float32)}
    # The model as torch exports it for inference: BatchNormalization with one output.
    model = [dict(n, outputs=n["outputs"][:1], attrs=dict(n["attrs"], training_mode=0))
             if n["op"] == "BatchNormalization" else n for n in nodes]
    ref.write_json(os.path.join(d, "model.json"), ref.graph_json(name, model, x0, inits, ["out"]))
    with open(os.path.join(d, "config.txt"), "w") as f:
        f.write("%s %s %r %r %r %d\n" % (loss, cfg["optimizer"], cfg["lr"], cfg.get("momentum", 0.0),
                                        cfg["weight_decay"], len(batches)))
    p = {k: torch.from_numpy(v).double().requires_grad_() for k, v in params.items()}
    b = {k: torch.from_numpy(v).double() for k, v in buffers.items()}
    c = {k: torch.from_numpy(v) if v.dtype.kind != "f" else torch.from_numpy(v).double() for k, v in consts.items()}
    opt = make_optimizer(list(p.values()), cfg)
    losses = []
    for i, (x, y) in enumerate(batches):
        if i in skips:
            x = x.copy()
            x.flat[0] = np.nan
        ref.save(d, "x_%d" % i, x)
        ref.save(d, "y_%d" % i, y)
        values = dict(p)
        values.update(b)
        values.update(c)
        values["x"] = torch.from_numpy(x).double()
        values = ref.evaluate(nodes, values)
        out = values["out"]
        yt = torch.from_numpy(y)
        if loss == "cross_entropy":
            l = torch.nn.functional.cross_entropy(out, yt.long())
        else:
            l = torch.nn.functional.mse_loss(out, yt.double())
        opt.zero_grad()
        l.backward()
        finite = all(bool(torch.isfinite(t.grad).all()) for t in p.values())
        assert finite == (i not in skips), (name, i)
        if finite:
            opt.step()
        losses.append(l.item())
        for n in nodes:  # BatchNormalization's running statistics, ONNX's update
            if n["op"] == "BatchNormalization":
                b[n["inputs"][3]] = values[n["outputs"][1]].detach()
                b[n["inputs"][4]] = values[n["outputs"][2]].detach()
    ref.save(d, "ref_losses", np.array(losses, np.float32))
    with open(os.path.join(d, "skips.txt"), "w") as f:
        f.write("".join("%d\n" % i for i in sorted(skips)))
    # torch.optim's state per parameter, in the trainer's slot order (none for plain SGD).
    slots = {"momentum": ["momentum_buffer"], "adam": ["exp_avg", "exp_avg_sq"], "adamw": ["exp_avg", "exp_avg_sq"]}
    for k, t in p.items():
        for j, slot in enumerate(slots.get(cfg["optimizer"], [])):
            ref.save(d, "ref_state_%s_%d" % (k, j), opt.state[t][slot].numpy().astype(np.float32))
    for k, v in p.items():
        ref.save(d, "ref_" + k, v.detach().numpy().astype(np.float32))
    for k, v in b.items():
        ref.save(d, "ref_" + k, v.numpy().astype(np.float32))


# ---- an MLP with cross-entropy, SGD with momentum and weight decay ------------------------
bsz, dim, hid, cls = 16, 12, 20, 5
nodes = [node("fc1", "Gemm", ["x", "w1", "b1"], ["h"], transB=1), node("relu", "Relu", ["h"], ["a"]),
         node("fc2", "Gemm", ["a", "w2", "b2"], ["out"], transB=1)]
params = {"w1": f32(hid, dim, lo=-0.4, hi=0.4), "b1": f32(hid, lo=-0.1, hi=0.1), "w2": f32(cls, hid, lo=-0.4, hi=0.4),
          "b2": f32(cls, lo=-0.1, hi=0.1)}
batches = [(f32(bsz, dim, lo=-2, hi=2), rng.integers(0, cls, size=bsz).astype(np.int64)) for _ in range(6)]
write("mlp_momentum", nodes, (bsz, dim), "cross_entropy", params, {}, {},
      {"optimizer": "momentum", "lr": 0.1, "momentum": 0.9, "weight_decay": 1e-3}, batches, skips=(2,))
# Skipped steps first and in the middle: Adam's bias corrections count the applied steps only.
write("mlp_adam", nodes, (bsz, dim), "cross_entropy", params, {}, {},
      {"optimizer": "adam", "lr": 0.01, "weight_decay": 1e-2}, batches, skips=(0, 3))

# ---- a small CNN with BatchNorm (training mode), Adam --------------------------------------
n, c, hw, m, cls = 8, 1, 8, 4, 10
# Conv without bias before BatchNorm (as torch models have it): that bias's gradient is zero in exact
# arithmetic, and Adam would turn either side's rounding noise into full-size steps.
nodes = [node("conv", "Conv", ["x", "wc"], ["c1"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
         node("bn", "BatchNormalization", ["c1", "gamma", "beta", "rm", "rv"], ["n1", "rm_out", "rv_out"],
              epsilon=1e-5, momentum=0.9, training_mode=1),
         node("relu", "Relu", ["n1"], ["r1"]), node("pool", "MaxPool", ["r1"], ["p1"], kernel_shape=[2, 2], strides=[2, 2]),
         node("flat", "Flatten", ["p1"], ["f"]), node("fc", "Gemm", ["f", "wf", "bf"], ["out"], transB=1)]
params = {"wc": f32(m, c, 3, 3, lo=-0.5, hi=0.5), "gamma": np.ones(m, np.float32),
          "beta": np.zeros(m, np.float32), "wf": f32(cls, m * 16, lo=-0.2, hi=0.2), "bf": f32(cls, lo=-0.1, hi=0.1)}
buffers = {"rm": np.zeros(m, np.float32), "rv": np.ones(m, np.float32)}
batches = [(f32(n, c, hw, hw, lo=0, hi=1), rng.integers(0, cls, size=n).astype(np.int64)) for _ in range(4)]
write("cnn_adam", nodes, (n, c, hw, hw), "cross_entropy", params, buffers, {},
      {"optimizer": "adam", "lr": 0.005, "weight_decay": 0.0}, batches)

# ---- regression with MSE, AdamW -----------------------------------------------------------------
nodes = [node("fc1", "Gemm", ["x", "w1", "b1"], ["h"], transB=1), node("tanh", "Tanh", ["h"], ["a"]),
         node("fc2", "Gemm", ["a", "w2"], ["out"], transB=1)]
params = {"w1": f32(8, 6), "b1": f32(8), "w2": f32(3, 8)}
batches = [(f32(10, 6), f32(10, 3)) for _ in range(5)]
write("mse_adamw", nodes, (10, 6), "mse", params, {}, {}, {"optimizer": "adamw", "lr": 0.02, "weight_decay": 0.05},
      batches, skips=(1, 2))
write("mse_sgd", nodes, (10, 6), "mse", params, {}, {}, {"optimizer": "sgd", "lr": 0.1, "weight_decay": 0.0}, batches)

print("wrote %d cases to %s" % (dirs.count, OUT))
