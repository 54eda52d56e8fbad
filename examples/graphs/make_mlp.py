#!/usr/bin/python3
"""Writes examples/graphs/mlp.json (a 2-layer fp16 MLP as the JSON form of
npu.v1.Graph) and a matching input, mlp_x.npy. Deterministic: seeded."""
import base64
import json
import os

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
BATCH, IN, HIDDEN, OUT = 4, 64, 128, 10


def tensor(a):
    a = np.ascontiguousarray(a.astype(np.float16))
    return {"dtype": "FLOAT16", "shape": [int(d) for d in a.shape],
            "data": base64.b64encode(a.astype("<f2").tobytes()).decode()}


def main():
    rng = np.random.default_rng(7)
    w1 = rng.standard_normal((IN, HIDDEN)) / np.sqrt(IN)
    b1 = rng.standard_normal(HIDDEN) * 0.1
    w2 = rng.standard_normal((HIDDEN, OUT)) / np.sqrt(HIDDEN)
    b2 = rng.standard_normal(OUT) * 0.1
    graph = {
        "name": "mlp",
        "inputs": [{"name": "x", "dtype": "FLOAT16", "shape": [BATCH, IN]}],
        "initializers": [
            {"name": "w1", "tensor": tensor(w1)},
            {"name": "b1", "tensor": tensor(b1)},
            {"name": "w2", "tensor": tensor(w2)},
            {"name": "b2", "tensor": tensor(b2)},
        ],
        "nodes": [
            {"name": "fc1", "opType": "MatMul", "inputs": ["x", "w1"], "outputs": ["h1"]},
            {"name": "bias1", "opType": "Add", "inputs": ["h1", "b1"], "outputs": ["h1b"]},
            {"name": "relu1", "opType": "Relu", "inputs": ["h1b"], "outputs": ["a1"]},
            {"name": "fc2", "opType": "MatMul", "inputs": ["a1", "w2"], "outputs": ["h2"]},
            {"name": "bias2", "opType": "Add", "inputs": ["h2", "b2"], "outputs": ["y"]},
        ],
        "outputs": ["y"],
    }
    with open(os.path.join(HERE, "mlp.json"), "w") as f:
        json.dump(graph, f, indent=1)
        f.write("\n")
    x = rng.standard_normal((BATCH, IN)).astype(np.float16)
    np.save(os.path.join(HERE, "mlp_x.npy"), x)


if __name__ == "__main__":
    main()
