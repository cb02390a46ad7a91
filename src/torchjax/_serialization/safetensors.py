"""safetensors files of torchjax tensors, with safetensors.torch's functions: save_file,
load_file, save (to bytes) and load (from bytes).

The format is the safetensors library's (its serialize / deserialize core, which handles
every dtype torchjax has, bfloat16 included); here are safetensors.torch's checks on the
tensors given (a dict, no shared memory, contiguous) and the mapping to torchjax dtypes.
"""

from __future__ import annotations

import jax
import numpy as np

from .. import _device, _dtypes
from .._strides import is_contiguous
from .._tensor import Tensor
from .._x64 import scoped
from ._layout import strided_window

try:
    import safetensors as _st
except ImportError:  # pragma: no cover - a dependency; the message names it
    _st = None

# safetensors' dtype codes and the torchjax dtypes they hold
_BY_CODE = {c: _dtypes.to_dtype(n) for c, n in (
    ("BOOL", "bool"), ("U8", "uint8"), ("I8", "int8"), ("I16", "int16"), ("U16", "uint16"),
    ("F16", "float16"), ("BF16", "bfloat16"), ("I32", "int32"), ("U32", "uint32"),
    ("F32", "float32"), ("C64", "complex64"), ("F64", "float64"), ("I64", "int64"),
    ("U64", "uint64"))}
_CODE_OF = {d.name: c for c, d in _BY_CODE.items()}

SafetensorError = _st.SafetensorError if _st is not None else RuntimeError


def _library():
    if _st is None:
        raise ImportError("torchjax's safetensors support needs the safetensors package: "
                          "pip install safetensors")
    return _st


def _check_tensors(tensors) -> None:
    """safetensors.torch's checks: a dict of tensors, none sharing memory, all contiguous."""
    if not isinstance(tensors, dict):
        raise ValueError(f"Expected a dict of [str, torch.Tensor] but received {type(tensors)}")
    by_root: dict = {}
    for k, v in tensors.items():
        if not isinstance(v, Tensor):
            raise ValueError(f"Key `{k}` is invalid, expected torch.Tensor but received "
                             f"{type(v)}")
        if not isinstance(k, str):
            raise TypeError(f"tensor names must be str, but got {type(k)}")
        if v.dtype.name not in _CODE_OF:
            raise ValueError(f"Key `{k}`: safetensors has no dtype for {v.dtype}")
        root = v._base if v._base is not None else v
        by_root.setdefault(id(root), set()).add(k)
    failing = [names for names in by_root.values() if len(names) > 1]
    if failing:
        raise RuntimeError(
            f"Some tensors share memory, this will lead to duplicate memory on disk and "
            f"potential differences when loading them again: {failing}.\nA potential way to "
            f"correctly save your model is to use `save_model`.\nMore information at "
            f"https://huggingface.co/docs/safetensors/torch_shared_tensors")
    for k, v in tensors.items():
        window = strided_window(v._base, v) if v._base is not None else None
        if window is not None and not is_contiguous(v._data.shape, window[1]):
            raise ValueError(
                f"You are trying to save a non contiguous tensor: `{k}` which is not allowed. "
                f"It either means you are trying to save tensors which are reference of each "
                f"other in which case it's recommended to save only the full tensors, and "
                f"reslice at load time, or simply call `.contiguous()` on your tensor to pack "
                f"it before saving.")


def _specs(tensors, keep: list) -> dict:
    """The library's TensorSpec of each tensor; `keep` holds the host arrays alive."""
    st = _library()
    specs = {}
    for name, v in tensors.items():
        arr = np.asarray(v._data)  # (ascontiguousarray would make a 0-d array 1-d)
        if not arr.flags.c_contiguous:
            arr = arr.copy()
        if arr.dtype.byteorder == ">":
            arr = arr.byteswap().view(arr.dtype.newbyteorder("<"))
        keep.append(arr)
        specs[name] = st.TensorSpec(dtype=arr.dtype.name, shape=arr.shape,
                                    data_ptr=arr.ctypes.data, data_len=arr.nbytes)
    return specs


def _check_metadata(metadata):
    if metadata is not None and (not isinstance(metadata, dict) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in metadata.items())):
        raise TypeError(f"metadata must be a dict of str to str, but got {metadata!r}")


def save(tensors: dict, metadata: dict | None = None) -> bytes:
    """The safetensors bytes of a dict of tensors (contiguous, not sharing memory)."""
    _check_tensors(tensors)
    _check_metadata(metadata)
    keep: list = []
    return bytes(_library().serialize(_specs(tensors, keep), metadata=metadata))


def save_file(tensors: dict, filename, metadata: dict | None = None) -> None:
    """Write a dict of tensors (contiguous, not sharing memory) to a safetensors file."""
    _check_tensors(tensors)
    _check_metadata(metadata)
    keep: list = []
    _library().serialize_file(_specs(tensors, keep), str(filename), metadata=metadata)


@scoped  # the arrays keep the file's dtypes, int64 and float64 included
def _tensors(data: bytes, device) -> dict:
    out = {}
    for name, info in sorted(_library().deserialize(data)):
        code = info["dtype"]
        if code not in _BY_CODE:
            raise NotImplementedError(f"safetensors dtype {code} of tensor `{name}` has no "
                                      "torchjax dtype")
        arr = np.frombuffer(info["data"], dtype=np.dtype(_BY_CODE[code].np).newbyteorder("<"))
        arr = arr.astype(_BY_CODE[code].np, copy=False).reshape(info["shape"])
        out[name] = Tensor._wrap(jax.device_put(arr, device))
    return out


def load(data: bytes) -> dict:
    """The tensors (on the CPU) of safetensors bytes, by name."""
    return _tensors(data, _device.jax_device("cpu"))


def load_file(filename, device="cpu") -> dict:
    """The tensors of a safetensors file, by name, on `device` (a str, int or device)."""
    dev = _device.jax_device(_device.device("cuda", device) if isinstance(device, int)
                             else _device.device(device))
    with open(filename, "rb") as f:
        return _tensors(f.read(), dev)
