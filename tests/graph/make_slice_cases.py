#!/usr/bin/python3
"""Writes Slice cases with NumPy references for tests/graph/slice_numpy_test.cc.

usage: make_slice_cases.py OUTDIR

OUTDIR/cases.txt has one case per line, fields separated by '|':
  shape | starts | ends | axes | steps | expected shape | expected values
lists comma-separated, '-' for an omitted axes/steps input; the input is
arange(prod(shape)) as INT32, and the expected values are NumPy's slice of it.
An expected shape of 'ERROR' means NumPy rejects the slice (a step of 0).

NumPy and ONNX agree on every clamp but one: with a negative step, a start
before the front (start < -dim) is clamped by ONNX to 0 (the spec clamps
starts to [0, dim - 1]; onnxruntime does the same) where NumPy clamps it to -1
and takes nothing. The reference applies that one ONNX rule before slicing.
"""
import os
import sys

import numpy as np

OUT = sys.argv[1]
rng = np.random.default_rng(20240611)
I64_MIN, I64_MAX = -2**63, 2**63 - 1
I32_MIN, I32_MAX = -2**31, 2**31 - 1
EXTREMES = [I64_MIN, I64_MAX, I64_MIN + 1, I64_MAX - 1, I32_MIN, I32_MAX]


def bound(dim):
    r = rng.random()
    if r < 0.2:
        return int(rng.choice(EXTREMES))
    if r < 0.8:
        return int(rng.integers(-dim, dim + 1))
    return int(rng.integers(-2 * dim - 2, 2 * dim + 3))


def step_for(dim):
    r = rng.random()
    if r < 0.15:
        return int(rng.choice([I64_MAX, I64_MIN, I64_MIN + 1, I64_MAX - 1]))
    if r < 0.85:
        return int(rng.choice([1, 1, 2, 3, -1, -1, -2, -3]))
    s = 0
    while s == 0:
        s = int(rng.integers(-dim - 2, dim + 3))
    return s


def reference(x, starts, ends, axes, steps):
    index = [slice(None)] * x.ndim
    for s, e, a, st in zip(starts, ends, axes, steps):
        dim = x.shape[a]
        if st < 0 and s < -dim:
            s = 0  # ONNX clamps a negative step's start into [0, dim - 1]
        index[a] = slice(s, e, st)
    return x[tuple(index)]


def fmt(v):
    return ",".join(str(int(i)) for i in v)


lines = []


def emit(shape, starts, ends, axes, steps, given_axes, given_steps, error=False):
    x = np.arange(int(np.prod(shape)), dtype=np.int32).reshape(shape)
    if error:
        out_shape, values = "ERROR", ""
    else:
        y = reference(x, starts, ends, axes, steps)
        out_shape, values = fmt(y.shape), fmt(y.reshape(-1))
    lines.append("|".join([fmt(shape), fmt(starts), fmt(ends), fmt(axes) if given_axes else "-",
                           fmt(steps) if given_steps else "-", out_shape, values]))


for _ in range(600):
    rank = int(rng.integers(1, 5))
    shape = [0 if rng.random() < 0.05 else int(rng.integers(1, 7)) for _ in range(rank)]
    k = int(rng.integers(1, rank + 1))
    given_axes = rng.random() < 0.6
    if given_axes:
        axes = [int(a) for a in rng.permutation(rank)[:k]]
    else:
        axes = list(range(k))
    given_steps = rng.random() < 0.8
    steps = [step_for(shape[a]) if given_steps else 1 for a in axes]
    starts, ends = [], []
    for a, st in zip(axes, steps):
        b, e = bound(shape[a]), bound(shape[a])
        # Mostly in the step's direction (so most cases take elements), with negative bounds normalised for the
        # comparison; the rest as drawn.
        def pos(v):
            return v + shape[a] if v < 0 else v
        if rng.random() < 0.75 and (pos(b) > pos(e)) == (st > 0):
            b, e = e, b
        starts.append(b)
        ends.append(e)
    # Written with negative axes half the time: the op normalises them.
    written_axes = [a - rank if given_axes and rng.random() < 0.5 else a for a in axes]
    emit(shape, starts, ends, written_axes, steps, given_axes, given_steps)

# The cases, by hand: extreme steps that take one element.
emit([5], [0], [I64_MAX], [0], [I64_MAX], True, True)
emit([5], [I64_MAX], [I64_MIN], [0], [I64_MIN], True, True)
emit([5], [-1], [I64_MIN], [0], [I64_MIN], True, True)
emit([3, 4], [I64_MIN, I64_MAX], [I64_MAX, I64_MIN], [0, 1], [I64_MAX, I64_MIN], True, True)
emit([5], [I64_MIN], [I64_MIN], [0], [-1], True, True)  # the ONNX rule: element 0
emit([0, 3], [I64_MAX], [I64_MIN], [0], [-1], True, True)
emit([2, 3], [], [], [], [], True, True)  # nothing sliced
emit([4], [1], [3], [0], [0], True, True, error=True)

os.makedirs(OUT, exist_ok=True)
with open(os.path.join(OUT, "cases.txt"), "w") as f:
    f.write("\n".join(lines) + "\n")
