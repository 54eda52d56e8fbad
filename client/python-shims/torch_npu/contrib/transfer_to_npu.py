"""`from torch_npu.contrib import transfer_to_npu`: an unchanged CUDA script
uses the NPU. As torch_npu's module does, importing it maps torch.cuda.* to
torch.npu.*, "cuda" device strings and torch.device("cuda", i) to npu,
.cuda() on tensors and modules to .npu(), torch.cuda.amp to torch.npu.amp,
and the nccl backend to hccl (served by gloo). It prints what it patched once.
"""
import functools
import sys

import torch

import torch_npu  # noqa: F401  (installs torch.npu and the npu device)
from torch_npu import _devices

_CUDA_NAMES = ("is_available", "device_count", "set_device", "current_device", "synchronize", "get_device_name",
               "get_device_properties", "manual_seed", "manual_seed_all", "memory_allocated", "max_memory_allocated",
               "reset_peak_memory_stats", "memory_reserved", "empty_cache", "is_initialized", "init", "device")


def _to_npu_device(value):
    """cuda / cuda:N / torch.device("cuda", N) as the npu device; anything else as it is."""
    if isinstance(value, str) and (value == "cuda" or value.startswith("cuda:")):
        return "npu" + value[len("cuda"):]
    if isinstance(value, _devices._TorchDevice) and value.type == "cuda":
        return _devices.NpuDevice(value.index)
    return value


class _CudaAsNpuMeta(_devices._DeviceMeta):
    def __call__(cls, type_or_string, index=None):
        if type_or_string == "cuda":
            type_or_string = "npu"
        return super().__call__(_to_npu_device(type_or_string), index)


class device(metaclass=_CudaAsNpuMeta):  # noqa: N801
    """torch.device with "cuda" read as "npu"."""


def _wrap_devices(original):
    @functools.wraps(original)
    def call(*args, **kwargs):
        args = tuple(_to_npu_device(a) for a in args)
        if "device" in kwargs:
            kwargs["device"] = _to_npu_device(kwargs["device"])
        return original(*args, **kwargs)
    return call


def _tensor_cuda(self, device=None, non_blocking=False, memory_format=torch.preserve_format):
    return self.npu(device, non_blocking)


def _module_cuda(self, device=None):
    return self.npu(device)


def _apply():
    patched = []
    npu = torch.npu
    for name in _CUDA_NAMES:
        if hasattr(npu, name):
            setattr(torch.cuda, name, getattr(npu, name))
    patched.append(f"torch.cuda.{{{', '.join(_CUDA_NAMES)}}} -> torch.npu")
    torch.cuda.amp.autocast = npu.amp.autocast
    torch.cuda.amp.GradScaler = npu.amp.GradScaler
    patched.append("torch.cuda.amp.{autocast, GradScaler} -> torch.npu.amp")
    torch.device = device
    patched.append('torch.device("cuda", N) and "cuda[:N]" strings -> npu')
    torch.Tensor.cuda = _tensor_cuda
    torch.nn.Module.cuda = _module_cuda
    patched.append(".cuda() on tensors and modules -> .npu()")
    torch.Tensor.to = _wrap_devices(torch.Tensor.to)
    torch.nn.Module.to = _wrap_devices(torch.nn.Module.to)
    for name in _devices.FACTORIES:
        setattr(torch, name, _wrap_devices(getattr(torch, name)))
    patched.append(f"device= of torch.{{{', '.join(_devices.FACTORIES[:4])}, ...}} and .to(): cuda -> npu")
    patched.append('dist.init_process_group(backend="nccl") -> hccl (served by gloo)')
    print("torch_npu.contrib.transfer_to_npu: patched\n  " + "\n  ".join(patched), file=sys.stderr)


_apply()
