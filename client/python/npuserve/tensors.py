"""NumPy arrays (and torch tensors) to and from npu.v1.Tensor.

Our DataType numbers are our own (FLOAT16 = 1, FLOAT32 = 2, ...), not ONNX's;
this is the one place that maps them. Tensors travel as row-major,
little-endian raw bytes.
"""
import numpy as np

from npuserve._stubs import tensor_pb2

FLOAT16 = tensor_pb2.FLOAT16
FLOAT32 = tensor_pb2.FLOAT32
INT32 = tensor_pb2.INT32
INT8 = tensor_pb2.INT8
BOOL = tensor_pb2.BOOL
INT64 = tensor_pb2.INT64

# Little-endian NumPy dtype of each device dtype.
NUMPY_DTYPES = {
    FLOAT16: np.dtype("<f2"),
    FLOAT32: np.dtype("<f4"),
    INT32: np.dtype("<i4"),
    INT8: np.dtype("i1"),
    BOOL: np.dtype("?"),
    INT64: np.dtype("<i8"),
}
_BY_KIND = {(d.kind, d.itemsize): t for t, d in NUMPY_DTYPES.items()}


def dtype_name(dtype):
    """"float16", "int64", ... for a DataType number (the names .npy files and NumPy use)."""
    if dtype in NUMPY_DTYPES:
        return NUMPY_DTYPES[dtype].name
    return tensor_pb2.DataType.Name(dtype) if dtype in tensor_pb2.DataType.values() else f"dtype {dtype}"


def device_dtype(numpy_dtype):
    """The DataType of a NumPy dtype; ValueError naming the supported ones otherwise."""
    d = np.dtype(numpy_dtype)
    found = _BY_KIND.get((d.kind, d.itemsize))
    if found is None:
        supported = ", ".join(n.name for n in NUMPY_DTYPES.values())
        raise ValueError(f"{d.name} is not a device dtype (supported: {supported})")
    return found


def as_numpy(value, dtype=None):
    """An ndarray from an ndarray, a torch tensor, or a Python scalar or list.

    `dtype` (a DataType) converts Python scalars and lists, whose own type says
    little (1.0 is float64); an ndarray or tensor keeps its dtype, and one that
    differs from `dtype` is refused with the conversion to write.
    """
    if _is_torch_tensor(value):
        import torch  # only when given one

        if value.dtype == torch.bfloat16:
            raise ValueError("bfloat16 is not a device dtype: convert with t.half() or t.float()")
        value = value.detach().cpu().numpy()
    if isinstance(value, (np.ndarray, np.generic)):
        array = np.asarray(value)
        if dtype is not None and array.dtype.newbyteorder("=") != NUMPY_DTYPES[dtype].newbyteorder("="):
            want = NUMPY_DTYPES[dtype].name
            raise ValueError(f"expects {want}, got {array.dtype.name} (convert with a.astype(np.{want}))")
        return array
    return np.asarray(value, dtype=NUMPY_DTYPES[dtype] if dtype is not None else None)


def to_tensor(value, dtype=None):
    """npu.v1.Tensor of an ndarray, torch tensor, scalar or list (see as_numpy)."""
    array = as_numpy(value, dtype)
    dt = device_dtype(array.dtype)
    array = np.asarray(array, dtype=NUMPY_DTYPES[dt], order="C")  # row-major, little-endian; 0-d stays 0-d
    return tensor_pb2.Tensor(dtype=dt, shape=list(array.shape), data=array.tobytes())


def from_tensor(tensor):
    """A writable ndarray of an npu.v1.Tensor (its bytes copied once)."""
    if tensor.dtype not in NUMPY_DTYPES:
        raise ValueError(f"tensor of {dtype_name(tensor.dtype)} cannot become an ndarray")
    dt = NUMPY_DTYPES[tensor.dtype]
    shape = tuple(tensor.shape)
    expected = int(np.prod(shape, dtype=np.int64)) * dt.itemsize
    if len(tensor.data) != expected:
        raise ValueError(f"tensor {dtype_name(tensor.dtype)} {list(shape)} holds {len(tensor.data)} bytes, "
                         f"not {expected}")
    return np.frombuffer(tensor.data, dtype=dt).reshape(shape).copy()


def _is_torch_tensor(value):
    module = type(value).__module__ or ""
    return module.startswith("torch") and hasattr(value, "detach") and hasattr(value, "numpy")
