"""What register() and run() accept as a graph.

Today: an npu.v1.Graph message, its JSON form (a dict, as protobuf's JSON
mapping writes it), or the path of such a .json file (examples/graphs/mlp.json).
ONNX models and torch modules take the same place once the server imports ONNX
itself (RegisterGraph with the model's bytes, issue 12); until then they are
refused with what to do instead.
"""
import os

from google.protobuf import json_format

from npuserve._stubs import graph_pb2

_ONNX_LATER = ("registering {what} from Python waits for the server's ONNX import (RegisterGraph with ONNX "
               "bytes, issue 12). Today: `npu run MODEL.onnx ...` on the command line converts it, or pass an "
               "npu.v1.Graph (a message, its JSON form, or a .json file)")


def graph_message(source):
    """The npu.v1.Graph that `source` names (see the module's docstring)."""
    if isinstance(source, graph_pb2.Graph):
        return source
    if isinstance(source, dict):
        try:
            return json_format.ParseDict(source, graph_pb2.Graph())
        except json_format.ParseError as e:
            raise ValueError(f"graph dict is not an npu.v1.Graph: {e}") from None
    if isinstance(source, (str, os.PathLike)):
        path = os.fspath(source)
        if path.endswith(".onnx"):
            raise NotImplementedError(_ONNX_LATER.format(what=f"ONNX model \"{path}\""))
        try:
            with open(path, encoding="utf-8") as f:
                text = f.read()
        except OSError as e:
            raise ValueError(f"cannot read graph file \"{path}\": {e.strerror}") from None
        try:
            return json_format.Parse(text, graph_pb2.Graph())
        except json_format.ParseError as e:
            raise ValueError(f"\"{path}\" is not an npu.v1.Graph in JSON: {e}") from None
    if isinstance(source, (bytes, bytearray)) or type(source).__name__ == "ModelProto":
        raise NotImplementedError(_ONNX_LATER.format(what="an ONNX model"))
    if _is_torch_module(source):
        raise NotImplementedError(_ONNX_LATER.format(what="a torch module") +
                                  "; npuserve.torch.compile(module, example_inputs) will export and register it")
    raise TypeError(f"a graph is an npu.v1.Graph, its JSON dict, or a .json path; got {type(source).__name__}")


def _is_torch_module(value):
    return any(c.__module__.startswith("torch.nn") and c.__name__ == "Module" for c in type(value).__mro__)
