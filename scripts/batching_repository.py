"""Writes a Triton-style model repository for the dynamic batching acceptance:
an ONNX MLP with a dynamic batch dim ("batch") and 16 MiB of fp32 weights
(1024 -> 2048 -> 1024, ReLU between), twice: `mlp_batched` with
dynamic_batching { preferred_batch_size: [8, 16] max_queue_delay_microseconds: 2000 },
and `mlp_plain`, the same model and max_batch_size without it. Also x1.npy, one
row of input.
  /usr/bin/python3 scripts/batching_repository.py DIR
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

IN, HIDDEN = 1024, 2048


def model(rng):
    w1 = (rng.standard_normal((IN, HIDDEN)) / np.sqrt(IN)).astype(np.float32)
    b1 = rng.standard_normal(HIDDEN).astype(np.float32)
    w2 = (rng.standard_normal((HIDDEN, IN)) / np.sqrt(HIDDEN)).astype(np.float32)
    b2 = rng.standard_normal(IN).astype(np.float32)
    nodes = [helper.make_node("MatMul", ["x", "w1"], ["h"]), helper.make_node("Add", ["h", "b1"], ["hb"]),
             helper.make_node("Relu", ["hb"], ["r"]), helper.make_node("MatMul", ["r", "w2"], ["o"]),
             helper.make_node("Add", ["o", "b2"], ["y"])]
    graph = helper.make_graph(
        nodes, "mlp16m", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", IN])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", IN])],
        [numpy_helper.from_array(a, n) for n, a in (("w1", w1), ("b1", b1), ("w2", w2), ("b2", b2))])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    onnx.checker.check_model(m)
    assert w1.nbytes + w2.nbytes == 16 << 20
    return m


def main(out):
    m = model(np.random.default_rng(26))
    io = (f'input [ {{ name: "x" data_type: TYPE_FP32 dims: [ {IN} ] }} ]\n'
          f'output [ {{ name: "y" data_type: TYPE_FP32 dims: [ {IN} ] }} ]\n')
    configs = {
        "mlp_batched": 'platform: "onnxruntime_onnx"\nmax_batch_size: 16\n' + io +
                       "dynamic_batching { preferred_batch_size: [ 8, 16 ] max_queue_delay_microseconds: 2000 }\n",
        "mlp_plain": 'platform: "onnxruntime_onnx"\nmax_batch_size: 16\n' + io,
    }
    for name, config in configs.items():
        os.makedirs(os.path.join(out, name, "1"), exist_ok=True)
        onnx.save(m, os.path.join(out, name, "1", "model.onnx"))
        with open(os.path.join(out, name, "config.pbtxt"), "w") as f:
            f.write(config)
    np.save(os.path.join(out, "x1.npy"), np.random.default_rng(1).standard_normal((1, IN)).astype(np.float32))


if __name__ == "__main__":
    main(sys.argv[1])
