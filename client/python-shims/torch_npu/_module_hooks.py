"""Hooks on the submodules of a module on the NPU (the "hook every module to
see where it breaks" habit): their forward pre-hooks and forward hooks fire
with the tensors the server computed for that submodule.

The module is exported without the eval-mode fusions (BatchNormalization stays
its own node), so that every submodule's values exist, and run with debug on:
unfused, returning every intermediate. torch.onnx.export names each node by
its module scope ("/layer1/layer1.0/conv1/Conv"); a submodule's inputs are the
values its scope's nodes read that come from outside it, its outputs the
values they write that are read outside it or are the graph's outputs. Hooks
see the server's values; what a hook returns cannot change a run that has
already happened, so it is ignored with a warning.
"""
import collections
import io
import warnings

import torch
from npuserve import graphs
from torch.utils import _pytree

from torch_npu import _runtime


def hooked_submodules(module):
    """The paths of the submodules (not the module itself) that have forward hooks or pre-hooks."""
    return frozenset(name for name, m in module.named_modules() if name and (m._forward_pre_hooks or m._forward_hooks))


def _scope(path):
    parts = path.split(".")
    return "/" + "/".join(".".join(parts[:k + 1]) for k in range(len(parts))) + "/"


def _submodule_values(model, module, paths):
    """[(order, kind, path, submodule, input names, output names)] in the order torch's hooks fire: a module's
    pre-hooks before its first node (an outer module's before an inner one's), its hooks after its last node (an
    inner module's before the module around it)."""
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
        scope = _scope(path)
        inside = [i for i, n in enumerate(nodes) if n.name.startswith(scope)]
        if not inside:
            warnings.warn(f"torch_npu: {path} ({type(sub).__name__}) has no nodes of its own in the export; "
                          "its hooks do not fire", stacklevel=3)
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


class HookedExport:
    """One input signature of a module with hooked submodules: registered unfused, run with debug."""

    def __init__(self, module, args, device, hooked):
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
        model = onnx.load_from_string(buffer.getvalue())
        self.submodules = _submodule_values(model, module, hooked)
        self.device = device
        self.client = _runtime.client()
        self.graph = self.client.register(buffer.getvalue(), device)

    def __call__(self, *args):
        inputs = {name: a.detach().cpu() for name, a in zip(self.input_names, args)}
        result = self.client.run(self.graph, inputs, device=self.device, debug=True)
        values = {**{k: torch.from_numpy(v) for k, v in result.intermediates.items()},
                  **{k: torch.from_numpy(v) for k, v in result.outputs.items()}, **inputs}
        for _, kind, path, sub, input_names, output_names in self.submodules:
            missing = [v for v in input_names + output_names if v not in values]
            if missing:
                warnings.warn(f"torch_npu: the run did not return {missing[0]!r} of {path}; its hooks do not fire")
                continue
            hook_inputs = tuple(values[v] for v in input_names)
            if kind == "pre":
                for hook in list(sub._forward_pre_hooks.values()):
                    self._ignored(hook(sub, hook_inputs), path, "pre-hook")
                continue
            output = values[output_names[0]] if len(output_names) == 1 else tuple(values[v] for v in output_names)
            for hook in list(sub._forward_hooks.values()):
                self._ignored(hook(sub, hook_inputs, output), path, "hook")
        leaves = [torch.from_numpy(result[name]) for name in self.output_names]
        return _pytree.tree_unflatten(leaves, self.spec)

    @staticmethod
    def _ignored(returned, path, kind):
        if returned is not None:
            warnings.warn(f"torch_npu: the forward {kind} of {path} returned a value; on the NPU hooks observe "
                          "the run and cannot change it, so it is ignored")

    def close(self):
        self.client.unregister(self.graph)
