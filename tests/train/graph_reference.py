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
from op_cases import NP_TO_NPU, attr_json, tensor_json  # noqa: E402


class _Round(torch.autograd.Function):
    """Forward: round to fp16 (the Cube's operand); backward: straight through."""

    @staticmethod
    def forward(ctx, x):
        return x.to(torch.float16).to(torch.float64)

    @staticmethod
    def backward(ctx, g):
        return g


class _RoundGrad(torch.autograd.Function):
    """Forward: identity; backward: the gradient rounded to fp16 (a Cube operand)."""

    @staticmethod
    def forward(ctx, x):
        return x.clone()

    @staticmethod
    def backward(ctx, g):
        return g.to(torch.float16).to(torch.float64)


def r16(x):
    return _Round.apply(x)


def g16(x):
    return _RoundGrad.apply(x)


def attr(node, name, default=None):
    a = node.get("attrs", {}).get(name)
    return default if a is None else a


def _pool_args(node):
    k = attr(node, "kernel_shape")
    s = attr(node, "strides", [1, 1])
    p = attr(node, "pads", [0, 0, 0, 0])
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
            p = attr(n, "pads", [0, 0, 0, 0])
            y = g16(F.conv2d(r16(ins[0]), r16(ins[1]), None, attr(n, "strides", [1, 1]), (p[0], p[1]),
                             attr(n, "dilations", [1, 1]), attr(n, "group", 1)))
            if len(ins) > 2 and ins[2] is not None:
                y = y + ins[2].reshape(1, -1, 1, 1)
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
            outs = [F.max_pool2d(ins[0], k, s, (p[0], p[1]), attr(n, "dilations", [1, 1]),
                                 ceil_mode=bool(attr(n, "ceil_mode", 0)))]
        elif op == "AveragePool":
            k, s, p = _pool_args(n)
            outs = [F.avg_pool2d(ins[0], k, s, (p[0], p[1]), ceil_mode=bool(attr(n, "ceil_mode", 0)),
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
            raise ValueError("no reference for " + op)
        for name, t in zip(n["outputs"], outs):
            v[name] = t
    return v


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
