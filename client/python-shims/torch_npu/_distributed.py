"""hccl (and nccl) on torch.distributed's gloo backend: real TCP collectives
between processes and machines, with init_method, world_size and rank as
given. A notice on stderr says so once per process.

DistributedDataParallel wraps a module on the NPU as it wraps a CPU module:
its parameters are CPU tensors that the server's runs read (torch_npu's
modules), so `device_ids=[rank]` and `output_device`, which torch allows only
for CUDA modules, are dropped for it; the gradient buckets are allreduced over
gloo after each backward, as DDP does."""
import functools
import sys

import torch.distributed as dist

_SERVED_BY_GLOO = ("hccl", "nccl")
_noticed = False


def _backend(backend):
    global _noticed
    name = str(backend).lower() if backend is not None else None
    if name in _SERVED_BY_GLOO:
        if not _noticed:
            print(f"torch_npu: backend {name!r} is served by torch.distributed's gloo (npuserve: simulated NPUs, "
                  "real collectives between the processes)", file=sys.stderr)
            _noticed = True
        return "gloo"
    return backend


def _wrap_init(original):
    @functools.wraps(original)
    def init_process_group(backend=None, *args, **kwargs):
        if "backend" in kwargs:
            kwargs["backend"] = _backend(kwargs["backend"])
            return original(*args, **kwargs) if backend is None else original(backend, *args, **kwargs)
        return original(_backend(backend) if backend is not None else "gloo", *args, **kwargs)
    return init_process_group


def _wrap_new_group(original):
    @functools.wraps(original)
    def new_group(*args, **kwargs):
        if "backend" in kwargs:
            kwargs["backend"] = _backend(kwargs["backend"])
        return original(*args, **kwargs)
    return new_group


def _wrap_ddp_init(original):
    @functools.wraps(original)
    def __init__(self, module, device_ids=None, output_device=None, *args, **kwargs):
        from torch_npu._modules import npu_index
        if npu_index(module) is not None:
            device_ids, output_device = None, None
        return original(self, module, device_ids, output_device, *args, **kwargs)
    return __init__


_installed = False


def install():
    global _installed
    if _installed or not dist.is_available():
        return
    _installed = True
    dist.init_process_group = _wrap_init(dist.init_process_group)
    dist.new_group = _wrap_new_group(dist.new_group)
    from torch.nn.parallel import DistributedDataParallel
    DistributedDataParallel.__init__ = _wrap_ddp_init(DistributedDataParallel.__init__)
