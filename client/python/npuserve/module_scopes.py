"""Which values of an exported ONNX graph belong to which submodule of the torch
module it came from, for the tools that look inside a module on the server:
npuserve.compare and torch_npu's hooks on submodules.

The module is exported without the eval-mode fusions (TrainingMode.PRESERVE,
no constant folding: BatchNormalization stays its own node), so every
submodule's values exist in the graph. torch.onnx.export names each node by
its module scope ("/layer1/layer1.0/conv1/Conv"); a submodule's inputs are the
values its scope's nodes read that come from outside it, its outputs the values
they write that are read outside it or are the graph's outputs.
"""
import collections
import io
import warnings

import torch
from torch.utils import _pytree

from npuserve import graphs


class UnfusedExport:
    """`module` called on `args`, exported unfused: the ONNX bytes and model, the
    input names (x0, x1, ...) and output names (y0, ...), and the structure of
    what forward returns."""

    def __init__(self, module, args):
        with torch.no_grad():
            example = module(*args)
        leaves, self.spec = _pytree.tree_flatten(example)
        self.input_names = [f"x{i}" for i in range(len(args))]
        self.output_names = [f"y{i}" for i in range(len(leaves))]
        buffer = io.BytesIO()
        graphs._register_missing_symbolics(torch, graphs.ONNX_OPSET)
        torch.onnx.export(module, args, buffer, opset_version=graphs.ONNX_OPSET, input_names=self.input_names,
                          output_names=self.output_names, training=torch.onnx.TrainingMode.PRESERVE,
                          do_constant_folding=False)
        import onnx
        self.onnx = buffer.getvalue()
        self.model = onnx.load_from_string(self.onnx)


def scope(path):
    """The node-name prefix torch.onnx.export gives the nodes of submodule `path` ("layer1.0.conv1")."""
    parts = path.split(".")
    return "/" + "/".join(".".join(parts[:k + 1]) for k in range(len(parts))) + "/"


def submodule_values(model, module, paths, stacklevel=3):
    """[(order, kind, path, submodule, input names, output names)] for the submodules of `module` named in `paths`,
    in the order torch's hooks fire: a module's pre-hooks before its first node (an outer module's before an inner
    one's), its hooks after its last node (an inner module's before the module around it). A submodule without
    nodes of its own in the export (an Identity, or one the export folded away) is left out with a warning."""
    nodes = list(model.graph.node)
    producer = {o: i for i, n in enumerate(nodes) for o in n.output}
    constants = {o for n in nodes if n.op_type == "Constant" for o in n.output}
    initializers = {t.name for t in model.graph.initializer}
    consumers = collections.defaultdict(set)
    for i, n in enumerate(nodes):
        for v in n.input:
            consumers[v].add(i)
    graph_outputs = {o.name for o in model.graph.output}
    out = []
    for path, sub in module.named_modules():
        if path not in paths:
            continue
        prefix = scope(path)
        inside = [i for i, n in enumerate(nodes) if n.name.startswith(prefix)]
        if not inside:
            warnings.warn(f"{path} ({type(sub).__name__}) has no nodes of its own in the export; it is not seen",
                          stacklevel=stacklevel)
            continue
        members = set(inside)
        inputs, outputs = [], []
        for i in inside:
            for v in nodes[i].input:
                if v and v not in initializers and v not in constants and producer.get(v) not in members \
                        and v not in inputs:
                    inputs.append(v)
            for v in nodes[i].output:
                if v in graph_outputs or consumers[v] - members:
                    outputs.append(v)
        depth = path.count(".")
        out.append(((inside[0], 0, depth), "pre", path, sub, inputs, outputs))
        out.append(((inside[-1], 1, -depth), "post", path, sub, inputs, outputs))
    out.sort(key=lambda entry: entry[0])
    return out


def fire_hooks(submodules, values, who="npuserve"):
    """Fires the forward pre-hooks and hooks of `submodules` (submodule_values'
    entries) with `values` (name -> tensor: a run's intermediates, outputs and
    inputs), in order. What a hook returns cannot change a run that happened:
    it is ignored with a warning, as is a submodule whose values are missing."""
    for _, kind, path, sub, input_names, output_names in submodules:
        missing = [v for v in input_names + output_names if v not in values]
        if missing:
            warnings.warn(f"{who}: the run did not return {missing[0]!r} of {path}; its hooks do not fire")
            continue
        hook_inputs = tuple(values[v] for v in input_names)
        if kind == "pre":
            for hook in list(sub._forward_pre_hooks.values()):
                _ignored(hook(sub, hook_inputs), path, "pre-hook", who)
            continue
        output = values[output_names[0]] if len(output_names) == 1 else tuple(values[v] for v in output_names)
        for hook in list(sub._forward_hooks.values()):
            _ignored(hook(sub, hook_inputs, output), path, "hook", who)


def hooked_submodules(module):
    """The paths of the submodules (not the module itself) that have forward hooks or pre-hooks."""
    return frozenset(name for name, m in module.named_modules() if name and (m._forward_pre_hooks or m._forward_hooks))


def _ignored(returned, path, kind, who):
    if returned is not None:
        warnings.warn(f"{who}: the forward {kind} of {path} returned a value; on the NPU hooks observe the run and "
                      "cannot change it, so it is ignored")
