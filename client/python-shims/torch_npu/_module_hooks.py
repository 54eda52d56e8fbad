"""Hooks on the submodules of a module on the NPU (the "hook every module to
see where it breaks" habit): their forward pre-hooks and forward hooks fire
with the tensors the server computed for that submodule. This is the
inference runs' export; the runs under autograd fire them the same way
(npuserve.autograd).

The module is exported unfused and its submodules' values are found by their
ONNX scopes (npuserve.module_scopes), then run with debug on: unfused,
returning every intermediate. Hooks see the server's values; what a hook returns cannot change a run that has
already happened, so it is ignored with a warning.
"""
import torch
from npuserve import module_scopes
from torch.utils import _pytree

from torch_npu import _runtime


hooked_submodules = module_scopes.hooked_submodules


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
        module_scopes.fire_hooks(self.submodules, values, "torch_npu")
        leaves = [torch.from_numpy(result[name]) for name in self.output_names]
        return _pytree.tree_unflatten(leaves, self.spec)

    def close(self):
        self.client.unregister(self.graph)
