"""Modules on the NPU: `module.npu()`, `.to("npu:N")`, `.to(torch.device("npu", N))`.

The module's forward then runs on npu-server, and so does its backward:

- under autograd (something needs a gradient) or in train mode, through
  npuserve.autograd.RemoteModule: exported once per input signature and mode,
  its gradient graphs registered, the forward run with the activations the
  backward reads kept on the device, and loss.backward() running the backward
  there; torch.optim, schedulers, clip_grad_norm_ and state_dict work on the
  module's own parameters, which are uploaded again only when they changed;
- otherwise (model.eval() under torch.no_grad()), exported once per input
  signature and parameter state (torch's in-place version counters), fused,
  and run as inference.

The outputs come back as CPU tensors in the structure forward returns. A
loss module stays on the host. Hooks
on the module itself (forward pre-hooks and forward hooks) fire around the
remote run; hooks on its submodules fire with the values the server computed
for each (torch_npu._module_hooks), in inference runs.
"""
import collections
import functools

import torch
from npuserve.autograd import RemoteModule, as_defined, half_level
from npuserve.torch import compile as _compile

from torch_npu import _module_hooks, _runtime

_MAX_SIGNATURES = 8  # exports kept per module; the least recently used is unregistered


class _RemoteForward:
    def __init__(self, module, index):
        self.module = module
        self.index = index
        self.compiled = collections.OrderedDict()
        self.trained = None  # the RemoteModule of the autograd and train-mode runs

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
        grad = torch.is_grad_enabled() and (any(p.requires_grad for p in module.parameters()) or
                                            any(a.requires_grad for a in args))
        # An fp16 model (apex O2/O3) runs there too, in eval mode as well: its
        # export traces an fp32 copy and the server makes it fp16 again.
        if grad or module.training or half_level(module) is not None:
            if self.trained is None:
                self.trained = RemoteModule(module, _runtime.client(), f"npu:{self.index}")
            return self.trained(*args)
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
        with as_defined(self.module) as module:
            if hooked:  # unfused, run with debug: every submodule's values come back
                return _module_hooks.HookedExport(module, args, f"npu:{self.index}", hooked)
            return _compile(module, args, client=_runtime.client(), device=f"npu:{self.index}")

    def release(self):
        if self.trained is not None:
            self.trained.close()
            self.trained = None
        while self.compiled:
            self.compiled.popitem()[1].close()


def to_npu(module, device=None):
    """Puts `module` on npu:N (the current device when None); returns the module.
    A loss module (criterion.npu()) stays on the host: the loss is host work
    beside the model's remote forward and backward."""
    index = _runtime.checked_index(device)
    if isinstance(module, torch.nn.modules.loss._Loss):
        return module
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
