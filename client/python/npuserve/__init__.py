"""npuserve: the Python client of npu-server (simulated Da Vinci NPUs over gRPC).

    import numpy as np, npuserve
    npu = npuserve.connect("127.0.0.1:50051")          # tls=, token=, timeout=
    print(npu.health(), [d.id for d in npu.devices()])
    mlp = npu.register("examples/graphs/mlp.json")      # an npu.v1.Graph, its JSON dict or file
    result = mlp(x=np.load("examples/graphs/mlp_x.npy"), profile=True)
    y = result["y"]                                     # numpy.ndarray, float16
    for row in result.op_summary(): print(row["Op Name"], row["Task Duration(us)"])

Device memory: h = npu.upload(array); npu.run(graph, {"x": h}); npu.download(h);
npu.free(h). Training: npu.trainer(...) (npuserve.training). Inputs may be numpy arrays, torch tensors, Python scalars or lists.
Use it from the build tree: PYTHONPATH=build/python /usr/bin/python3 (README, "From Python").
"""
from npuserve._version import __version__
from npuserve.channel import TLS
from npuserve.client import Client, Handle, RegisteredGraph, RunResult, ValueType, connect
from npuserve.errors import NpuError
from npuserve.profile import (COUPLED_OP_SUMMARY_COLUMNS, OP_SUMMARY_COLUMNS, op_summary, op_summary_columns,
                              op_summary_csv, write_op_summary_csv)
from npuserve.training import EvalResult, StepResult, Trainer
from npuserve.tensors import (BOOL, FLOAT16, FLOAT32, INT8, INT32, INT64, NUMPY_DTYPES, device_dtype, from_tensor,
                              to_tensor)
from npuserve._stubs import graph_pb2, profile_pb2, runtime_pb2, tensor_pb2


def compare(module, example_inputs, **options):
    """msprobe's precision comparison of a torch module on the NPU against torch fp32 on the host: every
    submodule's outputs, a Comparison of rows keyed Module.PATH.CLASS.forward.0 (npuserve.precision; torch is
    imported only here)."""
    from npuserve import precision
    return precision.compare(module, example_inputs, **options)

__all__ = [
    "__version__", "connect", "Client", "TLS", "NpuError", "Handle", "RegisteredGraph", "RunResult", "ValueType",
    "Trainer", "StepResult", "EvalResult",
    "op_summary", "op_summary_csv", "write_op_summary_csv", "OP_SUMMARY_COLUMNS", "COUPLED_OP_SUMMARY_COLUMNS",
    "op_summary_columns", "to_tensor", "from_tensor",
    "device_dtype", "NUMPY_DTYPES", "FLOAT16", "FLOAT32", "INT32", "INT8", "BOOL", "INT64", "graph_pb2",
    "profile_pb2", "runtime_pb2", "tensor_pb2", "compare",
]
