"""Modules on the NPU: `module.npu()`, `.to("npu:N")`, `.to(torch.device("npu", N))`.

The module's forward then runs on npu-server: exported once per input
signature (shapes and dtypes) and per state of its parameters (torch's
in-place version counters: an optimizer step or load_state_dict makes a new
export), registered on its device, and run there; the outputs come back as
CPU tensors in the structure forward returns. Hooks on the module itself
(forward pre-hooks and forward hooks) fire around the remote run; hooks on
its submodules fire with the values the server computed for each
(torch_npu._module_hooks).

Training a module on the NPU (its forward under autograd in train mode) needs
the server's gradient graphs for it, which npu-server does not offer yet: such
a call is refused naming the module, and the module's CPU form (.cpu()) or
npuserve's Trainer (`npu train`, npuserve.Client.trainer) are the ways to
train today.
"""
import collections
import functools

import torch
from npuserve.torch import compile as _compile

from torch_npu import _module_hooks, _runtime

_MAX_SIGNATURES = 8  # exports kept per module; the least recently used is unregistered


class _RemoteForward:
    def __init__(self, module, index):
        self.module = module
        self.index = index
        self.compiled = collections.OrderedDict()

    def _state(self):
        return tuple((id(t), t._version, t.dtype) for t in self.module.state_dict(keep_vars=True).values())

    def __call__(self, *args, **kwargs):
        module = self.module
        name = type(module).__name__
        if kwargs:
            raise TypeError(f"torch_npu: {name} on npu:{self.index} takes its inputs positionally "
                            f"(got keyword arguments {sorted(kwargs)})")
        for i, a in enumerate(args):
            if not isinstance(a, torch.Tensor):
                raise TypeError(f"torch_npu: input {i} of {name} on npu:{self.index} is a {type(a).__name__}; "
                                "a module on the NPU takes tensors")
        if module.training and torch.is_grad_enabled() and any(p.requires_grad for p in module.parameters()):
            raise RuntimeError(
                f"torch_npu: training {name} on npu:{self.index} (train mode under autograd) needs npu-server's "
                "gradient graphs for the module, which it does not offer yet. Run evaluation with model.eval() or "
                "torch.no_grad(), train the CPU module (model.cpu()), or train on the server with `npu train` / "
                "npuserve.Client.trainer")
        hooked = _module_hooks.hooked_submodules(module)
        key = (tuple((tuple(a.shape), a.dtype) for a in args), self._state(), hooked)
        compiled = self.compiled.get(key)
        if compiled is None:
            compiled = self._export(args, hooked)
            self.compiled[key] = compiled
            while len(self.compiled) > _MAX_SIGNATURES:
                self.compiled.popitem(last=False)[1].close()
        self.compiled.move_to_end(key)
        return compiled(*args)

    def _export(self, args, hooked):
        module = self.module
        del module.forward  # the class's forward, for the export's trace
        hooks = [(m, m._forward_pre_hooks.copy(), m._forward_hooks.copy()) for m in module.modules()]
        for m, _, _ in hooks:  # the trace runs on the host: no user hook sees its values
            m._forward_pre_hooks.clear()
            m._forward_hooks.clear()
        try:
            if hooked:  # unfused, run with debug: every submodule's values come back
                return _module_hooks.HookedExport(module, args, f"npu:{self.index}", hooked)
            return _compile(module, args, client=_runtime.client(), device=f"npu:{self.index}")
        finally:
            for m, pre, post in hooks:
                m._forward_pre_hooks.update(pre)
                m._forward_hooks.update(post)
            module.forward = self

    def release(self):
        while self.compiled:
            self.compiled.popitem()[1].close()


def to_npu(module, device=None):
    """Puts `module` on npu:N (the current device when None); returns the module."""
    index = _runtime.checked_index(device)
    remote = module.__dict__.get("forward")
    if isinstance(remote, _RemoteForward):
        if remote.index == index:
            return module
        remote.release()
    module.forward = _RemoteForward(module, index)
    return module


def to_host(module):
    remote = module.__dict__.get("forward")
    if isinstance(remote, _RemoteForward):
        remote.release()
        del module.forward
    return module


def npu_index(module):
    remote = module.__dict__.get("forward")
    return remote.index if isinstance(remote, _RemoteForward) else None


def _module_npu(self, device=None):
    return to_npu(self, device)


def _wrap_module_to(original):
    from torch_npu._devices import NpuDevice, is_npu

    @functools.wraps(original)
    def to(self, *args, **kwargs):
        target = kwargs.pop("device", None)
        rest = []
        for a in args:
            if is_npu(a):
                target = a
            else:
                rest.append(a)
        if target is not None and is_npu(target):
            module = original(self, *rest, **kwargs) if rest or kwargs else self
            return to_npu(module, target.index if isinstance(target, NpuDevice) else target)
        if target is not None:
            kwargs["device"] = target
            if torch.device(target).type == "cpu":
                to_host(self)
        return original(self, *rest, **kwargs)
    return to


def _wrap_module_cpu(original):
    @functools.wraps(original)
    def cpu(self):
        return original(to_host(self))
    return cpu


_installed = False


def install():
    global _installed
    if _installed:
        return
    _installed = True
    torch.nn.Module.npu = _module_npu
    torch.nn.Module.to = _wrap_module_to(torch.nn.Module.to)
    torch.nn.Module.cpu = _wrap_module_cpu(torch.nn.Module.cpu)
