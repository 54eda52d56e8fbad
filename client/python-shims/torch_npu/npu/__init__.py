"""torch.npu as torch_npu offers it, served by npu-server's simulated devices
(installed as torch.npu by `import torch_npu`).

Devices are the server's (ListDevices at $NPUSERVE_TARGET). Calls to the
server answer when their work is done, so synchronize() has nothing left to
wait for and returns None, as torch's does. Memory figures are the server's
device memory (what this process's tenant and others hold in handles).
"""
import torch

from torch_npu import _runtime
from torch_npu.npu import amp  # noqa: F401  (torch.npu.amp)


def is_available():
    """True when npu-server answers at $NPUSERVE_TARGET and has a device."""
    return _runtime.available()


def device_count():
    """The server's devices; 0 when it cannot be reached."""
    try:
        return len(_runtime.devices())
    except RuntimeError:
        return 0


def set_device(device):
    """Makes npu:N ("npu:N", N or an npu device) the current device."""
    _runtime.set_current(_runtime.checked_index(device))


def current_device():
    return _runtime.current()


def synchronize(device=None):
    """Waits for the device's outstanding work: every call has already answered."""
    _runtime.checked_index(device)


def get_device_name(device=None):
    """The chip's name as torch_npu reports it ("Ascend910", "Ascend910B", "Ascend310")."""
    preset = _runtime.devices()[_runtime.checked_index(device)].preset
    return "Ascend" + preset[len("ascend"):].upper() if preset.startswith("ascend") else preset


def get_device_properties(device=None):
    """The server's npu.v1.DeviceInfo (preset, ai_cores, clock_mhz, memory_capacity_bytes, ...)."""
    return _runtime.devices()[_runtime.checked_index(device)]


def _device_info(device):
    index = _runtime.checked_index(device)
    for d in _runtime.client().devices():  # fresh figures
        if d.id == f"npu:{index}":
            return d
    raise RuntimeError(f"torch_npu: the server no longer lists npu:{index}")


_peak = {}


def memory_allocated(device=None):
    """Device memory in use on the server's npu:N, in bytes."""
    used = _device_info(device).memory_used_bytes
    index = _runtime.checked_index(device)
    _peak[index] = max(_peak.get(index, 0), used)
    return used


def max_memory_allocated(device=None):
    """The most memory_allocated() has seen for the device since reset_peak_memory_stats()."""
    memory_allocated(device)
    return _peak[_runtime.checked_index(device)]


def reset_peak_memory_stats(device=None):
    _peak.pop(_runtime.checked_index(device), None)


def memory_reserved(device=None):
    return memory_allocated(device)


def empty_cache():
    """Nothing is cached on the client; the server frees a handle when it is freed."""


def manual_seed(seed):
    """Seeds the host's generator (parameter initialisation, dropout masks drawn on the host).
    Not torch.manual_seed, which calls torch.cuda.manual_seed_all: transfer_to_npu makes that this."""
    torch.default_generator.manual_seed(int(seed))


def manual_seed_all(seed):
    manual_seed(seed)


def is_initialized():
    return _runtime._client is not None


def init():
    _runtime.client()


class device:  # noqa: N801  (torch.npu.device, as torch.cuda.device)
    """Context manager that makes a device current and restores the previous one."""

    def __init__(self, device):
        self._index = _runtime.checked_index(device)
        self._previous = None

    def __enter__(self):
        self._previous = _runtime.current()
        _runtime.set_current(self._index)
        return self

    def __exit__(self, *exc):
        _runtime.set_current(self._previous)
