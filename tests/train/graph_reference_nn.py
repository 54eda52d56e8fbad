"""torch float64 references, written from the ONNX spec, of the network ops
graph_reference.py leaves to this file: ConvTranspose (any pads, auto_pad,
output_padding, output_shape), InstanceNormalization, GroupNormalization
(per-channel or opset 18's per-group affine), TopK and Resize (nearest and
linear, each coordinate transformation, through per-axis interpolation
matrices built from the spec's formulas); LSTM and GRU are
tests/graph/rnn_reference.py's."""
import math

import numpy as np
import torch
import torch.nn.functional as F

from graph_reference import attr, g16, r16


def _conv_transpose(n, x, w, b):
    sp = x.dim() - 2
    s = attr(n, "strides", [1] * sp)
    d = attr(n, "dilations", [1] * sp)
    op = attr(n, "output_padding", [0] * sp)
    pads = list(attr(n, "pads", [0] * (2 * sp)))
    auto_pad = attr(n, "auto_pad", "NOTSET")
    out_shape = attr(n, "output_shape")
    fn = {1: F.conv_transpose1d, 2: F.conv_transpose2d, 3: F.conv_transpose3d}[sp]
    full = fn(r16(x), r16(w), None, s, 0, 0, attr(n, "group", 1), d)
    for i in range(sp):
        k = w.shape[2 + i]
        natural = s[i] * (x.shape[2 + i] - 1) + op[i] + d[i] * (k - 1) + 1
        if auto_pad == "VALID":
            pads[i] = pads[sp + i] = 0
        elif out_shape or auto_pad in ("SAME_UPPER", "SAME_LOWER"):
            target = out_shape[i] if out_shape else x.shape[2 + i] * s[i]
            total = natural - target
            if auto_pad == "SAME_UPPER":
                pads[i], pads[sp + i] = total // 2, total - total // 2
            else:
                pads[i], pads[sp + i] = total - total // 2, total // 2
    # output_padding: zero rows at the end of the full output, then the pads crop.
    full = F.pad(full, [v for i in reversed(range(sp)) for v in (0, op[i])])
    crop = tuple([slice(None), slice(None)] +
                 [slice(pads[i], full.shape[2 + i] - pads[sp + i]) for i in range(sp)])
    y = g16(full[crop])
    if b is not None:
        y = y + b.reshape((1, -1) + (1,) * sp)
    return y


def _group_norm(n, x, scale, bias, groups):
    nb, c = x.shape[:2]
    xr = x.reshape(nb, groups, -1)
    mean = xr.mean(-1, keepdim=True)
    var = ((xr - mean) ** 2).mean(-1, keepdim=True)
    xh = ((xr - mean) / torch.sqrt(var + attr(n, "epsilon", 1e-5))).reshape(x.shape)
    if scale.numel() != c:  # opset 18: one scale and bias per group
        scale = scale.repeat_interleave(c // groups)
        bias = bias.repeat_interleave(c // groups)
    shape = (1, c) + (1,) * (x.dim() - 2)
    return xh * scale.reshape(shape) + bias.reshape(shape)


def _source_coordinate(mode, i, scale, n_in, n_out):
    if mode == "half_pixel":
        return (i + 0.5) / scale - 0.5
    if mode == "pytorch_half_pixel":
        return (i + 0.5) / scale - 0.5 if n_out > 1 else 0.0
    if mode == "align_corners":
        return i * (n_in - 1) / (n_out - 1) if n_out > 1 else 0.0
    if mode == "asymmetric":
        return i / scale
    if mode == "tf_half_pixel_for_nn":
        return (i + 0.5) / scale
    raise ValueError(mode)


def _round(mode, x):
    if mode == "round_prefer_floor":
        return math.ceil(x - 0.5)
    if mode == "round_prefer_ceil":
        return math.floor(x + 0.5)
    return math.floor(x) if mode == "floor" else math.ceil(x)


def resize_matrix(n, n_in, n_out, scale):
    """The [n_out, n_in] matrix of one axis's resize."""
    m = np.zeros((n_out, n_in))
    coords = attr(n, "coordinate_transformation_mode", "half_pixel")
    for i in range(n_out):
        x = _source_coordinate(coords, i, scale, n_in, n_out)
        if attr(n, "mode", "nearest") == "nearest":
            m[i, min(max(_round(attr(n, "nearest_mode", "round_prefer_floor"), x), 0), n_in - 1)] = 1.0
        else:
            x = min(max(x, 0.0), n_in - 1.0)
            lo = int(math.floor(x))
            hi = min(lo + 1, n_in - 1)
            m[i, lo] += 1.0 - (x - lo)
            m[i, hi] += x - lo
    return torch.from_numpy(m)


def _resize(n, x, scales, sizes):
    rank = x.dim()
    axes = [a % rank for a in attr(n, "axes", list(range(rank)))]
    y = x
    for k, a in enumerate(axes):
        n_in = x.shape[a]
        if scales is not None and scales.numel() > 0:
            scale = float(scales[k])
            n_out = int(math.floor(n_in * scale))
        else:
            n_out = int(sizes[k])
            scale = n_out / n_in
        y = torch.movedim(torch.tensordot(resize_matrix(n, n_in, n_out, scale), y, dims=([1], [a])), 0, a)
    return [g16(y)]  # the gradient contracts on the Cube: dy is an fp16 operand


def evaluate_nn(n, op, ins):
    """The outputs of `op`, or None for an op this file does not know."""
    x = ins[0] if ins else None
    if op == "ConvTranspose":
        return [_conv_transpose(n, x, ins[1], ins[2] if len(ins) > 2 else None)]
    if op == "InstanceNormalization":
        return [_group_norm(n, x, ins[1], ins[2], x.shape[1])]
    if op == "GroupNormalization":
        return [_group_norm(n, x, ins[1], ins[2], attr(n, "num_groups"))]
    if op == "TopK":
        k = int(ins[1].reshape(-1)[0])
        v, i = torch.topk(x, k, dim=attr(n, "axis", -1), largest=bool(attr(n, "largest", 1)),
                          sorted=bool(attr(n, "sorted", 1)))
        return [v, i]
    if op == "Resize":
        return _resize(n, x, ins[2] if len(ins) > 2 else None, ins[3] if len(ins) > 3 else None)
    if op == "LpPool":  # (sum of |x|^p over the window)^(1/p), padding adding 0
        k = attr(n, "kernel_shape")
        sp, p = len(k), attr(n, "p", 2)
        pads = attr(n, "pads", [0] * (2 * sp))[:sp]
        pool = {1: F.avg_pool1d, 2: F.avg_pool2d, 3: F.avg_pool3d}[sp]
        s = pool(x.abs() ** p, k, attr(n, "strides", [1] * sp), pads, count_include_pad=True) * math.prod(k)
        return [s ** (1.0 / p)]
    if op in ("LSTM", "GRU"):
        from rnn_reference import onnx_rnn
        return onnx_rnn(op, ins, n.get("attrs", {}))
    return None
