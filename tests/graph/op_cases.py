"""Helpers that write op test cases with PyTorch references (used by
make_op_cases.py and make_grad_op_cases.py; see the former for the format).
OUT is the output directory, the first argument of the calling script."""
import base64
import json
import os
import sys

import numpy as np
import torch
import torch.nn.functional as F

np.seterr(over="ignore")  # the overflow cases overflow on purpose

OUT = sys.argv[1]
rng = np.random.default_rng(1234)
count = 0

NP_TO_NPU = {np.float16: "FLOAT16", np.float32: "FLOAT32", np.int32: "INT32", np.int8: "INT8",
             np.bool_: "BOOL", np.int64: "INT64"}


def npu_dtype(a):
    return NP_TO_NPU[a.dtype.type]


def tensor_json(a):
    a = np.array(order="C", object=a)
    return {"dtype": npu_dtype(a), "shape": [int(d) for d in a.shape],
            "data": base64.b64encode(a.tobytes()).decode()}


def attr_json(v):
    if isinstance(v, bool) or isinstance(v, (int, np.integer)):
        return {"i": int(v)}
    if isinstance(v, float):
        return {"f": v}
    if isinstance(v, str):
        return {"s": v}
    if isinstance(v, np.ndarray):
        return {"t": tensor_json(v)}
    if isinstance(v, (list, tuple)) and all(isinstance(x, (int, np.integer)) for x in v):
        return {"ints": {"values": [int(x) for x in v]}}
    if isinstance(v, (list, tuple)):
        return {"floats": {"values": [float(x) for x in v]}}
    raise TypeError(v)


def saturate(a):
    """Ascend 910 saturation mode: +-inf -> +-65504, NaN -> 0."""
    if a.dtype != np.float16:
        return a
    a = np.nan_to_num(a.astype(np.float32), nan=0.0, posinf=65504.0, neginf=-65504.0)
    return np.clip(a, -65504, 65504).astype(np.float16)


def case(name, op, inputs, outputs, attrs=None, inits=None, node_inputs=None, dtype=None, preset="ascend910b",
         extra_nodes=()):
    """inputs/inits: name -> array; outputs: name -> reference array."""
    global count
    inits = inits or {}
    d = os.path.join(OUT, "%03d_%s" % (count, name))
    count += 1
    os.makedirs(d, exist_ok=True)
    node = {"name": "n", "opType": op,
            "inputs": node_inputs if node_inputs is not None else list(inputs) + list(inits),
            "outputs": list(outputs)}
    if attrs:
        node["attributes"] = {k: attr_json(v) for k, v in attrs.items()}
    graph = {"name": name,
             "inputs": [{"name": k, "dtype": npu_dtype(v), "shape": [int(s) for s in v.shape]}
                        for k, v in inputs.items()],
             "initializers": [{"name": k, "tensor": tensor_json(v)} for k, v in inits.items()],
             "nodes": list(extra_nodes) + [node],
             "outputs": list(outputs)}
    with open(os.path.join(d, "graph.json"), "w") as f:
        json.dump(graph, f)
    for k, v in inputs.items():
        np.save(os.path.join(d, k + ".npy"), v)
    for k, v in outputs.items():
        if preset == "ascend910":
            v = saturate(v)
        np.save(os.path.join(d, "ref_" + k + ".npy"), np.array(order="C", object=v))
    if dtype is None:
        first = next(iter(inputs.values()), None)
        dtype = str(first.dtype) if first is not None else str(next(iter(outputs.values())).dtype)
    with open(os.path.join(d, "meta.txt"), "w") as f:
        f.write("%s %s %s\n" % (op, dtype, preset))


def rand(shape, dtype, lo=-3.0, hi=3.0):
    if dtype == np.int32:
        return rng.integers(-20, 21, size=shape).astype(np.int32)
    if dtype == np.int8:
        return rng.integers(-128, 128, size=shape).astype(np.int8)
    if dtype == np.int64:  # beyond int32, so a path that narrows shows
        return rng.integers(-2 ** 40, 2 ** 40, size=shape).astype(np.int64)
    if dtype == np.bool_:
        return rng.random(shape) < 0.5
    return rng.uniform(lo, hi, size=shape).astype(dtype)


def t(a):
    """fp16 inputs are widened: the reference computes in fp32, like the Vector unit."""
    x = torch.from_numpy(np.array(order="C", object=a))
    return x.float() if x.dtype == torch.float16 else x


def back(x, dtype):
    return x.numpy().astype(dtype) if x.dtype != torch.bool else x.numpy()


FLOATS = [np.float16, np.float32]

# Pooling windows the forward and gradient cases share: kernel, stride, pad, dilation, ceil mode.
POOL_GEOMETRIES = [dict(k=3, s=2, p=1, d=1, ceil=0), dict(k=2, s=2, p=0, d=1, ceil=1),
                   dict(k=3, s=1, p=0, d=2, ceil=0), dict(k=3, s=3, p=1, d=1, ceil=1)]
def lp_pool_ref(x, p, kernel, strides, pads, ceil):
    """ONNX's LpPool in float64: (sum over the window of |x|^p)^(1/p), padding adding 0 (symmetric pads)."""
    pool = {2: torch.nn.functional.avg_pool2d, 3: torch.nn.functional.avg_pool3d}[len(kernel)]
    s = pool(x.abs() ** p, kernel, strides, pads, ceil_mode=bool(ceil), count_include_pad=True, divisor_override=1)
    return s ** (1.0 / p)


# LpPool's windows and exponents: 2-D and 3-D, p = 1, 2, 3, ceil mode.
LP_POOLS = [dict(k=(3, 3), s=(2, 2), p=(1, 1), norm=2, ceil=0), dict(k=(2, 3), s=(1, 2), p=(0, 1), norm=1, ceil=1),
            dict(k=(3, 2), s=(2, 1), p=(1, 0), norm=3, ceil=0), dict(k=(2, 2, 3), s=(1, 2, 2), p=(1, 0, 1), norm=2,
                                                                       ceil=0)]

# 3-D windows (depth, height, width): asymmetric kernels and strides, ceil mode, a dilated depth.
POOLS_3D = [dict(k=(2, 3, 3), s=(1, 2, 2), p=(0, 1, 1), d=(1, 1, 1), ceil=0),
            dict(k=(3, 3, 3), s=(2, 2, 2), p=(1, 1, 1), d=(1, 1, 1), ceil=1),
            dict(k=(2, 2, 3), s=(1, 1, 1), p=(1, 0, 1), d=(2, 1, 1), ceil=0)]


def cube(a):
    """An operand as the Cube sees it: rounded to fp16, then exact in float64."""
    return torch.from_numpy(a.astype(np.float16).astype(np.float64))
