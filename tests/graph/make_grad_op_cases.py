#!/usr/bin/python3
"""Writes test cases of the training ops (gradients, losses, seeded dropout)
for tests/graph/ops_torch_test.cc, in make_op_cases.py's format.

usage: make_grad_op_cases.py OUTDIR

References come from torch's autograd: torch.autograd.grad of the forward op,
or, where the op takes the forward's saved output (Y of Sigmoid, Tanh,
Softmax, ...), the backward formula autograd applies to that saved tensor
(torch.ops.aten.*_backward), so both sides start from the same Y. They are
computed in float64 from the (fp16 or fp32) inputs and rounded once; Cube
gradients (ConvGrad) round their operands to fp16 first, as the Cube does.
SeededDropout's mask is the documented hash (SplitMix64 of seed, FNV-1a of the
node name and the element index), written again here in Python.
"""
import numpy as np
import torch
import torch.nn.functional as F

import op_cases
from dropout_mask import dropout_mask
from op_cases import FLOATS, LP_POOLS, OUT, POOL_GEOMETRIES, POOLS_3D, case, cube, lp_pool_ref, rand, rng
from rnn_reference import onnx_rnn

aten = torch.ops.aten


def f64(a):
    return torch.from_numpy(np.array(a, order="C")).double()


def out(x, dt):
    return x.detach().numpy().astype(dt)


# ---- activation gradients --------------------------------------------------------------------
SHAPES = [(7,), (2, 3, 5), (1, 4099)]
for dt in FLOATS:
    for i, s in enumerate(SHAPES):
        x, dy = rand(s, dt, -4, 4), rand(s, dt, -2, 2)
        y = out(torch.relu(f64(x)), dt)
        case("ReluGrad_%s_%d" % (dt.__name__, i), "ReluGrad", {"dy": dy, "y": y},
             {"dx": out(aten.threshold_backward(f64(dy), f64(y), 0.0), dt)})
        y = out(torch.sigmoid(f64(x)), dt)
        case("SigmoidGrad_%s_%d" % (dt.__name__, i), "SigmoidGrad", {"dy": dy, "y": y},
             {"dx": out(aten.sigmoid_backward(f64(dy), f64(y)), dt)})
        y = out(torch.tanh(f64(x)), dt)
        case("TanhGrad_%s_%d" % (dt.__name__, i), "TanhGrad", {"dy": dy, "y": y},
             {"dx": out(aten.tanh_backward(f64(dy), f64(y)), dt)})
        case("LeakyReluGrad_%s_%d" % (dt.__name__, i), "LeakyReluGrad", {"dy": dy, "x": x},
             {"dx": out(aten.leaky_relu_backward(f64(dy), f64(x), 0.2, False), dt)}, attrs={"alpha": 0.2})
        for approx in ("none", "tanh"):
            xv = f64(x).requires_grad_()
            (gx,) = torch.autograd.grad(F.gelu(xv, approximate=approx), xv, f64(dy))
            case("GeluGrad_%s_%s_%d" % (approx, dt.__name__, i), "GeluGrad", {"dy": dy, "x": x}, {"dx": out(gx, dt)},
                 attrs={"approximate": approx} if approx != "none" else None)

# ---- softmax gradients ----------------------------------------------------------------------
for dt in FLOATS:
    for i, (shape, axis) in enumerate([((3, 17), -1), ((2, 5, 4), 1), ((1, 1000), 1)]):
        x, dy = rand(shape, dt, -5, 5), rand(shape, dt, -1, 1)
        y = out(torch.softmax(f64(x), axis), dt)
        case("SoftmaxGrad_%s_%d" % (dt.__name__, i), "SoftmaxGrad", {"dy": dy, "y": y},
             {"dx": out(aten._softmax_backward_data(f64(dy), f64(y), axis, torch.float64), dt)}, attrs={"axis": axis})
        y = out(torch.log_softmax(f64(x), axis), dt)
        case("LogSoftmaxGrad_%s_%d" % (dt.__name__, i), "LogSoftmaxGrad", {"dy": dy, "y": y},
             {"dx": out(aten._log_softmax_backward_data(f64(dy), f64(y), axis, torch.float64), dt)},
             attrs={"axis": axis})

# ---- normalisation: LayerNorm gradient, BatchNorm training and gradient -----------------------
for dt in FLOATS:
    for i, (shape, axis) in enumerate([((2, 5, 33), -1), ((3, 4, 6), 1), ((7, 256), -1)]):
        x, dy = rand(shape, dt, -2, 4), rand(shape, dt, -1, 1)
        norm = shape[axis:]
        w = rand(norm, dt, 0.5, 1.5)
        xv, wv, bv = f64(x).requires_grad_(), f64(w).requires_grad_(), torch.zeros(norm, dtype=torch.float64,
                                                                                   requires_grad=True)
        dims = tuple(range(len(shape) - len(norm), len(shape)))
        mean = f64(x).mean(dim=dims, keepdim=True)
        inv = 1.0 / torch.sqrt(f64(x).var(dim=dims, unbiased=False, keepdim=True) + 1e-5)
        gx, gw, gb = torch.autograd.grad(F.layer_norm(xv, norm, wv, bv, 1e-5), (xv, wv, bv), f64(dy))
        case("LayerNormalizationGrad_%s_%d" % (dt.__name__, i), "LayerNormalizationGrad",
             {"dy": dy, "x": x, "w": w, "mean": out(mean, np.float32), "inv": out(inv, np.float32)},
             {"dx": out(gx, dt), "dw": out(gw, dt), "db": out(gb, dt)}, attrs={"axis": axis, "epsilon": 1e-5})
    for i, shape in enumerate([(4, 3, 5, 7), (8, 6), (2, 5, 1, 9)]):
        c = shape[1]
        x, dy = rand(shape, dt, -2, 3), rand(shape, dt, -1, 1)
        sc, bi = rand((c,), dt, 0.5, 2), rand((c,), dt, -1, 1)
        rm, rv = rand((c,), np.float32, -1, 1), rand((c,), np.float32, 0.5, 2)
        dims = tuple(d for d in range(len(shape)) if d != 1)
        y = F.batch_norm(f64(x), None, None, f64(sc), f64(bi), True, 0.0, 1e-5)
        # ONNX's running statistics: the population variance (torch's running_var is unbiased).
        bm, bv = f64(x).mean(dim=dims), f64(x).var(dim=dims, unbiased=False)
        case("BatchNormTraining_%s_%d" % (dt.__name__, i), "BatchNormalization", {"x": x},
             {"y": out(y, dt), "rm_out": out(f64(rm) * 0.9 + bm * 0.1, np.float32),
              "rv_out": out(f64(rv) * 0.9 + bv * 0.1, np.float32)},
             attrs={"epsilon": 1e-5, "momentum": 0.9, "training_mode": 1},
             inits={"scale": sc, "bias": bi, "mean": rm, "var": rv})
        xv, sv, bv_ = f64(x).requires_grad_(), f64(sc).requires_grad_(), f64(bi).requires_grad_()
        gx, gs, gb = torch.autograd.grad(F.batch_norm(xv, None, None, sv, bv_, True, 0.0, 1e-5), (xv, sv, bv_),
                                         f64(dy))
        case("BatchNormalizationGrad_%s_%d" % (dt.__name__, i), "BatchNormalizationGrad",
             {"dy": dy, "x": x, "scale": sc}, {"dx": out(gx, dt), "dscale": out(gs, dt), "dbias": out(gb, dt)},
             attrs={"epsilon": 1e-5})

# ---- pooling gradients ------------------------------------------------------------------------
for dt in FLOATS:
    x = rand((2, 3, 9, 11), dt)
    for i, pp in enumerate(POOL_GEOMETRIES):
        k, s, p, d, ceil = pp["k"], pp["s"], pp["p"], pp["d"], pp["ceil"]
        xv = f64(x).requires_grad_()
        y = F.max_pool2d(xv, k, s, p, d, ceil_mode=bool(ceil))
        dy = rand(tuple(y.shape), dt, -1, 1)
        (gx,) = torch.autograd.grad(y, xv, f64(dy))
        case("MaxPoolGrad_%s_%d" % (dt.__name__, i), "MaxPoolGrad", {"dy": dy, "x": x}, {"dx": out(gx, dt)},
             attrs={"kernel_shape": [k, k], "strides": [s, s], "pads": [p, p, p, p], "dilations": [d, d],
                    "ceil_mode": ceil})
        if d == 1:
            for cip in (0, 1):
                xv = f64(x).requires_grad_()
                y = F.avg_pool2d(xv, k, s, p, ceil_mode=bool(ceil), count_include_pad=bool(cip))
                (gx,) = torch.autograd.grad(y, xv, f64(dy))
                case("AveragePoolGrad_%s_%d_%d" % (dt.__name__, i, cip), "AveragePoolGrad", {"dy": dy, "x": x},
                     {"dx": out(gx, dt)},
                     attrs={"kernel_shape": [k, k], "strides": [s, s], "pads": [p, p, p, p], "ceil_mode": ceil,
                            "count_include_pad": cip})

# ---- ConvGrad (Cube): operands rounded to fp16, float64 sums ------------------------------------
CONVS = [dict(n=1, c=3, h=9, w=11, m=4, k=3, s=1, p=1, d=1, g=1),
         dict(n=2, c=4, h=10, w=7, m=6, k=3, s=2, p=0, d=2, g=2),
         dict(n=1, c=5, h=8, w=8, m=5, k=3, s=1, p=1, d=1, g=5),
         dict(n=2, c=3, h=8, w=6, m=8, k=5, s=1, p=2, d=1, g=1),
         dict(n=2, c=2, h=7, w=9, m=3, k=2, s=3, p=1, d=1, g=1),
         # 1600 pixels: images in chunks of 3 and 2 (ConvGrad's GEMMs span a chunk); small integers, so that
         # the 8000-term sums are exact in fp32 and any misplaced image shows
         dict(n=5, c=2, h=40, w=40, m=3, k=3, s=1, p=1, d=1, g=1, ints=True)]


def conv_values(shape, dt, ints):
    return (rng.integers(-3, 4, size=shape) / 4).astype(dt) if ints else rand(shape, dt, -1, 1)


for dt in FLOATS:
    for i, cv in enumerate(CONVS):
        ints = cv.get("ints", False)
        x = conv_values((cv["n"], cv["c"], cv["h"], cv["w"]), dt, ints)
        w = conv_values((cv["m"], cv["c"] // cv["g"], cv["k"], cv["k"]), dt, ints)
        xv, wv = cube(x).requires_grad_(), cube(w).requires_grad_()
        y = F.conv2d(xv, wv, None, cv["s"], cv["p"], cv["d"], cv["g"])
        dy = conv_values(tuple(y.shape), dt, ints)
        gx, gw = torch.autograd.grad(y, (xv, wv), cube(dy))
        p = cv["p"]
        attrs = {"strides": [cv["s"]] * 2, "pads": [p] * 4, "dilations": [cv["d"]] * 2, "group": cv["g"],
                 "kernel_shape": [cv["k"]] * 2}
        case("ConvGrad_%s_%d" % (dt.__name__, i), "ConvGrad", {"dy": dy, "x": x, "w": w},
             {"dw": out(gw, dt), "dx": out(gx, dt)}, attrs=attrs)
        if i == 0:
            case("ConvGradWeightsOnly_%s" % dt.__name__, "ConvGrad", {"dy": dy, "x": x, "w": w}, {"dw": out(gw, dt)},
                 attrs=attrs)

# ---- LSTMGrad, GRUGrad: torch.autograd through rnn_reference.py (fp16 GEMM operands and gradients) -----
RNN_GRADS = [  # kind, seq, batch, input, hidden, direction, initial states, sequence_lens, attrs, grads given, outputs
    ("LSTM", 4, 3, 5, 6, "forward", True, None, {}, "YHC", 7),
    ("LSTM", 5, 3, 4, 5, "bidirectional", True, [5, 2, 0], {"peepholes": True}, "Y", 7),
    ("LSTM", 3, 2, 3, 4, "reverse", False, [3, 1], {"clip": 0.5}, "HC", 4),
    ("GRU", 4, 3, 5, 6, "bidirectional", True, [4, 1, 3], {"linear_before_reset": 1}, "YH", 5),
    ("GRU", 5, 2, 3, 5, "forward", True, None, {"clip": 0.6}, "YH", 5),
    ("GRU", 3, 3, 4, 4, "reverse", False, [2, 3, 1], {}, "H", 2),
]
for dt in FLOATS:
    for i, (kind, seq, batch, inp, hid, direction, init, lens, extra, given, n_out) in enumerate(RNN_GRADS):
        G, dirs = (4 if kind == "LSTM" else 3), (2 if direction == "bidirectional" else 1)
        attrs = {"hidden_size": hid, "direction": direction}
        attrs.update({k: v for k, v in extra.items() if k != "peepholes"})
        arrays = {"x": rand((seq, batch, inp), dt, -1, 1), "W": rand((dirs, G * hid, inp), dt, -0.7, 0.7),
                  "R": rand((dirs, G * hid, hid), dt, -0.7, 0.7), "B": rand((dirs, 2 * G * hid), dt, -0.5, 0.5)}
        names = ["x", "W", "R", "B", "lens" if lens else ""]
        states = ["h0", "c0"] if kind == "LSTM" else ["h0"]
        for k in states:
            if init:
                arrays[k] = rand((dirs, batch, hid), dt, -1, 1)
            names.append(k if init else "")
        if kind == "LSTM":
            if extra.get("peepholes"):
                arrays["p"] = rand((dirs, 3 * hid), dt, -1, 1)
            names.append("p" if "p" in arrays else "")
        leaves = {k: f64(v).requires_grad_() for k, v in arrays.items()}
        # An omitted initial state or P is zeros: its gradient is taken there.
        slots = ["x", "W", "R", "B", "lens"] + states + (["p"] if kind == "LSTM" else [])
        shapes = {"h0": (dirs, batch, hid), "c0": (dirs, batch, hid), "p": (dirs, 3 * hid)}
        for k in slots[5:]:
            if k not in leaves:
                leaves[k] = torch.zeros(shapes[k], dtype=torch.float64, requires_grad=True)
        ins = [leaves[k] for k in slots[:4]] + [torch.tensor(lens) if lens else None] + [leaves[k] for k in slots[5:]]
        outs = onnx_rnn(kind, ins, attrs)
        loss = 0
        grad_names = ["dY", "dY_h", "dY_c"][:len(outs)]
        for k, (o, g) in enumerate(zip(outs, grad_names)):
            if "YHC"[k] in given:
                arrays[g] = rand(tuple(o.shape), dt, -1, 1)
                loss = loss + (o * f64(arrays[g])).sum()
            names.append(g if "YHC"[k] in given else "")
        wrt = slots[:4] + slots[5:]
        grads = torch.autograd.grad(loss, [leaves[k] for k in wrt])
        out_names = ["dx", "dW", "dR", "dB", "dh0", "dc0", "dP"][:n_out]
        refs = {o: out(g, dt) for o, g in zip(out_names, grads)}
        while names[-1] == "":
            names.pop()
        inputs = {k: arrays[k] for k in names if k and k != "lens"}
        inits = {"lens": np.array(lens, np.int32)} if lens else {}
        case("%sGrad_%s_%d" % (kind, dt.__name__, i), kind + "Grad", inputs, refs, attrs=attrs, inits=inits,
             node_inputs=names)

# ---- GatherGrad (embedding tables) ---------------------------------------------------------------
for dt in FLOATS:
    table = rand((10, 6), dt)
    for i, (idx, axis) in enumerate([(np.array([[1, 3, 3], [0, 9, 1]], np.int64), 0),
                                     (np.array([2, -1, 2, 0], np.int32), 1)]):
        xv = f64(table).requires_grad_()
        y = torch.index_select(xv, axis, torch.from_numpy(np.where(idx < 0, idx + table.shape[axis], idx).astype(
            np.int64)).reshape(-1))
        shape = list(table.shape[:axis]) + list(idx.shape) + list(table.shape[axis + 1:])
        dy = rand(tuple(shape), dt, -1, 1)
        (gx,) = torch.autograd.grad(y, xv, f64(dy).reshape(y.shape))
        case("GatherGrad_%s_%d" % (dt.__name__, i), "GatherGrad", {"dy": dy, "i": idx, "x": table},
             {"dx": out(gx, dt)}, attrs={"axis": axis})

# ---- SeededDropout and DropoutGrad -------------------------------------------------------------------
for dt in FLOATS:
    for i, (shape, ratio, seed) in enumerate([((4, 33), 0.5, 7), ((1000,), 0.1, -3), ((2, 3, 4), 0.0, 1)]):
        x, dy = rand(shape, dt), rand(shape, dt)
        mask = dropout_mask(int(np.prod(shape)), seed, "n", ratio).reshape(shape)
        scale = np.float32(1.0) / (np.float32(1.0) - np.float32(ratio))  # as the op computes it, in fp32
        xv = f64(x).requires_grad_()
        y = xv * torch.from_numpy(mask).double() * float(scale)
        (gx,) = torch.autograd.grad(y, xv, f64(dy))
        r = np.array(ratio, np.float32)
        case("SeededDropout_%s_%d" % (dt.__name__, i), "SeededDropout", {"x": x, "seed": np.array(seed, np.int64)},
             {"y": out(y, dt), "mask": mask}, inits={"ratio": r}, node_inputs=["x", "ratio", "seed"])
        case("DropoutGrad_%s_%d" % (dt.__name__, i), "DropoutGrad", {"dy": dy, "mask": mask}, {"dx": out(gx, dt)},
             inits={"ratio": r})

# ---- SoftmaxCrossEntropyLoss and its gradient ------------------------------------------------------
for dt in FLOATS:
    for i, (n, c, reduction, ignore) in enumerate([(8, 10, "mean", None), (5, 3, "sum", None), (6, 7, "none", None),
                                                   (9, 4, "mean", 2), (1, 1000, "mean", None)]):
        scores = rand((n, c), dt, -4, 4)
        labels = np.random.default_rng(i).integers(0, c, size=n).astype(np.int64 if i % 2 == 0 else np.int32)
        attrs = {"reduction": reduction}
        kw = {}
        if ignore is not None:
            attrs["ignore_index"] = ignore
            kw["ignore_index"] = ignore
            labels[0] = ignore
        sv = f64(scores).requires_grad_()
        loss = F.cross_entropy(sv, torch.from_numpy(labels.astype(np.int64)), reduction=reduction, **kw)
        logp = torch.log_softmax(f64(scores), 1)
        case("SoftmaxCrossEntropyLoss_%s_%d" % (dt.__name__, i), "SoftmaxCrossEntropyLoss",
             {"scores": scores, "labels": labels}, {"loss": out(loss, dt), "logp": out(logp, dt)}, attrs=attrs)
        dloss = rand(tuple(loss.shape), dt, 0.5, 2)
        (gs,) = torch.autograd.grad(loss, sv, f64(dloss))
        case("SoftmaxCrossEntropyLossGrad_%s_%d" % (dt.__name__, i), "SoftmaxCrossEntropyLossGrad",
             {"dloss": dloss, "logp": out(logp, dt), "labels": labels}, {"dscores": out(gs, dt)}, attrs=attrs)
    # Class weights and positions ([N, C, d1, ...]): F.cross_entropy / F.nll_loss with weight; "mean" divides by
    # the counted positions' summed weights.
    for i, (shape, reduction, ignore, weighted) in enumerate([((4, 5, 3), "mean", None, True),
                                                             ((3, 4, 2, 3), "sum", 1, True),
                                                             ((2, 3, 5), "none", None, False),
                                                             ((6, 4), "mean", 0, True)]):
        rng = np.random.default_rng(10 + i)
        scores = rand(shape, dt, -4, 4)
        labels = rng.integers(0, shape[1], size=(shape[0],) + shape[2:]).astype(np.int64)
        weights = rand((shape[1],), dt, 0.2, 2)
        attrs, kw, inputs = {"reduction": reduction}, {}, {"scores": scores, "labels": labels}
        if ignore is not None:
            attrs["ignore_index"] = kw["ignore_index"] = ignore
            labels.flat[0] = ignore
        if weighted:
            inputs["weights"] = weights
            kw["weight"] = f64(weights)
        sv = f64(scores).requires_grad_()
        target = torch.from_numpy(labels)
        loss = F.cross_entropy(sv, target, reduction=reduction, **kw)
        logp = torch.log_softmax(f64(scores), 1)
        case("SoftmaxCrossEntropyLossWeighted_%s_%d" % (dt.__name__, i), "SoftmaxCrossEntropyLoss", inputs,
             {"loss": out(loss, dt), "logp": out(logp, dt)}, attrs=attrs)
        dloss = rand(tuple(loss.shape), dt, 0.5, 2)
        (gs,) = torch.autograd.grad(loss, sv, f64(dloss))
        grad_inputs = {"dloss": dloss, "logp": out(logp, dt), "labels": labels}
        if weighted:
            grad_inputs["weights"] = weights
        case("SoftmaxCrossEntropyLossGradWeighted_%s_%d" % (dt.__name__, i), "SoftmaxCrossEntropyLossGrad",
             grad_inputs, {"dscores": out(gs, dt)}, attrs=attrs)
        lp = out(logp, dt)
        nll = F.nll_loss(f64(lp), target, reduction=reduction, **kw)
        case("NegativeLogLikelihoodLoss_%s_%d" % (dt.__name__, i), "NegativeLogLikelihoodLoss",
             dict(inputs, scores=lp), {"loss": out(nll, dt)}, attrs=attrs)


# ---- optimizer updates: torch.optim in float64, one step ------------------------------------------
def torch_step(make_opt, param, grad, state=None):
    p = f64(param).requires_grad_()
    opt = make_opt([p])
    p.grad = f64(grad)
    if state is not None:
        opt.state[p] = {k: (f64(v) if isinstance(v, np.ndarray) else v) for k, v in state.items()}
    opt.step()
    return p.detach(), opt.state[p]


for gdt in FLOATS:
    for i, (lr, mom, wd, nest) in enumerate([(0.1, 0.0, 0.0, 0), (0.05, 0.9, 0.0, 0), (0.02, 0.9, 1e-2, 0),
                                             (0.1, 0.5, 1e-3, 1)]):
        shape = (7, 33) if i % 2 == 0 else (129,)
        p, g, vel = rand(shape, np.float32, -1, 1), rand(shape, gdt, -64, 64), rand(shape, np.float32, -1, 1)
        gscale = np.float32(1.0 / 128)
        g32 = g.astype(np.float32) * gscale  # the unscaled gradient, in fp32 as the op computes it
        make = lambda ps: torch.optim.SGD(ps, lr=float(np.float32(lr)), momentum=mom, weight_decay=wd, nesterov=bool(nest))
        state = {"momentum_buffer": vel} if mom else None
        p1, st = torch_step(make, p, g32, state)
        inputs = {"p": p, "g": g, "lr": np.array(lr, np.float32), "scale": np.array(gscale, np.float32),
                  "found": np.array(0, np.float32)}
        outputs = {"p_out": out(p1, np.float32)}
        if mom:
            inputs["v"] = vel
            outputs["v_out"] = out(st["momentum_buffer"], np.float32)
        case("SGDUpdate_%s_%d" % (gdt.__name__, i), "SGDUpdate", inputs, outputs,
             attrs={"momentum": mom, "weight_decay": wd, "nesterov": nest}, dtype=gdt.__name__)
        skipped = dict(inputs, found=np.array(3, np.float32))
        case("SGDUpdateSkipped_%s_%d" % (gdt.__name__, i), "SGDUpdate", skipped,
             dict({"p_out": p}, **({"v_out": vel} if mom else {})),
             attrs={"momentum": mom, "weight_decay": wd, "nesterov": nest}, dtype=gdt.__name__)
    for i, (lr, wd, decoupled, step) in enumerate([(1e-3, 0.0, 0, 1), (1e-2, 1e-2, 0, 5), (3e-3, 1e-2, 1, 17),
                                                   (1e-3, 0.1, 1, 2000)]):
        shape = (5, 17) if i % 2 == 0 else (64,)
        p, g = rand(shape, np.float32, -1, 1), rand(shape, gdt, -8, 8)
        m, v = rand(shape, np.float32, -0.1, 0.1), rand(shape, np.float32, 0, 0.01)
        gscale = np.float32(0.5)
        g32 = g.astype(np.float32) * gscale
        cls = torch.optim.AdamW if decoupled else torch.optim.Adam
        make = lambda ps: cls(ps, lr=float(np.float32(lr)), betas=(float(np.float32(0.9)), float(np.float32(0.999))),
                              eps=float(np.float32(1e-8)), weight_decay=float(np.float32(wd)))
        p1, st = torch_step(make, p, g32, {"step": torch.tensor(float(step - 1)), "exp_avg": m, "exp_avg_sq": v})
        inputs = {"p": p, "g": g, "m": m, "v": v, "lr": np.array(lr, np.float32), "scale": np.array(gscale, np.float32),
                  "found": np.array(0, np.float32), "step": np.array(step, np.int64)}
        case("AdamUpdate_%s_%d" % (gdt.__name__, i), "AdamUpdate", inputs,
             {"p_out": out(p1, np.float32), "m_out": out(st["exp_avg"], np.float32),
              "v_out": out(st["exp_avg_sq"], np.float32)},
             attrs={"weight_decay": wd, "decoupled": decoupled}, dtype=gdt.__name__)
        case("AdamUpdateSkipped_%s_%d" % (gdt.__name__, i), "AdamUpdate", dict(inputs, found=np.array(1, np.float32)),
             {"p_out": p, "m_out": m, "v_out": v}, attrs={"weight_decay": wd, "decoupled": decoupled},
             dtype=gdt.__name__)

# ---- NPUGetFloatStatus after an op that overflows, or not -----------------------------------------
for preset in ("ascend910", "ascend910b"):
    a = np.array([60000, 1, -60000, 2], np.float16)
    for i, b in enumerate([np.array([2, 2, 2, 2], np.float16), np.array([1, 1, 1, 1], np.float16)]):
        mul = {"name": "mul", "opType": "Mul", "inputs": ["a", "b"], "outputs": ["p"]}
        case("NPUGetFloatStatus_%s_%d" % (preset, i), "NPUGetFloatStatus", {"a": a, "b": b},
             {"status": np.array(2.0 if i == 0 else 0.0, np.float32)}, node_inputs=["p"], extra_nodes=[mul],
             preset=preset)

# ---- HcclAllReduce outside a collective group (one device): the sum over one device is a copy ----------
for dt in FLOATS:
    a, b = rand((3, 5), dt), rand((7,), dt)
    case("HcclAllReduce_%s" % dt.__name__, "HcclAllReduce", {"a": a, "b": b}, {"ra": a, "rb": b})

# ---- 3-D (NCDHW): ConvGrad (operands rounded to fp16), MaxPoolGrad, AveragePoolGrad ----------------
CONVS_3D = [dict(n=2, c=3, x=(4, 5, 6), m=4, k=(3, 3, 3), s=(1, 1, 1), p=(1, 1, 1), d=(1, 1, 1)),
            dict(n=1, c=2, x=(6, 5, 7), m=3, k=(2, 3, 2), s=(2, 1, 2), p=(1, 0, 1), d=(1, 2, 1)),
            dict(n=2, c=4, x=(3, 4, 5), m=4, k=(2, 3, 3), s=(1, 1, 1), p=(1, 1, 1), d=(1, 1, 1), g=4)]
for dt in FLOATS:
    for i, cv in enumerate(CONVS_3D):
        x = rand((cv["n"], cv["c"]) + cv["x"], dt, -1, 1)
        groups = cv.get("g", 1)
        w = rand((cv["m"], cv["c"] // groups) + cv["k"], dt, -1, 1)
        xv, wv = cube(x).requires_grad_(), cube(w).requires_grad_()
        y = F.conv3d(xv, wv, None, cv["s"], cv["p"], cv["d"], groups)
        dy = rand(tuple(y.shape), dt, -1, 1)
        gx, gw = torch.autograd.grad(y, (xv, wv), cube(dy))
        case("ConvGrad3d_%s_%d" % (dt.__name__, i), "ConvGrad", {"dy": dy, "x": x, "w": w},
             {"dw": out(gw, dt), "dx": out(gx, dt)},
             attrs={"strides": list(cv["s"]), "pads": list(cv["p"]) * 2, "dilations": list(cv["d"]),
                    "kernel_shape": list(cv["k"]), "group": groups})
    x = rand((2, 2, 5, 6, 7), dt)
    for i, pp in enumerate(POOLS_3D):
        attrs = {"kernel_shape": list(pp["k"]), "strides": list(pp["s"]), "pads": list(pp["p"]) * 2,
                 "ceil_mode": pp["ceil"]}
        xv = f64(x).requires_grad_()
        y = F.max_pool3d(xv, pp["k"], pp["s"], pp["p"], pp["d"], ceil_mode=bool(pp["ceil"]))
        dy = rand(tuple(y.shape), dt, -1, 1)
        (gx,) = torch.autograd.grad(y, xv, f64(dy))
        case("MaxPoolGrad3d_%s_%d" % (dt.__name__, i), "MaxPoolGrad", {"dy": dy, "x": x}, {"dx": out(gx, dt)},
             attrs=dict(attrs, dilations=list(pp["d"])))
        if pp["d"] == (1, 1, 1):
            for cip in (0, 1):
                xv = f64(x).requires_grad_()
                y = F.avg_pool3d(xv, pp["k"], pp["s"], pp["p"], ceil_mode=bool(pp["ceil"]),
                                 count_include_pad=bool(cip))
                (gx,) = torch.autograd.grad(y, xv, f64(dy))
                case("AveragePoolGrad3d_%s_%d_%d" % (dt.__name__, i, cip), "AveragePoolGrad", {"dy": dy, "x": x},
                     {"dx": out(gx, dt)}, attrs=dict(attrs, count_include_pad=cip))

# ---- LpPoolGrad: torch.autograd through the float64 LpPool --------------------------------------
for dt in FLOATS:
    for i, lpp in enumerate(LP_POOLS):
        x = rand((2, 3, 5, 7, 6)[:2 + len(lpp["k"])], dt, -2, 2)
        xv = f64(x).requires_grad_()
        y = lp_pool_ref(xv, lpp["norm"], lpp["k"], lpp["s"], lpp["p"], lpp["ceil"])
        dy = rand(tuple(y.shape), dt, -1, 1)
        (gx,) = torch.autograd.grad(y, xv, f64(dy))
        case("LpPoolGrad_%s_%d" % (dt.__name__, i), "LpPoolGrad", {"dy": dy, "x": x}, {"dx": out(gx, dt)},
             attrs={"kernel_shape": list(lpp["k"]), "strides": list(lpp["s"]), "pads": list(lpp["p"]) * 2,
                    "p": lpp["norm"], "ceil_mode": lpp["ceil"]})

print("wrote %d cases to %s" % (op_cases.count, OUT))
