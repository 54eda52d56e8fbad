"""scikit-learn's bundled digits (1,797 8x8 images; no download), an MLP and a
small CNN exported from torch, and torch's own training curves of the CNN,
for the training acceptance tests:
  OUT/x.npy        FLOAT32 [1797, 64], pixels / 16, rows shuffled (seed 0)
  OUT/y.npy        INT64 [1797], the digit
  OUT/images.npy   FLOAT32 [1797, 1, 8, 8], the same pixels as images
  OUT/digits.npz   x, images and y (np.savez_compressed; npu train --data, --x-key x or images)
  OUT/mlp.onnx     Linear(64, 64) - ReLU - Linear(64, 10), torch's default
                   initialisation (seed 0), dynamic batch axis, opset 17
  OUT/cnn.onnx     Conv(1, 16, 3, pad 1) - ReLU - MaxPool 2 - Conv(16, 32, 3, pad 1)
                   - ReLU - MaxPool 2 - Flatten - Linear(128, 10) (seed 0), no
                   BatchNorm: one device and four differ only by rounding
  OUT/mlp_ln_gelu.onnx, OUT/mlp_ln_gelu_opset13.onnx
                   Linear(64, 64) - LayerNorm - GELU - Linear(64, 10) (seed 0) at
                   opsets 17 and 13, and OUT/torch_mlp_ln_gelu_fp32.csv its torch
                   fp32 curve (as the CNN's below)
  OUT/torch_fp32.csv, OUT/torch_fp16_operands.csv
                   the CNN trained by torch as `npu train cnn.onnx --x-key images
                   --optimizer adam --lr 0.01 --batch-size 64 --epochs 3 --seed 3`
                   does it (the same held-out split, initial weights, batches
                   and optimizer): in fp32, and in float64 with the Cube's
                   operands rounded to fp16 (the device's O0 arithmetic,
                   graph_reference.py); npu train's CSV columns
Usage: make_digits_case.py OUT [SEED]  (SEED: npu train's --seed for the curves, 3)"""
import os
import sys

import numpy as np
import torch
import torch.nn.functional as F
from sklearn.datasets import load_digits

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from graph_reference import g16, r16  # noqa: E402

# The torch run the curves are of (npu train's options in the docstring).
LR, BATCH, EPOCHS, VAL_SPLIT = 0.01, 64, 3, 0.2
MASK = (1 << 64) - 1


def epoch_orders(rows, seed, epochs):
    """npu train's order of the training rows each epoch (client/cli/epoch_order.h):
    Fisher-Yates, j = splitmix64() % (i + 1) for i = rows-1 .. 1, one generator
    seeded with --seed running on across epochs."""
    state = seed & MASK

    def splitmix64():
        nonlocal state
        state = (state + 0x9E3779B97F4A7C15) & MASK
        z = state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
        return z ^ (z >> 31)

    for _ in range(epochs):
        order = list(range(rows))
        for i in range(rows - 1, 0, -1):
            j = splitmix64() % (i + 1)
            order[i], order[j] = order[j], order[i]
        yield order


class Cnn(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = torch.nn.Conv2d(1, 16, 3, padding=1)
        self.conv2 = torch.nn.Conv2d(16, 32, 3, padding=1)
        self.fc = torch.nn.Linear(128, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        return self.fc(torch.flatten(x, 1))


def cnn_fp16_operands(p, x):
    """The CNN as the device computes it at O0 (graph_reference.py's rounding):
    each Cube op (Conv, Gemm) reads fp16-rounded operands, forward and backward."""
    def conv(x, w, b):
        return g16(F.conv2d(r16(x), r16(w), None, 1, 1)) + b.reshape(1, -1, 1, 1)

    x = F.max_pool2d(F.relu(conv(x, p["conv1.weight"], p["conv1.bias"])), 2)
    x = F.max_pool2d(F.relu(conv(x, p["conv2.weight"], p["conv2.bias"])), 2)
    return g16(r16(torch.flatten(x, 1)) @ r16(p["fc.weight"]).t()) + p["fc.bias"]


def curve(model, params, images, y, seed, path):
    """Trains `params` (name -> leaf tensor) with Adam as npu train does and
    writes its CSV columns (the timing columns are 0)."""
    rows = len(y)
    val_rows = int(rows * VAL_SPLIT)
    train_rows = rows - val_rows
    opt = torch.optim.Adam(list(params.values()), lr=LR)
    dtype = next(iter(params.values())).dtype
    xs, ys = torch.from_numpy(images).to(dtype), torch.from_numpy(y)
    with open(path, "w") as f:
        f.write("epoch,train_loss,val_loss,val_accuracy,loss_scale,skipped_steps,device_time_us,host_time_ms\n")
        for epoch, order in enumerate(epoch_orders(train_rows, seed, EPOCHS), 1):
            loss_sum = 0.0
            for b in range(0, train_rows, BATCH):
                idx = torch.tensor(order[b:b + BATCH])
                loss = F.cross_entropy(model(params, xs[idx]), ys[idx])
                opt.zero_grad()
                loss.backward()
                opt.step()
                loss_sum += loss.item() * len(idx)
            with torch.no_grad():
                logits = model(params, xs[train_rows:])
                val_loss = F.cross_entropy(logits, ys[train_rows:]).item()
                accuracy = (logits.argmax(1) == ys[train_rows:]).double().mean().item()
            f.write("%d,%.9g,%.9g,%.9g,1,0,0,0\n" % (epoch, loss_sum / train_rows, val_loss, accuracy))


def main(out, seed):
    os.makedirs(out, exist_ok=True)
    digits = load_digits()
    order = np.random.default_rng(0).permutation(len(digits.target))
    x = (digits.data[order] / 16.0).astype(np.float32)
    y = digits.target[order].astype(np.int64)
    images = x.reshape(-1, 1, 8, 8)
    np.save(os.path.join(out, "x.npy"), x)
    np.save(os.path.join(out, "y.npy"), y)
    np.save(os.path.join(out, "images.npy"), images)
    np.savez_compressed(os.path.join(out, "digits.npz"), x=x, images=images, y=y)
    torch.manual_seed(0)
    mlp = torch.nn.Sequential(torch.nn.Linear(64, 64), torch.nn.ReLU(), torch.nn.Linear(64, 10))
    torch.onnx.export(mlp, (torch.zeros(32, 64),), os.path.join(out, "mlp.onnx"), input_names=["x"],
                      output_names=["logits"], opset_version=17, dynamic_axes={"x": {0: "batch"}, "logits": {0: "batch"}})
    torch.manual_seed(0)
    cnn = Cnn()
    torch.onnx.export(cnn, (torch.zeros(32, 1, 8, 8),), os.path.join(out, "cnn.onnx"), input_names=["images"],
                      output_names=["logits"], opset_version=17,
                      dynamic_axes={"images": {0: "batch"}, "logits": {0: "batch"}})
    # The model of issue 22: torch exports GELU as Div/Erf/Add/Mul with Constant nodes; at opset 13
    # LayerNorm too is ReduceMean/Sub/Pow/Sqrt/Div with Constants (opset 17: LayerNormalization).
    torch.manual_seed(0)
    mlp_ln = torch.nn.Sequential(torch.nn.Linear(64, 64), torch.nn.LayerNorm(64), torch.nn.GELU(),
                                 torch.nn.Linear(64, 10))
    for name, opset in (("mlp_ln_gelu.onnx", 17), ("mlp_ln_gelu_opset13.onnx", 13)):
        torch.onnx.export(mlp_ln, (torch.zeros(32, 64),), os.path.join(out, name), input_names=["x"],
                          output_names=["logits"], opset_version=opset,
                          dynamic_axes={"x": {0: "batch"}, "logits": {0: "batch"}})
    curve(lambda p, xb: mlp_ln(xb), dict(mlp_ln.named_parameters()), x, y, seed,
          os.path.join(out, "torch_mlp_ln_gelu_fp32.csv"))
    initial = {k: v.detach().clone() for k, v in cnn.state_dict().items()}
    curve(lambda p, xb: cnn(xb), dict(cnn.named_parameters()), images, y, seed, os.path.join(out, "torch_fp32.csv"))
    f64 = {k: v.double().clone().requires_grad_() for k, v in initial.items()}
    curve(cnn_fp16_operands, f64, images, y, seed, os.path.join(out, "torch_fp16_operands.csv"))


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 3)
