"""The connection behind torch.npu: one npuserve client per process, to
$NPUSERVE_TARGET (default 127.0.0.1:50051), and the process's current device.
Opened on first use; a server that cannot be reached makes is_available()
False and every use of a device an error that names the target."""
import os
import threading

import npuserve
from npuserve._stubs import device_pb2

DEFAULT_TARGET = "127.0.0.1:50051"
_PROBE_TIMEOUT_S = 2.0

_lock = threading.Lock()
_client = None
_devices = None      # npu.v1.DeviceInfo list, read once per connection
_unreachable = None  # the error of the last failed connection, if any
_current = 0


def target():
    return os.environ.get("NPUSERVE_TARGET", DEFAULT_TARGET)


def _connect():
    """The client and the server's devices, or raises RuntimeError naming the target."""
    global _client, _devices, _unreachable
    with _lock:
        if _client is not None:
            return _client, _devices
        client = npuserve.connect(target(), token=os.environ.get("NPUSERVE_TOKEN") or None)
        try:
            devices = list(client._call(client._devices.ListDevices, device_pb2.ListDevicesRequest(),
                                        timeout=_PROBE_TIMEOUT_S).devices)
        except npuserve.NpuError as e:
            client.close()
            _unreachable = e
            raise RuntimeError(f"torch_npu: no npu-server at {target()} (NPUSERVE_TARGET): {e.details}. Start one "
                               "(npu-server --listen ...) or point NPUSERVE_TARGET at it") from None
        _client, _devices, _unreachable = client, devices, None
        return _client, _devices


def client():
    return _connect()[0]


def devices():
    return _connect()[1]


def available():
    try:
        return bool(_connect()[1])
    except RuntimeError:
        return False


def index_of(device):
    """The device number of "npu", "npu:N", N, or an npu device object; None for "npu" alone."""
    if device is None:
        return None
    if isinstance(device, int) and not isinstance(device, bool):
        return device
    if not isinstance(device, str) and getattr(device, "type", None) == "npu":
        return device.index
    text = str(device)
    kind, _, number = text.partition(":")
    if kind not in ("npu", "cuda"):  # cuda: as transfer_to_npu maps it
        raise ValueError(f"torch_npu: {text!r} is not an npu device (\"npu\", \"npu:N\" or N)")
    if not number:
        return None
    if not number.isdigit():
        raise ValueError(f"torch_npu: {text!r} is not an npu device (\"npu:N\" with N a number)")
    return int(number)


def checked_index(device):
    """index_of(device), defaulting to the current device, checked against the server's devices."""
    index = index_of(device)
    index = _current if index is None else index
    count = len(devices())
    if not 0 <= index < count:
        raise RuntimeError(f"torch_npu: npu:{index} does not exist: the server at {target()} has {count} "
                           f"device{'s' if count != 1 else ''} (npu:0..npu:{count - 1})")
    return index


def set_current(index):
    global _current
    _current = index


def current():
    return _current
