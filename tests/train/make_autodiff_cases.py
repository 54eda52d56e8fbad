#!/usr/bin/python3
"""Writes whole-graph gradient cases for tests/train/autodiff_torch_test.cc.

usage: make_autodiff_cases.py OUTDIR

Each case OUTDIR/NNN_name holds graph.json (a forward pass in training form
whose output "loss" is a scalar), one .npy per graph input, wrt.txt (the inputs
to differentiate, one per line), ref_loss.npy and ref_grad_NAME.npy: torch's
autograd through graph_reference.py's evaluator (float64; Cube operands and
incoming Cube gradients rounded to fp16, as the device does). Shapes are
random (seeded), several per model.
"""
import os
import sys

import numpy as np
import torch

import graph_reference as ref
from graph_reference import node

OUT = sys.argv[1]
dirs = ref.CaseDirs(OUT)
rng = np.random.default_rng(2024)


def f32(*shape, lo=-1.0, hi=1.0):
    return rng.uniform(lo, hi, size=shape).astype(np.float32)


def ints(values):
    return np.array(values, np.int64)


def write(name, nodes, data, params, consts):
    """data, params: name -> array (graph inputs; params are differentiated); consts: initializers."""
    d = dirs.new(name)
    inputs = dict(data)
    inputs.update(params)
    ref.write_json(os.path.join(d, "graph.json"), ref.graph_json(name, nodes, inputs, consts, ["loss"]))
    for k, a in inputs.items():
        ref.save(d, k, a)
    with open(os.path.join(d, "wrt.txt"), "w") as f:
        f.write("\n".join(params) + "\n")
    tensors = {k: torch.from_numpy(np.array(a)).double() if a.dtype.kind == "f" else torch.from_numpy(np.array(a))
               for k, a in list(inputs.items()) + list(consts.items())}
    for k in params:
        tensors[k].requires_grad_()
    values = ref.evaluate(nodes, tensors)
    loss = values["loss"]
    grads = torch.autograd.grad(loss, [tensors[k] for k in params])
    ref.save(d, "ref_loss", loss.detach().numpy().astype(np.float32))
    for k, g in zip(params, grads):
        ref.save(d, "ref_grad_" + k, g.numpy().astype(np.float32))


# ---- MLP with cross-entropy (Gemm as torch exports nn.Linear) ------------------------------
for v in range(3):
    b, d, h, c = (int(x) for x in rng.integers([2, 3, 4, 2], [17, 40, 33, 11]))
    nodes = [node("fc1", "Gemm", ["x", "w1", "b1"], ["h"], transB=1), node("relu", "Relu", ["h"], ["a"]),
             node("fc2", "Gemm", ["a", "w2", "b2"], ["logits"], transB=1),
             node("ce", "SoftmaxCrossEntropyLoss", ["logits", "y"], ["loss", "logp"])]
    write("mlp_%d" % v, nodes, {"x": f32(b, d, lo=-2, hi=2), "y": rng.integers(0, c, size=b).astype(np.int64)},
          {"w1": f32(h, d), "b1": f32(h), "w2": f32(c, h), "b2": f32(c)}, {})

# ---- elementwise with broadcasting, activations, a mean -------------------------------------
for v in range(3):
    b, d = (int(x) for x in rng.integers([2, 2], [9, 30]))
    nodes = [node("add", "Add", ["x", "p1"], ["t1"]), node("mul", "Mul", ["t1", "p2"], ["t2"]),
             node("sub", "Sub", ["p3", "t2"], ["t3"]), node("sig", "Sigmoid", ["p4"], ["s4"]),
             node("den", "Add", ["s4", "half"], ["t4"]), node("div", "Div", ["t3", "t4"], ["t5"]),
             node("tanh", "Tanh", ["t5"], ["t6"]), node("leaky", "LeakyRelu", ["t6"], ["t7"], alpha=0.2),
             node("gelu", "Gelu", ["t7"], ["t8"], approximate="tanh"), node("gelu2", "Gelu", ["t2"], ["t2g"]),
             node("sq", "Pow", ["t8", "two"], ["t9"]), node("one", "Add", ["t9", "onec"], ["t10"]),
             node("log", "Log", ["t10"], ["t11"]), node("sqrt", "Sqrt", ["t10"], ["t12"]),
             node("exp", "Exp", ["t7"], ["t13"]), node("neg", "Neg", ["t13"], ["t14"]),
             node("s1", "Add", ["t11", "t12"], ["t15"]), node("s2", "Add", ["t15", "t14"], ["t16"]),
             node("s3", "Add", ["t16", "t2g"], ["t17"]),
             node("mean", "ReduceMean", ["t17"], ["loss"], keepdims=0)]
    consts = {"half": np.array(0.5, np.float32), "two": np.array(2.0, np.float32), "onec": np.array(1.0, np.float32)}
    write("elementwise_%d" % v, nodes, {"x": f32(b, d, lo=-2, hi=2)},
          {"p1": f32(d), "p2": f32(b, 1), "p3": f32(1, d), "p4": f32(d)}, consts)

# ---- CNN: Conv (stride, pad, groups), BatchNorm in training, pools, Gemm ------------------------
for v in range(3):
    n, cin, hw = int(rng.integers(2, 5)), int(rng.choice([2, 4])), int(rng.integers(8, 13))
    g = int(rng.choice([1, 2]))
    m, stride = 4 * g, int(rng.choice([1, 2]))
    c = int(rng.integers(3, 8))
    # No bias before BatchNorm: its gradient is zero in exact arithmetic, rounding noise in any other.
    nodes = [node("conv1", "Conv", ["x", "wc1"], ["c1"], kernel_shape=[3, 3], pads=[1, 1, 1, 1],
                  strides=[stride, stride], group=g),
             node("bn", "BatchNormalization", ["c1", "gamma", "beta", "rm", "rv"], ["n1", "rm_out", "rv_out"],
                  epsilon=1e-5, momentum=0.9, training_mode=1),
             node("relu", "Relu", ["n1"], ["r1"]),
             node("pool", "MaxPool", ["r1"], ["p1"], kernel_shape=[2, 2], strides=[2, 2]),
             node("conv2", "Conv", ["p1", "wc2", "bc2"], ["c2"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
             node("avg", "AveragePool", ["c2"], ["a2"], kernel_shape=[2, 2], strides=[1, 1]),
             node("gap", "GlobalAveragePool", ["a2"], ["g2"]), node("flat", "Flatten", ["g2"], ["f"]),
             node("fc", "Gemm", ["f", "wf", "bf"], ["logits"], transB=1),
             node("ce", "SoftmaxCrossEntropyLoss", ["logits", "y"], ["loss", "logp"])]
    write("cnn_%d" % v, nodes,
          {"x": f32(n, cin, hw, hw, lo=-2, hi=2), "y": rng.integers(0, c, size=n).astype(np.int64),
           "rm": f32(m), "rv": f32(m, lo=0.5, hi=1.5)},
          {"wc1": f32(m, cin // g, 3, 3), "gamma": f32(m, lo=0.5, hi=1.5), "beta": f32(m),
           "wc2": f32(6, m, 3, 3), "bc2": f32(6), "wf": f32(c, 6), "bf": f32(c)}, {})

# ---- attention-like: Gather (embedding), LayerNorm, batched MatMul, Softmax, shape ops ------------
for v in range(3):
    bsz, t, d, vocab = (int(x) for x in rng.integers([1, 2, 4, 5], [4, 7, 17, 12]))
    nodes = [node("embed", "Gather", ["emb", "tokens"], ["e"]),
             node("ln", "LayerNormalization", ["e", "ln_w", "ln_b"], ["y", "ln_mean", "ln_inv"], axis=-1,
                  epsilon=1e-5),
             node("q", "MatMul", ["y", "wq"], ["qv"]), node("k", "MatMul", ["y", "wk"], ["kv"]),
             node("kt", "Transpose", ["kv"], ["kt"], perm=[0, 2, 1]), node("s", "MatMul", ["qv", "kt"], ["sc"]),
             node("scale", "Mul", ["sc", "inv_sqrt_d"], ["sc2"]), node("att", "Softmax", ["sc2"], ["at"], axis=-1),
             node("o", "MatMul", ["at", "y"], ["ov"]), node("cat", "Concat", ["ov", "y"], ["cv"], axis=2),
             node("split", "Split", ["cv", "halves"], ["s0", "s1"], axis=2), node("sum", "Add", ["s0", "s1"], ["r"]),
             node("flat", "Reshape", ["r", "flat_shape"], ["rf"]), node("bias", "Expand", ["pb", "bias_shape"], ["pe"]),
             node("addb", "Add", ["rf", "pe"], ["rb"]), node("unsq", "Unsqueeze", ["rb", "axis0"], ["ru"]),
             node("sq", "Squeeze", ["ru", "axis0"], ["rs"]), node("lsm", "LogSoftmax", ["rs"], ["lp"], axis=-1),
             node("rsum", "ReduceSum", ["lp", "axis1"], ["rows"], keepdims=0),
             node("mean", "ReduceMean", ["rows"], ["m"], keepdims=0), node("neg", "Neg", ["m"], ["loss"])]
    consts = {"inv_sqrt_d": np.array(1.0 / np.sqrt(d), np.float32), "halves": ints([d, d]),
              "flat_shape": ints([bsz * t, d]), "bias_shape": ints([bsz * t, d]), "axis0": ints([0]),
              "axis1": ints([1])}
    write("attention_%d" % v, nodes, {"tokens": rng.integers(0, vocab, size=(bsz, t)).astype(np.int64)},
          {"emb": f32(vocab, d), "ln_w": f32(d, lo=0.5, hi=1.5), "ln_b": f32(d), "wq": f32(d, d), "wk": f32(d, d),
           "pb": f32(1, d)}, consts)

# ---- Gemm with every attribute: alpha, beta, transA, transB, C broadcast -------------------------
# Y = alpha op(A) op(B) + beta C, then tanh and a weighted sum (so dY varies per element); A, B and C
# are all differentiated. C takes each shape that broadcasts unidirectionally to [M, N].
for v, (ta, tb, alpha, beta, cshape) in enumerate([(0, 0, 0.7, 1.5, "mn"), (1, 0, -1.3, 0.5, "n"),
                                                   (0, 1, 1.0, 2.0, "1n"), (1, 1, 2.5, -0.75, "m1"),
                                                   (1, 0, 1.0, 1.0, "scalar"), (0, 1, 0.5, 0.0, "mn")]):
    m, k, n_ = (int(x) for x in rng.integers([2, 3, 2], [13, 21, 11]))
    c = {"mn": (m, n_), "n": (n_,), "1n": (1, n_), "m1": (m, 1), "scalar": ()}[cshape]
    attrs = {"transA": ta, "transB": tb, "alpha": alpha, "beta": beta}
    nodes = [node("gemm", "Gemm", ["a", "b", "c"], ["y"], **attrs), node("tanh", "Tanh", ["y"], ["t"]),
             node("w", "Mul", ["t", "r"], ["tr"]), node("sum", "ReduceSum", ["tr"], ["loss"], keepdims=0)]
    write("gemm_%d" % v, nodes, {"r": f32(m, n_)},
          {"a": f32(*((k, m) if ta else (m, k))), "b": f32(*((n_, k) if tb else (k, n_))),
           "c": f32(*c, lo=-0.5, hi=0.5)}, {})

# ---- MSE regression: Sub, Mul, ReduceMean ------------------------------------------------------------
for v in range(2):
    b, d, o = (int(x) for x in rng.integers([2, 2, 1], [20, 12, 5]))
    nodes = [node("fc", "Gemm", ["x", "w", "bias"], ["pred"], transB=1), node("err", "Sub", ["pred", "target"], ["e"]),
             node("sq", "Mul", ["e", "e"], ["se"]), node("mse", "ReduceMean", ["se"], ["loss"], keepdims=0)]
    write("mse_%d" % v, nodes, {"x": f32(b, d), "target": f32(b, o)}, {"w": f32(o, d), "bias": f32(o)}, {})

# ---- seeded dropout between two layers -----------------------------------------------------------------
from dropout_mask import dropout_mask  # noqa: E402 (tests/graph, on the path graph_reference set)

for v in range(2):
    b, d, h, c = (int(x) for x in rng.integers([3, 3, 5, 2], [12, 20, 30, 8]))
    seed = int(rng.integers(0, 1 << 40))
    drop = node("drop", "SeededDropout", ["h", "ratio", "seed"], ["hd", "mask"])
    drop["mask"] = dropout_mask(b * h, seed, "drop", 0.3).reshape(b, h)
    nodes = [node("fc1", "Gemm", ["x", "w1"], ["h"], transB=1), drop, node("relu", "Relu", ["hd"], ["a"]),
             node("fc2", "Gemm", ["a", "w2"], ["logits"], transB=1),
             node("ce", "SoftmaxCrossEntropyLoss", ["logits", "y"], ["loss", "logp"])]
    write("dropout_%d" % v, nodes,
          {"x": f32(b, d), "y": rng.integers(0, c, size=b).astype(np.int64), "seed": np.array(seed, np.int64)},
          {"w1": f32(h, d), "w2": f32(c, h)}, {"ratio": np.array(0.3, np.float32)})

print("wrote %d cases to %s" % (dirs.count, OUT))
