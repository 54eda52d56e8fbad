"""torch_npu for npu-server: `import torch_npu` gives a script written for
Ascend NPUs the simulated NPUs of an npu-server, on an ordinary CPU machine.

    import torch, torch_npu
    torch.npu.set_device("npu:0")          # the server's devices ($NPUSERVE_TARGET, default 127.0.0.1:50051)
    model = model.npu()                     # its forward runs on the server
    dist.init_process_group(backend="hccl", ...)   # served by gloo

What it installs: torch.npu (torch_npu.npu: devices, memory, synchronize,
amp), the "npu" device (torch.device("npu", N), device strings, .npu() and
.to("npu") on tensors and modules, device= of tensor factories), and hccl on
torch.distributed's gloo. `from torch_npu.contrib import transfer_to_npu`
also maps CUDA code onto it. This is npuserve's stand-in distribution
(npuserve-shims); where Ascend's real torch_npu is installed, install this
one only in an environment without it (scripts/install-python.sh --shims
refuses to shadow it).
"""
import sys

import torch

from torch_npu import _devices, _distributed, _modules
from torch_npu import npu

__version__ = "1.13.0+npuserve"

_devices.install()
_modules.install()
_distributed.install()
torch.npu = npu
sys.modules.setdefault("torch.npu", npu)
sys.modules.setdefault("torch.npu.amp", npu.amp)

__all__ = ["npu"]
