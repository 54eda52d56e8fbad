#!/usr/bin/python3
"""Writes a table of Conv / MaxPool / AveragePool geometries with PyTorch's
verdict for tests/graph/window_torch_test.cc.

usage: make_window_cases.py OUTDIR

OUTDIR/cases.txt has one case per line, fields separated by '|':
  op | N,C,H,W | M,kh,kw (Conv) or kh,kw | sh,sw | dh,dw | ph,pw | ceil_mode |
  count_include_pad | verdict | input values | weight values | output values
The verdict is torch's output shape ("N,C,OH,OW") or "ERROR <torch's message>".
Pads are symmetric (torch cannot express others). Values (small integers, so
every sum is exact in fp16 and fp32) are given when the case is small; the
output values are torch's.

One deliberate difference from torch: a Conv whose input has 0 channels is
rejected here, where torch returns a tensor with 0 output channels (not the
N x M x OH x OW result of convolving nothing); such cases are written with
the verdict "ERROR ours: 0 input channels".
"""
import os
import sys
import warnings

import numpy as np
import torch
import torch.nn.functional as F

warnings.filterwarnings("ignore")
OUT = sys.argv[1]
rng = np.random.default_rng(7)
MAX_VALUES = 600  # elements of input or output beyond which values are not written


def dim(lo=1, hi=9, zero=0.06):
    return 0 if rng.random() < zero else int(rng.integers(lo, hi))


def fmt(v):
    return ",".join(str(int(i)) for i in v)


def geometry(op):
    n, c, h, w = dim(1, 3), dim(1, 4), dim(1, 12), dim(1, 12)

    def kernel(extent):  # mostly one that fits, sometimes larger, rarely 0
        r = rng.random()
        if r < 0.04:
            return 0
        return int(rng.integers(1, max(2, min(extent, 7) + 1))) if r < 0.8 else int(rng.integers(1, 12))

    kh, kw = kernel(h), kernel(w)
    sh, sw = int(rng.integers(1, 4)), int(rng.integers(1, 4))
    if rng.random() < 0.03:
        sh = 0
    dh, dw = (1, 1) if op == "AveragePool" else (int(rng.integers(1, 4)), int(rng.integers(1, 3)))

    def pad(k):  # pools: mostly within torch's half-kernel rule
        if op != "Conv" and rng.random() < 0.8:
            return int(rng.integers(0, k // 2 + 1))
        return int(rng.integers(0, 5))

    ph, pw = pad(kh), pad(kw)
    ceil = int(rng.random() < 0.4) if op != "Conv" else 0
    include = int(rng.random() < 0.5) if op == "AveragePool" else 0
    m = dim(1, 4, zero=0.04) if op == "Conv" else 0
    return n, c, h, w, m, kh, kw, sh, sw, dh, dw, ph, pw, ceil, include


def torch_run(op, x, wt, sh, sw, dh, dw, ph, pw, ceil, include, kh, kw):
    if op == "Conv":
        return F.conv2d(x, wt, stride=(sh, sw), padding=(ph, pw), dilation=(dh, dw))
    if op == "MaxPool":
        return F.max_pool2d(x, (kh, kw), stride=(sh, sw), padding=(ph, pw), dilation=(dh, dw), ceil_mode=bool(ceil))
    return F.avg_pool2d(x, (kh, kw), stride=(sh, sw), padding=(ph, pw), ceil_mode=bool(ceil),
                        count_include_pad=bool(include))


lines = []
for i in range(900):
    op = ["Conv", "MaxPool", "AveragePool"][i % 3]
    n, c, h, w, m, kh, kw, sh, sw, dh, dw, ph, pw, ceil, include = geometry(op)
    x = rng.integers(-3, 4, size=(n, c, h, w)).astype(np.float32)
    wt = rng.integers(-2, 3, size=(m, c, kh, kw)).astype(np.float32) if op == "Conv" else None
    values = ["", "", ""]
    try:
        if op == "Conv" and c == 0:
            raise ValueError("ours: 0 input channels")
        y = torch_run(op, torch.from_numpy(x), None if wt is None else torch.from_numpy(wt), sh, sw, dh, dw, ph, pw,
                      ceil, include, kh, kw).numpy()
        verdict = fmt(y.shape)
        if x.size <= MAX_VALUES and y.size <= MAX_VALUES:
            values = [fmt(x.reshape(-1)), fmt(wt.reshape(-1)) if wt is not None else "",
                      ",".join(repr(float(v)) for v in y.reshape(-1))]
    except Exception as e:  # torch's rejection, as torch words it
        if "descriptor" in str(e):
            continue  # oneDNN's own limit on dilated convolutions, not a rule of the op
        verdict = "ERROR " + str(e).split("\n")[0].replace("|", "/")[:160]
    kernel = fmt([m, kh, kw]) if op == "Conv" else fmt([kh, kw])
    lines.append("|".join([op, fmt([n, c, h, w]), kernel, fmt([sh, sw]), fmt([dh, dw]), fmt([ph, pw]), str(ceil),
                           str(include), verdict] + values))

os.makedirs(OUT, exist_ok=True)
with open(os.path.join(OUT, "cases.txt"), "w") as f:
    f.write("\n".join(lines) + "\n")
