"""hccl (and nccl) on torch.distributed's gloo backend: real TCP collectives
between processes and machines, with init_method, world_size and rank as
given. A notice on stderr says so once per process."""
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


_installed = False


def install():
    global _installed
    if _installed or not dist.is_available():
        return
    _installed = True
    dist.init_process_group = _wrap_init(dist.init_process_group)
    dist.new_group = _wrap_new_group(dist.new_group)
