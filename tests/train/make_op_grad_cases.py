#!/usr/bin/python3
"""Writes one gradient case per op (and per attribute form) for
tests/train/autodiff_torch_test.cc: the op alone on random inputs (seeded,
random shapes), then loss = sum(y * r) for a random r, so dy is r and every
element of each input's gradient is checked. Same layout as
make_autodiff_cases.py (graph.json, inputs, wrt.txt, ref_loss.npy,
ref_grad_NAME.npy); torch.autograd in float64 through graph_reference.py.

usage: make_op_grad_cases.py OUTDIR
"""
import os
import sys

import numpy as np
import torch

import graph_reference as ref
from graph_reference import node

OUT = sys.argv[1]
dirs = ref.CaseDirs(OUT)
rng = np.random.default_rng(4242)


def f32(*shape, lo=-1.0, hi=1.0):
    return rng.uniform(lo, hi, size=shape).astype(np.float32)


def ints(values):
    return np.array(values, np.int64)


def dims(lo, hi, n):
    return [int(d) for d in rng.integers(lo, hi, size=n)]


def case(name, nodes, params, data=None, consts=None):
    """nodes end in the value "y"; params (name -> array) are differentiated; data are other inputs."""
    data = dict(data or {})
    consts = dict(consts or {})
    tensors = {k: torch.from_numpy(np.array(a)).double() if a.dtype.kind == "f" else torch.from_numpy(np.array(a))
               for k, a in list(data.items()) + list(params.items()) + list(consts.items())}
    y = ref.evaluate(nodes, tensors)["y"]
    data["r"] = f32(*y.shape)
    tail = [node("weigh", "Mul", ["y", "r"], ["yr"]), node("sum", "ReduceSum", ["yr"], ["loss"], keepdims=0)]
    d = dirs.new(name)
    inputs = dict(data)
    inputs.update(params)
    ref.write_json(os.path.join(d, "graph.json"), ref.graph_json(name, nodes + tail, inputs, consts, ["loss"]))
    for k, a in inputs.items():
        ref.save(d, k, a)
    with open(os.path.join(d, "wrt.txt"), "w") as f:
        f.write("\n".join(params) + "\n")
    tensors["r"] = torch.from_numpy(data["r"]).double()
    for k in params:
        tensors[k].requires_grad_()
    loss = ref.evaluate(nodes + tail, tensors)["loss"]
    grads = torch.autograd.grad(loss, [tensors[k] for k in params], allow_unused=True)
    ref.save(d, "ref_loss", loss.detach().numpy().astype(np.float32))
    for k, g in zip(params, grads):
        g = torch.zeros_like(tensors[k]) if g is None else g
        ref.save(d, "ref_grad_" + k, g.numpy().astype(np.float32))


def unary(op, lo=-3.0, hi=3.0, **attrs):
    shape = dims(2, 9, int(rng.integers(1, 4)))
    case(op.lower(), [node("op", op, ["x"], ["y"], **attrs)], {"x": f32(*shape, lo=lo, hi=hi)})


# ---- activations and elementwise math --------------------------------------------------------
for op in ("Erf", "Abs", "Sin", "Cos", "Softplus", "Silu", "Mish"):
    unary(op)
unary("HardSwish", lo=-5, hi=5)
unary("HardSigmoid", lo=-4, hi=4, alpha=1.0 / 6, beta=0.5)  # torch's nn.Hardsigmoid as exported
unary("HardSigmoid", lo=-4, hi=4)  # ONNX's defaults
unary("Elu", alpha=0.7)
unary("Celu", alpha=1.8)
unary("Selu")
unary("Floor")  # flat: zero gradient
for op, a in (("Sqrt", (0.2, 3)), ("Reciprocal", (0.5, 2)), ("Log", (0.2, 3)), ("Exp", (-2, 2))):
    unary(op, lo=a[0], hi=a[1])

# Clip: ReLU6 (constant bounds), one bound only, and bounds as differentiated values.
x = f32(5, 7, lo=-2, hi=8)
case("clip_relu6", [node("op", "Clip", ["x", "lo", "hi"], ["y"])], {"x": x},
     consts={"lo": np.array(0, np.float32), "hi": np.array(6, np.float32)})
case("clip_min_only", [node("op", "Clip", ["x", "lo"], ["y"])], {"x": x}, consts={"lo": np.array(1.5, np.float32)})
case("clip_bounds_trained", [node("op", "Clip", ["x", "lo", "hi"], ["y"])],
     {"x": x, "lo": np.array(0.5, np.float32), "hi": np.array(4.0, np.float32)})

# PRelu: a per-channel slope [C, 1, 1] and a scalar one.
c = int(rng.integers(2, 6))
case("prelu_channel", [node("op", "PRelu", ["x", "slope"], ["y"])],
     {"x": f32(2, c, 3, 4), "slope": f32(c, 1, 1, lo=0, hi=0.5)})
case("prelu_scalar", [node("op", "PRelu", ["x", "slope"], ["y"])], {"x": f32(6, 5), "slope": f32(1, lo=0, hi=0.5)})

# Where (masked_fill): the condition from a comparison passes nothing; both branches broadcast.
case("where", [node("cmp", "Greater", ["m", "half"], ["cond"]), node("op", "Where", ["cond", "a", "b"], ["y"])],
     {"a": f32(4, 6), "b": f32(1, 6)}, data={"m": f32(4, 6, lo=0, hi=1)}, consts={"half": np.array(0.5, np.float32)})
case("where_bool_input", [node("op", "Where", ["cond", "a", "b"], ["y"])], {"a": f32(3, 1), "b": f32(3, 5)},
     data={"cond": rng.random((3, 5)) < 0.5})

# Pow with a tensor exponent (both differentiated, the exponent broadcast), and with a constant one.
case("pow_tensor", [node("op", "Pow", ["a", "b"], ["y"])], {"a": f32(4, 5, lo=0.3, hi=2), "b": f32(5, lo=-1.5, hi=2.5)})
case("pow_const", [node("op", "Pow", ["a", "e"], ["y"])], {"a": f32(4, 5, lo=0.3, hi=2)},
     consts={"e": np.array(3.0, np.float32)})

# Max/Min: ties split evenly, as torch.maximum does; three inputs broadcast.
a = f32(5, 6)
b = f32(5, 6)
b[::2] = a[::2]  # ties in every other row
case("max_ties", [node("op", "Max", ["a", "b"], ["y"])], {"a": a, "b": b})
case("min_ties", [node("op", "Min", ["a", "b"], ["y"])], {"a": a, "b": b})
case("max_three", [node("op", "Max", ["a", "b", "c"], ["y"])], {"a": f32(4, 5), "b": f32(5), "c": f32(4, 1)})
case("sum_mean", [node("s", "Sum", ["a", "b", "c"], ["t"]), node("op", "Mean", ["t", "b"], ["y"])],
     {"a": f32(3, 4), "b": f32(4), "c": f32(3, 1)})

# ---- reductions ---------------------------------------------------------------------------------
for op in ("ReduceMax", "ReduceMin", "ReduceProd", "ReduceL2", "ReduceL1", "ReduceSumSquare", "ReduceLogSumExp",
           "ReduceLogSum"):
    lo = 0.5 if op in ("ReduceProd", "ReduceLogSum") else -2.0
    case(op.lower() + "_axes", [node("op", op, ["x", "axes"], ["y"], keepdims=0)], {"x": f32(3, 4, 5, lo=lo, hi=1.5)},
         consts={"axes": ints([0, 2])})
    case(op.lower() + "_all", [node("op", op, ["x"], ["y"], keepdims=1)], {"x": f32(4, 3, lo=lo, hi=1.5)})
# ReduceMax ties share evenly (torch.amax); ReduceProd with one zero and with two in a row.
t = f32(3, 5)
t[:, 1] = t[:, 3] = 2.0
case("reducemax_ties", [node("op", "ReduceMax", ["x", "axes"], ["y"], keepdims=1)], {"x": t},
     consts={"axes": ints([1])})
t = f32(4, 5, lo=0.5, hi=1.5)
t[0, 2] = 0.0
t[1, 1] = t[1, 4] = 0.0
case("reduceprod_zeros", [node("op", "ReduceProd", ["x", "axes"], ["y"], keepdims=0)], {"x": t},
     consts={"axes": ints([1])})

# ---- index ops ----------------------------------------------------------------------------------
for v, (starts, ends, axes, steps) in enumerate([([1], [5], [1], [1]), ([0, 7], [6, 1], [0, 2], [2, -2]),
                                                 ([-1], [-9223372036854775808], [1], [-1]),
                                                 ([2, 0], [100, 5], [-1, 0], [3, 1]), ([5], [1], [2], [-3])]):
    case("slice_%d" % v, [node("op", "Slice", ["x", "s", "e", "ax", "st"], ["y"])], {"x": f32(6, 7, 9)},
         consts={"s": ints(starts), "e": ints(ends), "ax": ints(axes), "st": ints(steps)})
case("slice_default_axes", [node("op", "Slice", ["x", "s", "e"], ["y"])], {"x": f32(5, 6)},
     consts={"s": ints([1, 2]), "e": ints([4, 6])})
for mode in ("constant", "reflect", "edge", "wrap"):
    case("pad_" + mode, [node("op", "Pad", ["x", "pads"], ["y"], mode=mode)], {"x": f32(2, 3, 5, 6)},
         consts={"pads": ints([0, 0, 2, 1, 0, 1, 3, 4])})
case("pad_crop", [node("op", "Pad", ["x", "pads"], ["y"], mode="constant")], {"x": f32(4, 6)},
     consts={"pads": ints([-1, 2, 1, -3])})
case("pad_reflect_axes", [node("op", "Pad", ["x", "pads", "", "axes"], ["y"], mode="reflect")], {"x": f32(3, 4, 5)},
     consts={"pads": ints([3, 2]), "axes": ints([-1])})
case("pad_edge_crop", [node("op", "Pad", ["x", "pads"], ["y"], mode="edge")], {"x": f32(5, 6)},
     consts={"pads": ints([3, -2, -1, 4])})
case("tile", [node("op", "Tile", ["x", "rep"], ["y"])], {"x": f32(2, 3, 4)}, consts={"rep": ints([3, 1, 2])})
for v, (ex, rev) in enumerate([(0, 0), (1, 0), (0, 1), (1, 1)]):
    case("cumsum_%d" % v, [node("op", "CumSum", ["x", "axis"], ["y"], exclusive=ex, reverse=rev)], {"x": f32(4, 6)},
         consts={"axis": ints([1 if v % 2 else -2])})
idx = rng.integers(-4, 4, size=(3, 6)).astype(np.int64)  # negative ones count from the end
case("gather_elements", [node("op", "GatherElements", ["x", "idx"], ["y"], axis=0)], {"x": f32(4, 6)},
     data={"idx": idx})
case("gather_elements_axis", [node("op", "GatherElements", ["x", "idx"], ["y"], axis=-1)], {"x": f32(2, 3, 5)},
     data={"idx": rng.integers(0, 5, size=(2, 3, 7)).astype(np.int64)})
rows = rng.permutation(6)[:3]
case("scatter_nd", [node("op", "ScatterND", ["x", "idx", "upd"], ["y"])], {"x": f32(6, 4), "upd": f32(3, 4)},
     data={"idx": rows.reshape(3, 1).astype(np.int64)})
case("scatter_nd_add", [node("op", "ScatterND", ["x", "idx", "upd"], ["y"], reduction="add")],
     {"x": f32(3, 4, 2), "upd": f32(5, 2)}, data={"idx": np.array([[0, 1], [2, 3], [0, 1], [1, -1], [2, 0]], np.int64)})
case("trilu", [node("op", "Trilu", ["x", "k"], ["y"], upper=0)], {"x": f32(2, 5, 6)}, consts={"k": ints([1])})
case("depth_to_space_dcr", [node("op", "DepthToSpace", ["x"], ["y"], blocksize=2, mode="DCR")], {"x": f32(2, 8, 3, 2)})
case("depth_to_space_crd", [node("op", "DepthToSpace", ["x"], ["y"], blocksize=2, mode="CRD")], {"x": f32(1, 12, 2, 3)})
case("space_to_depth", [node("op", "SpaceToDepth", ["x"], ["y"], blocksize=2)], {"x": f32(2, 3, 4, 6)})

# ---- products: Einsum, MatMul with every broadcast, grouped and depthwise Conv ------------------
for v, (eq, sa, sb) in enumerate([("bij,bjk->bik", (2, 3, 4), (2, 4, 5)), ("ij,kj->ik", (3, 6), (5, 6)),
                                  ("bhqd,bhkd->bhqk", (2, 2, 3, 4), (2, 2, 5, 4)), ("ij,j->i", (4, 5), (5,)),
                                  ("ij,ij->i", (3, 4), (3, 4)), ("ij,kl->ik", (2, 3), (4, 5)),
                                  ("...ij,...jk->...ik", (2, 3, 4), (2, 4, 2))]):
    case("einsum_%d" % v, [node("op", "Einsum", ["a", "b"], ["y"], equation=eq)], {"a": f32(*sa), "b": f32(*sb)})
case("einsum_unary", [node("op", "Einsum", ["a"], ["y"], equation="ijk->kj")], {"a": f32(3, 4, 5)})
for v, (sa, sb) in enumerate([((5,), (5, 4)), ((3, 2, 6), (6,)), ((7,), (7,)), ((2, 1, 3, 4), (5, 4, 6)),
                              ((3, 4), (2, 4, 5)), ((2, 3, 4), (4, 5)), ((4,), (2, 3, 4, 2))]):
    case("matmul_%d" % v, [node("op", "MatMul", ["a", "b"], ["y"])], {"a": f32(*sa), "b": f32(*sb)})
case("conv_depthwise", [node("op", "Conv", ["x", "w", "bias"], ["y"], kernel_shape=[3, 3], pads=[1, 1, 1, 1],
                             group=6)], {"x": f32(2, 6, 7, 7), "w": f32(6, 1, 3, 3), "bias": f32(6)})
case("conv_grouped", [node("op", "Conv", ["x", "w"], ["y"], kernel_shape=[3, 3], strides=[2, 2], dilations=[1, 1],
                           group=3)], {"x": f32(2, 6, 9, 8), "w": f32(9, 2, 3, 3)})
case("conv_depthwise_multiplier", [node("op", "Conv", ["x", "w"], ["y"], kernel_shape=[3, 3], pads=[1, 1, 1, 1],
                                        dilations=[2, 2], group=4)], {"x": f32(1, 4, 8, 8), "w": f32(8, 1, 3, 3)})

# ---- ConvTranspose, the instance and group norms, TopK, Resize (graph_reference_nn.py) -------
case("convt_pads_output_padding", [node("op", "ConvTranspose", ["x", "w", "bias"], ["y"], strides=[2, 2],
                                        pads=[1, 0, 1, 1], output_padding=[1, 0])],
     {"x": f32(2, 4, 5, 6), "w": f32(4, 3, 3, 3), "bias": f32(3)})
case("convt_grouped_dilated", [node("op", "ConvTranspose", ["x", "w"], ["y"], group=2, dilations=[2, 1],
                                    strides=[1, 2])], {"x": f32(1, 4, 5, 5), "w": f32(4, 2, 3, 3)})
case("convt_1d", [node("op", "ConvTranspose", ["x", "w", "bias"], ["y"], strides=[3], pads=[1, 2],
                       output_padding=[1])], {"x": f32(2, 3, 7), "w": f32(3, 4, 4), "bias": f32(4)})
case("convt_output_shape", [node("op", "ConvTranspose", ["x", "w"], ["y"], strides=[2, 2], output_shape=[8, 9])],
     {"x": f32(1, 2, 4, 4), "w": f32(2, 3, 3, 3)})
case("convt_same_upper", [node("op", "ConvTranspose", ["x", "w"], ["y"], strides=[2, 2], auto_pad="SAME_UPPER")],
     {"x": f32(1, 2, 3, 4), "w": f32(2, 3, 3, 3)})
case("instance_norm", [node("op", "InstanceNormalization", ["x", "s", "b"], ["y"], epsilon=1e-3)],
     {"x": f32(2, 3, 4, 5, lo=-2, hi=3), "s": f32(3), "b": f32(3)})
case("instance_norm_1d", [node("op", "InstanceNormalization", ["x", "s", "b"], ["y"])],
     {"x": f32(3, 4, 7), "s": f32(4), "b": f32(4)})
case("group_norm", [node("op", "GroupNormalization", ["x", "s", "b"], ["y"], num_groups=3)],
     {"x": f32(2, 6, 3, 4, lo=-1, hi=2), "s": f32(6), "b": f32(6)})
case("group_norm_per_group_affine", [node("op", "GroupNormalization", ["x", "s", "b"], ["y"], num_groups=2,
                                          epsilon=1e-2)], {"x": f32(2, 6, 5), "s": f32(2), "b": f32(2)})
case("group_norm_one_group", [node("op", "GroupNormalization", ["x", "s", "b"], ["y"], num_groups=1)],
     {"x": f32(3, 4, 6), "s": f32(4), "b": f32(4)})
case("topk_largest", [node("op", "TopK", ["x", "k"], ["y", "idx"])], {"x": f32(4, 7)}, consts={"k": ints([3])})
case("topk_smallest_axis", [node("op", "TopK", ["x", "k"], ["y", "idx"], axis=1, largest=0)], {"x": f32(3, 5, 4)},
     consts={"k": ints([2])})
for v, (shape, attrs, scales, sizes) in enumerate([
        ((2, 3, 4, 5), dict(mode="nearest", coordinate_transformation_mode="asymmetric", nearest_mode="floor"),
         [1, 1, 2, 2], None),
        ((1, 2, 7, 6), dict(mode="nearest"), None, [1, 2, 4, 9]),
        ((2, 2, 4, 5), dict(mode="linear"), [1, 1, 2, 2], None),
        ((1, 3, 5, 6), dict(mode="linear", coordinate_transformation_mode="align_corners"), None, [1, 3, 7, 4]),
        ((2, 3, 6), dict(mode="linear", coordinate_transformation_mode="pytorch_half_pixel"), None, [2, 3, 11]),
        ((2, 5, 3), dict(mode="linear", coordinate_transformation_mode="asymmetric", axes=[1]), [1.6], None),
        ((3, 4, 2), dict(mode="nearest", coordinate_transformation_mode="tf_half_pixel_for_nn",
                         nearest_mode="round_prefer_ceil"), None, [3, 7, 2]),
        ((1, 1, 5, 4), dict(mode="nearest", coordinate_transformation_mode="half_pixel", nearest_mode="ceil",
                            axes=[3, 2]), [0.5, 1.5], None),
        # 3-D (NCDHW): trilinear as F.interpolate exports it, and nearest to given sizes
        ((1, 2, 3, 4, 5), dict(mode="linear", coordinate_transformation_mode="pytorch_half_pixel"),
         [1, 1, 2, 2, 2], None),
        ((2, 2, 3, 3, 4), dict(mode="nearest", coordinate_transformation_mode="asymmetric", nearest_mode="floor"),
         None, [2, 2, 5, 6, 3])]):
    consts = {"scales": np.array(scales, np.float32)} if scales else {"sizes": ints(sizes)}
    ins = ["x", "", "scales"] if scales else ["x", "", "", "sizes"]
    case("resize_%d" % v, [node("op", "Resize", ins, ["y"], **attrs)], {"x": f32(*shape)}, consts=consts)


# ---- 3-D convolution and pooling (NCDHW) -----------------------------------------------------
case("conv3d", [node("op", "Conv", ["x", "w", "bias"], ["y"], kernel_shape=[2, 3, 3], strides=[1, 2, 1],
                     pads=[1, 1, 0, 1, 1, 0], dilations=[2, 1, 1])],
     {"x": f32(2, 3, 5, 6, 5), "w": f32(4, 3, 2, 3, 3), "bias": f32(4)})
case("conv3d_depthwise", [node("op", "Conv", ["x", "w"], ["y"], kernel_shape=[3, 3, 3], pads=[1, 1, 1, 1, 1, 1],
                               group=3)], {"x": f32(2, 3, 4, 5, 5), "w": f32(6, 1, 3, 3, 3)})
case("maxpool3d", [node("op", "MaxPool", ["x"], ["y"], kernel_shape=[2, 3, 3], strides=[2, 2, 1],
                        pads=[1, 1, 1, 1, 1, 1])], {"x": f32(2, 2, 5, 6, 7)})
case("maxpool_with_indices", [node("op", "MaxPool", ["x"], ["y", "idx"], kernel_shape=[3, 3], strides=[2, 2],
                                   pads=[1, 1, 1, 1])], {"x": f32(2, 3, 6, 7)})
case("conv1d_no_kernel_shape", [node("op", "Conv", ["x", "w", "bias"], ["y"], strides=[2], pads=[1, 2])],
     {"x": f32(2, 3, 9), "w": f32(4, 3, 3), "bias": f32(4)})
case("lppool_1d", [node("op", "LpPool", ["x"], ["y"], kernel_shape=[3], strides=[2], pads=[1, 1], p=3)],
     {"x": f32(2, 3, 9)})
case("lppool_2d", [node("op", "LpPool", ["x"], ["y"], kernel_shape=[2, 3], strides=[1, 2])], {"x": f32(2, 2, 5, 7)})
case("convt_3d", [node("op", "ConvTranspose", ["x", "w", "bias"], ["y"], strides=[2, 1, 2], pads=[1, 0, 1, 0, 1, 1],
                      output_padding=[1, 0, 0])], {"x": f32(2, 3, 3, 4, 4), "w": f32(3, 2, 2, 3, 3), "bias": f32(2)})
case("avgpool3d_ceil", [node("op", "AveragePool", ["x"], ["y"], kernel_shape=[3, 2, 3], strides=[2, 2, 2],
                             pads=[1, 0, 1, 1, 0, 1], ceil_mode=1)], {"x": f32(1, 3, 6, 5, 7)})

# ---- LSTM and GRU (tests/graph/rnn_reference.py) ---------------------------------------------------
def rnn_case(name, op, direction="forward", lens=False, init=True, peepholes=False, outputs="all", **attrs):
    gates, n_dirs = (4 if op == "LSTM" else 3), (2 if direction == "bidirectional" else 1)
    seq, batch, width, hidden = dims(2, 6, 1)[0], dims(2, 4, 1)[0], dims(2, 6, 1)[0], dims(2, 6, 1)[0]
    params = {"X": f32(seq, batch, width), "W": f32(n_dirs, gates * hidden, width, lo=-0.7, hi=0.7),
              "R": f32(n_dirs, gates * hidden, hidden, lo=-0.7, hi=0.7), "B": f32(n_dirs, 2 * gates * hidden)}
    data, ins = {}, ["X", "W", "R", "B", ""]  # ("r" weighs the loss)
    if lens:  # one row runs every step, the others stop earlier (or never start)
        data["lens"] = np.array([seq] + [int(v) for v in rng.integers(0, seq, batch - 1)], np.int32)
        ins[4] = "lens"
    states = ["h0", "c0"] if op == "LSTM" else ["h0"]
    for k in states:
        if init:
            params[k] = f32(n_dirs, batch, hidden)
        ins.append(k if init else "")
    if peepholes:
        params["p"] = f32(n_dirs, 3 * hidden)
        ins.append("p")
    outs = ["Y", "Y_h", "Y_c"][:len(states) + 1]
    if outputs == "Y":
        outs = ["y"]
    elif outputs == "Y_h":
        outs = ["Y", "y"]
    nodes = [node("op", op, ins, outs, direction=direction, hidden_size=hidden, **attrs)]
    if outputs == "all":  # every output reaches the loss: y = Concat(Y, Y_h, Y_c) along the sequence
        for k in outs[1:]:
            nodes.append(node("unsq_" + k, "Unsqueeze", [k, "axis0"], [k + "1"]))
        nodes.append(node("cat", "Concat", ["Y"] + [k + "1" for k in outs[1:]], ["y"], axis=0))
    while ins[-1] == "":
        ins.pop()
    case(name, nodes, params, data, consts={"axis0": ints([0])} if outputs == "all" else None)


rnn_case("lstm", "LSTM")
rnn_case("lstm_bidirectional_lens_peepholes", "LSTM", "bidirectional", lens=True, peepholes=True)
rnn_case("lstm_reverse_clip", "LSTM", "reverse", lens=True, init=False, clip=0.6)
rnn_case("lstm_y_h_only", "LSTM", outputs="Y_h", init=False)
rnn_case("gru_torch_bidirectional_lens", "GRU", "bidirectional", lens=True, linear_before_reset=1)
rnn_case("gru", "GRU")
rnn_case("gru_reverse_clip_lens", "GRU", "reverse", lens=True, clip=0.6)
rnn_case("gru_torch_y_only", "GRU", outputs="Y", init=False, linear_before_reset=1)

print("wrote %d cases to %s" % (dirs.count, OUT))
