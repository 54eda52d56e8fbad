"""A reference evaluator of npu.v1 graphs in torch (float64), for the training
tests: each node runs as torch's own op, and the Cube ops (MatMul, Gemm, Conv)
see their operands rounded to fp16 in the forward and their incoming gradient
rounded to fp16 in the backward, as the device's Cube does. Gradients then
come from torch.autograd."""
import json
import os
import sys

import numpy as np
import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "graph"))
from cube_rounding import g16, r16  # noqa: E402,F401 (graph_reference_nn reads them here)
from op_cases import NP_TO_NPU, attr_json, tensor_json  # noqa: E402


def attr(node, name, default=None):
    a = node.get("attrs", {}).get(name)
    return default if a is None else a


def _pool_args(node):
    k = attr(node, "kernel_shape")
    s = attr(node, "strides", [1] * len(k))
    p = attr(node, "pads", [0] * (2 * len(k)))
    return k, s, p


def evaluate(nodes, values):
    """Runs `nodes` (dicts: op, inputs, outputs, attrs) over `values` (name -> tensor); returns values."""
    v = dict(values)
    for n in nodes:
        ins = [v[i] if i else None for i in n["inputs"]]
        op = n["op"]
        if op == "Gemm":
            a, b = ins[0], ins[1]
            if attr(n, "transA", 0):
                a = a.t()
            if attr(n, "transB", 0):
                b = b.t()
            y = g16(attr(n, "alpha", 1.0) * (r16(a) @ r16(b)))
            if len(ins) > 2 and ins[2] is not None:
                y = y + attr(n, "beta", 1.0) * ins[2]
            outs = [y]
        elif op == "MatMul":
            outs = [g16(torch.matmul(r16(ins[0]), r16(ins[1])))]
        elif op == "Conv":
            sp = ins[0].dim() - 2
            p = attr(n, "pads", [0] * (2 * sp))
            conv = {1: F.conv1d, 2: F.conv2d, 3: F.conv3d}[sp]
            y = g16(conv(r16(ins[0]), r16(ins[1]), None, attr(n, "strides", [1] * sp), tuple(p[:sp]),
                         attr(n, "dilations", [1] * sp), attr(n, "group", 1)))
            if len(ins) > 2 and ins[2] is not None:
                y = y + ins[2].reshape((1, -1) + (1,) * sp)
            outs = [y]
        elif op in ("Add", "Sub", "Mul", "Div", "Pow"):
            a, b = ins
            outs = [{"Add": a + b, "Sub": a - b, "Mul": a * b, "Div": a / b, "Pow": torch.pow(a, b)}[op]]
        elif op in ("Relu", "Sigmoid", "Tanh", "Exp", "Log", "Neg", "Sqrt", "Identity", "Reciprocal"):
            fn = {"Relu": torch.relu, "Sigmoid": torch.sigmoid, "Tanh": torch.tanh, "Exp": torch.exp,
                  "Log": torch.log, "Neg": torch.neg, "Sqrt": torch.sqrt, "Identity": lambda x: x,
                  "Reciprocal": torch.reciprocal}[op]
            outs = [fn(ins[0])]
        elif op == "LeakyRelu":
            outs = [F.leaky_relu(ins[0], attr(n, "alpha", 0.01))]
        elif op == "Gelu":
            outs = [F.gelu(ins[0], approximate=attr(n, "approximate", "none"))]
        elif op in ("Softmax", "LogSoftmax"):
            fn = torch.softmax if op == "Softmax" else torch.log_softmax
            outs = [fn(ins[0], attr(n, "axis", -1))]
        elif op == "LayerNormalization":
            x = ins[0]
            axis = attr(n, "axis", -1) % x.dim()
            dims = tuple(range(axis, x.dim()))
            eps = attr(n, "epsilon", 1e-5)
            mean = x.mean(dim=dims, keepdim=True)
            inv = 1.0 / torch.sqrt(x.var(dim=dims, unbiased=False, keepdim=True) + eps)
            y = F.layer_norm(x, x.shape[axis:], ins[1], ins[2] if len(ins) > 2 else None, eps)
            outs = [y, mean, inv]
        elif op == "BatchNormalization":
            x, sc, bi, rm, rv = ins
            eps, mom = attr(n, "epsilon", 1e-5), attr(n, "momentum", 0.9)
            dims = tuple(d for d in range(x.dim()) if d != 1)
            y = F.batch_norm(x, None, None, sc, bi, True, 0.0, eps)
            outs = [y, rm * mom + x.mean(dim=dims) * (1 - mom), rv * mom + x.var(dim=dims, unbiased=False) * (1 - mom)]
        elif op == "MaxPool":
            k, s, p = _pool_args(n)
            pool = {1: F.max_pool1d, 2: F.max_pool2d, 3: F.max_pool3d}[len(k)]
            y, idx = pool(ins[0], k, s, tuple(p[:len(k)]), attr(n, "dilations", [1] * len(k)),
                          ceil_mode=bool(attr(n, "ceil_mode", 0)), return_indices=True)
            # ONNX's Indices count from the tensor's start, torch's from each plane's
            planes = torch.arange(idx.shape[0] * idx.shape[1]).reshape(idx.shape[:2] + (1,) * len(k))
            outs = [y, idx + planes * ins[0][0, 0].numel()][:len(n["outputs"])]
        elif op == "AveragePool":
            k, s, p = _pool_args(n)
            pool = {1: F.avg_pool1d, 2: F.avg_pool2d, 3: F.avg_pool3d}[len(k)]
            outs = [pool(ins[0], k, s, tuple(p[:len(k)]), ceil_mode=bool(attr(n, "ceil_mode", 0)),
                         count_include_pad=bool(attr(n, "count_include_pad", 0)))]
        elif op == "GlobalAveragePool":
            outs = [ins[0].mean(dim=tuple(range(2, ins[0].dim())), keepdim=True)]
        elif op == "Flatten":
            a = attr(n, "axis", 1)
            outs = [ins[0].reshape(int(np.prod(ins[0].shape[:a])), -1)]
        elif op == "Reshape":
            outs = [ins[0].reshape([int(d) for d in ins[1]])]
        elif op == "Transpose":
            outs = [ins[0].permute(*attr(n, "perm"))]
        elif op == "Concat":
            outs = [torch.cat(ins, attr(n, "axis"))]
        elif op == "Split":
            outs = list(torch.split(ins[0], [int(d) for d in ins[1]], attr(n, "axis", 0)))
        elif op == "Squeeze":
            outs = [ins[0].squeeze(int(ins[1][0]))]
        elif op == "Unsqueeze":
            outs = [ins[0].unsqueeze(int(ins[1][0]))]
        elif op == "Gather":
            idx = ins[1].long()
            axis = attr(n, "axis", 0)
            outs = [torch.index_select(ins[0], axis, idx.reshape(-1)).reshape(
                list(ins[0].shape[:axis]) + list(idx.shape) + list(ins[0].shape[axis + 1:]))]
        elif op in ("ReduceMean", "ReduceSum"):
            axes = [int(a) for a in ins[1]] if len(ins) > 1 else attr(n, "axes")
            fn = torch.mean if op == "ReduceMean" else torch.sum
            outs = [fn(ins[0], dim=axes, keepdim=bool(attr(n, "keepdims", 1)))]
        elif op == "Expand":
            outs = [ins[0].expand([int(d) for d in ins[1]])]
        elif op == "SeededDropout":
            mask = n["mask"]
            ratio = float(ins[1])
            scale = float(np.float32(1.0) / (np.float32(1.0) - np.float32(ratio)))
            outs = [ins[0] * torch.from_numpy(mask).double() * scale, torch.from_numpy(mask)]
        elif op == "SoftmaxCrossEntropyLoss":
            outs = [F.cross_entropy(ins[0], ins[1].long(), reduction=attr(n, "reduction", "mean")),
                    torch.log_softmax(ins[0], 1)]
        else:
            outs = _more(n, op, ins)
            if outs is None:
                raise ValueError("no reference for " + op)
        for name, t in zip(n["outputs"], outs):
            v[name] = t
    return v


def _ints(t):
    return [int(v) for v in np.array(t).reshape(-1)]


def _reduce_axes(n, ins, x):
    axes = _ints(ins[1]) if len(ins) > 1 and ins[1] is not None else attr(n, "axes", None)
    if not axes:
        axes = list(range(x.dim()))
    return sorted(a % x.dim() for a in axes)


def _pad_index(n, ins, shape):
    """Pad through numpy's own np.pad of an index array (-1 marks the constant), then ONNX's crop."""
    pads = _ints(ins[1])
    rank = len(shape)
    axes = [a % rank for a in _ints(ins[3])] if len(ins) > 3 and ins[3] is not None else list(range(rank))
    before, after = [0] * rank, [0] * rank
    for j, a in enumerate(axes):
        before[a], after[a] = pads[j], pads[len(axes) + j]
    mode = attr(n, "mode", "constant")
    idx = np.arange(int(np.prod(shape))).reshape(shape)
    width = [(max(b, 0), max(e, 0)) for b, e in zip(before, after)]
    if mode == "constant":
        idx = np.pad(idx, width, mode="constant", constant_values=-1)
    else:
        idx = np.pad(idx, width, mode={"reflect": "reflect", "edge": "edge", "wrap": "wrap"}[mode])
    crop = tuple(slice(-min(b, 0), idx.shape[d] + min(e, 0)) for d, (b, e) in enumerate(zip(before, after)))
    return idx[crop]


def _more(n, op, ins):
    """The ops of the per-op gradient cases (make_op_grad_cases.py); None for an unknown op."""
    x = ins[0] if ins else None
    unary = {"Erf": torch.erf, "Abs": torch.abs, "Sin": torch.sin, "Cos": torch.cos, "Softplus": F.softplus,
             "Silu": F.silu, "Mish": F.mish, "HardSwish": F.hardswish, "Floor": torch.floor, "Sign": torch.sign}
    if op in unary:
        return [unary[op](x)]
    if op == "Clip":
        lo = ins[1] if len(ins) > 1 else None
        hi = ins[2] if len(ins) > 2 else None
        return [torch.clamp(x, lo, hi)]
    if op == "HardSigmoid":
        return [torch.clamp(attr(n, "alpha", 0.2) * x + attr(n, "beta", 0.5), 0, 1)]
    if op == "Elu":
        return [F.elu(x, attr(n, "alpha", 1.0))]
    if op == "Celu":
        return [F.celu(x, attr(n, "alpha", 1.0))]
    if op == "Selu":
        a, g = attr(n, "alpha", 1.6732632423543772), attr(n, "gamma", 1.0507009873554805)
        return [g * torch.where(x > 0, x, a * torch.expm1(x))]
    if op == "PRelu":
        return [torch.where(x > 0, x, ins[1] * x)]
    if op == "Where":
        return [torch.where(ins[0].bool(), ins[1], ins[2])]
    if op == "Greater":
        return [ins[0] > ins[1]]
    if op in ("Max", "Min"):
        fn = torch.maximum if op == "Max" else torch.minimum
        y = ins[0]
        for t in ins[1:]:
            y = fn(y, t)
        return [y]
    if op in ("Sum", "Mean"):
        y = ins[0]
        for t in ins[1:]:
            y = y + t
        return [y / len(ins) if op == "Mean" else y]
    if op.startswith("Reduce"):
        axes = _reduce_axes(n, ins, x)
        keep = bool(attr(n, "keepdims", 1))
        if op == "ReduceMax":
            y = torch.amax(x, axes, keep)
        elif op == "ReduceMin":
            y = torch.amin(x, axes, keep)
        elif op == "ReduceProd":
            y = x
            for a in sorted(axes, reverse=True):
                y = torch.prod(y, a, keepdim=keep) if keep else torch.prod(y, a)
        elif op == "ReduceL2":
            y = torch.linalg.vector_norm(x, 2, axes, keep)
        elif op == "ReduceL1":
            y = torch.abs(x).sum(axes, keep)
        elif op == "ReduceSumSquare":
            y = (x * x).sum(axes, keep)
        elif op == "ReduceLogSumExp":
            y = torch.logsumexp(x, axes, keep)
        elif op == "ReduceLogSum":
            y = torch.log(x.sum(axes, keep))
        else:
            return None
        return [y]
    if op == "Slice":
        starts, ends = _ints(ins[1]), _ints(ins[2])
        axes = _ints(ins[3]) if len(ins) > 3 and ins[3] is not None else list(range(len(starts)))
        steps = _ints(ins[4]) if len(ins) > 4 and ins[4] is not None else [1] * len(starts)
        y = x
        for s0, e0, a, st in zip(starts, ends, axes, steps):
            keep = np.arange(x.shape[a])[slice(s0, e0, st)]  # Python's slicing: ONNX's clamping
            y = torch.index_select(y, a % x.dim(), torch.from_numpy(keep.astype(np.int64)))
        return [y]
    if op == "Pad":
        idx = torch.from_numpy(_pad_index(n, ins, list(x.shape)))
        flat = torch.cat([x.reshape(-1), torch.zeros(1, dtype=x.dtype)])  # index -1: the constant 0
        return [flat[idx]]
    if op == "Tile":
        return [x.repeat(*_ints(ins[1]))]
    if op == "CumSum":
        a = _ints(ins[1])[0]
        t = torch.flip(x, [a]) if attr(n, "reverse", 0) else x
        y = torch.cumsum(t, a)
        if attr(n, "exclusive", 0):
            y = y - t
        return [torch.flip(y, [a]) if attr(n, "reverse", 0) else y]
    if op == "GatherElements":
        a = attr(n, "axis", 0) % x.dim()
        idx = ins[1].long()
        return [torch.gather(x, a, torch.where(idx < 0, idx + x.shape[a], idx))]
    if op == "ScatterND":
        idx = ins[1].long()
        k = idx.shape[-1]
        dims = torch.tensor(list(x.shape[:k]))
        idx = torch.where(idx < 0, idx + dims, idx).reshape(-1, k)
        upd = ins[2].reshape((-1,) + tuple(x.shape[k:]))
        return [x.index_put(tuple(idx.t()), upd, accumulate=attr(n, "reduction", "none") == "add")]
    if op == "Einsum":
        eq = attr(n, "equation")
        contracts = len(ins) == 2 and any(ch.isalpha() and ch in eq.split("->")[0].split(",")[1]
                                          and ch not in eq.split("->")[1] for ch in eq.split("->")[0].split(",")[0])
        if contracts:  # the Cube's contraction: fp16 operands
            return [g16(torch.einsum(eq, r16(ins[0]), r16(ins[1])))]
        return [torch.einsum(eq, *ins)]
    if op == "Trilu":
        k = _ints(ins[1])[0] if len(ins) > 1 else 0
        return [torch.triu(x, k) if attr(n, "upper", 1) else torch.tril(x, k)]
    if op in ("DepthToSpace", "SpaceToDepth"):
        b = attr(n, "blocksize")
        nb, c, h, w = x.shape
        if op == "SpaceToDepth":  # ONNX's formula
            t = x.reshape(nb, c, h // b, b, w // b, b).permute(0, 3, 5, 1, 2, 4)
            return [t.reshape(nb, c * b * b, h // b, w // b)]
        if attr(n, "mode", "DCR") == "DCR":
            t = x.reshape(nb, b, b, c // (b * b), h, w).permute(0, 3, 4, 1, 5, 2)
        else:
            t = x.reshape(nb, c // (b * b), b, b, h, w).permute(0, 1, 4, 2, 5, 3)
        return [t.reshape(nb, c // (b * b), h * b, w * b)]
    from graph_reference_nn import evaluate_nn  # it reads this module's attr, r16 and g16
    return evaluate_nn(n, op, ins)


def graph_json(name, nodes, inputs, inits, outputs):
    """inputs, inits: name -> numpy array."""
    return {"name": name,
            "inputs": [{"name": k, "dtype": NP_TO_NPU[a.dtype.type], "shape": [int(d) for d in a.shape]}
                       for k, a in inputs.items()],
            "initializers": [{"name": k, "tensor": tensor_json(a)} for k, a in inits.items()],
            "nodes": [{"name": n["name"], "opType": n["op"], "inputs": n["inputs"], "outputs": n["outputs"],
                       "attributes": {k: attr_json(x) for k, x in n.get("attrs", {}).items()}} for n in nodes],
            "outputs": outputs}


def node(name, op, inputs, outputs, **attrs):
    return {"name": name, "op": op, "inputs": inputs, "outputs": outputs, "attrs": attrs}


class CaseDirs:
    """Numbered case directories OUT/NNN_name."""

    def __init__(self, out):
        self.out, self.count = out, 0

    def new(self, name):
        d = os.path.join(self.out, "%03d_%s" % (self.count, name))
        self.count += 1
        os.makedirs(d, exist_ok=True)
        return d


def write_json(path, obj):
    with open(path, "w") as f:
        json.dump(obj, f)


def save(d, name, a):
    np.save(os.path.join(d, name + ".npy"), np.array(order="C", object=a))
