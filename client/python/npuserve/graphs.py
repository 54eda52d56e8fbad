"""What register() and run() accept as a model, and the bytes sent for it.

- an npu.v1.Graph message, its JSON form (a dict, as protobuf's JSON mapping
  writes it), or the path of such a .json file (examples/graphs/mlp.json);
- an ONNX model: a .onnx path, its bytes, or an onnx.ModelProto. The server
  imports it (RegisterGraph with the model's bytes): nothing is converted here;
- a torch.nn.Module with example inputs, exported here with torch.onnx.export
  (opset 17, eval mode) and then sent as an ONNX model.

A model is identified by the SHA-256 of the bytes sent (an npu.v1.Graph's
deterministic serialization, as the C++ client computes it), so the server
finds an earlier registration of the same content without the bytes.
"""
import dataclasses
import hashlib
import io
import os

from google.protobuf import json_format

from npuserve._stubs import graph_pb2, runtime_pb2

NPU_GRAPH = runtime_pb2.RegisterGraphHeader.NPU_GRAPH
ONNX = runtime_pb2.RegisterGraphHeader.ONNX
ONNX_OPSET = 17  # what the server's import is tested with (opsets 13-18 are accepted)


@dataclasses.dataclass(frozen=True)
class Model:
    """The bytes register() sends: `format` NPU_GRAPH or ONNX, `data`, and
    `sha256` (lowercase hex) of `data`. `graph` is the npu.v1.Graph when it is one."""
    format: int
    data: bytes
    sha256: str
    graph: object = None


def graph_message(source):
    """The npu.v1.Graph that `source` names (a message, its JSON dict or a .json path)."""
    if isinstance(source, graph_pb2.Graph):
        return source
    if isinstance(source, dict):
        try:
            return json_format.ParseDict(source, graph_pb2.Graph())
        except json_format.ParseError as e:
            raise ValueError(f"graph dict is not an npu.v1.Graph: {e}") from None
    if isinstance(source, (str, os.PathLike)):
        path = os.fspath(source)
        try:
            with open(path, encoding="utf-8") as f:
                text = f.read()
        except OSError as e:
            raise ValueError(f"cannot read graph file \"{path}\": {e.strerror}") from None
        except UnicodeDecodeError:
            raise ValueError(f"\"{path}\" is not an npu.v1.Graph in JSON (name ONNX models .onnx)") from None
        try:
            return json_format.Parse(text, graph_pb2.Graph())
        except json_format.ParseError as e:
            raise ValueError(f"\"{path}\" is not an npu.v1.Graph in JSON: {e}") from None
    raise TypeError(f"an npu.v1.Graph is a message, its JSON dict, or a .json path; got {type(source).__name__}")


def is_graph(source):
    """Whether `source` is an npu.v1.Graph in one of its forms (a Run may carry it inline)."""
    if isinstance(source, (graph_pb2.Graph, dict)):
        return True
    return isinstance(source, (str, os.PathLike)) and not os.fspath(source).endswith(".onnx")


# export_torch's options, which register() and trainer() pass through for a torch module.
EXPORT_OPTIONS = ("input_names", "output_names", "dynamic_axes", "opset_version")


def model_of(source, example_inputs=None, **export_options):
    """The Model register() sends for `source` (see the module's docstring).

    `example_inputs` (a tensor or a tuple of them) and `export_options`
    (input_names, output_names, dynamic_axes, opset_version) are for a torch
    module only.
    """
    if is_torch_module(source):
        return _model(ONNX, export_torch(source, example_inputs, **export_options))
    if example_inputs is not None or export_options:
        raise TypeError(f"example_inputs and export options are for a torch.nn.Module; got "
                        f"{type(source).__name__}")
    if is_graph(source):
        graph = graph_message(source)
        return dataclasses.replace(_model(NPU_GRAPH, graph.SerializeToString(deterministic=True)), graph=graph)
    if isinstance(source, (str, os.PathLike)):
        path = os.fspath(source)
        try:
            with open(path, "rb") as f:
                data = f.read()
        except OSError as e:
            raise ValueError(f"cannot read ONNX model \"{path}\": {e.strerror}") from None
        if not data:
            raise ValueError(f"ONNX model \"{path}\" is empty")
        return _model(ONNX, data)
    if isinstance(source, (bytes, bytearray, memoryview)):
        if not len(source):
            raise ValueError("the ONNX model's bytes are empty")
        return _model(ONNX, bytes(source))
    if _is_onnx_model_proto(source):
        return _model(ONNX, source.SerializeToString())
    raise TypeError("a model is an npu.v1.Graph (message, JSON dict, .json path), an ONNX model (.onnx path, bytes, "
                    f"onnx.ModelProto) or a torch.nn.Module with example_inputs; got {type(source).__name__}")


def export_torch(module, example_inputs, input_names=None, output_names=None, dynamic_axes=None,
                 opset_version=ONNX_OPSET):
    """The ONNX bytes of `module` in eval mode, traced with `example_inputs`.

    Inputs are named input_names (default x0, x1, ...) and outputs output_names
    (default y0, y1, ...): the names run() takes and returns.
    """
    import torch  # only when given a module

    if example_inputs is None:
        raise ValueError("registering a torch.nn.Module needs example_inputs (a tensor or a tuple of tensors) "
                         "to trace it with torch.onnx.export")
    args = tuple(example_inputs) if isinstance(example_inputs, (tuple, list)) else (example_inputs,)
    if input_names is None:
        input_names = [f"x{i}" for i in range(len(args))]
    was_training = module.training
    module.eval()
    try:
        if output_names is None:
            with torch.no_grad():
                outputs = module(*args)
            count = len(outputs) if isinstance(outputs, (tuple, list)) else 1
            output_names = [f"y{i}" for i in range(count)]
        buffer = io.BytesIO()
        _register_missing_symbolics(torch, opset_version)
        # With gradients on: under no_grad, eval-mode attention layers take
        # torch's fused fast path (aten::_native_multi_head_attention), which
        # has no ONNX export.
        torch.onnx.export(module, args, buffer, opset_version=opset_version, input_names=list(input_names),
                          output_names=list(output_names), dynamic_axes=dynamic_axes, do_constant_folding=True)
    finally:
        module.train(was_training)
    return buffer.getvalue()


_TORCH_SCALAR_TYPES = {"Float": "float32", "Half": "float16", "Double": "float64", "Long": "int64", "Int": "int32",
                       "Char": "int8", "Bool": "bool"}
_registered_opsets = set()


def _register_missing_symbolics(torch, opset_version):
    """Symbolics that torch 1.13's exporter lacks for ops it emits itself.

    aten::zero: `t[a:b].zero_()` on a slice (torchvision's swin_v2 clears part
    of the qkv bias in forward) becomes aten::zero, which has no ONNX symbolic
    ("Exporting the operator 'aten::zero' ... is not supported"); it is
    ConstantOfShape(Shape(t)) of t's dtype.
    """
    if opset_version in _registered_opsets:
        return

    def zero(g, self):
        try:
            dtype = getattr(torch, _TORCH_SCALAR_TYPES.get(self.type().scalarType(), "float32"))
        except RuntimeError:  # no complete type: the exporter's default float
            dtype = torch.float32
        return g.op("ConstantOfShape", g.op("Shape", self), value_t=torch.zeros(1, dtype=dtype))

    torch.onnx.register_custom_op_symbolic("aten::zero", zero, opset_version)
    _registered_opsets.add(opset_version)


def _model(format, data):
    return Model(format, data, hashlib.sha256(data).hexdigest())


def is_torch_module(value):
    return any(c.__module__.startswith("torch.nn") and c.__name__ == "Module" for c in type(value).__mro__)


def _is_onnx_model_proto(value):
    return type(value).__name__ == "ModelProto" and hasattr(value, "SerializeToString")
