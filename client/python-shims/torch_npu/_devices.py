"""The "npu" device in torch 1.13, which has no such device type: device
strings, torch.device("npu", N), .npu() and .to("npu") on tensors and
modules, and the device= of tensor factories.

A tensor stays a CPU tensor: `.npu()` / `.to("npu:N")` check the device and
return it (the next remote call uploads what it uses). A module moved to an
npu device runs remotely (torch_npu._modules). torch.device is replaced by a
class that makes npu devices and passes everything else to torch's own, so
isinstance(x, torch.device) holds for both.
"""
import functools

import torch

from torch_npu import _runtime

_TorchDevice = torch.device


class NpuDevice:
    """torch.device("npu", N): type "npu", index N (None: the current device)."""

    __slots__ = ("index",)

    def __init__(self, index=None):
        self.index = index

    @property
    def type(self):
        return "npu"

    def __str__(self):
        return "npu" if self.index is None else f"npu:{self.index}"

    def __repr__(self):
        return f"device(type='npu'{'' if self.index is None else f', index={self.index}'})"

    def __eq__(self, other):
        return isinstance(other, NpuDevice) and other.index == self.index

    def __hash__(self):
        return hash(("npu", self.index))


def is_npu(device):
    """True for "npu", "npu:N" and NpuDevice (not for ints: torch reads them as cuda ordinals)."""
    if isinstance(device, NpuDevice):
        return True
    return isinstance(device, str) and (device == "npu" or device.startswith("npu:"))


class _DeviceMeta(type):
    def __instancecheck__(cls, obj):
        return isinstance(obj, (_TorchDevice, NpuDevice))

    def __call__(cls, type_or_string, index=None):
        if type_or_string == "npu" or (isinstance(type_or_string, str) and type_or_string.startswith("npu:")):
            number = _runtime.index_of(type_or_string)
            return NpuDevice(index if number is None else number)
        if isinstance(type_or_string, NpuDevice):
            return type_or_string
        return _TorchDevice(type_or_string) if index is None else _TorchDevice(type_or_string, index)


class device(metaclass=_DeviceMeta):  # noqa: N801
    """torch.device with "npu" added (see the module's docstring)."""


def _host_device(value):
    """An npu device, checked against the server, as "cpu"; anything else as it is."""
    if is_npu(value):
        _runtime.checked_index(value if not isinstance(value, NpuDevice) else value.index)
        return "cpu"
    return value


def _tensor_npu(self, device=None, non_blocking=False, memory_format=torch.preserve_format):
    _runtime.checked_index(device)
    return self


def _wrap_to(original):
    @functools.wraps(original)
    def to(self, *args, **kwargs):
        args = tuple(_host_device(a) for a in args)
        if "device" in kwargs:
            kwargs["device"] = _host_device(kwargs["device"])
        return original(self, *args, **kwargs)
    return to


def _wrap_factory(original):
    @functools.wraps(original)
    def factory(*args, **kwargs):
        if "device" in kwargs:
            kwargs["device"] = _host_device(kwargs["device"])
        return original(*args, **kwargs)
    return factory


FACTORIES = ("tensor", "as_tensor", "zeros", "ones", "empty", "full", "rand", "randn", "randint", "randperm",
             "arange", "linspace", "logspace", "eye", "zeros_like", "ones_like", "empty_like", "full_like",
             "rand_like", "randn_like", "randint_like", "empty_strided", "tril_indices", "triu_indices")

_installed = False


def install():
    """Teaches torch the npu device (idempotent)."""
    global _installed
    if _installed:
        return
    _installed = True
    torch.device = device
    torch.Tensor.npu = _tensor_npu
    # `npu migrate` writes is_cuda as is_npu; every tensor is a host tensor here.
    torch.Tensor.is_npu = property(lambda self: False)
    torch.Tensor.to = _wrap_to(torch.Tensor.to)
    for name in FACTORIES:
        setattr(torch, name, _wrap_factory(getattr(torch, name)))
