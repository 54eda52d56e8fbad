#!/usr/bin/python3
"""The torch side of `npu-bench models`: exports the benchmark models to ONNX and
times torch eager fp32 on request, so that the C++ bench can alternate its runs
with the server's (same machine, same load, same moment).

usage: torch_models.py OUTDIR THREADS MODEL...

For each MODEL it writes OUTDIR/MODEL.onnx (torch.onnx.export, opset 17, input
"input", output "output"), OUTDIR/MODEL.input.npy and OUTDIR/MODEL.ref.npy
(torch's fp32 output), then prints "ready". Each line "time MODEL" on stdin
runs one forward pass and prints its seconds; "quit" (or end of input) ends it.

Models (random weights, eval mode): resnet18, mobilenet_v2, efficientnet_b0, regnet_y_400mf
and convnext_tiny from torchvision on 1x3x224x224, resnet50 on 4x3x224x224, a
BERT-base encoder layer (hidden 768, 12 heads, feed-forward 3072, post-LN, erf
GELU) on batch 4 x sequence 128, and a GPT-style decoder block (nanoGPT's shape:
pre-LN, causal self-attention, 12 heads, MLP 4 x 768 with tanh GELU) on batch 4
x sequence 256 x 768.
"""
import math
import os
import sys
import time

import numpy as np
import torch
import torchvision

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples", "onnx"))
from export_models import EncoderLayer  # noqa: E402  (the example's BERT-style layer, at BERT-base size)


class GptBlock(torch.nn.Module):
    """A GPT-2-style block as users write it: x + attn(ln(x)), x + mlp(ln(x))."""

    def __init__(self, hidden=768, heads=12, sequence=256):
        super().__init__()
        self.heads, self.scale = heads, 1.0 / math.sqrt(hidden // heads)
        self.ln1 = torch.nn.LayerNorm(hidden)
        self.qkv = torch.nn.Linear(hidden, 3 * hidden)
        self.proj = torch.nn.Linear(hidden, hidden)
        self.ln2 = torch.nn.LayerNorm(hidden)
        self.fc = torch.nn.Linear(hidden, 4 * hidden)
        self.out = torch.nn.Linear(4 * hidden, hidden)
        self.register_buffer("mask", torch.tril(torch.ones(sequence, sequence)).view(1, 1, sequence, sequence))

    def forward(self, x):
        b, t, c = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(c, dim=2)
        q, k, v = (z.view(b, t, self.heads, c // self.heads).transpose(1, 2) for z in (q, k, v))
        att = (q @ k.transpose(-2, -1)) * self.scale
        att = torch.softmax(att.masked_fill(self.mask[:, :, :t, :t] == 0, float("-inf")), dim=-1)
        y = (att @ v).transpose(1, 2).contiguous().view(b, t, c)
        x = x + self.proj(y)
        return x + self.out(torch.nn.functional.gelu(self.fc(self.ln2(x)), approximate="tanh"))


def randomise_batchnorm(model):
    """Non-trivial running statistics, as a trained model has (fresh ones are 0 and 1)."""
    for m in model.modules():
        if isinstance(m, torch.nn.BatchNorm2d):
            m.running_mean.uniform_(-0.2, 0.2)
            m.running_var.uniform_(0.5, 1.5)
            m.weight.data.uniform_(0.5, 1.5)
            m.bias.data.uniform_(-0.2, 0.2)
    return model


def build(name):
    if name == "bert_layer":
        return EncoderLayer(hidden=768, heads=12, ffn=3072), (4, 128, 768)
    if name == "gpt_block":
        return GptBlock(), (4, 256, 768)
    if name == "resnet50":
        return randomise_batchnorm(torchvision.models.resnet50(weights=None)), (4, 3, 224, 224)
    return randomise_batchnorm(getattr(torchvision.models, name)(weights=None)), (1, 3, 224, 224)


def main():
    out, threads, names = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
    torch.manual_seed(0)
    torch.set_num_threads(threads)
    os.makedirs(out, exist_ok=True)
    models = {}
    for name in names:
        model, shape = build(name)
        model.eval()
        x = torch.randn(*shape)
        with torch.no_grad():
            y = model(x)
        torch.onnx.export(model, (x,), os.path.join(out, name + ".onnx"), input_names=["input"],
                          output_names=["output"], opset_version=17)
        np.save(os.path.join(out, name + ".input.npy"), x.numpy())
        np.save(os.path.join(out, name + ".ref.npy"), y.numpy())
        models[name] = (model, x)
    print("ready", flush=True)
    for line in sys.stdin:
        words = line.split()
        if not words or words[0] == "quit":
            break
        model, x = models[words[1]]
        with torch.no_grad():
            t0 = time.perf_counter()
            model(x)
            print("%.9f" % (time.perf_counter() - t0), flush=True)


if __name__ == "__main__":
    main()
