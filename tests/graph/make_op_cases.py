#!/usr/bin/python3
"""Writes op test cases with PyTorch references for tests/graph/ops_torch_test.cc.

usage: make_op_cases.py OUTDIR

Each case is a directory OUTDIR/NNN_name holding graph.json (npu.v1.Graph in
protobuf's JSON mapping), one INPUT.npy per graph input, one ref_OUTPUT.npy per
graph output (computed by torch, never by the code under test) and meta.txt
("op dtype preset"). fp16 references are computed in fp32 from the fp16 inputs
and rounded once, which is the numerics contract of DESIGN.md; Cube ops
(MatMul, Gemm, Conv with group 1) round their operands to fp16 first, as the
NPU does, and accumulate in float64.
"""
import numpy as np
import torch
import torch.nn.functional as F

import op_cases
from op_cases import FLOATS, LP_POOLS, OUT, POOL_GEOMETRIES, POOLS_3D, back, case, cube, rand, rng, t, lp_pool_ref  # noqa: F401,E501
from rnn_reference import onnx_rnn, torch_to_onnx_gates

# ---- binary elementwise with broadcasting ------------------------------------
BINARY_SHAPES = [((3, 5), (3, 5)), ((2, 1, 7), (4, 1)), ((1,), (6,)), ((), (3, 2)), ((3, 4099), (4099,)),
                 ((5, 1, 3), (1, 4, 1))]
BINARY = {
    "Add": lambda a, b: a + b, "Sub": lambda a, b: a - b, "Mul": lambda a, b: a * b,
    "Div": lambda a, b: a / b, "Pow": torch.pow, "Max": torch.maximum, "Min": torch.minimum,
}
INTS = [np.int32, np.int64]
for op, fn in BINARY.items():
    for dt in FLOATS + INTS:
        if op == "Pow" and dt in INTS:
            continue
        for i, (sa, sb) in enumerate(BINARY_SHAPES):
            if dt in INTS and i > 2 and not (dt == np.int64 and i == 4):
                continue
            a, b = rand(sa, dt), rand(sb, dt)
            if op == "Div":
                b = np.where(np.abs(b) < 0.5, 1, b).astype(dt)
            if op == "Pow":
                a, b = rand(sa, dt, 0.1, 3.0), rand(sb, dt, -2.0, 2.0)
            if op == "Mul" and dt == np.int64:  # products past 2^63 wrap in torch too; keep some
                a = a // 2 ** 12
            if op == "Div" and dt == np.int64:  # small divisors of both signs: truncation shows
                b = rng.integers(-9, 10, size=sb).astype(np.int64)
                b[b == 0] = -3
            if op == "Div" and dt in INTS:
                ref = torch.div(t(a), t(b), rounding_mode="trunc")
            else:
                ref = fn(t(a), t(b))
            case("%s_%s_%d" % (op, dt.__name__, i), op, {"a": a, "b": b}, {"y": back(ref, dt)})
# int64 wrap-around: torch's int64 arithmetic wraps like two's complement
big64 = np.array([2 ** 62, -2 ** 63, 2 ** 63 - 1, -7, 7], np.int64)
for op, fn in (("Add", lambda a, b: a + b), ("Sub", lambda a, b: a - b), ("Mul", lambda a, b: a * b)):
    other = np.array([2 ** 62, -1, 1, 3, -2], np.int64)
    case("%sWrap_int64" % op, op, {"a": big64, "b": other}, {"y": fn(t(big64), t(other)).numpy()})

# ---- comparisons (BOOL out); NaN compares false, Equal included ----------------------
COMPARE = {"Equal": torch.eq, "Less": torch.lt, "LessOrEqual": torch.le, "Greater": torch.gt,
           "GreaterOrEqual": torch.ge}
for op, fn in COMPARE.items():
    for dt in FLOATS + INTS + [np.int8, np.bool_]:
        if dt == np.bool_ and op != "Equal":
            continue
        for i, (sa, sb) in enumerate(BINARY_SHAPES[:3] + [BINARY_SHAPES[5]]):
            a, b = rand(sa, dt), rand(sb, dt)
            if dt != np.bool_:  # ties, so Equal and the OrEqual forms see true cases
                b = np.where(rng.random(b.shape) < 0.3, 0, b).astype(dt)
                a = np.where(rng.random(a.shape) < 0.3, 0, a).astype(dt)
            if dt in FLOATS and a.size > 1:
                a.flat[1] = np.nan
            case("%s_%s_%d" % (op, dt.__name__, i), op, {"a": a, "b": b}, {"y": fn(t(a), t(b)).numpy()})

# ---- unary --------------------------------------------------------------------
UNARY = {
    "Relu": (torch.relu, -3, 3), "Neg": (torch.neg, -3, 3), "Abs": (torch.abs, -3, 3),
    "Sqrt": (torch.sqrt, 0, 9), "Reciprocal": (torch.reciprocal, 0.25, 4), "Exp": (torch.exp, -8, 8),
    "Log": (torch.log, 0.01, 50), "Erf": (torch.erf, -3, 3), "Sigmoid": (torch.sigmoid, -8, 8),
    "Tanh": (torch.tanh, -4, 4), "Silu": (F.silu, -6, 6), "Sin": (torch.sin, -20, 20), "Cos": (torch.cos, -20, 20),
}
UNARY_SHAPES = [(7,), (2, 3, 5), (1, 4099), ()]
for op, (fn, lo, hi) in UNARY.items():
    for dt in FLOATS:
        for i, s in enumerate(UNARY_SHAPES):
            x = rand(s, dt, lo, hi)
            case("%s_%s_%d" % (op, dt.__name__, i), op, {"x": x}, {"y": back(fn(t(x)), dt)})
for dt in FLOATS:
    for i, s in enumerate(UNARY_SHAPES[:3]):
        x = rand(s, dt, -5, 5)
        case("Gelu_%s_%d" % (dt.__name__, i), "Gelu", {"x": x}, {"y": back(F.gelu(t(x)), dt)})
        case("GeluTanh_%s_%d" % (dt.__name__, i), "Gelu", {"x": x},
             {"y": back(F.gelu(t(x), approximate="tanh"), dt)}, attrs={"approximate": "tanh"})
        case("LeakyRelu_%s_%d" % (dt.__name__, i), "LeakyRelu", {"x": x},
             {"y": back(F.leaky_relu(t(x), 0.1), dt)}, attrs={"alpha": 0.1})
        case("LeakyReluDefault_%s_%d" % (dt.__name__, i), "LeakyRelu", {"x": x},
             {"y": back(F.leaky_relu(t(x), 0.01), dt)})
        case("HardSigmoid_%s_%d" % (dt.__name__, i), "HardSigmoid", {"x": x},
             {"y": back(torch.clamp(0.3 * t(x) + 0.4, 0, 1), dt)}, attrs={"alpha": 0.3, "beta": 0.4})
        lo, hi = np.array(-1.5, dt), np.array(2.0, dt)
        case("Clip_%s_%d" % (dt.__name__, i), "Clip", {"x": x},
             {"y": back(torch.clamp(t(x), float(lo), float(hi)), dt)}, inits={"lo": lo, "hi": hi})
        case("ClipMin_%s_%d" % (dt.__name__, i), "Clip", {"x": x},
             {"y": back(torch.clamp(t(x), min=float(lo)), dt)}, inits={"lo": lo})

# ---- Where, Cast ----------------------------------------------------------------
for dt in FLOATS + [np.int32, np.int64, np.int8, np.bool_]:
    c = rng.random((4, 1, 6)) < 0.5
    x, y = rand((3, 6), dt), rand((4, 3, 1), dt)
    case("Where_%s" % dt.__name__, "Where", {"c": c, "x": x, "y": y},
         {"z": back(torch.where(torch.from_numpy(c), t(x), t(y)), dt)})
# Every pair of the six dtypes, with values the destination holds (ONNX leaves
# out-of-range float -> int undefined; the saturation cases below pin ours).
# Floats carry fractions of both signs (truncation toward zero) and zeros
# (-> BOOL false); int64 carries values past int32, which -> INT32/INT8 wrap.
TORCH_DT = {np.float16: torch.float16, np.float32: torch.float32, np.int32: torch.int32, np.bool_: torch.bool,
            np.int8: torch.int8, np.int64: torch.int64}
ONNX_CODE = {np.float32: 1, np.int8: 3, np.int32: 6, np.int64: 7, np.bool_: 9, np.float16: 10}
for src in ONNX_CODE:
    for dst, code in ONNX_CODE.items():
        if src == dst:
            continue
        lim = {np.int8: 127, np.int32: 2 ** 31 - 1, np.int64: 2 ** 40, np.bool_: 1}.get(dst, 100)
        lim = min(lim, 60000 if src == np.float16 else lim)
        if src in FLOATS:
            x = rand((5, 33), src, -min(lim, 1e6), min(lim, 1e6))
            x.flat[::7] = 0
            x.flat[3::11] = np.array(-2.75, src)  # truncates to -2
        else:
            x = rand((5, 33), src)
            if src != np.bool_:
                x.flat[::7] = 0
            if src == np.int64 and dst == np.float16:
                x = x % 60000
        ref = torch.from_numpy(x).to(TORCH_DT[dst])
        case("Cast_%s_%s" % (src.__name__, dst.__name__), "Cast", {"x": x}, {"y": ref.numpy()}, attrs={"to": code})
# float -> int out of range: saturates, NaN -> 0 (analytical reference)
sat = np.array([1e10, -1e10, 3e9, -3e9, np.inf, -np.inf, np.nan, 2.5e19, -2.5e19, 300.7, -129.5], np.float32)
for dst, (lo, hi) in ((np.int32, (-2 ** 31, 2 ** 31 - 1)), (np.int8, (-128, 127)), (np.int64, (-2 ** 63, 2 ** 63 - 1))):
    ref = [0 if np.isnan(v) else (hi if v >= hi else lo if v <= lo else int(np.trunc(v))) for v in sat.astype(np.float64)]
    case("CastSaturate_float32_%s" % dst.__name__, "Cast", {"x": sat}, {"y": np.array(ref, dst)},
         attrs={"to": ONNX_CODE[dst]})
case("CastNaN_float32_bool", "Cast", {"x": sat}, {"y": sat != 0}, attrs={"to": 9})
# CastLike: the second input's dtype, its values unread.
xc = np.random.default_rng(15).uniform(-70000, 70000, (4, 9)).astype(np.float32)  # its own stream: later cases keep their data
case("CastLike_float32_float16", "CastLike", {"x": xc, "like": np.zeros((2,), np.float16)},
     {"y": torch.from_numpy(xc).to(torch.float16).numpy()})
case("CastLike_float32_int32", "CastLike", {"x": xc, "like": np.zeros((1,), np.int32)}, {"y": np.trunc(xc).astype(np.int32)})

# ---- reductions -------------------------------------------------------------------
REDUCE = {"ReduceSum": torch.sum, "ReduceMean": torch.mean,
          "ReduceMax": lambda x, dim, keepdim: torch.amax(x, dim=dim, keepdim=keepdim),
          "ReduceMin": lambda x, dim, keepdim: torch.amin(x, dim=dim, keepdim=keepdim)}
for op, fn in REDUCE.items():
    for dt in FLOATS:
        for i, (shape, axes, keep) in enumerate([((3, 4, 5), [1], 1), ((3, 4, 5), [0, 2], 0), ((2, 7), [], 1),
                                                 ((6, 1, 129), [-1], 0), ((5,), [0], 0), ((2, 3, 70, 5), [1, 2], 1),
                                                 ((4, 300), [0], 0), ((3, 2, 1, 4), [0, 2], 1)]):
            x = rand(shape, dt)
            dims = axes if axes else list(range(len(shape)))
            ref = fn(t(x), dim=dims, keepdim=bool(keep))
            attrs = {"keepdims": keep}
            if op == "ReduceSum" or i % 2 == 0:  # axes as an input (opset 13 ReduceSum, opset 18 others)
                inits = {"axes": np.array(axes, np.int64)} if axes else {}
                case("%s_%s_%d" % (op, dt.__name__, i), op, {"x": x}, {"y": back(ref, dt)}, attrs=attrs,
                     inits=inits)
            else:
                attrs["axes"] = axes
                case("%s_%s_%d" % (op, dt.__name__, i), op, {"x": x}, {"y": back(ref, dt)}, attrs=attrs)
for dt in FLOATS:
    x = rand((4, 9, 3), dt)
    case("ArgMax_%s" % dt.__name__, "ArgMax", {"x": x}, {"y": torch.argmax(t(x), dim=1).numpy()},
         attrs={"axis": 1, "keepdims": 0})
    case("ArgMaxKeep_%s" % dt.__name__, "ArgMax", {"x": x},
         {"y": torch.argmax(t(x), dim=-1, keepdim=True).numpy()}, attrs={"axis": -1})
    case("ArgMin_%s" % dt.__name__, "ArgMin", {"x": x}, {"y": torch.argmin(t(x), dim=1).numpy()},
         attrs={"axis": 1, "keepdims": 0})
    case("ArgMinKeep_%s" % dt.__name__, "ArgMin", {"x": x},
         {"y": torch.argmin(t(x), dim=0, keepdim=True).numpy()}, attrs={"axis": 0})
    # select_last_index: ties (values from a small set) resolve to the last index.
    xt = np.floor(rand((5, 8), dt, 0, 3)).astype(dt)
    last = lambda a: (a.shape[1] - 1 - np.argmin(a[:, ::-1], axis=1)).astype(np.int64)
    case("ArgMinLast_%s" % dt.__name__, "ArgMin", {"x": xt}, {"y": last(xt)},
         attrs={"axis": 1, "keepdims": 0, "select_last_index": 1})
    case("ArgMinFirst_%s" % dt.__name__, "ArgMin", {"x": xt}, {"y": np.argmin(xt, axis=1).astype(np.int64)},
         attrs={"axis": 1, "keepdims": 0})

# ---- softmax, norms -----------------------------------------------------------------
for dt in FLOATS:
    # Rows longer than one 256-element block of the online softmax, with the max in a later block; inner axes
    # narrower and wider than one 64-lane column block.
    SOFTMAX_SHAPES = [((3, 17), -1), ((2, 5, 4), 1), ((1, 1000), 1), ((4,), 0), ((2, 777), -1), ((3, 10, 70), 1),
                      ((2, 3, 4, 5), 0)]
    for i, (shape, axis) in enumerate(SOFTMAX_SHAPES):
        x = rand(shape, dt, -6, 6)
        if i == 4:
            x[:, 600] = 12  # the row's max is in its third block: the running max is rescaled
        case("Softmax_%s_%d" % (dt.__name__, i), "Softmax", {"x": x},
             {"y": back(torch.softmax(t(x), axis), dt)}, attrs={"axis": axis})
        case("LogSoftmax_%s_%d" % (dt.__name__, i), "LogSoftmax", {"x": x},
             {"y": back(torch.log_softmax(t(x), axis), dt)}, attrs={"axis": axis})
    for i, (shape, axis, bias) in enumerate([((2, 5, 33), -1, True), ((3, 4, 6), 1, True), ((7, 256), -1, False)]):
        x = rand(shape, dt, -2, 4)
        norm = shape[axis:] if axis >= 0 else shape[axis:]
        w, b = rand(norm, dt, 0.5, 1.5), rand(norm, dt, -1, 1)
        ref = F.layer_norm(t(x), norm, t(w), t(b) if bias else None, 1e-5)
        inits = {"w": w, "b": b} if bias else {"w": w}
        case("LayerNorm_%s_%d" % (dt.__name__, i), "LayerNormalization", {"x": x}, {"y": back(ref, dt)},
             attrs={"axis": axis, "epsilon": 1e-5}, inits=inits)
    for i, (shape, groups) in enumerate([((2, 6, 5, 7), 3), ((1, 4, 33), 1), ((3, 8, 2, 2, 3), 8)]):
        x = rand(shape, dt, -2, 4)
        c = shape[1]
        w, b = rand((c,), dt, 0.5, 1.5), rand((c,), dt, -1, 1)
        ref = F.group_norm(t(x), groups, t(w), t(b), 1e-5)
        case("GroupNorm_%s_%d" % (dt.__name__, i), "GroupNormalization", {"x": x}, {"y": back(ref, dt)},
             attrs={"epsilon": 1e-5, "num_groups": groups}, inits={"w": w, "b": b})
        ref = F.instance_norm(t(x), weight=t(w), bias=t(b), eps=1e-5)
        case("InstanceNorm_%s_%d" % (dt.__name__, i), "InstanceNormalization", {"x": x}, {"y": back(ref, dt)},
             attrs={"epsilon": 1e-5}, inits={"w": w, "b": b})
    # GroupNormalization opset 18: scale and bias per group.
    x = rand((2, 6, 4, 4), dt, -2, 4)
    wg, bg = rand((3,), dt, 0.5, 1.5), rand((3,), dt, -1, 1)
    ref = F.group_norm(t(x), 3, t(np.repeat(wg, 2)), t(np.repeat(bg, 2)), 1e-5)
    case("GroupNormPerGroup_%s" % dt.__name__, "GroupNormalization", {"x": x}, {"y": back(ref, dt)},
         attrs={"epsilon": 1e-5, "num_groups": 3}, inits={"w": wg, "b": bg})
    x = rand((2, 3, 5, 7), dt)
    sc, bi, mu, var = rand((3,), dt, 0.5, 2), rand((3,), dt), rand((3,), dt), rand((3,), dt, 0.2, 2)
    ref = F.batch_norm(t(x), t(mu), t(var), t(sc), t(bi), False, 0.0, 1e-5)
    case("BatchNorm_%s" % dt.__name__, "BatchNormalization", {"x": x}, {"y": back(ref, dt)},
         attrs={"epsilon": 1e-5}, inits={"scale": sc, "bias": bi, "mean": mu, "var": var})

# ---- pooling ------------------------------------------------------------------------------
def onnx_pool_indices(idx, shape, order):
    """torch's argmax within each (n, c) plane as ONNX's index into the whole tensor."""
    spatial = shape[2:]
    if order == 1:  # column major: the per-plane row-major index, its coordinates reversed
        coords = np.unravel_index(idx, spatial)
        idx = np.ravel_multi_index(tuple(reversed(coords)), tuple(reversed(spatial)))
    planes = np.arange(shape[0] * shape[1]).reshape(shape[:2] + (1,) * len(spatial))
    return (idx + planes * int(np.prod(spatial))).astype(np.int64)


for dt in FLOATS:
    x = rand((2, 3, 9, 11), dt)
    for i, pp in enumerate(POOL_GEOMETRIES):
        k, s, p, d, ceil = pp["k"], pp["s"], pp["p"], pp["d"], pp["ceil"]
        ref = F.max_pool2d(t(x), k, s, p, d, ceil_mode=bool(ceil))
        case("MaxPool_%s_%d" % (dt.__name__, i), "MaxPool", {"x": x}, {"y": back(ref, dt)},
             attrs={"kernel_shape": [k, k], "strides": [s, s], "pads": [p, p, p, p], "dilations": [d, d],
                    "ceil_mode": ceil})
        if d == 1:
            for cip in (0, 1):
                ref = F.avg_pool2d(t(x), k, s, p, ceil_mode=bool(ceil), count_include_pad=bool(cip))
                case("AveragePool_%s_%d_%d" % (dt.__name__, i, cip), "AveragePool", {"x": x}, {"y": back(ref, dt)},
                     attrs={"kernel_shape": [k, k], "strides": [s, s], "pads": [p, p, p, p], "ceil_mode": ceil,
                            "count_include_pad": cip})
        # MaxPool's Indices: torch's per-plane argmax, moved to ONNX's flat index (and
        # to column-major planes for storage_order 1).
        ref, idx = F.max_pool2d(t(x), k, s, p, d, ceil_mode=bool(ceil), return_indices=True)
        for order in (0, 1):
            flat = onnx_pool_indices(idx.numpy(), x.shape, order)
            case("MaxPoolIndices_%s_%d_%d" % (dt.__name__, i, order), "MaxPool", {"x": x},
                 {"y": back(ref, dt), "i": flat},
                 attrs={"kernel_shape": [k, k], "strides": [s, s], "pads": [p, p, p, p], "dilations": [d, d],
                        "ceil_mode": ceil, "storage_order": order})
    # Planes wider than a 4-vector block of outputs, stride 2 (two phases) and 1.
    xw = rand((1, 2, 20, 70), dt)
    case("MaxPoolWide_%s" % dt.__name__, "MaxPool", {"x": xw}, {"y": back(F.max_pool2d(t(xw), 3, 2, 1), dt)},
         attrs={"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1]})
    case("AveragePoolWide_%s" % dt.__name__, "AveragePool", {"x": xw},
         {"y": back(F.avg_pool2d(t(xw), 3, 1, 1, count_include_pad=False), dt)},
         attrs={"kernel_shape": [3, 3], "strides": [1, 1], "pads": [1, 1, 1, 1], "count_include_pad": 0})
    case("GlobalAveragePool_%s" % dt.__name__, "GlobalAveragePool", {"x": x},
         {"y": back(t(x).mean(dim=(2, 3), keepdim=True), dt)})


# ---- Cube: MatMul, Gemm, Conv --------------------------------------------------------------

for dt in FLOATS:
    for i, (sa, sb) in enumerate([((3, 17), (17, 5)), ((2, 1, 4, 33), (3, 33, 6)), ((9,), (9, 4)), ((5, 7), (7,)),
                                  ((1, 130, 70), (70, 19))]):
        a, b = rand(sa, dt, -1, 1), rand(sb, dt, -1, 1)
        case("MatMul_%s_%d" % (dt.__name__, i), "MatMul", {"a": a, "b": b},
             {"y": torch.matmul(cube(a), cube(b)).numpy().astype(dt)})
    for i, (m, n, k, ta, tb, alpha, beta, cs) in enumerate([
            (4, 6, 5, 0, 0, 1.0, 1.0, (6,)), (7, 3, 9, 1, 0, 0.5, 2.0, (7, 3)), (5, 8, 3, 0, 1, 1.0, 1.0, (1, 8)),
            (3, 4, 17, 1, 1, 1.5, 0.25, (3, 1)), (2, 3, 4, 0, 0, 1.0, 1.0, None), (65, 33, 40, 0, 1, 1.0, 1.0, (33,))]):
        a = rand((k, m) if ta else (m, k), dt, -1, 1)
        b = rand((n, k) if tb else (k, n), dt, -1, 1)
        ab = torch.matmul(cube(a).T if ta else cube(a), cube(b).T if tb else cube(b))
        inputs = {"a": a, "b": b}
        ref = alpha * ab
        if cs is not None:
            c = rand(cs, dt, -1, 1)
            inputs["c"] = c
            ref = ref + beta * torch.from_numpy(c.astype(np.float64))
        case("Gemm_%s_%d" % (dt.__name__, i), "Gemm", inputs, {"y": ref.numpy().astype(dt)},
             attrs={"alpha": alpha, "beta": beta, "transA": ta, "transB": tb})
    CONVS = [dict(n=1, c=3, h=9, w=11, m=4, k=3, s=1, p=1, d=1, g=1, bias=True),
             dict(n=2, c=4, h=10, w=7, m=6, k=3, s=2, p=0, d=2, g=2, bias=False),
             dict(n=1, c=5, h=8, w=8, m=5, k=3, s=1, p=1, d=1, g=5, bias=True),
             dict(n=2, c=3, h=12, w=12, m=8, k=5, s=1, p=2, d=1, g=1, bias=True),
             dict(n=1, c=16, h=6, w=6, m=24, k=1, s=1, p=0, d=1, g=1, bias=False),
             dict(n=1, c=2, h=7, w=9, m=3, k=2, s=3, p=1, d=1, g=1, bias=True),
             # depthwise and grouped (the Vector path): stride 2, a channel multiplier, dilation, wide rows
             dict(n=2, c=6, h=13, w=11, m=6, k=3, s=2, p=1, d=1, g=6, bias=True),
             dict(n=1, c=4, h=9, w=9, m=8, k=3, s=1, p=2, d=2, g=4, bias=False),
             dict(n=1, c=6, h=5, w=40, m=4, k=3, s=1, p=1, d=1, g=2, bias=True),
             dict(n=1, c=3, h=10, w=10, m=3, k=5, s=3, p=2, d=1, g=3, bias=True)]
    for i, cv in enumerate(CONVS):
        x = rand((cv["n"], cv["c"], cv["h"], cv["w"]), dt, -1, 1)
        w = rand((cv["m"], cv["c"] // cv["g"], cv["k"], cv["k"]), dt, -1, 1)
        inits = {"w": w}
        bias = None
        if cv["bias"]:
            inits["bias"] = rand((cv["m"],), dt, -1, 1)
            bias = torch.from_numpy(inits["bias"].astype(np.float64))
        # group > 1 runs on the Vector unit, which computes in fp32 from the unrounded operands.
        operand = cube if cv["g"] == 1 else (lambda a: torch.from_numpy(a.astype(np.float64)))
        ref = F.conv2d(operand(x), operand(w), bias, cv["s"], cv["p"], cv["d"], cv["g"])
        p = cv["p"]
        case("Conv_%s_%d" % (dt.__name__, i), "Conv", {"x": x}, {"y": ref.numpy().astype(dt)}, inits=inits,
             attrs={"strides": [cv["s"]] * 2, "pads": [p] * 4, "dilations": [cv["d"]] * 2, "group": cv["g"],
                    "kernel_shape": [cv["k"]] * 2})

# ---- 3-D (NCDHW): Conv on the Cube (operands rounded to fp16), MaxPool and AveragePool ---------------
CONVS_3D = [dict(n=1, c=3, x=(5, 6, 7), m=4, k=(3, 3, 3), s=(1, 1, 1), p=(1, 1, 1), d=(1, 1, 1), bias=True),
            dict(n=2, c=2, x=(6, 5, 5), m=3, k=(2, 3, 3), s=(2, 1, 2), p=(1, 0, 1), d=(1, 2, 1), bias=False),
            dict(n=1, c=8, x=(3, 4, 5), m=5, k=(1, 1, 1), s=(1, 1, 1), p=(0, 0, 0), d=(1, 1, 1), bias=True),
            dict(n=1, c=2, x=(4, 3, 40), m=3, k=(3, 1, 3), s=(1, 1, 2), p=(2, 0, 1), d=(2, 1, 1), bias=True),
            # grouped and depthwise: on the Cube, the groups as the GEMM's batch
            dict(n=2, c=4, x=(3, 5, 5), m=6, k=(2, 3, 3), s=(1, 1, 1), p=(0, 1, 1), d=(1, 1, 1), bias=True, g=2),
            dict(n=1, c=4, x=(4, 6, 6), m=4, k=(3, 3, 3), s=(1, 2, 2), p=(1, 1, 1), d=(1, 1, 1), bias=False, g=4)]
for dt in FLOATS:
    for i, cv in enumerate(CONVS_3D):
        x = rand((cv["n"], cv["c"]) + cv["x"], dt, -1, 1)
        groups = cv.get("g", 1)
        w = rand((cv["m"], cv["c"] // groups) + cv["k"], dt, -1, 1)
        inits = {"w": w}
        bias = None
        if cv["bias"]:
            inits["bias"] = rand((cv["m"],), dt, -1, 1)
            bias = torch.from_numpy(inits["bias"].astype(np.float64))
        ref = F.conv3d(cube(x), cube(w), bias, cv["s"], cv["p"], cv["d"], groups)
        case("Conv3d_%s_%d" % (dt.__name__, i), "Conv", {"x": x}, {"y": ref.numpy().astype(dt)}, inits=inits,
             attrs={"strides": list(cv["s"]), "pads": list(cv["p"]) * 2, "dilations": list(cv["d"]),
                    "kernel_shape": list(cv["k"]), "group": groups})
    # 1-D without kernel_shape (the weights' shape gives it): dense on the Cube, depthwise on the Vector unit.
    for i, (xs, ws, attrs) in enumerate([((2, 3, 11), (4, 3, 3), {"pads": [1, 1], "strides": [2]}),
                                          ((1, 4, 9), (4, 1, 3), {"pads": [2, 0], "dilations": [2], "group": 4})]):
        x, w = rand(xs, dt, -1, 1), rand(ws, dt, -1, 1)
        g = attrs.get("group", 1)
        operand = cube if g == 1 else (lambda a: torch.from_numpy(a.astype(np.float64)))
        xp = F.pad(operand(x), attrs["pads"])
        ref = F.conv1d(xp, operand(w), None, attrs.get("strides", [1]), 0, attrs.get("dilations", [1]), g)
        case("Conv1d_%s_%d" % (dt.__name__, i), "Conv", {"x": x}, {"y": ref.numpy().astype(dt)}, inits={"w": w},
             attrs=attrs)
    x = rand((2, 3, 5, 7, 6), dt)
    for i, pp in enumerate(POOLS_3D):
        attrs = {"kernel_shape": list(pp["k"]), "strides": list(pp["s"]), "pads": list(pp["p"]) * 2,
                 "ceil_mode": pp["ceil"]}
        ref, idx = F.max_pool3d(t(x), pp["k"], pp["s"], pp["p"], pp["d"], ceil_mode=bool(pp["ceil"]),
                                return_indices=True)
        case("MaxPool3d_%s_%d" % (dt.__name__, i), "MaxPool", {"x": x}, {"y": back(ref, dt)},
             attrs=dict(attrs, dilations=list(pp["d"])))
        case("MaxPool3dIndices_%s_%d" % (dt.__name__, i), "MaxPool", {"x": x},
             {"y": back(ref, dt), "i": onnx_pool_indices(idx.numpy(), x.shape, i % 2)},
             attrs=dict(attrs, dilations=list(pp["d"]), storage_order=i % 2))
        if pp["d"] == (1, 1, 1):
            for cip in (0, 1):
                ref = F.avg_pool3d(t(x), pp["k"], pp["s"], pp["p"], ceil_mode=bool(pp["ceil"]),
                                   count_include_pad=bool(cip))
                case("AveragePool3d_%s_%d_%d" % (dt.__name__, i, cip), "AveragePool", {"x": x}, {"y": back(ref, dt)},
                     attrs=dict(attrs, count_include_pad=cip))

# ---- LpPool (Vector: |x|^p summed in fp32, the p-th root, one rounding) --------------------------
for dt in FLOATS:
    for i, lpp in enumerate(LP_POOLS):
        x = rand((2, 3, 5, 7, 6)[:2 + len(lpp["k"])], dt, -2, 2)
        ref = lp_pool_ref(torch.from_numpy(x.astype(np.float64)), lpp["norm"], lpp["k"], lpp["s"], lpp["p"],
                          lpp["ceil"])
        case("LpPool_%s_%d" % (dt.__name__, i), "LpPool", {"x": x}, {"y": back(ref, dt)},
             attrs={"kernel_shape": list(lpp["k"]), "strides": list(lpp["s"]), "pads": list(lpp["p"]) * 2,
                    "p": lpp["norm"], "ceil_mode": lpp["ceil"]})

# ---- data movement (exact) -------------------------------------------------------------------
for dt in [np.float16, np.float32, np.int32, np.int64, np.bool_]:
    n = dt.__name__
    x = rand((2, 3, 4, 5), dt)
    case("Transpose_%s" % n, "Transpose", {"x": x}, {"y": x.transpose(0, 2, 3, 1)}, attrs={"perm": [0, 2, 3, 1]})
    case("TransposeDefault_%s" % n, "Transpose", {"x": x}, {"y": x.transpose()})
    case("Reshape_%s" % n, "Reshape", {"x": x}, {"y": x.reshape(2, 3, 20)},
         inits={"shape": np.array([0, 3, -1], np.int64)})
    case("Flatten_%s" % n, "Flatten", {"x": x}, {"y": x.reshape(6, 20)}, attrs={"axis": 2})
    case("Flatten0_%s" % n, "Flatten", {"x": x}, {"y": x.reshape(1, 120)}, attrs={"axis": 0})
    case("FlattenNeg_%s" % n, "Flatten", {"x": x}, {"y": x.reshape(6, 20)}, attrs={"axis": -2})
    x1 = rand((3, 1, 4, 1), dt)
    case("Squeeze_%s" % n, "Squeeze", {"x": x1}, {"y": x1.reshape(3, 4, 1)}, inits={"axes": np.array([1], np.int64)})
    case("SqueezeAll_%s" % n, "Squeeze", {"x": x1}, {"y": x1.reshape(3, 4)})
    case("Unsqueeze_%s" % n, "Unsqueeze", {"x": x1}, {"y": x1.reshape(1, 3, 1, 4, 1, 1)},
         inits={"axes": np.array([0, -1], np.int64)})
    a, b, c = rand((2, 3, 4), dt), rand((2, 1, 4), dt), rand((2, 5, 4), dt)
    case("Concat_%s" % n, "Concat", {"a": a, "b": b, "c": c}, {"y": np.concatenate([a, b, c], 1)}, attrs={"axis": 1})
    case("ConcatLast_%s" % n, "Concat", {"a": a, "b": a}, {"y": np.concatenate([a, a], -1)}, attrs={"axis": -1})
    xs = rand((4, 7, 3), dt)
    case("Split_%s" % n, "Split", {"x": xs}, {"y0": xs[:, :2], "y1": xs[:, 2:]}, attrs={"axis": 1},
         inits={"split": np.array([2, 5], np.int64)})
    case("SplitEven_%s" % n, "Split", {"x": xs}, {"y0": xs[:2], "y1": xs[2:]})
    xl = rand((5, 8, 6), dt)
    case("Slice_%s" % n, "Slice", {"x": xl}, {"y": xl[1:4, :, ::2]},
         inits={"starts": np.array([1, 0], np.int64), "ends": np.array([4, 100], np.int64),
                "axes": np.array([0, 2], np.int64), "steps": np.array([1, 2], np.int64)})
    case("SliceNeg_%s" % n, "Slice", {"x": xl}, {"y": xl[:, -2:1:-2, -3:]},
         inits={"starts": np.array([-2, -3], np.int64), "ends": np.array([1, 2 ** 62], np.int64),
                "axes": np.array([1, -1], np.int64), "steps": np.array([-2, 1], np.int64)})
    case("SliceReverse_%s" % n, "Slice", {"x": xl}, {"y": xl[::-1]},
         inits={"starts": np.array([-1], np.int64), "ends": np.array([-2 ** 63], np.int64),
                "axes": np.array([0], np.int64), "steps": np.array([-1], np.int64)})
    idx = np.array([[0, -1], [2, 3], [1, 1]], np.int64)
    case("Gather_%s" % n, "Gather", {"x": xl, "i": idx}, {"y": np.take(xl, idx % 8, axis=1)}, attrs={"axis": 1})
    case("Gather0_%s" % n, "Gather", {"x": xl, "i": np.array([4, 0], np.int32)}, {"y": xl[[4, 0]]})
    xe = rand((3, 1), dt)
    case("Expand_%s" % n, "Expand", {"x": xe}, {"y": np.broadcast_to(xe, (2, 3, 4))},
         inits={"shape": np.array([2, 1, 4], np.int64)})
    case("Identity_%s" % n, "Identity", {"x": xe}, {"y": xe})
    case("Dropout_%s" % n, "Dropout", {"x": xe}, {"y": xe})
    case("Shape_%s" % n, "Shape", {"x": xl}, {"y": np.array(xl.shape, np.int64)})
    case("ShapeStart_%s" % n, "Shape", {"x": xl}, {"y": np.array(xl.shape[1:], np.int64)}, attrs={"start": 1})
    case("Size_%s" % n, "Size", {"x": xl}, {"y": np.array(xl.size, np.int64)})
    v = rand((2, 3), dt)
    case("Constant_%s" % n, "Constant", {}, {"y": v}, attrs={"value": v}, node_inputs=[], dtype=n)
case("ConstantFloats", "Constant", {}, {"y": np.array([1.5, -2.0], np.float32)}, attrs={"value_floats": [1.5, -2.0]},
     node_inputs=[], dtype="float32")

# ---- Pad, Tile, ConstantOfShape, Range (exact) --------------------------------------------------
def onnx_pads(torch_pads, rank):
    """torch's (last_begin, last_end, prev_begin, ...) as ONNX's (all begins, then all ends)."""
    begins, ends = [0] * rank, [0] * rank
    for k in range(len(torch_pads) // 2):
        begins[rank - 1 - k], ends[rank - 1 - k] = torch_pads[2 * k], torch_pads[2 * k + 1]
    return np.array(begins + ends, np.int64)


TORCH_PAD_MODE = {"constant": "constant", "reflect": "reflect", "edge": "replicate", "wrap": "circular"}
for dt in [np.float16, np.float32, np.int32, np.int64, np.bool_]:
    n = dt.__name__
    x = rand((2, 3, 5, 6), dt)
    for mode, tp in [("constant", (1, 2, 3, 0)), ("constant", (-1, 2, 0, -2)), ("reflect", (2, 3, 1, 4)),
                     ("edge", (3, 1, 0, 2)), ("wrap", (2, 5, 1, 1))]:
        if dt in FLOATS:
            ref = back(F.pad(t(x), tp, mode=TORCH_PAD_MODE[mode]), dt)
        else:  # torch pads only float tensors in these modes; NumPy is the reference
            width = [(int(b), int(e)) for b, e in zip(onnx_pads(tp, 4)[:4], onnx_pads(tp, 4)[4:])]
            crop = tuple(slice(-b if b < 0 else 0, x.shape[d] + e if e < 0 else None) for d, (b, e) in enumerate(width))
            np_mode = {"constant": "constant", "reflect": "reflect", "edge": "edge", "wrap": "wrap"}[mode]
            ref = np.pad(x[crop], [(max(b, 0), max(e, 0)) for b, e in width], mode=np_mode)
        case("Pad_%s_%s_%d" % (mode, n, sum(tp)), "Pad", {"x": x}, {"y": ref}, attrs={"mode": mode},
             inits={"pads": onnx_pads(tp, 4)})
    v = rand((), dt)
    ref = back(F.pad(t(x), (1, 1, 2, 0), value=float(t(v))), dt) if dt in FLOATS else \
        np.pad(x, [(0, 0), (0, 0), (2, 0), (1, 1)], constant_values=v)
    case("PadValue_%s" % n, "Pad", {"x": x, "v": v}, {"y": ref}, inits={"pads": onnx_pads((1, 1, 2, 0), 4)},
         node_inputs=["x", "pads", "v"])
    case("PadAxes_%s" % n, "Pad", {"x": x}, {"y": np.pad(x, [(0, 0), (1, 2), (0, 0), (0, 3)], mode="edge")},
         attrs={"mode": "edge"}, inits={"pads": np.array([1, 0, 2, 3], np.int64), "axes": np.array([1, -1], np.int64)},
         node_inputs=["x", "pads", "", "axes"])
    case("Tile_%s" % n, "Tile", {"x": x}, {"y": back(torch.tile(t(x), (1, 2, 3, 2)), dt)},
         inits={"repeats": np.array([1, 2, 3, 2], np.int64)})
    x1 = rand((4,), dt)
    case("TileZero_%s" % n, "Tile", {"x": x1}, {"y": np.tile(x1, 0)}, inits={"repeats": np.array([0], np.int64)})
    value = rand((1,), dt)
    case("ConstantOfShape_%s" % n, "ConstantOfShape", {}, {"y": np.full((2, 3, 4), value[0], dt)},
         attrs={"value": value}, inits={"shape": np.array([2, 3, 4], np.int64)}, dtype=n)
case("ConstantOfShapeDefault", "ConstantOfShape", {}, {"y": np.zeros((3, 0, 2), np.float32)},
     inits={"shape": np.array([3, 0, 2], np.int64)}, dtype="float32")
case("ConstantOfShapeScalar", "ConstantOfShape", {}, {"y": np.full((), 7, np.int64)},
     attrs={"value": np.array([7], np.int64)}, inits={"shape": np.zeros(0, np.int64)}, dtype="int64")
for dt, tdt, (s0, l0, d0) in [(np.float32, torch.float32, (0.5, 9.7, 0.3)), (np.float32, torch.float32, (3, -4.1, -0.7)),
                              (np.float32, torch.float32, (1, 1, 1)), (np.int32, torch.int32, (-7, 20, 3)),
                              (np.int64, torch.int64, (2 ** 40, 2 ** 40 - 50, -7)), (np.int64, torch.int64, (5, 2, 1))]:
    args = [np.array(v, dt).item() for v in (s0, l0, d0)]
    ref = torch.arange(*args, dtype=tdt).numpy() if (args[1] - args[0]) * args[2] > 0 else np.zeros(0, dt)
    case("Range_%s_%s_%s_%s" % (dt.__name__, s0, l0, d0), "Range", {}, {"y": ref.astype(dt)},
         inits={"start": np.array(s0, dt), "limit": np.array(l0, dt), "delta": np.array(d0, dt)},
         dtype=dt.__name__)

# ---- Resize: the attributes torch.onnx.export writes for F.interpolate -------------------------
def resize_case(name, x, dt, ref, attrs, scales=None, sizes=None):
    inits = {"roi": np.zeros(0, np.float32)}
    if scales is not None:
        inits["scales"] = np.array(scales, np.float32)
    else:
        inits["sizes"] = np.array(sizes, np.int64)
    node_inputs = ["x", "roi", "scales" if scales is not None else "", "sizes" if sizes is not None else ""]
    case(name, "Resize", {"x": x}, {"y": ref}, attrs=attrs, inits=inits, node_inputs=node_inputs)


TORCH_LINEAR = {"mode": "linear", "coordinate_transformation_mode": "half_pixel", "nearest_mode": "floor"}
TORCH_CORNERS = dict(TORCH_LINEAR, coordinate_transformation_mode="align_corners")
TORCH_NEAREST = {"mode": "nearest", "coordinate_transformation_mode": "asymmetric", "nearest_mode": "floor"}
for dt in FLOATS:
    n = dt.__name__
    x = rand((2, 3, 5, 7), dt)
    for tag, kw, onnx_size in [("x2", {"scale_factor": 2}, None), ("size", {"size": (8, 11)}, (2, 3, 8, 11)),
                               ("down", {"size": (3, 4)}, (2, 3, 3, 4)), ("x1_5", {"scale_factor": 1.5}, None)]:
        sc = None if onnx_size else [1, 1, kw["scale_factor"], kw["scale_factor"]]
        for attrs, align in [(TORCH_LINEAR, False), (TORCH_CORNERS, True)]:
            if align and tag == "x1_5":
                continue
            ref = back(F.interpolate(t(x), mode="bilinear", align_corners=align, **kw), dt)
            resize_case("ResizeBilinear%s_%s_%s" % ("Corners" if align else "", tag, n), x, dt, ref, attrs, sc, onnx_size)
        ref = back(F.interpolate(t(x), mode="nearest", **kw), dt)
        resize_case("ResizeNearest_%s_%s" % (tag, n), x, dt, ref, TORCH_NEAREST, sc, onnx_size)
    x3 = rand((2, 3, 9), dt)
    resize_case("ResizeLinear1d_%s" % n, x3, dt, back(F.interpolate(t(x3), size=(20,), mode="linear"), dt),
                TORCH_LINEAR, sizes=(2, 3, 20))
    x5 = rand((1, 2, 3, 4, 5), dt)
    resize_case("ResizeTrilinear_%s" % n, x5, dt,
                back(F.interpolate(t(x5), scale_factor=2, mode="trilinear"), dt), TORCH_LINEAR,
                scales=[1, 1, 2, 2, 2])
for dt in [np.int32, np.int64, np.bool_]:
    x = rand((1, 2, 3, 4), dt)
    resize_case("ResizeNearest_%s" % dt.__name__, x, dt, x.repeat(2, axis=2).repeat(3, axis=3), TORCH_NEAREST,
                scales=[1, 1, 2, 3])

# ---- issue 12: rounding, activations, PRelu, Mod, logic, variadic folds --------------------------
SPECIAL = np.array([-2.5, -1.5, -0.5, -0.0, 0.0, 0.5, 1.5, 2.5, 3.49, -3.51, 1e8, -1e8], np.float32)
ACT12 = {
    "Floor": (torch.floor, -6, 6, {}), "Ceil": (torch.ceil, -6, 6, {}), "Round": (torch.round, -6, 6, {}),
    "Sign": (torch.sign, -3, 3, {}), "HardSwish": (F.hardswish, -5, 5, {}), "Softplus": (F.softplus, -30, 30, {}),
    "Mish": (F.mish, -10, 10, {}), "Elu": (F.elu, -6, 3, {}), "Selu": (F.selu, -6, 3, {}),
}
for op, (fn, lo, hi, attrs) in ACT12.items():
    for dt in FLOATS:
        for i, s in enumerate(UNARY_SHAPES):
            x = rand(s, dt, lo, hi)
            case("%s_%s_%d" % (op, dt.__name__, i), op, {"x": x}, {"y": back(fn(t(x)), dt)}, attrs=attrs)
        if op in ("Floor", "Ceil", "Round", "Sign"):
            x = SPECIAL.astype(dt)
            case("%sSpecial_%s" % (op, dt.__name__), op, {"x": x}, {"y": back(fn(t(x)), dt)})
for dt in FLOATS:
    n = dt.__name__
    x = rand((3, 70), dt, -6, 3)
    case("EluAlpha_%s" % n, "Elu", {"x": x}, {"y": back(F.elu(t(x), alpha=0.5), dt)}, attrs={"alpha": 0.5})
    case("Celu_%s" % n, "Celu", {"x": x}, {"y": back(F.celu(t(x), alpha=1.5), dt)}, attrs={"alpha": 1.5})
    case("CeluDefault_%s" % n, "Celu", {"x": x}, {"y": back(F.celu(t(x)), dt)})
    xs = rand((1, 4099), dt, -0.01, 0.01)  # expm1 near 0: no cancellation
    case("EluSmall_%s" % n, "Elu", {"x": xs}, {"y": back(F.elu(t(xs)), dt)})
    xp = rand((2, 3, 4, 5), dt)
    w = rand((3, 1, 1), dt, 0, 0.5)
    case("PRelu_%s" % n, "PRelu", {"x": xp, "w": w}, {"y": back(F.prelu(t(xp), t(w).reshape(3)), dt)})
    w1 = rand((1,), dt, 0, 0.5)
    case("PReluScalar_%s" % n, "PRelu", {"x": xp, "w": w1}, {"y": back(F.prelu(t(xp), t(w1)), dt)})
    a, b = rand((4, 33), dt, -20, 20), rand((33,), dt, -5, 5)
    b = np.where(np.abs(b) < 0.5, 1.25, b).astype(dt)
    case("ModFmod_%s" % n, "Mod", {"a": a, "b": b}, {"y": back(torch.fmod(t(a), t(b)), dt)}, attrs={"fmod": 1})
    case("ModRemainder_%s" % n, "Mod", {"a": a, "b": b}, {"y": back(torch.remainder(t(a), t(b)), dt)})
    xa, xb, xc = rand((2, 1, 5), dt), rand((3, 1), dt), rand((5,), dt)
    case("Sum3_%s" % n, "Sum", {"a": xa, "b": xb, "c": xc}, {"y": back(t(xa) + t(xb) + t(xc), dt)})
    case("Sum1_%s" % n, "Sum", {"a": xa}, {"y": xa})
    case("Mean3_%s" % n, "Mean", {"a": xa, "b": xb, "c": xc}, {"y": back((t(xa) + t(xb) + t(xc)) / 3, dt)})
    case("Max3_%s" % n, "Max", {"a": xa, "b": xb, "c": xc},
         {"y": back(torch.maximum(torch.maximum(t(xa), t(xb)), t(xc)), dt)})
    case("Min3_%s" % n, "Min", {"a": xa, "b": xb, "c": xc},
         {"y": back(torch.minimum(torch.minimum(t(xa), t(xb)), t(xc)), dt)})
    case("Max1_%s" % n, "Max", {"a": xa}, {"y": xa})
for dt in INTS:
    n = dt.__name__
    a = rng.integers(-50, 50, size=(3, 17)).astype(dt)
    b = rng.integers(1, 9, size=(17,)).astype(dt) * np.where(rng.random(17) < 0.5, -1, 1).astype(dt)
    case("ModFmod_%s" % n, "Mod", {"a": a, "b": b}, {"y": back(torch.fmod(t(a), t(b)), dt)}, attrs={"fmod": 1})
    case("ModRemainder_%s" % n, "Mod", {"a": a, "b": b}, {"y": back(torch.remainder(t(a), t(b)), dt)})
    case("PRelu_%s" % n, "PRelu", {"a": a, "b": b}, {"y": np.where(a > 0, a, a * b).astype(dt)})
    xa, xb, xc = rand((2, 1, 5), dt), rand((3, 1), dt), rand((5,), dt)
    case("Max3_%s" % n, "Max", {"a": xa, "b": xb, "c": xc}, {"y": np.maximum(np.maximum(xa, xb), xc)})
    case("Min3_%s" % n, "Min", {"a": xa, "b": xb, "c": xc}, {"y": np.minimum(np.minimum(xa, xb), xc)})
la, lb = rand((2, 1, 7), np.bool_), rand((3, 1), np.bool_)
case("Not", "Not", {"x": la}, {"y": torch.logical_not(t(la)).numpy()})
case("And", "And", {"a": la, "b": lb}, {"y": torch.logical_and(t(la), t(lb)).numpy()})
case("Or", "Or", {"a": la, "b": lb}, {"y": torch.logical_or(t(la), t(lb)).numpy()})
case("Xor", "Xor", {"a": la, "b": lb}, {"y": torch.logical_xor(t(la), t(lb)).numpy()})

# ---- issue 12: more reductions, CumSum, Trilu, gathers and scatters, space/depth, TopK, Hardmax ---------
def np_reduce(fn, x, axes, keep=True):
    return fn(x.astype(np.float64), axis=tuple(axes), keepdims=keep)


for dt in FLOATS:
    n = dt.__name__
    x = rand((3, 4, 5), dt, 0.5, 1.5)
    for op, fn in [("ReduceProd", lambda a, axis, keepdims: np.prod(a, axis=axis, keepdims=keepdims)),
                   ("ReduceL1", lambda a, axis, keepdims: np.abs(a).sum(axis=axis, keepdims=keepdims)),
                   ("ReduceL2", lambda a, axis, keepdims: np.sqrt((a * a).sum(axis=axis, keepdims=keepdims))),
                   ("ReduceSumSquare", lambda a, axis, keepdims: (a * a).sum(axis=axis, keepdims=keepdims))]:
        case("%s_%s" % (op, n), op, {"x": x}, {"y": np_reduce(fn, x, [1]).astype(dt)},
             inits={"axes": np.array([1], np.int64)})
        case("%sAll_%s" % (op, n), op, {"x": x}, {"y": np_reduce(fn, x, [0, 1, 2], False).astype(dt)},
             attrs={"keepdims": 0})
    xl = rand((2, 70, 3), dt, -40, 40)
    case("ReduceLogSumExp_%s" % n, "ReduceLogSumExp", {"x": xl},
         {"y": back(torch.logsumexp(t(xl), dim=(1,), keepdim=True), dt)}, inits={"axes": np.array([1], np.int64)})
    case("ReduceLogSumExpLast_%s" % n, "ReduceLogSumExp", {"x": xl},
         {"y": back(torch.logsumexp(t(xl), dim=(0, 2), keepdim=False), dt)}, attrs={"axes": [0, -1], "keepdims": 0})
    xp = rand((2, 70, 3), dt, 0.1, 4)
    case("ReduceLogSum_%s" % n, "ReduceLogSum", {"x": xp},
         {"y": back(torch.log(t(xp).sum(dim=(1,), keepdim=True)), dt)}, inits={"axes": np.array([1], np.int64)})
    case("ReduceLogSumAll_%s" % n, "ReduceLogSum", {"x": xp},
         {"y": back(torch.log(t(xp).sum()), dt)}, attrs={"keepdims": 0})
for dt in FLOATS + INTS:
    n = dt.__name__
    x = rand((3, 6, 4), dt) if dt not in INTS else rng.integers(-1000, 1000, size=(3, 6, 4)).astype(dt)
    wide = x.astype(np.float64) if dt in FLOATS else x.astype(np.int64)
    for axis, excl, rev in [(1, 0, 0), (-1, 1, 0), (0, 0, 1), (1, 1, 1)]:
        src = np.flip(wide, axis) if rev else wide
        ref = np.cumsum(src, axis=axis)
        if excl:
            ref = ref - src
        ref = np.flip(ref, axis) if rev else ref
        case("CumSum_%s_%d_%d_%d" % (n, axis, excl, rev), "CumSum", {"x": x}, {"y": ref.astype(dt)},
             attrs={"exclusive": excl, "reverse": rev}, inits={"axis": np.array(axis, np.int64)})
for dt in [np.float16, np.float32, np.int64, np.bool_]:
    n = dt.__name__
    x = rand((2, 5, 7), dt)
    for upper, k in [(1, 0), (1, 2), (0, -1), (0, 9), (1, -9)]:
        fn = torch.triu if upper else torch.tril
        ref = fn(torch.from_numpy(x), diagonal=k).numpy()
        case("Trilu_%s_%d_%d" % (n, upper, k), "Trilu", {"x": x}, {"y": ref}, attrs={"upper": upper},
             inits={"k": np.array(k, np.int64)})
    case("TriluDefault_%s" % n, "Trilu", {"x": x}, {"y": torch.triu(torch.from_numpy(x)).numpy()})
    idx = rng.integers(-5, 5, size=(2, 3, 7)).astype(np.int64)
    case("GatherElements_%s" % n, "GatherElements", {"x": x, "i": idx},
         {"y": torch.gather(torch.from_numpy(x), 1, torch.from_numpy(idx % 5)).numpy()}, attrs={"axis": 1})
    idx2 = rng.integers(0, 7, size=(2, 5, 4)).astype(np.int32)
    case("GatherElementsLast_%s" % n, "GatherElements", {"x": x, "i": idx2},
         {"y": np.take_along_axis(x, idx2.astype(np.int64), axis=-1)}, attrs={"axis": -1})
    data = rand((4, 3, 2), dt)
    sidx = np.array([[1], [3], [1]], np.int64)
    upd = rand((3, 3, 2), dt)
    ref = data.copy()
    for j in range(3):
        ref[sidx[j, 0]] = upd[j]
    case("ScatterND_%s" % n, "ScatterND", {"d": data, "i": sidx, "u": upd}, {"y": ref})
    sidx2 = np.array([[0, -1], [2, 0]], np.int64)
    upd2 = rand((2, 2), dt)
    ref2 = data.copy()
    ref2[0, 2], ref2[2, 0] = upd2[0], upd2[1]
    case("ScatterND2_%s" % n, "ScatterND", {"d": data, "i": sidx2, "u": upd2}, {"y": ref2})
    if dt != np.bool_:
        # Updates apply in order, each result in data's dtype (ONNX's reference): a repeated index rounds twice.
        ref3 = data.copy()
        for j in range(3):
            ref3[sidx[j, 0]] = (ref3[sidx[j, 0]].astype(np.float64 if dt in FLOATS else np.int64) + upd[j]).astype(dt)
        case("ScatterNDAdd_%s" % n, "ScatterND", {"d": data, "i": sidx, "u": upd}, {"y": ref3.astype(dt)},
             attrs={"reduction": "add"})
    xd = rand((2, 8, 3, 5), dt)
    case("DepthToSpaceCRD_%s" % n, "DepthToSpace", {"x": xd},
         {"y": F.pixel_shuffle(torch.from_numpy(xd).float() if dt == np.float16 else torch.from_numpy(xd), 2)
          .numpy().astype(dt)}, attrs={"blocksize": 2, "mode": "CRD"})
    dcr = xd.reshape(2, 2, 2, 2, 3, 5).transpose(0, 3, 4, 1, 5, 2).reshape(2, 2, 6, 10)
    case("DepthToSpaceDCR_%s" % n, "DepthToSpace", {"x": xd}, {"y": dcr}, attrs={"blocksize": 2})
    xs = rand((2, 3, 6, 4), dt)
    s2d = xs.reshape(2, 3, 3, 2, 2, 2).transpose(0, 3, 5, 1, 2, 4).reshape(2, 12, 3, 2)
    case("SpaceToDepth_%s" % n, "SpaceToDepth", {"x": xs}, {"y": s2d}, attrs={"blocksize": 2})
for dt in FLOATS + INTS:
    n = dt.__name__
    x = rng.permutation(4 * 9 * 5).reshape(4, 9, 5).astype(dt) - 90  # distinct values: one order
    for axis, k, largest in [(1, 3, 1), (-1, 5, 0), (0, 0, 1), (1, 9, 1)]:
        v, i = torch.topk(torch.from_numpy(x).float() if dt == np.float16 else torch.from_numpy(x), k, dim=axis,
                          largest=bool(largest))
        case("TopK_%s_%d_%d_%d" % (n, axis, k, largest), "TopK", {"x": x}, {"v": v.numpy().astype(dt), "i": i.numpy()},
             attrs={"axis": axis, "largest": largest}, inits={"k": np.array([k], np.int64)})
    # a node may leave Indices out (the graph fuzzer found this read past the outputs)
    v, _ = torch.topk(torch.from_numpy(x).float() if dt == np.float16 else torch.from_numpy(x), 2, dim=1)
    case("TopK_values_only_%s" % n, "TopK", {"x": x}, {"v": v.numpy().astype(dt)}, inits={"k": np.array([2], np.int64)},
         attrs={"axis": 1})
for dt in FLOATS:
    n = dt.__name__
    x = rand((3, 4, 6), dt)
    x[0, 1, :] = 1.0  # ties: the first maximum
    for axis in (-1, 1):
        am = np.argmax(x, axis=axis)
        ref = np.zeros_like(x)
        np.put_along_axis(ref, np.expand_dims(am, axis), 1, axis=axis)
        case("Hardmax_%s_%d" % (n, axis), "Hardmax", {"x": x}, {"y": ref}, attrs={"axis": axis})

# ---- ConvTranspose (Cube: operands rounded to fp16, float64 sums) --------------------------------
def conv_transpose_ref(x, w, bias, strides, dilations, group, pads, output_padding):
    """torch's transposed convolution without padding (the full output), grown by output_padding at the end
    and cropped by ONNX's pads (begin..., end...), which may be asymmetric; then the bias."""
    sp = x.ndim - 2
    fn = {1: F.conv_transpose1d, 2: F.conv_transpose2d, 3: F.conv_transpose3d}[sp]
    y = fn(cube(x), cube(w), None, stride=strides, padding=0, groups=group, dilation=dilations)
    grow = []
    for a in reversed(range(sp)):
        grow += [0, output_padding[a]]
    y = F.pad(y, grow)
    index = [slice(None), slice(None)] + [slice(pads[a], y.shape[2 + a] - pads[sp + a]) for a in range(sp)]
    y = y[tuple(index)]
    if bias is not None:
        y = y + torch.from_numpy(bias.astype(np.float64)).reshape([1, -1] + [1] * sp)
    return y


CONVT = [  # x shape, output channels per group, kernel, strides, pads, output_padding, dilations, group, bias, extra
    ((1, 3, 5, 6), 4, (3, 3), (1, 1), (0, 0, 0, 0), (0, 0), (1, 1), 1, True, {}),
    ((2, 8, 4, 4), 4, (2, 2), (2, 2), (0, 0, 0, 0), (0, 0), (1, 1), 1, True, {}),          # U-Net upsampling
    ((1, 4, 5, 7), 3, (3, 3), (2, 2), (1, 1, 1, 1), (1, 1), (1, 1), 1, True, {}),          # pad 1, output_padding 1
    ((2, 6, 5, 5), 2, (3, 3), (2, 2), (1, 1, 1, 1), (0, 0), (1, 1), 3, False, {}),         # groups
    ((1, 4, 4, 5), 3, (2, 3), (1, 2), (1, 0, 0, 2), (0, 1), (2, 2), 2, True, {}),          # asymmetric everything
    ((1, 32, 16, 16), 16, (4, 4), (2, 2), (1, 1, 1, 1), (0, 0), (1, 1), 1, True, {}),      # DCGAN-sized: many tiles
    ((2, 4, 9), 3, (4,), (3,), (1, 2), (0,), (1,), 1, True, {}),                          # 1-D
    ((1, 2, 3, 3), 2, (3, 3), (2, 2), (1, 1, 0, 0), (0, 0), (1, 1), 1, False, {"output_shape": [6, 6]}),
    ((1, 2, 4, 3), 2, (3, 3), (2, 2), (0, 0, 1, 1), (0, 0), (1, 1), 1, True, {"auto_pad": "SAME_UPPER"}),
    ((1, 2, 4, 3), 2, (3, 3), (2, 2), (1, 1, 0, 0), (0, 0), (1, 1), 1, True, {"auto_pad": "SAME_LOWER"}),
    # 3-D: asymmetric pads and output_padding; groups with a dilated depth
    ((1, 3, 3, 4, 5), 2, (2, 3, 3), (2, 1, 2), (1, 0, 1, 0, 1, 1), (1, 0, 1), (1, 1, 1), 1, True, {}),
    ((2, 4, 3, 3, 3), 2, (3, 2, 2), (1, 2, 2), (0, 0, 0, 0, 0, 0), (0, 0, 0), (2, 1, 1), 2, False, {}),
]
for dt in FLOATS:
    for i, (xs, mg, k, st, pads, op, dil, g, has_bias, extra) in enumerate(CONVT):
        x = rand(xs, dt, -1, 1)
        w = rand((xs[1], mg) + tuple(k), dt, -1, 1)
        bias = rand((mg * g,), dt, -1, 1) if has_bias else None
        inits = {"w": w} if bias is None else {"w": w, "b": bias}
        attrs = {"kernel_shape": list(k), "strides": list(st), "dilations": list(dil), "group": g}
        if extra:
            attrs.update(extra)  # the pads follow from output_shape or auto_pad
        else:
            attrs.update({"pads": list(pads), "output_padding": list(op)})
        ref = conv_transpose_ref(x, w, bias, st, dil, g, pads, op)
        case("ConvTranspose_%s_%d" % (dt.__name__, i), "ConvTranspose", {"x": x}, {"y": ref.numpy().astype(dt)},
             inits=inits, attrs=attrs)
    # torch's own padding and output_padding (symmetric), against the crop above
    x, w = rand((2, 3, 4, 5), dt, -1, 1), rand((3, 5, 3, 3), dt, -1, 1)
    ref = F.conv_transpose2d(cube(x), cube(w), None, stride=2, padding=1, output_padding=1)
    case("ConvTranspose_%s_torch_padding" % dt.__name__, "ConvTranspose", {"x": x}, {"y": ref.numpy().astype(dt)},
         inits={"w": w}, attrs={"strides": [2, 2], "pads": [1, 1, 1, 1], "output_padding": [1, 1]})
    # weights fed at run time (packed per run instead of at plan time)
    x, w = rand((1, 4, 3, 3), dt, -1, 1), rand((4, 2, 3, 3), dt, -1, 1)
    case("ConvTranspose_%s_runtime_weights" % dt.__name__, "ConvTranspose", {"x": x, "w": w},
         {"y": F.conv_transpose2d(cube(x), cube(w), None, stride=2, groups=2).numpy().astype(dt)},
         attrs={"strides": [2, 2], "group": 2})

# ---- Einsum: contractions on the Cube (operands rounded to fp16, float64 sums); the rest in fp32 ----------
EINSUM_CUBE = [("bij,bjk->bik", (2, 3, 5), (2, 5, 4)), ("bhqd,bhkd->bhqk", (2, 3, 4, 8), (2, 3, 5, 8)),
               ("bhqk,bhkd->bhqd", (2, 3, 4, 5), (2, 3, 5, 8)), ("ij,jk->ik", (17, 33), (33, 9)),
               ("ji,jk->ik", (33, 17), (33, 9)), ("ibnd,jbnd->bnij", (5, 2, 3, 4), (6, 2, 3, 4)),
               ("bn,anm->bam", (3, 4), (2, 4, 5)), ("i,i->", (10,), (10,)),
               ("...ij,...jk->...ik", (2, 3, 4, 5), (2, 3, 5, 6)), ("ij,jk", (4, 7), (7, 3)),
               ("bhqd,bkhd->bqhk", (1, 2, 65, 16), (1, 70, 2, 16))]
EINSUM_VECTOR = [("ij->ji", [(3, 4)]), ("bij->bj", [(2, 3, 4)]), ("ij->", [(5, 6)]), ("i,j->ij", [(4,), (5,)]),
                 ("bi,bi->bi", [(3, 4), (3, 4)]), ("ij,jk->k", [(3, 4), (4, 5)]), ("ba", [(3, 4)])]
for dt in FLOATS:
    n = dt.__name__
    for i, (eq, sa, sb) in enumerate(EINSUM_CUBE):
        a, b = rand(sa, dt, -1, 1), rand(sb, dt, -1, 1)
        case("Einsum_%s_cube_%d" % (n, i), "Einsum", {"a": a, "b": b},
             {"y": np.array(torch.einsum(eq, cube(a), cube(b)).numpy()).astype(dt)}, attrs={"equation": eq})
    for i, (eq, shapes) in enumerate(EINSUM_VECTOR):
        xs = [rand(sh, dt, -1, 1) for sh in shapes]
        names = ["a", "b"][:len(xs)]
        case("Einsum_%s_vector_%d" % (n, i), "Einsum", dict(zip(names, xs)),
             {"y": np.array(back(torch.einsum(eq, *[t(x) for x in xs]), dt))}, attrs={"equation": eq})

# ---- LSTM and GRU: ONNX's recurrence in float64 with the Cube's operands rounded to fp16 (rnn_reference.py) ---
# The recurrence is torch's own: nn.LSTM / nn.GRU (float64) against it without rounding.
for kind, module in (("LSTM", torch.nn.LSTM), ("GRU", torch.nn.GRU)):
    m = module(3, 4, bidirectional=True).double()
    xx = torch.randn(5, 2, 3, dtype=torch.float64)
    out = m(xx)[0].detach()
    params = [[torch_to_onnx_gates(getattr(m, name + "_l0" + sfx).detach(), kind) for sfx in ("", "_reverse")]
              for name in ("weight_ih", "weight_hh", "bias_ih", "bias_hh")]
    ys = onnx_rnn(kind, [xx, torch.stack(params[0]), torch.stack(params[1]),
                         torch.cat([torch.stack(params[2]), torch.stack(params[3])], 1)],
                  {"direction": "bidirectional", "linear_before_reset": 1}, rounded=False)[0]
    mine = ys.permute(0, 2, 1, 3).reshape(5, 2, 8)
    assert (mine - out).abs().max().item() < 1e-12, (kind, (mine - out).abs().max().item())

RNNS = [  # kind, seq, batch, input, hidden, direction, bias, initial states, sequence_lens, linear_before_reset
    ("LSTM", 5, 3, 4, 8, "forward", True, False, None, 0),
    ("LSTM", 4, 2, 3, 5, "reverse", False, True, None, 0),
    ("LSTM", 6, 3, 5, 16, "bidirectional", True, True, [6, 2, 4], 0),
    ("GRU", 5, 3, 4, 8, "forward", True, False, None, 1),
    ("GRU", 4, 2, 3, 5, "reverse", True, True, None, 0),
    ("GRU", 6, 3, 5, 16, "bidirectional", True, True, [3, 6, 0], 1),
    ("GRU", 3, 2, 4, 6, "bidirectional", False, False, None, 0),
]
for dt in FLOATS:
    for i, (kind, seq, batch, inp, hid, direction, has_b, has_init, lens, lbr) in enumerate(RNNS):
        G = 4 if kind == "LSTM" else 3
        dirs = 2 if direction == "bidirectional" else 1
        x = rand((seq, batch, inp), dt, -1, 1)
        W = rand((dirs, G * hid, inp), dt, -0.5, 0.5)
        R = rand((dirs, G * hid, hid), dt, -0.5, 0.5)
        B = rand((dirs, 2 * G * hid), dt, -0.5, 0.5) if has_b else None
        h0 = rand((dirs, batch, hid), dt, -1, 1) if has_init else None
        c0 = rand((dirs, batch, hid), dt, -1, 1) if has_init and kind == "LSTM" else None
        given = [torch.from_numpy(np.asarray(v, np.float64)) if v is not None else None for v in (x, W, R, B)]
        given += [torch.tensor(lens) if lens else None] + [
            torch.from_numpy(np.asarray(v, np.float64)) if v is not None else None for v in (h0, c0)]
        ref = onnx_rnn(kind, given, {"direction": direction, "linear_before_reset": lbr})
        ys, hn, cn = (ref + [None])[:3]
        inputs, inits = {"x": x}, {"W": W, "R": R}
        names = ["x", "W", "R"]
        for name, v in (("B", B), ("lens", np.array(lens, np.int32) if lens else None), ("h0", h0), ("c0", c0)):
            if kind == "GRU" and name == "c0":
                continue
            if v is None:
                names.append("")
            else:
                inits[name] = v
                names.append(name)
        while names[-1] == "":
            names.pop()
        outs = {"y": ys.detach().numpy().astype(dt), "y_h": hn.detach().numpy().astype(dt)}
        if kind == "LSTM":
            outs["y_c"] = cn.detach().numpy().astype(dt)
        attrs = {"hidden_size": hid, "direction": direction}
        if kind == "GRU":
            attrs["linear_before_reset"] = lbr
        case("%s_%s_%d" % (kind, dt.__name__, i), kind, inputs, outs, attrs=attrs, inits=inits, node_inputs=names)

# ---- fp16 overflow: saturation (Ascend 910) and IEEE inf/NaN (910B) ----------------------------
big = np.array([60000, -60000, 300, 1, 65504, -65504], np.float16)
two = np.array([2, 2, 300, 0, 1, 1], np.float16)
for preset in ("ascend910", "ascend910b"):
    case("OverflowMul_" + preset, "Mul", {"a": big, "b": two}, {"y": back(t(big) * t(two), np.float16)},
         preset=preset)
    case("OverflowAdd_" + preset, "Add", {"a": big, "b": big}, {"y": back(t(big) + t(big), np.float16)},
         preset=preset)
    z = np.array([1, -1, 0, 5], np.float16)
    zero = np.zeros(4, np.float16)
    case("OverflowDiv_" + preset, "Div", {"a": z, "b": zero}, {"y": back(t(z) / t(zero), np.float16)},
         preset=preset)
    e = np.array([10, 11, 12, 20, -20], np.float16)
    case("OverflowExp_" + preset, "Exp", {"x": e}, {"y": back(torch.exp(t(e)), np.float16)}, preset=preset)
    c32 = np.array([1e5, -1e6, 3.0, np.inf], np.float32)
    case("OverflowCast_" + preset, "Cast", {"x": c32}, {"y": c32.astype(np.float16)}, attrs={"to": 10},
         preset=preset)
    ma = np.full((2, 64), 16.0, np.float16)
    mb = np.full((64, 3), 128.0, np.float16)
    case("OverflowMatMul_" + preset, "MatMul", {"a": ma, "b": mb},
         {"y": torch.matmul(cube(ma), cube(mb)).numpy().astype(np.float16)}, preset=preset)

print("wrote %d cases to %s" % (op_cases.count, OUT))
