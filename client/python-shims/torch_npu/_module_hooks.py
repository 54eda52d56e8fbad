"""Hooks on the submodules of a module on the NPU (the "hook every module to
see where it breaks" habit): their forward pre-hooks and forward hooks fire
with the tensors the server computed for that submodule.

The module is exported unfused and its submodules' values are found by their
ONNX scopes (npuserve.module_scopes), then run with debug on: unfused,
returning every intermediate. Hooks see the server's values; what a hook returns cannot change a run that has
already happened, so it is ignored with a warning.
"""
import warnings

import torch
from npuserve import module_scopes
from torch.utils import _pytree

from torch_npu import _runtime


def hooked_submodules(module):
    """The paths of the submodules (not the module itself) that have forward hooks or pre-hooks."""
    return frozenset(name for name, m in module.named_modules() if name and (m._forward_pre_hooks or m._forward_hooks))


class HookedExport:
    """One input signature of a module with hooked submodules: registered unfused, run with debug."""

    def __init__(self, module, args, device, hooked):
        export = module_scopes.UnfusedExport(module, args)
        self.spec, self.input_names, self.output_names = export.spec, export.input_names, export.output_names
        self.submodules = module_scopes.submodule_values(export.model, module, hooked, stacklevel=4)
        self.device = device
        self.client = _runtime.client()
        self.graph = self.client.register(export.onnx, device)

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
