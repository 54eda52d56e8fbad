"""scikit-learn's bundled digits (1,797 8x8 images; no download) and an MLP
exported from torch, for the training acceptance test:
  OUT/x.npy        FLOAT32 [1797, 64], pixels / 16, rows shuffled (seed 0)
  OUT/y.npy        INT64 [1797], the digit
  OUT/digits.npz   the same as np.savez_compressed(x=..., y=...) (npu train --data)
  OUT/mlp.onnx     Linear(64, 64) - ReLU - Linear(64, 10), torch's default
                   initialisation (seed 0), dynamic batch axis, opset 17
Usage: make_digits_case.py OUT"""
import os
import sys

import numpy as np
import torch
from sklearn.datasets import load_digits


def main(out):
    os.makedirs(out, exist_ok=True)
    digits = load_digits()
    order = np.random.default_rng(0).permutation(len(digits.target))
    x = (digits.data[order] / 16.0).astype(np.float32)
    y = digits.target[order].astype(np.int64)
    np.save(os.path.join(out, "x.npy"), x)
    np.save(os.path.join(out, "y.npy"), y)
    np.savez_compressed(os.path.join(out, "digits.npz"), x=x, y=y)
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(64, 64), torch.nn.ReLU(), torch.nn.Linear(64, 10))
    torch.onnx.export(model, (torch.zeros(32, 64),), os.path.join(out, "mlp.onnx"), input_names=["x"],
                      output_names=["logits"], opset_version=17, dynamic_axes={"x": {0: "batch"}, "logits": {0: "batch"}})


if __name__ == "__main__":
    main(sys.argv[1])
