"""The generated protobuf and gRPC modules, found next to this package.

The build (client/python/CMakeLists.txt) writes them to `_generated/` inside
the assembled package; NPUSERVE_STUBS names another directory holding the same
layout (npu/v1/*_pb2.py and health/grpc/health/v1/health_pb2.py).
"""
import importlib
import importlib.util
import os
import sys

_DIR = os.environ.get("NPUSERVE_STUBS") or os.path.join(os.path.dirname(os.path.abspath(__file__)), "_generated")

if not os.path.isfile(os.path.join(_DIR, "npu", "v1", "runtime_pb2.py")):
    raise ImportError(
        f"npuserve: no generated stubs in {_DIR}. Build them (cmake --build build --target npuserve_python) and "
        "use the package from the build tree: PYTHONPATH=build/python /usr/bin/python3 ...")

# The generated modules import one another as `npu.v1.*`.
if _DIR not in sys.path:
    sys.path.insert(0, _DIR)


def _load(name):
    return importlib.import_module(f"npu.v1.{name}")


tensor_pb2 = _load("tensor_pb2")
graph_pb2 = _load("graph_pb2")
profile_pb2 = _load("profile_pb2")
device_pb2 = _load("device_pb2")
device_pb2_grpc = _load("device_pb2_grpc")
memory_pb2 = _load("memory_pb2")
memory_pb2_grpc = _load("memory_pb2_grpc")
runtime_pb2 = _load("runtime_pb2")
runtime_pb2_grpc = _load("runtime_pb2_grpc")
training_pb2 = _load("training_pb2")
training_pb2_grpc = _load("training_pb2_grpc")

# grpc.health.v1 by file: its package path would shadow grpcio's `grpc`.
_spec = importlib.util.spec_from_file_location(
    "npuserve._generated_health_pb2", os.path.join(_DIR, "health", "grpc", "health", "v1", "health_pb2.py"))
health_pb2 = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(health_pb2)
