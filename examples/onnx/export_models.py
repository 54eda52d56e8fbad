#!/usr/bin/python3
"""Exports four small PyTorch models to ONNX, with an input and torch's output.

usage: export_models.py OUTDIR

For each model NAME it writes OUTDIR/NAME.onnx, OUTDIR/NAME/input.npy (the
graph input is named "input") and OUTDIR/NAME/ref_output.npy (torch's fp32
output; the graph output is named "output"). Weights are fp32; the server
rounds MatMul/Gemm/Conv operands to fp16 as an NPU does, so compare with the
tolerances stated in tests/e2e/onnx_models_test.cc.
"""
import os
import sys

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


class Mlp(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1, self.fc2, self.fc3 = nn.Linear(64, 128), nn.Linear(128, 64), nn.Linear(64, 10)

    def forward(self, x):
        return self.fc3(F.relu(self.fc2(F.relu(self.fc1(x)))))


class LeNet5(nn.Module):
    def __init__(self):
        super().__init__()
        self.c1, self.c3 = nn.Conv2d(1, 6, 5, padding=2), nn.Conv2d(6, 16, 5)
        self.f5, self.f6, self.f7 = nn.Linear(16 * 5 * 5, 120), nn.Linear(120, 84), nn.Linear(84, 10)

    def forward(self, x):
        x = F.max_pool2d(torch.tanh(self.c1(x)), 2)
        x = F.avg_pool2d(torch.tanh(self.c3(x)), 2, count_include_pad=False)  # no Pad node
        x = torch.flatten(x, 1)
        return F.log_softmax(self.f7(torch.tanh(self.f6(torch.tanh(self.f5(x))))), dim=1)


class BasicBlock(nn.Module):
    """ResNet basic block with a projection shortcut (stride 2), BatchNorm in eval mode."""

    def __init__(self, cin=32, cout=64):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride=2, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.down = nn.Sequential(nn.Conv2d(cin, cout, 1, stride=2, bias=False), nn.BatchNorm2d(cout))
        for bn in (self.bn1, self.bn2, self.down[1]):  # non-trivial running statistics
            bn.running_mean.uniform_(-0.5, 0.5)
            bn.running_var.uniform_(0.5, 2.0)
            bn.weight.data.uniform_(0.5, 1.5)
            bn.bias.data.uniform_(-0.5, 0.5)

    def forward(self, x):
        y = F.relu(self.bn1(self.conv1(x)))
        y = self.bn2(self.conv2(y))
        return F.relu(y + self.down(x))


class EncoderLayer(nn.Module):
    """One BERT-style (post-LN) transformer encoder layer, written out by hand."""

    def __init__(self, hidden=256, heads=4, ffn=1024):
        super().__init__()
        self.heads, self.dh = heads, hidden // heads
        self.q, self.k, self.v, self.o = (nn.Linear(hidden, hidden) for _ in range(4))
        self.ln1, self.ln2 = nn.LayerNorm(hidden), nn.LayerNorm(hidden)
        self.ff1, self.ff2 = nn.Linear(hidden, ffn), nn.Linear(ffn, hidden)

    def forward(self, x):
        b, s, h = x.shape

        def split(t):
            return t.reshape(b, s, self.heads, self.dh).transpose(1, 2)

        q, k, v = split(self.q(x)), split(self.k(x)), split(self.v(x))
        att = torch.softmax(torch.matmul(q, k.transpose(-1, -2)) / (self.dh ** 0.5), dim=-1)
        ctx = torch.matmul(att, v).transpose(1, 2).reshape(b, s, h)
        x = self.ln1(x + self.o(ctx))
        return self.ln2(x + self.ff2(F.gelu(self.ff1(x))))


def main(out):
    torch.manual_seed(0)
    models = {
        "mlp": (Mlp(), (8, 64)),
        "lenet5": (LeNet5(), (4, 1, 28, 28)),
        "resnet_block": (BasicBlock(), (2, 32, 16, 16)),
        "bert_layer": (EncoderLayer(), (2, 64, 256)),
    }
    os.makedirs(out, exist_ok=True)
    for name, (model, shape) in models.items():
        model.eval()
        x = torch.randn(*shape)
        with torch.no_grad():
            y = model(x)
        # The ResNet block keeps its BatchNormalization nodes (PRESERVE, no folding
        # into the convolutions) so that the op runs as exported.
        keep_bn = name == "resnet_block"
        torch.onnx.export(model, (x,), os.path.join(out, name + ".onnx"), input_names=["input"],
                          output_names=["output"], opset_version=17, do_constant_folding=not keep_bn,
                          training=torch.onnx.TrainingMode.PRESERVE if keep_bn else torch.onnx.TrainingMode.EVAL)
        os.makedirs(os.path.join(out, name), exist_ok=True)
        np.save(os.path.join(out, name, "input.npy"), x.numpy())
        np.save(os.path.join(out, name, "ref_output.npy"), y.numpy())
    write_dynamic(out)
    print("exported %d models to %s" % (len(models) + 1, out))
    write_unsupported(out)


def write_dynamic(out):
    """The encoder layer again, exported with dynamic batch and sequence axes: its
    x.shape reads become Shape -> Gather -> Unsqueeze -> Concat chains that the
    server folds once each run's shapes are bound. Two input shapes, each with
    torch's output: OUT/bert_dynamic/input_{a,b}.npy, ref_{a,b}.npy."""
    dyn = EncoderLayer().eval()
    os.makedirs(os.path.join(out, "bert_dynamic"), exist_ok=True)
    torch.onnx.export(dyn, (torch.randn(2, 64, 256),), os.path.join(out, "bert_dynamic.onnx"),
                      input_names=["input"], output_names=["output"], opset_version=17,
                      dynamic_axes={"input": {0: "batch", 1: "seq"}, "output": {0: "batch", 1: "seq"}})
    for tag, shape in (("a", (2, 64, 256)), ("b", (3, 17, 256))):
        x = torch.randn(*shape)
        with torch.no_grad():
            y = dyn(x)
        np.save(os.path.join(out, "bert_dynamic", "input_%s.npy" % tag), x.numpy())
        np.save(os.path.join(out, "bert_dynamic", "ref_%s.npy" % tag), y.numpy())


def write_unsupported(out):
    """A model the server must refuse whole, naming every unsupported element: two
    unknown ops and an unknown attribute on a known one."""
    import onnx
    from onnx import TensorProto, helper

    nodes = [helper.make_node("LpNormalization", ["input"], ["p"], name="lpnorm"),
             helper.make_node("Relu", ["p"], ["r"], name="relu", fancy=1),
             helper.make_node("Shrink", ["r"], ["output"], name="shrink")]
    graph = helper.make_graph(nodes, "unsupported",
                              [helper.make_tensor_value_info("input", TensorProto.FLOAT, [2, 3])],
                              [helper.make_tensor_value_info("output", TensorProto.FLOAT, [2, 3])])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]),
              os.path.join(out, "unsupported.onnx"))


if __name__ == "__main__":
    main(sys.argv[1])
